// screenshot_papa.mjs: the PAPA panel's picture, taken from the real app: scripts/serve.mjs with the
// embedded default model, headless Chromium (playwright-core, /usr/bin/chromium), a full sweep with the
// page preset on the built-in POS task (5 fractions x 3 seeds, lambda ranking, baselines, MLM score), or
// with --example the panel's first example (agreement on every embedded model, side by side).
// Prints the sweep's wall time in the page and the request, so the same sweep can be timed natively:
//   node scripts/screenshot_papa.mjs [OUT.png] [--request REQ.json] [--preset quick|paper|page] [--example]
//   (default docs/papa-panel.png and the page preset; --request writes the default model's request)
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { defaultEmbedded } from '../web/models.js';
import { launchChromium, newContext, newPage, root, startServer, waitIdle } from '../tests/e2e/helpers.mjs';

const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : null);
const reqOut = option('--request');
const preset = option('--preset');
const example = args.includes('--example');
const index = JSON.parse(readFileSync(path.join(root, 'models/index.json'), 'utf8'));
const defaultModel = defaultEmbedded(index);
const out = path.resolve(root, args.find((a, i) => !a.startsWith('--') && !args[i - 1]?.startsWith('--')) ?? 'docs/papa-panel.png');
const server = await startServer();
const browser = await launchChromium();
try {
  const page = await newPage(await newContext(browser));
  await page.goto(server.url);
  await page.waitForFunction(() => window.attnlab?.app?.run, null, { timeout: 60000 });
  await waitIdle(page);
  if (preset) await page.selectOption('#papa-preset', preset);
  let t0 = Date.now();
  await page.click(example ? '#papa-example-compare' : '#papa-run');
  // the example shows its stored results at once (web/examples/); the time measured is their recompute's
  if (example && await page.waitForSelector('#papa-verify', { timeout: 10000 }).catch(() => null)) {
    t0 = Date.now();
    await page.click('#papa-verify');
  }
  await page.waitForFunction(() => window.attnlab.panels.papa.runs > 0 && !window.attnlab.panels.papa.job, null, { timeout: 1800000 });
  const wall = (Date.now() - t0) / 1000;
  const { request, seconds, digest, n } = await page.evaluate(() => {
    const { task_jsonl, ...request } = window.attnlab.panels.papa.last.request;
    const r = window.attnlab.panels.papa.last.reply;
    return { request, seconds: r.seconds, digest: r.digest, n: r.configs.length };
  });
  console.log(`page sweep: ${n} configurations x ${request.seeds.length} seeds, ${wall.toFixed(1)} s wall in the page ` +
              `(engine stages: ${Object.entries(seconds).map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(', ')}); digest ${digest}`);
  if (example) {
    const rows = await page.evaluate(() => window.attnlab.panels.papa.last.comparison.map(({ label, reply }) => {
      const f = reply.findings;
      const at = (i) => `${reply.summary[i].mean.toFixed(4)} \u00b1 ${reply.summary[i].ci95.toFixed(4)}`;
      return `${label}: full ${at(f.full)}, every head constant ${at(f.all_constant)}; ${f.constant_costs}; digest ${reply.digest}`;
    }));
    for (const row of rows) console.log(row);
  }
  if (reqOut) {
    const { model, outputs, ...rest } = request;
    writeFileSync(reqOut, JSON.stringify({ ...rest, op: 'papa', model_dir: path.join(root, 'models', defaultModel.path) }));
  }
  await page.locator('#papa').screenshot({ path: out });
  console.log(`screenshot: ${path.relative(root, out)}`);
} finally {
  await browser.close();
  server.child.kill();
}
