// panel_importance.js: which heads matter (docs/importance.md, docs/measures.md): a compute panel
// (compute_panel.js) under the PAPA panel, built as it is. One run makes two requests in the engine's
// worker: "head_agreement" (every measure's layers x heads grid: lambda, gradient importance, input
// dependence, confidence, entropy, sink mass, norm mass; their Spearman correlations; the overlap of the
// heads each calls least important; the one-sentence finding) and "papa" with head orders lambda and
// gradient and constants average and zeros (the pruning curve drawn on the PAPA curve's axes). Both take
// the PAPA panel's settings (importance_record.js). Progress for both with Cancel; JSON, CSV and PNG
// exports with provenance; the result's summary in the link (state key imp_result): opening the link
// shows it, recomputes and says whether it reproduced, with PAPA's code (result_link.js).
// On a causal language model the panel takes a corpus instead of a task (docs/decoder-page.md): the held-out text
// scored and the constants' text as the language-model panel chooses them (lm_corpus.js), the papa sweep scored by
// the model's next-token loss and head_agreement on the same corpus, the curve drawn as bits per token.
import { layerHeadHeatmap, scaleOf } from './charts.js';
import { mountComputePanel } from './compute_panel.js';
import { attachTextFiles } from './corpus_files.js';
import { isCausal } from './decoder_text.js';
import { $, el } from './dom.js';
import { labelledMatrix } from './importance_charts.js';
import {
  IMPORTANCE_KEYS, agreementRequest, compactImportance, compareImportance, curveRequest, curveSeries, importanceCsv,
  importanceProvenance, isCorpusSweep, lmCurveRequest,
} from './importance_record.js';
import { corpusControls, corporaOf, lmSweepFraction } from './lm_corpus.js';
import { papaTable } from './lm_need_figures.js';
import { fractionChart } from './papa_charts.js';
import { SweepProgress } from './papa_progress.js';
import { metricRange } from './papa_record.js';
import { BUILTIN_TASKS } from './papa_request.js';
import { resultTable } from './papa_table.js';
import { builtinTaskText } from './papa_task.js';
import { registerPanel } from './panels.js';
import { pngWithProvenance } from './provenance.js';
import { linkBox, showVerdict } from './result_link.js';
import { registerSection } from './sections.js';
import { setState, state } from './state.js';

const AGREEMENT_SHARE = 0.35; // the bar's share for the measures; the pruning curve's sweep takes the rest
// On a decoder the sweep runs first (the measures then reuse its constants and lambda from the session cache,
// docs/agreement.md "The session cache"): its share of the bar, the measures' the rest.
const LM_CURVE_SHARE = 0.6;
const LM_STAGES = { constants: 'averaging the constants', ranking: 'learning \u03bb', importance: 'gradient head importance',
                    lm: 'scoring the held-out text' };

const causal = (v, ctx) => !!ctx?.models?.current() && isCausal(ctx.models.info?.());
const taskOnly = (v, ctx) => !causal(v, ctx);
const controls = [
  { kind: 'select', key: 'imp_task', id: 'imp-task', label: 'Task', row: 'task', options: () => BUILTIN_TASKS, showIf: taskOnly },
  { kind: 'number', key: 'imp_examples', id: 'imp-examples', label: 'Examples for the measures', row: 'task',
    attrs: { min: 1, step: 1, size: 7 }, showIf: taskOnly },
  { kind: 'number', key: 'imp_least_k', id: 'imp-least-k', label: 'Least important k', row: 'task', attrs: { min: 1, step: 1, size: 4 } },
  ...corpusControls('imp', causal), // on a causal model: the language-model panel's texts (lm_corpus.js)
  { kind: 'number', key: 'imp_L', id: 'imp-L', label: 'Window L (tokens)', row: 'window', attrs: { min: 2, step: 1, size: 5 }, showIf: causal },
  { kind: 'text', key: 'imp_fractions', id: 'imp-fractions', label: 'Fractions kept', row: 'window', showIf: causal,
    attrs: { size: 12, placeholder: 'engine default' } },
  { kind: 'note', id: 'imp-help', text: (v, ctx) => (causal(v, ctx)
    ? 'On a causal language model the measures and the pruning curve read the texts above: the held-out text is scored by the ' +
      'model\u2019s own next-token loss, the constants, \u03bb and the gradient come from the constants\u2019 text, both cut into ' +
      'windows of L tokens (docs/agreement.md, \u201cCausal language models\u201d). The pruning curve is a PAPA sweep on that corpus ' +
      'with head orders \u03bb and gradient and constants average and zeros (removed heads), in bits per token.'
    : 'The preset, example counts, probe, \u03bb ranking, seeds and fractions are the PAPA ' +
      'panel\u2019s settings above. The pruning curve is a PAPA sweep with head orders \u03bb and gradient and constants average ' +
      'and zeros (removed heads): docs/importance.md.') },
];

const labelOf = (m) => (m.source?.kind === 'embedded' ? m.source.entry.id : m.label);
// What a measure's values mean (the reply's words: "higher" what a larger value says, "least" which end is least important).
const higherText = (m) => `higher: ${typeof m.higher === 'string' ? m.higher : m.higher ? 'more important' : 'less important'}` +
  (m.least ? `; the least important heads have the ${m.least === 'high' ? 'highest' : 'lowest'} values` : '');

// The run on a causal language model: the texts, then the sweep (its constants and lambda stay in the worker's
// session, where head_agreement on the same corpus fields finds them), then the measures.
async function lmRequest(v, m, job) {
  job.status('Reading the texts\u2026');
  const texts = await corporaOf(v, job.signal, undefined, fetch, 'imp');
  job.check();
  const curve = lmCurveRequest(v, m.modelId, texts);
  const agree = agreementRequest(curve, v);
  const settings = Object.fromEntries(['imp_src', 'imp_docs', 'imp_csrc', 'imp_cdocs', 'imp_L', 'imp_fractions', 'imp_least_k'].map((k) => [k, v[k]]));
  const meta = { modelLabel: labelOf(m), modelRef: state.model, modelId: m.modelId, exportName: 'importance', settings, curve: null,
                 curveRequest: curve };
  return {
    op: 'head_agreement', args: agree, running: 'Measuring the heads', meta,
    run: async (j) => {
      const report = (f, text) => j.report(f, text, 'importance');
      const result = await j.request('papa', curve, {
        onProgress: (p) => {
          const f = Math.min(1, lmSweepFraction(p));
          report(LM_CURVE_SHARE * f, `Pruning curve ${Math.round(f * 100)}%: ${LM_STAGES[p.stage] ?? p.stage}`);
        },
      });
      j.check();
      meta.curve = result.reply;
      const a = await j.request('head_agreement', agree, {
        onProgress: agreementProgress((f, text) => report(LM_CURVE_SHARE + (1 - LM_CURVE_SHARE) * f, text)),
      });
      return a;
    },
  };
}

// head_agreement's progress: its stages (constants, ranking, statistics, gradients ...) each report 0 to 1; one
// fraction of the whole that never goes back, passed to report(fraction, text).
function agreementProgress(report) {
  const stages = [];
  let done = 0;
  return (p) => {
    if (!stages.includes(p.stage)) stages.push(p.stage);
    done = Math.max(done, Math.min(1, (stages.indexOf(p.stage) + p.fraction) / Math.max(4, stages.length)));
    report(done, `Measures: ${p.stage} ${Math.round(p.fraction * 100)}%`);
  };
}

// The pruning curve of a language model: bits per token on the held-out text against the fraction of input-dependent
// heads (lower is better), 95% intervals over its documents, on the encoder's chart; the language-model panel's table.
async function drawLmCurve(curve, series, figures, results, model) {
  const subtitle = `${model} \u00b7 ${curve.config.corpus_name} \u00b7 L = ${curve.config.L} \u00b7 engine ${curve.engine}`;
  await figures.add('imp_curve', 'Removing heads in the gradient-importance order (zero attention) against making them constant ' +
    'in the \u03bb order (PAPA), on the same axes: bits per token on the held-out text (lower is better) as the fraction of ' +
    'input-dependent heads falls, 95% intervals over its documents.', async (canvas) => {
    figures.charts.curve = await fractionChart(canvas, { series, title: 'Pruning vs PAPA: bits per token as heads go', subtitle,
                                                         yTitle: 'bits per token (lower is better)', range: null });
  });
  results.append(papaTable(curve, 'imp-curve-table'));
}

function mount(ctx) {
  let ui = null;
  let fromLink = null;
  const currentLink = () => (ctx.link?.refused ? null : location.href);

  const panel = {
    id: 'importance',
    title: 'Which heads matter? Every measure beside PAPA, and whether they agree',
    prefix: 'imp',
    runLabel: 'Run measures',
    footnote: 'Each measure ranks the heads its own way (docs/measures.md, docs/importance.md); the Spearman correlation says ' +
      'whether two rankings agree, the overlap whether they pick the same least important heads.',
    controls,
    touch: () => (state.imp_result ? { imp_result: null } : null),
    autoRun: (s) => s.imp_result !== null,

    async request(v, c, job) {
      const m = c.models.current();
      if (isCausal(c.models.info?.())) return lmRequest(v, m, job);
      job.status('Reading the task\u2026');
      const jsonl = await builtinTaskText(v.imp_task, job.signal);
      job.check();
      const curve = curveRequest(state, m.modelId, jsonl);
      const agree = agreementRequest(curve, v);
      const meta = { modelLabel: labelOf(m), modelRef: state.model, modelId: m.modelId, taskFiles: null, exportName: 'importance',
                     preset: state.papa_preset, settings: { imp_task: v.imp_task, imp_examples: v.imp_examples, imp_least_k: v.imp_least_k },
                     curve: null, curveRequest: curve };
      return {
        op: 'head_agreement', args: agree, running: 'Measuring the heads', meta,
        run: async (j) => {
          const report = (f, text) => j.report(f, text, 'importance');
          const a = await j.request('head_agreement', agree, {
            onProgress: agreementProgress((f, text) => report(AGREEMENT_SHARE * f, text)),
          });
          j.check();
          const sweep = new SweepProgress(); // the engine's reports count the configurations
          const result = await j.request('papa', curve, {
            onProgress: (p) => {
              const u = sweep.update(p);
              report(AGREEMENT_SHARE + (1 - AGREEMENT_SHARE) * u.fraction, `Pruning curve ${Math.round(u.fraction * 100)}%: ${u.text}`);
            },
          });
          meta.curve = result.reply;
          return a;
        },
      };
    },

    async draw(record, figures) {
      const a = record.reply;
      const curve = record.curve;
      record.finishedAt ??= new Date().toISOString();
      const results = $('imp-results');
      const model = record.modelLabel;
      const lm = isCorpusSweep(curve);
      const task = lm ? curve.config.corpus_name : curve.task.id;
      results.append(el('p', { class: 'papa-findings', id: 'imp-finding', role: 'status', text: a.finding }));
      // a language model's texts can be short for the window: the engine's warnings, once each, as the LM panel shows them
      const warnings = lm ? [...new Set([curve, a].flatMap((r) => r.warnings ?? []))] : [];
      if (warnings.length) results.append(el('p', { class: 'note', id: 'imp-warnings', text: `The engine says: ${warnings.join(' ')}` }));
      const labels = a.measures.map((m) => m.label);
      for (const m of a.measures) {
        const grid = a.grids[m.id];
        await figures.add(`imp_grid_${m.id}`, `${m.label} of every head (layers down, heads across); ${higherText(m)}.`, (canvas) => {
          layerHeadHeatmap(canvas, grid.map((r) => r.map((x) => x ?? Number.NaN)), { title: `${m.label} \u2014 ${model}, ${task}`,
                                                                                       scale: scaleOf([grid.map((r) => r.filter((x) => x !== null))]),
                                                                                       legend: m.label });
        });
      }
      // the engine's matrix in the direction of importance (docs/findings.md): positive where two measures call the
      // same heads important, so confidence against entropy reads as agreement; a reply from before it has the raw one
      const directed = Array.isArray(a.spearman_importance);
      await figures.add('imp_spearman', `Spearman rank correlation between the measures over the heads${directed ?
        ', read in the direction of importance (entropy and sink mass sign-flipped)' : ''}: 1 ranks the heads alike, ` +
        '\u22121 in reverse, 0 not related; a dash where a measure is the same for every head.', (canvas) => {
        labelledMatrix(canvas, directed ? a.spearman_importance : a.spearman, labels, {
          title: `Do the measures agree? \u2014 ${model}, ${task}`,
          subtitle: `Spearman \u03c1 over ${a.grids[a.measures[0].id].flat().length} heads${directed ? ', in the direction of importance' : ', raw values'}`,
          scale: { signed: true, min: -1, max: 1 },
          legend: directed ? 'colour: \u03c1 from \u22121 (they call opposite heads important) to 1 (the same heads)'
            : 'colour: \u03c1 from \u22121 (purple) to 1 (orange)' });
      });
      await figures.add('imp_overlap', `How many of the ${a.least.k} heads each measure calls least important the two measures share.`,
        (canvas) => {
          labelledMatrix(canvas, a.least.overlap, labels, { title: `Least important ${a.least.k} heads in common \u2014 ${model}`,
                                                           subtitle: `${task}; the diagonal is ${a.least.k}`, scale: { signed: false, min: 0, max: a.least.k || 1 },
                                                           format: (v) => String(v), legend: 'colour: shared heads, 0 to k' });
        });
      results.append(el('figure', { class: 'analysis-figure papa-table-figure', id: 'imp-least' },
        el('table', { class: 'papa-table', id: 'imp-least-table' },
          el('caption', { text: `The ${a.least.k} least important heads of each measure (layer.head)` }),
          el('tbody', {}, ...a.measures.map((m) => el('tr', {}, el('th', { scope: 'row', text: m.label }),
                                                    el('td', { text: a.least.heads[m.id].map(([l, h]) => `${l}.${h}`).join(', ') })))))));
      const series = curveSeries(curve);
      if (lm) await drawLmCurve(curve, series, figures, results, model);
      else {
        const subtitle = `${model} \u00b7 task ${task} (${curve.task.metric}) \u00b7 ${curve.config.seeds.length} seeds \u00b7 engine ${curve.engine}`;
        await figures.add('imp_curve', `Removing heads in the gradient-importance order (zero attention) against making them constant ` +
          `in the \u03bb order (PAPA), on the same axes: the score as the fraction of heads kept falls, 95% intervals over the seeds.`,
        async (canvas) => {
          figures.charts.curve = await fractionChart(canvas, { series, title: `Pruning vs PAPA: ${curve.task.metric} as heads go`, subtitle,
                                                               yTitle: curve.task.metric, range: metricRange(curve.task.metric) });
        });
        results.append(el('figure', { class: 'analysis-figure papa-table-figure' },
          resultTable(curve, { caption: `Every configuration of the sweep (the crossed pairs too): ${model} on ${task}.`, id: 'imp-curve-table' })));
      }
      if (fromLink && !record.stored) {
        showVerdict(ui, compareImportance(fromLink, a, curve));
        fromLink = null;
      }
      setState({ imp_result: compactImportance(a, curve) });
      await ctx.link?.flush();
      ui.linkNote.textContent = ctx.link?.refused ? `No link for this result: ${ctx.link.refused}.`
        : 'The address is this result\u2019s link: it carries the settings and every number drawn with both digests, so whoever ' +
          'opens it recomputes the measures and the curve and sees whether they reproduce.';
      $('imp-export-csv').disabled = false;
    },

    summary(record) {
      if (isCorpusSweep(record.curve)) {
        return `Measures over ${record.reply.n_validation} held-out windows (the gradient over ${record.reply.n_examples}) and the pruning ` +
          `curve (${record.curve.configs.length} configurations); digests ${record.reply.digest.slice(0, 19)}\u2026 and ${record.curve.digest.slice(0, 19)}\u2026`;
      }
      return `Measures over ${record.reply.n_examples} examples and the pruning curve (${record.curve.configs.length} configurations); ` +
        `digests ${record.reply.digest.slice(0, 19)}\u2026 and ${record.curve.digest.slice(0, 19)}\u2026`;
    },

    exportBody(record) {
      if (isCorpusSweep(record.curve)) {
        // the texts by name (their content hashes are in the provenance), as the language-model panel exports them
        const named = (r) => ({ ...r, corpus: `(${r.corpus_name})`, constants_corpus: `(${r.constants_corpus_name})` });
        return { provenance: importanceProvenance(record, currentLink()),
                 request: { head_agreement: named(record.request), papa: named(record.curveRequest) },
                 reply: { head_agreement: record.reply, papa: record.curve } };
      }
      const strip = ({ task_jsonl, ...r }) => ({ ...r, task_jsonl: task_jsonl ? `(the built-in task ${r.task}, content ${record.curve.hashes.task})` : undefined });
      return { provenance: importanceProvenance(record, currentLink()),
               request: { head_agreement: strip(record.request), papa: strip(record.curveRequest) },
               reply: { head_agreement: record.reply, papa: record.curve } };
    },

    pngBlob: (blob, name, record) => pngWithProvenance(blob, name, importanceProvenance(record, currentLink())),
  };

  const api = mountComputePanel(panel, ctx);
  ui = linkBox('imp');
  $('imp-results').before(ui.box);
  const csv = el('button', { id: 'imp-export-csv', type: 'button', disabled: true, text: 'Export CSV' });
  $('imp-export-json').after(csv);
  csv.addEventListener('click', () => {
    if (!api.last) return;
    const prov = importanceProvenance(api.last, currentLink());
    ctx.download('attnlab_importance.csv', new Blob([importanceCsv(api.last.reply, api.last.curve, prov)], { type: 'text/csv' }));
  });
  const refresh = api.refresh;
  api.refresh = () => {
    refresh();
    csv.disabled = !api.last;
  };
  // A link with a result opens on it, scrolled to and focused as PAPA's (the recompute runs in view): what it
  // holds first, then the recompute's verdict.
  ctx.on('link', () => {
    fromLink = state.imp_result;
    ui.diffs.replaceChildren();
    if (!fromLink) return;
    ui.shared.textContent = 'You opened a shared result of the head measures: the finding and the correlations below are the ' +
      'link\u2019s. The page recomputes them once the model is loaded and says whether every number reproduces.';
    ui.shared.hidden = false;
    ui.stored.replaceChildren(el('p', { id: 'imp-stored-finding', class: 'papa-findings', text: fromLink.finding }),
      el('table', { class: 'papa-table', id: 'imp-stored-table' }, el('caption', { text: `From the link: Spearman \u03c1, digest ${fromLink.digest.slice(0, 23)}\u2026` }),
        el('thead', {}, el('tr', {}, el('th', { text: '' }), ...fromLink.ids.map((id) => el('th', { scope: 'col', text: id })))),
        el('tbody', {}, ...fromLink.ids.map((id, i) => el('tr', {}, el('th', { scope: 'row', text: id }),
          ...fromLink.spearman[i].map((x) => el('td', { text: x === null ? '\u2013' : x.toFixed(2) })))))));
    ui.verdict.textContent = 'from the link: these numbers are the link\u2019s own; the page recomputes them once the model is loaded.';
    ui.verdict.className = 'verdict pending';
    ui.box.scrollIntoView({ block: 'start' });
    ui.box.focus({ preventScroll: true });
  });
  // A task's result was made with the PAPA panel's settings: a change there means the link no longer describes it
  // (a language model's takes none of them).
  $('papa')?.addEventListener('change', (e) => {
    if (e.target.type !== 'file' && state.imp_result && !state.imp_result.lm) setState({ imp_result: null });
  });
  // A text or JSONL file goes into the text box of a language model's corpus (lm_corpus.js), and so into the link.
  attachTextFiles(api, 'imp', () => (state.imp_result ? { imp_result: null } : {}));
  $('importance').addEventListener('change', () => {
    if (!fromLink) return;
    fromLink = null;
    ui.verdict.textContent = 'from the link, but the settings have changed since: the next run is not compared with these numbers.';
  });
  api.state = () => ({ fromLink });
  return api;
}

registerSection({ id: 'importance', label: 'Importance', order: 55, title: 'Which heads matter: the head measures and the pruning curve' });
registerPanel({ id: 'importance', order: 55, keys: IMPORTANCE_KEYS, mount });
