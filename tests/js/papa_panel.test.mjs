// papa_panel.test.mjs: the PAPA panel's parts that need no browser: the request its controls make
// (web/papa_request.js), the result a link carries and the comparison after a recompute
// (web/papa_record.js), the CSV export, the PNG provenance chunks (web/png_text.js) and the sweep's
// progress (web/papa_progress.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { PAPA_KEYS, PAGE_PRESET, buildRequest, cliRequest, parseNumbers } from '../../web/papa_request.js';
import { checkResult, compactResult, compareResult, seriesOf, toCsv } from '../../web/papa_record.js';
import { SweepProgress } from '../../web/papa_progress.js';
import { crc32, readText, withText } from '../../web/png_text.js';
import { loadEngineTables } from '../../scripts/engine_tables.mjs';

loadEngineTables(); // the papa op's constant kinds, head orders and ranges, from the CLI's version reply

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const defaults = Object.fromEntries(Object.entries(PAPA_KEYS).map(([k, s]) => [k, s.default]));

// A reply of the shape docs/papa-op.md describes: 2 layers x 2 heads, 2 seeds, lambda and random orders.
function reply() {
  const configs = [
    { label: 'full', what: 'sweep', k: 0, fraction_kept: 1, mlm_score: -4.5, mlm_accuracy: 0.25 },
    { label: 'average k=2 lambda', what: 'sweep', k: 2, fraction_kept: 0.5, constant: 'average', order: 'lambda', mlm_score: -4.7, mlm_accuracy: 0.2 },
    { label: 'average k=2 random', what: 'sweep', k: 2, fraction_kept: 0.5, constant: 'average', order: 'random', mlm_score: -4.8, mlm_accuracy: 0.2 },
    { label: 'average all', what: 'sweep', k: 4, fraction_kept: 0, constant: 'average', mlm_score: -5.1, mlm_accuracy: 0.1 },
    { label: 'right_pad', what: 'right_pad', mlm_score: null, mlm_accuracy: null },
    { label: 'identity all', what: 'sweep', k: 4, fraction_kept: 0, constant: 'identity', mlm_score: -7, mlm_accuracy: 0.05 },
  ];
  const scores = [[0.9, 0.91], [0.88, 0.89], [0.85, 0.86], [0.8, 0.82], [0.9, 0.9], [0.7, 0.71]];
  return {
    engine: '0.1.0', shape: { n_layers: 2, n_heads: 2 },
    hashes: { model: `sha256:${'a'.repeat(64)}`, task: `sha256:${'b'.repeat(64)}` },
    config: { seeds: [1, 2], orders: ['lambda', 'random'], constants: ['average'] },
    configs,
    runs: scores.flatMap((row, c) => row.map((score, s) => ({ config: c, seed_index: s, score, accuracy: score }))),
    summary: scores.map((row) => ({ n: 2, mean: (row[0] + row[1]) / 2, sd: 0.01, ci95: 0.09, drop: 1 - (row[0] + row[1]) / 2 / 0.905 })),
    lambdas: [[0.2, 0.7], [0.5, 0.9]],
    task: { id: 'pos', metric: 'token_accuracy' },
    digest: `sha256:${'c'.repeat(64)}`,
  };
}

test('the request: page preset by default, the user\'s hyper-parameters over it, lists checked', () => {
  const a = buildRequest(defaults, 'm1', { jsonl: '{...}' });
  assert.equal(a.preset, 'quick');
  assert.equal(a.max_train, PAGE_PRESET.max_train);
  assert.equal(a.max_validation, PAGE_PRESET.max_validation);
  assert.deepEqual(a.fractions, [1, 0.5, 0.125, 0.0625, 0]);
  assert.deepEqual(a.seeds, [1, 2, 3]);
  assert.deepEqual(a.orders, ['lambda']);
  assert.equal(a.task, 'pos');
  const b = buildRequest({ ...defaults, papa_preset: 'quick', papa_train: 40, papa_epochs: 2, papa_lr: '1e-3', papa_rank_n: 0,
                           papa_orders: 'lambda,random' }, 'm1', { jsonl: '' });
  assert.equal(b.max_train, 40);
  assert.equal(b.max_validation, undefined, 'left to the preset');
  assert.deepEqual(b.probe, { epochs: 2, lr: 0.001 });
  assert.deepEqual(b.ranking, { max_examples: 0 });
  assert.throws(() => parseNumbers('1,2', 'Fractions', { min: 0, max: 1 }), /"2" is not a number from 0 to 1/);
  assert.throws(() => buildRequest({ ...defaults, papa_seeds: '1,1' }, 'm', { jsonl: '' }), /Seeds: 1 is given twice/);
  assert.throws(() => buildRequest({ ...defaults, papa_orders: 'sideways' }, 'm', { jsonl: '' }), /"sideways" is not one of/);
  const imp = buildRequest({ ...defaults, papa_task: 'file', papa_fmt: 'csv', papa_label_col: 'stars', papa_delim: 'semicolon' }, 'm',
                           { train: 'a;b', trainName: 'r.csv' });
  assert.equal(imp.task, undefined);
  assert.deepEqual(imp.import, { format: 'csv', skip_bad_rows: true, text_column: 'text', label_column: 'stars', delimiter: ';',
                                 train: 'a;b', train_name: 'r.csv', validation_fraction: 0.2 });
  const cli = cliRequest(a, 'models/x');
  assert.equal(cli.model_dir, 'models/x');
  assert.equal(cli.model, undefined);
  assert.equal(cli.outputs, undefined);
});

test('a link\'s result: checked, compared exactly, and every changed value named', () => {
  const r = reply();
  const stored = compactResult(r);
  assert.equal(checkResult(stored), null);
  assert.equal(checkResult(JSON.parse(JSON.stringify(stored))), null, 'survives JSON');
  assert.match(checkResult({ ...stored, digest: 'md5:1' }), /digest/);
  assert.match(checkResult({ ...stored, mean: [1] }), /mean/);
  assert.deepEqual(compareResult(JSON.parse(JSON.stringify(stored)), r).identical, true);
  // one seed's score changed in the link: named, although the digest still matches
  const tampered = JSON.parse(JSON.stringify(stored));
  tampered.runs[1][0] = 0.8801;
  const c = compareResult(tampered, r);
  assert.equal(c.identical, false);
  assert.deepEqual(c.diffs, [{ what: 'average k=2 lambda: seed #1 score', stored: '0.8801', now: '0.88' }]);
  // another digest and a lambda: both said
  const d = compareResult({ ...stored, digest: `sha256:${'d'.repeat(64)}`, lambdas: [[0.2, 0.7], [0.5, 0.91]] }, r);
  assert.match(d.problems.join(' '), /the digest differs/);
  assert.deepEqual(d.diffs.map((x) => x.what), ['lambda of layer 1 head 1']);
  // another model
  assert.match(compareResult({ ...stored, model: `sha256:${'e'.repeat(64)}` }, r).problems[0], /the model differs/);
});

test('the figure\'s lines: one per order, each from the full model to all heads constant, with bands', () => {
  const s = seriesOf(reply());
  assert.deepEqual(s.map((x) => x.label), ['λ order', 'random order'], 'the identity baseline is not a line');
  assert.deepEqual(s[0].points.map((p) => p.x), [1, 0.5, 0]);
  assert.deepEqual(s[1].points.map((p) => p.y), [0.905, 0.855, 0.81]);
  assert.ok(Math.abs(s[0].points[1].hi - s[0].points[1].lo - 0.18) < 1e-12);
  const m = seriesOf(reply(), 'mlm');
  assert.deepEqual(m[0].points.map((p) => p.y), [-4.5, -4.7, -5.1]);
  // a sweep of the ends only, two constant kinds: one line per kind
  const ends = reply();
  ends.config = { ...ends.config, orders: ['lambda'], constants: ['average', 'identity'] };
  ends.configs = ends.configs.filter((c) => c.k !== 2);
  ends.summary = ends.summary.filter((_, i) => reply().configs[i].k !== 2);
  assert.deepEqual(seriesOf(ends).map((x) => [x.label, x.points.map((p) => p.x)]), [['average', [1, 0]], ['identity', [1, 0]]]);
});

test('the CSV: provenance lines, one row per configuration with each seed\'s score', () => {
  const r = reply();
  const csv = toCsv(r, { engine: '0.1.0', digest: r.digest, model: { name: 'mini', content_hash: r.hashes.model },
                         task: { id: 'pos', metric: 'token_accuracy', content_hash: r.hashes.task }, configuration: r.config,
                         link: 'http://x/#v1.abc' });
  const lines = csv.trim().split('\n');
  assert.match(lines[0], /^# attnlab PAPA sweep; engine 0\.1\.0; digest sha256:c{64}$/);
  assert.match(lines[4], /^# link: http:\/\/x\/#v1\.abc$/);
  const rows = lines.filter((l) => !l.startsWith('#'));
  assert.equal(rows.length, 1 + r.configs.length);
  assert.match(rows[0], /,score_seed_1,score_seed_2$/);
  assert.match(rows[2], /^average k=2 lambda,"2 of 4 heads constant \(average, λ order\)",sweep,2,0\.5,average,lambda,2,/);
  assert.match(rows[2], /,0\.88,0\.89$/);
});

test('PNG text chunks: CRC-32 of the standard check value, and a real PNG keeps its chunks valid', () => {
  assert.equal(crc32(new TextEncoder().encode('123456789')), 0xcbf43926);
  const png = new Uint8Array(readFileSync(path.join(root, 'docs/screenshot.png')));
  const out = withText(png, { Title: 'papa_scores', 'attnlab:provenance': JSON.stringify({ model: 'mini \u03bb' }) });
  assert.deepEqual(readText(out), { Title: 'papa_scores', 'attnlab:provenance': '{"model":"mini \\u03bb"}' });
  // every chunk's CRC holds, and the file still ends with IEND
  const view = new DataView(out.buffer);
  let at = 8;
  const types = [];
  while (at < out.length) {
    const len = view.getUint32(at);
    types.push(String.fromCharCode(...out.subarray(at + 4, at + 8)));
    assert.equal(view.getUint32(at + 8 + len), crc32(out.subarray(at + 4, at + 8 + len)), `CRC of chunk ${types.at(-1)}`);
    at += 12 + len;
  }
  assert.equal(at, out.length);
  assert.equal(types.at(-1), 'IEND');
  assert.equal(types.filter((t) => t === 'tEXt').length, 2);
});

test('progress over the whole sweep never goes back and reaches 1', () => {
  const p = new SweepProgress();
  const seen = [];
  // the worker's messages: every report names its configuration of the engine's count (0 before the first)
  const steps = [['inputs', 0], ['constants', 0.5], ['constants', 1], ['ranking', 0.5], ['ranking', 1]].map(([s, f]) => [s, f, 0]);
  for (let c = 1; c <= 3; c++) steps.push(['features', 0.5, c], ['features', 1, c], ['mlm', 1, c], ['sweep', c / 3, c]);
  for (const [stage, fraction, config] of steps) seen.push(p.update({ stage, fraction, config, n_configs: 3 }));
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].fraction >= seen[i - 1].fraction);
  assert.equal(seen.at(-1).fraction, 1);
  assert.match(seen[7].text, /configuration 1 of 3/);
  assert.match(seen[9].text, /configuration 2 of 3/);
  assert.match(seen.at(-1).text, /configuration 3 of 3/);
});

test('progress counts the engine\'s configurations: a shard\'s share, not a guess from the first fraction', () => {
  // shard 1/2 of a 7-configuration plan: the engine says 3, and "sweep" fractions are of the whole plan
  const p = new SweepProgress();
  let out = p.update({ stage: 'inputs', fraction: 0, config: 0, n_configs: 3 });
  assert.equal(p.nConfigs, 3);
  out = p.update({ stage: 'features', fraction: 1, config: 1, n_configs: 3 });
  assert.match(out.text, /configuration 1 of 3/);
  out = p.update({ stage: 'sweep', fraction: 2 / 7, config: 1, n_configs: 3 });
  assert.match(out.text, /configuration 2 of 3/);
  out = p.update({ stage: 'sweep', fraction: 6 / 7, config: 3, n_configs: 3 });
  assert.equal(out.fraction, 1);
});
