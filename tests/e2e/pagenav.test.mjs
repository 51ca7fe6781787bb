// pagenav.test.mjs: the page as one place and the defects a careful user hit (headless Chromium, the real
// WASM worker): the navigation (an entry per registered section, each section's own address, a link that
// opens its section), a heatmap on the first screen at 1280 x 720, controls a finger can hit on a phone,
// presentation mode's larger labels; the heatmap's tooltip after a change by keyboard or to lines, a tap's
// tooltip and read-out naming one cell, the figures drawn at the screen's resolution, the comparison's
// caption naming each model's heads, and an importance link that opens on its result.
// Each test is written so that the page before its fix fails it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { embeddedModelOnly, launchChromium, linkUrl, modelReady, newPage, root, setControls, skipReason, startServer, waitIdle } from './helpers.mjs';

const skip = skipReason;
const noTasks = !existsSync(path.join(root, 'build/data/tasks/pos.jsonl')) ? 'no built-in tasks (build/data/tasks)' : false;

let server;   // every embedded model (the default: attnlab-small-bert, 6 x 8 heads)
let mini;     // attnlab-mini-bert alone (4 x 4 heads): the importance run
let browser;
let work;

before(async () => {
  if (skip) return;
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-pagenav-'));
  server = await startServer();
  mini = await startServer({ AL_MODELS_DIR: embeddedModelOnly(work, 'attnlab-mini-bert') });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.child.kill();
  mini?.child.kill();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function openPage(url, { viewport = { width: 1280, height: 720 }, ...options } = {}) {
  const context = await browser.newContext({ viewport, ...options });
  const p = await newPage(context);
  await p.goto(url);
  await modelReady(p);
  return p;
}

// The window's point at the middle of the large heatmap's cell (q, k).
const cellPoint = (p, q, k) => p.evaluate(([qq, kk]) => {
  const c = document.getElementById('heatmap');
  const r = c.getBoundingClientRect();
  const f = r.width / Number(c.dataset.w);
  const { left, top, cell } = c.dataset;
  return { x: r.left + (Number(left) + (kk + 0.5) * Number(cell)) * f, y: r.top + (Number(top) + (qq + 0.5) * Number(cell)) * f };
}, [q, k]);

const SECTIONS = ['model', 'explorer', 'explain', 'analyses', 'papa', 'importance'];

test('navigation: an entry per section; an entry leads there and gives the page its address; a link and #<section> open it', { skip }, async () => {
  const p = await openPage(server.url);
  // an encoder's page: the decoder panels' sections (lm, generate, lm-need) are hidden, and so are their entries
  const shown = (attr) => p.$$eval('#page-nav li:not([hidden]) a', (as, at) => as.map((a) => a.getAttribute(at)), attr);
  assert.deepEqual(await shown('data-section'), SECTIONS);
  assert.deepEqual(await shown('href'), SECTIONS.map((s) => `#${s}`));
  assert.deepEqual(await p.$$eval('#lm-panel, #generate-panel, #lm-need', (ss) => ss.map((s) => s.hidden)), [true, true, true]);
  const navBottom = () => p.evaluate(() => document.getElementById('page-nav').getBoundingClientRect().bottom);
  const topOf = (id) => p.evaluate((i) => document.getElementById(i).getBoundingClientRect().top, id);
  await p.click('#page-nav a[data-section=papa]');
  assert.equal(await p.evaluate(() => window.attnlab.state.section), 'papa');
  let top = await topOf('papa');
  assert.ok(top >= (await navBottom()) - 1 && top < 150, `the PAPA section starts at ${top} px, under the bar`);
  assert.equal(await p.evaluate(() => document.activeElement?.id), 'papa', 'the section has the focus');
  assert.equal(await p.getAttribute('#page-nav a[data-section=papa]', 'aria-current'), 'location');
  const link = await linkUrl(p);
  assert.match(link, /#v1\./);
  assert.equal((await p.evaluate(() => window.attnlab.link.read())).values.section, 'papa');
  await p.context().close();

  // the link opens at its section once everything above it is drawn; so does the short address
  for (const [url, id] of [[link, 'papa'], [`${server.url}#importance`, 'importance'], [`${server.url}#explain`, 'explain']]) {
    const q = await openPage(url);
    await q.waitForTimeout(300);
    const at = await q.evaluate((i) => ({ top: document.getElementById(i).getBoundingClientRect().top, y: scrollY,
                                          section: window.attnlab.state.section, end: scrollY + innerHeight >= document.scrollingElement.scrollHeight - 2,
                                          bar: document.getElementById('page-nav').getBoundingClientRect().bottom }), id);
    assert.equal(at.section, id);
    // at the window's top, under the bar (the last sections: the page scrolled to its end, the section in view)
    assert.ok(at.y > 300 && at.top >= at.bar - 1 && (at.top < 150 || (at.end && at.top < 720 - 200)),
              `${url}: the ${id} section starts at ${at.top} px (scrolled ${at.y})`);
    assert.deepEqual(q.errors, []);
    await q.context().close();
  }
  // a section this page does not have is said, and the page opens at its top
  const r = await openPage(`${server.url}#nowhere`);
  assert.match(await r.textContent('#link-error'), /section: not one of model, explorer, explain, analyses, lm, generate, lm-need, papa, importance/);
  assert.equal(await r.evaluate(() => scrollY), 0);
  await r.context().close();
});

test('at 1280 x 720 the first screen shows the heatmap, whole', { skip }, async () => {
  const p = await openPage(server.url);
  const r = await p.evaluate(() => ({ h: document.getElementById('heatmap').getBoundingClientRect().toJSON(), y: scrollY,
                                      grid: document.getElementById('grid').getBoundingClientRect().toJSON() }));
  assert.equal(r.y, 0);
  assert.ok(r.h.width > 300, `the heatmap is ${r.h.width} px wide`);
  assert.ok(r.h.top >= 0 && r.h.bottom <= 720, `the heatmap spans ${r.h.top}..${r.h.bottom} of 720`);
  assert.ok(r.grid.bottom <= 720, `the grid of heads ends at ${r.grid.bottom}`);
  await p.context().close();
});

test('on a phone every control is at least 44 px to touch, the thumbnails of the heads too', { skip }, async () => {
  const p = await openPage(server.url, { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, hasTouch: true, isMobile: true });
  const small = await p.evaluate(() => [...document.querySelectorAll('main button, main select, main summary, main input, #page-nav a, main label.check')]
    .filter((e) => e.offsetParent !== null && !['checkbox', 'radio', 'hidden'].includes(e.type))
    .map((e) => ({ what: `${e.tagName.toLowerCase()}#${e.id}.${String(e.className).split(' ')[0]}`, r: e.getBoundingClientRect() }))
    .filter(({ r }) => r.width > 0 && r.height < 43.5)
    .map(({ what, r }) => `${what} ${Math.round(r.width)}x${Math.round(r.height)}`));
  assert.deepEqual(small, []);
  const thumb = await p.$eval('#grid .thumb', (b) => b.getBoundingClientRect().toJSON());
  assert.ok(thumb.width >= 43.5 && thumb.height >= 43.5, `a thumbnail is ${thumb.width} x ${thumb.height}`);
  assert.ok(await p.evaluate(() => document.scrollingElement.scrollWidth) <= 390, 'the page stays as wide as the phone');
  await p.context().close();
});

test('presentation mode enlarges the heatmap and its labels', { skip }, async () => {
  const p = await openPage(server.url);
  await p.evaluate(() => {
    window.__fonts = [];
    const fill = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function fillText(...a) {
      if (this.canvas.id === 'heatmap') window.__fonts.push(Number.parseFloat(/(\d+(\.\d+)?)px/.exec(this.font)[1]));
      return fill.apply(this, a);
    };
  });
  const measure = async () => {
    await p.evaluate(() => { window.__fonts = []; window.attnlab.explorer.render(); });
    await waitIdle(p);
    return p.evaluate(() => ({ width: document.getElementById('heatmap').getBoundingClientRect().width, font: Math.max(...window.__fonts) }));
  };
  const before = await measure();
  await p.click('#present');
  const during = await measure();
  assert.ok(during.width > before.width, `the heatmap: ${before.width} px, presenting ${during.width} px`);
  assert.ok(during.font >= 16 && during.font > before.font, `its labels: ${before.font} px, presenting ${during.font} px`);
  await p.keyboard.press('Escape');
  const after = await measure();
  assert.equal(after.font, before.font, 'leaving it draws the labels as before');
  await p.context().close();
});

test('the tooltip follows the drawn map: a head chosen by keyboard reads the new value, the lines hide it', { skip }, async () => {
  const p = await openPage(server.url);
  // a cell whose value differs between this head and the next
  const cell = await p.evaluate(() => {
    const ex = window.attnlab.explorer;
    const a = ex.displayed(ex.layer, ex.head);
    const b = ex.displayed(ex.layer, ex.head + 1);
    for (let q = 1; q < a.size; q++) for (let k = 1; k < a.size; k++) {
      if (a.matrix[q * a.size + k].toPrecision(4) !== b.matrix[q * a.size + k].toPrecision(4)) return { q, k };
    }
    return null;
  });
  assert.ok(cell, 'two heads differ somewhere');
  const at = await cellPoint(p, cell.q, cell.k);
  await p.mouse.move(at.x, at.y);
  const value = () => p.evaluate(({ q, k }) => window.attnlab.current.matrix[q * window.attnlab.current.size + k].toPrecision(4), cell);
  const tip = () => p.evaluate(() => ({ hidden: document.getElementById('tooltip').hidden, text: document.getElementById('tooltip').textContent }));
  assert.ok((await tip()).text.endsWith(await value()));
  const head = await p.evaluate(() => window.attnlab.explorer.head);
  await p.evaluate(() => document.activeElement?.blur());
  await p.keyboard.press('ArrowRight');
  await waitIdle(p);
  assert.equal(await p.evaluate(() => window.attnlab.explorer.head), head + 1);
  const now = await tip();
  assert.ok(now.hidden || now.text.endsWith(await value()), `the tooltip reads "${now.text}", the map holds ${await value()}`);
  await p.selectOption('#draw-as', 'lines');
  await waitIdle(p);
  assert.equal((await tip()).hidden, true, 'no heatmap tooltip over the lines');
  await p.context().close();
});

test('on a touch screen a tapped cell\u2019s tooltip, its box and the read-out name the same cell', { skip }, async () => {
  const p = await openPage(server.url, { viewport: { width: 1000, height: 900 }, hasTouch: true });
  await p.locator('#heatmap').scrollIntoViewIfNeeded();
  for (const [q, k] of [[4, 2], [7, 9]]) {
    const at = await cellPoint(p, q, k);
    await p.touchscreen.tap(at.x, at.y);
    await p.waitForTimeout(100);
    const r = await p.evaluate(() => {
      const t = document.getElementById('tooltip');
      const c = document.getElementById('cell-cursor').getBoundingClientRect();
      return { tip: [t.dataset.query, t.dataset.key], readout: document.getElementById('cell-readout').textContent,
               box: { x: c.left + c.width / 2, y: c.top + c.height / 2 }, cursorHidden: document.getElementById('cell-cursor').hidden };
    });
    assert.deepEqual(r.tip, [String(q), String(k)], 'the tooltip');
    assert.match(r.readout, new RegExp(`^Cell: query ${q}: .*, key ${k}: `), 'the read-out');
    assert.equal(r.cursorHidden, false);
    assert.ok(Math.abs(r.box.x - at.x) < 3 && Math.abs(r.box.y - at.y) < 3, `the box at ${JSON.stringify(r.box)}, the tap at ${JSON.stringify(at)}`);
  }
  await p.context().close();
});

// Every canvas under root whose backing store is not its displayed size times the screen's ratio.
const blurred = (p, root) => p.$$eval(`${root} canvas`, (cs) => cs.filter((c) => c.getBoundingClientRect().width > 0)
  .filter((c) => Math.abs(c.width - devicePixelRatio * c.getBoundingClientRect().width) > devicePixelRatio + 0.5)
  .map((c) => `${c.closest('figure')?.dataset.name ?? c.id}: ${c.width} for ${c.getBoundingClientRect().width} css px`));

test('on a 2x screen the PAPA figures are drawn at 2x (curves, MLM curve, λ grid, constants, scatter); the scatter names each model\u2019s heads', { skip }, async () => {
  const p = await openPage(server.url, { deviceScaleFactor: 2 });
  await p.waitForSelector('#papa-examples:not([hidden])');
  const model = await p.evaluate(() => window.attnlab.state.model?.id);
  await p.selectOption('#papa-example-select', `pos-${model}.json`);
  await p.click('#papa-example-open');
  await p.waitForFunction(() => !window.attnlab.panels.papa.job && window.attnlab.panels.papa.charts?.models);
  const names = await p.$$eval('#papa-results figure canvas', (cs) => cs.map((c) => c.closest('figure').dataset.name));
  for (const n of ['papa_scores', 'papa_lambdas', 'papa_models']) assert.ok(names.includes(n), `${n} in ${names.join(', ')}`);
  assert.deepEqual(await blurred(p, '#papa-results'), []);
  // the comparison of the embedded models: one figure with models of 48 and 16 heads
  await p.click('#papa-example-compare');
  await p.waitForFunction(() => !window.attnlab.panels.papa.job && window.attnlab.panels.papa.last?.comparison);
  await p.waitForFunction(() => document.querySelector('#papa-results figure[data-name=papa_models] figcaption'));
  assert.deepEqual(await blurred(p, '#papa-results'), []);
  const caption = await p.textContent('#papa-results figure[data-name=papa_models] figcaption');
  const heads = { 'attnlab-small-bert': 48, 'attnlab-mini-bert': 16 };
  const said = [...caption.matchAll(/(\d+) of (\d+) heads(?: for ([\w-]+))?/g)];
  if (!/with every head constant/.test(caption)) {
    assert.ok(said.length >= 2, caption);
    for (const [, , n, who] of said) assert.equal(Number(n), heads[who], `${who ?? 'one count for every model'}: ${caption}`);
  }
  assert.deepEqual(p.errors, []);
  await p.context().close();
});

test('the importance figures are drawn at 2x; the importance link opens on its result, scrolled to and focused', { skip: skip || noTasks }, async () => {
  const p = await openPage(mini.url, { deviceScaleFactor: 2 });
  await setControls(p, { 'papa-train': '48', 'papa-val': '24', 'papa-fractions': '1,0.5,0', 'papa-seeds': '1,2', 'papa-epochs': '1',
                         'papa-rank-epochs': '1', 'papa-rank-n': '24', 'papa-mlm': false, 'imp-examples': '24', 'imp-least-k': '3' });
  await p.click('#imp-run');
  await p.waitForFunction(() => (window.attnlab.panels.importance.runs > 0 || !document.getElementById('imp-error').hidden) &&
    !window.attnlab.panels.importance.job, null, { timeout: 600000 });
  assert.equal(await p.evaluate(() => document.getElementById('imp-error').textContent), '');
  const names = await p.$$eval('#imp-results figure canvas', (cs) => cs.map((c) => c.closest('figure').dataset.name));
  for (const n of ['imp_spearman', 'imp_grid_lambda']) assert.ok(names.includes(n), `${n} in ${names.join(', ')}`);
  assert.deepEqual(await blurred(p, '#imp-results'), []);
  const link = await linkUrl(p);
  await p.context().close();

  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  const q = await newPage(context);
  await q.goto(link);
  await q.waitForSelector('#imp-stored-table');
  const at = await q.evaluate(() => ({ top: document.getElementById('imp-link').getBoundingClientRect().top, y: scrollY,
                                       focused: document.activeElement?.id }));
  assert.ok(at.y > 500, `scrolled ${at.y} px`);
  assert.ok(at.top >= 0 && at.top < 720 - 150, `the result box at ${at.top} px`);
  assert.equal(at.focused, 'imp-link');
  await modelReady(q);
  const after = await q.evaluate(() => document.getElementById('imp-link').getBoundingClientRect().top);
  assert.ok(after >= -50 && after < 720, `the result box at ${after} px once the model is loaded`);
  await context.close();
});

test('the stored-example menu keeps the user\u2019s choice when another model loads', { skip }, async () => {
  const p = await openPage(server.url);
  await p.waitForSelector('#papa-examples:not([hidden])');
  const offered = await p.$$eval('#papa-example-select option', (o) => o.map((x) => x.value));
  assert.ok(offered.length >= 2, offered.join(', '));
  const chosen = offered[offered.length - 1];
  await p.selectOption('#papa-example-select', chosen);
  // another embedded model: the menu is rebuilt for the loaded models
  const before = await p.evaluate(() => window.attnlab.app.modelId);
  const other = await p.$$eval('#embedded-select option', (o) => o.map((x) => x.value).filter((v) => v && v !== document.getElementById('embedded-select').value));
  await p.selectOption('#embedded-select', other[0]);
  await p.click('#embedded-load');
  await p.waitForFunction((id) => window.attnlab.app.modelId && window.attnlab.app.modelId !== id && !window.attnlab.app.modelJob, before, { timeout: 120000 });
  await waitIdle(p);
  await p.waitForTimeout(300);
  assert.equal(await p.$eval('#papa-example-select', (s) => s.value), chosen);
  await p.context().close();
});

test('a truncated weights file is said in plain words, and its message goes once a run succeeds', { skip }, async () => {
  const dir = path.join(work, 'truncated');
  mkdirSync(dir, { recursive: true });
  const src = path.join(root, 'models/attnlab-mini-bert');
  for (const f of ['config.json', 'vocab.txt', 'tokenizer_config.json']) copyFileSync(path.join(src, f), path.join(dir, f));
  const weights = readFileSync(path.join(src, 'model.safetensors'));
  writeFileSync(path.join(dir, 'model.safetensors'), weights.subarray(0, Math.floor(weights.length / 2)));
  const p = await openPage(server.url);
  await p.setInputFiles('#file-input', ['config.json', 'model.safetensors', 'vocab.txt', 'tokenizer_config.json'].map((f) => path.join(dir, f)));
  await p.waitForSelector('#model-error:not([hidden])', { timeout: 60000 });
  const said = await p.textContent('#model-error');
  assert.match(said, /^model\.safetensors is incomplete: /, said);
  assert.match(said, /(download|copy) .* again/i, said);
  assert.match(said, /The previous model is still loaded/);
  await p.click('#run');
  await p.waitForFunction(() => document.getElementById('model-error').hidden, null, { timeout: 30000 });
  await p.context().close();
});

test('a task file that is not UTF-8: every bad line is named and the picker does not show the refused file', { skip }, async () => {
  const p = await openPage(server.url);
  await setControls(p, { 'papa-task': 'file' });
  const bad = path.join(work, 'latin1-lines.csv');
  writeFileSync(bad, Buffer.concat([Buffer.from('id,review,stars\n1,caf'), Buffer.from([0xe9]), Buffer.from(',up\n2,ok,down\n3,na'),
                                    Buffer.from([0xef]), Buffer.from('ve,up\n4,'), Buffer.from([0xe0]), Buffer.from(' la,down\n')]));
  await p.setInputFiles('#papa-train-file', bad);
  await p.waitForSelector('#papa-files-error:not([hidden])');
  const said = await p.textContent('#papa-files-error');
  assert.match(said, /^latin1-lines\.csv: line 2: invalid UTF-8 at byte 21 of the file; also lines 4, 5 \(3 lines in all\)/, said);
  assert.equal(await p.$eval('#papa-train-file', (i) => i.files.length), 0, 'the picker shows no file');
  assert.doesNotMatch(await p.textContent('#papa-files-info'), /No file chosen yet/);
  await p.context().close();
});

test('SentencePiece tokens read without their "\u2581" marker: the heatmap\u2019s labels, the token list, the tooltip shows the raw piece too', { skip }, async () => {
  // the DeBERTa-v3 golden checkpoint with an spm.model of its golden words (as tests/e2e/families.test.mjs builds it)
  const { spmModel, textOf } = await import('./family_tokenizers.mjs');
  const golden = path.join(root, 'tests/golden/deberta_v3');
  const dir = path.join(work, 'deberta-spm');
  mkdirSync(dir, { recursive: true });
  for (const f of ['config.json', 'model.safetensors']) copyFileSync(path.join(golden, f), path.join(dir, f));
  const words = [5, 17, 42, 63];
  writeFileSync(path.join(dir, 'spm.model'), spmModel({ words: new Set(words) }));
  const p = await openPage(server.url);
  await p.evaluate(() => {
    window.__labels = [];
    const fill = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function fillText(t, ...a) {
      if (this.canvas.id === 'heatmap') window.__labels.push(String(t));
      return fill.call(this, t, ...a);
    };
  });
  const before = await p.evaluate(() => window.attnlab.app.runCount);
  await p.setInputFiles('#file-input', ['config.json', 'model.safetensors', 'spm.model'].map((f) => path.join(dir, f)));
  await p.waitForFunction((n) => window.attnlab.app.runCount > n && !window.attnlab.app.modelJob, before, { timeout: 60000 });
  await p.fill('#text', textOf(words));
  const runs = await p.evaluate(() => window.attnlab.app.runCount);
  await p.evaluate(() => { window.__labels = []; });
  await p.click('#run');
  await p.waitForFunction((n) => window.attnlab.app.runCount > n, runs, { timeout: 30000 });
  await waitIdle(p);
  const raw = await p.evaluate(() => window.attnlab.app.run.tokens);
  assert.deepEqual(raw, ['[CLS]', ...words.map((i) => `\u2581t${i}`), '[SEP]'], 'the engine\u2019s pieces are unchanged');
  const drawn = await p.evaluate(() => window.__labels);
  for (const i of words) assert.ok(drawn.includes(`t${i}`), `t${i} drawn: ${drawn.join(' ')}`);
  assert.ok(!drawn.some((t) => t.includes('\u2581')), `no marker drawn: ${drawn.join(' ')}`);
  const chips = await p.$$eval('#tokens .tok', (s) => s.map((x) => ({ text: x.textContent, title: x.title })));
  assert.deepEqual(chips.map((c) => c.text), ['[CLS]', ...words.map((i) => `t${i}`), '[SEP]']);
  assert.equal(chips[1].title, `#1: \u2581t${words[0]}`);
  await p.locator('#heatmap').scrollIntoViewIfNeeded();
  const at = await cellPoint(p, 1, 2);
  await p.mouse.move(at.x, at.y);
  const tip = await p.textContent('#tooltip');
  assert.ok(tip.includes(`query 1: t${words[0]} (\u2581t${words[0]})`) && tip.includes(`key 2: t${words[1]} (\u2581t${words[1]})`), tip);
  assert.deepEqual(await p.evaluate(() => window.attnlab.current.labels), raw, 'the export\u2019s tokens stay the raw pieces');
  await p.context().close();
});

// Explains (layer, head) for query token q and waits until it is drawn.
async function explain(p, layer, head, q) {
  await p.evaluate(([l, h]) => window.attnlab.explorer.select(l, h), [layer, head]);
  await waitIdle(p);
  await p.locator('#explain').scrollIntoViewIfNeeded(); // the view computes once it is on screen
  const prev = await p.evaluate(() => window.attnlab.panels.explain.count);
  await p.selectOption('#explain-query', String(q));
  await p.evaluate(() => window.attnlab.panels.explain.update());
  await p.waitForFunction((n) => window.attnlab.panels.explain.count > n && !window.attnlab.panels.explain.runner.current, prev, { timeout: 60000 });
  return p.evaluate(() => ({
    steps: Object.fromEntries([...document.querySelectorAll('#explain .xstep')].map((s) => [s.id, s.textContent])),
    heads: [...document.querySelectorAll('#explain table thead th')].map((t) => t.textContent),
    masks: [...document.querySelectorAll('#explain table tbody tr')].map((r) => r.children[r.children.length - 5]?.textContent),
  }));
}

async function loadFolder(p, dir, files) {
  const before = await p.evaluate(() => ({ model: window.attnlab.app.modelId, runs: window.attnlab.app.runCount }));
  await p.setInputFiles('#file-input', files.map((f) => path.join(dir, f)));
  await p.waitForFunction((b) => window.attnlab.app.modelId !== b.model && window.attnlab.app.runCount > b.runs && !window.attnlab.app.modelJob,
                          before, { timeout: 60000 });
  await waitIdle(p);
}

test('explain one head agrees with its table: DeBERTa\u2019s "sum" column and √(d × 3), ModernBERT\u2019s excluded keys', { skip }, async () => {
  const { spmModel, unigramJson, textOf } = await import('./family_tokenizers.mjs');
  const words = [5, 17, 42, 63, 21, 33, 8, 12, 50, 44, 29, 36];
  const folderOf = (name, from, tokenizer) => {
    const dir = path.join(work, name);
    mkdirSync(dir, { recursive: true });
    for (const f of ['config.json', 'model.safetensors']) copyFileSync(path.join(root, 'tests/golden', from, f), path.join(dir, f));
    for (const [f, bytes] of Object.entries(tokenizer)) writeFileSync(path.join(dir, f), bytes);
    return dir;
  };
  const p = await openPage(server.url);
  await loadFolder(p, folderOf('explain-deberta', 'deberta_v3', { 'spm.model': spmModel({ words: new Set(words) }) }),
                   ['config.json', 'model.safetensors', 'spm.model']);
  await p.fill('#text', textOf(words.slice(0, 6)));
  await p.click('#run');
  await waitIdle(p);
  let got = await explain(p, 0, 0, 2);
  assert.ok(got.heads.includes('sum') && got.heads.includes('\u00f7 \u221a(d \u00d7 3)'), got.heads.join(' | '));
  assert.match(got.steps['xs-dot'], /in the column \u201csum\u201d/);
  assert.match(got.steps['xs-scale'], /Divide every score by \u221a\(\d+ \u00d7 3\)/);
  assert.match(got.steps['xs-scale'], /adds 3 dot products/);
  assert.match(got.steps['xs-softmax'], /the column \u201c\u00f7 \u221a\(d \u00d7 3\)\u201d/);

  await loadFolder(p, folderOf('explain-modernbert', 'modernbert', { 'tokenizer.json': unigramJson({ words: new Set(words) }) }),
                   ['config.json', 'model.safetensors', 'tokenizer.json']);
  await p.fill('#text', textOf(words));
  await p.click('#run');
  await waitIdle(p);
  got = await explain(p, 1, 0, 0); // layer 1 is local (global_attn_every_n_layers 3): far keys are excluded
  const excluded = got.masks.filter((m) => m === 'excluded').length;
  assert.ok(excluded > 0, `the table marks keys excluded: ${got.masks.join(' ')}`);
  assert.doesNotMatch(got.steps['xs-mask'], /adds 0 everywhere/);
  assert.match(got.steps['xs-mask'], new RegExp(`the other ${excluded} are left out`));
  assert.doesNotMatch(got.steps['xs-softmax'], /every weight is positive/);
  assert.match(got.steps['xs-softmax'], new RegExp(`the ${excluded} excluded get 0`));
  assert.deepEqual(p.errors, []);
  await p.context().close();
});
