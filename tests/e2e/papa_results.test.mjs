// papa_results.test.mjs: the PAPA panel as people meet it, in headless Chromium (playwright-core), with
// attnlab-mini-bert as the page's only embedded model and the repository's stored examples (web/examples/):
//   - a stored example draws its table and figures at once, marked stored, no sweep started; "verify by
//     recomputing" (the smallest example) reproduces it, identical; its export names the page preset and lr
//     as given; the one-point comparison figure has round % ticks and its subtitle clear of them;
//   - a link to a result opens on it (scrolled to, focused, "you opened a shared result") and its stored
//     table reads as the computed one;
//   - Run sweep is disabled while a sweep runs (a click on it changes nothing);
//   - the import: the L field shows its placeholder whole; a TSV offers no column, CoNLL or CSV options, a CSV
//     only its own columns; a file with invalid UTF-8 is refused naming the file and line;
//   - a score axis stays inside the metric's range on degenerate data;
//   - the explorer's PNG has a title, the model and the colour scale, and its PNG and JSON the provenance.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { linkUrl, modelReady, openUrl, root, setControls, skipReason, startServer } from './helpers.mjs';
import { pageSuite } from './page_suite.mjs';
import { readText } from '../../web/png_text.js';
import { loadEngineTables } from '../../scripts/engine_tables.mjs';
import { examples } from '../../web/papa_request.js';
import { isEncoderWithWeights } from '../../web/models.js';

const MODEL = 'attnlab-mini-bert';
loadEngineTables(); // the built-in tasks, from the CLI's version reply
const indexFile = path.join(root, 'web/examples/index.json');
const index = existsSync(indexFile) ? JSON.parse(readFileSync(indexFile, 'utf8')) : [];
const single = index.filter((e) => e.model === MODEL && examples().some((x) => x.id === e.example && !x.compare));
const smallest = single.sort((a, b) => a.cpu_seconds - b.cpu_seconds)[0];
const skip = skipReason || (!smallest ? `no stored example for ${MODEL} in web/examples` : false);

let work;
let server;
let browser;
let shared = {};

pageSuite({ skip, name: 'papa-results', model: MODEL }, (h) => ({ work, server, browser } = h));

const openPage = (url) => openUrl(browser, url);

const tableRows = (p, id) => p.$$eval(`#${id} tbody tr`, (trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent)));

test('a stored example draws at once, marked stored, and "verify by recomputing" reproduces it', { skip }, async () => {
  const record = JSON.parse(readFileSync(path.join(root, 'web/examples', smallest.file), 'utf8'));
  const p = await openPage(server.url);
  await modelReady(p);
  await p.waitForSelector('#papa-examples:not([hidden])');
  // docs/papa-page.md, "The page preset": the preset's time is the stored POS example's measured one, with its threads, said to be native
  const pos = index.find((e) => e.example === 'pos' && e.model === MODEL);
  if (pos) {
    assert.ok((await p.textContent('#papa-preset-help')).includes(
      `Measured natively with the page's request on POS: ${MODEL} ${Math.round(pos.wall_seconds)} s on ${pos.threads} thread`));
  }
  assert.doesNotMatch(await p.textContent('#papa'), /minutes?\b|about as long|under a minute/, 'no time promised without a measurement');
  const offered = await p.$$eval('#papa-example-select option', (o) => o.map((x) => x.value));
  assert.ok(offered.includes(smallest.file), offered.join(', '));
  assert.ok(offered.every((f) => f.endsWith(`-${MODEL}.json`)), 'only the page\'s embedded models');
  await p.selectOption('#papa-example-select', smallest.file);
  await p.click('#papa-example-open');
  await p.waitForSelector('#papa-stored-note');
  await p.waitForFunction(() => !window.attnlab.panels.papa.job && window.attnlab.panels.papa.last);
  // drawn from the record: no sweep ran
  assert.equal(await p.evaluate(() => window.attnlab.panels.papa.runs), 0);
  assert.match(await p.textContent('#papa-stored-note'), /^Stored result — not computed in this page/);
  assert.match(await p.textContent('#papa-stored-note'), new RegExp(`${record.made.threads} threads? in \\d+ s`));
  assert.equal((await tableRows(p, 'papa-table')).length, record.reply.configs.length);
  const names = await p.$$eval('#papa-results figure', (fs) => fs.map((f) => f.dataset.name ?? f.id ?? ''));
  for (const name of ['papa_constants', 'papa_models']) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
  if (record.reply.findings?.informative !== 'no') {
    const ys = await p.evaluate(() => window.attnlab.panels.papa.charts.scores.data.datasets[0].data.map((d) => d.y));
    assert.equal(ys[0], record.reply.summary[0].mean);
  }
  assert.equal(await p.inputValue('#papa-task'), record.request.task);

  // the score drop against model quality, one point: round ticks in %, the subtitle clear of the top tick
  const axes = await p.evaluate(() => {
    const c = window.attnlab.panels.papa.charts.models;
    // the title and the subtitle are the boxes at the top with a text; the subtitle is the lower one
    const sub = c.boxes.filter((b) => b.position === 'top' && b.options?.text).sort((a, b) => b.bottom - a.bottom)[0];
    return { y: c.scales.y.ticks.map((t) => t.label), x: c.scales.x.ticks.map((t) => t.label), yTop: c.scales.y.top,
             // where the subtitle's text ends: its box less the padding below it
             subBottom: sub ? sub.bottom - (typeof sub.options.padding === 'number' ? sub.options.padding : sub.options.padding?.bottom ?? 0) : null, n: c.data.datasets.length, font: c.scales.y.options.ticks.font?.size ?? 12 };
  });
  assert.equal(axes.n, 1);
  for (const t of axes.y) assert.match(String(t), /^-?\d+(\.\d)?%$/, `y tick ${t}`);
  for (const t of axes.x) assert.match(String(t), /^-?\d+(\.\d{1,3})?$/, `x tick ${t}`);
  assert.ok(axes.subBottom !== null && axes.subBottom + 2 < axes.yTop - axes.font / 2, `subtitle ends at ${axes.subBottom}, top tick at ${axes.yTop}`);

  // the export: the page's preset by its name and lr as the preset gives it, marked stored
  const [json] = await Promise.all([p.waitForEvent('download'), p.click('#papa-export-json')]);
  const body = JSON.parse(readFileSync(await json.path(), 'utf8'));
  assert.equal(body.provenance.configuration.preset, 'page');
  assert.equal(body.provenance.configuration.engine_preset, 'quick');
  const lr = body.provenance.configuration.probe.lr;
  assert.equal(Math.fround(lr), Math.fround(record.reply.config.probe.lr));
  assert.ok(String(lr).length <= 6, `lr printed as ${lr}, not as its float32 ${record.reply.config.probe.lr}`);
  assert.equal(body.provenance.stored.file, `examples/${smallest.file}`);
  assert.equal(body.provenance.digest, record.reply.digest);
  shared.link = await linkUrl(p);
  shared.rows = await tableRows(p, 'papa-table');

  // verify: the same request in the page's worker, compared number by number
  await p.click('#papa-verify');
  assert.equal(await p.evaluate(() => document.getElementById('papa-run').disabled), true, 'Run sweep is disabled during the run');
  await p.waitForFunction(() => /^(reproduced|not reproduced)/.test(document.getElementById('papa-verdict').textContent), null, { timeout: 1500000 });
  assert.match(await p.textContent('#papa-verdict'), /^reproduced: identical/);
  assert.equal(await p.evaluate(() => window.attnlab.panels.papa.last.reply.digest), record.reply.digest);
  assert.equal(await p.evaluate(() => document.getElementById('papa-run').disabled), false);
  assert.deepEqual(p.errors, []);
  await p.context().close();
});

test('a result\'s link opens on it: scrolled to, focused, said, and its table reads as the computed one', { skip }, async () => {
  assert.ok(shared.link, 'the first test made a link');
  const p = await openPage(shared.link);
  await p.waitForSelector('#papa-stored-table');
  const at = await p.evaluate(() => {
    const box = document.getElementById('papa-link').getBoundingClientRect();
    return { top: box.top, height: innerHeight, scrolled: scrollY, focused: document.activeElement?.id };
  });
  assert.ok(at.scrolled > 500, `scrolled ${at.scrolled} px`);
  assert.ok(at.top >= 0 && at.top < at.height - 150, `the result box at ${at.top} px of ${at.height}`);
  assert.equal(at.focused, 'papa-link');
  assert.match(await p.textContent('#papa-shared'), /^You opened a shared PAPA result/);
  assert.deepEqual(await tableRows(p, 'papa-stored-table'), shared.rows);
  // still in view once the model is loaded and the explorer drawn above it
  await modelReady(p);
  const top = await p.evaluate(() => document.getElementById('papa-link').getBoundingClientRect().top);
  assert.ok(top >= -50 && top < 1000, `the result box at ${top} px after loading`);
  await p.context().close();
});

test('the import: the L field shows "preset", a TSV offers no column options, a CSV only its columns, bad UTF-8 named', { skip }, async () => {
  const p = await openPage(server.url);
  await modelReady(p);
  await setControls(p, { 'papa-task': 'file' });
  // "preset" fits in every number field of the panel, beside its spinner
  const cut = await p.$$eval('#papa input[type=number]', (inputs) => inputs.filter((i) => i.placeholder && !i.hidden).map((i) => {
    const s = getComputedStyle(i);
    const c = document.createElement('canvas').getContext('2d');
    c.font = `${s.fontSize} ${s.fontFamily}`;
    const room = i.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight) - 16; // the spin buttons
    return { id: i.id, need: c.measureText(i.placeholder).width, room };
  }).filter((x) => x.need > x.room));
  assert.deepEqual(cut, []);
  const visible = (id) => p.evaluate((x) => !document.getElementById(x).hidden && document.getElementById(x).offsetParent !== null, id);
  const sst = path.join(work, 'sst2.tsv');
  writeFileSync(sst, 'sentence\tlabel\na fine film \t1\na dull film \t0\n');
  await p.setInputFiles('#papa-train-file', sst);
  await p.waitForFunction(() => /sst2\.tsv/.test(document.getElementById('papa-files-info').textContent));
  for (const id of ['papa-text-col', 'papa-label-col', 'papa-conll-col', 'papa-delim']) assert.equal(await visible(id), false, id);
  assert.equal(await visible('papa-glue-note'), true);
  const csv = path.join(work, 'reviews.csv');
  writeFileSync(csv, 'id,review,stars\n1,good,up\n2,bad,down\n');
  await p.setInputFiles('#papa-train-file', csv);
  await p.waitForFunction(() => /Columns: id, review, stars/.test(document.getElementById('papa-files-info').textContent));
  assert.equal(await visible('papa-conll-col'), false);
  assert.equal(await visible('papa-delim'), true);
  assert.deepEqual(await p.$$eval('#papa-text-col option', (o) => o.map((x) => x.value)), ['id', 'review', 'stars']);
  const bad = path.join(work, 'latin1.csv');
  writeFileSync(bad, Buffer.concat([Buffer.from('id,review,stars\n1,good,up\n2,caf'), Buffer.from([0xe9]), Buffer.from(',down\n')]));
  await p.setInputFiles('#papa-train-file', bad);
  await p.waitForSelector('#papa-files-error:not([hidden])');
  assert.match(await p.textContent('#papa-files-error'), /^latin1\.csv: line 3: invalid UTF-8 at byte 31/);
  await p.context().close();
});

test('a score axis stays inside the metric\'s range on degenerate data', { skip }, async () => {
  const p = await openPage(server.url);
  await p.waitForFunction(() => window.attnlab);
  const y = await p.evaluate(async () => {
    const { fractionChart } = await import('/papa_charts.js');
    const metricRange = (m) => (m === 'mcc' ? { min: -1, max: 1 } : { min: 0, max: 1 }); // papa_record.js's, tested in tests/js
    const canvas = document.createElement('canvas');
    document.body.append(canvas);
    // chance-level scores with 95% intervals wider than the scores themselves
    const points = [{ x: 1, y: 0.05, lo: -0.2, hi: 0.3 }, { x: 0.5, y: 0.02, lo: -0.25, hi: 0.29 }, { x: 0, y: 0.98, lo: 0.9, hi: 1.2 }];
    const chart = await fractionChart(canvas, { series: [{ label: 'average', points }], title: 't', yTitle: 'accuracy',
                                                range: metricRange('accuracy') });
    const mcc = await fractionChart(document.body.appendChild(document.createElement('canvas')), {
      series: [{ label: 'average', points: points.map((q) => ({ ...q, lo: q.lo - 1, hi: q.hi })) }], title: 't', yTitle: 'mcc', range: metricRange('mcc') });
    return { min: chart.scales.y.min, max: chart.scales.y.max, mccMin: mcc.scales.y.min };
  });
  assert.ok(y.min >= 0 && y.max <= 1, `accuracy axis ${y.min}..${y.max}`);
  assert.ok(y.mccMin >= -1, `mcc axis from ${y.mccMin}`);
  await p.context().close();
});

test('the panel draws a degenerate result with its score axis inside the metric\u2019s range', { skip }, async () => {
  // a stored example made degenerate (a 4-row file's: chance scores, intervals wider than the scores), drawn by the
  // panel itself, so the range comes from the reply's metric as the page reads it
  const p = await openPage(server.url);
  await modelReady(p);
  await p.waitForSelector('#papa-examples:not([hidden])');
  await p.selectOption('#papa-example-select', smallest.file);
  await p.click('#papa-example-open');
  await p.waitForFunction(() => !window.attnlab.panels.papa.job && window.attnlab.panels.papa.charts?.scores);
  const y = await p.evaluate(async () => {
    const api = window.attnlab.panels.papa;
    const record = { ...api.last, reply: structuredClone(api.last.reply) };
    record.reply.summary = record.reply.summary.map((s, i) => ({ ...s, mean: i % 2 ? 0.02 : 0.97, ci95: 0.4 }));
    record.reply.findings = { ...record.reply.findings, informative: 'too_little_data' };
    await api.show(record);
    const sc = api.charts.scores.scales.y;
    return { min: sc.min, max: sc.max, metric: record.reply.task.metric };
  });
  assert.ok(y.min >= 0 && y.max <= 1, `${y.metric} axis ${y.min}..${y.max}`);
  await p.context().close();
});

test('the explorer\'s exports: a titled PNG with the model and colour scale, provenance in PNG and JSON', { skip }, async () => {
  const p = await openPage(server.url);
  await modelReady(p);
  await p.click('#grid', { position: { x: 5, y: 5 } }).catch(() => {});
  const sizes = await p.evaluate(() => ({ heat: document.getElementById('heatmap').height, legend: document.getElementById('legend').height,
                                          title: document.getElementById('detail-title').textContent }));
  const [png] = await Promise.all([p.waitForEvent('download'), p.click('#export-png')]);
  const bytes = new Uint8Array(readFileSync(await png.path()));
  const text = readText(bytes);
  const unescape = (t) => t.replace(/\\u([0-9a-f]{4})/g, (_, h) => String.fromCharCode(Number.parseInt(h, 16))); // png_text.js
  assert.equal(unescape(text.Title), sizes.title);
  assert.match(text.Title, /^Layer \d+, head \d+/);
  const prov = JSON.parse(text['attnlab:provenance']);
  assert.match(prov.engine, /^\d+\.\d+\.\d+/);
  assert.match(prov.link, /^http:\/\/127\.0\.0\.1:\d+\/#v1\./);
  assert.equal(prov.model.ref.id, MODEL);
  assert.ok(Number.isInteger(prov.shown.layer) && Number.isInteger(prov.shown.head));
  const height = new DataView(bytes.buffer, bytes.byteOffset).getUint32(20); // IHDR
  assert.ok(height > sizes.heat + sizes.legend + 30, `the picture (${height} px) holds a title, the heatmap and its legend`);
  // the title is drawn: dark pixels in the band above the heatmap
  const dark = await p.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width;
    c.height = img.height;
    const x = c.getContext('2d');
    x.drawImage(img, 0, 0);
    const d = x.getImageData(0, 0, img.width, 40).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] < 100 && d[i + 1] < 100 && d[i + 2] < 100) n++;
    return n;
  }, Buffer.from(bytes).toString('base64'));
  assert.ok(dark > 50, `${dark} dark pixels in the title band`);
  const [json] = await Promise.all([p.waitForEvent('download'), p.click('#export-json')]);
  const body = JSON.parse(readFileSync(await json.path(), 'utf8'));
  assert.equal(body.provenance.engine, prov.engine);
  assert.match(body.provenance.link, /#v1\./);
  assert.ok(Array.isArray(body.matrix) && body.matrix.length > 0);
  await p.context().close();
});

test('Run sweep is disabled while a sweep runs, so a second click cannot restart it', { skip }, async () => {
  const p = await openPage(server.url);
  await modelReady(p);
  assert.equal(await p.evaluate(() => document.getElementById('papa-run').disabled), false);
  await p.click('#papa-run');
  await p.waitForFunction(() => window.attnlab.panels.papa.job);
  assert.equal(await p.evaluate(() => document.getElementById('papa-run').disabled), true);
  const job = await p.evaluate(() => { window.__job = window.attnlab.panels.papa.job; return true; });
  assert.ok(job);
  await p.click('#papa-run', { force: true }); // a click on the disabled button does nothing
  assert.equal(await p.evaluate(() => window.attnlab.panels.papa.job === window.__job), true, 'the same run goes on');
  await p.click('#papa-cancel');
  await p.waitForFunction(() => !window.attnlab.panels.papa.job, null, { timeout: 120000 });
  assert.equal(await p.evaluate(() => document.getElementById('papa-run').disabled), false);
  await p.context().close();
});

// What the PAPA panel shows when an awaited result does not come, so that a failure says what happened instead: the
// clicks the example's button received (counted by the test), the stored examples fetched, the panel's job and text.
async function papaSays(p) {
  const seen = await p.evaluate(() => {
    const text = (id) => document.getElementById(id)?.textContent ?? null;
    const papa = window.attnlab.panels.papa;
    const fetched = performance.getEntriesByType('resource').map((r) => r.name).filter((n) => n.includes('/examples/'));
    return { clicks: window.__clicks ?? 0, fetched, model: window.attnlab.app.modelId, job: !!papa.job, last: !!papa.last,
             runs: papa.runs, hidden: document.getElementById('papa')?.hidden, status: text('papa-status'),
             error: text('papa-error'), results: text('papa-results')?.slice(0, 300) };
  });
  return `the PAPA panel: ${JSON.stringify(seen)}; page errors: ${JSON.stringify(p.errors)}`;
}

// The first example on the repository's own embedded encoders, both stored: shown side by side at once (a language
// model has the decoder panels' examples, docs/decoder-page.md).
const models = JSON.parse(readFileSync(path.join(root, 'models/index.json'), 'utf8')).filter(isEncoderWithWeights).map((m) => m.id);
const compareStored = models.every((m) => index.some((e) => e.example === 'compare-agreement' && e.model === m));

test('the first example shows the stored comparison of the embedded models at once', { skip: skip || (!compareStored && 'no stored first example') }, async () => {
  const all = await startServer(); // models/: every embedded model
  try {
    const p = await openPage(all.url);
    await modelReady(p);
    assert.match(await p.textContent('#papa-example-note'), /^Opens the stored results of agreement on .* They show at once; computing them took \d+ s on \d threads? \(/);
    await p.$eval('#papa-example-compare', (b) => b.addEventListener('click', () => { window.__clicks = (window.__clicks ?? 0) + 1; }));
    await p.click('#papa-example-compare');
    await p.waitForSelector('#papa-stored-note').catch(async (e) => { throw new Error(`${e.message}\n${await papaSays(p)}`); });
    await p.waitForFunction(() => !window.attnlab.panels.papa.job && window.attnlab.panels.papa.last);
    assert.equal(await p.evaluate(() => window.attnlab.panels.papa.runs), 0, 'no sweep ran');
    const rows = await tableRows(p, 'papa-compare-table');
    assert.deepEqual(rows.map((r) => r[0]).sort(), [...models].sort());
    // docs/papa-page.md, "The verdict": one vocabulary: the heading lists the engine's words and each row says one of them, the one
    // its record's verdict code stands for; "unknown" appears nowhere in the results
    const heads = await p.$$eval('#papa-compare-table thead th', (ths) => ths.map((t) => t.textContent));
    assert.match(heads.at(-1), /\(yes \/ no \/ undecided \/ too little data\)$/);
    for (const r of rows) {
      const rec = JSON.parse(readFileSync(path.join(root, 'web/examples', index.find((e) => e.example === 'compare-agreement' && e.model === r[0]).file), 'utf8'));
      const f = rec.reply.findings;
      assert.equal(r.at(-1), f.words[f.constant_costs], `${r[0]}: ${r.at(-1)}`);
    }
    assert.doesNotMatch(await p.textContent('#papa-results'), /unknown/i);
    assert.equal(await p.evaluate(() => window.attnlab.panels.papa.charts.models.data.datasets.length), models.length);
    assert.equal(await p.inputValue('#papa-models'), 'embedded');
    assert.equal(await p.inputValue('#papa-seeds'), '1,2,3,4,5');
    assert.deepEqual(p.errors, []);
    await p.context().close();
  } finally {
    all.child.kill();
  }
});
