// make_examples.mjs: the PAPA panel's stored examples (web/examples/, docs/papa-page.md "Stored examples").
// For every example of web/papa_request.js's examples() and every embedded encoder with weights (models/index.json),
// it builds exactly the request the page sends (buildRequest on the page's default settings and the example's
// patch, the built-in task's text as task_jsonl), runs it through the native CLI, whose reply has the page's
// digest, and stores what the page draws: the reply and the shown corner of the constant matrices. Then the
// embedded causal models' examples (web/lm_examples.js: a generation, "Attention needed" and its head roles), made
// by scripts/make_lm_examples.mjs with the decoder panels' requests; one index lists both.
//   node scripts/make_examples.mjs [--threads N] [--only ID[,ID]] [--models ID[,ID]]
// Needs build/native/attnlab and build/data (scripts/setup.sh). Prints each record's CPU and wall time.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { CONSTANTS_SHOWN as SHOWN } from '../web/papa_examples.js';
import { buildRequest, cliRequest, exampleFile, examples, valuesOf } from '../web/papa_request.js';
import { loadEngineTables } from './engine_tables.mjs';
import { makeLmExamples } from './make_lm_examples.mjs';
import { readTensor } from './safetensors.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, def) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : def;
};
const threads = Number(arg('--threads', '2'));
const only = arg('--only', null)?.split(',');
const onlyModels = arg('--models', null)?.split(',');
const cli = path.join(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
loadEngineTables(cli); // the built-in tasks, from the engine
const tasksDir = path.join(root, 'build/data/tasks');
const outDir = path.join(root, 'web/examples');

if (!existsSync(cli)) throw new Error(`no native CLI at ${cli}: build it first (README.md)`);
const weights = (m) => m.files.some((f) => /safetensors|pytorch_model\.bin/.test(f));
const embedded = JSON.parse(readFileSync(path.join(root, 'models/index.json'), 'utf8'))
  .filter(weights).filter((m) => !onlyModels || onlyModels.includes(m.id));
const models = embedded.filter((m) => !m.causal); // encoders: the PAPA panel's tasks
const causal = embedded.filter((m) => m.causal); // language models: the decoder panels' examples
mkdirSync(outDir, { recursive: true });
const work = mkdtempSync(path.join(tmpdir(), 'attnlab-examples-'));

// The first SHOWN x SHOWN positions of every head's constant matrix, on 256 levels of the largest weight
// shown (the figure's colour scale has 256 colours): { shape: [NL, H, L, L], n, max, levels: base64 }.
function shownConstants({ shape, data }) {
  const [NL, H, L] = shape;
  const n = Math.min(L, SHOWN);
  let max = 0;
  for (let lh = 0; lh < NL * H; lh++) for (let q = 0; q < n; q++) for (let k = 0; k < n; k++) max = Math.max(max, data[lh * L * L + q * L + k]);
  const levels = new Uint8Array(NL * H * n * n);
  for (let lh = 0; lh < NL * H; lh++) {
    for (let q = 0; q < n; q++) {
      for (let k = 0; k < n; k++) levels[(lh * n + q) * n + k] = max > 0 ? Math.round((data[lh * L * L + q * L + k] / max) * 255) : 0;
    }
  }
  return { shape, n, max, levels: Buffer.from(levels).toString('base64') };
}

const index = [];
// The index grows as records are made, so a partial run still lists what it made (an entry is one example on one
// model: the decoder's head roles and "Attention needed" share a file).
function writeIndex() {
  const key = (e) => `${e.example}\t${e.model}`;
  const old = existsSync(path.join(outDir, 'index.json')) ? JSON.parse(readFileSync(path.join(outDir, 'index.json'), 'utf8')) : [];
  const merged = [...old.filter((o) => !index.some((n) => key(n) === key(o))), ...index]
    .sort((a, b) => a.file.localeCompare(b.file) || a.example.localeCompare(b.example));
  writeFileSync(path.join(outDir, 'index.json'), `${JSON.stringify(merged, null, 1)}\n`);
}
for (const ex of examples().filter((e) => !only || only.includes(e.id))) {
  const values = valuesOf(ex.patch);
  const jsonl = readFileSync(path.join(tasksDir, `${values.papa_task}.jsonl`), 'utf8');
  const args = buildRequest(values, 0, { jsonl });
  for (const m of models) {
    const reqPath = path.join(work, 'request.json');
    const outPath = path.join(work, 'constants.safetensors');
    // cliRequest leaves out the page's outputs; the page asks for the constants too (their figure)
    writeFileSync(reqPath, JSON.stringify({ ...cliRequest(args, path.join(root, 'models', m.path)), outputs: args.outputs }));
    const timeFile = path.join(work, 'time.txt');
    const run = spawnSync('/usr/bin/time', ['-f', '%U %S %e', '-o', timeFile, cli, 'run', reqPath, '--threads', String(threads), '--out', outPath],
                          { cwd: root, encoding: 'utf8', maxBuffer: 256 << 20 });
    if (run.status !== 0) throw new Error(`${ex.id} on ${m.id}: attnlab run failed (${run.status}): ${run.stderr}`);
    const [user, sys, wall] = readFileSync(timeFile, 'utf8').trim().split(/\s+/).slice(-3).map(Number);
    const reply = JSON.parse(run.stdout);
    reply.model = `models/${m.path}`; // the CLI names the folder it read, this machine's absolute path
    const { model: _id, task_jsonl: _text, outputs: _outputs, ...request } = args;
    const record = {
      format: 1, example: ex.id, model: m.id, settings: ex.patch, request,
      made: { by: 'scripts/make_examples.mjs', threads, cpu_seconds: Math.round((user + sys) * 10) / 10, wall_seconds: wall },
      reply, constants: shownConstants(readTensor(outPath, 'constants')),
    };
    const file = exampleFile(ex.id, m.id);
    writeFileSync(path.join(outDir, file), `${JSON.stringify(record)}\n`);
    const bytes = statSync(path.join(outDir, file)).size;
    index.push({ example: ex.id, model: m.id, file, task: reply.task.id, digest: reply.digest, engine: reply.engine,
                 threads, cpu_seconds: record.made.cpu_seconds, wall_seconds: wall, bytes });
    console.log(`${file}: ${(user + sys).toFixed(1)} s CPU, ${wall.toFixed(1)} s wall on ${threads} threads, ${bytes} bytes, digest ${reply.digest.slice(0, 19)}…`);
    writeIndex();
  }
}
await makeLmExamples({ root, cli, models: causal, threads, only, outDir, work, list: (entry) => { index.push(entry); writeIndex(); } });
rmSync(work, { recursive: true, force: true });
