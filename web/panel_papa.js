// panel_papa.js: the PAPA panel (docs/papa-page.md; docs/papa.md for the method, docs/papa-op.md for the request): a
// compute panel (compute_panel.js) over the engine's "papa" op, plus what a shared result needs:
//   - the task: built in, or the user's files (papa_task.js) named in the link by name and SHA-256;
//     a link's files are asked for and checked, and a wrong file is refused;
//   - progress for the whole sweep (papa_progress.js) with its stage and the time left, and Cancel;
//   - figures (papa_charts.js, papa_table.js), each with a one-sentence caption;
//   - the result's summary in the link (state key papa_result, papa_record.js), and the embedded model it was
//     computed on when that is not the page's (papa_model): opening a link shows it at once ("from the link"),
//     recomputes on that model, and says "reproduced: identical" or where the numbers differ;
//   - exports with provenance: JSON, CSV, and PNGs carrying it in text chunks (png_text.js);
//   - one request on several models (the page's and every embedded one), side by side, and the panel's
//     first example, which runs exactly that (docs/papa-page.md, "Comparing models");
//   - stored examples (papa_examples.js): drawn at once, marked stored, with "verify by recomputing".
import { mountComputePanel } from './compute_panel.js';
import { $, el, setError, show } from './dom.js';
import { addLinkProblem } from './link_sync.js';
import { EMBEDDED_ID, formatSize } from './model_ref.js';
import { isEncoderWithWeights } from './models.js';
import { comparisonChart, constantsGrid, fractionChart, lambdaHeatmap } from './papa_charts.js';
import { EARLY_STAGES, SweepProgress } from './papa_progress.js';
import { CONSTANTS_SHOWN, constantsOf, exampleIndex, loadExample, timeOf } from './papa_examples.js';
import { checkResult, compactResult, compareResult, metricRange, provenanceOf, seriesOf, toCsv } from './papa_record.js';
import {
  BUILTIN_TASKS, COMPARE_EXAMPLE, CONSTANT_KINDS, HEAD_ORDERS, IMPORT_FORMATS, MODEL_SCOPES, PAPA_KEYS, PRESETS, buildRequest, examples,
  valuesOf,
} from './papa_request.js';
import { comparisonTable, resultTable, storedTable } from './papa_table.js';
import { combinedFigures } from './papa_combined.js';
import { builtinTaskText, fileShape, matchTaskFiles, readTaskFiles, sniffColumns } from './papa_task.js';
import { registerPanel } from './panels.js';
import { pngWithProvenance } from './provenance.js';
import { linkBox, showVerdict } from './result_link.js';
import { registerSection } from './sections.js';
import { setState, state } from './state.js';

// papa_model: the embedded model the result was computed on when it is not the page's ('' for the page's
// model), so a stored example of another model, or its verify run, keeps its result in the link and whoever
// opens it recomputes on that model. Its form is checked here; whether the page embeds it, once the page
// knows its models (restoreFromLink).
const keys = {
  ...PAPA_KEYS,
  papa_result: { type: 'object', default: null, check: checkResult },
  papa_model: { type: 'string', default: '', maxLength: 100, check: (v) => (v === '' || EMBEDDED_ID.test(v) ? null : 'not an embedded model id') },
};
const NO_RESULT = { papa_result: null, papa_model: '' };

// The user's task files in this tab: { train: {name, text, record}, validation?: {...} }.
const taskFiles = {};
let columns = [];             // the train file's header names, for the column choices
let shape = null;             // the train file's look: 'tsv', 'csv', 'jsonl', 'conll' or null (papa_task.js fileShape)
let wanted = null;            // a link's task files still to be given: { expect, resolve, reject }
let fromLink = null;          // a link's stored result, until the recompute compares with it
const session = new Map();    // comparison across models: request key -> Map(model hash -> point)
let presetTimes = [];         // the stored POS examples' index entries: the page preset's measured times
let recomputeOn = null;       // the next run recomputes a result of this embedded model (not the page's): its id

// The panel's values that differ from their defaults, as the user gave them (exports name them).
const settingsOf = (v) => Object.fromEntries(Object.entries(v).filter(([k, x]) => PAPA_KEYS[k] && x !== PAPA_KEYS[k].default));

// Once a file is read, only its own columns are offered (a default such as "text" that the file lacks is not).
const columnOptions = (key) => () => {
  const list = [...new Set([...(key === 'papa_pair_col' ? [''] : []), ...(columns.length ? columns : [state[key]])])];
  return list.map((c) => [c, c === '' ? '(none)' : c]);
};
// Which import options apply: the format's, and with "detect" the file's look's (a GLUE TSV has its columns
// fixed by its format, so neither column choices, CoNLL labels nor a CSV delimiter apply).
const FORMAT_OPTIONS = { columns: ['csv', 'jsonl'], conll: ['conll2003'], delimiter: ['csv'] };
const applies = (what) => (v) => v.papa_task === 'file' &&
  (FORMAT_OPTIONS[what].includes(v.papa_fmt) || (v.papa_fmt === 'auto' && (shape === null || FORMAT_OPTIONS[what].includes(shape === 'conll' ? 'conll2003' : shape))));
// weights in one file or in shards listed by an index (attnlab-small-bert's)

const controls = [
  { kind: 'select', key: 'papa_models', id: 'papa-models', label: 'Models', row: 'models', options: MODEL_SCOPES },
  { kind: 'note', id: 'papa-models-help', showIf: (v) => v.papa_models === 'embedded',
    text: () => 'The same sweep runs on each model in turn; a table puts them side by side.' },
  { kind: 'select', key: 'papa_task', id: 'papa-task', label: 'Task', row: 'task',
    options: () => [...BUILTIN_TASKS, ['file', 'Import a task file (GLUE TSV, CoNLL-2003, CSV, JSONL)']] },
  { kind: 'select', key: 'papa_preset', id: 'papa-preset', label: 'Preset', row: 'task',
    options: Object.keys(PRESETS).map((p) => [p, p]) },
  { kind: 'note', id: 'papa-preset-help', text: (v) => PRESETS[v.papa_preset] + (v.papa_preset === 'page' && presetTimes.length
    ? `. Measured natively with the page's request on POS: ${presetTimes.map((e) => `${e.model} ${timeOf(e)}`).join(', ')} ` +
      '(native: the page\u2019s WebAssembly takes longer, docs/papa-page.md; its progress bar gives the time left).' : '.') },
  { kind: 'note', id: 'papa-files', showIf: (v) => v.papa_task === 'file' },
  { kind: 'select', key: 'papa_fmt', id: 'papa-format', label: 'Format', row: 'import', showIf: (v) => v.papa_task === 'file',
    options: IMPORT_FORMATS.map((f) => [f, f === 'auto' ? 'detect' : f]) },
  { kind: 'select', key: 'papa_text_col', id: 'papa-text-col', label: 'text', row: 'import', options: columnOptions('papa_text_col'),
    showIf: applies('columns') },
  { kind: 'select', key: 'papa_pair_col', id: 'papa-pair-col', label: 'pair', row: 'import', options: columnOptions('papa_pair_col'),
    showIf: applies('columns') },
  { kind: 'select', key: 'papa_label_col', id: 'papa-label-col', label: 'label', row: 'import', options: columnOptions('papa_label_col'),
    showIf: applies('columns') },
  { kind: 'select', key: 'papa_conll_col', id: 'papa-conll-col', label: 'CoNLL labels', row: 'import2',
    options: [['ner', 'named entities'], ['pos', 'parts of speech'], ['chunk', 'chunks']], showIf: applies('conll') },
  { kind: 'select', key: 'papa_delim', id: 'papa-delim', label: 'CSV delimiter', row: 'import2',
    options: [['comma', ','], ['semicolon', ';'], ['tab', 'tab']], showIf: applies('delimiter') },
  { kind: 'note', id: 'papa-glue-note', showIf: (v) => v.papa_task === 'file' && v.papa_fmt === 'auto' && shape === 'tsv',
    text: () => 'A tab-separated file: read as GLUE data (its format fixes the columns).' },
  { kind: 'number', key: 'papa_vfrac', id: 'papa-vfrac', label: 'Validation % (one file)', row: 'import2',
    attrs: { min: 1, max: 90, step: 1, size: 4 }, showIf: (v) => v.papa_task === 'file' },
  { kind: 'check', key: 'papa_skip', id: 'papa-skip', label: 'Skip bad rows (and list them)', row: 'import2', showIf: (v) => v.papa_task === 'file' },
  { kind: 'text', key: 'papa_constants', id: 'papa-constants', label: 'Constant matrices', row: 'sweep',
    attrs: { size: 22, get title() { return CONSTANT_KINDS.join(', '); } } },
  { kind: 'text', key: 'papa_orders', id: 'papa-orders', label: 'Head orders', row: 'sweep',
    attrs: { size: 26, get title() { return HEAD_ORDERS.join(', '); } } },
  { kind: 'note', id: 'papa-lists-help', text: () => `Comma-separated. Constant matrices: ${CONSTANT_KINDS.join(', ')}. ` +
      `Head orders (which heads become constant first): ${HEAD_ORDERS.join(', ')}.` },
  { kind: 'text', key: 'papa_fractions', id: 'papa-fractions', label: 'Fractions kept', row: 'sweep2', attrs: { size: 22 } },
  { kind: 'text', key: 'papa_seeds', id: 'papa-seeds', label: 'Seeds', row: 'sweep2', attrs: { size: 10 } },
  { kind: 'check', key: 'papa_baselines', id: 'papa-baselines', label: 'Baselines', row: 'sweep2' },
  { kind: 'check', key: 'papa_mlm', id: 'papa-mlm', label: 'MLM score', row: 'sweep2' },
  { kind: 'number', key: 'papa_train', id: 'papa-train', label: 'Training examples', row: 'hyper', blank: -1,
    attrs: { min: 0, step: 1, size: 7, placeholder: 'preset' } },
  { kind: 'number', key: 'papa_val', id: 'papa-val', label: 'validation', row: 'hyper', blank: -1, attrs: { min: 0, step: 1, size: 7, placeholder: 'preset' } },
  { kind: 'number', key: 'papa_L', id: 'papa-L', label: 'L', row: 'hyper', blank: 0, attrs: { min: 8, max: 512, step: 1, size: 7, placeholder: 'preset' } },
  { kind: 'number', key: 'papa_epochs', id: 'papa-epochs', label: 'Probe epochs', row: 'hyper2', blank: 0, attrs: { min: 1, step: 1, size: 4, placeholder: 'preset' } },
  { kind: 'number', key: 'papa_batch', id: 'papa-batch', label: 'batch', row: 'hyper2', blank: 0, attrs: { min: 1, step: 1, size: 4, placeholder: 'preset' } },
  { kind: 'text', key: 'papa_lr', id: 'papa-lr', label: 'lr', row: 'hyper2', attrs: { size: 7, placeholder: 'preset' } },
  { kind: 'number', key: 'papa_rank_epochs', id: 'papa-rank-epochs', label: '\u03bb ranking epochs', row: 'hyper2', blank: 0,
    attrs: { min: 1, step: 1, size: 4, placeholder: 'preset' } },
  { kind: 'number', key: 'papa_rank_n', id: 'papa-rank-n', label: 'examples', row: 'hyper2', blank: -1, attrs: { min: 0, step: 1, size: 6, placeholder: 'preset' } },
];

// ---- the task files -------------------------------------------------------------------------

function filesBox(ctx) {
  const box = $('papa-files');
  const train = el('input', { id: 'papa-train-file', type: 'file', accept: '.tsv,.csv,.jsonl,.json,.txt,.conll' });
  const val = el('input', { id: 'papa-val-file', type: 'file', accept: '.tsv,.csv,.jsonl,.json,.txt,.conll' });
  const info = el('span', { id: 'papa-files-info' });
  const error = el('span', { id: 'papa-files-error', class: 'error', role: 'alert', hidden: true });
  const ask = el('span', { id: 'papa-files-wanted', class: 'wanted', role: 'alert', hidden: true });
  box.replaceChildren(el('label', { for: 'papa-train-file', text: 'Train file ' }), train,
                      el('label', { for: 'papa-val-file', text: ' Validation file (optional) ' }), val, el('br'), info, ask, error);

  const describe = () => {
    const parts = ['train', 'validation'].filter((p) => taskFiles[p]).map((p) => {
      const f = taskFiles[p].record;
      return `${p}: ${f.name} (${formatSize(f.size)}, SHA-256 ${f.sha256.slice(0, 12)}\u2026)`;
    });
    info.textContent = parts.length ? `${parts.join('; ')}. ${columns.length ? `Columns: ${columns.join(', ')}.` : ''}` : 'No file chosen yet.';
  };

  async function picked(part, fileList) {
    setError(error, null);
    if (!fileList.length) return;
    const got = await readTaskFiles([fileList[0]]);
    const name = fileList[0].name;
    if (wanted) {
      // A link's files: checked against the link's record by content; a wrong file is refused.
      const expect = wanted.expect[part];
      if (!expect) throw new Error(`This link's task has no ${part} file.`);
      const m = matchTaskFiles({ [part]: expect }, got);
      if (m.problems) throw new Error(`Refused: this is not the file the link was made with. ${m.problems.join('; ')}.`);
      taskFiles[part] = { name: expect.name, text: m.texts[part], record: { ...expect } };
    } else {
      taskFiles[part] = { name, text: got.text[name], record: got.record[0] };
      // other files: the settings (and so the link) name them, and an earlier result no longer applies
      if (taskFiles.train) {
        setState({ papa_files: { train: taskFiles.train.record, ...(taskFiles.validation ? { validation: taskFiles.validation.record } : {}) },
                   ...NO_RESULT });
      }
    }
    if (part === 'train') {
      columns = sniffColumns(taskFiles.train.text, state.papa_delim === 'semicolon' ? ';' : ',');
      shape = fileShape(taskFiles.train.text);
    }
    describe();
    ctx.panels.papa?.refresh();
    if (wanted && Object.keys(wanted.expect).every((p) => !wanted.expect[p] || taskFiles[p]?.record.sha256 === wanted.expect[p].sha256)) {
      const w = wanted;
      wanted = null;
      show(ask, false);
      w.resolve();
    }
  }
  // A refused file leaves the picker empty: the picker, the line above the error and the task in use agree
  // (the picker showed the refused file beside "No file chosen yet.").
  const refused = (input, e) => {
    input.value = '';
    describe();
    if (!taskFiles.train && !taskFiles.validation) info.textContent = 'No file in use: the file picked was refused (below).';
    setError(error, e.message);
  };
  train.addEventListener('change', () => picked('train', [...train.files]).catch((e) => refused(train, e)));
  val.addEventListener('change', () => picked('validation', [...val.files]).catch((e) => refused(val, e)));
  describe();

  // Asks for the files a link names; resolves once they are given (cancel rejects).
  return (expect, signal) => new Promise((resolve, reject) => {
    const list = ['train', 'validation'].filter((p) => expect[p]).map((p) => `${p}: ${expect[p].name} \u2014 ${formatSize(expect[p].size)}, SHA-256 ${expect[p].sha256}`);
    ask.textContent = `This link's task was made from local files. Pick them below: they are checked by SHA-256 and never leave this page; ` +
      `no other task is run in their place. ${list.join('; ')}`;
    show(ask, true);
    wanted = { expect, resolve, reject };
    signal.addEventListener('abort', () => {
      if (wanted?.resolve === resolve) wanted = null;
      show(ask, false);
      reject(Object.assign(new Error('cancelled'), { code: 'cancelled' }));
    }, { once: true });
  });
}

// ---- the panel --------------------------------------------------------------------------------

function requestKey(args) {
  const { model, task_jsonl, import: imp, outputs, ...rest } = args;
  return JSON.stringify({ ...rest, task: args.task ?? imp?.train_name });
}

const labelOf = (m) => (m.source?.kind === 'embedded' ? m.source.entry.id : m.label);

// The models a run covers, one rule for Run sweep, "verify by recomputing" and a link's recompute:
//   on: the embedded model a result to recompute was computed on (a stored record's, or the link's papa_model),
//       or null. When it is not the page's model, the run covers that model alone, loaded into the worker
//       beside the page's; it throws when this page has no embedded model with weights by that id.
//   otherwise: the page's model first, then (scope "embedded") every other embedded model with weights, loaded
//       into the worker beside it when the run reaches it.
function modelsToRun(v, c, on = null) {
  const m = c.models.current();
  const currentEntry = m?.source?.kind === 'embedded' ? m.source.entry.id : null;
  const others = c.models.embedded().filter(isEncoderWithWeights);
  if (on && on !== currentEntry) {
    const entry = others.find((e) => e.id === on);
    if (!entry) {
      throw new Error(`the model "${on}" is not among this page's embedded models with weights ` +
                      `(${others.map((e) => e.id).join(', ') || 'none'}): nothing to recompute the result with`);
    }
    return [{ label: entry.id, entry }];
  }
  const here = { label: labelOf(m), modelId: m.modelId };
  if (v.papa_models !== 'embedded') return [here];
  return [here, ...others.filter((e) => e.id !== currentEntry).map((e) => ({ label: e.id, entry: e }))];
}

// The stored example closest to a request on a model (the same request, else the same task), or null.
async function closestExample(label, args) {
  const key = requestKey(args);
  const entries = (await exampleIndex()).filter((e) => e.model === label && e.task === args.task);
  let first = null;
  for (const e of entries) {
    const rec = await loadExample(e).catch(() => null);
    if (!rec) continue;
    if (requestKey(rec.request) === key) return rec;
    first ??= rec;
  }
  return first;
}

// The measured seconds per stage of the closest stored example ({constants, ranking, features, probes, mlm}),
// so the bar and the time left follow the stages' real costs on this model and task; null when none.
async function measuredCosts(label, args) {
  if (!args.task) return null;
  return (await closestExample(label, args))?.reply.seconds ?? null;
}

// One point of the score-drop-against-quality figure: the drop with every head constant (or with the
// most heads constant the sweep has).
function comparisonPoint(r, label) {
  const nHeads = r.shape.n_layers * r.shape.n_heads;
  const allConst = r.configs.findIndex((c) => c.what === 'sweep' && c.k === nHeads && c.constant === r.config.constants[0]);
  const lowest = allConst >= 0 ? allConst : r.configs.reduce((b, c, i) => (c.what === 'sweep' && c.k > (r.configs[b]?.k ?? -1) ? i : b), 0);
  return { point: { label, x: r.summary[0]?.mean, y: r.summary[lowest].drop, k: r.configs[lowest].k, nHeads } };
}

// What the comparison's points hold, in words: each model's own heads (models of different sizes share the
// chart, so one "k of N" would misname all but one of them).
function constantShare(points) {
  if (points.every((p) => p.k === p.nHeads)) return 'every head';
  return points.map((p) => `${p.k} of ${p.nHeads} heads for ${p.label}`).join(', ');
}

// One "papa" request with its progress. The engine reports every batch; the page repaints the bar and
// status at most every 150 ms, so the main thread stays nearly idle during the sweep, except that each
// early stage (reading the task, constants, ranking) is shown as it starts, however short it is. where:
// this model's place in a comparison ({index, count, label, before, share}: the measured share of the whole
// run this model's sweep takes, and the share of those before it), or null. costs: the stages' measured
// seconds (measuredCosts), or null. The engine's reports say which configuration of how many they are on.
async function sweepOne(j, args, where, costs) {
  const progress = new SweepProgress(costs);
  let latest = null;
  let timer = 0;
  let painted = 0;
  let paintedStage = null;
  const paint = () => {
    timer = 0;
    painted = performance.now();
    paintedStage = progress.stage;
    const overall = where ? where.before + where.share * latest.fraction : latest.fraction;
    const which = where ? ` on model ${where.index + 1} of ${where.count} (${where.label})` : '';
    j.report(overall, `PAPA sweep${which} ${Math.round(latest.fraction * 100)}%: ${latest.text}`, 'sweep');
  };
  return j.request('papa', args, {
    onProgress: (p) => {
      latest = progress.update(p);
      if (EARLY_STAGES.includes(p.stage) && p.stage !== paintedStage) {
        clearTimeout(timer);
        paint();
      } else if (!timer) {
        timer = setTimeout(paint, Math.max(0, 150 - (performance.now() - painted)));
      }
    },
  }).finally(() => clearTimeout(timer));
}

// ---- mount, step by step ----------------------------------------------------------------------
// mount(ctx) hands compute_panel.js the panel (its run: runSweeps; its render: drawResult), then builds the
// panel's own controls, wires their events and restores a shared link's result. The steps share one view:
// { ctx, api (compute_panel.js's), ui (the link box), askFiles (filesBox's), lastModelId }.

const currentLink = (view) => (view.ctx.link?.refused ? null : location.href);

function showLinkNote(view) {
  const { ctx, ui } = view;
  if (!ui) return;
  const sync = ctx.link;
  const on = state.papa_model;
  ui.linkNote.textContent = !state.papa_result ? ''
    : sync?.refused ? `No link for this result: ${sync.refused}.`
    : `The address is this result\u2019s link (${sync?.length?.toLocaleString('en') ?? '?'} characters): it carries the settings, the ` +
      `model and task hashes and the numbers\u2019 digest${on ? `, and the embedded model the result was computed on (${on}, not the page\u2019s)` : ''}, ` +
      `so whoever opens it recomputes the sweep${on ? ` on ${on}` : ''} and sees whether it reproduces.` +
      (state.model?.kind === 'hub' ? ' The model is a Hub repository: if its files change, the model hash tells.' : '');
}

// Run: the task (built in, or the user's files, asked for when a link names them), the request, and one sweep
// per model the run covers (sweepOne), each with its measured share of the bar.
async function runSweeps(view, v, c, job) {
  const m = c.models.current();
  let task;
  if (v.papa_task === 'file') {
    const expect = state.papa_files;
    const have = (p) => taskFiles[p] && expect?.[p] && taskFiles[p].record.sha256 === expect[p].sha256;
    if (expect && !(have('train') && (!expect.validation || have('validation')))) {
      job.status('Waiting for the link\u2019s task files\u2026');
      await view.askFiles(expect, job.signal);
    }
    if (!taskFiles.train) throw new Error('Choose a train file for the task (or a built-in task).');
    task = { train: taskFiles.train.text, trainName: taskFiles.train.name };
    if (taskFiles.validation) {
      task.validation = taskFiles.validation.text;
      task.validationName = taskFiles.validation.name;
    }
  } else {
    job.status('Reading the task\u2026');
    task = { jsonl: await builtinTaskText(v.papa_task, job.signal) };
  }
  job.check();
  const args = buildRequest(v, m.modelId, task);
  const models = modelsToRun(v, c, recomputeOn);
  recomputeOn = null;
  const meta = { modelLabel: models[0].label, modelRef: models[0].entry ? { kind: 'embedded', id: models[0].entry.id } : state.model,
                 modelId: models[0].modelId ?? null, onPageModel: !models[0].entry, taskFiles: v.papa_task === 'file' ? state.papa_files : null,
                 exportName: 'papa', comparison: null, preset: v.papa_preset, settings: settingsOf(v) };
  return {
    op: 'papa', args, running: models.length > 1 ? `PAPA sweep on ${models.length} models` : 'PAPA sweep', meta,
    run: async (j) => {
      const t0 = performance.now();
      const runs = [];
      // each model's share of the run, from the measured costs of its stored example (equal shares without)
      const totals = await Promise.all(models.map(async (one) => {
        const sec = await measuredCosts(one.label, args);
        return sec ? Object.values(sec).reduce((a, b) => a + b, 0) : null;
      }));
      const weights = totals.every((t) => t > 0) ? totals : models.map(() => 1);
      const sum = weights.reduce((a, b) => a + b, 0);
      for (let i = 0; i < models.length; i++) {
        const one = models[i];
        if (!one.modelId) {
          j.status(`Loading ${one.label} (model ${i + 1} of ${models.length})\u2026`);
          one.modelId = (await c.models.loadSecond(one.entry)).modelId;
          j.check();
        }
        const where = models.length > 1 ? { index: i, count: models.length, label: one.label, share: weights[i] / sum,
                                             before: weights.slice(0, i).reduce((a, b) => a + b, 0) / sum } : null;
        const result = await sweepOne(j, { ...args, model: one.modelId }, where, await measuredCosts(one.label, args));
        runs.push({ label: one.label, reply: result.reply, result });
      }
      view.api.span = [t0, performance.now()]; // the sweep's time in the worker (tests check the main thread meanwhile)
      meta.comparison = runs.length > 1 ? runs.map(({ label, reply }) => ({ label, reply })) : null;
      return runs[0].result;
    },
  };
}

// Render: the verdict, the figures and tables of one run (or stored record), the comparison across models, and
// the link (a link's or a stored example's recompute says whether it reproduced).
async function drawResult(view, record, figures) {
  const r = record.reply;
  record.finishedAt ??= new Date().toISOString();
  const NL = r.shape.n_layers;
  const H = r.shape.n_heads;
  const model = record.modelLabel;
  const subtitle = `${model} \u00b7 task ${r.task.id} (${r.task.metric}) \u00b7 ${r.config.seeds.length} seeds \u00b7 engine ${r.engine}`;
  const series = seriesOf(r, 'score');
  const byOrder = new Set(series.map((s) => s.order)).size > 1;
  const results = $('papa-results');
  if (record.stored) results.append(storedNote(view, record));
  // The engine's verdict (docs/papa.md, "What a sweep finds"). A task on which the full model is no better
  // than its embeddings alone says so instead of drawing flat lines that would look like a finding.
  const verdict = r.findings;
  if (verdict) {
    results.append(el('p', { class: `papa-findings papa-findings-${verdict.informative}`, id: 'papa-findings',
                             role: 'status', text: verdict.text }));
  }
  if (verdict?.informative !== 'no') await figures.add('papa_scores', `Score on ${r.task.id} against the fraction of heads that stay input-dependent, ` +
    `one line per ${byOrder ? 'head order' : 'constant matrix'}, with 95% intervals over the seeds (the PAPA paper\u2019s Figures 2 and 5).`,
  async (canvas) => {
    figures.charts.scores = await fractionChart(canvas, { series, title: `PAPA: ${r.task.metric} vs input-dependent heads`,
                                                           subtitle, yTitle: r.task.metric, range: metricRange(r.task.metric) });
  });
  results.append(el('figure', { class: 'analysis-figure papa-table-figure' },
    resultTable(r, { caption: `Table 1 for ${model} on ${r.task.id}: score, relative drop from the full model, MLM score.` }),
    el('figcaption', { text: 'Each configuration\u2019s mean score over the seeds with its 95% Student-t interval, and how much it ' +
      'falls relative to the model with every head input-dependent.' })));
  if (r.import) {
    const imp = r.import;
    results.append(el('figure', { class: 'analysis-figure', id: 'papa-import' },
      el('figcaption', { text: `Imported ${imp.rows ?? '?'} rows; ${imp.bad_rows ?? 0} bad row(s) skipped${imp.messages?.length ? ':' : '.'}` }),
      el('ul', { class: 'papa-diffs' }, ...(imp.messages ?? []).map((m) => el('li', { text: m })))));
  }
  const mlm = seriesOf(r, 'mlm');
  if (mlm.length) {
    await figures.add('papa_mlm', 'The model\u2019s masked-language-model score (mean log-probability of the masked tokens) ' +
      'as heads become constant: how much the pretraining objective itself needs input-dependent attention.', async (canvas) => {
      figures.charts.mlm = await fractionChart(canvas, { series: mlm, title: 'MLM score vs input-dependent heads', subtitle,
                                                         yTitle: 'mean log-probability of masked tokens' });
    });
  } else if (r.config?.mlm && !record.stored) {
    // asked for, but the weights have no MLM head (a DeBERTa-v3 checkpoint is a discriminator): nothing is invented
    results.append(el('p', { class: 'note', id: 'papa-no-mlm', text: 'There is no MLM score for this model: its weights ' +
      'have no masked-language-model head (DeBERTa-v3 checkpoints ship the discriminator only), so the MLM column stays empty.' }));
  }
  if (r.lambdas?.length) {
    await figures.add('papa_lambdas', 'The learned \u03bb of every head (sigmoid of its logit): heads with the smallest \u03bb ' +
      'become constant first in the \u03bb order.', (canvas) => {
      lambdaHeatmap(canvas, r.lambdas, { title: `\u03bb per head \u2014 ${model}` });
    });
  }
  const C = record.tensors?.constants;
  if (C?.data) {
    const L = C.positions ?? C.shape[2]; // a stored record keeps only the positions shown
    const n = Math.min(C.shape[2], CONSTANTS_SHOWN);
    await figures.add('papa_constants', `The averaged constant matrix of every head (the PAPA paper\u2019s Figure 4), ` +
      `its first ${n} of ${L} positions: what each head attends to on average over the training sentences.`, (canvas) => {
      constantsGrid(canvas, C.data, { NL, H, L: C.shape[2], n, title: `Constant matrices (average) \u2014 ${model}`, subtitle: `task ${r.task.id}, L ${L}` });
    });
  }
  // The models side by side, when this run covered several.
  if (record.comparison) {
    results.append(el('figure', { class: 'analysis-figure papa-table-figure', id: 'papa-compare' },
      comparisonTable(record.comparison, { caption: `The same sweep on ${record.comparison.length} models, task ${r.task.id}.` }),
      el('figcaption', { text: 'One row per model: the probe\u2019s score with every head input-dependent and with every head ' +
        'constant (mean \u00b1 95% over the seeds), the relative drop, the embeddings-only baseline, and whether constant heads ' +
        'cost the model clearly, in the engine\u2019s words (the column heading lists them; the rule: docs/papa.md).' })));
  }
  // The comparison across models: every model run in this tab with the same request.
  const key = requestKey(record.request);
  if (!session.has(key)) session.set(key, new Map());
  for (const { label, reply } of record.comparison ?? [{ label: model, reply: r }]) {
    session.get(key).set(reply.hashes.model, comparisonPoint(reply, label).point);
  }
  const points = [...session.get(key).values()];
  const withWeights = view.ctx.models.embedded().filter(isEncoderWithWeights).map((e) => e.id);
  await figures.add('papa_models', `Score drop with ${constantShare(points)} constant against the full model\u2019s ` +
    `score, one point per model run with these settings in this tab (${points.length} so far). ` +
    `Embedded models with weights: ${withWeights.join(', ') || 'none'}` +
    `${withWeights.length < 2 ? ' \u2014 only one, so the comparison shows it alone; run the same sweep after loading another model ' +
      '(Hub or files) to add a point' : ''}.`, async (canvas) => {
    figures.charts.models = await comparisonChart(canvas, { points, title: 'Score drop against model quality',
      subtitle: [`task ${r.task.id}; drop = 1 \u2212 score / full model\u2019s score`,
        ...(points.length < 2 ? [`one model so far (embedded with weights: ${withWeights.join(', ') || 'none'})`] : [])], xTitle: `full model\u2019s ${r.task.metric}`,
      yTitle: 'relative drop (%)', range: metricRange(r.task.metric) });
  });
  view.lastModelId = record.modelId ?? view.ctx.models.current()?.modelId;
  // The link: the recompute of a link's (or a stored example's) result says whether it reproduced it.
  if (fromLink && !record.stored) {
    showVerdict(view.ui, compareResult(fromLink, r), record.onPageModel === false
      ? `Recomputed on ${model}, the embedded model the result was computed on, loaded beside the page\u2019s model.`
      : `Recomputed on ${model}, the page\u2019s model.`);
    fromLink = null;
  }
  // the link carries the result and, when it is not the page's model's, the embedded model it was computed on
  // (whoever opens it recomputes on that model); a result of another model that is not embedded stays out
  const other = record.onPageModel === false ? (record.modelRef?.kind === 'embedded' ? record.modelRef.id : null) : '';
  setState(other === null ? NO_RESULT : { papa_result: compactResult(r), papa_model: other });
  await view.ctx.link?.flush();
  showLinkNote(view);
  $('papa-export-csv').disabled = false;
}

// The panel as compute_panel.js runs it.
function panelDefinition(view) {
  return {
    id: 'papa',
    title: 'PAPA: how much does the model need input-dependent attention?',
    prefix: 'papa',
    runLabel: 'Run sweep',
    footnote: 'Heads are replaced by constant matrices (averaged over the training data, or data-free) in the order chosen; ' +
      'a probe is trained per seed on the frozen model\u2019s features (docs/papa.md). The sweep runs in the engine\u2019s worker.',
    controls,
    touch: () => (state.papa_result || state.papa_model ? NO_RESULT : null),
    // The core refuses an order it does not build for the model's family and names the one that runs ("... use
    // orders random": docs/families.md); the page offers that run in one click.
    afterError(e, results) {
      if (e?.code !== 'unsupported' || !/use orders random/.test(e.message ?? '')) return;
      const button = el('button', { type: 'button', id: 'papa-use-random', text: 'Run with orders random' });
      button.addEventListener('click', () => {
        const orders = $('papa-orders');
        orders.value = 'random';
        orders.dispatchEvent(new Event('change', { bubbles: true }));
        $('papa-run').click();
      });
      results.append(el('p', { class: 'note' }, button));
    },
    autoRun: (s) => s.papa_result !== null,
    request: (v, c, job) => runSweeps(view, v, c, job),
    draw: (record, figures) => drawResult(view, record, figures),

    summary(record) {
      const r = record.reply;
      if (record.stored) return `Stored result, not computed in this page: digest ${r.digest.slice(0, 19)}\u2026`;
      return `PAPA sweep: ${r.configs.length} configurations \u00d7 ${r.config.seeds.length} seeds in ` +
        `${(record.reply.seconds ? Object.values(record.reply.seconds).reduce((a, b) => a + b, 0) : 0).toFixed(1)} s of engine time; ` +
        `digest ${r.digest.slice(0, 19)}\u2026`;
    },

    exportBody(record) {
      const { task_jsonl, import: imp, ...request } = record.request;
      if (imp) request.import = { ...imp, train: `(${imp.train_name}: see provenance.task.files)`, validation: imp.validation ? `(${imp.validation_name})` : undefined };
      if (task_jsonl) request.task_jsonl = `(the built-in task ${record.request.task}, content ${record.reply.hashes.task})`;
      return { provenance: provenanceOf(record, currentLink(view)), request, reply: record.reply };
    },

    pngBlob: (blob, name, record) => pngWithProvenance(blob, name, provenanceOf(record, currentLink(view))),
  };
}

// ---- the examples: stored results, drawn at once (papa_examples.js) ----

const withWeights = (view) => view.ctx.models.embedded().filter(isEncoderWithWeights);
const taskName = (id) => BUILTIN_TASKS.find(([t]) => t === id)?.[1].replace(/ \(.*$/, '') ?? id;

// The stored records of an example for every embedded model with weights (page's model first), or null.
async function storedFor(view, id) {
  const index = await exampleIndex();
  const cur = labelOf(view.ctx.models.current() ?? {});
  const list = withWeights(view).map((e) => index.find((x) => x.example === id && x.model === e.id));
  if (!list.length || list.some((x) => !x)) return null;
  return list.sort((a, b) => (b.model === cur) - (a.model === cur));
}

// Shows stored records (one example on one or several models) as a run's figures: the page's model's
// record gets every figure, the others join the table of models side by side.
async function openStored(view, entries) {
  const { api, ui } = view;
  const records = await Promise.all(entries.map(loadExample));
  const cur = labelOf(view.ctx.models.current() ?? {});
  const main = records.find((r) => r.model === cur) ?? records[0];
  const at = entries[records.indexOf(main)];
  setState({ ...valuesOf(main.settings), papa_models: records.length > 1 ? 'embedded' : 'current', ...NO_RESULT });
  api.controls.restore();
  api.refresh();
  fromLink = null;
  recomputeOn = null;
  ui.stored.replaceChildren();
  ui.diffs.replaceChildren();
  ui.verdict.textContent = '';
  ui.verdict.className = 'verdict';
  const record = {
    panel: 'papa', op: 'papa', request: main.request, reply: main.reply, tensors: { constants: constantsOf(main) },
    modelLabel: main.model, modelRef: { kind: 'embedded', id: main.model }, modelId: null, onPageModel: main.model === cur,
    taskFiles: null, exportName: 'papa', preset: valuesOf(main.settings).papa_preset, settings: main.settings,
    comparison: records.length > 1 ? records.map((r) => ({ label: r.model, reply: r.reply })) : null,
    stored: { file: `examples/${at.file}`, made_by: main.made.by, threads: main.made.threads, cpu_seconds: main.made.cpu_seconds,
              wall_seconds: main.made.wall_seconds },
    finishedAt: null,
  };
  await api.show(record);
  $('papa-stored-note')?.scrollIntoView({ block: 'nearest' });
}

// "Verify by recomputing": the stored record's request runs again (on its model: modelsToRun) and is compared
// with it as a link's result is.
function verify(view, record) {
  const { api, ui } = view;
  const on = record.onPageModel ? null : record.modelRef.id;
  try {
    if (on) modelsToRun(state, view.ctx, on); // a model this page lacks is said before anything runs (the figures stay)
  } catch (e) {
    api.setError(`Verify: ${e.message}.`);
    return;
  }
  fromLink = compactResult(record.reply);
  recomputeOn = on;
  ui.verdict.textContent = `verifying: recomputing the stored result on ${record.modelLabel}; it is compared number by number when done.`;
  ui.verdict.className = 'verdict pending';
  api.run();
}

function storedNote(view, record) {
  const m = record.stored;
  const button = el('button', { id: 'papa-verify', type: 'button', text: 'Verify by recomputing' });
  button.addEventListener('click', () => verify(view, record));
  return el('p', { id: 'papa-stored-note', class: 'papa-stored', role: 'status' },
    el('strong', { text: 'Stored result' }),
    ` \u2014 not computed in this page: ${m.file}, made by ${m.made_by} with the page's request, natively on ${m.threads} ` +
    `thread${m.threads === 1 ? '' : 's'} in ${Math.round(m.wall_seconds)} s (engine ${record.reply.engine}, digest ` +
    `${record.reply.digest.slice(0, 19)}\u2026). `, button);
}

// What the examples take, from the stored records' measured times (never a promise without a measurement).
async function describeExamples(view, { exampleNote, storedSelect, storedRow }) {
  const names = withWeights(view).map((e) => e.id);
  const stored = await storedFor(view, 'compare-agreement');
  const what = `agreement on ${names.join(' and ')} (1,000 training examples, 5 seeds, probes trained 20 epochs), side by side: ` +
    'does the better model lose more when its heads are constant?';
  exampleNote.textContent = names.length < 2 ? `Only ${names[0] ?? 'no embedded model'} has weights here, so the example runs it alone.`
    : stored ? `Opens the stored results of ${what} They show at once; computing them took ${stored.map((e) => `${timeOf(e)} (${e.model})`).join(' and ')} natively.`
    : `Runs ${what} No measured time for these models: the progress bar gives the time left.`;
  const index = await exampleIndex();
  const ids = new Set(withWeights(view).map((e) => e.id));
  const listed = index.filter((e) => ids.has(e.model) && examples().some((x) => x.id === e.example && !x.compare));
  // rebuilt whenever a model loads: the user's choice stays chosen (a reset here opened another example)
  const chosen = storedSelect.value;
  storedSelect.replaceChildren(...listed.map((e) => new Option(`${taskName(e.task)} \u2014 ${e.model} (page preset; computed in ${timeOf(e)})`, e.file)));
  if (listed.some((e) => e.file === chosen)) storedSelect.value = chosen;
  storedRow.hidden = !listed.length;
  presetTimes = index.filter((e) => e.example === 'pos' && ids.has(e.model));
  view.api.refresh();
}

// Build controls: the examples' row above the panel's controls, the link box above the results, the task
// files' box, and Export CSV beside Export JSON.
function buildControls(view) {
  const exampleButton = el('button', { id: 'papa-example-compare', type: 'button',
                                       text: 'Example: compare the embedded models on subject-verb agreement' });
  const exampleNote = el('span', { class: 'note', id: 'papa-example-note' });
  const storedSelect = el('select', { id: 'papa-example-select', 'aria-label': 'stored example' });
  const storedOpen = el('button', { id: 'papa-example-open', type: 'button', text: 'Open' });
  const storedRow = el('p', { class: 'row papa-example', id: 'papa-examples', hidden: true },
                       el('label', { for: 'papa-example-select', text: 'Stored results, shown at once: ' }), storedSelect, storedOpen);
  const combinedFile = el('input', { id: 'papa-combined-file', type: 'file', accept: '.json' });
  const combinedRow = el('p', { class: 'row papa-example' },
                         el('label', { for: 'papa-combined-file', text: 'Open a combined result (combined.json of scripts/papa_sweep.sh): ' }), combinedFile);
  $('papa-heading').after(el('p', { class: 'row papa-example' }, exampleButton, ' ', exampleNote), storedRow, combinedRow);
  view.ui = linkBox('papa');
  $('papa-results').before(view.ui.box);
  view.askFiles = filesBox(view.ctx);
  const csv = el('button', { id: 'papa-export-csv', type: 'button', disabled: true, text: 'Export CSV' });
  $('papa-export-json').after(csv);
  return { exampleButton, exampleNote, storedSelect, storedOpen, storedRow, csv, combinedFile };
}

// Wire events: the examples' buttons (and their note, kept current as models load), Export CSV, the refresh
// that keeps a result to its model, and a setting changed before a link's recompute.
function wireEvents(view, parts) {
  const { ctx, api } = view;
  const { exampleButton, storedSelect, storedOpen, csv, combinedFile } = parts;
  // A combined result of many sweeps, from a file: its tables replace the results shown (papa_combined.js).
  combinedFile.addEventListener('change', async () => {
    const file = combinedFile.files?.[0];
    if (!file) return;
    try {
      const figures = combinedFigures(JSON.parse(await file.text()), file.name);
      api.setError('');
      $('papa-results').replaceChildren(...figures);
    } catch (e) {
      api.setError(e instanceof SyntaxError ? `${file.name} is not JSON: ${e.message}` : e.message);
    }
  });
  exampleButton.addEventListener('click', async () => {
    const stored = await storedFor(view, 'compare-agreement');
    if (stored) {
      await openStored(view, stored);
      return;
    }
    // no stored result for these models: every setting at its default but those of COMPARE_EXAMPLE, run
    setState({ ...valuesOf(COMPARE_EXAMPLE), ...NO_RESULT });
    api.controls.restore();
    api.refresh();
    api.run();
  });
  storedOpen.addEventListener('click', async () => {
    const entry = (await exampleIndex()).find((e) => e.file === storedSelect.value);
    if (entry) await openStored(view, [entry]);
  });
  ctx.on('models', () => { describeExamples(view, parts); });
  describeExamples(view, parts);
  csv.addEventListener('click', () => {
    if (!api.last) return;
    ctx.download('attnlab_papa.csv', new Blob([toCsv(api.last.reply, provenanceOf(api.last, currentLink(view)))], { type: 'text/csv' }));
  });
  const refresh = api.refresh;
  api.refresh = () => {
    refresh();
    csv.disabled = !api.last;
    // A result belongs to its model: another page model makes the link's result of the page's model stale (a
    // result that names its embedded model, papa_model, stays: the link still says which model to recompute on).
    const cur = ctx.models.current();
    if (api.last && cur && view.lastModelId && cur.modelId !== view.lastModelId && state.papa_result && !state.papa_model) {
      setState({ papa_result: null });
    }
  };
  ctx.on('models', api.refresh);
  // A setting changed before the recompute: the link's result no longer describes what will run.
  $('papa').addEventListener('change', (e) => {
    if (!fromLink || e.target.type === 'file') return;
    fromLink = null;
    recomputeOn = null;
    view.ui.verdict.textContent = 'from the link, but the settings have changed since: the next run is not compared with these numbers.';
  });
}

// Restore from a link: a link with a result opens on it, scrolled to and focused, with a line saying what it is;
// the recompute (autoRun) compares with it, on the embedded model the link names (papa_model) when it names one.
function restoreFromLink(view) {
  const { ui } = view;
  let checkModel = false;
  view.ctx.on('link', () => {
    fromLink = state.papa_result;
    recomputeOn = fromLink && state.papa_model ? state.papa_model : null;
    if (!fromLink && state.papa_model) setState({ papa_model: '' }); // names the model of no result
    checkModel = !!recomputeOn;
    ui.diffs.replaceChildren();
    if (fromLink) {
      const where = recomputeOn ? ` on ${recomputeOn}, the embedded model they were computed on (loaded beside the page\u2019s model)` : '';
      ui.shared.textContent = `You opened a shared PAPA result: its numbers are below. The page recomputes them${where} once the model ` +
        'is loaded and says whether every number reproduces.';
      ui.shared.hidden = false;
      ui.stored.replaceChildren(storedTable(fromLink));
      ui.verdict.textContent = `from the link: these numbers are the link\u2019s own; the page recomputes them${where} once the model is loaded.`;
      ui.verdict.className = 'verdict pending';
      ui.box.scrollIntoView({ block: 'start' });
      ui.box.focus({ preventScroll: true });
    }
  });
  // Once the page knows its embedded models (the first "models" after the link): a link naming a model this
  // page does not embed is said with the link's other problems, and its result is shown but not recomputed.
  view.ctx.on('models', () => {
    if (!checkModel) return;
    checkModel = false;
    try {
      modelsToRun(state, view.ctx, recomputeOn);
    } catch (e) {
      addLinkProblem(`papa_model: ${e.message} (ignored)`);
      ui.verdict.textContent = `from the link, not recomputed: ${e.message}.`;
      ui.verdict.className = 'verdict bad';
      fromLink = null;
      recomputeOn = null;
      setState(NO_RESULT);
    }
  });
}

function mount(ctx) {
  const view = { ctx, api: null, ui: null, askFiles: null, lastModelId: null };
  const api = mountComputePanel(panelDefinition(view), ctx);
  view.api = api;
  const parts = buildControls(view);
  wireEvents(view, parts);
  restoreFromLink(view);
  api.state = () => ({ fromLink, wanted: !!wanted });
  return api;
}

registerSection({ id: 'papa', label: 'PAPA', order: 50, title: 'How much the model needs input-dependent attention (constant heads)' });
registerPanel({ id: 'papa', order: 50, keys, mount });
