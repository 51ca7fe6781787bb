// browser.test.mjs: the page in headless Chromium (playwright-core, /usr/bin/chromium), served by
// scripts/serve.mjs with a generated test model as the embedded default, plus a localhost "hub
// mirror" with the Hugging Face /<repo>/resolve/<rev>/<file> layout.
//   AL_WASM_DIR (default build/wasm), AL_CHROMIUM (default /usr/bin/chromium)
// Screenshots go to tests/artifacts/ (gitignored); with AL_UPDATE_SCREENSHOT=1 the explorer's one
// also replaces docs/screenshot.png (the README's picture).
// Prints the time to the first heatmap and the longest main-thread task during computation.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import {
  distinctColours, launchChromium, linkState, linkUrl, newContext, newPage, root, runText, skipReason, startMirror,
  startServer, waitIdle, wasmDir, writeModelIndex, FREEZE_MS } from './helpers.mjs';
import { makeGoldenModel, makeWideModel } from './make_test_model.mjs';
import { writeFirstView } from '../../scripts/first_view.mjs';
import { loadNode } from '../../wasm/attnlab_node.mjs';

const artifacts = path.join(root, 'tests/artifacts/browser');
const HOSTILE = '<img src=x onerror=window.__pwned=1>';

const skip = skipReason;

let work;
let server;
let mirror;
let base;
let mirrorBase;
let browser;
let page;
const mirrorLog = [];
const measured = {};

before(async () => {
  if (skip) return;
  mkdirSync(artifacts, { recursive: true });
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-browser-'));
  const models = path.join(work, 'models');
  makeWideModel(path.join(models, 'test-bert'));
  writeModelIndex(models, [{ id: 'test-bert', name: 'Test BERT 12x12', default: true }]);
  // its stored first view (models/first-view.json, docs/first-view.md), as scripts/first_view.mjs writes it
  const api = await loadNode(wasmDir);
  writeFirstView(api, models);
  api.release();
  const hub = path.join(work, 'hub');
  makeGoldenModel(path.join(hub, 'test-org/tiny-bert'));
  mkdirSync(path.join(hub, 'test-org/gpt'), { recursive: true });
  writeFileSync(path.join(hub, 'test-org/gpt/config.json'), JSON.stringify({ model_type: 'mistral', architectures: ['MistralForCausalLM'] }));
  // A BERT whose float32 weights (~37 GiB) cannot fit in a WebAssembly tab.
  mkdirSync(path.join(hub, 'test-org/huge-bert'), { recursive: true });
  writeFileSync(path.join(hub, 'test-org/huge-bert/config.json'), JSON.stringify({
    model_type: 'bert', hidden_size: 4096, intermediate_size: 16384, num_hidden_layers: 48,
    num_attention_heads: 32, vocab_size: 50000 }));
  // Local files whose config needs 9.6 GB of float32 weights: refused before the weights are read.
  const tooLarge = path.join(work, 'too-large');
  mkdirSync(tooLarge);
  const tiny = JSON.parse(readFileSync(path.join(hub, 'test-org/tiny-bert/config.json'), 'utf8'));
  writeFileSync(path.join(tooLarge, 'config.json'), JSON.stringify({
    ...tiny, hidden_size: 2048, num_hidden_layers: 48, num_attention_heads: 16, intermediate_size: 8192 }));
  for (const f of ['vocab.txt', 'model.safetensors']) copyFileSync(path.join(hub, 'test-org/tiny-bert', f), path.join(tooLarge, f));
  // A classic config.json (no model_type, no architectures): the page lets the core decide by tensor names.
  const classic = path.join(hub, 'test-org/classic-bert');
  mkdirSync(classic, { recursive: true });
  const { model_type: _type, architectures: _archs, ...classicConfig } = tiny;
  writeFileSync(path.join(classic, 'config.json'), JSON.stringify(classicConfig));
  for (const f of ['vocab.txt', 'model.safetensors']) copyFileSync(path.join(hub, 'test-org/tiny-bert', f), path.join(classic, f));
  const corrupt = path.join(work, 'corrupt');
  mkdirSync(corrupt);
  copyFileSync(path.join(hub, 'test-org/tiny-bert/config.json'), path.join(corrupt, 'config.json'));
  copyFileSync(path.join(hub, 'test-org/tiny-bert/vocab.txt'), path.join(corrupt, 'vocab.txt'));
  writeFileSync(path.join(corrupt, 'model.safetensors'), Buffer.from('\x10\x00\x00\x00\x00\x00\x00\x00{"garbage": true}not weights'));

  server = await startServer({ AL_MODELS_DIR: models });
  base = server.url;
  mirror = await startMirror(hub, mirrorLog);
  mirrorBase = `http://127.0.0.1:${mirror.address().port}`;
  browser = await launchChromium();
  page = await newPage(await newContext(browser));
});

after(async () => {
  await browser?.close();
  server?.child.kill();
  await new Promise((r) => (mirror ? mirror.close(r) : r()));
  if (work) rmSync(work, { recursive: true, force: true });
  if (Object.keys(measured).length) console.log(`browser measurements: ${JSON.stringify(measured)}`);
});

test('the default model loads and the first sentence is drawn', { skip }, async () => {
  await page.goto(base);
  await waitIdle(page);
  const info = await page.evaluate(() => ({
    timings: window.attnlab.app.timings,
    engine: document.getElementById('engine-status').textContent,
    shape: document.getElementById('grid').dataset.shape,
    thumbs: document.querySelectorAll('#grid canvas').length,
    isolated: window.crossOriginIsolated,
    status: document.getElementById('run-status').textContent,
  }));
  assert.match(info.engine, /ready/);
  assert.equal(info.shape, '12x12');
  assert.equal(info.thumbs, 144);
  assert.equal(info.isolated, true, 'COOP/COEP make the page cross-origin isolated');
  measured.firstHeatmapMs = Math.round(info.timings.firstHeatmap);
  measured.firstLiveHeatmapMs = Math.round(info.timings.firstLiveHeatmap);
  const order = await page.evaluate(() => ({
    weights: performance.getEntriesByType('resource').filter((e) => /\/models\/test-bert\/model\.safetensors$/.test(e.name))
      .map((e) => e.startTime),
    engineReady: performance.getEntriesByName('attnlab:engine-ready')[0]?.startTime,
  }));
  // a plain visit draws the stored first view (web/first_view.js) first, and the live run says it has the same bits
  assert.ok(info.timings.storedView <= info.timings.firstLiveHeatmap, JSON.stringify(info.timings));
  assert.equal(info.timings.firstHeatmap, info.timings.storedView);
  assert.equal(info.timings.storedCheck, 'same');
  assert.match(info.status, /12 \u00d7 12 heads in \d+ ms; the same bits as the stored first view/);
  // the model's weights download once: the prefetch app.js starts when the stored view is drawn or the engine is
  // ready, whichever is first, is what the engine loads (models.prefetch). Which of the two comes first is a race
  // between threads, so it is printed, not asserted.
  assert.equal(order.weights.length, 1, JSON.stringify(order));
  assert.ok(order.weights[0] >= Math.min(info.timings.storedView, order.engineReady), JSON.stringify({ order, info }));
  measured.weightsStartMs = Math.round(order.weights[0]);
  measured.engineReadyMs = Math.round(order.engineReady);
  // the page's code arrives as one script (scripts/web_bundle.mjs), not as its ~70 modules
  const scripts = await page.evaluate(() => performance.getEntriesByType('resource')
    .map((e) => new URL(e.name).pathname).filter((p) => p.endsWith('.js') && !p.startsWith('/wasm/')));
  assert.deepEqual(scripts, ['/app.js']);
  measured.firstRun = info.timings.lastRun;
  assert.ok((await distinctColours(page, '#heatmap')) > 5, 'the large heatmap is not blank');
  assert.ok((await distinctColours(page, '#grid button:nth-of-type(5) canvas')) > 2, 'a thumbnail is not blank');
  assert.ok((await distinctColours(page, '#legend')) > 5, 'the legend is drawn');
  assert.deepEqual(page.errors, []);
  await page.screenshot({ path: path.join(artifacts, 'default.png'), fullPage: true });
});

test('served as modules one by one (any static server), the page draws the same heatmap', { skip }, async () => {
  const unbundled = await startServer({ AL_MODELS_DIR: path.join(work, 'models'), AL_NO_BUNDLE: '1' });
  const p = await newPage(await newContext(browser));
  try {
    await p.goto(unbundled.url);
    await waitIdle(p);
    const got = await p.evaluate(() => ({
      shape: document.getElementById('grid').dataset.shape,
      heatmap: document.getElementById('heatmap').toDataURL(),
      modules: performance.getEntriesByType('resource').filter((e) => /\.js$/.test(e.name) && !/\/wasm\//.test(e.name)).length,
    }));
    assert.equal(got.shape, '12x12');
    assert.ok(got.modules > 20, `${got.modules} modules fetched`);
    assert.equal(got.heatmap, await page.evaluate(() => document.getElementById('heatmap').toDataURL()),
                 'the same pixels as the bundled page');
    assert.deepEqual(p.errors, []);
  } finally {
    await p.context().close();
    unbundled.child.kill();
  }
});

test('hover shows the (query, key) pair under the pointer', { skip }, async () => {
  const geo = await page.evaluate(() => {
    const c = document.getElementById('heatmap');
    const r = c.getBoundingClientRect();
    return { ...c.dataset, x: r.left, y: r.top, sx: r.width / c.width, sy: r.height / c.height,
             labels: window.attnlab.current.labels, matrix: window.attnlab.current.matrix };
  });
  const q = 3;
  const k = 6;
  const cell = Number(geo.cell);
  await page.mouse.move(geo.x + (Number(geo.left) + (k + 0.5) * cell) * geo.sx,
                        geo.y + (Number(geo.top) + (q + 0.5) * cell) * geo.sy);
  const tip = await page.evaluate(() => {
    const t = document.getElementById('tooltip');
    return { hidden: t.hidden, text: t.textContent, q: t.dataset.query, k: t.dataset.key };
  });
  assert.equal(tip.hidden, false);
  assert.equal(tip.q, String(q));
  assert.equal(tip.k, String(k));
  assert.ok(tip.text.includes(`query ${q}: ${geo.labels[q]}`), tip.text);
  assert.ok(tip.text.includes(`key ${k}: ${geo.labels[k]}`), tip.text);
  assert.ok(tip.text.includes(geo.matrix[q * Number(geo.size) + k].toPrecision(4)), tip.text);
});

test('arrow keys move between heads and layers; the URL follows', { skip }, async () => {
  await page.click('#grid button[data-layer="0"][data-head="0"]');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  const sel = await page.evaluate(() => ({ l: window.attnlab.explorer.layer, h: window.attnlab.explorer.head,
                                           focused: document.activeElement.dataset.head }));
  assert.deepEqual([sel.l, sel.h], [1, 2]);
  assert.equal(sel.focused, '2', 'focus follows the selection');
  const link = await linkState(page);
  assert.equal(link.kind, 'fragment');
  assert.equal(link.values.layer, 1);
  assert.equal(link.values.head, 2);
  assert.match(await page.textContent('#detail-title'), /Layer 1, head 2/);
});

test('views: standard, layer mean, difference; merged words', { skip }, async () => {
  const standard = await page.evaluate(() => window.attnlab.current.matrix);
  await page.selectOption('#view-select', 'diff');
  const diff = await page.evaluate(() => ({ m: window.attnlab.current.matrix, view: window.attnlab.current.view,
                                            title: document.getElementById('detail-title').textContent }));
  assert.equal(diff.view, 'diff:standard,layer_mean');
  assert.ok(diff.m.some((v) => v < 0) && diff.m.some((v) => v > 0), 'a difference has both signs');
  assert.match(diff.title, /\u2212/);
  await page.selectOption('#view-b', 'uniform');
  const vsUniform = await page.evaluate(() => window.attnlab.current.matrix);
  const n = Math.sqrt(standard.length);
  assert.ok(Math.abs(vsUniform[0] - (standard[0] - 1 / n)) < 1e-6);
  await page.selectOption('#view-select', 'layer_mean');
  const mean = await page.evaluate(() => window.attnlab.current.matrix);
  assert.notDeepEqual(mean, standard);
  await page.selectOption('#view-select', 'standard');
  assert.deepEqual(await page.evaluate(() => window.attnlab.current.matrix), standard);
  await page.waitForFunction(() => document.getElementById('grid').dataset.rendered === String(window.attnlab.explorer.generation));

  await runText(page, 'The cats jumped quickly over the lazy dogs.');
  const pieces = await page.evaluate(() => window.attnlab.current.size);
  await page.check('#merge-words');
  const merged = await page.evaluate(() => window.attnlab.current);
  assert.ok(merged.size < pieces, `${merged.size} words from ${pieces} tokens`);
  assert.ok(merged.labels.includes('cats') && merged.labels.includes('dogs'), merged.labels.join(' '));
  for (let q = 0; q < merged.size; q++) {
    const sum = merged.matrix.slice(q * merged.size, (q + 1) * merged.size).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - 1) < 1e-4, `merged row ${q} sums to ${sum}`);
  }
  assert.equal(await page.isVisible('#merge-rule'), true, 'the merge rule is explained');
  await page.uncheck('#merge-words');
});

test('exports: PNG of the heatmap, JSON of the numbers', { skip }, async () => {
  const [png] = await Promise.all([page.waitForEvent('download'), page.click('#export-png')]);
  const pngPath = path.join(artifacts, png.suggestedFilename());
  await png.saveAs(pngPath);
  assert.equal(readFileSync(pngPath).subarray(1, 4).toString(), 'PNG');
  const [json] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
  const jsonPath = path.join(artifacts, json.suggestedFilename());
  await json.saveAs(jsonPath);
  const body = JSON.parse(readFileSync(jsonPath, 'utf8'));
  const current = await page.evaluate(() => window.attnlab.current);
  assert.equal(body.matrix.length, current.size);
  assert.deepEqual(body.matrix.flat(), current.matrix);
  assert.deepEqual(body.tokens, current.labels);
});

test('a model loads from the (localhost) Hugging Face mirror; 404, an unsupported family (Mistral) and too-large are explained', { skip }, async () => {
  await page.click('#model-panel summary');
  await page.fill('#hub-base', mirrorBase);
  await page.fill('#hub-repo', 'test-org/missing');
  await page.click('#hub-load');
  await page.waitForSelector('#model-error:not([hidden])');
  assert.match(await page.textContent('#model-error'), /not found/);

  await page.fill('#hub-repo', 'test-org/gpt');
  await page.click('#hub-load');
  await page.waitForFunction(() => /not a model family attnlab runs/.test(document.getElementById('model-error').textContent));
  assert.ok(!mirrorLog.some((u) => u.startsWith('/test-org/gpt/') && /model\.safetensors|pytorch_model/.test(u)),
            'no weights are downloaded for a model of another family');

  await page.fill('#hub-repo', 'test-org/huge-bert');
  await page.click('#hub-load');
  // the core's check_config op refuses it by its config, naming the size needed and the limit (docs/memory.md)
  await page.waitForFunction(() => /needs 55\.2 GB of memory \(attnlab loads at most 2\^32 weights\); memory limit 4,096 MB \(WebAssembly maximum\)/
    .test(document.getElementById('model-error').textContent));
  assert.match(await page.textContent('#model-error'), /^test-org\/huge-bert@main on [^:]+:\d+: config\.json: 48 layers of hidden size 4096/);
  assert.ok(!mirrorLog.some((u) => u.startsWith('/test-org/huge-bert/') && /model\.safetensors|pytorch_model/.test(u)),
            'no weights are downloaded for a model too large for memory');

  await page.fill('#hub-repo', 'test-org/tiny-bert');
  await page.click('#hub-load');
  await page.waitForFunction(() => document.getElementById('grid').dataset.shape === '3x4', null, { timeout: 20000 });
  await waitIdle(page);
  assert.equal(await page.isHidden('#model-error'), true);
  assert.match(await page.textContent('#model-info'), /3 layers × 4 heads/);
  assert.ok(mirrorLog.includes('/test-org/tiny-bert/resolve/main/model.safetensors'));
  const link = await linkState(page);
  assert.equal(link.values.model.repo, 'test-org/tiny-bert');
  assert.equal(link.values.model.base, mirrorBase);
  assert.match(await page.textContent('#model-info'), /by model_type "bert"/);

  await page.fill('#hub-repo', 'test-org/classic-bert');
  await page.click('#hub-load');
  await page.waitForFunction(() => /by tensor names/.test(document.getElementById('model-info').textContent), null,
                             { timeout: 20000 });
  assert.match(await page.textContent('#model-info'), /by tensor names \("bert\.embeddings\.word_embeddings\.weight"\)/);
  await waitIdle(page);
});

test('a corrupt upload shows an error and the page keeps working', { skip }, async () => {
  const dir = path.join(work, 'corrupt');
  await page.setInputFiles('#file-input', ['config.json', 'vocab.txt', 'model.safetensors'].map((f) => path.join(dir, f)));
  await page.waitForSelector('#model-error:not([hidden])');
  const message = await page.textContent('#model-error');
  assert.match(message, /model\.safetensors/);
  assert.match(message, /previous model is still loaded/);
  await page.screenshot({ path: path.join(artifacts, 'corrupt-upload.png') });
  await runText(page, 'the dog ran after the cat');
  assert.equal(await page.evaluate(() => window.attnlab.current.labels[2]), 'dog');
});

test('files too large for the WASM memory: an error with the size needed and the limit; the page keeps working', { skip }, async () => {
  const dir = path.join(work, 'too-large');
  await page.setInputFiles('#file-input', ['config.json', 'vocab.txt', 'model.safetensors'].map((f) => path.join(dir, f)));
  await page.waitForFunction(() => /memory limit/.test(document.getElementById('model-error').textContent));
  const message = await page.textContent('#model-error');
  assert.match(message, /^local files: config\.json: 48 layers of hidden size 2048, intermediate 8192, vocabulary \d+ \(\d+ weights\) with at least [\d,]+ MB of weight files: needs [\d.,]+ GB of memory; memory limit 4,096 MB \(WebAssembly maximum\), [\d.,]+ MB in use/);
  assert.match(message, /previous model is still loaded/);
  await runText(page, 'the dog ran after the cat');
  assert.equal(await page.evaluate(() => window.attnlab.current.labels[2]), 'dog');
});

test('the engine restarts after a crash and the model comes back', { skip }, async () => {
  await page.evaluate(() => window.attnlab.client.crash());
  await page.waitForFunction(() => /restarted/.test(document.getElementById('engine-status').textContent));
  await page.waitForFunction(() => !document.getElementById('run').disabled, null, { timeout: 20000 });
  const restarts = await page.evaluate(() => window.attnlab.client.restarts);
  assert.equal(restarts, 1);
  await runText(page, 'a dog sat on the mat');
  assert.equal(await page.evaluate(() => window.attnlab.current.labels[2]), 'dog');
});

test('a stored first view that is not what the engine computes is replaced, and the page says so', { skip }, async () => {
  // the test model's folder with a first view one bit off (as a view left behind by a change of the weights would be)
  const models = path.join(work, 'models-stale-view');
  mkdirSync(models, { recursive: true });
  copyFileSync(path.join(work, 'models/index.json'), path.join(models, 'index.json'));
  symlinkSync(path.join(work, 'models/test-bert'), path.join(models, 'test-bert'));
  const view = JSON.parse(readFileSync(path.join(work, 'models/first-view.json'), 'utf8'));
  const bytes = Buffer.from(view.attentions.data, 'base64');
  bytes[4 * 40] ^= 1;
  view.attentions.data = bytes.toString('base64');
  writeFileSync(path.join(models, 'first-view.json'), JSON.stringify(view));
  const stale = await startServer({ AL_MODELS_DIR: models });
  const p = await newPage(await newContext(browser));
  try {
    await p.goto(stale.url);
    await waitIdle(p);
    const got = await p.evaluate(() => ({ timings: window.attnlab.app.timings, status: document.getElementById('run-status').textContent }));
    assert.ok(got.timings.storedView < got.timings.firstLiveHeatmap, JSON.stringify(got.timings));
    assert.equal(got.timings.storedCheck, 'different');
    assert.match(got.status, /NOT the stored first view's numbers \(engine [\d.]+\): this run's are shown/);
    assert.deepEqual(p.errors, []);
  } finally {
    await p.context().close();
    stale.child.kill();
  }
});

test('the URL restores model, text, pair, layer, head and view in a fresh context', { skip }, async () => {
  const context = await newContext(browser);
  const p1 = await newPage(context);
  await p1.goto(base);
  await waitIdle(p1);
  await p1.check('#pair-toggle');
  await p1.fill('#text-pair', 'hello world');
  await runText(p1, 'The brown fox jumped over the river bank.');
  await p1.click('#grid button[data-layer="4"][data-head="7"]');
  await p1.selectOption('#view-select', 'diff');
  const url = await linkUrl(p1);
  const want = await p1.evaluate(() => window.attnlab.current);
  await context.close();

  const fresh = await newContext(browser);
  const p2 = await newPage(fresh);
  await p2.goto(url);
  await waitIdle(p2);
  await p2.waitForFunction(() => window.attnlab.current?.layer === 4);
  assert.equal(await p2.evaluate(() => window.attnlab.app.timings.storedView), undefined,
               'a link opens its own state, not the stored first view');
  const got = await p2.evaluate(() => ({ ...window.attnlab.current, pair: document.getElementById('text-pair').value }));
  assert.equal(got.pair, 'hello world');
  assert.equal(got.view, 'diff:standard,layer_mean');
  assert.deepEqual([got.layer, got.head], [4, 7]);
  assert.deepEqual(got.labels, want.labels);
  assert.deepEqual(got.matrix, want.matrix, 'the same numbers');
  await fresh.close();
});

test('hostile text is shown as text and never runs', { skip }, async () => {
  await page.goto(base);
  await waitIdle(page);
  await runText(page, HOSTILE);
  const r = await page.evaluate(() => ({
    shown: document.getElementById('shown-text').textContent,
    imgs: document.querySelectorAll('img').length,
    pwned: window.__pwned,
    tokens: document.getElementById('tokens').textContent,
  }));
  assert.equal(r.shown, HOSTILE);
  assert.equal(r.imgs, 0);
  assert.equal(r.pwned, undefined);
  assert.match(r.tokens, /</);
  // The same string arriving through the URL.
  const context = await newContext(browser);
  const p = await newPage(context);
  await p.goto(`${base}?text=${encodeURIComponent(HOSTILE)}`);
  await waitIdle(p);
  assert.equal(await p.textContent('#shown-text'), HOSTILE);
  assert.equal(await p.evaluate(() => window.__pwned), undefined);
  assert.equal(await p.evaluate(() => document.querySelectorAll('img').length), 0);
  await context.close();
});

test('512 tokens x 144 heads: no frozen main thread during computation (the longest task printed)', { skip }, async () => {
  const words = 'the cat sat on the mat because it was tired and the dog ran over the river bank'.split(' ');
  const text = Array.from({ length: 520 }, (_, i) => words[i % words.length]).join(' ');
  await page.evaluate(() => { window.__longtasks.length = 0; });
  const started = Date.now();
  await runText(page, text);
  const wall = Date.now() - started;
  await page.waitForTimeout(200); // let the observer deliver the last entries
  const r = await page.evaluate(() => ({ tasks: window.__longtasks, run: window.attnlab.app.timings.lastRun,
                                         thumbs: window.attnlab.app.timings.thumbnailsMs, n: window.attnlab.current.size }));
  assert.equal(r.n, 512);
  const longest = r.tasks.reduce((m, t) => Math.max(m, t.duration), 0);
  measured.tokens512 = { wallMs: wall, computeMs: Math.round(r.run.computeMs), thumbnailsMs: Math.round(r.thumbs),
                         longestTaskMs: Math.round(longest), longTasks: r.tasks.length };
  assert.ok(longest <= FREEZE_MS, `longest main-thread task ${longest} ms`);
  // Switching views stays responsive at this size too.
  await page.evaluate(() => { window.__longtasks.length = 0; });
  await page.selectOption('#view-select', 'diff');
  await page.waitForFunction(() => document.getElementById('grid').dataset.rendered === String(window.attnlab.explorer.generation));
  await page.keyboard.press('ArrowRight');
  await page.waitForTimeout(200);
  const viewTasks = await page.evaluate(() => window.__longtasks.map((t) => t.duration));
  measured.tokens512.viewSwitchLongestMs = Math.round(Math.max(0, ...viewTasks));
  assert.ok(Math.max(0, ...viewTasks) <= FREEZE_MS, `view switch: longest task ${Math.max(0, ...viewTasks)} ms`);
  await page.screenshot({ path: path.join(artifacts, 'tokens512.png') });
});

test('the cancel button stops a running computation between layers', { skip }, async () => {
  const text = Array.from({ length: 500 }, (_, i) => ['river', 'bank', 'money'][i % 3]).join(' ');
  await page.fill('#text', text);
  const before = await page.evaluate(() => window.attnlab.app.runCount);
  // Clicks Cancel from inside the page as soon as the first layer reports, so the click lands mid-run.
  await page.evaluate(() => new Promise((resolve) => {
    const status = document.getElementById('run-status');
    const watch = new MutationObserver(() => {
      if (/layer [1-9]\d*\/12/.test(status.textContent)) {
        watch.disconnect();
        document.getElementById('cancel').click();
        resolve();
      }
    });
    watch.observe(status, { childList: true, characterData: true, subtree: true });
    document.getElementById('run').click();
  }));
  await page.waitForFunction(() => !window.attnlab.app.job);
  assert.equal(await page.textContent('#run-status'), 'Cancelled.');
  assert.equal(await page.evaluate(() => window.attnlab.app.runCount), before, 'the cancelled run is not shown');
});

test('a screenshot of the explorer for the README', { skip }, async () => {
  await page.selectOption('#view-select', 'standard');
  await runText(page, 'The cat sat on the mat because it was tired.');
  await page.click('#grid button[data-layer="2"][data-head="5"]');
  const shot = path.join(artifacts, 'explorer.png');
  await page.locator('#explorer').screenshot({ path: shot });
  const size = statSync(shot).size;
  measured.screenshotKB = Math.round(size / 1024);
  // The README's picture is refreshed only on request, so a test run leaves the tree clean.
  if (process.env.AL_UPDATE_SCREENSHOT && size < 300 * 1024) {
    mkdirSync(path.join(root, 'docs'), { recursive: true });
    copyFileSync(shot, path.join(root, 'docs/screenshot.png'));
  }
  assert.ok(size < 300 * 1024, `explorer screenshot is ${size} bytes`);
});
