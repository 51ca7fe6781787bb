// importance.test.mjs: the explorer's measure views and the importance panel in headless Chromium
// (playwright-core) on the real WASM worker, with attnlab-mini-bert and the built-in tasks:
//   - attention rollout, norm-based attention and value zeroing: each drawn from its own worker op; the
//     rows of rollout and of value zeroing, read back from the exported JSON, sum to 1; rollout from
//     norm-based attention differs from rollout of the raw weights; norm-based attention shares one scale
//     over the heads; lines; exports carry provenance; a link reopens the view with its settings;
//   - the importance panel: one grid per measure, the Spearman matrix with its numbers, the least-important
//     overlap, the finding, the pruning curve on the PAPA curve's axes; JSON, CSV and PNG exports carry
//     provenance; its link reopens on the result and verifies it; cancel stops a run and the page keeps
//     working; the panel and its figures fit 390 px.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { runPanel, linkUrl, modelReady, openUrl, root, runText, setControls, showView, skipReason, waitIdle, watchStatus } from './helpers.mjs';
import { pageSuite } from './page_suite.mjs';

const skip = skipReason || (!existsSync(path.join(root, 'build/data/tasks/pos.jsonl')) ? 'no built-in tasks (build/data/tasks)' : false);
const shots = process.env.AL_SCREENSHOTS ?? null; // a folder for screenshots, when given

// The PAPA panel's settings for a small run (the importance panel takes them): every stage, few examples.
const SMALL = { 'papa-train': '48', 'papa-val': '24', 'papa-fractions': '1,0.5,0', 'papa-seeds': '1,2', 'papa-epochs': '1',
                'papa-rank-epochs': '1', 'papa-rank-n': '24', 'papa-mlm': false, 'imp-examples': '24', 'imp-least-k': '3' };

let work;
let server;
let browser;
const shared = {};

pageSuite({ skip, name: 'importance-e2e', model: 'attnlab-mini-bert' }, (h) => ({ work, server, browser } = h));

// After a need's setting changed: its new data drawn.
async function needSettled(p, prev) {
  await p.waitForFunction((n) => window.attnlab.app.effCount > n && !window.attnlab.app.effJob, prev, { timeout: 120000 });
  await waitIdle(p);
}

async function download(p, selector) {
  const [d] = await Promise.all([p.waitForEvent('download'), p.click(selector)]);
  return readFileSync(await d.path());
}

function rowSums(matrix) {
  return matrix.map((row) => row.reduce((a, b) => a + b, 0));
}

test('rollout, norm-based attention and value zeroing: their ops, rows summing to 1 in the export, one scale, lines, links', { skip }, async () => {
  const p = await openUrl(browser, server.url);
  await modelReady(p);
  await runText(p, 'the old man saw the dog by the river .');
  const standard = await p.evaluate(() => window.attnlab.current.matrix);

  // rollout of the raw weights: rows sum to 1, read back from the exported JSON
  await showView(p, 'rollout', 120000);
  assert.equal(await p.isVisible('#rollout-controls'), true);
  await p.evaluate(() => window.attnlab.explorer.select(3, 1));
  await waitIdle(p);
  const raw = JSON.parse(await download(p, '#export-json'));
  assert.equal(raw.view, 'rollout');
  assert.deepEqual([raw.layer, raw.head], [3, 1]);
  assert.equal(raw.rollout.op, 'attention_rollout');
  assert.equal(raw.rollout.source, 'raw');
  assert.match(raw.rollout.digest, /^sha256:[0-9a-f]{64}$/);
  assert.match(raw.provenance.link, /#v1\./);
  assert.equal(raw.matrix.length, raw.tokens.length);
  for (const s of rowSums(raw.matrix)) assert.ok(Math.abs(s - 1) < 1e-5, `a rollout row sums to ${s}`);
  const first = await p.evaluate(() => window.attnlab.explorer.displayed(0, 0).matrix);
  assert.ok(raw.matrix.flat().some((v, i) => Math.abs(v - first[i]) > 1e-3), 'the last layer\u2019s rollout is not the first\u2019s');
  assert.ok(raw.matrix.flat().some((v, i) => Math.abs(v - standard[i]) > 1e-3), 'rollout is not the attention of head 0.0');
  // from norm-based attention: another map, rows still summing to 1
  let prev = await p.evaluate(() => window.attnlab.app.effCount);
  await p.selectOption('#rollout-source', 'norm');
  await needSettled(p, prev);
  const normRoll = JSON.parse(await download(p, '#export-json'));
  assert.equal(normRoll.rollout.source, 'norm');
  for (const s of rowSums(normRoll.matrix)) assert.ok(Math.abs(s - 1) < 1e-5, `a rollout row (norm source) sums to ${s}`);
  assert.ok(normRoll.matrix.flat().some((v, i) => Math.abs(v - raw.matrix.flat()[i]) > 1e-4), 'the source changes the map');
  // lines: the same numbers drawn as lines, with their own legend
  await p.selectOption('#draw-as', 'lines');
  await p.waitForFunction(() => document.getElementById('heatmap').dataset.lines === '1');
  assert.equal(await p.evaluate(() => document.getElementById('legend').dataset.kind), 'lines');
  const png = await download(p, '#export-png');
  assert.match(png.toString('latin1'), /tEXtattnlab:provenance\0\{"engine"/);
  await p.selectOption('#draw-as', 'heatmap');
  const link = await linkUrl(p);
  const q = await openUrl(browser, link);
  await modelReady(q);
  await q.waitForFunction(() => window.attnlab.current?.view === 'rollout' && !window.attnlab.app.effJob, null, { timeout: 120000 });
  assert.equal(await q.inputValue('#rollout-source'), 'norm');
  assert.deepEqual(await q.evaluate(() => [window.attnlab.explorer.layer, window.attnlab.explorer.head]), [3, 1]);
  const reopened = await q.evaluate(() => window.attnlab.current.matrix);
  assert.deepEqual(reopened, normRoll.matrix.flat().map(Math.fround), 'the link reopens the same map');
  await q.context().close();

  // norm-based attention: one scale for every head of the run (0 to its largest value), the norm mass under each head
  await showView(p, 'norm', 120000);
  const norm = await p.evaluate(() => {
    const ex = window.attnlab.explorer;
    const scales = [];
    for (const [l, h] of [[0, 0], [2, 3]]) {
      ex.select(l, h);
      scales.push(ex.current.scale.max);
    }
    const run = window.attnlab.app.run.norm;
    let top = 0;
    for (const v of run.data) top = Math.max(top, v);
    return { scales, top, notes: [...document.querySelectorAll('#grid .head-note')].filter((n) => !n.hidden).length,
             mass: run.mass[2][3], heads: run.H * run.NL };
  });
  assert.deepEqual(norm.scales, [norm.top, norm.top]);
  assert.equal(norm.notes, norm.heads, 'every head shows its norm mass');
  const normJson = JSON.parse(await download(p, '#export-json'));
  assert.equal(normJson.norm.op, 'norm_attention');
  assert.equal(normJson.norm.norm_mass, norm.mass);
  assert.equal(normJson.provenance.shown.scale.max, norm.top);
  // per layer with the residual and LayerNorm: another request, the same map for every head of a layer
  prev = await p.evaluate(() => window.attnlab.app.effCount);
  await p.selectOption('#norm-variant', 'res_ln');
  await needSettled(p, prev);
  const same = await p.evaluate(() => {
    const ex = window.attnlab.explorer;
    return Array.from(ex.displayed(1, 0).matrix).every((v, i) => v === ex.displayed(1, 2).matrix[i]);
  });
  assert.equal(same, true);

  // value zeroing: rows sum to 1, with the raw cosine distances in the export
  await showView(p, 'value_zeroing', 120000);
  const vz = JSON.parse(await download(p, '#export-json'));
  assert.equal(vz.value_zeroing.op, 'value_zeroing');
  for (const s of rowSums(vz.matrix)) assert.ok(Math.abs(s - 1) < 1e-5, `a value-zeroing row sums to ${s}`);
  assert.equal(vz.value_zeroing.cosine_distances.length, vz.matrix.length);
  assert.ok(vz.value_zeroing.cosine_distances.flat().every((d) => d >= 0 && d <= 2));
  if (shots) await p.screenshot({ path: path.join(shots, 'explorer-value-zeroing.png'), fullPage: false });
  assert.deepEqual(p.errors, []);
  await p.context().close();
});

// Clicks Run measures and waits until it ends: { ok, error }.
async function runMeasures(p) {
  await p.evaluate(() => {
    // the numbers written into the Spearman figure
    window.__spearmanText = [];
    const fill = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function fillText(t, ...rest) {
      if (this.canvas.closest?.('figure')?.dataset.name === 'imp_spearman') window.__spearmanText.push(String(t));
      return fill.call(this, t, ...rest);
    };
  });
  await watchStatus(p, 'imp', '__impStatus');
  await runPanel(p, 'imp', 'importance', 600000);
  return p.evaluate(() => ({ ok: !!window.attnlab.panels.importance.last, error: document.getElementById('imp-error').textContent }));
}

test('the importance panel: a grid per measure, the correlations, the overlap, the curve beside PAPA\u2019s, exports, a link that verifies', { skip }, async () => {
  const p = await openUrl(browser, server.url);
  await modelReady(p);
  await setControls(p, SMALL);
  const got = await runMeasures(p);
  assert.ok(got.ok, got.error);
  const { reply, curve } = await p.evaluate(() => ({ reply: window.attnlab.panels.importance.last.reply,
                                                      curve: window.attnlab.panels.importance.last.curve }));
  const statuses = await p.evaluate(() => window.__impStatus.map((s) => s.text));
  assert.ok(statuses.some((t) => /^Measures: /.test(t)), statuses.slice(0, 10).join(' | '));
  assert.ok(statuses.some((t) => /^Pruning curve \d+%: /.test(t)));
  const bars = await p.evaluate(() => window.__impStatus.map((s) => s.bar));
  assert.ok(bars.some((b) => b > 0 && b <= 0.35) && bars.some((b) => b > 0.35 && b < 1), 'the bar moved through both requests');
  // one grid per measure, in the reply's order
  const grids = await p.$$eval('#imp-results figure', (fs) => fs.map((f) => f.dataset.name ?? '').filter((n) => n.startsWith('imp_grid_')));
  assert.equal(grids.length, reply.measures.length);
  assert.deepEqual(grids, reply.measures.map((m) => `imp_grid_${m.id}`));
  assert.deepEqual(reply.measures.map((m) => m.id), ['lambda', 'gradient', 'input_dependence', 'confidence', 'entropy', 'sink_mass', 'norm_mass']);
  const dims = await p.$eval('#imp-results figure[data-name=imp_grid_lambda] canvas', (c) => [Number(c.dataset.rows), Number(c.dataset.cols)]);
  assert.deepEqual(dims, [curve.shape.n_layers, curve.shape.n_heads]);
  // the Spearman matrix with its numbers written in the cells, in the direction of importance (docs/findings.md):
  // confidence against entropy, raw rho near -1, is drawn as agreement
  const cells = await p.$eval('#imp-results figure[data-name=imp_spearman] canvas', (c) => Number(c.dataset.cells));
  assert.equal(cells, reply.measures.length ** 2);
  const written = await p.evaluate(() => window.__spearmanText);
  for (const r of reply.spearman_importance) for (const x of r) assert.ok(written.includes(x === null ? '\u2013' : x.toFixed(2)), `${x} is written`);
  assert.equal(reply.spearman_importance[3][4], -reply.spearman[3][4]);
  assert.ok(reply.findings && reply.findings.pairs.length === 21, 'the rule\u2019s verdict codes beside the sentence');
  assert.equal(await p.textContent('#imp-finding'), reply.finding);
  assert.equal(await p.$$eval('#imp-least-table tbody tr', (r) => r.length), reply.measures.length);
  // the pruning curve and the PAPA curve on one chart: two lines, both starting at the full model's score
  const lines = await p.evaluate(() => window.attnlab.panels.importance.charts.curve.data.datasets.filter((d) => !d.band)
    .map((d) => ({ label: d.label, y: d.data.map((x) => x.y) })));
  assert.equal(lines.length, 2);
  assert.match(lines[0].label, /PAPA/);
  assert.match(lines[1].label, /pruning/);
  for (const l of lines) assert.equal(l.y[0], curve.summary[0].mean);
  // exports: JSON, CSV and PNG with provenance
  const body = JSON.parse(await download(p, '#imp-export-json'));
  assert.equal(body.provenance.digest, reply.digest);
  assert.equal(body.provenance.curve_digest, curve.digest);
  assert.equal(body.provenance.model.content_hash, curve.hashes.model);
  assert.equal(body.provenance.task.content_hash, curve.hashes.task);
  assert.match(body.provenance.link, /#v1\./);
  assert.deepEqual(body.reply.head_agreement.spearman, reply.spearman);
  assert.deepEqual(body.request.papa.orders, ['lambda', 'gradient']);
  const csv = (await download(p, '#imp-export-csv')).toString('utf8');
  assert.match(csv, new RegExp(`^# attnlab head importance and agreement; engine [^;]+; digest ${reply.digest}; pruning curve digest ${curve.digest}\\n`));
  assert.match(csv, /\n# link: http:\/\/127\.0\.0\.1:\d+\/#v1\./);
  assert.equal(csv.split('\n').filter((l) => /^\d+,\d+,/.test(l)).length, curve.shape.n_layers * curve.shape.n_heads);
  const png = await download(p, '#imp-results figure[data-name=imp_spearman] .export-png');
  assert.match(png.toString('latin1'), /tEXtattnlab:provenance\0\{"engine"/);
  // the panel and its figures fit a phone's width
  await p.setViewportSize({ width: 390, height: 844 });
  // the charts follow a resize a frame or more later (Chart.js watches its box): wait up to 5 s for the
  // page to fit; a page that never fits fails below
  await p.waitForFunction(() => document.scrollingElement.scrollWidth <= 390, null, { timeout: 5000 }).catch(() => {});
  const fit = await p.evaluate(() => ({
    scroll: document.scrollingElement.scrollWidth,
    boxes: [...document.querySelectorAll('#importance, #importance figure, #importance canvas, #importance .row')]
      .filter((e) => e.offsetParent !== null).map((e) => ({ what: e.id || e.dataset.name || e.tagName, right: e.getBoundingClientRect().right })),
  }));
  assert.ok(fit.scroll <= 390, `the page is ${fit.scroll} px wide at 390`);
  for (const b of fit.boxes) assert.ok(b.right <= 390, `${b.what} ends at ${b.right} at 390`);
  if (shots) {
    await p.locator('#importance').screenshot({ path: path.join(shots, 'importance-390.png') });
    await p.setViewportSize({ width: 1400, height: 1000 });
    await p.locator('#importance').screenshot({ path: path.join(shots, 'importance-1400.png') });
  }
  shared.link = await linkUrl(p);
  shared.reply = reply;
  assert.deepEqual(p.errors, []);
  await p.context().close();
});

test('the importance link reopens on its result and verifies it', { skip }, async () => {
  assert.ok(shared.link, 'the panel\u2019s test made a link');
  const p = await openUrl(browser, shared.link);
  await p.waitForSelector('#imp-stored-table');
  assert.match(await p.textContent('#imp-verdict'), /^from the link/);
  assert.equal(await p.textContent('#imp-stored-finding'), shared.reply.finding);
  assert.equal(await p.$$eval('#imp-stored-table tbody tr', (r) => r.length), shared.reply.measures.length);
  await p.waitForFunction(() => /^(reproduced|not reproduced)/.test(document.getElementById('imp-verdict').textContent), null, { timeout: 600000 });
  assert.match(await p.textContent('#imp-verdict'), /^reproduced: identical/);
  await p.context().close();
});

test('cancel stops an importance run and the page keeps working', { skip }, async () => {
  const p = await openUrl(browser, server.url);
  await modelReady(p);
  await setControls(p, { ...SMALL, 'papa-train': '300', 'imp-examples': '300' });
  await p.click('#imp-run');
  await p.waitForFunction(() => window.attnlab.panels.importance.job && document.getElementById('imp-progress').value >= 0, null, { timeout: 60000 });
  await p.waitForFunction(() => /^Measures: /.test(document.getElementById('imp-status').textContent), null, { timeout: 120000 });
  await p.click('#imp-cancel');
  await p.waitForFunction(() => !window.attnlab.panels.importance.job, null, { timeout: 120000 });
  assert.equal(await p.evaluate(() => window.attnlab.panels.importance.runs), 0);
  assert.equal(await p.$$eval('#imp-results figure', (f) => f.length), 0, 'no figures of a cancelled run');
  assert.equal(await p.textContent('#imp-status'), 'Cancelled.');
  await runText(p, 'the dog ran after the cat');
  assert.equal(await p.evaluate(() => window.attnlab.current.labels[2]), 'dog');
  assert.deepEqual(p.errors, []);
  await p.context().close();
});
