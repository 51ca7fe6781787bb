// screenshot_sizes.mjs: the whole page at a phone's, a laptop's and a projector's size (390x844, 1280x720,
// 1920x1080), from the real app (scripts/serve.mjs, the repository's embedded models, headless Chromium):
// the first screen (the window as the page opens: the README's gallery, docs/first_screen_*.png), the
// explorer, effective attention beside the standard map, the step-by-step view, the PAPA panel with a
// stored example open, a shared PAPA link as it opens (the window, scrolled to its result) and the first
// example's comparison of the embedded models. Full-page pictures, one per state and size, to look at; it
// prints every element whose right edge passes the window's (tests/e2e/pageview.test.mjs checks the same).
//   node scripts/screenshot_sizes.mjs OUT_DIR [WxH ...]   (default the three sizes; needs the WASM build; nothing is
//   written to the repository)
import { mkdirSync } from 'node:fs';
import path from 'node:path';

import { launchChromium, linkUrl, newPage, root, runText, startServer, waitIdle } from '../tests/e2e/helpers.mjs';

const outDir = path.resolve(process.argv[2] ?? '/tmp/attnlab-screens');
const sizes = process.argv.length > 3 ? process.argv.slice(3).map((s) => s.split('x').map(Number))
  : [[390, 844], [1280, 720], [1920, 1080]];
mkdirSync(outDir, { recursive: true });
const server = await startServer();
const browser = await launchChromium();
const shots = [];

// Every visible element whose box passes the window's right edge (inside a scrolling box is fine).
const overflowing = (p) => p.evaluate(() => {
  const W = document.documentElement.clientWidth;
  const clipped = (e) => {
    for (let a = e.parentElement; a; a = a.parentElement) {
      const s = getComputedStyle(a);
      if (/auto|scroll|hidden/.test(s.overflowX) && a.getBoundingClientRect().right <= W + 0.5) return true;
    }
    return false;
  };
  return [...document.querySelectorAll('body *')].filter((e) => e.offsetParent !== null || e.tagName === 'CANVAS')
    .filter((e) => e.getBoundingClientRect().width > 0 && e.getBoundingClientRect().right > W + 0.5 && !clipped(e))
    .map((e) => `${e.tagName.toLowerCase()}#${e.id || ''}.${String(e.className).split(' ')[0]} right ${Math.round(e.getBoundingClientRect().right)}`)
    .slice(0, 12);
});

async function open(context, url) {
  const p = await newPage(context);
  await p.goto(url);
  await p.waitForFunction(() => window.attnlab?.app?.run, null, { timeout: 180000 });
  await waitIdle(p, 120000);
  return p;
}

async function shoot(p, name, w, h, { full = true } = {}) {
  const file = path.join(outDir, `${name}_${w}x${h}.png`);
  await p.screenshot({ path: file, fullPage: full });
  const over = await overflowing(p);
  shots.push(`${file}${over.length ? `  (past the right edge: ${over.join('; ')})` : ''}`);
}

try {
  for (const [w, h] of sizes) {
    const context = await browser.newContext({ viewport: { width: w, height: h }, acceptDownloads: true });
    const p = await open(context, `${server.url}?layer=0&head=4`);
    await shoot(p, 'first_screen', w, h, { full: false }); // the window as a newcomer first sees it (the README's gallery)
    await runText(p, 'The cat sat on the mat because it was tired.');
    await p.locator('#explain').scrollIntoViewIfNeeded(); // the step-by-step view computes once on screen
    await p.waitForFunction(() => window.attnlab.panels.explain.count > 0 && !window.attnlab.panels.explain.runner.current,
                            null, { timeout: 120000 });
    await shoot(p, 'explorer', w, h);
    await p.evaluate(() => document.getElementById('explain').scrollIntoView({ block: 'start' }));
    await shoot(p, 'teaching', w, h, { full: false });
    const prev = await p.evaluate(() => window.attnlab.app.effCount);
    await p.selectOption('#view-select', 'effective');
    await p.waitForFunction((n) => window.attnlab.app.effCount > n && !window.attnlab.app.effJob, prev, { timeout: 120000 });
    await waitIdle(p);
    await p.evaluate(() => document.getElementById('explorer').scrollIntoView({ block: 'start' }));
    await shoot(p, 'effective', w, h);
    await p.selectOption('#view-select', 'standard');
    await waitIdle(p);
    // a stored example: POS on the page's model
    await p.waitForSelector('#papa-examples:not([hidden])');
    const model = await p.evaluate(() => window.attnlab.state.model?.id); // the link carries the page's model's result
    await p.selectOption('#papa-example-select', `pos-${model}.json`);
    await p.click('#papa-example-open');
    await p.waitForSelector('#papa-stored-note');
    await p.waitForFunction(() => !window.attnlab.panels.papa.job && window.attnlab.panels.papa.last);
    await shoot(p, 'papa_stored', w, h);
    const link = await linkUrl(p);
    // the first example: the embedded models side by side, stored
    await p.click('#papa-example-compare');
    await p.waitForSelector('#papa-compare-table');
    await p.waitForFunction(() => !window.attnlab.panels.papa.job && window.attnlab.panels.papa.last?.comparison);
    await p.evaluate(() => document.getElementById('papa-compare').scrollIntoView({ block: 'start' }));
    await shoot(p, 'papa_compare', w, h);
    await p.close();
    // the shared link in a fresh context: the window as it opens, then the whole page once the model is in
    const other = await browser.newContext({ viewport: { width: w, height: h } });
    const q = await newPage(other);
    await q.goto(link);
    await q.waitForSelector('#papa-stored-table');
    await shoot(q, 'papa_link_opened', w, h, { full: false });
    await q.waitForFunction(() => window.attnlab?.app?.run, null, { timeout: 180000 });
    await waitIdle(q, 120000);
    await shoot(q, 'papa_link_loaded', w, h, { full: false });
    await other.close();
    await context.close();
  }
  console.log(shots.join('\n'));
} finally {
  await browser.close();
  server.child.kill();
}
