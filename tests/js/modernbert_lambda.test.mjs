// modernbert_lambda.test.mjs: the PAPA λ ranking on a ModernBERT through the native command line
// (docs/families.md, docs/papa.md): the golden model of tests/golden/modernbert (random weights, 4 layers,
// global and windowed local layers) copied with a WordPiece vocab.txt of its 100 ids written here (it ships no
// tokenizer; the ids only need to reach the model), then `attnlab papa --orders lambda` with a fraction that the
// order decides. The ranking trains λ through the training forward and backward (src/train/train_modernbert.c);
// 1 and 2 threads give the same digest, and the order covers every head once.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

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
  const dir = path.join(work, 'modernbert');
  const golden = path.join(root, 'tests/golden/modernbert');
  mkdirSync(dir);
  for (const f of ['config.json', 'model.safetensors']) copyFileSync(path.join(golden, f), path.join(dir, f));
  // ids 0..99 as the config's: [PAD] at pad_token_id 3, [MASK] for the MLM score, words and pieces after
  const words = ['the', 'a', 'of', 'to', 'and', 'in', 'is', 'was', 'for', 'on', 'that', 'with', 'as', 'by', 'it',
    'at', 'he', 'from', 'his', 'be', 'an', 'are', 'this', 'or', 'had', 'not', 'were', '.', ',', "'", '-', '(', ')'];
  const vocab = ['[UNK]', '[CLS]', '[SEP]', '[PAD]', '[MASK]', ...words];
  for (let i = 0; vocab.length < 100; i++) vocab.push('##' + String.fromCharCode(97 + (i % 26)).repeat(1 + Math.floor(i / 26)));
  writeFileSync(path.join(dir, 'vocab.txt'), vocab.join('\n') + '\n');

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
