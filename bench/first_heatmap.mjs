// first_heatmap.mjs: how long the page takes, from navigation, to draw its first heatmap with each model
// as the embedded default: real Chromium, the real WASM build, the page served from localhost, a fresh
// browser context (no cache) per round. With --unbundled, each model is also served with the page's modules
// one by one (AL_NO_BUNDLE=1, scripts/serve.mjs) instead of as one script. The cases take turns within a
// round, in an order that rotates from round to round, so a change of the machine's speed falls on all of
// them; prints each case's times and the ratios to the first case, with the load average and the CPU.
// With --stored, each model is served with its stored first view (models/first-view.json, written here by
// scripts/first_view.mjs; docs/first-view.md) and without it; the first live heatmap is printed beside the first.
//
//   node bench/first_heatmap.mjs [--rounds N] [--unbundled] [--stored] MODEL_DIR [MODEL_DIR ...]
//   e.g. node bench/first_heatmap.mjs --stored models/attnlab-small-bert models/attnlab-mini-bert
import { rmSync } from 'node:fs';
import path from 'node:path';
import { loadavg } from 'node:os';

import { writeFirstView } from '../scripts/first_view.mjs';
import { loadNode } from '../wasm/attnlab_node.mjs';
import { launchChromium, newContext, newPage, root, skipReason, startServer, waitIdle } from '../tests/e2e/helpers.mjs';
import { cpuName } from './cpu_name.mjs';
import { modelsFolder } from './page_model.mjs';
import { median } from './median.mjs';

const args = process.argv.slice(2);
let rounds = 5;
let unbundled = false;
let stored = false;
const dirs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--rounds') rounds = Number(args[++i]);
  else if (args[i] === '--unbundled') unbundled = true;
  else if (args[i] === '--stored') stored = true;
  else dirs.push(args[i]);
}
if (!dirs.length || !(rounds >= 1)) {
  console.error('usage: node bench/first_heatmap.mjs [--rounds N] [--unbundled] [--stored] MODEL_DIR [MODEL_DIR ...]');
  process.exit(2);
}
if (skipReason) {
  console.error(`first_heatmap: ${skipReason}`);
  process.exit(1);
}


const cases = [];
const folders = [];
const browser = await launchChromium();
try {
  const api = stored ? await loadNode(path.join(root, process.env.AL_WASM_DIR ?? 'build/wasm')) : null;
  for (const dir of dirs) {
    for (const bundle of unbundled ? [true, false] : [true]) {
      for (const withView of stored ? [true, false] : [false]) {
        const f = modelsFolder(dir);
        folders.push(f.work);
        if (withView) writeFirstView(api, f.work);
        const server = await startServer({ AL_MODELS_DIR: f.work, ...(bundle ? {} : { AL_NO_BUNDLE: '1' }) });
        const how = [unbundled ? (bundle ? 'one script' : 'modules one by one') : null,
                     stored ? (withView ? 'stored first view' : 'no stored view') : null].filter(Boolean).join(', ');
        cases.push({ name: `${f.id}${how ? `, ${how}` : ''}`, server, times: [], live: [] });
      }
    }
  }
  api?.release();
  const loadBefore = loadavg()[0];
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(k + r) % cases.length];
      const context = await newContext(browser);
      const page = await newPage(context);
      await page.goto(c.server.url);
      await waitIdle(page, 60000);
      const t = await page.evaluate(() => window.attnlab.app.timings);
      c.times.push(t.firstHeatmap);
      c.live.push(t.firstLiveHeatmap);
      await context.close();
    }
  }
  console.log(`${cpuName()}, ${rounds} rounds, load average ${loadBefore.toFixed(2)} before, ` +
              `${loadavg()[0].toFixed(2)} after`);
} finally {
  await browser.close();
  for (const c of cases) c.server.child.kill();
  for (const w of folders) rmSync(w, { recursive: true, force: true });
}
for (const c of cases) {
  console.log(`${c.name}: first heatmap after navigation, median ${Math.round(median(c.times))} ms ` +
              `(${c.times.map((t) => Math.round(t)).join(', ')} ms); the first live one ${Math.round(median(c.live))} ms ` +
              `(${c.live.map((t) => Math.round(t)).join(', ')} ms)`);
}
for (const c of cases.slice(1)) {
  console.log(`${c.name} / ${cases[0].name}: ${(median(c.times) / median(cases[0].times)).toFixed(2)}x`);
}
