// lanes.mjs: the native build's 8-lane (x86-avx2) and 4-lane (x86-sse) kernel paths side by side:
// GEMM GFLOP/s and forward tokens/s (bench_encoder), then pretraining tokens/s (bench_pretrain
// --paths, which alternates the paths in one process). Each bench_encoder group runs on the two
// paths alternately (AL_KERNELS, src/kernels/path.h) for several rounds and the best of each is kept,
// so a busy moment on the machine hits both sides alike. Both paths give the same bits.
//   node bench/lanes.mjs [--quick] [--rounds N] [--threads N] [--no-pretrain]
//   AL_BUILD_DIR (default build/native) locates the build.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cpus } from 'node:os';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const opt = (name, dflt) => (args.indexOf(name) >= 0 ? Number(args[args.indexOf(name) + 1]) : dflt);
const rounds = opt('--rounds', quick ? 1 : 3);
const threads = opt('--threads', 1);
const build = process.env.AL_BUILD_DIR ?? 'build/native';
const encoder = `${build}/bench_encoder`, pretrain = `${build}/bench_pretrain`;
if (!existsSync(encoder)) {
  console.error(`lanes: ${encoder} is missing; build the native tree first`);
  process.exit(1);
}
const paths = ['x86-avx2', 'x86-sse'];

function run(cmd, cmdArgs, env = {}) {
  const r = spawnSync(cmd, cmdArgs, { encoding: 'utf8', maxBuffer: 1 << 24, env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`${cmd} ${cmdArgs.join(' ')} failed: ${r.stderr.slice(-2000)}`);
  return r.stdout;
}

const key = (r) => (r.kind === 'gemm' ? `gemm ${r.shape}` : `${r.model} @ ${r.tokens} tokens`);
const value = (r) => (r.kind === 'gemm' ? r.gflops : r.tokens_per_s);
const best = Object.fromEntries(paths.map((p) => [p, new Map()]));
const order = [];
const extra = [...(quick ? ['--quick'] : []), '--threads', String(threads)];
for (const group of ['gemm', 'minilm', 'bert-base']) {
  for (let round = 0; round < rounds; round++) {
    for (const path of paths) {
      for (const line of run(encoder, [...extra, '--only', group], { AL_KERNELS: path }).trim().split('\n')) {
        const r = JSON.parse(line);
        if (r.kind === 'path') {
          if (r.kernels !== path) throw new Error(`asked for kernel path ${path}, ran ${r.kernels} (no AVX2 here?)`);
          continue;
        }
        if (r.kind === 'error') throw new Error(r.message);
        const k = key(r);
        if (!order.includes(k)) order.push(k);
        const prev = best[path].get(k);
        if (!prev || value(r) > value(prev)) best[path].set(k, r);
      }
    }
  }
}

console.log(`CPU: ${cpus()[0].model}, ${threads} thread(s); best of ${rounds} alternating round(s)`);
const rows = [['benchmark', '8 lanes (x86-avx2)', '4 lanes (x86-sse)', '8 / 4']];
for (const k of order) {
  const a = best['x86-avx2'].get(k), b = best['x86-sse'].get(k);
  const unit = k.startsWith('gemm') ? 'GFLOP/s' : 'tokens/s';
  rows.push([k, `${value(a).toFixed(1)} ${unit}`, `${value(b).toFixed(1)} ${unit}`, `${(value(a) / value(b)).toFixed(2)}x`]);
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
for (const row of rows) console.log(row.map((c, i) => c.padEnd(widths[i])).join('  '));

if (!args.includes('--no-pretrain') && existsSync(pretrain)) {
  console.log('');
  process.stdout.write(run(pretrain, ['--paths', '--steps', quick ? '2' : '4']));
}
