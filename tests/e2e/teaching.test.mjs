// teaching.test.mjs: the explorer as a teaching tool (docs/teaching.md), in headless Chromium (playwright-core)
// with attnlab-mini-bert as the embedded model: the step-by-step view of one head, the line view, honest colour
// scales, the projector layout and presentation mode, and one test per defect found in it, each
// written so that the page before the fix fails it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { embeddedModelOnly, explainDone, launchChromium, newPage, root, runText, skipReason as skip, startServer, waitIdle, writeCorpus } from './helpers.mjs';

let server;
let browser;
let page; // 1400 x 900, attnlab-mini-bert, one shared page for the tests that need no special window

async function openPage(viewport = { width: 1400, height: 900 }, query = '') {
  const context = await browser.newContext({ viewport });
  const p = await newPage(context);
  await p.goto(`${server.url}${query}`);
  await p.waitForFunction(() => window.attnlab?.app?.run, null, { timeout: 60000 });
  await waitIdle(p);
  return p;
}

let work;

before(async () => {
  if (skip) return;
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-teaching-'));
  writeCorpus(path.join(work, 'data'));
  // attnlab-mini-bert: the test sentences' tokens (a split word) are that model's
  server = await startServer({ AL_DATA_DIR: path.join(work, 'data'), AL_MODELS_DIR: embeddedModelOnly(work, 'attnlab-mini-bert') });
  browser = await launchChromium();
  page = await openPage();
  await page.locator('#explain').scrollIntoViewIfNeeded(); // the view computes once it is on screen
  await explainDone(page, 0, 30000);
});

after(async () => {
  await browser?.close();
  server?.child.kill();
  if (work) rmSync(work, { recursive: true, force: true });
});

test('explain a head: the real numbers, step by step, from the keyboard', { skip }, async () => {
  // the query token moves with the keyboard (a native select), the steps follow
  const prev = await page.evaluate(() => window.attnlab.panels.explain.count);
  await page.focus('#explain-query');
  await page.keyboard.press('ArrowDown');
  await explainDone(page, prev, 30000);
  const got = await page.evaluate(() => {
    const d = window.attnlab.panels.explain.data;
    const cur = window.attnlab.current;
    return { query: d.query, layer: d.layer, head: d.head, n: d.n, weights: Array.from(d.weights).slice(0, d.n),
             row: cur.matrix.slice(d.query * cur.size, d.query * cur.size + cur.size), curLayer: cur.layer, curHead: cur.head,
             weightSum: d.weightSum, steps: [...document.querySelectorAll('#explain .xstep h3')].map((h) => h.textContent),
             formulas: document.querySelectorAll('#explain .xstep .formula').length,
             caption: document.querySelector('#explain-table caption')?.textContent,
             colHeaders: [...document.querySelectorAll('#explain-table thead th[scope=col]')].map((t) => t.textContent),
             rowHeaders: document.querySelectorAll('#explain-table tbody th[scope=row]').length,
             xq: window.attnlab.state.xq };
  });
  assert.equal(got.query, 2, 'ArrowDown on the query list moved to token 2');
  assert.equal(got.xq, 2);
  assert.deepEqual([got.layer, got.head], [got.curLayer, got.curHead], 'the explained head is the selected one');
  const diff = Math.max(...got.weights.map((w, i) => Math.abs(w - got.row[i])));
  assert.ok(diff < 1e-6, `the softmax row equals the heatmap's row (max diff ${diff})`);
  assert.ok(Math.abs(got.weightSum - 1) < 1e-5);
  assert.equal(got.steps.length, 9, got.steps.join(' | '));
  for (const word of ['Query and keys', 'Dot products', 'Scaling', 'Mask', 'Softmax', 'value vectors', 'output', 'constant', 'cannot see']) {
    assert.ok(got.steps.some((s) => s.includes(word)), `a step about ${word}`);
  }
  assert.equal(got.formulas, 9, 'each step has its formula beside the words');
  assert.match(got.caption, /query token 2/);
  assert.deepEqual(got.colHeaders.slice(0, 6), ['#', 'token', 'q \u00b7 k', '\u00f7 \u221ad', '+ mask', 'weight']);
  assert.equal(got.rowHeaders, got.n, 'one row header per key token');

  // another head in the grid (keyboard): the steps follow it
  const before2 = await page.evaluate(() => window.attnlab.panels.explain.count);
  await page.focus('.thumb[data-layer="0"][data-head="0"]');
  await page.keyboard.press('ArrowDown');
  await page.locator('#explain').scrollIntoViewIfNeeded();
  await explainDone(page, before2, 30000);
  assert.deepEqual(await page.evaluate(() => [window.attnlab.panels.explain.data.layer, window.attnlab.panels.explain.data.head]),
                   [1, 0]);

  // the constant head: uniform gives 1/n per token and a change of the context
  const before3 = await page.evaluate(() => window.attnlab.panels.explain.count);
  await page.selectOption('#explain-constant', 'uniform');
  await explainDone(page, before3, 30000);
  const u = await page.evaluate(() => ({ c: Array.from(window.attnlab.panels.explain.data.constant), n: window.attnlab.panels.explain.data.n,
                                         text: document.getElementById('xs-const').textContent }));
  assert.ok(u.c.every((x) => Math.abs(x - 1 / u.n) < 1e-12));
  assert.match(u.text, /uniform row/);
  assert.match(u.text, /context vector c then moves by [\d.]+%/);
  // the corpus average: rows that sum to 1 over the real tokens
  const before4 = await page.evaluate(() => window.attnlab.panels.explain.count);
  await page.selectOption('#explain-constant', 'average');
  await explainDone(page, before4, 30000);
  const a = await page.evaluate(() => ({ c: Array.from(window.attnlab.panels.explain.data.constant), text: document.getElementById('xs-const').textContent }));
  assert.ok(Math.abs(a.c.reduce((s, x) => s + x, 0) - 1) < 1e-9);
  assert.match(a.text, /average attention over 6 held-out Brown sentences/);
  // short sentence: nothing invisible, said in plain words
  assert.match(await page.textContent('#xs-eff'), /Nothing is invisible here/);
  assert.deepEqual(page.errors, []);
});

test('explain a head: a sentence longer than the head dimension has an invisible part', { skip }, async () => {
  const p = await openPage();
  const words = 'the students read the long book about the old city and the river because they wanted to learn ' +
    'how people lived there many years ago before the bridge was built and the town grew into a city with ' +
    'markets and schools and a large harbour';
  await runText(p, words);
  await p.locator('#explain').scrollIntoViewIfNeeded();
  await p.waitForFunction(() => window.attnlab.panels.explain.data?.n > 32 && !window.attnlab.panels.explain.runner.current, null, { timeout: 30000 });
  const d = await p.evaluate(() => ({ share: window.attnlab.panels.explain.data.invisibleShare, rank: window.attnlab.panels.explain.data.rank,
                                      n: window.attnlab.panels.explain.data.n, text: document.getElementById('xs-eff').textContent }));
  assert.ok(d.rank <= 32 && d.n > 32);
  assert.ok(d.share > 0, 'some of the row is invisible');
  assert.match(d.text, /is invisible/);
  await p.context().close();
});

test('line view: switchable with the heatmap, [CLS] and [SEP] can be hidden', { skip }, async () => {
  const n = await page.evaluate(() => window.attnlab.app.run.n);
  await page.selectOption('#draw-as', 'lines');
  let ds = await page.evaluate(() => ({ ...document.getElementById('heatmap').dataset }));
  assert.equal(ds.lines, '1');
  assert.equal(Number(ds.rows), n);
  assert.equal(await page.isVisible('#hide-special-label'), true);
  await page.check('#hide-special');
  ds = await page.evaluate(() => ({ ...document.getElementById('heatmap').dataset }));
  assert.equal(Number(ds.rows), n - 2, '[CLS] and [SEP] are hidden');
  assert.equal(await page.evaluate(() => window.attnlab.state.draw), 'lines');
  await page.uncheck('#hide-special');
  await page.selectOption('#draw-as', 'heatmap');
  assert.equal(await page.evaluate(() => document.getElementById('heatmap').dataset.lines), undefined);
  assert.equal(await page.isVisible('#hide-special-label'), false);
});

test('scales: probabilities share 0-1 by default; autoscale is an option the legend states', { skip }, async () => {
  const scales = await page.evaluate(() => {
    const ex = window.attnlab.explorer;
    const out = [];
    for (const [l, h] of [[0, 0], [3, 3]]) {
      ex.select(l, h);
      out.push({ ...ex.current.scale, palette: undefined });
    }
    return out;
  });
  for (const s of scales) assert.deepEqual([s.min, s.max], [0, 1], 'every head on the same 0-1 scale');
  await page.check('#autoscale');
  const auto = await page.evaluate(() => ({ ...window.attnlab.explorer.current.scale, palette: undefined,
                                            max: window.attnlab.explorer.current.scale.max,
                                            top: Math.max(...window.attnlab.current.matrix) }));
  assert.ok(auto.max < 1 && Math.abs(auto.max - auto.top) < 1e-6, 'autoscale: 0 to the head\u2019s max');
  assert.equal(await page.evaluate(() => window.attnlab.state.autoscale), true);
  await page.uncheck('#autoscale');
});

test('defect: the uniform view was solid yellow (each head scaled to its own max)', { skip }, async () => {
  await page.selectOption('#view-select', 'uniform');
  const px = await page.evaluate(() => {
    const c = document.getElementById('heatmap');
    const { left, top, cell } = c.dataset;
    const d = c.getContext('2d').getImageData(Number(left) + Number(cell), Number(top) + Number(cell), 1, 1).data;
    return [d[0], d[1], d[2], window.attnlab.app.run.n];
  });
  assert.notDeepEqual(px.slice(0, 3), [253, 231, 37], 'not the top of the palette');
  // 1/n on the 0-1 viridis scale: dark (purple-blue), as 1/14 should be
  assert.ok(px[0] < 90 && px[2] > 80, `1/${px[3]} drawn dark: ${px}`);
  await page.selectOption('#view-select', 'standard');
});

test('defect: effective attention and standard next to it had different scales', { skip }, async () => {
  const prev = await page.evaluate(() => window.attnlab.app.effCount);
  await page.selectOption('#view-select', 'effective');
  await page.waitForFunction((n) => window.attnlab.app.effCount > n && !window.attnlab.app.effJob, prev, { timeout: 30000 });
  await waitIdle(page);
  const s = await page.evaluate(() => {
    const a = window.attnlab.explorer.current.scale;
    const b = window.attnlab.explorer.companionCurrent.scale;
    return { a: [a.min, a.max], b: [b.min, b.max], help: document.getElementById('view-help').textContent };
  });
  assert.match(s.help, /same scale/);
  assert.deepEqual(s.a, s.b, 'one scale for both maps');
  assert.equal(s.a[0], -s.a[1], 'symmetric around 0');
});

test('defect: effective minus standard was blank on a short sentence with the reason in notation', { skip }, async () => {
  await page.selectOption('#view-select', 'effective_minus_standard');
  await waitIdle(page);
  const note = await page.evaluate(() => ({ hidden: document.getElementById('detail-note').hidden,
                                            text: document.getElementById('detail-note').textContent }));
  assert.equal(note.hidden, false, 'a note right under the title');
  assert.match(note.text, /Blank on purpose/);
  assert.match(note.text, /14 tokens/);
  assert.doesNotMatch(note.text, /[σε\u211d]/, 'plain words, no notation');
  await page.selectOption('#view-select', 'standard');
  assert.equal(await page.isVisible('#detail-note'), false);
});

test('defect: the tooltip called the attention weight "value"', { skip }, async () => {
  const box = await page.locator('#heatmap').boundingBox();
  const ds = await page.evaluate(() => ({ ...document.getElementById('heatmap').dataset }));
  const scale = box.width / (await page.evaluate(() => document.getElementById('heatmap').width));
  await page.mouse.move(box.x + (Number(ds.left) + 1.5 * Number(ds.cell)) * scale, box.y + (Number(ds.top) + 1.5 * Number(ds.cell)) * scale);
  const tip = await page.textContent('#tooltip');
  assert.match(tip, /attention weight: /);
  assert.doesNotMatch(tip, /\bvalue:/);
});

test('defect: arrow keys did nothing until something was clicked', { skip }, async () => {
  const p = await openPage();
  await p.evaluate(() => document.activeElement?.blur());
  const before1 = await p.evaluate(() => [window.attnlab.explorer.layer, window.attnlab.explorer.head]);
  await p.keyboard.press('ArrowRight');
  await p.keyboard.press('ArrowDown');
  const after1 = await p.evaluate(() => [window.attnlab.explorer.layer, window.attnlab.explorer.head]);
  assert.deepEqual(after1, [before1[0] + 1, before1[1] + 1]);
  await p.context().close();
});

test('defect: "every 3th label" (ordinals) on a long input', { skip }, async () => {
  const p = await openPage({ width: 1280, height: 720 });
  await runText(p, Array.from({ length: 90 }, (_, i) => ['the', 'cat', 'sat', 'on', 'a', 'mat'][i % 6]).join(' '));
  const title = await p.textContent('#detail-title');
  const m = /every (\d+)(st|nd|rd|th) label/.exec(title);
  assert.ok(m, title);
  const n = Number(m[1]);
  const want = n % 100 >= 11 && n % 100 <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' }[n % 10] ?? 'th');
  assert.equal(m[2], want, title);
  await p.context().close();
});

// The grid and the large heatmap side by side, the heatmap fully on screen once the explorer is.
async function checkLayout(p, viewport) {
  const r = await p.evaluate(() => {
    document.getElementById('explorer').scrollIntoView({ block: 'start' });
    const g = document.getElementById('grid').getBoundingClientRect();
    const h = document.getElementById('heatmap').getBoundingClientRect();
    return { g: g.toJSON(), h: h.toJSON(), w: innerWidth, vh: innerHeight };
  });
  assert.ok(r.h.left >= r.g.right - 1, `heatmap right of the grid at ${viewport}: ${JSON.stringify(r)}`);
  assert.ok(r.h.top < r.g.bottom, `heatmap beside the grid, not below it, at ${viewport}`);
  assert.ok(r.h.right <= r.w + 1, `heatmap inside the window's width at ${viewport}`);
  return r;
}

test('defect: at 1280x720 and at 150% zoom the heatmap fell below the grid; presentation mode fits', { skip }, async () => {
  for (const [viewport, size, dsf] of [['1280x720', { width: 1280, height: 720 }, 1], ['150% zoom', { width: 853, height: 480 }, 1.5]]) {
    const context = await browser.newContext({ viewport: size, deviceScaleFactor: dsf });
    const p = await newPage(context);
    await p.goto(server.url);
    await p.waitForFunction(() => window.attnlab?.app?.run, null, { timeout: 60000 });
    await waitIdle(p);
    await checkLayout(p, viewport);
    await p.click('#present');
    await p.waitForTimeout(50);
    const r = await checkLayout(p, `${viewport}, presentation mode`);
    assert.ok(r.h.bottom <= r.vh + 1, `the whole heatmap is on screen in presentation mode at ${viewport}: ${JSON.stringify(r)}`);
    assert.equal(await p.isVisible('#model-panel'), false, 'presentation mode hides the controls');
    assert.equal(await p.isVisible('#view-select'), false);
    assert.equal(await p.isVisible('#explain'), true, 'the step-by-step view stays');
    await p.keyboard.press('Escape');
    assert.equal(await p.isVisible('#model-panel'), true, 'Escape leaves presentation mode');
    await context.close();
  }
});

test('defect: at 1400x900 only three rows of the heatmap showed', { skip }, async () => {
  const r = await checkLayout(page, '1400x900');
  assert.ok(r.h.bottom <= r.vh + 1, `the whole heatmap fits the window once the explorer is on screen: ${JSON.stringify(r.h)}`);
});

test('defect: an empty sentence ran on [CLS] [SEP] with no hint', { skip }, async () => {
  const p = await openPage();
  const runs = await p.evaluate(() => window.attnlab.app.runCount);
  await p.fill('#text', '   ');
  await p.click('#run');
  await p.waitForFunction(() => !document.getElementById('run-error').hidden);
  assert.match(await p.textContent('#run-error'), /Type a sentence first.*\[CLS\] and \[SEP\]/);
  assert.equal(await p.evaluate(() => window.attnlab.app.runCount), runs, 'nothing ran');
  await p.waitForTimeout(400); // the tokenizer's answer to the empty text keeps the hint
  assert.match(await p.textContent('#run-error'), /Type a sentence first/);
  await p.context().close();
});

test('defect: a 300-word paragraph was cut to 128 tokens while the caption quoted all of it', { skip }, async () => {
  const p = await openPage();
  const words = Array.from({ length: 299 }, (_, i) => ['the', 'cat', 'sat', 'on', 'a', 'mat', 'and', 'slept'][i % 8]);
  words.push('zebra');
  await runText(p, words.join(' '));
  const r = await p.evaluate(() => ({ caption: document.getElementById('shown-text').textContent,
                                      warn: document.getElementById('shown-warning'),
                                      n: window.attnlab.app.run.n }));
  const warn = await p.evaluate(() => ({ hidden: document.getElementById('shown-warning').hidden,
                                         text: document.getElementById('shown-warning').textContent,
                                         colour: getComputedStyle(document.getElementById('shown-warning')).color }));
  assert.equal(r.n, 128);
  assert.doesNotMatch(r.caption, /zebra/, 'the caption quotes only what the model read');
  assert.equal(warn.hidden, false);
  assert.match(warn.text, /only its first 128 tokens/);
  assert.notEqual(warn.colour, 'rgb(91, 100, 114)', 'not the grey of a note');
  await p.context().close();
});

test('defect: a padded length past the model left the explorer blank with the error in grey', { skip }, async () => {
  const p = await openPage({ width: 1400, height: 900 }, '?view=effective&pad=4000');
  await p.waitForFunction(() => window.attnlab.app.effCount > 0 && !window.attnlab.app.effJob, null, { timeout: 30000 });
  await waitIdle(p);
  const r = await p.evaluate(() => ({ err: document.getElementById('eff-error').textContent,
                                      hidden: document.getElementById('eff-error').hidden,
                                      cls: document.getElementById('eff-error').className,
                                      view: window.attnlab.current?.view, size: window.attnlab.current?.size }));
  assert.equal(r.hidden, false);
  assert.equal(r.cls, 'error');
  assert.match(r.err, /4000 is more than this model\u2019s 128 positions/);
  assert.equal(r.view, 'effective', 'the explorer is drawn');
  assert.equal(r.size, 128);
  await p.context().close();
});

test('defect: a Hub mirror without CORS headers failed with "Failed to fetch" and no hint', { skip }, async () => {
  const mirror = createServer((req, res) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end('{}'); });
  await new Promise((resolve) => mirror.listen(0, '127.0.0.1', resolve));
  try {
    const p = await openPage();
    await p.click('summary');
    await p.fill('#hub-base', `http://127.0.0.1:${mirror.address().port}`);
    await p.fill('#hub-repo', 'someone/some-model');
    await p.click('#hub-load');
    await p.waitForFunction(() => !document.getElementById('model-error').hidden, null, { timeout: 30000 });
    const msg = await p.textContent('#model-error');
    assert.match(msg, /CORS header Access-Control-Allow-Origin/, msg);
    await p.context().close();
  } finally {
    mirror.close();
  }
});

test('defect: weights without tokenizer files "loaded" and then failed with an internal id', { skip }, async () => {
  const p = await openPage();
  const dir = path.join(root, 'tests/golden/bert');
  await p.setInputFiles('#file-input', [path.join(dir, 'config.json'), path.join(dir, 'model.safetensors')]);
  await p.waitForFunction(() => !document.getElementById('model-error').hidden, null, { timeout: 30000 });
  assert.match(await p.textContent('#model-error'), /no tokenizer files \(vocab\.txt, tokenizer\.json/);
  await p.click('#run');
  await p.waitForFunction(() => !document.getElementById('run-error').hidden, null, { timeout: 30000 });
  const err = await p.textContent('#run-error');
  assert.match(err, /no tokenizer files/);
  assert.doesNotMatch(err, /'m\d+'|model m\d/, 'no internal model id');
  await p.context().close();
});

test('defect: the default model splits common words with no word on why', { skip }, async () => {
  const note = await page.evaluate(() => ({ hidden: document.getElementById('split-note').hidden,
                                            text: document.getElementById('split-note').textContent,
                                            tokens: window.attnlab.app.run.tokens }));
  assert.ok(note.tokens.includes('##ired'), 'the default sentence has a split word');
  assert.equal(note.hidden, false);
  assert.match(note.text, /\u201ctired\u201d is split into \u201ct ##ired\u201d because this small model learned a vocabulary of only 8,000 pieces/);
});

// Figures drawn into canvases by the Analyses panel: every fillText recorded with its canvas.
async function recordCanvasText(p) {
  await p.evaluate(() => {
    const orig = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function fillText(text, x, y, ...rest) {
      (this.canvas.__texts ??= []).push({ text: String(text), x, right: this.textAlign === 'left' || this.textAlign === 'start'
        ? x + this.measureText(String(text)).width : x, align: this.textAlign });
      return orig.call(this, text, x, y, ...rest);
    };
  });
}

async function runOwnAnalysis(p, id, sentences) {
  await p.selectOption('#analysis-select', id);
  await p.selectOption('#dataset-select', 'own');
  await p.fill('#own-sentences', sentences);
  await p.dispatchEvent('#own-sentences', 'change');
  const before1 = await p.evaluate(() => window.attnlab.analyses.runs);
  await p.click('#analysis-run');
  await p.waitForFunction((b) => window.attnlab.analyses.runs > b || !document.getElementById('analysis-error').hidden,
                          before1, { timeout: 60000 });
}

test('defects: POS rows were labelled L0.. with a cut title; pattern colours reused standard/effective', { skip }, async () => {
  const p = await openPage();
  await recordCanvasText(p);
  await runOwnAnalysis(p, 'pos', 'The/DET cat/NOUN sat/VERB on/ADP the/DET mat/NOUN ./PUNCT\nShe/PRON read/VERB the/DET book/NOUN quickly/ADV ./PUNCT');
  const pos = await p.evaluate(() => [...document.querySelectorAll('#analysis-results figure')]
    .filter((f) => f.dataset.name.startsWith('pos_heads_'))
    .map((f) => { const c = f.querySelector('canvas'); return { width: c.width, texts: c.__texts ?? [] }; }));
  assert.equal(pos.length, 2);
  for (const f of pos) {
    const texts = f.texts.map((t) => t.text);
    assert.ok(texts.includes('NOUN') && texts.includes('VERB'), `tag names label the rows: ${texts.join(',')}`);
    assert.ok(!texts.includes('L0'), 'no layer labels on tag rows');
    const title = f.texts[0];
    assert.ok(title.right <= f.width, `the title fits: ${title.text} ends at ${title.right} of ${f.width}`);
  }
  const colours = await p.evaluate(async () => {
    const charts = await import('./charts.js');
    return { pattern: charts.PATTERN_COLOURS, series: charts.CATEGORICAL.slice(0, 2) };
  });
  for (const c of colours.series) assert.ok(!colours.pattern.includes(c), `pattern colours avoid ${c}`);
  await p.context().close();
});

test('defect: figures of a previous analysis stayed on screen under an error', { skip }, async () => {
  const p = await openPage();
  await runOwnAnalysis(p, 'tokens', 'The cat sat on the mat.');
  assert.ok(await p.evaluate(() => document.querySelectorAll('#analysis-results figure').length) > 0);
  // the part-of-speech analysis needs tagged sentences: an error
  await runOwnAnalysis(p, 'pos', 'The cat sat on the mat.');
  assert.equal(await p.isVisible('#analysis-error'), true);
  assert.equal(await p.evaluate(() => document.querySelectorAll('#analysis-results figure').length), 0,
               'no figures of the earlier analysis under the error');
  assert.equal(await p.isDisabled('#analysis-export-json'), true);
  await p.context().close();
});
