// panel_nav.js: the page's navigation, one bar that stays at the top of the window with an entry for
// every section registered in sections.js (a new panel joins it with one registerSection). An entry leads
// to its section and gives it an address: the page state's "section" key, which the link carries, so a
// link opens the page at that section; "#<id>" (e.g. #papa) does the same as a short address. The entry
// of the section in view is marked (aria-current), so the bar also says where one is. A section this model does
// not have (hidden, e.g. the decoder panels under an encoder) has no entry shown.
import { $, el } from './dom.js';
import { registerPanel } from './panels.js';
import { allSections, sectionOf } from './sections.js';
import { setState, state } from './state.js';

function mount(ctx) {
  const nav = $('page-nav');
  const links = new Map();
  nav.replaceChildren(el('ul', {}, ...allSections().map((s) => {
    const a = el('a', { href: `#${s.id}`, 'data-section': s.id, title: s.title, text: s.label });
    links.set(s.id, a);
    a.addEventListener('click', (e) => {
      // the address changes through the state (link_sync.js), not through the fragment: a changed
      // fragment reloads the page (another link pasted into the tab)
      e.preventDefault();
      setState({ section: s.id });
      go(s.id, { focus: true });
    });
    return el('li', {}, a);
  })));

  // The section go() scrolled to stays at the window's top while what is above it is still being drawn (a
  // model's panels, the explorer, the decoder panels shown or hidden: main's size changes), until the user
  // scrolls, clicks, touches or presses a key. The user's input is what ends it, not a changed scroll position:
  // the browser's own scroll anchoring moves the window too.
  let placed = null;
  function go(id, { focus = false } = {}) {
    const target = $(sectionOf(id)?.element ?? '');
    if (!target || target.hidden) return;
    target.scrollIntoView({ block: 'start' });
    if (focus) {
      if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
      target.focus({ preventScroll: true });
    }
    placed = id;
    mark();
  }
  for (const type of ['wheel', 'touchstart', 'pointerdown', 'keydown']) {
    window.addEventListener(type, () => { placed = null; }, { passive: true, capture: true });
  }
  const main = document.querySelector('main');
  if (main && typeof ResizeObserver === 'function') {
    new ResizeObserver(() => {
      showEntries();
      if (placed) go(placed);
    }).observe(main);
  }

  function showEntries() {
    for (const s of allSections()) {
      const node = $(s.element);
      links.get(s.id).parentElement.hidden = !!node?.hidden;
    }
  }

  // The entry of the last section whose top is above a line a little under the bar (a section scrolled to
  // stops 3rem under the window's top, style.css), or the first.
  function mark() {
    const below = nav.getBoundingClientRect().bottom + 64;
    let current = allSections()[0]?.id;
    for (const s of allSections()) {
      const node = $(s.element);
      if (node && !node.hidden && node.getBoundingClientRect().top <= below) current = s.id;
    }
    for (const [id, a] of links) {
      if (id === current) a.setAttribute('aria-current', 'location');
      else a.removeAttribute('aria-current');
    }
  }
  let pending = 0;
  window.addEventListener('scroll', () => {
    if (!pending) pending = requestAnimationFrame(() => { pending = 0; mark(); });
  }, { passive: true });

  // A link with a section opens there, and again once its model is loaded and the explorer drawn (they push
  // what is under them down), unless the user has scrolled since.
  ctx.on('link', () => { if (state.section) go(state.section, { focus: true }); });
  ctx.on('opened', () => {
    showEntries();
    if (state.section && (!placed || placed === state.section)) go(state.section);
    mark();
  });
  ctx.on('models', showEntries);
  showEntries();
  mark();
  return { go, mark, links };
}

registerPanel({
  id: 'nav',
  order: 5,
  keys: {
    // '' (the page's top) or a registered section (read when a link is checked: every section is registered by then)
    section: { type: 'enum', default: '', get values() { return ['', ...allSections().map((s) => s.id)]; } },
  },
  mount,
});
