// compare.mjs: runs bench_encoder natively and as WASM under node in one go and prints the results
// side by side with their ratio. Usage: node bench/compare.mjs [--quick]
//   AL_BUILD_DIR (default build/native) and AL_WASM_DIR (default build/wasm) locate the two builds.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';

const args = process.argv.slice(2);
const nativeBin = `${process.env.AL_BUILD_DIR ?? 'build/native'}/bench_encoder`;
const wasmJs = `${process.env.AL_WASM_DIR ?? 'build/wasm'}/bench_encoder.js`;
for (const f of [nativeBin, wasmJs]) {
  if (!existsSync(f)) {
    console.error(`compare: ${f} is missing; run scripts/test.sh (or build it) first`);
    process.exit(1);
  }
}

function run(cmd, cmdArgs) {
  const r = spawnSync(cmd, cmdArgs, { encoding: 'utf8', maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`${cmd} ${cmdArgs.join(" ")} failed: ${r.stderr.slice(-2000)}`);
  return r.stdout.trim().split('\n').map((l) => JSON.parse(l));
}

const key = (r) => (r.kind === 'gemm' ? `gemm ${r.shape}` : `${r.model} @ ${r.tokens} tokens`);
// Interleave the two runs per process to share the machine's state as fairly as possible.
const native = run(nativeBin, args);
const wasm = run(process.execPath, [wasmJs, ...args]);
const wasmBy = new Map(wasm.filter((r) => r.kind !== 'path').map((r) => [key(r), r]));

console.log(`CPU: ${cpus()[0].model}; native kernels: ${native[0].kernels}; wasm kernels: ${wasm[0].kernels}`);
const rows = [['benchmark', 'native', 'wasm (node)', 'native/wasm']];
for (const r of native) {
  if (r.kind === 'error') { console.error(`native error: ${r.message}`); continue; }
  if (r.kind === 'path') continue;
  const w = wasmBy.get(key(r));
  const [unit, n, m] = r.kind === 'gemm' ? ['GFLOP/s', r.gflops, w?.gflops] : ['tokens/s', r.tokens_per_s, w?.tokens_per_s];
  rows.push([key(r), `${n.toFixed(1)} ${unit}`, m ? `${m.toFixed(1)} ${unit}` : 'n/a', m ? `${(n / m).toFixed(2)}x` : 'n/a']);
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
for (const row of rows) console.log(row.map((c, i) => c.padEnd(widths[i])).join('  '));
