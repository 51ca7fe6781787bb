// page_memory.mjs: the page's memory peak with a model as its embedded default, in real Chromium with the real
// WASM build: the page loads the model, draws the explorer and (for a causal model) generates a few tokens in the
// generation panel; then the peak resident memory (VmHWM) of each of Chromium's processes is read from /proc. The
// page's worker runs in the page's renderer process, so the renderer's peak is the page's; the browser and GPU
// processes are listed beside it. Linux only (/proc). docs/decoders.md, "Memory", reports what it printed.
//
//   node bench/page_memory.mjs MODEL_DIR [--new-tokens N]
import { readFileSync, readdirSync } from 'node:fs';

import { generateInPage, openModelPage } from './page_model.mjs';
import { skipReason } from '../tests/e2e/helpers.mjs';

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

const { page, id, bytes, loadedSeconds: loaded, close } = await openModelPage(dir);
try {
  let generated = 'no generation (not a causal model)';
  if (newTokens > 0 && await page.isVisible('#generate-panel')) {
    const reply = await generateInPage(page, newTokens);
    generated = `generated ${reply.steps.length} tokens`;
  }
  const procs = tree(process.pid);
  const renderer = procs.filter((p) => p.type === 'renderer').sort((a, b) => b.hwmKB - a.hwmKB)[0];
  const mb = (kB) => (kB / 1024).toFixed(0);
  console.log(`${id}: ${(bytes / 1e6).toFixed(0)} MB of files; loaded and the explorer drawn in ${loaded.toFixed(1)} s; ${generated}`);
  console.log(`page (renderer process, its worker inside): peak ${mb(renderer.hwmKB)} MB resident, ${mb(renderer.rssKB)} MB now`);
  for (const p of procs) console.log(`  ${p.type.padEnd(10)} pid ${p.pid}: peak ${mb(p.hwmKB)} MB, now ${mb(p.rssKB)} MB`);
  console.log(`all of Chromium's processes: ${mb(procs.reduce((s, p) => s + p.hwmKB, 0))} MB (sum of peaks)`);
} finally {
  await close();
}
