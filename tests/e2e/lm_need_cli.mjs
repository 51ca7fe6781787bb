// lm_need_cli.mjs: the four requests of the page's "Attention needed" run (web/panel_lm_need.js) through the native
// CLI on the same folder and texts: PAPA on the corpus, the blocks dropped and made constant, window and sinks, the
// head roles. lm_need.test.mjs compares the page's numbers with these; bench/page_lm_sweep.mjs times them against
// the page. Each measure's wall seconds are returned beside its reply.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import path from 'node:path';

function timedJson(cli, args) {
  const t0 = process.hrtime.bigint();
  const reply = JSON.parse(execFileSync(cli, args, { encoding: 'utf8', maxBuffer: 1 << 28 }));
  return { reply, seconds: Number(process.hrtime.bigint() - t0) / 1e9 };
}

// run: the page's last run ({requests: {papa, streaming, head_roles}, layerConstants}); work: a directory for the texts;
// threads: the CLI's --threads (undefined: its default).
export function lmNeedCli(cli, run, model, work, threads) {
  const dir = mkdtempSync(path.join(work, 'cli-'));
  const held = path.join(dir, 'heldout.txt');
  const cons = path.join(dir, 'constants.txt');
  writeFileSync(held, run.requests.papa.corpus);
  writeFileSync(cons, run.requests.papa.constants_corpus);
  const t = threads ? ['--threads', String(threads)] : [];
  const q = run.requests.papa;
  const tensors = path.join(dir, 'papa.safetensors');
  const papa = timedJson(cli, ['papa', model, '--text-file', held, '--constants-file', cons, '--L', String(q.L),
    '--constants', q.constants.join(','), '--orders', q.orders.join(','), ...(q.fractions ? ['--fractions', q.fractions.join(',')] : []),
    '--outputs', 'constants', '--out', tensors, '--json', ...t]);
  const layersReq = path.join(dir, 'layers.json');
  // the constants the page gave the layers op (web/lm_need_request.js, layerConstants): PAPA's average when it reaches the
  // model's positions, else none (a GPT-2 small's 1,024 positions); the all-ones fallback is not mirrored here
  if (run.layerConstants === 'uniform') throw new Error('lmNeedCli: the page made the layers uniform; mirror that with a ones tensor');
  const averaged = run.layerConstants === 'average';
  writeFileSync(layersReq, JSON.stringify({ op: 'layers', model_dir: model, corpus: q.corpus, ...(averaged ? { constants: 'constants' } : {}) }));
  const layers = timedJson(cli, ['run', layersReq, ...(averaged ? ['--inputs', tensors] : []), '--json', ...t]);
  const s = run.requests.streaming;
  const streaming = timedJson(cli, ['streaming', model, '--text-file', held, '--window', String(s.window), '--sinks', String(s.sinks), '--json', ...t]);
  const r = run.requests.head_roles;
  const roles = timedJson(cli, ['head_roles', model, '--text-file', held, '--sequences', String(r.sequences), '--seed', String(r.seed), '--json', ...t]);
  return {
    papa: papa.reply, layers: layers.reply, streaming: streaming.reply, roles: roles.reply,
    seconds: { papa: papa.seconds, layers: layers.seconds, streaming: streaming.seconds, head_roles: roles.seconds },
  };
}
