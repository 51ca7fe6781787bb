// compare.mjs: runs bench_encoder natively and as WASM under node and prints both side by side with
// their ratio. Each group (GEMM shapes, then each model shape) runs native then WASM, alternating,
// for several rounds; the best of each side is kept, so a busy moment on the machine hits both sides
// alike rather than one of them.
//   node bench/compare.mjs [--quick] [--rounds N]
//   AL_BUILD_DIR (default build/native) and AL_WASM_DIR (default build/wasm) locate the two builds.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const roundsAt = args.indexOf('--rounds');
const rounds = roundsAt >= 0 ? Number(args[roundsAt + 1]) : quick ? 1 : 3;
const nativeBin = `${process.env.AL_BUILD_DIR ?? 'build/native'}/bench_encoder`;
const wasmJs = `${process.env.AL_WASM_DIR ?? 'build/wasm'}/bench_encoder.js`;
for (const f of [nativeBin, wasmJs]) {
  if (!existsSync(f)) {
    console.error(`compare: ${f} is missing; build it first (the WASM build makes bench programs only when asked: cmake --build build/wasm --target bench_encoder)`);
    process.exit(1);
  }
}

function run(cmd, cmdArgs) {
  const r = spawnSync(cmd, cmdArgs, { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`${cmd} ${cmdArgs.join(' ')} failed: ${r.stderr.slice(-2000)}`);
  return r.stdout.trim().split('\n').map((l) => JSON.parse(l));
}

const key = (r) => (r.kind === 'gemm' ? `gemm ${r.shape}` : `${r.model} @ ${r.tokens} tokens`);
const value = (r) => (r.kind === 'gemm' ? r.gflops : r.tokens_per_s);
const best = { native: new Map(), wasm: new Map() };
const paths = {};
const order = [];
function keep(side, results) {
  for (const r of results) {
    if (r.kind === 'path') { paths[side] = r.kernels; continue; }
    if (r.kind === 'error') { console.error(`${side} error: ${r.message}`); continue; }
    const k = key(r);
    if (!order.includes(k)) order.push(k);
    const prev = best[side].get(k);
    if (!prev || value(r) > value(prev)) best[side].set(k, r);
  }
}

const extra = quick ? ['--quick'] : [];
for (const group of ['gemm', 'bert-tiny', 'minilm', 'bert-base']) {
  for (let round = 0; round < rounds; round++) {
    keep('native', run(nativeBin, [...extra, '--only', group]));
    keep('wasm', run(process.execPath, [wasmJs, ...extra, '--only', group]));
  }
}

console.log(`CPU: ${cpus()[0].model}, single thread; best of ${rounds} alternating round(s); ` +
            `kernels: native ${paths.native}, wasm ${paths.wasm}`);
const rows = [['benchmark', 'native', 'wasm (node)', 'wasm time / native time']];
for (const k of order) {
  const n = best.native.get(k), w = best.wasm.get(k);
  const unit = k.startsWith('gemm') ? 'GFLOP/s' : 'tokens/s';
  const fmt = (r) => (r ? `${value(r).toFixed(1)} ${unit}` : 'n/a');
  rows.push([k, fmt(n), fmt(w), n && w ? `${(value(n) / value(w)).toFixed(2)}x` : 'n/a']);
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
for (const row of rows) console.log(row.map((c, i) => c.padEnd(widths[i])).join('  '));
