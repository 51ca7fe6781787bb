// link_sync.js: keeps the address in step with the page state (state.js -> link.js's #fragment), and
// says on the page what a link holds when that matters: a local model named by its files' hashes, or
// a state too long for a link (then the address holds no state rather than an older one).
import { $, setError } from './dom.js';
import { linkIntro, makeLink } from './link.js';
import { linkValues, onStateChange, state } from './state.js';

export function pageAddress(loc = location) {
  return loc.origin + loc.pathname;
}

export function startLinkSync() {
  let seq = 0;
  let timer = 0;
  let last = Promise.resolve();
  const api = { length: 0, refused: null, writes: 0 };

  async function write() {
    const mine = ++seq;
    const r = await makeLink(pageAddress(), linkValues());
    if (mine !== seq) return; // a newer state is being written
    api.length = r.length;
    api.refused = r.url ? null : r.why;
    const url = r.url ?? pageAddress();
    if (url !== location.href) history.replaceState(null, '', url);
    api.writes++;
    const status = $('link-status');
    if (!r.url) {
      status.textContent = `No link for this page: ${r.why}. The address shows the bare page, so a reload starts afresh.`;
      status.classList.add('warning');
    } else if (state.model?.kind === 'local') {
      status.textContent = `This page's link names its model by the SHA-256 of its local files ` +
        `(${state.model.files.map((f) => f.name).join(', ')}): whoever opens the link is asked for the same files, ` +
        'which never leave their computer.';
      status.classList.remove('warning');
    } else {
      status.textContent = '';
      status.classList.remove('warning');
    }
  }

  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => { last = write(); }, 30);
  };
  onStateChange(schedule);
  // Someone changed the fragment by hand (or pasted another link into this tab): open it afresh.
  window.addEventListener('hashchange', () => location.reload());
  last = write();
  // Resolves once the address shows the current state (tests wait on it).
  api.flush = async () => {
    clearTimeout(timer);
    last = write();
    await last;
  };
  return api;
}

let shownProblems = [];

export function showLinkProblems(problems) {
  shownProblems = [...problems];
  setError($('link-error'), problems.length ? problems.join('\n') : null);
}

// A setting refused once the page knows more than a link's checks can (which models it embeds: the PAPA
// panel's papa_model), said under the header with the link's other problems: "key: why (ignored)".
export function addLinkProblem(problem) {
  showLinkProblems([...shownProblems, linkIntro([problem])]);
}
