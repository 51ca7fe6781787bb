// explain_head.test.mjs: the arithmetic of the "Explain one head" view (web/explain_head.js), the
// colour scales and their legends (web/scales.js) and the explorer's notes on the text it shows
// (web/run_notes.js), under node.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { CorpusAverage, constantWeights, explainData, fmt, fmtFixed, tokenRef, weightedSum } from '../../web/explain_head.js';
import { scaleFor } from '../../web/heatmap.js';
import { lineCutoff } from '../../web/line_view.js';
import { isEmptyText, readText, splitNote } from '../../web/run_notes.js';
import { FIXED, legendText, ordinal, sharedScale, valueName, viewScale } from '../../web/scales.js';

test('a constant row is masked to the real tokens and sums to 1; no mass falls back to uniform', () => {
  const { row, fallback } = constantWeights([0.2, 0.2, 0.6, 0.9], 3);
  assert.equal(fallback, false);
  assert.deepEqual(Array.from(row).map((x) => +x.toFixed(6)), [0.2, 0.2, 0.6]);
  const u = constantWeights(null, 4);
  assert.deepEqual(Array.from(u.row), [0.25, 0.25, 0.25, 0.25]);
  const empty = constantWeights([0, 0, 0, 5], 3);
  assert.equal(empty.fallback, true);
  assert.ok(Math.abs(empty.row.reduce((a, b) => a + b, 0) - 1) < 1e-12);
});

test('the corpus average divides each entry by the sentences that reach it (docs/papa.md)', async () => {
  const avg = new CorpusAverage(1, 1, 4);
  // two sentences: n = 2 (rows [1 0], [0.5 0.5]) and n = 3 (every entry 1/3), padded to 3
  const att = new Float32Array(2 * 9);
  att.set([1, 0, 0, 0.5, 0.5, 0, 0, 0, 0], 0);
  att.fill(1 / 3, 9);
  await avg.add({ reply: { n_seqs: 2, seq_len: 3, sequences: [{ n_tokens: 2 }, { n_tokens: 3 }] }, tensors: { attentions: { data: att } } });
  const r0 = avg.row(0, 0, 0);
  assert.ok(Math.abs(r0[0] - (1 + 1 / 3) / 2) < 1e-6);
  assert.ok(Math.abs(r0[2] - 1 / 3) < 1e-6, 'position 2 is reached by one sentence only');
  assert.equal(r0[3], 0, 'no sentence reaches position 3');
  assert.equal(avg.row(0, 0, 3).every((x) => x === 0), true);
});

test('explainData: the constant context, the invisible share and the heatmap check', () => {
  const f = (a) => ({ data: Float32Array.from(a) });
  const reply = { n_tokens: 2, head_dim: 2, seq_len: 2, layer: 0, head: 1, query: 0, tokens: ['a', 'b'], scale: 0.7, rank: 1 };
  const tensors = {
    weights: f([0.75, 0.25]), values: f([1, 0, 1, 0]), context: f([1, 0]), query: f([1, 1]), keys: f([1, 0, 0, 1]),
    scores: f([1, 1]), scaled: f([0.7, 0.7]), mask_add: f([0, 0]), output: f([1, 2, 3]),
    effective: f([0.5, 0.5]), invisible: f([0.25, -0.25]),
  };
  const d = explainData({ reply, tensors }, null, Float32Array.from([0.75, 0.25]));
  assert.deepEqual(Array.from(d.constContext), [1, 0], 'equal value vectors: any weights give the same context');
  assert.equal(d.contextMove, 0);
  // lengths: |(0.25, -0.25)| / |(0.75, 0.25)| = sqrt(0.125 / 0.625)
  assert.ok(Math.abs(d.invisibleShare - Math.sqrt(0.2)) < 1e-7, String(d.invisibleShare));
  assert.equal(d.heatmapDiff, 0);
  assert.deepEqual(Array.from(weightedSum([0.5, 0.5], [1, 2, 3, 4], 2, 2)), [2, 3]);
  assert.equal(fmt(-0.01234), '\u22120.0123');
  assert.equal(fmt(1234.5), '1.23e+3');
});

test('scales: probabilities share 0-1 unless autoscaled, signed views are symmetric, legends say which', () => {
  const m = Float32Array.from([0.1, 0.2, 0.3, 0.4]);
  const prob = { probability: true };
  assert.equal(viewScale(prob, m, false), FIXED);
  assert.equal(viewScale(prob, m, true).max.toFixed(6), '0.400000');
  assert.match(legendText(prob, FIXED, false), /shared 0.1 scale/);
  assert.match(legendText(prob, viewScale(prob, m, true), true), /autoscale/);
  const s = viewScale({ signed: true }, Float32Array.from([-0.2, 0.5]), false);
  assert.equal(s.min, -s.max);
  const both = sharedScale([Float32Array.from([0.3]), Float32Array.from([-0.5, 0.1])]);
  assert.deepEqual([both.min, both.max], [-0.5, 0.5]);
  assert.equal(valueName(prob), 'attention weight');
  assert.deepEqual([1, 2, 3, 4, 11, 12, 13, 21, 22, 23].map(ordinal),
                   ['1st', '2nd', '3rd', '4th', '11th', '12th', '13th', '21st', '22nd', '23rd']);
});

test('run notes: empty text, the words the model read, split words', () => {
  assert.equal(isEmptyText('  ', null), true);
  assert.equal(isEmptyText('', 'b'), false);
  const tokens = ['[CLS]', 'the', 't', '##ired', 'cat', '[SEP]', 'a', '[SEP]'];
  const words = [-1, 0, 1, 1, 2, -1, 0, -1];
  const types = [0, 0, 0, 0, 0, 0, 1, 1];
  assert.equal(readText(tokens, words, types), 'the tired cat \u2016 a');
  assert.match(splitNote(tokens, words, types, 8000), /\u201ctired\u201d is split into \u201ct ##ired\u201d because this small model/);
  assert.match(splitNote(tokens, words, types, 30522), /30,522 pieces/);
  assert.equal(splitNote(['[CLS]', 'a', '[SEP]'], [-1, 0, -1], [0, 0, 0], 8000), null);
});

test('the invisible share compares lengths, so it never passes 100% where sums of absolute values do', () => {
  // explainData reports |invisible| / |w| as a ratio of Euclidean lengths
  const f = (a) => ({ data: Float32Array.from(a) });
  const reply = { n_tokens: 3, head_dim: 1, seq_len: 3, layer: 0, head: 0, query: 0, tokens: ['a', 'b', 'c'], scale: 1, rank: 1 };
  const w = [0.6, 0.3, 0.1];
  const eff = [1 / 3, 1 / 3, 1 / 3]; // w projected onto the span of the values (1, 1, 1)
  const inv = w.map((x, i) => x - eff[i]);
  const tensors = { weights: f(w), values: f([1, 1, 1]), context: f([1]), query: f([1]), keys: f([1, 1, 1]), scores: f([0, 0, 0]),
                    scaled: f([0, 0, 0]), mask_add: f([0, 0, 0]), output: f([1]), effective: f(eff), invisible: f(inv) };
  const d = explainData({ reply, tensors }, null);
  const l2 = Math.hypot(...inv) / Math.hypot(...w);
  assert.ok(Math.abs(d.invisibleShare - l2) < 1e-6);
});

test('repeated tokens are named with their position; scores keep 4 decimals', () => {
  const tokens = ['[CLS]', 'the', 'cat', 'the', '[SEP]'];
  assert.equal(tokenRef(tokens, 1), '\u201cthe\u201d at 1');
  assert.equal(tokenRef(tokens, 3), '\u201cthe\u201d at 3');
  assert.equal(tokenRef(tokens, 2), '\u201ccat\u201d');
  assert.equal(tokenRef(tokens, 1, 2), '\u201cthe\u201d', 'only the first n tokens count');
  assert.equal(fmtFixed(-12.345678), '\u221212.3457');
  assert.equal(fmtFixed(0.5), '0.5000');
});

test('a map of zeros has a flat scale; the lines\u2019 cutoff is half an even share or 2% of the largest', () => {
  assert.equal(scaleFor(new Float32Array(4), false).flat, true);
  assert.equal(scaleFor(new Float32Array(4), true).flat, true);
  assert.equal(scaleFor(Float32Array.from([0, 0.1]), false).flat, false);
  assert.equal(sharedScale([new Float32Array(3), new Float32Array(2)]).flat, true);
  const c = lineCutoff({ probability: true }, FIXED, 10);
  assert.equal(c.value, 0.05);
  assert.match(c.text, /not drawn/);
  const s = lineCutoff({ signed: true }, { signed: true, min: -0.5, max: 0.5 }, 10);
  assert.equal(s.value, 0.01);
});
