// papa_request.js: the PAPA panel's state keys and the "papa" request they make (every field is
// described in docs/papa-op.md). No DOM access: node tests import this module. The built-in tasks
// are the engine's (engine_tables.js), filled before a link is read or a request is built.
import { BUILTIN_TASKS, fieldNames, opField } from './engine_tables.js';
//
// Lists (constant kinds, head orders, fractions, seeds) live in the page state as comma-separated
// text, so a link stays short and readable; hyper-parameters left at their "preset" value (blank
// fields, -1 or 0 below) are not sent, and the engine fills them from the preset.

export { BUILTIN_TASKS };
// The constant kinds and head orders are the papa op's (src/methods/papa/, as the "version" reply publishes its
// fields: engine_tables.js), filled in place when the engine's tables arrive. Head order 'gradient': ascending
// gradient head importance; with the 'zeros' constant, the pruning curve (docs/importance.md).
export const CONSTANT_KINDS = fieldNames('papa', 'constants');
export const HEAD_ORDERS = fieldNames('papa', 'orders');
// A papa field's range as the engine declares it ({} before the tables arrive: no bound).
const rangeOf = (field) => ({ min: opField('papa', field)?.min, max: opField('papa', field)?.max });
export const IMPORT_FORMATS = ['auto', 'cola', 'sst2', 'mrpc', 'mnli', 'rte', 'qnli', 'qqp', 'conll2003', 'csv', 'jsonl'];
export const DELIMITERS = { comma: ',', semicolon: ';', tab: '\t' };

// The page preset: the engine's quick preset with fewer examples, so a full sweep (5 fractions x 3
// seeds plus the lambda ranking) fits in the browser's time budget on one thread. Measured figures
// are in docs/papa-page.md.
export const PAGE_PRESET = { base: 'quick', max_train: 300, max_validation: 150, ranking: { max_examples: 300 } };
export const PRESETS = {
  page: `page: the quick preset on ${PAGE_PRESET.max_train} training and ${PAGE_PRESET.max_validation} validation ` +
        `examples (lambda ranking on ${PAGE_PRESET.ranking.max_examples}), sized for the browser`,
  quick: 'quick: 1,000 training and 400 validation examples, probe 4 epochs, ranking 2 epochs (docs/papa-op.md)',
  paper: 'paper: the paper\'s settings on every example (slow: meant for the command line or a cluster)',
};

export const listOf = (words) => new RegExp(`^(${words.join('|')})(,(${words.join('|')}))*$`);
const NUMBER_LIST = /^\s*-?[\d.eE+-]+(\s*,\s*-?[\d.eE+-]+)*\s*$/;
const NAME = /^[^\n\r]{0,100}$/;
const FILE_ENTRY = ['name', 'size', 'sha256'];

// Why a task-files record ({train, validation?}: {name, size, sha256}) is refused, or null.
function checkFiles(f) {
  for (const [part, entry] of Object.entries(f)) {
    if (part !== 'train' && part !== 'validation') return `unknown part "${part}"`;
    if (!entry || typeof entry !== 'object' || Object.keys(entry).some((k) => !FILE_ENTRY.includes(k))) {
      return `${part}: expected {name, size, sha256}`;
    }
    if (typeof entry.name !== 'string' || !/^[^/\\\n]{1,200}$/.test(entry.name)) return `${part}: the name is not a file name`;
    if (!Number.isSafeInteger(entry.size) || entry.size < 0) return `${part}: the size is not a byte count`;
    if (typeof entry.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(entry.sha256)) return `${part}: the SHA-256 is not 64 hex digits`;
  }
  return f.train ? null : 'no train file';
}

// Which models one run covers: the page's model, or it and every embedded model with weights, the
// same request on each (the PAPA paper's comparison: does the better model lose more?).
export const MODEL_SCOPES = [['current', 'this model'], ['embedded', 'this model and every embedded model']];

// The panel's first example: the embedded models side by side on one built-in task, with the page
// preset. Every other setting goes back to its default (docs/papa-page.md, "Comparing models").
// The panel's first example (docs/papa-page.md, "Comparing models"): both embedded models on agreement, with
// enough examples, seeds and probe epochs that a drop of about 2% stands outside the seed-to-seed intervals
// (at the page preset's 300 examples and 4 epochs the intervals are several points wide); orders random only,
// so no ranking is trained, and three fractions.
export const COMPARE_EXAMPLE = {
  papa_task: 'agreement', papa_models: 'embedded', papa_preset: 'quick', papa_orders: 'random', papa_fractions: '1,0.5,0',
  papa_seeds: '1,2,3,4,5', papa_epochs: 20,
};

// The stored examples (web/examples/, made by scripts/make_examples.mjs): every built-in task at the
// page's defaults, and the first example's request, each on every embedded model with weights. patch: the
// state keys that differ from their defaults (papa_models stays "current": a record is one model's reply).
const { papa_models: _scope, ...COMPARE_SETTINGS } = COMPARE_EXAMPLE;
export const examples = () => [
  ...BUILTIN_TASKS.map(([task]) => ({ id: task, patch: { papa_task: task } })),
  { id: 'compare-agreement', patch: COMPARE_SETTINGS, compare: true },
];
export const exampleFile = (id, model) => `${id}-${model}.json`;

// The state values of some settings: every PAPA key at its default, then the patch.
export function valuesOf(patch) {
  const v = {};
  for (const [name, spec] of Object.entries(PAPA_KEYS)) v[name] = spec.default;
  return { ...v, ...patch };
}

export const PAPA_KEYS = {
  papa_models: { type: 'enum', default: 'current', values: MODEL_SCOPES.map(([id]) => id) },
  papa_task: { type: 'enum', default: 'pos', get values() { return [...BUILTIN_TASKS.map(([id]) => id), 'file']; } },
  papa_files: { type: 'object', default: null, check: checkFiles },
  papa_fmt: { type: 'enum', default: 'auto', values: IMPORT_FORMATS },
  papa_text_col: { type: 'string', default: 'text', maxLength: 100, pattern: NAME },
  papa_pair_col: { type: 'string', default: '', maxLength: 100, pattern: NAME },
  papa_label_col: { type: 'string', default: 'label', maxLength: 100, pattern: NAME },
  papa_conll_col: { type: 'enum', default: 'ner', values: ['ner', 'pos', 'chunk'] },
  papa_delim: { type: 'enum', default: 'comma', values: Object.keys(DELIMITERS) },
  papa_skip: { type: 'bool', default: true },
  papa_vfrac: { type: 'int', default: 20, min: 1, max: 90 },
  papa_constants: { type: 'string', default: 'average', maxLength: 100, get pattern() { return listOf(CONSTANT_KINDS); } },
  papa_orders: { type: 'string', default: 'lambda', maxLength: 200, get pattern() { return listOf(HEAD_ORDERS); } },
  papa_fractions: { type: 'string', default: '1,0.5,0.125,0.0625,0', maxLength: 300, pattern: NUMBER_LIST },
  papa_seeds: { type: 'string', default: '1,2,3', maxLength: 200, pattern: NUMBER_LIST },
  papa_preset: { type: 'enum', default: 'page', values: Object.keys(PRESETS) },
  papa_L: { type: 'int', default: 0, min: 0, max: 512 },
  papa_train: { type: 'int', default: -1, min: -1, max: 10000000 },
  papa_val: { type: 'int', default: -1, min: -1, max: 10000000 },
  papa_epochs: { type: 'int', default: 0, min: 0, get max() { return rangeOf('probe.epochs').max; } },
  papa_batch: { type: 'int', default: 0, min: 0, get max() { return rangeOf('probe.batch_size').max; } },
  papa_lr: { type: 'string', default: '', maxLength: 30, pattern: /^(|\d*\.?\d+([eE]-?\d+)?)$/ },
  papa_rank_epochs: { type: 'int', default: 0, min: 0, get max() { return rangeOf('ranking.epochs').max; } },
  papa_rank_n: { type: 'int', default: -1, min: -1, max: 10000000 },
  papa_baselines: { type: 'bool', default: true },
  papa_mlm: { type: 'bool', default: true },
};

export class RequestError extends Error {}

// "1, 0.5,0" -> numbers, each checked; the message names the field for the user.
export function parseNumbers(text, what, { min = -Infinity, max = Infinity, integer = false } = {}) {
  const parts = String(text).split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (!parts.length) throw new RequestError(`${what}: give at least one value`);
  const out = [];
  for (const p of parts) {
    const n = Number(p);
    if (!Number.isFinite(n) || (integer && !Number.isInteger(n)) || n < min || n > max) {
      throw new RequestError(`${what}: "${p}" is not ${integer ? 'a whole number' : 'a number'} from ${min} to ${max}`);
    }
    if (out.includes(n)) throw new RequestError(`${what}: ${p} is given twice`);
    out.push(n);
  }
  return out;
}

export function parseWords(text, what, allowed) {
  const out = String(text).split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (!out.length) throw new RequestError(`${what}: choose at least one`);
  for (const w of out) if (!allowed.includes(w)) throw new RequestError(`${what}: "${w}" is not one of ${allowed.join(', ')}`);
  return [...new Set(out)];
}

// The import options of the request (docs/papa-op.md "import"), without the file texts.
export function importOptions(v) {
  const o = { format: v.papa_fmt, skip_bad_rows: v.papa_skip };
  if (['auto', 'csv', 'jsonl'].includes(v.papa_fmt)) {
    o.text_column = v.papa_text_col || 'text';
    if (v.papa_pair_col) o.text_pair_column = v.papa_pair_col;
    o.label_column = v.papa_label_col || 'label';
  }
  if (['auto', 'conll2003'].includes(v.papa_fmt)) o.conll_column = v.papa_conll_col;
  if (['auto', 'csv'].includes(v.papa_fmt)) o.delimiter = DELIMITERS[v.papa_delim];
  return o;
}

// The "papa" request from the panel's values. task: { jsonl } for a built-in task (its file's text),
// or { train, trainName, validation?, validationName? } for the user's files.
export function buildRequest(v, modelId, task) {
  const args = {
    model: modelId,
    preset: v.papa_preset === 'page' ? PAGE_PRESET.base : v.papa_preset,
    constants: parseWords(v.papa_constants, 'Constant matrices', CONSTANT_KINDS),
    orders: parseWords(v.papa_orders, 'Head orders', HEAD_ORDERS),
    fractions: parseNumbers(v.papa_fractions, 'Fractions of input-dependent heads', rangeOf('fractions')),
    seeds: parseNumbers(v.papa_seeds, 'Seeds', { ...rangeOf('seeds'), integer: true }),
    baselines: v.papa_baselines,
    mlm: v.papa_mlm,
    outputs: ['constants'],
  };
  if (v.papa_preset === 'page') {
    args.max_train = PAGE_PRESET.max_train;
    args.max_validation = PAGE_PRESET.max_validation;
    args.ranking = { ...PAGE_PRESET.ranking };
  }
  if (v.papa_task === 'file') {
    const imp = { ...importOptions(v), train: task.train, train_name: task.trainName };
    if (task.validation !== undefined) {
      imp.validation = task.validation;
      imp.validation_name = task.validationName;
    } else {
      imp.validation_fraction = v.papa_vfrac / 100;
    }
    args.import = imp;
  } else {
    args.task = v.papa_task;
    args.task_jsonl = task.jsonl;
  }
  if (v.papa_L > 0) args.L = v.papa_L;
  if (v.papa_train >= 0) args.max_train = v.papa_train;
  if (v.papa_val >= 0) args.max_validation = v.papa_val;
  const probe = {};
  if (v.papa_epochs > 0) probe.epochs = v.papa_epochs;
  if (v.papa_batch > 0) probe.batch_size = v.papa_batch;
  if (v.papa_lr !== '') {
    const lr = Number(v.papa_lr);
    const { max = Infinity } = rangeOf('probe.lr');
    if (!(lr > 0 && lr < max)) throw new RequestError(`Learning rate: "${v.papa_lr}" is not a rate between 0 and ${max}`);
    probe.lr = lr;
  }
  if (Object.keys(probe).length) args.probe = probe;
  const ranking = { ...(args.ranking ?? {}) };
  if (v.papa_rank_epochs > 0) ranking.epochs = v.papa_rank_epochs;
  if (v.papa_rank_n >= 0) ranking.max_examples = v.papa_rank_n;
  if (Object.keys(ranking).length) args.ranking = ranking;
  return args;
}

// The same request for the command line: `attnlab run FILE` with the model's folder (what a reader
// of an export reruns natively).
export function cliRequest(args, modelDir) {
  const { model, outputs, ...rest } = args;
  return { op: 'papa', model_dir: modelDir, ...rest };
}
