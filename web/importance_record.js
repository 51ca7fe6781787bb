// importance_record.js: the importance panel's requests and what its result keeps, shows and exports,
// without the DOM (node tests import it). The panel makes two requests (docs/importance.md):
//   head_agreement  every measure's layers x heads grid, their Spearman correlations, the overlap of the
//                   heads each calls least important and the one-sentence finding;
//   papa            the pruning curve on the PAPA curve's axes: head orders lambda and gradient, constants
//                   average and zeros, in one sweep ("Pruning curve").
// Both take the PAPA panel's settings (papa_request.js buildRequest: preset, examples, L, probe, ranking,
// seeds, fractions), so one request rule serves both panels; the importance panel adds its task, the
// measures' example count and k. On a causal language model both read a corpus instead (docs/agreement.md and
// docs/papa-op.md, "A causal language model"): the texts and the window as the language-model panel takes them
// (lm_corpus.js, keys imp_src ... imp_L), the sweep scored by the model's next-token loss in bits per token
// (lmCurveRequest), and the result keeps the sweep as that panel does (lm_need_request.js compactSweep).
//   compactImportance(agree, curve)    the summary a link carries (state key imp_result): both digests and
//                                      every number drawn (the curve's as papa_record.js keeps it)
//   checkImportance(r)                 why a link's summary is refused, or null
//   compareImportance(stored, a, c)    after a recompute: identical, or where the numbers differ (one
//                                      comparison, result_link.js shows it as PAPA's)
//   importanceProvenance(record, link) what every export carries (papa_record.js provenanceOf, plus the
//                                      agreement's digest and configuration; on a corpus the texts' names and
//                                      hashes in place of the task)
//   lmCurveRequest(v, model, texts)    the pruning curve on a causal language model's corpus
//   curveSeries(curve)                 the two lines: constant heads in the lambda order, removed heads in
//                                      the gradient order
//   importanceCsv(agree, curve, prov)  per head every measure, then the correlations, the overlap, the curve
import { BUILTIN_TASKS } from './engine_tables.js';
import { corpusKeys } from './lm_corpus.js';
import { checkSweep, compactSweep, compareSweep, fractionsField } from './lm_need_request.js';
import { PAPA_KEYS, buildRequest, valuesOf } from './papa_request.js';
import { checkResult, compactResult, compareResult, orderName, provenanceOf, seriesOf } from './papa_record.js';
import { plainSettings, provenance } from './provenance.js';
import { joinComparisons } from './result_link.js';

export const IMPORTANCE_VERSION = 1;
export const CURVE = { orders: 'lambda,gradient', constants: 'average,zeros' };
const HASH = /^sha256:[0-9a-f]{64}$/;

const num = (x) => typeof x === 'number' && Number.isFinite(x);
const numOrNull = (x) => x === null || num(x);
const table = (t, rows, cols, ok) => Array.isArray(t) && t.length <= rows && t.every((r) => Array.isArray(r) && r.length <= cols && r.every(ok));

export function checkImportance(r) {
  if (r === null) return null;
  if (typeof r !== 'object' || Array.isArray(r)) return 'expected an object';
  if (r.v !== IMPORTANCE_VERSION) return `made by another version of the page (result v${r.v})`;
  if (typeof r.digest !== 'string' || !HASH.test(r.digest)) return 'digest: not a sha256:… hash';
  if (!Array.isArray(r.ids) || r.ids.length > 40 || r.ids.some((id) => typeof id !== 'string' || !/^\w{1,40}$/.test(id))) return 'ids: measure names';
  const M = r.ids.length;
  if (!Array.isArray(r.grids) || r.grids.length !== M || !r.grids.every((g) => table(g, 1000, 1000, numOrNull))) return 'grids: a layers x heads table per measure';
  if (!table(r.spearman, M, M, numOrNull) || r.spearman.length !== M) return 'spearman: one row per measure';
  if (!Number.isSafeInteger(r.k) || r.k < 0) return 'k: a head count';
  if (!Array.isArray(r.least) || r.least.length !== M || !r.least.every((l) => table(l, 100000, 2, Number.isSafeInteger))) {
    return 'least: the least important heads of each measure';
  }
  if (typeof r.finding !== 'string' || r.finding.length > 2000) return 'finding: a sentence';
  if (r.lm !== undefined && r.lm !== true) return 'lm: true (a language model\u2019s sweep) or absent';
  if (r.lm && (!r.curve || typeof r.curve !== 'object' || Array.isArray(r.curve))) return 'curve: missing';
  const curve = r.lm ? checkSweep(r.curve) : checkResult(r.curve);
  return curve ? `curve: ${curve}` : (r.curve ? null : 'curve: missing');
}

// Whether a papa reply is a language model's sweep on a corpus (scored in bits per token), not a task's probes.
export const isCorpusSweep = (curve) => !!curve.hashes?.corpus;

export function compactImportance(agree, curve) {
  const ids = agree.measures.map((m) => m.id);
  const lm = isCorpusSweep(curve);
  return {
    v: IMPORTANCE_VERSION,
    ...(lm ? { lm: true } : {}),
    digest: agree.digest,
    ids,
    grids: ids.map((id) => agree.grids[id]),
    spearman: agree.spearman,
    k: agree.least.k,
    least: ids.map((id) => agree.least.heads[id]),
    finding: agree.finding,
    curve: lm ? compactSweep(curve) : compactResult(curve),
  };
}

const show = (x) => (x === null || x === undefined ? 'none' : String(x));

export function compareImportance(stored, agree, curve) {
  const now = compactImportance(agree, curve);
  const problems = [];
  const diffs = [];
  if (stored.digest !== now.digest) problems.push(`the measures' digest differs: ${stored.digest} in the link, ${now.digest} now`);
  if (stored.ids.join() !== now.ids.join()) problems.push(`the measures differ (${stored.ids.join(', ')} in the link, ${now.ids.join(', ')} now)`);
  now.ids.forEach((id, m) => {
    const s = stored.ids.indexOf(id);
    if (s < 0) return;
    const a = stored.grids[s].flat();
    const b = now.grids[m].flat();
    const H = now.grids[m][0]?.length ?? 1;
    if (a.length !== b.length) diffs.push({ what: `${id}: grid size`, stored: a.length, now: b.length });
    else a.forEach((x, i) => { if (x !== b[i]) diffs.push({ what: `${id} of layer ${Math.floor(i / H)} head ${i % H}`, stored: show(x), now: show(b[i]) }); });
    now.ids.forEach((other, o) => {
      const so = stored.ids.indexOf(other);
      if (so >= 0 && stored.spearman[s][so] !== now.spearman[m][o]) {
        diffs.push({ what: `Spearman ${id} / ${other}`, stored: show(stored.spearman[s][so]), now: show(now.spearman[m][o]) });
      }
    });
    if (JSON.stringify(stored.least[s]) !== JSON.stringify(now.least[m])) {
      diffs.push({ what: `${id}: the ${now.k} least important heads`, stored: JSON.stringify(stored.least[s]), now: JSON.stringify(now.least[m]) });
    }
  });
  const mine = { identical: !problems.length && !diffs.length, digest: { stored: stored.digest, now: now.digest }, problems, diffs };
  if (!stored.lm !== !now.lm) {
    problems.push(`the link\u2019s curve is ${stored.lm ? 'a language model\u2019s' : 'a task\u2019s'}, this one is not`);
    return { ...mine, identical: false };
  }
  if (now.lm) {
    const { problems: p, diffs: d } = compareSweep(stored.curve, now.curve);
    return joinComparisons(mine, { identical: !p.length && !d.length, digest: { stored: stored.curve.digest, now: now.curve.digest }, problems: p, diffs: d });
  }
  return joinComparisons(mine, compareResult(stored.curve, curve));
}

// The pruning curve's request: the PAPA panel's settings (state), this panel's task, the curve's orders and
// constants, no baselines, and no constants tensor back.
export function curveRequest(state, modelId, jsonl) {
  const papa = Object.fromEntries(Object.keys(PAPA_KEYS).map((k) => [k, state[k]]));
  const v = { ...valuesOf(papa), papa_task: state.imp_task, papa_files: null, papa_models: 'current',
              papa_orders: CURVE.orders, papa_constants: CURVE.constants, papa_baselines: false };
  const { outputs, ...args } = buildRequest(v, modelId, { jsonl });
  return args;
}

// The pruning curve on a causal language model: the two texts and the window (lm_corpus.js corporaOf with the
// keys imp_*), the curve's orders and constants, the fractions (the engine's when not given), no baselines.
export function lmCurveRequest(v, model, texts) {
  return { model, ...texts, L: v.imp_L, constants: CURVE.constants.split(','), orders: CURVE.orders.split(','),
           ...fractionsField(v.imp_fractions), baselines: false };
}

// The head_agreement request: the curve's task (or corpus) fields and settings as head_importance takes them,
// plus the measures' example count and k. On a corpus the gradient's windows stay the sweep's
// (ranking.max_examples: docs/agreement.md), so its grid is the curve's gradient order.
export function agreementRequest(curve, v) {
  const { constants, orders, fractions, seeds, baselines, mlm, ...rest } = curve;
  return { ...rest, ...('corpus' in rest ? {} : { max_examples: v.imp_examples }), least_k: v.imp_least_k };
}

export const IMPORTANCE_KEYS = {
  // a built-in task (the engine's list, engine_tables.js, filled before a link is read)
  imp_task: { type: 'string', default: 'pos', maxLength: 40, pattern: /^\w{1,40}$/,
              check: (v) => (BUILTIN_TASKS.length && !BUILTIN_TASKS.some(([id]) => id === v) ? 'not a built-in task' : null) },
  imp_examples: { type: 'int', default: 1000, min: 1, max: 10000000 },
  imp_least_k: { type: 'int', default: 4, min: 1, max: 100000 },
  imp_result: { type: 'object', default: null, check: checkImportance },
  // on a causal language model: the held-out text scored, the constants' text, the window L (lm_corpus.js, the
  // language-model panel's choices and defaults) and the sweep's fractions ('' for the engine's)
  ...corpusKeys('imp'),
  imp_fractions: { type: 'string', default: '', maxLength: 200, pattern: /^[\d., eE+-]*$/ },
};

// The two lines drawn on the PAPA curve's axes (seriesOf's other pairs, crossed, stay in the table).
export function curveSeries(curve) {
  const want = [{ order: 'lambda', constant: 'average', label: 'PAPA: heads constant (average), \u03bb order' },
                { order: 'gradient', constant: 'zeros', label: 'pruning: heads removed (zeros), gradient order' }];
  const all = seriesOf(curve, 'score');
  return want.map((w) => {
    const s = all.find((x) => x.order === w.order && x.constant === w.constant);
    return s && { ...s, label: w.label };
  }).filter(Boolean);
}

export function importanceProvenance(record, link) {
  if (isCorpusSweep(record.curve)) return lmProvenance(record, link);
  const p = provenanceOf({ ...record, reply: record.curve }, link);
  return { ...p, digest: record.reply.digest, curve_digest: record.curve.digest,
           agreement_configuration: plainSettings(record.reply.config ?? null) };
}

// A language model's run: the texts by name and content hash in place of the task.
function lmProvenance(record, link) {
  const r = record.curve;
  return provenance({
    engine: r.engine, link, made: record.finishedAt,
    model: { name: record.modelLabel, ref: record.modelRef, content_hash: r.hashes.model, shape: r.shape },
    corpus: { name: r.config.corpus_name, content_hash: r.hashes.corpus, constants_name: record.reply.config?.constants_corpus_name ?? null,
              constants_content_hash: r.hashes.constants_corpus, score: r.score?.name ?? 'bits_per_token' },
    configuration: plainSettings(r.config),
    settings: record.settings ?? null,
    digest: record.reply.digest, curve_digest: r.digest,
    agreement_configuration: plainSettings(record.reply.config ?? null),
  });
}

function csvField(v) {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
const row = (cells) => cells.map(csvField).join(',');

export function importanceCsv(agree, curve, prov) {
  const ids = agree.measures.map((m) => m.id);
  const lines = [
    `# attnlab head importance and agreement; engine ${prov.engine}; digest ${prov.digest}; pruning curve digest ${prov.curve_digest}`,
    `# model: ${prov.model?.name ?? ''} (content ${prov.model?.content_hash ?? ''})`,
    prov.corpus ? `# held-out text: ${prov.corpus.name} (content ${prov.corpus.content_hash}); constants' text: ` +
      `${prov.corpus.constants_name ?? ''} (content ${prov.corpus.constants_content_hash})`
      : `# task: ${prov.task?.id ?? ''} (${prov.task?.metric ?? ''}; content ${prov.task?.content_hash ?? ''})`,
    `# finding: ${agree.finding}`,
    `# link: ${prov.link ?? '(none)'}`,
    '# heads: every measure per layer and head',
    row(['layer', 'head', ...ids]),
  ];
  const grid = agree.grids[ids[0]];
  grid.forEach((r, l) => r.forEach((_, h) => lines.push(row([l, h, ...ids.map((id) => agree.grids[id][l][h])]))));
  lines.push('# spearman rank correlation between the measures', row(['measure', ...ids]));
  ids.forEach((id, m) => lines.push(row([id, ...agree.spearman[m]])));
  lines.push(`# overlap of the ${agree.least.k} least important heads`, row(['measure', ...ids]));
  ids.forEach((id, m) => lines.push(row([id, ...agree.least.overlap[m]])));
  lines.push(prov.corpus ? '# pruning curve and PAPA curve (bits per token over the held-out documents, lower is better; 95% interval)'
    : '# pruning curve and PAPA curve (mean score over the seeds, 95% interval)', row(['order', 'constant', 'fraction_kept', 'mean', 'ci95']));
  for (const s of seriesOf(curve, 'score')) for (const p of s.points) lines.push(row([orderName(s.order), s.constant, p.x, p.y, p.hi - p.y]));
  return `${lines.join('\n')}\n`;
}
