// first_heatmap.mjs: how long the page takes, from navigation, to draw its first heatmap with each model
// as the embedded default: real Chromium, the real WASM build, the page served from localhost, a fresh
// browser context (no cache) per round. Prints each model's times and their ratio, side by side in one run.
//
//   node bench/first_heatmap.mjs [--rounds N] MODEL_DIR [MODEL_DIR ...]
//   e.g. node bench/first_heatmap.mjs models/attnlab-mini-bert models/attnlab-small-bert
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { launchChromium, newContext, newPage, skipReason, startServer, waitIdle } from '../tests/e2e/helpers.mjs';

const args = process.argv.slice(2);
let rounds = 5;
const dirs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--rounds') rounds = Number(args[++i]);
  else dirs.push(args[i]);
}
if (!dirs.length || !(rounds >= 1)) {
  console.error('usage: node bench/first_heatmap.mjs [--rounds N] MODEL_DIR [MODEL_DIR ...]');
  process.exit(2);
}
if (skipReason) {
  console.error(`first_heatmap: ${skipReason}`);
  process.exit(1);
}

const MODEL_FILES = /^(config\.json|vocab\.txt|tokenizer\.json|vocab\.json|merges\.txt|tokenizer_config\.json|special_tokens_map\.json|.*\.safetensors|model\.safetensors\.index\.json|pytorch_model\.bin)$/;

async function measure(dir) {
  const work = mkdtempSync(path.join(tmpdir(), 'attnlab-first-heatmap-'));
  const id = path.basename(path.resolve(dir));
  cpSync(dir, path.join(work, id), { recursive: true });
  const files = readdirSync(path.join(work, id)).filter((f) => MODEL_FILES.test(f));
  writeFileSync(path.join(work, 'index.json'), JSON.stringify([{ id, name: id, path: id, default: true, files }]));
  const server = await startServer({ AL_MODELS_DIR: work });
  const browser = await launchChromium();
  const times = [];
  try {
    for (let r = 0; r < rounds; r++) {
      const context = await newContext(browser);
      const page = await newPage(context);
      await page.goto(server.url);
      await waitIdle(page, 60000);
      times.push(await page.evaluate(() => window.attnlab.app.timings.firstHeatmap));
      await context.close();
    }
  } finally {
    await browser.close();
    server.child.kill();
    rmSync(work, { recursive: true, force: true });
  }
  times.sort((a, b) => a - b);
  return { id, times, median: times[Math.floor(times.length / 2)] };
}

const results = [];
for (const dir of dirs) results.push(await measure(dir));
for (const r of results) {
  console.log(`${r.id}: first heatmap after navigation, median ${Math.round(r.median)} ms ` +
              `(${r.times.map((t) => Math.round(t)).join(', ')} ms over ${rounds} fresh contexts)`);
}
for (const r of results.slice(1)) {
  console.log(`${r.id} / ${results[0].id}: ${(r.median / results[0].median).toFixed(2)}x`);
}
