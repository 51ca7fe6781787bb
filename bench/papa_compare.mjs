// papa_compare.mjs: a quick PAPA sweep on one model (attnlab-mini-bert unless --model DIR), natively (the
// CLI) and in WebAssembly (the module the page's worker runs, under node), side by side: wall time per
// stage and the ratio WASM / native, and that both give the same digest. Native and WASM alternate for
// each task.
//   node bench/papa_compare.mjs [--model DIR] [--tasks pos,agreement] [--orders lambda] [--seeds 1,2,3]
//   AL_BUILD_DIR (default build/native) and AL_WASM_DIR (default build/wasm) locate the two builds.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadNode, readModelFiles } from '../wasm/attnlab_node.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const tasks = opt('--tasks', 'pos,agreement').split(',');
const orders = opt('--orders', 'lambda').split(',');
const seeds = opt('--seeds', '1,2,3').split(',').map(Number);
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const wasmDir = path.resolve(root, process.env.AL_WASM_DIR ?? 'build/wasm');
const modelDir = path.resolve(root, opt('--model', 'models/attnlab-mini-bert'));
for (const f of [cli, path.join(wasmDir, 'attnlab_wasm.js')])
  if (!existsSync(f)) { console.error(`papa_compare: ${f} is missing; build first (scripts/test.sh)`); process.exit(1); }

const api = await loadNode(wasmDir);
const files = readModelFiles(modelDir);
api.addModel('bench', files);
const work = mkdtempSync(path.join(tmpdir(), 'attnlab-papa-bench-'));
console.log(`load average before: ${loadavg().map((x) => x.toFixed(2)).join(' ')} (${(await import('node:os')).cpus().length} cores)`);
const stages = ['constants', 'ranking', 'features', 'probes', 'mlm'];
console.log(`| task | side | total s | ${stages.join(' s | ')} s | digest |`);
console.log(`|---|---|---|${stages.map(() => '---').join('|')}|---|`);
try {
  for (const task of tasks) {
    const taskText = readFileSync(path.join(root, 'build/data/tasks', `${task}.jsonl`), 'utf8');
    const request = { op: 'papa', task, task_jsonl: taskText, orders, seeds };
    const reqPath = path.join(work, `${task}.json`);
    writeFileSync(reqPath, JSON.stringify({ ...request, model_dir: modelDir }));
    let t0 = performance.now();
    const native = JSON.parse(execFileSync(cli, ['run', reqPath], { encoding: 'utf8', maxBuffer: 256 << 20 }));
    const nativeS = (performance.now() - t0) / 1000;
    t0 = performance.now();
    const w = api.run({ ...request, model: 'bench' });
    const wasmS = (performance.now() - t0) / 1000;
    if (w.status !== 0) throw new Error(JSON.stringify(w.reply.error));
    for (const [side, reply, total] of [['native', native, nativeS], ['wasm', w.reply, wasmS]])
      console.log(`| ${task} | ${side} | ${total.toFixed(1)} | ${stages.map((s) => reply.seconds[s].toFixed(1)).join(' | ')} | ${reply.digest.slice(7, 19)} |`);
    console.log(`| ${task} | WASM / native | ${(wasmS / nativeS).toFixed(2)} | ${stages.map((s) => (w.reply.seconds[s] / Math.max(native.seconds[s], 1e-9)).toFixed(2)).join(' | ')} | ${w.reply.digest === native.digest ? 'identical' : 'DIFFERENT'} |`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
  api.release();
}
console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
