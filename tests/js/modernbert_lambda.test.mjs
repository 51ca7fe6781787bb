// modernbert_lambda.test.mjs: the PAPA λ ranking on a ModernBERT through the native command line
// (docs/families.md, docs/papa.md): the golden model of tests/golden/modernbert (random weights, 4 layers,
// global and windowed local layers) copied with a WordPiece vocab.txt of its ids (golden_with_vocab.mjs), then
// `attnlab papa --orders lambda` with a fraction that the order decides. The ranking trains λ through the training forward and backward (src/train/train_decoder.c);
// 1 and 2 threads give the same digest, and the order covers every head once. Then the head_agreement op on
// the ModernBERT and DeBERTa-v3 goldens (every importance measure for both newer families).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { goldenWithVocab } from './golden_with_vocab.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const tasks = path.join(root, 'build/data/tasks');
const missing = !existsSync(cli) ? `no native CLI at ${cli}` : !existsSync(path.join(tasks, 'pos.jsonl')) ? 'no built-in tasks' : null;
let work;

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

test('papa --orders lambda runs on the ModernBERT golden model, the same digest at 1 and 2 threads', { skip: missing ?? false }, () => {
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-mb-lambda-'));
  const dir = goldenWithVocab(root, 'modernbert', path.join(work, 'modernbert'));

  const replies = [1, 2].map((threads) => {
    const r = spawnSync(cli, ['--threads', String(threads), 'papa', dir, '--task', 'pos', '--tasks-dir', tasks,
      '--orders', 'lambda', '--preset', 'quick', '--fractions', '1,0.5,0', '--seeds', '1', '--max-train', '40',
      '--max-validation', '20', '--L', '24', '--baselines', 'false'], { encoding: 'utf8', maxBuffer: 64 << 20 });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout);
  });
  const [one, two] = replies;
  assert.deepEqual(one.shape, { n_layers: 4, n_heads: 4 });
  assert.match(one.digest, /^sha256:[0-9a-f]{64}$/);
  assert.equal(two.digest, one.digest, 'the thread count changed the numbers');
  assert.deepEqual(two.theta, one.theta);
  // the ranking moved every θ from 0 (λ = 0.5) and ordered all 16 heads once
  assert.equal(one.theta.length, 16);
  assert.ok(one.theta.every((t) => Number.isFinite(t) && t !== 0), JSON.stringify(one.theta));
  const order = one.orders.lambda.map(([l, h]) => l * 4 + h);
  assert.deepEqual([...order].sort((a, b) => a - b), [...Array(16).keys()]);
  assert.ok(one.configs.some((c) => c.label.includes('lambda')), JSON.stringify(one.configs.map((c) => c.label)));
  console.log(`ModernBERT λ ranking: digest ${one.digest} at 1 and 2 threads, ranking loss ${one.ranking_loss}`);
});

// The head_agreement op (docs/agreement.md) on both newer families: every measure runs (λ and gradient importance
// through the family's training path), and 1 and 2 threads give the same digest.
for (const [family, L] of [['modernbert', 24], ['deberta_v3', 24]]) {
  test(`attnlab agreement runs on the ${family} golden model, the same digest at 1 and 2 threads`, { skip: missing ?? false }, () => {
    work ??= mkdtempSync(path.join(tmpdir(), 'attnlab-mb-lambda-'));
    const dir = goldenWithVocab(root, family, path.join(work, `${family}-agreement`));
    const replies = [1, 2].map((threads) => {
      const r = spawnSync(cli, ['--threads', String(threads), 'agreement', dir, '--task', 'pos', '--tasks-dir', tasks,
        '--max-train', '40', '--max-validation', '20', '--max-examples', '20', '--L', String(L), '--json'],
      { encoding: 'utf8', maxBuffer: 64 << 20 });
      assert.equal(r.status, 0, r.stderr);
      return JSON.parse(r.stdout);
    });
    const [one, two] = replies;
    assert.equal(two.digest, one.digest, 'the thread count changed the numbers');
    assert.deepEqual(one.measures.map((m) => m.id), ['lambda', 'gradient', 'input_dependence', 'confidence', 'entropy', 'sink_mass', 'norm_mass']);
    const NH = one.shape.n_layers * one.shape.n_heads;
    for (const m of one.measures) {
      const g = one.grids[m.id].flat();
      assert.equal(g.length, NH, m.id);
      assert.ok(g.every((v) => v === null || Number.isFinite(v)), `${m.id}: ${JSON.stringify(g)}`);
    }
    assert.ok(one.grids.gradient.flat().some((v) => v > 0), 'gradient importance is not all zero');
    one.spearman.forEach((row, i) => { if (row[i] !== null) assert.equal(row[i], 1); });
    console.log(`${family} head_agreement: ${one.finding}`);
  });
}
