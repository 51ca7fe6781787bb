// test_hooks.js: read-only hooks for the browser tests (and curious users in the console):
// window.attnlab.{app, explorer, client, analyses, panels, state, link, current, companion, tables}.
// The page's modules are one script (scripts/web_bundle.mjs): a module a test imports by its URL is a second copy
// with its own state, so what a test reads of the page's module state is here (tables).
import { readLink } from './link.js';
import { metricRange } from './papa_record.js';
import { HEAD_ORDERS } from './papa_request.js';
import { linkValues, state } from './state.js';

export function installTestHooks(ctx) {
  const explorerPanel = () => ctx.panels.explorer;
  window.attnlab = {
    app: {
      get run() { return explorerPanel().runData; },
      get job() { return explorerPanel().runner.current; },
      get effJob() { return explorerPanel().needs.job(); },
      get runCount() { return explorerPanel().runCount; },
      get effCount() { return explorerPanel().needs.count; },
      get timings() { return explorerPanel().timings; },
      get modelId() { return ctx.models.modelId; },
      get modelJob() { return ctx.models.runner.current; },
    },
    get explorer() { return explorerPanel().explorer; },
    client: ctx.client,
    get analyses() { return ctx.panels.analyses; },
    panels: ctx.panels,
    state,
    link: {
      // The state the address holds now, decoded as a fresh page would.
      read: () => readLink(location),
      values: () => linkValues(),
      flush: () => ctx.link?.flush(),
      get sync() { return ctx.link; },
    },
    get current() {
      const c = explorerPanel().explorer.current;
      return c && { layer: c.layer, head: c.head, view: c.view, merged: c.merged, size: c.size, labels: [...c.labels],
                    matrix: Array.from(c.matrix) };
    },
    // the engine's tables as the page's modules hold them (engine_tables.js, filled from the worker's reply)
    tables: { metricRange, headOrders: () => [...HEAD_ORDERS] },
    get companion() {
      const c = explorerPanel().explorer.companionCurrent;
      return c && { view: c.view, size: c.size, labels: [...c.labels], matrix: Array.from(c.matrix) };
    },
  };
}
