// app.js: the page's entry. It registers the panels (panels.js), mounts them with one shared
// context, reads the link (link.js) into the page state (state.js), loads the link's model and
// draws its first run. The WASM core runs in a Web Worker (engine.js); this thread only draws.
// User text reaches the DOM through textContent and form values only, never as HTML.
import { firstView } from './first_view.js'; // first: its request leaves before the rest is evaluated
import './panel_list.js';
import { mountComputePanel } from './compute_panel.js';
import { download } from './dom.js';
import { startEngine } from './engine.js';
import { JobRunner } from './job.js';
import { readLink } from './link.js';
import { showLinkProblems, startLinkSync } from './link_sync.js';
import { allPanels } from './panels.js';
import { setState, state } from './state.js';
import { installTestHooks } from './test_hooks.js';

const listeners = new Map();
const ctx = {
  state,
  setState,
  download,
  panels: {},
  on(event, fn) {
    if (!listeners.has(event)) listeners.set(event, []);
    listeners.get(event).push(fn);
  },
  emit(event) {
    for (const fn of listeners.get(event) ?? []) fn();
  },
  runner: (opts) => new JobRunner({ client: ctx.client, ...opts }),
  get models() { return ctx.panels['model-panel']; },
  get explorer() { return ctx.panels.explorer; },
};
const engine = startEngine(ctx);
ctx.client = engine.client;

for (const panel of allPanels()) {
  ctx.panels[panel.id] = panel.mount ? panel.mount(ctx) : mountComputePanel(panel, ctx);
}
// On a plain visit, the default model's stored first view, drawn while the engine starts (first_view.js).
const shown = firstView?.then((view) => ctx.explorer.showStored(view));

async function start() {
  // The model's files download while the engine starts; the rest of the link is read once the engine
  // has started, since its checks need the engine's tables (the built-in tasks, engine_tables.js).
  ctx.models.prefetch((await readLink(location)).values.model);
  await engine.ready;
  const link = await readLink(location);
  setState(link.values);
  showLinkProblems(link.problems);
  ctx.emit('link');
  await ctx.models.init();
  ctx.link = startLinkSync(); // from here the address follows the state (an old ?query link becomes #v1.…)
  if (await ctx.models.open(state.model)) {
    await ctx.explorer.run();
    ctx.emit('opened');
  } else {
    ctx.explorer.storedOnly('its model did not load: see above');
  }
}

installTestHooks(ctx);
// The model's download waits for the stored view to be drawn (its data would hold this thread meanwhile and delay
// the view; docs/first-view.md measures both orders), but never past the engine's start.
window.attnlab.started = Promise.race([shown ?? true, engine.ready]).then(start);
