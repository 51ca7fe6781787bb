// importance_decoder.test.mjs: the importance panel on a causal language model (web/panel_importance.js,
// docs/decoder-page.md "Which heads matter on a decoder") in headless Chromium on the real WASM worker, with the
// embedded decoder models/attnlab-mini-gpt and the page's built-in held-out and training splits (build/data), at
// small sizes: the panel takes the texts instead of a task, an empty file and a window the model cannot hold are
// refused in words and the panel works on,
// one run makes the decoder papa sweep (orders lambda and gradient, constants average and zeros) and head_agreement on
// the same corpus (reusing the sweep's constants and lambda), every grid, the correlations, the overlap and the
// finding are the engine's reply, the pruning curve is bits per token with 95% bands from the sweep's reply, the JSON,
// CSV and PNG exports carry provenance with the texts' hashes, the link reopens on the result and says "reproduced:
// identical", and Cancel stops a run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { runPanel, linkUrl, modelReady, openUrl, root, setControls, skipReason, watchStatus } from './helpers.mjs';
import { pageSuite } from './page_suite.mjs';

const MINI_GPT = path.join(root, 'models/attnlab-mini-gpt');
const DATA = path.join(root, 'build/data');
const skip = skipReason || (!existsSync(path.join(MINI_GPT, 'model.safetensors')) ? 'no attnlab-mini-gpt weights'
  : !existsSync(path.join(DATA, 'heldout.txt')) || !existsSync(path.join(DATA, 'train.txt')) ? 'no build/data held-out and training splits' : false);

// Small sizes: 2 held-out documents scored, 4 training documents for the constants, lambda and the gradient, L = 64,
// three fractions (the model's 16 heads: 0, 8 and 16 made constant or removed).
const SMALL = { 'imp-docs': '2', 'imp-cdocs': '4', 'imp-L': '64', 'imp-fractions': '1,0.5,0', 'imp-least-k': '3' };
const DECODER_MEASURES = ['lambda', 'gradient', 'input_dependence', 'confidence', 'entropy', 'sink_mass', 'norm_mass', 'previous_token',
                          'induction', 'duplicate_token'];

let work;
let server;
let browser;
const shared = {};

pageSuite({ skip, name: 'importance-decoder', model: 'attnlab-mini-gpt', env: { AL_DATA_DIR: DATA } }, (h) => ({ work, server, browser } = h));

async function download(p, selector) {
  const [d] = await Promise.all([p.waitForEvent('download'), p.click(selector)]);
  return readFileSync(await d.path());
}

// Clicks Run measures and waits until it ends: { ok, error, ms }.
async function runMeasures(p) {
  await watchStatus(p, 'imp', '__impStatus');
  const started = Date.now();
  await runPanel(p, 'imp', 'importance', 300000);
  const ms = Date.now() - started;
  return p.evaluate((t) => ({ ok: !document.getElementById('imp-error').hidden ? false : !!window.attnlab.panels.importance.last,
                              error: document.getElementById('imp-error').textContent, ms: t,
                              timing: window.attnlab.panels.importance.timings.importance }), ms);
}

test('the importance panel on a decoder: the texts instead of a task, the engine\u2019s grids and bits-per-token curve, exports', { skip }, async () => {
  const p = await openUrl(browser, server.url);
  await modelReady(p);
  // a causal model: the corpus controls, not the task
  assert.equal(await p.isVisible('#imp-task'), false);
  assert.equal(await p.isVisible('#imp-examples'), false);
  for (const id of ['#imp-src', '#imp-docs', '#imp-csrc', '#imp-cdocs', '#imp-L', '#imp-fractions', '#imp-least-k']) {
    assert.equal(await p.isVisible(id), true, `${id} is shown`);
  }
  assert.equal(await p.inputValue('#imp-docs'), '40', 'the language-model panel\u2019s defaults');
  assert.equal(await p.inputValue('#imp-cdocs'), '100');
  assert.equal(await p.inputValue('#imp-L'), '64');

  // an empty file as the held-out text: refused in words, and the panel works on
  await setControls(p, { 'imp-src': 'text' });
  await p.setInputFiles('#imp-text-file', { name: 'empty.txt', mimeType: 'text/plain', buffer: Buffer.alloc(0) });
  const empty = await runMeasures(p);
  assert.equal(empty.ok, false);
  assert.match(empty.error, /^Held-out text: paste a text or choose a file/);
  assert.equal(await p.$$eval('#imp-results figure', (f) => f.length), 0);
  // a window longer than the model's positions: the engine refuses it by name, and the panel works on
  await setControls(p, { 'imp-src': 'heldout', ...SMALL, 'imp-L': '256' });
  const long = await runMeasures(p);
  assert.equal(long.ok, false);
  assert.match(long.error, /field 'L'/);
  await setControls(p, { 'imp-L': SMALL['imp-L'] });

  const got = await runMeasures(p);
  assert.ok(got.ok, got.error);
  console.log(`# the run at ${JSON.stringify(SMALL)}: ${got.ms} ms (${JSON.stringify(got.timing)})`);
  const { reply, curve, request, curveRequest } = await p.evaluate(() => {
    const r = window.attnlab.panels.importance.last;
    return { reply: r.reply, curve: r.curve, request: r.request, curveRequest: r.curveRequest };
  });
  // the requests: the corpus fields, the curve's orders and constants, the measures on the same texts
  assert.match(curveRequest.corpus_name, /^heldout\.txt \(first 2 documents of 10 lines\)$/);
  assert.match(curveRequest.constants_corpus_name, /^train\.txt \(first 4 documents of 10 lines\)$/);
  assert.deepEqual([curveRequest.orders, curveRequest.constants, curveRequest.fractions, curveRequest.L, curveRequest.baselines],
                   [['lambda', 'gradient'], ['average', 'zeros'], [1, 0.5, 0], 64, false]);
  assert.equal(request.corpus, curveRequest.corpus);
  assert.equal(request.constants_corpus, curveRequest.constants_corpus);
  assert.equal(request.least_k, 3);
  assert.equal(request.task, undefined);
  assert.deepEqual(curve.hashes, reply.hashes, 'the sweep and the measures read the same model and texts');
  assert.equal(curve.score.name, 'bits_per_token');
  assert.equal(reply.reused.constants, true, 'the measures reuse the sweep\u2019s constants');
  assert.equal(reply.reused.ranking, true, 'and its \u03bb');
  const statuses = await p.evaluate(() => window.__impStatus.map((s) => s.text));
  assert.ok(statuses.some((t) => /^Pruning curve \d+%: /.test(t)), statuses.slice(0, 10).join(' | '));
  assert.ok(statuses.some((t) => /^Measures: /.test(t)), statuses.slice(-10).join(' | '));

  // a grid per measure of the reply, each the model's layers x heads
  assert.deepEqual(reply.measures.map((m) => m.id), DECODER_MEASURES);
  const grids = await p.$$eval('#imp-results figure', (fs) => fs.map((f) => f.dataset.name ?? '').filter((n) => n.startsWith('imp_grid_')));
  assert.deepEqual(grids, reply.measures.map((m) => `imp_grid_${m.id}`));
  for (const m of reply.measures) {
    const dims = await p.$eval(`#imp-results figure[data-name=imp_grid_${m.id}] canvas`, (c) => [Number(c.dataset.rows), Number(c.dataset.cols)]);
    assert.deepEqual(dims, [curve.shape.n_layers, curve.shape.n_heads], m.id);
  }
  assert.equal(await p.$eval('#imp-results figure[data-name=imp_spearman] canvas', (c) => Number(c.dataset.cells)), reply.measures.length ** 2);
  assert.equal(await p.$eval('#imp-results figure[data-name=imp_overlap] canvas', (c) => Number(c.dataset.cells)), reply.measures.length ** 2);
  assert.equal(await p.textContent('#imp-finding'), reply.finding);
  assert.equal(await p.$$eval('#imp-least-table tbody tr', (r) => r.length), reply.measures.length);

  // the curve: two lines from the sweep's reply, bits per token with 95% bands, both from the full model's bits
  const chart = await p.evaluate(() => {
    const c = window.attnlab.panels.importance.charts.curve;
    return { lines: c.data.datasets.filter((d) => !d.band).map((d) => ({ label: d.label, x: d.data.map((q) => q.x), y: d.data.map((q) => q.y) })),
             bands: c.data.datasets.filter((d) => d.band).length, yTitle: c.options.scales.y.title.text };
  });
  assert.equal(chart.lines.length, 2);
  assert.match(chart.lines[0].label, /PAPA/);
  assert.match(chart.lines[1].label, /pruning/);
  assert.match(chart.yTitle, /bits per token/);
  assert.ok(chart.bands >= 1, 'the 95% bands are drawn');
  const full = curve.summary[curve.configs.findIndex((c) => c.k === 0)].mean;
  for (const l of chart.lines) {
    assert.equal(l.y[0], full);
    assert.deepEqual(l.x, [1, 0.5, 0]);
  }
  const bitsOf = (label) => curve.summary[curve.configs.findIndex((c) => c.label === label)].mean;
  assert.equal(chart.lines[0].y[1], bitsOf('average k=8 lambda'));
  assert.equal(chart.lines[1].y[1], bitsOf('zeros k=8 gradient'));
  assert.equal(await p.$$eval('#imp-curve-table tbody tr', (r) => r.length), curve.configs.length);

  // exports: JSON (the texts by name, their hashes in the provenance), CSV and PNG
  const body = JSON.parse(await download(p, '#imp-export-json'));
  assert.equal(body.provenance.digest, reply.digest);
  assert.equal(body.provenance.curve_digest, curve.digest);
  assert.equal(body.provenance.model.content_hash, curve.hashes.model);
  assert.equal(body.provenance.corpus.content_hash, curve.hashes.corpus);
  assert.equal(body.provenance.corpus.constants_content_hash, curve.hashes.constants_corpus);
  assert.match(body.provenance.link, /#v1\./);
  assert.match(body.request.papa.corpus, /^\(heldout\.txt/);
  assert.match(body.request.head_agreement.constants_corpus, /^\(train\.txt/);
  assert.deepEqual(body.reply.head_agreement.grids, reply.grids);
  assert.equal(body.reply.papa.digest, curve.digest);
  const csv = (await download(p, '#imp-export-csv')).toString('utf8');
  assert.match(csv, new RegExp(`^# attnlab head importance and agreement; engine [^;]+; digest ${reply.digest}; pruning curve digest ${curve.digest}\\n`));
  assert.match(csv, /\n# held-out text: heldout\.txt \(first 2 documents of 10 lines\) \(content sha256:/);
  assert.match(csv, /\n# pruning curve and PAPA curve \(bits per token/);
  assert.equal(csv.split('\n').filter((l) => /^\d+,\d+,/.test(l)).length, curve.shape.n_layers * curve.shape.n_heads);
  const png = await download(p, '#imp-results figure[data-name=imp_curve] .export-png');
  assert.match(png.toString('latin1'), /tEXtattnlab:provenance\0\{"engine"/);
  assert.match(png.toString('latin1'), /"corpus":\{"name":"heldout\.txt/);

  shared.link = await linkUrl(p);
  shared.reply = reply;
  assert.deepEqual(p.errors, []);
  await p.context().close();
});

test('the decoder\u2019s importance link reopens on its result and says reproduced', { skip }, async () => {
  assert.ok(shared.link, 'the panel\u2019s test made a link');
  const p = await openUrl(browser, shared.link);
  await p.waitForSelector('#imp-stored-table');
  assert.equal(await p.textContent('#imp-stored-finding'), shared.reply.finding);
  await p.waitForFunction(() => /^(reproduced|not reproduced)/.test(document.getElementById('imp-verdict').textContent), null, { timeout: 300000 });
  assert.match(await p.textContent('#imp-verdict'), /^reproduced: identical/);
  assert.equal(await p.inputValue('#imp-docs'), SMALL['imp-docs'], 'the link carries the texts\u2019 settings');
  assert.equal(await p.evaluate(() => window.attnlab.panels.importance.last.reply.digest), shared.reply.digest);
  assert.deepEqual(p.errors, []);
  await p.context().close();
});

test('cancel stops a decoder\u2019s importance run and the panel works on', { skip }, async () => {
  const p = await openUrl(browser, server.url);
  await modelReady(p);
  await setControls(p, { ...SMALL, 'imp-docs': '200', 'imp-cdocs': '400' });
  await p.click('#imp-run');
  await p.waitForFunction(() => /^Pruning curve /.test(document.getElementById('imp-status').textContent), null, { timeout: 120000 });
  await p.click('#imp-cancel');
  await p.waitForFunction(() => !window.attnlab.panels.importance.job, null, { timeout: 120000 });
  assert.equal(await p.textContent('#imp-status'), 'Cancelled.');
  assert.equal(await p.$$eval('#imp-results figure', (f) => f.length), 0, 'no figures of a cancelled run');
  assert.equal(await p.evaluate(() => window.attnlab.panels.importance.runs), 0);
  assert.deepEqual(p.errors, []);
  await p.context().close();
});
