// peer_compare.mjs: attnlab's WebAssembly build against onnxruntime-web (its WASM backend), on the same
// weights, in one node process: bert-tiny, MiniLM-L6 and bert-base shapes (random weights) at 32, 128 and 512
// tokens, and, asked for, attnlab-small-bert (the trained default model, 128 positions), 1 and 2 threads each
// side. bench/peer_export.py (Debian's PyTorch) writes each shape for attnlab (safetensors) and as ONNX into
// build/bench/peer/ (never committed). Before timing, the two last hidden
// states must agree to 1e-4. The four runners (attnlab 1 thread, onnxruntime 1, attnlab 2, onnxruntime 2)
// take turns round by round, so a busy moment of the machine hits all of them; printed: min and median
// milliseconds per forward pass of each, the ratio onnxruntime / attnlab (above 1: attnlab is faster) and
// the load average when the shape started and ended. Each runner starts after a pause (bench/settle.mjs).
//   node bench/peer_compare.mjs [--shapes bert-tiny,minilm-l6,bert-base,attnlab-small-bert] [--lengths 32,128,512] [--rounds 7]
//   AL_WASM_DIR (default build/wasm): attnlab_wasm_mt.{js,wasm}
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Worker } from 'node:worker_threads';

import { loadNode, readModelFiles } from '../wasm/attnlab_node.mjs';
import { cpuName } from './cpu_name.mjs';
import { settle, SETTLE_MS } from './settle.mjs';
import { median } from './median.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const shapes = opt('--shapes', 'bert-tiny,minilm-l6,bert-base').split(',');
const lengths = opt('--lengths', '32,128,512').split(',').map(Number);
const rounds = Number(opt('--rounds', '7'));
const wasmDir = path.resolve(root, process.env.AL_WASM_DIR ?? 'build/wasm');
const peerDir = path.join(root, 'build/bench/peer');
const THREADS = [1, 2];

if (!existsSync(path.join(wasmDir, 'attnlab_wasm_mt.js'))) {
  console.error(`peer_compare: no threaded WASM build in ${wasmDir} (cmake --build build/wasm --target attnlab_wasm_mt)`);
  process.exit(1);
}
const missing = shapes.filter((s) => !existsSync(path.join(peerDir, s, 'model.onnx')));
if (missing.length) {
  console.log(`exporting ${missing.join(', ')} with PyTorch into ${peerDir} ...`);
  execFileSync('/usr/bin/python3', [path.join(root, 'bench/peer_export.py'), peerDir, missing.join(',')], { stdio: 'inherit' });
}

// onnxruntime-web: its WASM files ship in the package. Its thread count is global to a module instance,
// so each count runs in its own worker thread (bench/peer_ort_worker.mjs), timed there around run().
const wasmPaths = `${path.join(root, 'node_modules/onnxruntime-web/dist')}/`;
const ortVersion = JSON.parse(readFileSync(path.join(root, 'node_modules/onnxruntime-web/package.json'), 'utf8')).version;
const ortWorkers = {};
for (const t of THREADS) ortWorkers[t] = new Worker(new URL('./peer_ort_worker.mjs', import.meta.url));
const ask = (w, msg) => new Promise((resolve, reject) => {
  w.once('message', (m) => (m.type === 'error' ? reject(new Error(`onnxruntime: ${m.message}`)) : resolve(m)));
  w.postMessage(msg);
});

const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
const now = () => Number(process.hrtime.bigint()) / 1e6;

console.log(`node ${process.version}, CPU: ${cpuName()}, onnxruntime-web ${ortVersion}`);
console.log(`rounds ${rounds}, ${SETTLE_MS} ms between runners; ms per forward pass (batch 1), min / median; ratio = onnxruntime / attnlab (> 1: attnlab faster)`);

const attnlab = {};
for (const t of THREADS) attnlab[t] = await loadNode(wasmDir, {}, { threaded: true, threads: t });

for (const shape of shapes) {
  const dir = path.join(peerDir, shape);
  const files = readModelFiles(dir, (name) => name !== 'model.onnx');
  for (const t of THREADS) attnlab[t].addModel(shape, files);
  const onnx = new Uint8Array(readFileSync(path.join(dir, 'model.onnx')));
  for (const t of THREADS) await ask(ortWorkers[t], { type: 'load', numThreads: t, wasmPaths, onnx });
  const config = JSON.parse(new TextDecoder().decode(files['config.json']));
  const D = config.hidden_size;
  console.log(`\n${shape}  (load average at start: ${load()}; onnxruntime-web: ${THREADS.join(' and ')} threads, one module each, ` +
              `attnlab: ${THREADS.map((t) => attnlab[t].threads).join(' and ')})`);
  console.log('tokens  threads   attnlab min/median     onnxruntime min/median   ratio (min, median)');
  for (const L of lengths) {
    if (L > config.max_position_embeddings) {
      console.log(`${String(L).padStart(6)}  (skipped: ${shape} has ${config.max_position_embeddings} positions)`);
      continue;
    }
    const ids = Array.from({ length: L }, (_, i) => 1000 + ((i * 7919) % 20000));
    // the last layer's states, as the exported ONNX graph returns (not every layer's)
    const request = { op: 'attention', model: shape, input_ids: [ids], outputs: ['last_hidden_state'] };
    const runAttnlab = (t) => {
      const r = attnlab[t].run(request);
      if (r.status !== 0) throw new Error(`attnlab: ${JSON.stringify(r.reply.error)}`);
      return r.tensors.last_hidden_state.data; // [1, L, D]
    };
    const runOrt = (t) => ask(ortWorkers[t], { type: 'run', ids });
    // agreement first (and a warm-up of every runner)
    for (const t of THREADS) {
      const a = runAttnlab(t);
      const o = (await runOrt(t)).data;
      let max = 0;
      for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - o[i]));
      if (!(max <= 1e-4)) throw new Error(`${shape} L=${L} ${t} threads: attnlab and onnxruntime differ by ${max} (> 1e-4)`);
    }
    const times = Object.fromEntries(THREADS.flatMap((t) => [[`a${t}`, []], [`o${t}`, []]]));
    for (let r = 0; r < rounds; r++) {
      for (const t of THREADS) {
        await settle();
        const t0 = now();
        runAttnlab(t);
        times[`a${t}`].push(now() - t0);
        await settle();
        times[`o${t}`].push((await runOrt(t)).ms);
      }
    }
    for (const t of THREADS) {
      const a = times[`a${t}`];
      const o = times[`o${t}`];
      const f = (x) => x.toFixed(1).padStart(8);
      console.log(`${String(L).padStart(6)}  ${String(t).padStart(7)}  ${f(Math.min(...a))} /${f(median(a))}     ` +
                  `${f(Math.min(...o))} /${f(median(o))}     ${(Math.min(...o) / Math.min(...a)).toFixed(2)}x, ` +
                  `${(median(o) / median(a)).toFixed(2)}x`);
    }
  }
  console.log(`(load average at end: ${load()})`);
}
for (const t of THREADS) attnlab[t].release();
process.exit(0); // onnxruntime-web's worker threads keep node alive otherwise
