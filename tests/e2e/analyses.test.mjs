// analyses.test.mjs: the effective-attention views and the Analyses panel in headless Chromium
// (playwright-core), served by scripts/serve.mjs with generated test models and a small
// brown_pos.jsonl (the first lines of build/data/brown_pos.jsonl when it exists, else synthetic
// tagged sentences, plus a broken line). Screenshots go to tests/artifacts/analyses/ (gitignored).
// Prints the analyses' run times and the longest main-thread task while they run.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import {
  distinctColours, launchChromium, linkState, linkUrl, newContext, newPage, root, runText, skipReason as skip,
  startServer, waitIdle, writeModelIndex, FREEZE_MS } from './helpers.mjs';
import { makeWideModel, vocabTokens } from './make_test_model.mjs';
import { readText } from '../../web/png_text.js';

const artifacts = path.join(root, 'tests/artifacts/analyses');
let work;
let server;
let base;
let browser;
let page;
let heldout; // the sentences the page's Brown sample must hold, in file order
const measured = {};

// A tagged JSONL corpus: real Brown lines when the corpus was built, else synthetic ones.
function writeCorpus(dir) {
  mkdirSync(dir, { recursive: true });
  const real = path.join(root, 'build/data/brown_pos.jsonl');
  let lines;
  if (existsSync(real)) {
    const fd = readFileSync(real, 'utf8');
    lines = fd.slice(0, 3_000_000).split('\n').slice(0, 3000).filter((l) => l.trim());
  } else {
    const words = vocabTokens().filter((w) => /^[a-z]+$/.test(w));
    const tagOf = (w) => (['he', 'she', 'it', 'they', 'we', 'you', 'i'].includes(w) ? 'PRON'
      : ['sat', 'ran', 'jumped', 'read', 'write', 'play', 'run', 'walk', 'see'].includes(w) ? 'VERB'
      : ['the', 'a', 'an', 'this', 'that'].includes(w) ? 'DET' : 'NOUN');
    lines = [];
    for (let i = 0; i < 600; i++) {
      const n = 4 + (i * 7) % 20;
      const ws = Array.from({ length: n }, (_, k) => words[(i * 31 + k * 17) % words.length]);
      ws.push('.');
      lines.push(JSON.stringify({ words: ws, tags: [...ws.slice(0, -1).map(tagOf), 'PUNCT'], genre: 'test',
                                  split: i % 3 === 0 ? 'heldout' : 'train' }));
    }
  }
  lines.splice(5, 0, '{"words": ["broken"'); // a broken line is skipped
  writeFileSync(path.join(dir, 'brown_pos.jsonl'), lines.join('\n') + '\n');
  heldout = [];
  for (const l of lines) {
    try {
      const row = JSON.parse(l);
      if (row.split === undefined || row.split === 'heldout') heldout.push(row);
    } catch { /* the broken line */ }
  }
}

before(async () => {
  if (skip) return;
  mkdirSync(artifacts, { recursive: true });
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-analyses-'));
  const models = path.join(work, 'models');
  makeWideModel(path.join(models, 'test-bert'));                  // 12 x 12 heads of dimension 4
  makeWideModel(path.join(models, 'test-bert-b'), { seed: 99 });  // the same shape, other weights
  // 4 x 4 heads of dimension 16: sentences of up to 16 tokens have A_eff = A in exact mode.
  makeWideModel(path.join(models, 'wide-head'), { layers: 4, heads: 4, hidden: 64, intermediate: 128, positions: 128, seed: 7 });
  writeModelIndex(models, [
    { id: 'test-bert', name: 'Test BERT 12x12', default: true },
    { id: 'test-bert-b', name: 'Test BERT 12x12 (other seed)' },
    { id: 'wide-head', name: 'Test BERT 4x4, head dimension 16' },
  ]);
  const data = path.join(work, 'data');
  writeCorpus(data);
  server = await startServer({ AL_MODELS_DIR: models, AL_DATA_DIR: data });
  base = server.url;
  browser = await launchChromium();
  page = await newPage(await newContext(browser));
  await page.goto(base);
  await waitIdle(page);
});

after(async () => {
  await browser?.close();
  server?.child.kill();
  if (work) rmSync(work, { recursive: true, force: true });
  if (Object.keys(measured).length) console.log(`analyses measurements: ${JSON.stringify(measured)}`);
});

async function effectiveSettled(p, prev) {
  await p.waitForFunction((n) => window.attnlab.app.effCount > n && !window.attnlab.app.effJob, prev, { timeout: 30000 });
  await waitIdle(p);
}

async function setEffective(p, { mode, pad }) {
  const prev = await p.evaluate(() => window.attnlab.app.effCount);
  if (mode !== undefined) await p.selectOption('#eff-mode', mode);
  if (pad !== undefined) {
    await p.fill('#eff-pad', String(pad));
    await p.dispatchEvent('#eff-pad', 'change');
  }
  await effectiveSettled(p, prev);
}

async function downloadJson(p, selector) {
  const [d] = await Promise.all([p.waitForEvent('download'), p.click(selector)]);
  const file = path.join(artifacts, d.suggestedFilename());
  await d.saveAs(file);
  return JSON.parse(readFileSync(file, 'utf8'));
}

const maxAbs = (a, b) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - (b ? b[i] : 0))), 0);

test('effective view: drawn next to standard, differs from it on a padded input; PNG and JSON export', { skip }, async () => {
  await runText(page, 'the cat sat on the mat because it was tired .');
  const prev = await page.evaluate(() => window.attnlab.app.effCount);
  await page.selectOption('#view-select', 'effective');
  await effectiveSettled(page, prev);
  assert.equal(await page.isVisible('#effective-controls'), true);
  assert.equal(await page.isVisible('#companion'), true, 'standard is shown side by side');
  assert.ok((await distinctColours(page, '#heatmap')) > 5, 'the effective heatmap is drawn');
  assert.ok((await distinctColours(page, '#heatmap-companion')) > 5, 'the standard heatmap is drawn');
  assert.ok((await distinctColours(page, '#legend')) > 5, 'the legend is drawn');

  // Padded, as in Sun & Marasovic: length 24 > the 13 tokens, pad columns zeroed after the projection.
  await setEffective(page, { mode: 'paper', pad: 24 });
  const padded = await page.evaluate(() => ({ eff: window.attnlab.current, std: window.attnlab.companion,
                                              status: document.getElementById('eff-status').textContent }));
  assert.equal(padded.eff.size, 24);
  assert.equal(padded.eff.labels.filter((t) => t === '[PAD]').length, 24 - 13);
  assert.match(padded.status, /padded to 24.*r\* per layer/);
  const d = maxAbs(padded.eff.matrix, padded.std.matrix);
  assert.ok(d > 1e-2, `effective differs from standard (max |diff| ${d})`);
  for (let q = 0; q < 24; q++) {
    for (let k = 13; k < 24; k++) assert.equal(padded.eff.matrix[q * 24 + k], 0, 'pad-key columns are 0');
  }
  assert.ok(padded.eff.matrix.some((v) => v < 0), 'effective attention has negative entries (diverging scale)');
  assert.equal(await page.isVisible('#eff-short-rule'), true, 'the short-input rule is explained');
  assert.match(await page.textContent('#eff-short-rule'), /head dimension/);
  // Side by side: the two heatmaps sit on the same row.
  const boxes = await page.evaluate(() => ['heatmap', 'heatmap-companion'].map((id) => document.getElementById(id).getBoundingClientRect().top));
  assert.ok(Math.abs(boxes[0] - boxes[1]) < 40, `tops ${boxes}`);
  measured.paddedMaxAbsDiff = Number(d.toFixed(4));

  // The signed difference and |difference| views; the grid shows each head's Frobenius norm.
  await page.selectOption('#view-select', 'effective_minus_standard');
  await waitIdle(page);
  const signed = await page.evaluate(() => window.attnlab.current.matrix);
  assert.ok(signed.some((v) => v < -1e-3) && signed.some((v) => v > 1e-3));
  await page.selectOption('#view-select', 'effective_abs_diff');
  await waitIdle(page);
  const notes = await page.$$eval('#grid .head-note', (els) => els.map((e) => (e.hidden ? null : e.textContent)));
  assert.equal(notes.length, 144);
  assert.ok(notes.every((t) => /^\d+\.\d\d$/.test(t)), notes.slice(0, 5).join(' '));
  const norm00 = await page.evaluate(() => window.attnlab.app.run.effective.norms[0]);
  assert.equal(notes[0], norm00.toFixed(2));
  await page.screenshot({ path: path.join(artifacts, 'effective-padded.png'), fullPage: true });

  const [png] = await Promise.all([page.waitForEvent('download'), page.click('#export-png')]);
  const pngPath = path.join(artifacts, png.suggestedFilename());
  await png.saveAs(pngPath);
  assert.equal(readFileSync(pngPath).subarray(1, 4).toString(), 'PNG');
  const body = await downloadJson(page, '#export-json');
  const current = await page.evaluate(() => window.attnlab.current);
  assert.deepEqual(body.matrix.flat(), current.matrix);
  assert.equal(body.view, 'effective_abs_diff');
  assert.equal(body.effective.mode, 'paper');
  assert.equal(body.effective.length, 24);
  // The URL keeps the view, the mode and the padded length.
  const { values } = await linkState(page);
  assert.equal(values.view, 'effective_abs_diff');
  assert.equal(values.emode, 'paper');
  assert.equal(values.pad, 24);
  // Back to exact: padding changes nothing there.
  await setEffective(page, { mode: 'exact' });
  const exactPadded = await page.evaluate(() => window.attnlab.current);
  await setEffective(page, { pad: 0 });
  const exact = await page.evaluate(() => window.attnlab.current);
  assert.ok(maxAbs(exactPadded.matrix.slice(0, 13), exact.matrix.slice(0, 13)) < 1e-5);
  assert.deepEqual(page.errors, []);
});

test('exact mode, unpadded sentence shorter than the head dimension: effective - standard is ~0', { skip }, async () => {
  const context = await newContext(browser);
  const p = await newPage(context);
  await p.goto(`${base}?model=wide-head&view=effective_minus_standard&text=${encodeURIComponent('the cat sat on the mat')}`);
  await waitIdle(p);
  await p.waitForFunction(() => window.attnlab.app.run?.effective);
  await waitIdle(p);
  const info = await p.evaluate(() => ({ dh: window.attnlab.app.run.effective.dh, n: window.attnlab.app.run.effective.n,
                                         ranks: Array.from(window.attnlab.app.run.effective.ranks) }));
  assert.equal(info.dh, 16);
  assert.ok(info.n < info.dh, `${info.n} tokens < head dimension ${info.dh}`);
  assert.ok(info.ranks.every((r) => r === info.n), 'every head keeps the full rank n');
  let worst = 0;
  for (const [l, h] of [[0, 0], [1, 2], [3, 3]]) {
    await p.click(`#grid button[data-layer="${l}"][data-head="${h}"]`);
    const body = await downloadJson(p, '#export-json');
    assert.equal(body.view, 'effective_minus_standard');
    assert.equal(body.effective.mode, 'exact');
    const m = body.matrix.flat();
    assert.equal(m.length, info.n * info.n);
    worst = Math.max(worst, maxAbs(m));
  }
  assert.ok(worst < 1e-4, `max |A_eff - A| = ${worst}`);
  measured.shortSentenceMaxAbsDiff = worst;
  await p.selectOption('#view-select', 'effective_abs_diff');
  await waitIdle(p);
  const notes = await p.$$eval('#grid .head-note', (els) => els.map((e) => e.textContent));
  assert.ok(notes.every((t) => t === '0.00'), notes.join(' '));
  // The same sentence on the 12 x 12 model (head dimension 4 < 8 tokens) does change.
  await p.goto(`${base}?model=test-bert&view=effective_abs_diff&text=${encodeURIComponent('the cat sat on the mat')}`);
  await waitIdle(p);
  await p.waitForFunction(() => window.attnlab.app.run?.effective);
  await waitIdle(p);
  assert.ok(maxAbs(await p.evaluate(() => window.attnlab.current.matrix)) > 1e-2);
  assert.deepEqual(p.errors, []);
  await context.close();
});

async function runAnalysis(p, { id, size = '8', dataset = 'brown' }) {
  await p.selectOption('#analysis-select', id);
  await p.selectOption('#dataset-select', dataset);
  if (dataset === 'brown') await p.selectOption('#dataset-size', size);
  const before = await p.evaluate(() => window.attnlab.analyses.runs);
  await p.click('#analysis-run');
  await p.waitForFunction((b) => window.attnlab.analyses.runs > b || !document.getElementById('analysis-error').hidden,
                          before, { timeout: 120000 });
  const error = await p.evaluate(() => (document.getElementById('analysis-error').hidden ? null
    : document.getElementById('analysis-error').textContent));
  assert.equal(error, null);
  return p.evaluate(() => ({ last: window.attnlab.analyses.last && { ...window.attnlab.analyses.last, tensors: undefined },
                             timing: window.attnlab.analyses.timings[window.attnlab.analyses.last.analysis] }));
}

async function figureColours(p) {
  const figs = await p.$$('#analysis-results figure canvas');
  const out = [];
  for (const f of figs) out.push(await distinctColours(p, f));
  return out;
}

test('the Brown sample: the first N held-out sentences in file order', { skip }, async () => {
  const got = await page.evaluate(async () => {
    const { loadBrownSample } = await import('./dataset.js');
    return loadBrownSample(16);
  });
  assert.equal(got.length, 16);
  assert.deepEqual(got.map((s) => s.words), heldout.slice(0, 16).map((r) => r.words));
  assert.ok(got.every((s) => Array.isArray(s.tags) && s.tags.length === s.words.length));
});

test('each analysis runs on a small data set and draws', { skip }, async () => {
  await page.goto(base);
  await waitIdle(page);
  // 1. [CLS], [SEP], punctuation: 3 pairs of layers x heads heatmaps.
  let r = await runAnalysis(page, { id: 'tokens' });
  assert.equal(r.last.n, 8);
  assert.equal(r.last.reply.standard.cls.length, 12);
  assert.equal(r.last.reply.effective.punct[0].length, 12);
  let colours = await figureColours(page);
  assert.equal(colours.length, 6);
  assert.ok(colours.every((c) => c > 10), colours.join(' '));
  await page.screenshot({ path: path.join(artifacts, 'analysis-tokens.png'), fullPage: true });

  // 2. |effective - standard| norms.
  r = await runAnalysis(page, { id: 'diff' });
  assert.equal(r.last.reply.diff_norm_mean.length, 12);
  colours = await figureColours(page);
  assert.equal(colours.length, 2);
  assert.ok(colours[0] > 10);
  assert.equal(await page.evaluate(() => window.attnlab.analyses.charts.diff.data.datasets[0].data.length), 12);

  // 3. Part of speech: one bar per tag and kind.
  r = await runAnalysis(page, { id: 'pos' });
  const tags = r.last.reply.tags.map((t) => t.tag);
  assert.ok(tags.includes('NOUN') && tags.includes('[CLS]') && tags.includes('[SEP]'), tags.join(' '));
  assert.equal(r.last.reply.layer, 11, 'the last layer by default');
  assert.equal(r.last.reply.query, 'cls');
  const chart = await page.evaluate(() => {
    const c = window.attnlab.analyses.charts.pos;
    return { labels: c.data.labels, bars: c.data.datasets.map((d) => d.data.length),
             drawn: c.getDatasetMeta(0).data.length + c.getDatasetMeta(1).data.length };
  });
  assert.deepEqual(chart.labels, tags);
  assert.deepEqual(chart.bars, [tags.length, tags.length]);
  assert.equal(chart.drawn, 2 * tags.length, 'every bar is laid out');
  assert.ok((await figureColours(page))[0] > 3, 'the bar chart has pixels');
  await page.screenshot({ path: path.join(artifacts, 'analysis-pos.png'), fullPage: true });

  // 4. Similarity with a second embedded model of the same shape.
  await page.selectOption('#analysis-select', 'similarity');
  const options = await page.$$eval('#model-b option', (os) => os.map((o) => o.value));
  assert.ok(options.includes('embedded:test-bert-b'), options.join(' '));
  await page.selectOption('#model-b', 'embedded:test-bert-b');
  r = await runAnalysis(page, { id: 'similarity' });
  assert.equal(r.last.reply.standard.length, 12);
  const sims = r.last.reply.standard.flat();
  assert.ok(sims.every((v) => v > 0 && v <= 1 + 1e-6) && sims.some((v) => v < 0.999), 'two different models');
  assert.equal((await figureColours(page)).length, 2);
  // The same model against itself: similarity 1 everywhere.
  const selfSim = await page.evaluate(async () => {
    const a = window.attnlab;
    const { reply } = await a.client.request('attention_similarity', { ...a.analyses.last.request, model_b: a.analyses.last.request.model }).promise;
    return reply.standard.flat();
  });
  assert.ok(selfSim.every((v) => Math.abs(v - 1) < 1e-5));

  // 5. Patterns: 5 labels, standard vs effective, and the per-head label grids.
  r = await runAnalysis(page, { id: 'patterns' });
  const pchart = await page.evaluate(() => {
    const c = window.attnlab.analyses.charts.patterns;
    return { labels: c.data.labels, bars: c.data.datasets.map((d) => d.data.length), sum: c.data.datasets.map((d) => d.data.reduce((s, v) => s + v, 0)) };
  });
  assert.deepEqual(pchart.labels, ['vertical', 'diagonal', 'vertical+diagonal', 'block', 'heterogeneous']);
  assert.deepEqual(pchart.bars, [5, 5]);
  assert.ok(pchart.sum.every((s) => Math.abs(s - 100) < 1e-6), 'shares add up to 100%');
  colours = await figureColours(page);
  assert.equal(colours.length, 3);
  assert.ok(colours[1] > 2 && colours[2] > 2);
  assert.equal(await page.isVisible('#pattern-rules'), true, 'the rules are shown');
  await page.click('#pattern-rules summary');
  assert.match(await page.textContent('#pattern-rules'), /V \u2265 0.25/);
  await page.screenshot({ path: path.join(artifacts, 'analysis-patterns.png'), fullPage: true });

  // Own sentences: tagged lines work for the POS analysis; untagged lines are explained.
  await page.selectOption('#dataset-select', 'own');
  await page.fill('#own-sentences', 'The/DET dog/NOUN ran/VERB ./PUNCT\nShe/PRON sat/VERB on/ADP the/DET mat/NOUN ./PUNCT');
  r = await runAnalysis(page, { id: 'pos', dataset: 'own' });
  assert.equal(r.last.n, 2);
  assert.ok(r.last.reply.tags.some((t) => t.tag === 'PRON'));
  await page.fill('#own-sentences', 'the dog ran\nshe sat on the mat');
  await page.click('#analysis-run');
  await page.waitForSelector('#analysis-error:not([hidden])');
  assert.match(await page.textContent('#analysis-error'), /word\/TAG/);
  r = await runAnalysis(page, { id: 'tokens', dataset: 'own' });
  assert.equal(r.last.n, 2);
  await page.selectOption('#dataset-select', 'brown');
  assert.deepEqual(page.errors, []);
});

test('exported numbers equal the worker\'s reply to the same request; PNG export of a figure', { skip }, async () => {
  for (const id of ['tokens', 'patterns', 'pos']) {
    await runAnalysis(page, { id, size: '16' });
    const body = await downloadJson(page, '#analysis-export-json');
    const direct = await page.evaluate(async (request) => {
      const a = window.attnlab;
      const { reply, tensors } = await a.client.request(a.analyses.last.op, request).promise;
      const t = {};
      for (const [k, v] of Object.entries(tensors)) t[k] = { dtype: v.dtype, shape: v.shape, data: Array.from(v.data) };
      return { reply, tensors: t };
    }, body.request);
    assert.deepEqual(body.reply, direct.reply, `${id}: the exported reply is the worker's`);
    assert.deepEqual(body.tensors, direct.tensors, `${id}: the exported tensors are the worker's`);
    assert.equal(body.n_sentences, 16);
    // docs/papa-page.md, "Exports": one provenance rule for every export (provenance.js): engine, model, link
    assert.match(body.provenance?.engine ?? '', /^\d+\.\d+\.\d+/, `${id}: the engine version`);
    assert.match(body.provenance.link, /^http:\/\/127\.0\.0\.1:\d+\/#v1\./, `${id}: the link`);
    assert.ok(body.provenance.model?.name, `${id}: the model`);
  }
  const [png] = await Promise.all([page.waitForEvent('download'), page.click('#analysis-results figure .export-png')]);
  const file = path.join(artifacts, png.suggestedFilename());
  await png.saveAs(file);
  const bytes = readFileSync(file);
  assert.equal(bytes.subarray(1, 4).toString(), 'PNG');
  const prov = JSON.parse(readText(new Uint8Array(bytes))['attnlab:provenance'] ?? 'null');
  assert.match(prov?.engine ?? '', /^\d+\.\d+\.\d+/, 'the figure\u2019s PNG names the engine');
  assert.match(prov.link, /#v1\./);
  assert.ok(prov.model?.name && prov.figure, JSON.stringify(prov));
});

test('the URL keeps the analysis, its data set and settings, and reopens them', { skip }, async () => {
  await page.selectOption('#analysis-select', 'pos');
  await page.selectOption('#dataset-select', 'brown');
  await page.selectOption('#dataset-size', '16');
  await page.selectOption('#analysis-mode', 'paper');
  await page.fill('#analysis-pad', '64');
  await page.dispatchEvent('#analysis-pad', 'change');
  await page.selectOption('#pos-layer', '3');
  await page.selectOption('#pos-reduce', 'mean');
  const r = await runAnalysis(page, { id: 'pos', size: '16' });
  const url = await linkUrl(page);
  const { values } = await linkState(page);
  assert.deepEqual({ analysis: values.analysis, size: values.size, amode: values.amode, apad: values.apad, alayer: values.alayer,
                     areduce: values.areduce },
                   { analysis: 'pos', size: 16, amode: 'paper', apad: 64, alayer: 3, areduce: 'mean' });
  const context = await newContext(browser);
  const p = await newPage(context);
  await p.goto(url);
  await waitIdle(p);
  await p.waitForFunction(() => window.attnlab.analyses.runs > 0, null, { timeout: 60000 });
  const got = await p.evaluate(() => ({
    analysis: document.getElementById('analysis-select').value, size: document.getElementById('dataset-size').value,
    mode: document.getElementById('analysis-mode').value, pad: document.getElementById('analysis-pad').value,
    layer: document.getElementById('pos-layer').value, reduce: document.getElementById('pos-reduce').value,
    reply: window.attnlab.analyses.last.reply,
  }));
  assert.deepEqual({ ...got, reply: undefined },
                   { analysis: 'pos', size: '16', mode: 'paper', pad: '64', layer: '3', reduce: 'mean', reply: undefined });
  assert.equal(got.reply.layer, 3);
  assert.equal(got.reply.mode, 'paper');
  const { model: _a, ...want } = r.last.reply;
  const { model: _b, ...have } = got.reply;
  assert.deepEqual(have, want, 'the same numbers');
  await context.close();
  // Reset for the next tests.
  await page.selectOption('#analysis-mode', 'exact');
  await page.fill('#analysis-pad', '');
  await page.dispatchEvent('#analysis-pad', 'change');
});

test('the page stays responsive while analyses run (no frozen main thread; the longest task printed); cancel works', { skip }, async () => {
  const longest = {};
  const times = {};
  await page.selectOption('#analysis-select', 'similarity');
  await page.selectOption('#model-b', 'embedded:test-bert-b');
  for (const id of ['tokens', 'diff', 'pos', 'similarity', 'patterns']) {
    await page.evaluate(() => { window.__longtasks.length = 0; });
    const r = await runAnalysis(page, { id, size: '64' });
    await page.waitForTimeout(150);
    const tasks = await page.evaluate(() => window.__longtasks.map((t) => t.duration));
    longest[id] = Math.round(Math.max(0, ...tasks));
    times[id] = r.timing;
  }
  measured.analyses64 = times;
  measured.longestTaskMs = longest;
  for (const [id, ms] of Object.entries(longest)) assert.ok(ms <= FREEZE_MS, `${id}: longest main-thread task ${ms} ms`);

  // Cancel mid-run: 256 sentences, Cancel clicked at the first progress report.
  await page.selectOption('#analysis-select', 'patterns');
  await page.selectOption('#dataset-size', '256');
  const runs = await page.evaluate(() => window.attnlab.analyses.runs);
  await page.evaluate(() => new Promise((resolve) => {
    const status = document.getElementById('analysis-status');
    const watch = new MutationObserver(() => {
      if (/\d+%/.test(status.textContent)) {
        watch.disconnect();
        document.getElementById('analysis-cancel').click();
        resolve();
      }
    });
    watch.observe(status, { childList: true, characterData: true, subtree: true });
    document.getElementById('analysis-run').click();
  }));
  await page.waitForFunction(() => !window.attnlab.analyses.job, null, { timeout: 60000 });
  assert.equal(await page.textContent('#analysis-status'), 'Cancelled.');
  assert.equal(await page.evaluate(() => window.attnlab.analyses.runs), runs, 'a cancelled run is not drawn');
  assert.deepEqual(page.errors, []);
});

test('effective views at 512 tokens x 144 heads: no frozen main thread (the longest task printed)', { skip }, async () => {
  await page.selectOption('#view-select', 'standard');
  await waitIdle(page);
  const words = 'the cat sat on the mat because it was tired and the dog ran over the river bank'.split(' ');
  await runText(page, Array.from({ length: 520 }, (_, i) => words[i % words.length]).join(' '));
  await page.evaluate(() => { window.__longtasks.length = 0; });
  const started = Date.now();
  const prev = await page.evaluate(() => window.attnlab.app.effCount);
  await page.selectOption('#view-select', 'effective_abs_diff');
  await effectiveSettled(page, prev);
  const wall = Date.now() - started;
  await page.waitForTimeout(150);
  const r = await page.evaluate(() => ({ tasks: window.__longtasks.map((t) => t.duration), n: window.attnlab.current.size }));
  assert.equal(r.n, 512);
  const longest = Math.round(Math.max(0, ...r.tasks));
  measured.effective512 = { wallMs: wall, longestTaskMs: longest };
  assert.ok(longest <= FREEZE_MS, `longest main-thread task ${longest} ms`);
  await page.selectOption('#view-select', 'standard');
  await waitIdle(page);
});
