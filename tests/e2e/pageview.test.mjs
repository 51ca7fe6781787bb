// pageview.test.mjs: the page as people meet it (README.md, docs/teaching.md), in headless
// Chromium (playwright-core) with the repository's default model: a phone's width, legends whose
// labels never overlap, canvases drawn at the screen's resolution, the line view's own legend, the
// step-by-step view's numbers, the Embedded select after a local model, the keyboard, the favicon.
// Each test is written so that the page before its fix fails it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { explainDone, launchChromium, newPage, root, runText, showView, skipReason as skip, startServer, waitIdle, writeCorpus } from './helpers.mjs';

let server;
let browser;
let work;
let page; // 1280 x 720, the default model, shared by the tests that need no window of their own

async function openPage(viewport = { width: 1280, height: 720 }, { deviceScaleFactor = 1, onPage = null } = {}) {
  const context = await browser.newContext({ viewport, deviceScaleFactor });
  const p = await newPage(context);
  p.notFound = [];
  p.on('response', (r) => { if (r.status() === 404) p.notFound.push(r.url()); });
  await onPage?.(p);
  await p.goto(server.url);
  await p.waitForFunction(() => window.attnlab?.app?.run, null, { timeout: 120000 });
  await waitIdle(p);
  return p;
}

async function explainNow(p) {
  const prev = await p.evaluate(() => window.attnlab.panels.explain.count);
  await p.locator('#explain').scrollIntoViewIfNeeded(); // the view computes once it is on screen
  await p.evaluate(() => window.attnlab.panels.explain.update());
  await explainDone(p, prev);
}

// Every fillText on the canvases with an id since the canvas was last cleared (a legend's drawing
// starts with clearRect), with its box in the canvas's CSS pixels.
async function recordCanvasText(p) {
  await p.evaluate(() => {
    window.__texts = {};
    const clear = CanvasRenderingContext2D.prototype.clearRect;
    CanvasRenderingContext2D.prototype.clearRect = function clearRect(...a) {
      if (this.canvas.id) window.__texts[this.canvas.id] = [];
      return clear.apply(this, a);
    };
    const orig = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function fillText(text, x, y, ...rest) {
      const id = this.canvas.id;
      if (id) {
        const t = this.getTransform();
        const dpr = window.devicePixelRatio;
        const w = this.measureText(String(text)).width;
        const left = this.textAlign === 'right' || this.textAlign === 'end' ? x - w : this.textAlign === 'center' ? x - w / 2 : x;
        (window.__texts[id] ??= []).push({ text: String(text), left: (t.e / dpr) + left, right: (t.e / dpr) + left + w,
                                           top: (t.f / dpr) + y, bottom: (t.f / dpr) + y + 11, rotated: t.b !== 0 });
      }
      return orig.call(this, text, x, y, ...rest);
    };
  });
}

async function texts(p, id) {
  return p.evaluate((i) => {
    const out = window.__texts[i] ?? [];
    window.__texts[i] = [];
    return out;
  }, id);
}

function assertNoOverlap(list, width, what) {
  assert.ok(list.length > 0, `${what}: something is written`);
  for (const t of list) {
    assert.ok(t.left >= -0.5 && t.right <= width + 0.5, `${what}: "${t.text}" [${t.left}, ${t.right}] inside the ${width} px legend`);
  }
  for (let i = 0; i < list.length; i++) {
    for (let j = i + 1; j < list.length; j++) {
      const a = list[i];
      const b = list[j];
      const overlap = a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
      assert.ok(!overlap, `${what}: "${a.text}" overlaps "${b.text}"`);
    }
  }
}

before(async () => {
  if (skip) return;
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-pageview-'));
  writeCorpus(path.join(work, 'data'));
  server = await startServer({ AL_DATA_DIR: path.join(work, 'data') });
  browser = await launchChromium();
  page = await openPage();
});

after(async () => {
  await browser?.close();
  server?.child.kill();
  if (work) rmSync(work, { recursive: true, force: true });
});

test('item 10: at 390 x 844 every panel fits the screen (the importance panel and the measure views too), the step cards too; the model select stays in its card', { skip }, async () => {
  const p = await openPage({ width: 390, height: 844 }, { deviceScaleFactor: 2 });
  await explainNow(p);
  for (const view of ['standard', 'effective', 'rollout', 'norm', 'value_zeroing']) {
    await showView(p, view);
    const r = await p.evaluate(() => ({
      scroll: document.scrollingElement.scrollWidth,
      boxes: [...document.querySelectorAll('header, main > section, main > p, footer, #explain .xstep, #heatmap, #heatmap-companion, ' +
                                           '#legend, #legend-companion, #grid, #explorer .effective-controls .row, #importance .row')]
        .filter((e) => e.offsetParent !== null)
        .map((e) => ({ what: e.id || e.className || e.tagName, left: e.getBoundingClientRect().left, right: e.getBoundingClientRect().right })),
      steps: document.querySelectorAll('#explain .xstep').length,
    }));
    assert.ok(r.scroll <= 390, `${view}: the page is ${r.scroll} px wide at 390`);
    assert.equal(r.steps, 9);
    for (const b of r.boxes) assert.ok(b.left >= 0 && b.right <= 390, `${view}: ${b.what} spans [${b.left}, ${b.right}] at 390`);
  }
  await p.context().close();
  // at 1280 the select with the long model name stays inside the Model card
  const r = await page.evaluate(() => ({ select: document.getElementById('embedded-select').getBoundingClientRect().right,
                                         card: document.getElementById('model-panel').getBoundingClientRect().right }));
  assert.ok(r.select <= r.card, `the select ends at ${r.select}, its card at ${r.card}`);
});

// Every visible element whose box passes the window's right edge, but for those inside a box that scrolls
// sideways and itself ends inside the window (a wide table in its own scroller is whole: it scrolls).
const pastRightEdge = (p) => p.evaluate(() => {
  const W = document.documentElement.clientWidth;
  const scrolled = (e) => {
    for (let a = e.parentElement; a; a = a.parentElement) {
      if (/auto|scroll/.test(getComputedStyle(a).overflowX) && a.getBoundingClientRect().right <= W + 0.5) return true;
    }
    return false;
  };
  return [...document.querySelectorAll('main *')].filter((e) => e.getClientRects().length && e.getBoundingClientRect().width > 0)
    .filter((e) => e.getBoundingClientRect().right > W + 0.5 && !scrolled(e))
    .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${String(e.className).split(' ')[0]} to ${Math.round(e.getBoundingClientRect().right)}`);
});

test('item 10: at 390 x 844 the PAPA panel\u2019s results fit too: a stored example, a shared link, the models side by side', { skip }, async () => {
  const p = await openPage({ width: 390, height: 844 }, { deviceScaleFactor: 2 });
  await p.waitForSelector('#papa-examples:not([hidden])');
  // POS on the page's own model, whose result the link carries
  const model = await p.evaluate(() => window.attnlab.state.model?.id);
  await p.selectOption('#papa-example-select', `pos-${model}.json`);
  await p.click('#papa-example-open');
  await p.waitForFunction(() => !window.attnlab.panels.papa.job && window.attnlab.panels.papa.charts?.models);
  assert.deepEqual(await pastRightEdge(p), [], 'a stored example');
  assert.ok(await p.evaluate(() => document.scrollingElement.scrollWidth) <= 390);
  // the score chart is drawn to its room, its subtitle clear of the top tick's label
  const chart = await p.evaluate(() => {
    const c = window.attnlab.panels.papa.charts.scores;
    const sub = c.boxes.filter((b) => b.position === 'top' && b.options?.text).sort((a, b) => b.bottom - a.bottom)[0];
    const pad = typeof sub.options.padding === 'number' ? sub.options.padding : sub.options.padding?.bottom ?? 0;
    return { width: c.canvas.getBoundingClientRect().right, subBottom: sub.bottom - pad, yTop: c.scales.y.top, font: c.scales.y.options.ticks.font?.size ?? 12 };
  });
  assert.ok(chart.width <= 390, `the score chart ends at ${chart.width}`);
  assert.ok(chart.subBottom + 2 < chart.yTop - chart.font / 2, `subtitle ends at ${chart.subBottom}, top tick at ${chart.yTop}`);
  await p.evaluate(() => window.attnlab.link.flush());
  const link = p.url();
  const shared = await browser.newContext({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2 });
  const q = await newPage(shared);
  await q.goto(link);
  await q.waitForSelector('#papa-stored-table');
  assert.deepEqual(await pastRightEdge(q), [], 'a shared link as it opens');
  await shared.close();
  await p.click('#papa-example-compare');
  await p.waitForFunction(() => !window.attnlab.panels.papa.job && window.attnlab.panels.papa.last?.comparison);
  assert.deepEqual(await pastRightEdge(p), [], 'the comparison of the embedded models');
  assert.ok(await p.evaluate(() => document.scrollingElement.scrollWidth) <= 390);
  await p.context().close();
});

test('item 11: legend labels never overlap their captions; a map of zeros says so', { skip }, async () => {
  await recordCanvasText(page);
  await page.check('#autoscale');
  await page.waitForFunction(() => window.attnlab.explorer.current.scale.own);
  const width = () => page.evaluate(() => Number(document.getElementById('legend').dataset.w ?? document.getElementById('legend').width));
  assertNoOverlap(await texts(page, 'legend'), await width(), 'autoscale legend');
  await page.uncheck('#autoscale');
  await showView(page, 'effective');
  const companionW = await page.evaluate(() => Number(document.getElementById('legend-companion').dataset.w ??
                                                      document.getElementById('legend-companion').width));
  assertNoOverlap(await texts(page, 'legend'), await width(), 'effective attention\u2019s legend');
  assertNoOverlap(await texts(page, 'legend-companion'), companionW, 'the standard map\u2019s legend beside it');
  await showView(page, 'effective_abs_diff');
  const top = await page.evaluate(() => Math.max(...window.attnlab.current.matrix));
  assert.equal(top, 0, 'every value of |effective - standard| is 0 on the default sentence');
  const flat = (await texts(page, 'legend')).map((t) => t.text);
  assert.ok(!flat.includes('1.000'), `no maximum of 1.000 is claimed: ${flat.join(' | ')}`);
  assert.match(flat.join(' '), /every value is 0/);
  await showView(page, 'standard');
});

test('item 12: the large view and the map beside it are drawn at their display size times devicePixelRatio', { skip }, async () => {
  for (const dpr of [1, 2]) {
    const p = await openPage({ width: 1280, height: 720 }, { deviceScaleFactor: dpr });
    for (const view of ['standard', 'effective']) {
      await showView(p, view);
      const sizes = await p.evaluate(() => ['heatmap', 'heatmap-companion', 'legend', 'legend-companion']
        .map((id) => document.getElementById(id)).filter((c) => c.offsetParent !== null)
        .map((c) => ({ id: c.id, width: c.width, height: c.height, css: c.getBoundingClientRect().toJSON() })));
      assert.ok(sizes.length >= (view === 'effective' ? 4 : 2));
      for (const s of sizes) {
        assert.ok(Math.abs(s.width - s.css.width * dpr) <= 1 && Math.abs(s.height - s.css.height * dpr) <= 1,
                  `${view}: #${s.id} is ${s.width} x ${s.height} for ${s.css.width} x ${s.css.height} CSS px at ratio ${dpr}`);
      }
    }
    await p.context().close();
  }
});

test('item 13: the line view has its own legend and caption, and a diffuse head\u2019s lines stay visible', { skip }, async () => {
  await page.evaluate(() => {
    window.__strokes = [];
    const orig = CanvasRenderingContext2D.prototype.stroke;
    CanvasRenderingContext2D.prototype.stroke = function stroke(...a) {
      if (this.canvas.id === 'heatmap') window.__strokes.push(String(this.strokeStyle));
      return orig.apply(this, a);
    };
  });
  await page.uncheck('#autoscale'); // the shared 0-1 scale
  await showView(page, 'uniform'); // every weight 1/n: the most diffuse head there is
  await page.selectOption('#draw-as', 'lines');
  const r = await page.evaluate(() => ({
    strokes: window.__strokes, n: window.attnlab.app.run.n,
    caption: document.getElementById('detail-caption')?.textContent ?? [...document.querySelectorAll('#explorer .detail .note')].map((e) => e.textContent).join(' '),
    legend: document.getElementById('legend').dataset.kind, label: document.getElementById('legend').getAttribute('aria-label'),
  }));
  assert.equal(r.strokes.length, r.n * r.n, 'one line per pair');
  const alphas = r.strokes.map((s) => (s.startsWith('#') ? 1 : Number(/rgba\([^)]*,\s*([\d.]+)\)/.exec(s)?.[1] ?? 1)));
  assert.ok(Math.min(...alphas) >= 0.2, `the faintest line of weight 1/${r.n} is ${Math.min(...alphas)} opaque`);
  assert.doesNotMatch(r.caption, /Rows: query tokens/, 'no heatmap caption under lines');
  assert.match(r.caption, /Left: query tokens/);
  assert.equal(r.legend, 'lines', 'a legend of lines, not the heatmap\u2019s colour bar');
  assert.match(r.label, /not drawn/, 'the legend says which weights are not drawn');
  await page.selectOption('#draw-as', 'heatmap');
  await showView(page, 'standard');
  assert.match(await page.textContent('#detail-caption'), /Rows: query tokens/);
});

// The number a table cell shows, and half a unit of its last digit.
function shown(text) {
  const s = text.replace('\u2212', '-');
  const m = /^(-?\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(s);
  assert.ok(m, `a number: ${text}`);
  const decimals = m[2]?.length ?? 0;
  return { value: Number(s), half: 0.5 * 10 ** (Number(m[3] ?? 0) - decimals) };
}

test('item 14: the step-by-step view: a share that cannot pass 100%, scores that recompute the row, positions of repeated words', { skip }, async () => {
  const p = await openPage();
  await runText(p, 'the cat saw the dog and the bird saw the cat .');
  await explainNow(p);
  // every "the" in the steps carries its position (query token 1 is a "the")
  const steps = await p.evaluate(() => ({ text: document.querySelector('#explain .xsteps').textContent, query: window.attnlab.panels.explain.data.query,
                                         token: window.attnlab.panels.explain.data.tokens[window.attnlab.panels.explain.data.query] }));
  assert.equal(steps.token, 'the');
  assert.match(steps.text, /\u201cthe\u201d at 1/);
  assert.doesNotMatch(steps.text, /\u201cthe\u201d(?! at \d)/, 'a repeated word is never named without its position');
  // the softmax recomputed by hand from the table's scores gives the weights the table shows
  const rows = await p.evaluate(() => [...document.querySelectorAll('#explain-table tbody tr')]
    .map((tr) => [...tr.children].map((td) => td.firstChild?.textContent ?? td.textContent)));
  const z = rows.map((r) => shown(r[3]).value + (r[4] === '0' ? 0 : shown(r[4]).value));
  const top = Math.max(...z);
  const e = z.map((x) => Math.exp(x - top));
  const sum = e.reduce((a, b) => a + b, 0);
  rows.forEach((r, j) => {
    const w = shown(r[5]);
    assert.ok(Math.abs(e[j] / sum - w.value) <= w.half * 1.01,
              `token ${j}: the weight recomputed from its score (${r[3]}) is ${e[j] / sum}, the table shows ${r[5]}`);
  });
  // a sentence longer than the head dimension: the invisible share as lengths, never above 100%
  const words = 'the students read the long book about the old city and the river because they wanted to learn ' +
    'how people lived there many years ago before the bridge was built and the town grew into a city with ' +
    'markets and schools and a large harbour';
  await runText(p, words);
  // the head and query whose row has the most invisible weight by absolute values (effective attention:
  // the invisible part is standard minus effective)
  await showView(p, 'effective_minus_standard');
  const worst = await p.evaluate(() => {
    const ex = window.attnlab.explorer;
    const n = ex.run.n;
    let best = { ratio: 0 };
    for (let l = 0; l < ex.run.NL; l++) {
      for (let h = 0; h < ex.run.H; h++) {
        const diff = ex.displayed(l, h).matrix;
        const att = ex.run.att.subarray((l * ex.run.H + h) * n * n);
        for (let q = 0; q < n; q++) {
          let inv = 0;
          let row = 0;
          for (let j = 0; j < n; j++) { inv += Math.abs(diff[q * n + j]); row += Math.abs(att[q * n + j]); }
          if (inv / row > best.ratio) best = { ratio: inv / row, l, h, q };
        }
      }
    }
    ex.select(best.l, best.h);
    return best;
  });
  await p.selectOption('#explain-query', String(worst.q));
  await explainNow(p);
  const d = await p.evaluate(() => {
    const x = window.attnlab.panels.explain.data;
    const l1 = (v) => Array.from(v).slice(0, x.n).reduce((s, a) => s + Math.abs(a), 0);
    const l2 = (v) => Math.sqrt(Array.from(v).slice(0, x.n).reduce((s, a) => s + a * a, 0));
    return { n: x.n, dh: x.dh, share: x.invisibleShare, at: [x.layer, x.head, x.query], l1: l1(x.invisible) / l1(x.weights), l2: l2(x.invisible) / l2(x.weights),
             text: document.getElementById('xs-eff').textContent };
  });
  assert.ok(d.n > d.dh, `${d.n} tokens, head dimension ${d.dh}`);
  assert.deepEqual(d.at, [worst.l, worst.h, worst.q]);
  assert.ok(d.l1 > 1, `the row's absolute values would give a share of ${(100 * d.l1).toFixed(0)}%`);
  assert.ok(Math.abs(d.share - d.l2) < 1e-9 && d.share <= 1, `the share is the ratio of lengths: ${d.share}`);
  const pct = Number(/([\d.]+)% of this row is invisible/.exec(d.text)?.[1]);
  assert.ok(pct <= 100 && Math.abs(pct - 100 * d.share) < 0.5, `${pct}% shown for a share of ${d.share}`);
  assert.match(d.text, /never more than 100%/);
  assert.deepEqual(p.errors, []);
  await p.context().close();
});

test('item 19: the Embedded select does not name the embedded model once a local model is loaded', { skip }, async () => {
  const p = await openPage();
  const dir = path.join(root, 'models/attnlab-mini-bert');
  await p.setInputFiles('#file-input', ['config.json', 'model.safetensors', 'vocab.txt', 'tokenizer_config.json'].map((f) => path.join(dir, f)));
  await p.waitForFunction(() => /Loaded local files/.test(document.getElementById('model-status').textContent), null, { timeout: 60000 });
  const sel = await p.evaluate(() => { const s = document.getElementById('embedded-select'); return { value: s.value, text: s.selectedOptions[0]?.textContent }; });
  assert.doesNotMatch(sel.text, /attnlab small BERT/, `the select says: ${sel.text}`);
  assert.match(sel.text, /local files/);
  // choosing the embedded model again names it
  await p.selectOption('#embedded-select', 'attnlab-small-bert');
  await p.click('#embedded-load');
  await p.waitForFunction(() => /Loaded embedded model/.test(document.getElementById('model-status').textContent), null, { timeout: 120000 });
  assert.match(await p.evaluate(() => document.getElementById('embedded-select').selectedOptions[0].textContent), /attnlab small BERT/);
  assert.equal(await p.evaluate(() => document.querySelector('#embedded-select option[value=""]')), null);
  await p.context().close();
});

test('item 21: the grid is one tab stop with arrow keys inside; the large view\u2019s cells are read out from the keyboard', { skip }, async () => {
  await page.evaluate(() => window.attnlab.explorer.select(0, 0));
  const stops = await page.evaluate(() => [...document.querySelectorAll('#grid button')].filter((b) => b.tabIndex >= 0).length);
  assert.equal(stops, 1, 'one thumbnail in the tab order');
  assert.equal(await page.evaluate(() => document.getElementById('grid').tabIndex), -1, 'the grid itself is no extra stop');
  await page.focus('.thumb[aria-pressed=true]');
  await page.keyboard.press('ArrowRight');
  const moved = await page.evaluate(() => ({ head: window.attnlab.explorer.head, focus: document.activeElement.dataset.head,
                                             tab: document.activeElement.tabIndex }));
  assert.deepEqual(moved, { head: 1, focus: '1', tab: 0 }, 'the arrow moved the selection, the focus and the tab stop');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'heatmap', 'one Tab leaves the grid for the large view');
  await page.keyboard.press('Shift+Tab');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.head), '1', 'Shift+Tab comes back to the selected head');
  // the large view focused: the arrows walk its cells and a live region names query, key and value
  await page.keyboard.press('Tab');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  const r = await page.evaluate(() => {
    const c = window.attnlab.current;
    const out = document.getElementById('cell-readout');
    return { text: out.textContent, live: out.getAttribute('aria-live'), want: c.matrix[1 * c.size + 2].toPrecision(4),
             labels: [c.labels[1], c.labels[2]], head: window.attnlab.explorer.head, cursor: !document.getElementById('cell-cursor').hidden };
  });
  assert.equal(r.head, 1, 'arrows on the large view do not change the head');
  assert.equal(r.live, 'polite');
  assert.ok(r.text.includes(`query 1: ${r.labels[0]}`) && r.text.includes(`key 2: ${r.labels[1]}`) && r.text.includes(`attention weight: ${r.want}`),
            r.text);
  assert.equal(r.cursor, true, 'the cell is marked on the map');
  await page.evaluate(() => document.activeElement.blur());
});

// A proxy in front of the page's server that records the status of every request the browser makes,
// its own (the favicon) included, which page.on('response') does not see.
function recordingProxy(target) {
  const log = [];
  const proxy = createServer((req, res) => {
    const up = request(new URL(req.url, target), { method: req.method, headers: req.headers }, (r) => {
      log.push({ url: req.url, status: r.statusCode });
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.writeHead(502).end());
    req.pipe(up);
  });
  return new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve({ url: `http://127.0.0.1:${proxy.address().port}/`, log, proxy })));
}

test('item 22: no request 404s on load, the favicon\u2019s included; the icon is the project\u2019s own', { skip }, async () => {
  const { url, log, proxy } = await recordingProxy(server.url);
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    const p = await newPage(context);
    await p.goto(url);
    await p.waitForFunction(() => window.attnlab?.app?.run, null, { timeout: 120000 });
    await waitIdle(p);
    await p.waitForFunction(() => document.readyState === 'complete');
    await new Promise((resolve) => setTimeout(resolve, 500)); // the browser asks for the icon once the page has loaded
    assert.deepEqual(log.filter((r) => r.status === 404), []);
    const icon = log.find((r) => /favicon/.test(r.url));
    assert.deepEqual(icon, { url: '/favicon.svg', status: 200 }, 'the browser fetched the page\u2019s icon');
    await context.close();
  } finally {
    proxy.close();
  }
});
