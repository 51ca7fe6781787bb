// threads_wasm.test.mjs: the same numbers on any thread count across builds (docs/threads.md). The
// threaded WASM module (attnlab_wasm_mt, Emscripten pthreads) at 1, 2, 3, 4 and 8 threads, the plain module
// (no threads) and the native CLI at 1 and 2 threads (--threads) run the same requests on the default
// model: every tensor bit for bit (natively on each kernel path the CPU has: x86-avx2 and x86-sse; in WebAssembly
// also the page's wasm-simd128-4x8, the GEMM on 4 x 8 tiles), and a PAPA sweep's digest.
//   AL_WASM_DIR  (default build/wasm):   attnlab_wasm{,_mt}.js + .wasm
//   AL_BUILD_DIR (default build/native): the attnlab CLI
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadNode, readModelFiles } from '../../wasm/attnlab_node.mjs';
import { parseSafetensors } from '../../wasm/safetensors.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const wasmDir = path.resolve(root, process.env.AL_WASM_DIR ?? 'build/wasm');
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const modelDir = path.join(root, 'models/attnlab-mini-bert');
const posTask = path.join(root, 'build/data/tasks/pos.jsonl');
const missing = !existsSync(path.join(wasmDir, 'attnlab_wasm_mt.js')) ? `no threaded WASM build in ${wasmDir}`
  : !existsSync(path.join(wasmDir, 'attnlab_wasm.js')) ? `no WASM build in ${wasmDir}`
  : !existsSync(cli) ? `no native CLI at ${cli}` : null;

// 4 and 8 threads run on any machine (a laptop's core counts; here more threads than cores): the same bits
const MT_THREADS = [1, 2, 3, 4, 8];
const apis = {}; // label -> api
let work;

before(async () => {
  if (missing) return;
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-threads-test-'));
  const files = readModelFiles(modelDir);
  apis.plain = await loadNode(wasmDir);
  for (const threads of MT_THREADS) apis[`mt${threads}`] = await loadNode(wasmDir, {}, { threaded: true, threads });
  // the page's module as its worker sets it up (wasm/worker.mjs): 4 x 8 tiles
  apis.page2 = await loadNode(wasmDir, {}, { threaded: true, threads: 2, kernels: 'wasm-simd128-4x8' });
  for (const api of Object.values(apis)) api.addModel('mini', files);
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
  for (const api of Object.values(apis)) api.release();
});

// The kernel paths the native CLI can run here: its default (x86-avx2 on an AVX2 CPU) and the 4-lane
// x86-sse forced with AL_KERNELS (src/kernels/path.h); each reply names the path that ran.
function nativePaths() {
  const version = (env) => JSON.parse(execFileSync(cli, ['run', '-'], { input: '{"op": "version"}', encoding: 'utf8',
                                                                    env: { ...process.env, ...env } })).kernels;
  const paths = [version({})];
  for (const forced of ['x86-sse', 'x86-avx2']) {
    if (!paths.includes(forced) && version({ AL_KERNELS: forced }) === forced) paths.push(forced);
  }
  return paths;
}

function runNative(request, threads, kernels = null) {
  const tag = `${request.op}-${threads}-${Math.random().toString(36).slice(2, 8)}`;
  const reqPath = path.join(work, `${tag}.json`);
  const outPath = path.join(work, `${tag}.safetensors`);
  writeFileSync(reqPath, JSON.stringify({ ...request, model: undefined, model_dir: modelDir }));
  const env = kernels ? { ...process.env, AL_KERNELS: kernels } : process.env;
  const stdout = execFileSync(cli, ['run', reqPath, '--out', outPath, '--threads', String(threads)],
                              { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20, env });
  const tensors = existsSync(outPath) ? parseSafetensors(new Uint8Array(readFileSync(outPath))).tensors : {};
  return { reply: JSON.parse(stdout), tensors };
}

function sameBits(label, a, b) {
  assert.deepEqual(Object.keys(a).sort(), Object.keys(b).sort(), `${label}: tensor names`);
  for (const [name, t] of Object.entries(a)) {
    const u = b[name];
    assert.deepEqual(t.shape, u.shape, `${label}/${name}: shape`);
    const x = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
    const y = new Uint8Array(u.data.buffer, u.data.byteOffset, u.data.byteLength);
    assert.ok(Buffer.compare(Buffer.from(x), Buffer.from(y)) === 0, `${label}/${name}: not bit-identical`);
  }
}

test('the threaded module reports its threads; the plain one has one', { skip: missing ?? false }, () => {
  assert.equal(apis.plain.threads, 1);
  for (const threads of MT_THREADS) {
    assert.equal(apis[`mt${threads}`].threads, threads);
    assert.equal(apis[`mt${threads}`].run({ op: 'version' }).reply.threads, threads);
  }
  const native = JSON.parse(execFileSync(cli, ['run', '-', '--threads', '3'], { input: '{"op": "version"}', encoding: 'utf8' }));
  assert.equal(native.threads, 3);
  assert.equal(apis.mt2.kernels, 'wasm-simd128');
  assert.equal(apis.page2.kernels, 'wasm-simd128-4x8');
  assert.equal(apis.page2.run({ op: 'version' }).reply.kernels, 'wasm-simd128-4x8');
});

test('a kernel path the build lacks: an error that names it and lists the paths', { skip: missing ?? false }, async () => {
  await assert.rejects(loadNode(wasmDir, {}, { kernels: 'x86-avx2' }),
                       { code: 'invalid', message: "kernels: no path 'x86-avx2' in this build (paths: wasm-simd128, wasm-simd128-4x8)" });
});

test('attention, hidden states and values: bit-identical on every build and thread count', { skip: missing ?? false }, () => {
  const sentence = 'The quick brown fox jumps over the lazy dog while the cat watches from the window. ';
  const request = {
    op: 'attention', model: 'mini', texts: [sentence.repeat(5), sentence.repeat(2), 'A short one.'],
    outputs: ['attentions', 'hidden_states', 'values'],
  };
  const ref = apis.plain.run(request);
  assert.equal(ref.status, 0, JSON.stringify(ref.reply.error ?? ''));
  assert.ok(ref.tensors.attentions.shape[3] > 100, 'a long enough input to split the work');
  for (const label of [...MT_THREADS.map((n) => `mt${n}`), 'page2']) {
    const r = apis[label].run(request);
    assert.equal(r.status, 0, JSON.stringify(r.reply.error ?? ''));
    sameBits(`plain vs ${label}`, ref.tensors, r.tensors);
  }
  const paths = nativePaths();
  console.log(`native kernel paths compared with WASM: ${paths.join(', ')}`);
  for (const kernels of paths) {
    for (const threads of [1, 2]) {
      const n = runNative(request, threads, kernels);
      const names = Object.keys(ref.tensors);
      const picked = Object.fromEntries(names.map((k) => [k, n.tensors[k]]));
      sameBits(`plain WASM vs native ${kernels} ${threads} threads`, ref.tensors, picked);
    }
  }
});

test('a PAPA sweep: the same digest on 1, 3 and 8 WASM threads, the page\'s tiles on 2, and natively on 2', { skip: missing ?? (existsSync(posTask) ? false : 'no built-in tasks') }, () => {
  const request = {
    op: 'papa', model: 'mini', task: 'pos', task_jsonl: readFileSync(posTask, 'utf8'),
    max_train: 64, max_validation: 24, L: 32, seeds: [1, 2, 3], fractions: [1, 0.5, 0],
    orders: ['lambda', 'random'], probe: { epochs: 1 }, ranking: { max_examples: 24, epochs: 1 },
  };
  const one = apis.mt1.run(request);
  assert.equal(one.status, 0, JSON.stringify(one.reply.error ?? ''));
  const three = apis.mt3.run(request);
  assert.equal(three.reply.digest, one.reply.digest);
  assert.equal(apis.mt8.run(request).reply.digest, one.reply.digest, '8 threads (more than this machine may have cores)');
  assert.equal(apis.page2.run(request).reply.digest, one.reply.digest, 'the page\'s 4 x 8 tiles on 2 threads');
  const native = runNative(request, 2);
  assert.equal(native.reply.digest, one.reply.digest);
  console.log(`papa digest on WASM 1 and 3 threads and native 2 threads: ${one.reply.digest}`);
});

// The measures beside PAPA (docs/measures.md): every tensor bit for bit and the same digest on every build
// and thread count; head_stats' digest too, and its constants shared with a papa request of the same fields.
test('norm_attention, attention_rollout and head_stats: the same bits and digests on every build and thread count', { skip: missing ?? false }, () => {
  const sentence = 'The quick brown fox jumps over the lazy dog, while the cat watches from the window. ';
  const texts = [sentence.repeat(3), 'A short one.'];
  const requests = [
    { op: 'norm_attention', model: 'mini', texts, outputs: ['norms', 'layer_norms', 'res_ln', 'value_norms'] },
    { op: 'attention_rollout', model: 'mini', texts, source: 'raw' },
    { op: 'attention_rollout', model: 'mini', texts, source: 'effective' },
    { op: 'attention_rollout', model: 'mini', texts, source: 'norm' },
  ];
  for (const request of requests) {
    const ref = apis.plain.run(request);
    assert.equal(ref.status, 0, JSON.stringify(ref.reply.error ?? ''));
    assert.match(ref.reply.digest, /^sha256:[0-9a-f]{64}$/);
    const label = `${request.op}/${request.source ?? ''}`;
    for (const mt of ['mt1', 'mt3']) {
      const r = apis[mt].run(request);
      sameBits(`${label}: plain vs ${mt}`, ref.tensors, r.tensors);
      assert.equal(r.reply.digest, ref.reply.digest, `${label}: digest on ${mt}`);
    }
    const n = runNative(request, 2);
    sameBits(`${label}: plain WASM vs native 2 threads`, ref.tensors, n.tensors);
    assert.equal(n.reply.digest, ref.reply.digest, `${label}: native digest`);
    if (request.op === 'attention_rollout') {  // an invariant the numbers must keep: real rows sum to 1
      const t = ref.tensors.rollout, L = t.shape[3];
      const rows = t.data.length / L;
      let worst = 0;
      for (let r = 0; r < rows; r++) {
        let s = 0;
        for (let j = 0; j < L; j++) s += t.data[r * L + j];
        if (s !== 0) worst = Math.max(worst, Math.abs(s - 1));
      }
      assert.ok(worst < 1e-5, `${label}: rows sum to 1 within ${worst}`);
    }
    console.log(`${label} digest on WASM 1, 3 threads, plain and native 2 threads: ${ref.reply.digest}`);
  }
});

test('head_stats: one digest across builds and threads; the constants shared with papa', { skip: missing ?? (existsSync(posTask) ? false : 'no built-in tasks') }, () => {
  const task = { task: 'pos', task_jsonl: readFileSync(posTask, 'utf8') };
  // max_train 48: constants no earlier request of these sessions left in their cache
  const request = { op: 'head_stats', model: 'mini', ...task, max_train: 48, max_validation: 24, L: 32 };
  const one = apis.mt1.run(request);
  assert.equal(one.status, 0, JSON.stringify(one.reply.error ?? ''));
  assert.equal(one.reply.reused.constants, false);
  for (const name of ['entropy', 'confidence', 'cls', 'sep', 'first', 'punct', 'js']) {
    assert.equal(one.reply.stats[name].length, 4, name);
  }
  for (const row of one.reply.stats.js) for (const v of row) assert.ok(v >= 0 && v <= Math.log(2), `js ${v}`);
  const again = apis.mt1.run(request);
  assert.equal(again.reply.reused.constants, true, 'the second request reuses the averaged constants');
  assert.equal(again.reply.digest, one.reply.digest);
  assert.equal(apis.mt3.run(request).reply.digest, one.reply.digest);
  assert.equal(apis.plain.run(request).reply.digest, one.reply.digest);
  assert.equal(runNative(request, 2).reply.digest, one.reply.digest);
  const papa = apis.mt1.run({ op: 'papa', model: 'mini', ...task, max_train: 48, max_validation: 24, L: 32, seeds: [1],
                              fractions: [1, 0], orders: ['first_to_last'], baselines: false, mlm: false,
                              probe: { epochs: 1 } });
  assert.equal(papa.status, 0, JSON.stringify(papa.reply.error ?? ''));
  assert.equal(papa.reply.reused.constants, true, 'papa reuses the constants head_stats averaged');
  console.log(`head_stats digest on WASM 1, 3 threads, plain and native 2 threads: ${one.reply.digest}`);
});
