// app.js: the page's entry. It registers the panels (panels.js), mounts them with one shared
// context, reads the link (link.js) into the page state (state.js), loads the link's model and
// draws its first run. The WASM core runs in a Web Worker (engine.js); this thread only draws.
// User text reaches the DOM through textContent and form values only, never as HTML.
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
  }
}

installTestHooks(ctx);
window.attnlab.started = start();
