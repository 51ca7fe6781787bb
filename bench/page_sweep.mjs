// page_sweep.mjs: a PAPA sweep on a bert-base-shaped model in the page (headless Chromium, the page's threads:
// 2 on this machine) against the same request through the native CLI on 2 threads (docs/speed.md,
// "In the page"). The model has random weights (timing does not depend on their values) and attnlab-small-bert's
// tokenizer (bert-base-uncased's 30,522 WordPiece ids); it is written to a temporary folder and served as the
// page's only embedded model. The sweep is the quick preset on POS cut to --train / --validation examples (the
// ranking on the same cut) with --seeds seeds. Printed: the page's and the CLI's seconds per stage (the reply's
// "seconds") and wall time, their ratio, the two digests, the load average, and the time left that the progress
// bar's status predicted at several points of the run against the time the run then took. Between the two, the
// page's request also runs through the same WebAssembly build in node, outside any browser (its own node process, 2
// threads): page against that engine is what the page adds, that engine against the CLI is WebAssembly against
// native code. With --rounds N the three take N turns each, the one that goes first rotating. --no-engine leaves
// the engine out (the page against the CLI only: a full-size sweep takes the better part of an hour per side).
// --timeline FILE writes the first page run's status line as it changed ({s: seconds since the click, bar, text}
// per line, JSON lines): where the time of each stage and configuration went, and what the bar said meanwhile.
// --profile DIR writes CPU profiles of the first page run's engine threads (DIR/page-*.cpuprofile, through the
// DevTools protocol: worker_profile.mjs) and of the first engine run in node (DIR/engine/, node's --cpu-prof), which
// Chromium's DevTools open and worker_profile.mjs's summarizeProfile reads. Each side runs its host's kernel path:
// the page's worker the GEMM on 4 x 8 tiles, node the core's default 5 x 8 (docs/kernels.md, "The tile under
// Chromium"); the bits are the same.
//   node bench/page_sweep.mjs [--train 40] [--validation 20] [--seeds 3] [--layers 12] [--rounds 1] [--no-engine]
//                             [--timeline FILE] [--profile DIR]
//   AL_WASM_DIR (default build/wasm), AL_BUILD_DIR (default build/native)
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';

import { loadNode, readModelFiles } from '../wasm/attnlab_node.mjs';
import { serializeSafetensors } from '../wasm/safetensors.mjs';
import { randomTensors } from './random_tensors.mjs';
import { runPanel, launchChromium, openUrl, root, setControls, skipReason, startServer, watchStatus } from '../tests/e2e/helpers.mjs';
import { median } from './median.mjs';
import { compareProfiles, startWorkerProfiles } from './worker_profile.mjs';

const args = process.argv.slice(2);
const wasmDir = path.resolve(root, process.env.AL_WASM_DIR ?? 'build/wasm');

// The engine's side, in a node process of its own (this program run with --engine MODEL_DIR REQUEST_JSON): the
// threaded WebAssembly build on 2 threads, the page's request (with its task text); prints the reply and the seconds
// api.run took.
if (args[0] === '--engine') {
  const api = await loadNode(wasmDir, { alPoolSize: 1 }, { threaded: true, threads: 2 });
  api.addModel('m', readModelFiles(args[1]));
  const request = JSON.parse(readFileSync(args[2], 'utf8'));
  const t0 = performance.now();
  const { reply } = api.run({ ...request, op: 'papa', model: 'm' });
  const wall = (performance.now() - t0) / 1000;
  api.release();
  console.log(JSON.stringify({ reply, wall }));
  process.exit(reply.error ? 1 : 0);
}

const opt = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const nTrain = Number(opt('--train', '40'));
const nVal = Number(opt('--validation', '20'));
const seeds = Number(opt('--seeds', '3'));
const rounds = Number(opt('--rounds', '1'));
const layers = Number(opt('--layers', '12'));
const withEngine = !args.includes('--no-engine');
const timelineFile = opt('--timeline', null);
const profileDir = opt('--profile', null);
if (profileDir) mkdirSync(profileDir, { recursive: true });
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
if (skipReason) {
  console.error(`page_sweep: ${skipReason}`);
  process.exit(1);
}
const load = () => loadavg().map((x) => x.toFixed(2)).join(' ');

// bert-base's shapes, weights N(0, 0.02) from a seeded generator (LayerNorm weights 1, biases 0).
function writeModel(dir) {
  const V = 30522, D = 768, I = 3072, P = 512;
  mkdirSync(dir, { recursive: true });
  const { tensors, add } = randomTensors(1234);
  add('bert.embeddings.word_embeddings.weight', [V, D], 'w');
  add('bert.embeddings.position_embeddings.weight', [P, D], 'w');
  add('bert.embeddings.token_type_embeddings.weight', [2, D], 'w');
  add('bert.embeddings.LayerNorm.weight', [D], 'one');
  add('bert.embeddings.LayerNorm.bias', [D], 'zero');
  for (let l = 0; l < layers; l++) {
    const p = `bert.encoder.layer.${l}.`;
    for (const n of ['attention.self.query', 'attention.self.key', 'attention.self.value', 'attention.output.dense']) {
      add(`${p}${n}.weight`, [D, D], 'w');
      add(`${p}${n}.bias`, [D], 'zero');
    }
    add(`${p}attention.output.LayerNorm.weight`, [D], 'one');
    add(`${p}attention.output.LayerNorm.bias`, [D], 'zero');
    add(`${p}intermediate.dense.weight`, [I, D], 'w');
    add(`${p}intermediate.dense.bias`, [I], 'zero');
    add(`${p}output.dense.weight`, [D, I], 'w');
    add(`${p}output.dense.bias`, [D], 'zero');
    add(`${p}output.LayerNorm.weight`, [D], 'one');
    add(`${p}output.LayerNorm.bias`, [D], 'zero');
  }
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({
    architectures: ['BertModel'], model_type: 'bert', vocab_size: V, hidden_size: D, num_hidden_layers: layers,
    num_attention_heads: 12, intermediate_size: I, hidden_act: 'gelu', max_position_embeddings: P, type_vocab_size: 2,
    layer_norm_eps: 1e-12, pad_token_id: 0,
  }, null, 2));
  writeFileSync(path.join(dir, 'model.safetensors'), serializeSafetensors(tensors, { format: 'pt' }));
  for (const f of ['vocab.txt', 'tokenizer_config.json']) copyFileSync(path.join(root, 'models/attnlab-small-bert', f), path.join(dir, f));
}

const work = mkdtempSync(path.join(tmpdir(), 'attnlab-page-sweep-'));
const models = path.join(work, 'models');
const id = 'bert-base-random';
console.log(`writing a bert-base-shaped model (${layers} layers, random weights) ...`);
writeModel(path.join(models, id));
writeFileSync(path.join(models, 'index.json'), JSON.stringify([{
  id, name: `bert-base shape, random weights (${layers} layers)`, path: id, default: true,
  files: ['config.json', 'model.safetensors', 'vocab.txt', 'tokenizer_config.json'],
}]));

const server = await startServer({ AL_MODELS_DIR: models });
const pages = [], engines = [], natives = [];
const browser = await launchChromium();

// One sweep in a freshly opened page: its request, reply, wall time and the progress bar's predictions.
async function pageRun() {
  const p = await openUrl(browser, server.url);
  await p.waitForFunction(() => (window.attnlab?.app?.run && !window.attnlab.app.job) ||
                                 document.getElementById('model-error')?.textContent, null, { timeout: 3600e3 });
  const modelError = await p.evaluate(() => document.getElementById('model-error')?.textContent);
  if (modelError) throw new Error(`the page refused the model: ${modelError}`);
  const threads = await p.evaluate(() => document.getElementById('engine-status')?.textContent ?? '');
  await setControls(p, { 'papa-task': 'pos', 'papa-preset': 'quick', 'papa-train': String(nTrain), 'papa-val': String(nVal),
       'papa-rank-n': String(nTrain), 'papa-seeds': Array.from({ length: seeds }, (_, i) => i + 1).join(','), 'papa-mlm': false });
  await watchStatus(p, 'papa', '__papaStatus');
  const loadBefore = load();
  const stopProfiles = profileDir && !pages.length ? await startWorkerProfiles(browser) : null;
  const t0 = await p.evaluate(() => performance.now());
  await runPanel(p, 'papa', 'papa', 6 * 3600e3);
  const t1 = await p.evaluate(() => performance.now());
  if (stopProfiles) {
    (await stopProfiles()).forEach(({ url, profile }, k) =>
      writeFileSync(path.join(profileDir, `page-${k}-${path.basename(url)}.cpuprofile`), JSON.stringify(profile)));
  }
  const { request, taskText, reply, error } = await p.evaluate(() => {
    const last = window.attnlab.panels.papa.last;
    if (!last) return { error: document.getElementById('papa-error').textContent || document.getElementById('papa-status').textContent };
    const { task_jsonl, import: imp, ...request } = last.request;
    return { request, taskText: task_jsonl, reply: last.reply };
  });
  if (error) throw new Error(`the page's sweep: ${error}`);
  const wall = (t1 - t0) / 1000;
  // the bar's predictions: the time left it showed against the time the run then took
  const statuses = await p.evaluate(() => window.__papaStatus);
  const predictions = [];
  for (const at of [0.1, 0.25, 0.5, 0.75]) {
    const s = statuses.find((x) => (x.t - t0) / 1000 >= at * wall && /left/.test(x.text));
    if (!s) continue;
    const m = /about (\d+) (s|min) left/.exec(s.text);
    const said = m ? Number(m[1]) * (m[2] === 'min' ? 60 : 1) : (/less than a second/.test(s.text) ? 0.5 : NaN);
    predictions.push({ elapsed: (s.t - t0) / 1000, said, took: (t1 - s.t) / 1000, bar: s.bar });
  }
  const timeline = statuses.map((x) => ({ s: Number(((x.t - t0) / 1000).toFixed(3)), bar: x.bar, text: x.text }));
  await p.context().close();
  return { request, taskText, reply, wall, predictions, timeline, threads: threads.trim(), loads: `${loadBefore} before, ${load()} after` };
}

// The page's request (with its task text) through the WebAssembly engine in node, in a process of its own.
function engineRun({ request, taskText }) {
  const reqPath = path.join(work, 'engine_request.json');
  const { model, outputs, ...rest } = request;
  writeFileSync(reqPath, JSON.stringify({ ...rest, ...(taskText ? { task_jsonl: taskText } : {}) }));
  const loadBefore = load();
  const profile = profileDir && !engines.length ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(profileDir, 'engine')] : [];
  const out = execFileSync(process.execPath, [...profile, process.argv[1], '--engine', path.join(models, id), reqPath],
                           { cwd: root, encoding: 'utf8', maxBuffer: 256 << 20 });
  const { reply, wall } = JSON.parse(out.trim().split('\n').pop());
  return { reply, wall, loads: `${loadBefore} before, ${load()} after` };
}

// The same request through the native CLI on 2 threads.
function nativeRun(request) {
  const reqPath = path.join(work, 'papa.json');
  const { model, outputs, ...rest } = request;
  writeFileSync(reqPath, JSON.stringify({ ...rest, op: 'papa', model_dir: path.join(models, id) }));
  const loadBefore = load();
  const n0 = process.hrtime.bigint();
  const reply = JSON.parse(execFileSync(cli, ['run', reqPath, '--threads', '2'], { cwd: root, encoding: 'utf8', maxBuffer: 256 << 20 }));
  return { reply, wall: Number(process.hrtime.bigint() - n0) / 1e9, loads: `${loadBefore} before, ${load()} after` };
}

// The first page run's engine threads against the first engine run's in node, function by function (self time).
// The page's calling thread is its worker.mjs, node's its main thread (the first profile node writes); the pool's
// threads follow in order on both sides.
function printProfiles() {
  const read = (f) => JSON.parse(readFileSync(f, 'utf8'));
  const pageFiles = readdirSync(profileDir).filter((f) => f.startsWith('page-')).map((f) => path.join(profileDir, f))
    .sort((x, y) => Number(!x.endsWith('worker.mjs.cpuprofile')) - Number(!y.endsWith('worker.mjs.cpuprofile')));
  const engineDir = path.join(profileDir, 'engine');
  const engineFiles = withEngine ? readdirSync(engineDir).filter((f) => f.endsWith('.cpuprofile'))
    .sort((x, y) => Number(x.split('.').at(-2)) - Number(y.split('.').at(-2))).map((f) => path.join(engineDir, f)) : [];
  console.log(`CPU profiles of the first page and engine runs: ${profileDir}`);
  pageFiles.forEach((f, k) => {
    if (!engineFiles[k]) return;
    console.log(`  ${k === 0 ? 'the calling thread' : `pool thread ${k}`}: self seconds, page / engine in node ` +
                `(${path.basename(f)} against ${path.basename(engineFiles[k])})`);
    for (const r of compareProfiles(read(f), read(engineFiles[k]))) {
      console.log(`    ${r.name.slice(0, 40).padEnd(40)} ${(r.a / 1000).toFixed(1).padStart(7)} ${(r.b / 1000).toFixed(1).padStart(7)} ` +
                  `${r.b > 0 ? (r.a / r.b).toFixed(2) : ''}`);
    }
  });
}

let status = 1;
try {
  // The side that goes first rotates with the round (page, engine, CLI; engine, CLI, page; ...), so a change of the
  // machine's speed during the run (a VM's clock moves: docs/speed.md) falls on every side rather than on one. The
  // first round starts with the page, whose request the other two then run.
  const sides = [async () => pages.push(await pageRun()), async () => engines.push(engineRun(pages[0])),
                 async () => natives.push(nativeRun(pages[0].request))].filter((_, k) => withEngine || k !== 1);
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < sides.length; k++) await sides[(r + k) % sides.length]();
  }
  const none = { wall: NaN, loads: 'not run', reply: {} };
  if (!withEngine) for (let r = 0; r < rounds; r++) engines.push(none);
  const { reply } = pages[0];
  console.log(`page: ${pages[0].threads}; engine: the same WebAssembly build in node, 2 threads; CLI: native, 2 threads`);
  console.log(`PAPA sweep, quick preset on POS cut to ${nTrain} / ${nVal} examples (ranking on ${nTrain}), ${seeds} seeds, ` +
              `MLM off, bert-base shape (${layers} layers, random weights), ${reply.configs.length} configurations, ` +
              `${rounds} round${rounds === 1 ? '' : 's'} (the side that goes first rotating)`);
  for (let r = 0; r < rounds; r++) {
    console.log(withEngine
      ? `round ${r + 1}: page ${pages[r].wall.toFixed(1)} s (load ${pages[r].loads}), ` +
        `engine ${engines[r].wall.toFixed(1)} s (load ${engines[r].loads}), ` +
        `CLI ${natives[r].wall.toFixed(1)} s (load ${natives[r].loads}); page / engine ` +
        `${(pages[r].wall / engines[r].wall).toFixed(2)}x, engine / CLI ${(engines[r].wall / natives[r].wall).toFixed(2)}x, ` +
        `page / CLI ${(pages[r].wall / natives[r].wall).toFixed(2)}x`
      : `round ${r + 1}: page ${pages[r].wall.toFixed(1)} s (load ${pages[r].loads}), ` +
        `CLI ${natives[r].wall.toFixed(1)} s (load ${natives[r].loads}); page / CLI ${(pages[r].wall / natives[r].wall).toFixed(2)}x`);
  }
  const ratio = (x, y) => (y > 0 && x > 0 ? (x / y).toFixed(2) : '');
  console.log(`${'stage, median over rounds'.padEnd(26)} ${'page s'.padStart(8)} ${'engine s'.padStart(9)} ${'CLI s'.padStart(8)} ` +
              `${'page/engine'.padStart(12)} ${'engine/CLI'.padStart(11)} ${'page/CLI'.padStart(9)}`);
  const row = (name, a, e, n) => console.log(`${name.padEnd(26)} ${a.toFixed(1).padStart(8)} ${e.toFixed(1).padStart(9)} ` +
    `${n.toFixed(1).padStart(8)} ${ratio(a, e).padStart(12)} ${ratio(e, n).padStart(11)} ${ratio(a, n).padStart(9)}`);
  const stageOf = (runs, st) => median(runs.map((x) => x.reply.seconds?.[st] ?? (x === none ? NaN : 0)));
  for (const st of ['constants', 'ranking', 'features', 'probes', 'mlm']) {
    const a = stageOf(pages, st), e = stageOf(engines, st), n = stageOf(natives, st);
    if (a || n) row(st, a, e, n);
  }
  row('wall', median(pages.map((x) => x.wall)), median(engines.map((x) => x.wall)), median(natives.map((x) => x.wall)));
  const digests = new Set([...pages, ...engines, ...natives].filter((x) => x !== none).map((x) => x.reply.digest));
  console.log(`digests: ${digests.size === 1 ? `one, ${reply.digest.slice(0, 19)}…, in every run` : `DIFFER: ${[...digests].join(', ')}`}`);
  console.log('the progress bar\'s time left against the time the run then took (first page run):');
  for (const x of pages[0].predictions) {
    console.log(`  at ${x.elapsed.toFixed(0)} s (bar ${(100 * x.bar).toFixed(0)}%): said ${x.said} s, took ${x.took.toFixed(0)} s`);
  }
  if (profileDir) printProfiles();
  if (timelineFile) {
    writeFileSync(timelineFile, pages[0].timeline.map((x) => JSON.stringify(x)).join('\n') + '\n');
    console.log(`the first page run's status line, ${pages[0].timeline.length} changes: ${timelineFile}`);
  }
  console.log(`load ${load()} at the end`);
  status = digests.size === 1 ? 0 : 1;
} finally {
  await browser.close();
  server.child.kill();
  rmSync(work, { recursive: true, force: true });
}
process.exit(status);
