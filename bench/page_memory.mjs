// page_memory.mjs: the page's memory peak with a model as its embedded default, in real Chromium with the real
// WASM build: the page loads the model, draws the explorer and (for a causal model) generates a few tokens in the
// generation panel; then the peak resident memory (VmHWM) of each of Chromium's processes is read from /proc. The
// page's worker runs in the page's renderer process, so the renderer's peak is the page's; the browser and GPU
// processes are listed beside it. Linux only (/proc). docs/decoders.md, "Memory", reports what it printed.
//
//   node bench/page_memory.mjs MODEL_DIR [--new-tokens N]
import { readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { launchChromium, newContext, newPage, skipReason, startServer, waitIdle } from '../tests/e2e/helpers.mjs';

const args = process.argv.slice(2);
let dir = null;
let newTokens = 8;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--new-tokens') newTokens = Number(args[++i]);
  else dir = args[i];
}
if (!dir || !(newTokens >= 0)) {
  console.error('usage: node bench/page_memory.mjs MODEL_DIR [--new-tokens N]');
  process.exit(2);
}
if (skipReason) {
  console.error(`page_memory: ${skipReason}`);
  process.exit(1);
}

const MODEL_FILES = /^(config\.json|vocab\.txt|tokenizer\.json|vocab\.json|merges\.txt|tokenizer_config\.json|special_tokens_map\.json|spm\.model|tokenizer\.model|.*\.safetensors|model\.safetensors\.index\.json|pytorch_model\.bin)$/;

// Every Chromium process below pid (this script: it launched the browser): { pid, type, kB of VmHWM and VmRSS }.
function tree(pid) {
  const children = new Map();
  for (const p of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const ppid = Number(/PPid:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, 'utf8'))[1]);
      if (!children.has(ppid)) children.set(ppid, []);
      children.get(ppid).push(Number(p));
    } catch { /* gone */ }
  }
  const out = [];
  const walk = (p) => {
    try {
      const status = readFileSync(`/proc/${p}/status`, 'utf8');
      const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8').split(/[\0 ]/); // a child rewrites its title, spaces between
      const type = (cmd.find((a) => a.startsWith('--type=')) ?? '--type=browser').slice(7);
      if (cmd[0].includes('chrom')) out.push({ pid: p, type, hwmKB: Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0), rssKB: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) });
    } catch { /* gone */ }
    for (const c of children.get(p) ?? []) walk(c);
  };
  walk(pid);
  return out;
}

const work = mkdtempSync(path.join(tmpdir(), 'attnlab-page-memory-'));
const id = path.basename(path.resolve(dir));
symlinkSync(path.resolve(dir), path.join(work, id));
const files = readdirSync(dir).filter((f) => MODEL_FILES.test(f));
writeFileSync(path.join(work, 'index.json'), JSON.stringify([{ id, name: id, path: id, default: true, files }]));
const server = await startServer({ AL_MODELS_DIR: work });
const browser = await launchChromium();
const bytes = files.reduce((n, f) => n + readFileSync(path.join(dir, f)).length, 0);
try {
  const page = await newPage(await newContext(browser));
  const t0 = Date.now();
  await page.goto(server.url);
  await page.waitForFunction(() => window.attnlab?.app?.run || !document.getElementById('model-error').hidden, null, { timeout: 1800000 });
  const error = await page.evaluate(() => { const e = document.getElementById('model-error'); return e.hidden ? '' : e.textContent; });
  if (error) throw new Error(`the page did not load ${id}: ${error}`);
  await waitIdle(page, 1800000);
  const loaded = (Date.now() - t0) / 1000;
  let generated = 'no generation (not a causal model)';
  if (newTokens > 0 && await page.isVisible('#generate-panel')) {
    await page.fill('#gen-max', String(newTokens));
    await page.dispatchEvent('#gen-max', 'change');
    const before = await page.evaluate(() => window.attnlab.panels['generate-panel'].runs);
    await page.click('#gen-run');
    await page.waitForFunction((n) => window.attnlab.panels['generate-panel'].runs > n && !window.attnlab.panels['generate-panel'].frame.runner.current,
      before, { timeout: 1800000 });
    const steps = await page.evaluate(() => window.attnlab.panels['generate-panel'].last.reply.steps.length);
    generated = `generated ${steps} tokens`;
  }
  const procs = tree(process.pid);
  const renderer = procs.filter((p) => p.type === 'renderer').sort((a, b) => b.hwmKB - a.hwmKB)[0];
  const mb = (kB) => (kB / 1024).toFixed(0);
  console.log(`${id}: ${(bytes / 1e6).toFixed(0)} MB of files; loaded and the explorer drawn in ${loaded.toFixed(1)} s; ${generated}`);
  console.log(`page (renderer process, its worker inside): peak ${mb(renderer.hwmKB)} MB resident, ${mb(renderer.rssKB)} MB now`);
  for (const p of procs) console.log(`  ${p.type.padEnd(10)} pid ${p.pid}: peak ${mb(p.hwmKB)} MB, now ${mb(p.rssKB)} MB`);
  console.log(`all of Chromium's processes: ${mb(procs.reduce((s, p) => s + p.hwmKB, 0))} MB (sum of peaks)`);
} finally {
  await browser.close();
  server.child.kill();
  rmSync(work, { recursive: true, force: true });
}
