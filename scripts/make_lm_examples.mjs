// make_lm_examples.mjs: the stored examples of the embedded causal language models (docs/decoder-page.md, "Stored
// examples"), part of scripts/make_examples.mjs's one command. For each example of web/lm_examples.js it builds
// exactly the requests the page sends (the generation panel's generateArgs, the "Attention needed" panel's
// needRequests on the built-in texts read from build/data as the page reads them from /data/, and its layers'
// constants by layerConstants), runs them through the native CLI (`attnlab run`, whose replies are the page's), and
// stores the replies with the requests (each text by name and sha256), the model files' sha256 (a test finds a
// record made from other weights) and the CPU and wall time.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { readTensor, writeTensor } from './safetensors.mjs';
import { GENERATE_KEYS, generateArgs } from '../web/panel_generate.js';
import { LM_EXAMPLES, generationPrompt, lmExampleFile, settingsOf } from '../web/lm_examples.js';
import { encodeTensor } from '../web/tensor_record.js';
import { BUILTIN_TEXTS, NEED_KEYS, corporaOf, layerConstants, layersWindow, needRequests } from '../web/lm_need_request.js';

const sha256 = (bytes) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

// A request as a record keeps it: without the model's id, each text replaced by its name and sha256.
export function storedRequest(args) {
  const { model: _id, outputs: _outputs, ...rest } = args;
  for (const [text, name] of [['corpus', 'corpus_name'], ['constants_corpus', 'constants_corpus_name']]) {
    if (typeof rest[text] === 'string') rest[text] = { name: rest[name], sha256: sha256(rest[text]) };
  }
  return rest;
}

// The sha256 of every file of an embedded model's entry (models/index.json "files").
export const modelFiles = (root, entry) => Object.fromEntries(entry.files.map((f) => [f, sha256(readFileSync(path.join(root, 'models', entry.path, f)))]));

// The page's fetch of /data/<file>, from build/data.
const dataFetch = (dataDir) => async (url) => {
  const file = path.join(dataDir, path.basename(url));
  return new Response(readFileSync(file));
};

// A page request as the CLI's: the model's folder in place of the worker's model id.
export function cliOf(op, args, modelDir) {
  const { model: _id, outputs, ...rest } = args;
  return { op, model_dir: modelDir, ...rest, ...(outputs ? { outputs } : {}) };
}

// One `attnlab run` (ctx: {root, cli, threads, work, model}): the reply, its tensors file and the CPU and wall seconds.
export function runCli(ctx, name, request, { inputs = null, out = null } = {}) {
  const reqPath = path.join(ctx.work, `${name}.json`);
  writeFileSync(reqPath, JSON.stringify(request));
  const timeFile = path.join(ctx.work, 'time.txt');
  const args = ['-f', '%U %S %e', '-o', timeFile, ctx.cli, 'run', reqPath, '--threads', String(ctx.threads),
                ...(inputs ? ['--inputs', inputs] : []), ...(out ? ['--out', out] : [])];
  const run = spawnSync('/usr/bin/time', args, { cwd: ctx.root, encoding: 'utf8', maxBuffer: 256 << 20 });
  if (run.status !== 0) throw new Error(`${name}: attnlab run failed (${run.status}): ${run.stderr}`);
  const [user, sys, wall] = readFileSync(timeFile, 'utf8').trim().split(/\s+/).slice(-3).map(Number);
  const reply = JSON.parse(run.stdout);
  reply.model = `models/${ctx.model.path}`; // the CLI names the folder it read, this machine's absolute path
  return { reply, cpu: user + sys, wall };
}

function needRecord(ctx, v, texts) {
  const reqs = needRequests(v, ctx.model.id, texts);
  const dir = path.join(ctx.root, 'models', ctx.model.path);
  const papaOut = path.join(ctx.work, 'papa.safetensors');
  const papa = runCli(ctx, 'papa', cliOf('papa', reqs.papa, dir), { out: papaOut });
  // the layers' constants by the page's rule (PAPA's average when it reaches the model's positions)
  const info = runCli(ctx, 'info', { op: 'info', model_dir: dir }).reply;
  const lc = layerConstants(readTensor(papaOut, 'constants'), papa.reply.shape, layersWindow(info));
  let layersReq = cliOf('layers', reqs.layers, dir);
  let inputs = null;
  if (lc.tensor) {
    inputs = path.join(ctx.work, 'layers_inputs.safetensors');
    writeTensor(inputs, 'constants', lc.tensor);
    layersReq = { ...layersReq, constants: 'constants' };
  }
  const layers = runCli(ctx, 'layers', layersReq, { inputs });
  const streaming = runCli(ctx, 'streaming', cliOf('streaming', reqs.streaming, dir));
  const roles = runCli(ctx, 'head_roles', cliOf('head_roles', reqs.head_roles, dir));
  const runs = { papa, layers, streaming, head_roles: roles };
  return {
    requests: Object.fromEntries(Object.entries(reqs).map(([op, r]) => [op, storedRequest(lc.tensor && op === 'layers' ? { ...r, constants: 'constants' } : r)])),
    layer_constants: { kind: lc.kind, why: lc.why ?? null },
    replies: Object.fromEntries(Object.entries(runs).map(([op, r]) => [op, r.reply])),
    cpu: Object.values(runs).reduce((s, r) => s + r.cpu, 0), wall: Object.values(runs).reduce((s, r) => s + r.wall, 0),
  };
}

function generationRecord(ctx, v) {
  const args = generateArgs(ctx.model.id, v);
  const out = path.join(ctx.work, 'generate.safetensors');
  const gen = runCli(ctx, 'generate', cliOf('generate', args, path.join(ctx.root, 'models', ctx.model.path)), { out });
  return { requests: { generate: storedRequest(args) }, replies: { generate: gen.reply }, attentions: encodeTensor(readTensor(out, 'attentions')),
           cpu: gen.cpu, wall: gen.wall };
}

// Makes the records of every causal model given (models/index.json entries with weights) and calls list(entry) for
// each: {example, model, panel, file, digest, engine, threads, cpu_seconds, wall_seconds, bytes}.
export async function makeLmExamples({ root, cli, models, threads, only, outDir, work, list }) {
  const dataDir = path.join(root, 'build/data');
  // the engine that made them and its kernels (the CLI's version reply), for every record
  const version = JSON.parse(spawnSync(cli, ['run', '-'], { input: '{"op": "version"}', encoding: 'utf8' }).stdout);
  const get = dataFetch(dataDir);
  for (const model of models) {
    const ctx = { root, cli, threads, work, model };
    const files = modelFiles(root, model);
    for (const ex of LM_EXAMPLES.filter((e) => !e.record && (!only || only.includes(e.id)))) {
      let made;
      let settings = ex.patch;
      if (ex.panel === 'generate') {
        settings = { ...ex.patch, gprompt: generationPrompt(readFileSync(path.join(dataDir, BUILTIN_TEXTS.heldout), 'utf8')) };
        made = generationRecord(ctx, settingsOf(GENERATE_KEYS, settings));
      } else {
        const v = settingsOf(NEED_KEYS, settings);
        made = needRecord(ctx, v, await corporaOf(v, undefined, 'data/', get));
      }
      const { cpu, wall, ...parts } = made;
      const record = {
        format: 1, example: ex.id, model: model.id, panel: ex.panel, settings,
        made: { by: 'scripts/make_examples.mjs', engine: version.version, kernels: version.kernels, threads,
                cpu_seconds: Math.round(cpu * 10) / 10, wall_seconds: Math.round(wall * 100) / 100, model_files: files },
        ...parts,
      };
      const file = lmExampleFile(ex.id, model.id);
      writeFileSync(path.join(outDir, file), `${JSON.stringify(record)}\n`);
      const bytes = statSync(path.join(outDir, file)).size;
      const main = record.replies.papa ?? record.replies.generate;
      // every example drawn from this record (the head roles are a view of "Attention needed") is listed
      for (const x of LM_EXAMPLES.filter((e) => e.id === ex.id || e.record === ex.id)) {
        list({ example: x.id, model: model.id, panel: x.panel, file, ...(main.digest ? { digest: main.digest } : {}),
               engine: version.version, threads, cpu_seconds: record.made.cpu_seconds,
               wall_seconds: record.made.wall_seconds, bytes });
      }
      console.log(`${file}: ${cpu.toFixed(1)} s CPU, ${wall.toFixed(1)} s wall on ${threads} thread${threads === 1 ? '' : 's'}, ${bytes} bytes` +
                  `${main.digest ? `, digest ${main.digest.slice(0, 19)}\u2026` : ''}`);
    }
  }
}
