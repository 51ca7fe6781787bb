// compute_panel.js: builds a compute panel (panels.js) from its declarations: its controls (bound to
// its state keys), a Run button run through the shared job helper (job.js: progress bar with the
// stage and the time left, Cancel), its figures drawn one per task so the page stays responsive,
// PNG export per figure and JSON export of the numbers.
//
// The api it returns (tests reach it as window.attnlab.panels[id]):
//   run(), show(record) (draws a record computed elsewhere, e.g. a stored result: no worker request),
//   job (the running Job or null), runs (finished runs), last (the last record drawn),
//   timings[name] ({computeMs, drawMs, totalMs}), charts (Chart.js objects the draw kept by name),
//   exportBody(record), refresh(), controls
// A record: { panel, op, request (the args sent), reply, tensors, ...the request's meta }.
import { buildControls } from './controls.js';
import { $, el, setError } from './dom.js';
import { pageProvenance } from './page_provenance.js';
import { pngWithProvenance } from './provenance.js';
import { setState, state } from './state.js';

function section(panel) {
  let node = $(panel.id);
  if (!node) {
    node = el('section', { id: panel.id });
    document.querySelector('main').append(node);
  }
  node.setAttribute('aria-labelledby', `${panel.id}-heading`);
  node.replaceChildren(el('h2', { id: `${panel.id}-heading`, text: panel.title }));
  return node;
}

export function mountComputePanel(panel, ctx) {
  const p = panel.prefix ?? panel.id;
  const root = section(panel);
  const api = { job: null, runs: 0, last: null, timings: {}, charts: {} };
  const touch = () => {
    const patch = panel.touch?.(controls.values());
    if (patch) setState(patch);
  };
  const controls = buildControls(panel.controls ?? [], ctx, {
    onChange: () => {
      touch();
      controls.refresh();
    },
  });
  const runButton = el('button', { id: `${p}-run`, type: 'button', disabled: true, text: panel.runLabel ?? 'Run' });
  const cancel = el('button', { id: `${p}-cancel`, type: 'button', hidden: true, text: 'Cancel' });
  const progress = el('progress', { id: `${p}-progress`, max: '1', value: '0', hidden: true });
  const status = el('span', { id: `${p}-status`, class: 'status', role: 'status' });
  const exportJson = el('button', { id: `${p}-export-json`, type: 'button', disabled: true, text: 'Export JSON' });
  const error = el('p', { id: `${p}-error`, class: 'error', role: 'alert', hidden: true });
  const results = el('div', { id: `${p}-results`, class: 'figures', 'aria-live': 'polite' });
  root.append(...controls.nodes, el('div', { class: 'row' }, runButton, cancel, progress, status, exportJson), error);
  if (panel.footnote) root.append(el('p', { class: 'note', text: panel.footnote }));
  root.append(results);

  // Run stays disabled while a run goes on: a second click would silently restart a long computation.
  const runner = ctx.runner({ bar: progress, status, cancel, error, onChange: () => {
    api.job = runner.current;
    runButton.disabled = !ctx.models.current() || !!runner.current;
  } });

  // One figure: a canvas, its caption and an Export PNG button.
  function figure(name, caption) {
    const canvas = el('canvas', { 'aria-label': caption });
    const button = el('button', { type: 'button', class: 'export-png', text: 'Export PNG' });
    button.addEventListener('click', () => canvas.toBlob(async (b) => {
      // every PNG carries its provenance in text chunks: the panel's own rule (PAPA's) or the page's
      if (!b) return;
      ctx.download(`attnlab_${name}.png`, panel.pngBlob ? await panel.pngBlob(b, name, api.last)
        : await pngWithProvenance(b, caption, await pageProvenance(ctx, { figure: name })));
    }, 'image/png'));
    const fig = el('figure', { class: 'analysis-figure' }, canvas, el('figcaption', { text: caption }), button);
    fig.dataset.name = name;
    return { fig, canvas };
  }

  api.exportBody = panel.exportBody ?? ((r) => ({ op: r.op, request: r.request, reply: r.reply }));

  api.run = async () => {
    if (!ctx.models.current()) return;
    touch();
    const started = performance.now();
    const outcome = await runner.run(async (job) => {
      const req = await panel.request(controls.values(), ctx, job);
      job.check();
      job.status(`${req.running}\u2026`);
      const computeStarted = performance.now();
      const result = req.run ? await req.run(job)
        : await job.request(req.op, req.args, { stageLabel: () => req.running, stages: req.stages ?? null,
                                                transfer: req.transfer ?? [] });
      const computeMs = performance.now() - computeStarted;
      job.check();
      job.status('Drawing\u2026');
      const drawStarted = performance.now();
      const record = { panel: panel.id, op: req.op, request: req.args, reply: result.reply, tensors: result.tensors,
                       ...req.meta };
      await drawRecord(job, record);
      api.runs++;
      api.timings[req.timingKey ?? panel.id] = {
        ...(req.timing ?? {}), computeMs: Math.round(computeMs), drawMs: Math.round(performance.now() - drawStarted),
        totalMs: Math.round(performance.now() - started),
      };
      job.status(panel.summary ? panel.summary(record, computeMs) : `Done in ${Math.round(computeMs)} ms`);
      exportJson.disabled = false;
    }, { label: panel.preparing ?? 'Preparing\u2026' });
    // A failed or cancelled run leaves no figures of an earlier one under its message.
    if (outcome.error || outcome.cancelled) {
      results.replaceChildren();
      api.last = null;
      exportJson.disabled = true;
    }
    if (outcome.error) panel.afterError?.(outcome.error, results); // e.g. a way out of a refusal
    return outcome;
  };

  // The figures of a record, one per task; api.last is the record once drawn.
  async function drawRecord(job, record) {
    results.replaceChildren();
    api.charts = {};
    const figures = {
      charts: api.charts,
      add: async (name, caption, paint) => {
        job.check();
        const { fig, canvas } = figure(name, caption);
        results.append(fig);
        await paint(canvas);
        await job.pause(); // one figure per task
      },
    };
    await panel.draw(record, figures, ctx);
    api.last = record;
  }

  api.show = (record) => runner.run(async (job) => {
    await drawRecord(job, record);
    job.status(panel.summary ? panel.summary(record) : 'Shown.');
    exportJson.disabled = false;
  }, { label: 'Drawing\u2026' });

  runButton.addEventListener('click', () => api.run());
  exportJson.addEventListener('click', async () => {
    if (!api.last) return;
    const own = api.exportBody(api.last);
    // every JSON carries its provenance (provenance.js): the panel's own, else the page's
    const body = own.provenance ? own : { provenance: await pageProvenance(ctx), ...own };
    ctx.download(`attnlab_${api.last.exportName ?? panel.id}.json`,
                 new Blob([JSON.stringify(body, null, 1)], { type: 'application/json' }));
  });
  api.refresh = () => {
    runButton.disabled = !ctx.models.current() || !!runner.current;
    controls.refresh();
  };
  api.controls = controls;
  api.setError = (m) => setError(error, m);
  ctx.on('models', api.refresh);
  ctx.on('link', () => {
    controls.restore();
    api.refresh();
  });
  ctx.on('opened', () => {
    if (panel.autoRun?.(state)) api.run();
  });
  controls.restore();
  api.refresh();
  return api;
}
