// decoder_compare.mjs: attnlab's decoders against onnxruntime-web (its WASM backend) on the same random weights, and
// attnlab's WASM build against its native one, side by side in one run: GPT-2-small and SmolLM2-135M shapes, a
// prefill (every position's logits) at 128 and 512 tokens and the generation of 64 greedy tokens after a 128-token
// prompt (the key/value cache on both sides), at 1 and 2 threads (docs/speed.md, "Decoders").
//
// bench/decoder_export.py (Debian's PyTorch) writes each shape for attnlab (safetensors) and as two ONNX graphs
// (prefill, decode step with past keys and values) into build/bench/decoders/ (never committed). attnlab runs as
// bench_decoder --serve, natively (build/native) and as WASM under node (build/wasm/bench_decoder.js), one process
// each holding the model and a pool per thread count; onnxruntime-web runs in one worker thread per thread count
// (bench/decoder_ort_worker.mjs). Before timing, onnxruntime's logits must agree with native attnlab's: the
// prefill's at the first length, and the prompt's last row and 3 decode steps fed attnlab's greedy ids, each within
// 1e-4 of the largest logit. Then the runners take turns case by case, round by round, so a busy moment of the
// machine hits all of them, each after a pause (bench/settle.mjs); printed: min and median per runner, the ratio
// onnxruntime / attnlab-WASM (above 1: attnlab faster), WASM / native, each runner's share of its own GEMM rate on
// the model's shapes, the CPU and the load average at the start and end of each shape.
//
//   node bench/decoder_compare.mjs [--shapes gpt2-small,smollm2-135m] [--rounds 3] [--lengths 128,512]
//        [--prompt 128] [--new 64] [--threads 1,2] [--no-native | --no-wasm] [--check-only]
//   AL_WASM_DIR (default build/wasm), AL_NATIVE_DIR (default build/native)
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { cpuName } from './cpu_name.mjs';
import { settle } from './settle.mjs';
import { median } from './median.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const shapes = opt('--shapes', 'gpt2-small,smollm2-135m').split(',');
const lengths = opt('--lengths', '128,512').split(',').map(Number);
const rounds = Number(opt('--rounds', '3'));
const prompt = Number(opt('--prompt', '128'));
const nNew = Number(opt('--new', '64'));
const THREADS = opt('--threads', '1,2').split(',').map(Number);
const withNative = !args.includes('--no-native');
const withWasm = !args.includes('--no-wasm'); // without it, the ratios are against native attnlab
const checkOnly = args.includes('--check-only'); // the logits check and nothing timed
const wasmDir = path.resolve(root, process.env.AL_WASM_DIR ?? 'build/wasm');
const nativeDir = path.resolve(root, process.env.AL_NATIVE_DIR ?? 'build/native');
const outDir = path.join(root, 'build/bench/decoders');
const TOLERANCE = 1e-4;

const wasmBench = path.join(wasmDir, 'bench_decoder.js');
const nativeBench = path.join(nativeDir, 'bench_decoder');
if (withWasm && !existsSync(wasmBench)) {
  console.error(`decoder_compare: no ${wasmBench} (cmake --build build/wasm --target bench_decoder)`);
  process.exit(1);
}
if (!existsSync(nativeBench)) {
  console.error(`decoder_compare: no ${nativeBench} (cmake --build build/native --target bench_decoder)`);
  process.exit(1);
}
const missing = shapes.filter((s) => !existsSync(path.join(outDir, s, 'decode.onnx')));
if (missing.length) {
  console.log(`exporting ${missing.join(', ')} with PyTorch into ${outDir} ...`);
  execFileSync('/usr/bin/python3', [path.join(root, 'bench/decoder_export.py'), outDir, missing.join(',')], { stdio: 'inherit' });
}

// one bench_decoder --serve process: ask(line) resolves with its next JSON reply
function serve(command, argv, name) {
  const child = spawn(command, argv, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const waiting = [];
  const queued = [];
  lines.on('line', (line) => {
    if (!line.startsWith('{')) return;
    const msg = JSON.parse(line);
    if (waiting.length) waiting.shift()(msg);
    else queued.push(msg);
  });
  const next = () => new Promise((resolve) => (queued.length ? resolve(queued.shift()) : waiting.push(resolve)));
  const expect = async (kind) => {
    for (;;) {
      const msg = await next();
      if (msg.kind === 'error') throw new Error(`${name}: ${msg.message}`);
      if (msg.kind === kind) return msg;
    }
  };
  return {
    name, expect, child,
    ask: async (line, kind) => {
      child.stdin.write(`${line}\n`);
      return expect(kind);
    },
    quit: () => { child.stdin.write('quit\n'); },
  };
}

const ortWorkers = {};
for (const t of THREADS) ortWorkers[t] = new Worker(new URL('./decoder_ort_worker.mjs', import.meta.url));
const ask = (w, msg) => new Promise((resolve, reject) => {
  w.once('message', (m) => (m.type === 'error' ? reject(new Error(`onnxruntime: ${m.message}`)) : resolve(m)));
  w.postMessage(msg);
});
const wasmPaths = `${path.join(root, 'node_modules/onnxruntime-web/dist')}/`;
const ortVersion = JSON.parse(readFileSync(path.join(root, 'node_modules/onnxruntime-web/package.json'), 'utf8')).version;

const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');
const ids = (n) => Array.from({ length: n }, (_, t) => 1000 + ((t * 7919) % 20000)); // bench_decoder's prompt_id

function maxRelDiff(a, o) {
  let diff = 0;
  let big = 1;
  for (let i = 0; i < a.length; i++) {
    diff = Math.max(diff, Math.abs(a[i] - o[i]));
    big = Math.max(big, Math.abs(a[i]));
  }
  return diff / big;
}

console.log(`node ${process.version}, CPU: ${cpuName()}, onnxruntime-web ${ortVersion}`);
console.log(`rounds ${rounds}; min / median; ratio = onnxruntime / attnlab WASM (> 1: attnlab faster); ` +
            'of GEMM = the work\'s FLOP rate over the same runner\'s GEMM rate on the model\'s shapes');

for (const shape of shapes) {
  const dir = path.join(outDir, shape);
  const hf = path.join(dir, 'hf');
  const loadStart = load();
  // the check first: native attnlab's logits against onnxruntime's on the same weights
  const prefix = path.join(dir, 'check');
  console.error(`${shape}: native attnlab's logits for the check ...`);
  execFileSync(nativeBench, [hf, '--check', prefix, '--lengths', String(lengths[0]), '--prompt', String(prompt)]);
  const V = JSON.parse(readFileSync(path.join(hf, 'config.json'), 'utf8')).vocab_size;
  const nativePrefill = new Float32Array(readFileSync(`${prefix}.prefill.f32`).buffer.slice(0));
  const nativeSteps = new Float32Array(readFileSync(`${prefix}.steps.f32`).buffer.slice(0));
  const feed = JSON.parse(readFileSync(`${prefix}.ids.json`, 'utf8'));
  const onnx = {
    prefill: new Uint8Array(readFileSync(path.join(dir, 'prefill.onnx'))),
    decode: new Uint8Array(readFileSync(path.join(dir, 'decode.onnx'))),
  };
  console.error(`${shape}: onnxruntime loads the two graphs and runs the check ...`);
  for (const t of THREADS) await ask(ortWorkers[t], { type: 'load', numThreads: t, wasmPaths, ...onnx });
  const checks = [];
  for (const t of THREADS) {
    const p = await ask(ortWorkers[t], { type: 'prefill', ids: ids(lengths[0]), want: true });
    const g = await ask(ortWorkers[t], { type: 'generate', ids: ids(prompt), n: 3, feed, want: true });
    const dPrefill = maxRelDiff(nativePrefill, p.logits);
    const dSteps = Math.max(...g.stepLogits.map((row, s) => maxRelDiff(nativeSteps.subarray(s * V, (s + 1) * V), row)));
    checks.push(`${t} thread${t > 1 ? 's' : ''}: prefill ${dPrefill.toExponential(1)}, steps ${dSteps.toExponential(1)}`);
    if (!(dPrefill <= TOLERANCE && dSteps <= TOLERANCE)) {
      throw new Error(`${shape}: onnxruntime and attnlab differ (${checks.at(-1)}; bound ${TOLERANCE} of the largest logit)`);
    }
  }
  if (checkOnly) {
    console.log(`${shape}: logits agree (largest difference over the largest logit), ${checks.join('; ')}`);
    continue;
  }
  const benchArgs = [hf, '--serve', '--threads', THREADS.join(','), '--lengths', lengths.join(','),
                     '--prompt', String(prompt), '--new', String(nNew)];
  const runners = [];
  if (withWasm) runners.push(serve(process.execPath, [wasmBench, ...benchArgs], 'attnlab WASM'));
  if (withNative || !withWasm) runners.push(serve(nativeBench, benchArgs, 'attnlab native'));
  console.error(`${shape}: attnlab loads the model (${runners.map((r) => r.name).join(', ')}) ...`);
  const info = await runners[0].expect('model');
  for (const r of runners) await r.expect('ready');
  const gemm = {};
  for (const r of runners) for (const t of THREADS) gemm[`${r.name} ${t}`] = (await r.ask(`gemm ${t}`, 'gemm_rate')).gflops;
  console.log(`\n${shape}: ${info.model_type}, ${info.layers} layers, ${info.hidden} wide, ${info.heads} heads / ` +
              `${info.kv_heads} key-value, vocabulary ${info.vocab}, ${(info.params / 1e6).toFixed(1)} M parameters`);
  console.log(`  logits agree (largest difference over the largest logit), ${checks.join('; ')}`);
  console.log(`  load average at start: ${loadStart}; GEMM rate on the model's shapes, GFLOP/s: ` +
              Object.entries(gemm).map(([k, g]) => `${k} thread(s) ${g.toFixed(1)}`).join(', '));

  // cases: prefill at each length, then generation; per case and thread count, every runner once a round
  const cases = [...lengths.map((L) => ({ kind: 'prefill', L })), { kind: 'generate' }];
  const times = {};
  const rec = (key, v) => (times[key] ??= []).push(v);
  for (const r of runners) for (const t of THREADS) await r.ask(`warm ${lengths[0]} ${t}`, 'warm');
  for (let round = 0; round < rounds; round++) {
    console.error(`${shape}: round ${round + 1} of ${rounds} (load average ${load()})`);
    for (const c of cases) {
      for (const t of THREADS) {
        const key = c.kind === 'prefill' ? `prefill ${c.L}` : 'generate';
        for (const r of runners) {
          await settle();
          if (c.kind === 'prefill') {
            const m = await r.ask(`prefill ${c.L} ${t}`, 'prefill');
            rec(`${key}|${t}|${r.name}`, m.ms);
            times[`${key}|gflop`] = m.gflop;
          } else {
            const m = await r.ask(`generate ${prompt} ${nNew} ${t}`, 'generate');
            rec(`${key}|${t}|${r.name}`, m.steps_ms);
            rec(`prompt|${t}|${r.name}`, m.prompt_ms);
            times[`${key}|gflop`] = m.steps_gflop;
            times['prompt|gflop'] = m.prompt_gflop;
          }
        }
        await settle();
        if (c.kind === 'prefill') {
          rec(`${key}|${t}|onnxruntime`, (await ask(ortWorkers[t], { type: 'prefill', ids: ids(c.L) })).ms);
        } else {
          const g = await ask(ortWorkers[t], { type: 'generate', ids: ids(prompt), n: nNew });
          rec(`${key}|${t}|onnxruntime`, g.stepsMs);
          rec(`prompt|${t}|onnxruntime`, g.promptMs);
        }
      }
    }
  }
  const f = (x, d = 1) => x.toFixed(d);
  const mm = (xs) => `${f(Math.min(...xs))} / ${f(median(xs))}`;
  console.log(`  case            threads   ${runners[0].name} ms`.padEnd(47) + 'onnxruntime ms       ratio (min, median)   ' +
              (withWasm && withNative ? 'native ms            WASM / native   of GEMM: WASM, native' : 'of GEMM'));
  for (const c of [...cases, { kind: 'prompt' }]) {
    const key = c.kind === 'prefill' ? `prefill ${c.L}` : c.kind;
    for (const t of THREADS) {
      const a = times[`${key}|${t}|${runners[0].name}`];
      const o = times[`${key}|${t}|onnxruntime`];
      const n = withWasm ? times[`${key}|${t}|attnlab native`] : null;
      const gflop = times[`${key}|gflop`];
      const share = (xs, name) => (gflop ? `${f(100 * gflop / (Math.min(...xs) / 1e3) / gemm[`${name} ${t}`], 0)}%` : '');
      const label = key === 'generate' ? `generate ${nNew}` : key === 'prompt' ? `prompt ${prompt} (cache)` : key;
      console.log(`  ${label.padEnd(18)}${String(t).padStart(4)}   ${mm(a).padEnd(21)}${mm(o).padEnd(21)}` +
                  `${f(Math.min(...o) / Math.min(...a), 2)}x, ${f(median(o) / median(a), 2)}x`.padEnd(22) +
                  (n ? `${mm(n).padEnd(21)}${f(Math.min(...a) / Math.min(...n), 2)}x`.padEnd(37) +
                       `${share(a, 'attnlab WASM')}, ${share(n, 'attnlab native')}` : `(${runners[0].name}) ${share(a, runners[0].name)}`));
    }
  }
  for (const t of THREADS) {
    const tps = (name) => (times[`generate|${t}|${name}`] ? f(nNew / (Math.min(...times[`generate|${t}|${name}`]) / 1e3), 1) : '-');
    console.log(`  generation, ${t} thread(s), best tokens/s: attnlab WASM ${tps('attnlab WASM')}, onnxruntime ` +
                `${tps('onnxruntime')}, attnlab native ${tps('attnlab native')}`);
  }
  console.log(`  (load average at end: ${load()})`);
  for (const r of runners) r.quit();
}
process.exit(0); // onnxruntime-web's worker threads keep node alive otherwise
