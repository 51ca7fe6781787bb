// page_generate.mjs: generation's speed in the page against the native CLI on the same model, in turns. The page (real
// Chromium, the real threaded WASM build on min(8, cores) threads) runs its generation panel as a user does, greedy,
// with the attention rows and top-5 alternatives the panel asks for; then `attnlab generate` runs the same request
// natively on as many threads (build/native). Printed per round: each side's tokens per second (the reply's own
// timing: the new tokens over the wall time from the prompt's forward to the last token), and whether the two generated the same ids,
// which they must; then the medians and their ratio, with the CPU, the load average and the clock of a dependent-add
// loop before and after (docs/speed.md, "Generation in the page").
//
//   node bench/page_generate.mjs MODEL_DIR [--tokenizer DIR] [--new 64] [--rounds 3]
// A random-weight shape from bench/decoder_export.py has no tokenizer: --tokenizer names a folder whose tokenizer
// files are linked in beside its weights (for GPT-2-small's shape, GPT-2's vocab.json and merges.txt).
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { generateInPage, openModelPage } from './page_model.mjs';
import { settle } from './settle.mjs';
import { median } from './median.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const opt = (name, def) => (args.includes(name) ? args[args.indexOf(name) + 1] : def);
const dir = args.find((a, i) => !a.startsWith('--') && (i === 0 || !args[i - 1].startsWith('--')));
const nNew = Number(opt('--new', '64'));
const rounds = Number(opt('--rounds', '3'));
const tokenizerDir = opt('--tokenizer', null);
const cli = path.join(process.env.AL_NATIVE_DIR ?? path.join(root, 'build/native'), 'attnlab');
if (!dir || !(nNew >= 1) || !(rounds >= 1)) {
  console.error('usage: node bench/page_generate.mjs MODEL_DIR [--tokenizer DIR] [--new 64] [--rounds 3]');
  process.exit(2);
}
if (!existsSync(cli)) {
  console.error(`page_generate: ${cli} is missing: build the native CLI first`);
  process.exit(1);
}

// About 128 GPT-2 tokens of plain English (the reply says how many the model's tokenizer made of it).
const PROMPT = ('The river rose through the night, and by morning the lower fields were under water. The farmers ' +
  'who had stayed behind moved their animals to the hill above the church, where the ground was dry and the wind ' +
  'was cold. Nobody knew how long the water would stay. The old men said it had happened before, in the spring ' +
  'their fathers were young, and that the river had taken a month to go back to its bed. The young ones did not ' +
  'believe them, and went down each day to measure the water against the posts of the bridge, which still stood.');

const clock = () => { // G dependent adds per second (a tight loop of integer adds): how fast the VM runs right now
  let x = 0; const n = 2e8; const t = process.hrtime.bigint();
  for (let i = 0; i < n; i++) x = (x + 1) | 0;
  return `${(n / Number(process.hrtime.bigint() - t)).toFixed(2)}${x === n ? '' : '?'}`;
};
const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');

const { page, id, folder, loadedSeconds, close } = await openModelPage(dir, { tokenizerDir });
try {
  // The page's worker runs min(8, hardwareConcurrency) threads (web/worker_client.js) when the page is isolated.
  const threads = await page.evaluate(() => (globalThis.crossOriginIsolated ? Math.max(1, Math.min(8, navigator.hardwareConcurrency || 1)) : 1));
  console.log(`node ${process.version}, CPU: ${cpus()[0].model} (${cpus().length} cores); model ${id} loaded in the page in ${loadedSeconds.toFixed(1)} s; the page on ${threads} thread(s)`);
  console.log(`load average at start: ${load()}; the JS clock loop ${clock()} G adds/s`);
  const page_tps = [], cli_tps = [];
  for (let r = 0; r < rounds; r++) {
    const reply = await generateInPage(page, nNew, { prompt: PROMPT });
    await settle();
    const out = JSON.parse(execFileSync(cli, ['generate', folder, PROMPT, '--max-new-tokens', String(nNew), '--alternatives', '5', '--attentions', 'true', '--json',
      '--threads', String(threads)], { maxBuffer: 1 << 28 }).toString());
    await settle();
    const same = JSON.stringify(out.generated.ids) === JSON.stringify(reply.generated.ids);
    page_tps.push(reply.timing.tokens_per_second);
    cli_tps.push(out.timing.tokens_per_second);
    console.log(`round ${r + 1}: prompt ${reply.prompt.ids.length} tokens, ${reply.steps.length} new; page ${reply.timing.tokens_per_second.toFixed(1)} tokens/s, ` +
      `native CLI (${threads} threads) ${out.timing.tokens_per_second.toFixed(1)} tokens/s; same ids: ${same ? 'yes' : 'NO'}; load ${load()}`);
    if (!same) process.exitCode = 1;
  }
  const p = median(page_tps), c = median(cli_tps);
  console.log(`median: page ${p.toFixed(1)} tokens/s, native CLI ${c.toFixed(1)} tokens/s, CLI / page ${(c / p).toFixed(2)}x`);
  console.log(`load average at end: ${load()}; the JS clock loop ${clock()} G adds/s`);
} finally {
  await close();
}
