// panels.js: the page's panels, registered like views.js's views. app.js mounts them in order and
// hands each the same context (below). A panel is either bespoke (mount does the wiring) or a
// compute panel (compute_panel.js builds it from its declarations: controls bound to its state keys,
// a Run button with the shared job helper, and figures).
//
// A panel: {
//   id          the <section> id (a compute panel without one in index.html gets a new section)
//   order       place among the panels (mounting order; new sections are appended in this order)
//   keys        { name: key spec }   its part of the page state (state.js), carried by the link
//   mount(ctx) -> api                bespoke panels only
//   -- compute panels (compute_panel.js):
//   title, prefix (ids: <prefix>-run, -cancel, -progress, -status, -error, -results, -export-json),
//   controls    [control spec]       controls.js: each bound to one of its keys
//   request(v, ctx, job) -> { op, args, running, meta, stages?, transfer?, run? }   the JSON the
//                                    worker runs (v: the controls' values by key; args.inputs may carry
//                                    tensors, their buffers listed in transfer); running names the work
//                                    on the status line; meta goes into the record. Work of several
//                                    requests gives run(job) -> {reply, tensors} instead of op and args.
//                                    May throw an Error whose message is for the user.
//   draw(record, figures, ctx)       figures.add(name, caption, paint(canvas)) one figure per task
//   summary(record) -> string        the status line after a run
//   exportBody(record) -> object     the JSON export (default: op, request, reply, tensors)
//   pngBlob(blob, name, record)      optional: a figure's PNG export (default: the canvas as drawn)
//   touch(v) -> state patch          optional: what a change or a run records in the state
//   autoRun(state) -> bool           optional: run it when a link is opened with this state
// }
//
// The context: { client (worker_client.js), state, setState, on(event, fn), emit(event), runner(opts)
//   -> JobRunner (job.js), download, panels (each mounted panel's api by id), models (the model
//   panel's api: current(), loaded(), embedded(), loadSecond(entry)), explorer (the explorer panel's
//   api) }. Events: 'models' (the loaded models changed), 'link' (a link's state was applied: panels
//   show it), 'opened' (the link's model is loaded and its first run drawn).
import { defineKeys } from './state.js';

const registry = [];

export function registerPanel(panel) {
  if (registry.some((p) => p.id === panel.id)) throw new Error(`panel ${panel.id} registered twice`);
  defineKeys(panel.id, panel.keys ?? {});
  registry.push({ order: 50, ...panel });
  registry.sort((a, b) => a.order - b.order);
}

export function allPanels() {
  return [...registry];
}
