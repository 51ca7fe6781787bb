// papa_record.js: what a PAPA result keeps, shows and exports, without the DOM (node tests
// import it).
//   compactResult(reply, modelRef)  the summary a link carries (state key papa_result): the digest, the
//                                   hashes and every number the digest covers except the MLM accuracies
//   compareResult(stored, reply)    after a recompute: identical, or where the numbers differ
//   describeConfig(config, nHeads)  a configuration for people ("8 of 16 heads constant (average, λ order)")
//   seriesOf(reply, key)            the score-vs-fraction lines: one per (order, constant kind)
//   toCsv(reply, provenance)        one row per configuration, provenance as leading # lines
//   metricRange(metric)             the values a metric can take (score axes stay inside them)
//   provenanceOf(...)               what every export carries (provenance.js: engine, model, link; here the
//                                   hashes, the configuration as the page set it, the digest)
//   storedReply(stored)             a link's summary as the parts of a reply the table reads (configs from
//                                   their labels, summary with the drop), so both tables read alike

import { METRICS } from './engine_tables.js';
import { plainSettings, provenance } from './provenance.js';

export const RESULT_VERSION = 1;
const HASH = /^sha256:[0-9a-f]{64}$/;
const MAX_CONFIGS = 2000;

const num = (x) => typeof x === 'number' && Number.isFinite(x);
const numOrNull = (x) => x === null || num(x);

// Why a stored result (from a link) is refused, or null.
export function checkResult(r) {
  if (r === null) return null;
  if (typeof r !== 'object' || Array.isArray(r)) return 'expected an object';
  if (r.v !== RESULT_VERSION) return `made by another version of the page (result v${r.v})`;
  for (const k of ['digest', 'model', 'task']) if (typeof r[k] !== 'string' || !HASH.test(r[k])) return `${k}: not a sha256:… hash`;
  if (typeof r.engine !== 'string' || r.engine.length > 40) return 'engine: not a version';
  if (!Array.isArray(r.labels) || r.labels.length > MAX_CONFIGS || r.labels.some((l) => typeof l !== 'string' || l.length > 100)) {
    return 'labels: expected a list of configuration names';
  }
  const n = r.labels.length;
  if (!Array.isArray(r.mean) || r.mean.length !== n || !r.mean.every(numOrNull)) return 'mean: one number per configuration';
  if (!Array.isArray(r.ci95) || r.ci95.length !== n || !r.ci95.every(numOrNull)) return 'ci95: one number per configuration';
  if (!Array.isArray(r.mlm) || r.mlm.length !== n || !r.mlm.every(numOrNull)) return 'mlm: one number (or null) per configuration';
  if (!Array.isArray(r.runs) || r.runs.length !== n || !r.runs.every((row) => Array.isArray(row) && row.length <= 1000 && row.every(num))) {
    return 'runs: one list of scores per configuration';
  }
  if (!Array.isArray(r.lambdas) || r.lambdas.length > 1000 || !r.lambdas.every((row) => Array.isArray(row) && row.length <= 1000 && row.every(num))) {
    return 'lambdas: a layers x heads table';
  }
  if (typeof r.metric !== 'string' || r.metric.length > 40) return 'metric: a name';
  if (r.shape !== undefined && !(r.shape && Number.isSafeInteger(r.shape.n_layers) && Number.isSafeInteger(r.shape.n_heads) &&
                                 r.shape.n_layers > 0 && r.shape.n_heads > 0 && r.shape.n_layers * r.shape.n_heads <= 100000)) {
    return 'shape: {n_layers, n_heads}';
  }
  return null;
}

// The summary of a reply that a link carries.
export function compactResult(reply) {
  const runs = reply.configs.map(() => []);
  for (const run of reply.runs) runs[run.config][run.seed_index] = run.score;
  return {
    v: RESULT_VERSION,
    digest: reply.digest,
    engine: reply.engine,
    model: reply.hashes.model,
    task: reply.hashes.task,
    metric: reply.task.metric,
    shape: { n_layers: reply.shape.n_layers, n_heads: reply.shape.n_heads },
    labels: reply.configs.map((c) => c.label),
    mean: reply.summary.map((s) => s.mean),
    ci95: reply.summary.map((s) => s.ci95),
    mlm: reply.configs.map((c) => c.mlm_score ?? null),
    runs,
    lambdas: reply.lambdas ?? [],
  };
}

// The values a metric can take (the engine's metrics, src/methods/tasks/task.h): Matthews correlation from -1 to 1,
// the others (accuracies, F1s) from 0 to 1; null for anything else (the MLM score: a log-probability).
export function metricRange(metric) {
  const m = METRICS.get(metric); // the engine's metric table (engine_tables.js): Matthews correlation -1..1, the rest 0..1
  return m ? { min: m.min, max: m.max } : null;
}

const fmtNum = (x) => (x === null || x === undefined ? 'none' : String(x));

// { identical, digest: {stored, now}, problems: [sentences], diffs: [{what, stored, now}] }.
// identical only when the digest and every stored value equal the recomputed ones exactly.
export function compareResult(stored, reply) {
  const now = compactResult(reply);
  const problems = [];
  const diffs = [];
  if (stored.model !== now.model) problems.push(`the model differs from the link's (${stored.model.slice(0, 19)}… there, ${now.model.slice(0, 19)}… here)`);
  if (stored.task !== now.task) problems.push(`the task differs from the link's (${stored.task.slice(0, 19)}… there, ${now.task.slice(0, 19)}… here)`);
  if (stored.digest !== now.digest) problems.push(`the digest differs: ${stored.digest} in the link, ${now.digest} now`);
  if (stored.engine !== now.engine) problems.push(`engine ${stored.engine} made the link, this page runs ${now.engine}`);
  const index = new Map(now.labels.map((l, i) => [l, i]));
  stored.labels.forEach((label, i) => {
    const j = index.get(label);
    if (j === undefined) {
      diffs.push({ what: `${label}: not in the recomputed result`, stored: fmtNum(stored.mean[i]), now: 'none' });
      return;
    }
    if (stored.mean[i] !== now.mean[j]) diffs.push({ what: `${label}: mean score`, stored: stored.mean[i], now: now.mean[j] });
    if (stored.ci95[i] !== now.ci95[j]) diffs.push({ what: `${label}: 95% interval`, stored: stored.ci95[i], now: now.ci95[j] });
    if (stored.mlm[i] !== now.mlm[j]) diffs.push({ what: `${label}: MLM score`, stored: fmtNum(stored.mlm[i]), now: fmtNum(now.mlm[j]) });
    const a = stored.runs[i];
    const b = now.runs[j];
    for (let s = 0; s < Math.max(a.length, b.length); s++) {
      if (a[s] !== b[s]) diffs.push({ what: `${label}: seed #${s + 1} score`, stored: fmtNum(a[s]), now: fmtNum(b[s]) });
    }
  });
  for (const label of now.labels) if (!stored.labels.includes(label)) diffs.push({ what: `${label}: not in the link`, stored: 'none', now: 'computed' });
  const flatA = stored.lambdas.flat();
  const flatB = now.lambdas.flat();
  if (flatA.length !== flatB.length) diffs.push({ what: 'lambdas: table size', stored: flatA.length, now: flatB.length });
  else {
    const H = now.lambdas[0]?.length ?? 1;
    flatA.forEach((x, i) => {
      if (x !== flatB[i]) diffs.push({ what: `lambda of layer ${Math.floor(i / H)} head ${i % H}`, stored: x, now: flatB[i] });
    });
  }
  return { identical: !problems.length && !diffs.length, digest: { stored: stored.digest, now: now.digest }, problems, diffs };
}

const ORDER_NAMES = {
  lambda: '\u03bb order', first_to_last: 'first to last layer', last_to_first: 'last to first layer',
  random: 'random order', reversed_lambda: 'reversed \u03bb order', gradient: 'gradient-importance order',
};
export const orderName = (o) => ORDER_NAMES[o] ?? o;

export function describeConfig(c, nHeads) {
  if (c.what === 'right_pad') return 'all heads input-dependent, ordinary right padding';
  if (c.what === 'embeddings_only') return 'embeddings alone (no layers)';
  if (c.k === 0) return 'all heads input-dependent (full model)';
  if (c.k === nHeads || c.all) return `all ${nHeads ? `${nHeads} ` : ''}heads constant (${c.constant})`;
  return `${c.k} of ${nHeads ?? '?'} heads constant (${c.constant}, ${orderName(c.order)})`;
}

// A configuration from its label (the engine's al_papa_config_label: "full", "right_pad", "embeddings_only",
// "average all", "average k=24 lambda"), or a configuration that only has its label.
export function configOfLabel(label, nHeads) {
  if (label === 'right_pad' || label === 'embeddings_only') return { label, what: label };
  if (label === 'full') return { label, what: 'sweep', k: 0 };
  let m = /^(\w+) all$/.exec(label);
  if (m) return { label, what: 'sweep', k: nHeads ?? null, constant: m[1], all: true };
  m = /^(\w+) k=(\d+) (\w+)$/.exec(label);
  if (m) return { label, what: 'sweep', k: Number(m[2]), constant: m[1], order: m[3] };
  return { label, what: label };
}

// A stored summary (a link's papa_result) as the reply fields resultTable reads. The shape comes from the
// summary (links made before it was stored: from the lambdas table, when the sweep ranked the heads).
export function storedReply(stored) {
  const shape = stored.shape ?? (stored.lambdas.length ? { n_layers: stored.lambdas.length, n_heads: stored.lambdas[0].length } : null);
  const nHeads = shape ? shape.n_layers * shape.n_heads : null;
  const full = stored.labels.indexOf('full');
  const base = full >= 0 ? stored.mean[full] : null;
  return {
    shape: shape ?? { n_layers: null, n_heads: null },
    task: { metric: stored.metric },
    config: { seeds: new Array(stored.runs[0]?.length ?? 0).fill(null) },
    configs: stored.labels.map((label, i) => ({ ...configOfLabel(label, nHeads), mlm_score: stored.mlm[i] })),
    summary: stored.labels.map((_, i) => ({ n: stored.runs[i].length, mean: stored.mean[i], ci95: stored.ci95[i],
                                            drop: base && stored.mean[i] !== null ? 1 - stored.mean[i] / base : null })),
  };
}

// Lines of a score-vs-fraction figure: one per (order, constant kind) of the sweep, each with the full
// model at fraction 1 and the all-constant configuration of its kind at 0 (listed once in a reply).
//   key 'score': points {x: fraction kept, y: mean, lo, hi}; key 'mlm': {x, y: MLM score}.
export function seriesOf(reply, key = 'score') {
  const configs = reply.configs;
  const stat = (i) => reply.summary[i];
  const point = (i) => {
    const c = configs[i];
    if (key === 'mlm') return c.mlm_score === null || c.mlm_score === undefined ? null : { x: c.fraction_kept, y: c.mlm_score };
    const s = stat(i);
    return { x: c.fraction_kept, y: s.mean, lo: s.mean - s.ci95, hi: s.mean + s.ci95 };
  };
  const full = configs.findIndex((c) => c.what === 'sweep' && c.k === 0);
  const pairs = [];
  for (const c of configs) {
    if (c.what !== 'sweep' || !c.order || !c.constant) continue;
    if (!pairs.some((p) => p.order === c.order && p.constant === c.constant)) pairs.push({ order: c.order, constant: c.constant });
  }
  // A sweep with only the ends (fractions 1 and 0) still draws one line per constant kind it asked
  // for (the baselines' data-free matrices on all heads are single points: the table lists them).
  for (const c of configs) {
    if (c.what === 'sweep' && reply.config.constants.includes(c.constant) && !pairs.some((p) => p.constant === c.constant)) {
      pairs.push({ order: reply.config.orders[0], constant: c.constant });
    }
  }
  const manyOrders = new Set(pairs.map((p) => p.order)).size > 1;
  const manyKinds = new Set(pairs.map((p) => p.constant)).size > 1;
  return pairs.map((p) => {
    const idx = [];
    if (full >= 0) idx.push(full);
    configs.forEach((c, i) => {
      if (c.what !== 'sweep' || c.constant !== p.constant) return;
      if (c.order === p.order || !c.order) idx.push(i);
    });
    const points = idx.map(point).filter(Boolean).sort((a, b) => b.x - a.x);
    const label = [manyKinds || !manyOrders ? p.constant : null, manyOrders ? orderName(p.order) : null].filter(Boolean).join(', ');
    return { ...p, label: label || p.constant, points };
  }).filter((s) => s.points.length);
}

// One sweep's provenance (provenance.js). configuration: the engine's resolved options, its float32 settings
// printed as given (lr 0.0005) and the preset named as the page named it ("page" is the engine's "quick" on
// fewer examples: engine_preset); settings: the panel's values that differ from their defaults, as typed.
export function provenanceOf(record, link) {
  const r = record.reply;
  const configuration = plainSettings(r.config);
  if (record.preset && record.preset !== r.config.preset) {
    configuration.preset = record.preset;
    configuration.engine_preset = r.config.preset;
  }
  return provenance({
    engine: r.engine, link, made: record.finishedAt,
    model: { name: record.modelLabel, ref: record.modelRef, content_hash: r.hashes.model, shape: r.shape },
    task: { id: r.task.id, metric: r.task.metric, content_hash: r.hashes.task, files: record.taskFiles ?? null },
    configuration,
    settings: record.settings ?? null,
    digest: r.digest,
    ...(record.stored ? { stored: record.stored } : {}),
  });
}

function csvField(v) {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

// One row per configuration: what it is, its statistics, the MLM score and each seed's score.
export function toCsv(reply, provenance) {
  const nSeeds = reply.config.seeds.length;
  const nHeads = reply.shape.n_layers * reply.shape.n_heads;
  const lines = [
    `# attnlab PAPA sweep; engine ${provenance.engine}; digest ${provenance.digest}`,
    `# model: ${provenance.model.name ?? ''} (content ${provenance.model.content_hash})`,
    `# task: ${provenance.task.id} (${provenance.task.metric}; content ${provenance.task.content_hash})`,
    `# configuration: ${JSON.stringify(provenance.configuration)}`,
    `# link: ${provenance.link ?? '(none)'}`,
  ];
  const head = ['label', 'description', 'what', 'k', 'fraction_kept', 'constant', 'order', 'n', 'mean', 'sd', 'ci95',
                'relative_drop', 'mlm_score', 'mlm_accuracy', ...reply.config.seeds.map((s) => `score_seed_${s}`)];
  lines.push(head.join(','));
  const scores = reply.configs.map(() => new Array(nSeeds).fill(null));
  for (const run of reply.runs) scores[run.config][run.seed_index] = run.score;
  reply.configs.forEach((c, i) => {
    const s = reply.summary[i];
    lines.push([c.label, describeConfig(c, nHeads), c.what, c.k, c.fraction_kept, c.constant, c.order, s.n, s.mean, s.sd, s.ci95,
                s.drop, c.mlm_score, c.mlm_accuracy, ...scores[i]].map(csvField).join(','));
  });
  return `${lines.join('\n')}\n`;
}
