// papa_wasm.test.mjs: the PAPA sweep ("papa" op) through the WASM module, as the page's worker runs it,
// against the native CLI on the same request: the same digest, runs, lambdas and MLM scores, bit for bit.
// The task travels as the task file's text ("task_jsonl"), the way a browser hands it over.
//   AL_WASM_DIR  (default build/wasm):   attnlab_wasm.js + .wasm
//   AL_BUILD_DIR (default build/native): the attnlab CLI
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadNode, readModelFiles } from '../../wasm/attnlab_node.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const wasmDir = path.resolve(root, process.env.AL_WASM_DIR ?? 'build/wasm');
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const modelDir = path.join(root, 'models/attnlab-mini-bert');
const taskFile = path.join(root, 'build/data/tasks/agreement.jsonl');
const missing = !existsSync(path.join(wasmDir, 'attnlab_wasm.js')) ? `no WASM build in ${wasmDir}`
  : !existsSync(cli) ? `no native CLI at ${cli}` : !existsSync(taskFile) ? `no built-in tasks (${taskFile})` : null;

let api;
let work;
before(async () => {
  if (missing) return;
  api = await loadNode(wasmDir);
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-papa-test-'));
  const files = readModelFiles(modelDir);
  api.addModel('mini', files);
});
after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
  if (api) api.release();
});

// Timings differ between runs; everything else must not.
function withoutSeconds(reply) {
  const { seconds, model, reused, ...rest } = reply;
  return rest;
}

test('a PAPA sweep gives the same digest and numbers in WASM and natively', { skip: missing ?? false }, () => {
  const request = {
    op: 'papa', model: 'mini', task: 'agreement', task_jsonl: readFileSync(taskFile, 'utf8'),
    max_train: 120, max_validation: 40, L: 48, seeds: [1, 2], fractions: [1, 0.5, 0],
    orders: ['lambda', 'random'], probe: { epochs: 2 }, ranking: { max_examples: 48, epochs: 1 },
  };
  const reports = [];
  api.onProgress = (stage, fraction, config, nConfigs) => reports.push({ stage, config, nConfigs });
  const w = api.run(request);
  api.onProgress = null;
  assert.equal(w.status, 0, JSON.stringify(w.reply.error ?? ''));
  // every report names its configuration of the reply's count (wasm/exports.c hands both to onProgress)
  assert.ok(reports.length && reports.every((r) => r.nConfigs === w.reply.configs.length), JSON.stringify(reports.slice(0, 3)));
  assert.deepEqual(reports.filter((r) => r.stage === 'sweep').map((r) => r.config), w.reply.configs.map((c, i) => i + 1));
  const reqPath = path.join(work, 'papa.json');
  writeFileSync(reqPath, JSON.stringify({ ...request, model: undefined, model_dir: modelDir }));
  const native = JSON.parse(execFileSync(cli, ['run', reqPath], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'],
                                                                    maxBuffer: 64 << 20 }));
  assert.match(w.reply.digest, /^sha256:[0-9a-f]{64}$/);
  assert.equal(w.reply.digest, native.digest);
  assert.deepEqual(withoutSeconds(w.reply), withoutSeconds(native));
  assert.equal(w.reply.runs.length, w.reply.configs.length * 2);
  assert.equal(w.reply.hashes.task, `sha256:${'6c37cd90b84ad7a5bb2cb56b84cb3b4409ec9cf950a70b72288d21532139ab9c'}`);
  console.log(`papa in WASM = native: digest ${w.reply.digest}, ${w.reply.runs.length} runs`);
  // the same sweep again in this session reuses the constants and the ranking, with the same numbers
  assert.deepEqual(w.reply.reused, { constants: false, ranking: false });
  const again = api.run({ ...request, seeds: [1, 2] });
  assert.deepEqual(again.reply.reused, { constants: true, ranking: true });
  assert.equal(again.reply.digest, w.reply.digest);
  assert.equal(again.reply.ranking_loss, w.reply.ranking_loss);
  assert.equal(again.reply.seconds.ranking, 0);
});

test('a bad papa request names the field', { skip: missing ?? false }, () => {
  const r = api.run({ op: 'papa', model: 'mini', task_jsonl: readFileSync(taskFile, 'utf8'), orders: ['sideways'] });
  assert.notEqual(r.status, 0);
  assert.match(r.reply.error.message, /orders\[0\]/);
  const t = api.run({ op: 'papa', model: 'mini' });
  assert.match(t.reply.error.message, /task/);
});
