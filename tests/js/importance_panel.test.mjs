// The explorer's measure views (web/measure_views.js) and the importance panel's record
// (web/importance_record.js), without a browser: each view is one registration that names its need
// (the worker op, the request, the settings the link carries); the panel's two requests share the PAPA
// panel's request rule; a link's summary survives its check and a changed number is named after the
// recompute. The browser tests (tests/e2e/importance.test.mjs) run them on the real worker.
import assert from 'node:assert/strict';
import test from 'node:test';

import '../../web/panel_list.js';
import {
  agreementRequest, checkImportance, compactImportance, compareImportance, curveRequest, curveSeries, importanceCsv, importanceProvenance,
  isCorpusSweep, lmCurveRequest,
} from '../../web/importance_record.js';
import { valuesOf } from '../../web/papa_request.js';
import { viewScale } from '../../web/scales.js';
import { keySpecs } from '../../web/state.js';
import { needOf, resolveView } from '../../web/views.js';
import { loadEngineTables } from '../../scripts/engine_tables.mjs';

loadEngineTables(); // the papa op's constant kinds and head orders (the requests are built from them), as in the page

test('norm-based attention, rollout and value zeroing are views that ask for their ops', () => {
  const text = { text: 'the cat', pair: 'it sat' };
  const norm = needOf(resolveView('norm'));
  assert.equal(norm.op, 'norm_attention');
  assert.deepEqual(norm.request('m', text, norm.settings({ nvariant: 'res_ln' })),
                   { model: 'm', text: 'the cat', text_pair: 'it sat', outputs: ['res_ln'] });
  const roll = needOf(resolveView('rollout'));
  assert.equal(roll.op, 'attention_rollout');
  assert.deepEqual(roll.request('m', { text: 'a', pair: null }, roll.settings({ rsource: 'raw', emode: 'paper' })),
                   { model: 'm', text: 'a', source: 'raw' }, 'no mode unless the source is effective attention');
  assert.deepEqual(roll.settings({ rsource: 'effective', emode: 'paper' }), { source: 'effective', mode: 'paper' });
  assert.equal(roll.current({ source: 'effective', mode: 'exact' }, { source: 'effective', mode: 'paper' }), false);
  assert.equal(needOf(resolveView('value_zeroing')).op, 'value_zeroing');
  assert.equal(needOf(resolveView('diff:rollout,standard')).name, 'rollout');
  // their settings are state keys the link carries (the explorer panel declares them)
  assert.equal(keySpecs().get('nvariant').owner, 'explorer');
  assert.equal(keySpecs().get('rsource').owner, 'explorer');
  // rollout and value zeroing are distributions: the shared 0-1 scale; norm-based attention: one scale for the run
  assert.equal(viewScale(resolveView('rollout'), new Float32Array([0.2]), false).max, 1);
  const run = { norm: { max: 7.5 } };
  const s = viewScale(resolveView('norm'), new Float32Array([0.5, 2]), false, run);
  assert.deepEqual([s.min, s.max, s.run], [0, 7.5, true]);
  assert.equal(viewScale(resolveView('norm'), new Float32Array([0.5, 2]), true, run).max, 2, 'autoscale: the head\u2019s own');
});

test('the pruning curve and the measures take the PAPA panel\u2019s settings', () => {
  const state = { ...valuesOf({ papa_train: 48, papa_seeds: '1,2', papa_orders: 'random' }), imp_task: 'agreement', imp_examples: 40, imp_least_k: 3 };
  const curve = curveRequest(state, 'm', '{"x":1}\n');
  assert.deepEqual([curve.task, curve.orders, curve.constants, curve.baselines, curve.max_train, curve.outputs],
                   ['agreement', ['lambda', 'gradient'], ['average', 'zeros'], false, 48, undefined]);
  const agree = agreementRequest(curve, state);
  assert.deepEqual([agree.task, agree.task_jsonl, agree.max_train, agree.max_examples, agree.least_k], ['agreement', '{"x":1}\n', 48, 40, 3]);
  for (const k of ['orders', 'constants', 'fractions', 'seeds', 'baselines', 'mlm']) assert.equal(agree[k], undefined, k);
});

const hash = (c) => `sha256:${c.repeat(64)}`;
const AGREE = {
  measures: [{ id: 'lambda', label: '\u03bb', higher: true }, { id: 'entropy', label: 'entropy', higher: false }],
  grids: { lambda: [[0.1, 0.9], [0.5, 0.4]], entropy: [[1.2, 0.3], [0.8, 0.9]] },
  spearman: [[1, -0.8], [-0.8, 1]],
  least: { k: 1, heads: { lambda: [[0, 0]], entropy: [[0, 1]] }, overlap: [[1, 0], [0, 1]] },
  finding: 'They disagree.', n_examples: 10, config: {}, digest: hash('a'),
};
const CURVE = {
  digest: hash('b'), engine: '0.1.0', hashes: { model: hash('c'), task: hash('d') }, task: { id: 'pos', metric: 'token_accuracy' },
  shape: { n_layers: 2, n_heads: 2 }, lambdas: [[0.1, 0.9], [0.5, 0.4]],
  config: { seeds: [1], orders: ['lambda', 'gradient'], constants: ['average', 'zeros'] },
  configs: [{ label: 'full', what: 'sweep', k: 0, fraction_kept: 1 }, { label: 'average k=2 lambda', what: 'sweep', k: 2, fraction_kept: 0.5, constant: 'average', order: 'lambda' },
            { label: 'zeros k=2 gradient', what: 'sweep', k: 2, fraction_kept: 0.5, constant: 'zeros', order: 'gradient' }],
  summary: [{ mean: 0.8, ci95: 0 }, { mean: 0.79, ci95: 0 }, { mean: 0.7, ci95: 0 }],
  runs: [{ config: 0, seed_index: 0, score: 0.8 }, { config: 1, seed_index: 0, score: 0.79 }, { config: 2, seed_index: 0, score: 0.7 }],
};

test('a link\u2019s importance result: checked, compared number by number, two lines on the PAPA axes, a CSV with provenance', () => {
  const stored = compactImportance(AGREE, CURVE);
  assert.equal(checkImportance(stored), null);
  assert.equal(checkImportance(JSON.parse(JSON.stringify(stored))), null, 'it survives JSON (the link)');
  assert.match(checkImportance({ ...stored, grids: [[[1]]] }), /^grids/);
  assert.match(checkImportance({ ...stored, curve: { ...stored.curve, digest: 'x' } }), /^curve: digest/);
  assert.equal(compareImportance(stored, AGREE, CURVE).identical, true);
  const changed = JSON.parse(JSON.stringify(stored));
  changed.grids[1][1][0] = 0.81;
  changed.curve.runs[2][0] = 0.71;
  const cmp = compareImportance(changed, AGREE, CURVE);
  assert.equal(cmp.identical, false);
  assert.deepEqual(cmp.diffs.map((d) => d.what), ['entropy of layer 1 head 0', 'zeros k=2 gradient: seed #1 score']);
  assert.deepEqual(curveSeries(CURVE).map((s) => [s.order, s.constant, s.points.map((p) => p.y)]),
                   [['lambda', 'average', [0.8, 0.79]], ['gradient', 'zeros', [0.8, 0.7]]]);
  const csv = importanceCsv(AGREE, CURVE, { engine: '0.1.0', digest: AGREE.digest, curve_digest: CURVE.digest, link: 'http://x/#v1.y',
                                            model: { name: 'm', content_hash: hash('c') }, task: { id: 'pos', metric: 'token_accuracy', content_hash: hash('d') } });
  assert.match(csv, /^# attnlab head importance and agreement; engine 0\.1\.0; digest sha256:a{64}; pruning curve digest sha256:b{64}\n/);
  assert.match(csv, /\nlayer,head,lambda,entropy\n0,0,0.1,1.2\n0,1,0.9,0.3\n/);
  assert.match(csv, /\nentropy,-0.8,1\n/);
});

// A causal language model's reply (docs/agreement.md and docs/papa-op.md, "A causal language model"): texts, not a task.
const LM_HASHES = { model: hash('c'), corpus: hash('e'), constants_corpus: hash('f') };
const LM_AGREE = { ...AGREE, hashes: LM_HASHES, config: { corpus_name: 'h', constants_corpus_name: 't', L: 64 }, n_examples: 12, n_validation: 8 };
const LM_CURVE = {
  digest: hash('b'), engine: '0.2.0', hashes: LM_HASHES, score: { name: 'bits_per_token', direction: 'lower is better' },
  shape: { n_layers: 2, n_heads: 2 }, lambdas: [[0.1, 0.9], [0.5, 0.4]],
  config: { corpus_name: 'h', L: 64, orders: ['lambda', 'gradient'], constants: ['average', 'zeros'] },
  configs: CURVE.configs, summary: [{ mean: 7.1, ci95: 0.2 }, { mean: 7.3, ci95: 0.2 }, { mean: 9, ci95: 0.4 }],
  runs: [{ config: 0, seed_index: 0, score: 7.1 }, { config: 1, seed_index: 0, score: 7.3 }, { config: 2, seed_index: 0, score: 9 }],
};

test('on a causal language model: the corpus fields in both requests, the sweep kept as the language-model panel keeps it', () => {
  const texts = { corpus: 'a\n\nb', corpus_name: 'h', constants_corpus: 'c', constants_corpus_name: 't' };
  const v = { imp_L: 32, imp_fractions: '1,0.5,0', imp_examples: 40, imp_least_k: 3 };
  const curve = lmCurveRequest(v, 'm', texts);
  assert.deepEqual(curve, { model: 'm', ...texts, L: 32, constants: ['average', 'zeros'], orders: ['lambda', 'gradient'], fractions: [1, 0.5, 0],
                            baselines: false });
  assert.equal(lmCurveRequest({ ...v, imp_fractions: '' }, 'm', texts).fractions, undefined, 'the engine\u2019s fractions');
  // the measures on the same texts and window; the gradient's windows stay the sweep's (no max_examples)
  assert.deepEqual(agreementRequest(curve, v), { model: 'm', ...texts, L: 32, least_k: 3 });
  assert.equal(isCorpusSweep(LM_CURVE), true);
  assert.equal(isCorpusSweep(CURVE), false);
  // the link's summary: lm, the grids as for a task, the sweep's bits per token and intervals
  const stored = compactImportance(LM_AGREE, LM_CURVE);
  assert.equal(stored.lm, true);
  assert.deepEqual(stored.curve, { v: 1, digest: LM_CURVE.digest, engine: '0.2.0', hashes: LM_HASHES, shape: LM_CURVE.shape,
                                   labels: ['full', 'average k=2 lambda', 'zeros k=2 gradient'], bits: [7.1, 7.3, 9], ci95: [0.2, 0.2, 0.4] });
  assert.equal(compactImportance(AGREE, CURVE).lm, undefined, 'a task\u2019s summary is as it was');
  assert.equal(checkImportance(JSON.parse(JSON.stringify(stored))), null);
  assert.match(checkImportance({ ...stored, lm: 1 }), /^lm:/);
  assert.match(checkImportance({ ...stored, curve: { ...stored.curve, bits: null } }), /^curve: no bits/);
  assert.match(checkImportance({ ...stored, curve: null }), /^curve: missing/);
  assert.equal(compareImportance(stored, LM_AGREE, LM_CURVE).identical, true);
  const changed = JSON.parse(JSON.stringify(stored));
  changed.grids[0][0][1] = 0.8;
  changed.curve.bits[2] = 9.01;
  const cmp = compareImportance(changed, LM_AGREE, LM_CURVE);
  assert.equal(cmp.identical, false);
  assert.deepEqual(cmp.diffs.map((d) => d.what), ['lambda of layer 0 head 1', 'zeros k=2 gradient: bits per token']);
  assert.deepEqual(compareImportance(compactImportance(AGREE, CURVE), LM_AGREE, LM_CURVE).problems.slice(-1),
                   ['the link\u2019s curve is a task\u2019s, this one is not']);
  // the two lines in bits per token with the 95% bands
  assert.deepEqual(curveSeries(LM_CURVE).map((s) => [s.order, s.constant, s.points.map((p) => [p.y, p.lo, p.hi])]),
                   [['lambda', 'average', [[7.1, 7.1 - 0.2, 7.1 + 0.2], [7.3, 7.3 - 0.2, 7.3 + 0.2]]],
                    ['gradient', 'zeros', [[7.1, 7.1 - 0.2, 7.1 + 0.2], [9, 9 - 0.4, 9 + 0.4]]]]);
  // provenance and CSV: the texts by name and hash in place of the task
  const prov = importanceProvenance({ reply: LM_AGREE, curve: LM_CURVE, modelLabel: 'mini', modelRef: 'x', finishedAt: 'now' }, 'http://x/#v1.y');
  assert.deepEqual(prov.corpus, { name: 'h', content_hash: hash('e'), constants_name: 't', constants_content_hash: hash('f'), score: 'bits_per_token' });
  assert.deepEqual([prov.digest, prov.curve_digest, prov.model.content_hash, prov.task], [AGREE.digest, LM_CURVE.digest, hash('c'), undefined]);
  const csv = importanceCsv(LM_AGREE, LM_CURVE, prov);
  assert.match(csv, /\n# held-out text: h \(content sha256:e{64}\); constants' text: t \(content sha256:f{64}\)\n/);
  assert.match(csv, /\n# pruning curve and PAPA curve \(bits per token over the held-out documents, lower is better; 95% interval\)\n/);
  assert.match(csv, /\ngradient-importance order,zeros,0\.5,9,0\.4\d*\n/);
});
