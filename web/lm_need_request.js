// lm_need_request.js: the state keys of the panel "how much does a language model need its attention"
// (docs/decoder-page.md) and the four requests one run makes: "papa" on a corpus (docs/papa-op.md, "A causal
// language model"), "layers" and "streaming" (docs/decoders.md) and "head_roles" (docs/measures.md); the result's
// summary a link carries and its comparison with a recompute. No DOM access: node tests import this module.
import { corpusKeys } from './lm_corpus.js';
import { CONSTANT_KINDS, HEAD_ORDERS, listOf, parseNumbers, parseWords } from './papa_request.js';

// The texts (lm_corpus.js: the importance panel on a decoder reads them by the same rule), as this module gave them.
export { BUILTIN_TEXTS, LINES_PER_DOCUMENT, builtinCorpus, corporaOf } from './lm_corpus.js';

// Why a stored result (the link's need_result, or the sweep in the importance panel's imp_result) is refused, or
// null: its form only; the numbers are compared.
export function checkSweep(r) {
  if (r.v !== 1) return 'unknown version';
  if (typeof r.digest !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(r.digest)) return 'no digest';
  for (const k of ['labels', 'bits', 'ci95']) if (!Array.isArray(r[k])) return `no ${k}`;
  return null;
}

export const NEED_KEYS = {
  ...corpusKeys('need'), // the two texts and the window L (lm_corpus.js)
  need_constants: { type: 'string', default: 'average,uniform', maxLength: 200, get pattern() { return listOf(CONSTANT_KINDS); } },
  need_orders: { type: 'string', default: 'lambda,gradient,random,first_to_last,last_to_first', maxLength: 200, get pattern() { return listOf(HEAD_ORDERS); } },
  need_fractions: { type: 'string', default: '', maxLength: 200, pattern: /^[\d., eE+-]*$/ },
  need_window: { type: 'int', default: 16, min: 1, max: 1 << 20 },
  need_sinks: { type: 'int', default: 4, min: 0, max: 1 << 20 },
  need_seqs: { type: 'int', default: 16, min: 1, max: 512 },
  need_seed: { type: 'int', default: 0, min: 0, max: 2147483647 },
  need_result: { type: 'object', default: null, check: checkSweep },
  // what the results show: all four measures, or the head roles beside PAPA's orders with what they say (the stored
  // head-roles example, web/lm_examples.js)
  need_view: { type: 'enum', default: 'all', values: ['all', 'roles'] },
};

// The sweep's fractions from a control's text: {fractions} when given, {} for the engine's default.
export function fractionsField(text) {
  return String(text).trim() ? { fractions: parseNumbers(text, 'Fractions kept', { min: 0, max: 1 }) } : {};
}

// The four requests of a run (the model's id in the worker, the texts from corporaOf).
export function needRequests(v, model, texts) {
  const papa = {
    model, corpus: texts.corpus, corpus_name: texts.corpus_name, constants_corpus: texts.constants_corpus,
    constants_corpus_name: texts.constants_corpus_name, L: v.need_L,
    constants: parseWords(v.need_constants, 'Constant matrices', CONSTANT_KINDS),
    orders: parseWords(v.need_orders, 'Head orders', HEAD_ORDERS),
    outputs: ['constants'],
  };
  Object.assign(papa, fractionsField(v.need_fractions));
  return {
    papa,
    layers: { model, corpus: texts.corpus, corpus_name: texts.corpus_name },
    streaming: { model, corpus: texts.corpus, corpus_name: texts.corpus_name, window: v.need_window, sinks: v.need_sinks },
    head_roles: { model, sequences: v.need_seqs, seed: v.need_seed, corpus: texts.corpus, corpus_name: texts.corpus_name },
  };
}

// The layers op's constants: PAPA's averaged matrices [NL, H, L, L] when they reach the layers op's windows (the
// model's positions), else every head uniform over its prefix (all ones, docs/decoders.md "Constant instead of
// gone"); none when the tensor would be larger than this (a GPT-2 small at 1,024 positions: 600 MB).
// The layers op's windows: the model's positions (the info reply's max_tokens), which its constants must reach.
export const layersWindow = (info) => info?.max_tokens ?? info?.config?.max_position_embeddings ?? 0;

export const LAYER_CONSTANTS_MAX_BYTES = 64 << 20;
export function layerConstants(papaTensor, shape, window) {
  const { n_layers: NL, n_heads: H } = shape;
  if (papaTensor && papaTensor.shape[2] >= window) return { kind: 'average', tensor: { shape: papaTensor.shape, data: papaTensor.data } };
  const n = NL * H * window * window;
  if (4 * n > LAYER_CONSTANTS_MAX_BYTES) return { kind: null, why: `${NL} \u00d7 ${H} heads over ${window} positions would take ${Math.round(4 * n / 2 ** 20)} MB` };
  return { kind: 'uniform', tensor: { shape: [NL, H, window, window], data: new Float32Array(n).fill(1) } };
}

const bitsOf = (run) => run.summary.bits_per_token;

// The sweep's part of a link's summary (the importance panel on a decoder keeps it alone): its digest, hashes, and
// every configuration's bits per token and interval.
export function compactSweep(papa) {
  return {
    v: 1, digest: papa.digest, engine: papa.engine, hashes: papa.hashes, shape: papa.shape,
    labels: papa.configs.map((c) => c.label), bits: papa.summary.map((s) => s.mean), ci95: papa.summary.map((s) => s.ci95),
  };
}

// The summary a link carries (state key need_result): every number the panel draws that a recompute must equal.
export function compactNeed(rec) {
  const { papa, layers, streaming, roles } = rec;
  return {
    ...compactSweep(papa),
    layers: layers ? { order: layers.order, dropped: layers.dropped.map(bitsOf), alone: (layers.alone ?? []).map(bitsOf),
                       constant: (layers.constant ?? []).map(bitsOf) } : null,
    streaming: streaming ? { window: streaming.window, sinks: streaming.sinks,
                             bits: ['full', 'window', 'window_sinks'].map((k) => bitsOf(streaming.runs[k])) } : null,
    roles: roles ? roles.digest : null,
  };
}

// The sweep's part of a comparison (stored and now: compactSweep's fields): {problems, diffs, same(what, a, b)}, the
// last to compare more.
export function compareSweep(stored, now) {
  const problems = [];
  const diffs = [];
  if (stored.hashes?.model !== now.hashes?.model) problems.push('the model differs (content hash)');
  if (stored.hashes?.corpus !== now.hashes?.corpus) problems.push('the held-out text differs (content hash)');
  if (stored.hashes?.constants_corpus !== now.hashes?.constants_corpus) problems.push('the constants\u2019 text differs (content hash)');
  if (stored.digest !== now.digest) problems.push('the PAPA digest differs');
  const same = (what, a, b) => {
    if (JSON.stringify(a) === JSON.stringify(b)) return;
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) diffs.push({ what, stored: JSON.stringify(a), now: JSON.stringify(b) });
    else a.forEach((x, i) => { if (x !== b[i]) diffs.push({ what: `${what} ${i}`, stored: x, now: b[i] }); });
  };
  same('configurations', stored.labels, now.labels);
  stored.labels.forEach((label, i) => {
    const j = now.labels.indexOf(label);
    if (j < 0) return;
    if (stored.bits[i] !== now.bits[j]) diffs.push({ what: `${label}: bits per token`, stored: stored.bits[i], now: now.bits[j] });
    if (stored.ci95[i] !== now.ci95[j]) diffs.push({ what: `${label}: 95% interval`, stored: stored.ci95[i], now: now.ci95[j] });
  });
  return { problems, diffs, same };
}

// {identical, digest, problems, diffs} as result_link.js's showVerdict reads it.
export function compareNeed(stored, now) {
  const { problems, diffs, same } = compareSweep(stored, now);
  for (const k of ['order', 'dropped', 'alone', 'constant']) same(`layers: ${k}`, stored.layers?.[k], now.layers?.[k]);
  same('streaming', stored.streaming, now.streaming);
  if (stored.roles !== now.roles) diffs.push({ what: 'head roles digest', stored: stored.roles, now: now.roles });
  return { identical: !problems.length && !diffs.length, digest: { stored: stored.digest, now: now.digest }, problems, diffs };
}
