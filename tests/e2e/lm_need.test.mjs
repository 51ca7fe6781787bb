// lm_need.test.mjs: the panel "how much does a language model need its attention" (web/panel_lm_need.js,
// docs/decoder-page.md) on the tiny GPT-2 of tests/fixtures (a random GPT-2 with a real byte-level BPE), as the
// page's embedded model and opened from local files: the four requests run with progress, their numbers equal the
// native CLI's on the same folder and the same texts (PAPA's digest and every configuration's bits per token, the
// blocks dropped and made constant, window and sinks, the head roles' digest), the figures and tables are drawn,
// an order the engine refuses is named with a way to run the others, Cancel stops a run, and the result's link
// reopens on it, recomputes and says "reproduced: identical".
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { lmNeedCli } from './lm_need_cli.mjs';
import { cli, launchChromium, modelReady, openUrl, root, setControls, skipReason, startServer, waitIdle, writeModelIndex } from './helpers.mjs';

const skip = skipReason || (!existsSync(cli) ? `no CLI at ${cli}` : false);
const FIXTURE = path.join(root, 'tests/fixtures/decoder_tiny_gpt2');
const FILES = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'];
// The embedded decoder (models/attnlab-mini-gpt, pretrained by attnlab on build/data's training split): the last test
// runs on it with the page's own built-in texts when its weights and build/data are there, and is skipped otherwise.
const MINI_GPT = process.env.AL_MINI_GPT_DIR ?? path.join(root, 'models/attnlab-mini-gpt');
const MINI_GPT_FILES = ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'];
const DATA = path.join(root, 'build/data');
const skipMini = skip || (!existsSync(path.join(MINI_GPT, 'model.safetensors')) ? 'no attnlab-mini-gpt weights'
  : !existsSync(path.join(DATA, 'heldout.txt')) ? 'no build/data/heldout.txt' : false);
let work;
let server;
let browser;

// Sentences from a seeded generator, one a line, as build/data's held-out and training splits are.
function sentences(n, seed) {
  const words = ['the', 'cat', 'sat', 'on', 'a', 'mat', 'and', 'dog', 'ran', 'to', 'house', 'because', 'it', 'was', 'warm',
                 'people', 'said', 'that', 'river', 'city', 'old', 'new', 'day', 'time', 'of', 'in', 'with', 'for'];
  let x = seed;
  const r = () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return (x >>> 8) / 16777216;
  };
  return Array.from({ length: n }, () => {
    const w = Array.from({ length: 6 + Math.floor(r() * 10) }, () => words[Math.floor(r() * words.length)]);
    return `${w[0][0].toUpperCase()}${w.join(' ').slice(1)} .`;
  }).join('\n') + '\n';
}

before(async () => {
  if (skip) return;
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-lmneed-'));
  const models = path.join(work, 'models');
  mkdirSync(models);
  symlinkSync(FIXTURE, path.join(models, 'tiny-gpt2'));
  writeModelIndex(models, [{ id: 'tiny-gpt2', name: 'tiny random GPT-2', default: true, files: FILES }]);
  const data = path.join(work, 'data');
  mkdirSync(data);
  writeFileSync(path.join(data, 'heldout.txt'), sentences(400, 1));
  writeFileSync(path.join(data, 'train.txt'), sentences(3000, 2));
  server = await startServer({ AL_MODELS_DIR: models, AL_DATA_DIR: data });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.child.kill();
  if (work) rmSync(work, { recursive: true, force: true });
});

const SETTINGS = { 'need-docs': '20', 'need-cdocs': '40', 'need-orders': 'first_to_last,random,gradient', 'need-window': '16', 'need-seqs': '12' };

// Runs the panel and waits for its runner to finish; returns the error line ('' when none).
async function runNeed(p) {
  const n = await p.evaluate(() => window.attnlab.panels['lm-need'].runs);
  await p.click('#need-run');
  await p.waitForFunction((k) => !window.attnlab.panels['lm-need'].job &&
    (window.attnlab.panels['lm-need'].runs > k || !document.getElementById('need-error').hidden), n, { timeout: 240000 });
  return p.evaluate(() => { const e = document.getElementById('need-error'); return e.hidden ? '' : e.textContent; });
}

// What the page sent and got: the texts, the replies, the constants it gave the layers op.
const lastRun = (p) => p.evaluate(() => {
  const r = window.attnlab.panels['lm-need'].last;
  return { requests: r.requests, papa: r.reply, layers: r.layers, streaming: r.streaming, roles: r.roles, layerConstants: r.layerConstants };
});

// The same four measures through the CLI on the fixture's folder and the page's texts.
const cliMeasures = (run, model = FIXTURE) => lmNeedCli(cli, run, model, work);

const bits = (runs) => runs.map((x) => x.summary.bits_per_token);

function assertSameAsCli(run, c) {
  assert.equal(run.papa.digest, c.papa.digest, 'PAPA on the corpus: the same digest as the CLI');
  assert.deepEqual(run.papa.configs.map((x) => x.label), c.papa.configs.map((x) => x.label));
  assert.deepEqual(run.papa.summary.map((x) => x.mean), c.papa.summary.map((x) => x.mean), 'bits per token of every configuration');
  assert.deepEqual(run.papa.summary.map((x) => x.ci95), c.papa.summary.map((x) => x.ci95));
  assert.deepEqual(run.papa.orders, c.papa.orders);
  assert.equal(run.papa.findings.text, c.papa.findings.text);
  assert.equal(run.layerConstants, 'average', 'the layers op made each layer constant with PAPA\'s average');
  assert.deepEqual(run.layers.order, c.layers.order);
  assert.deepEqual(bits(run.layers.dropped), bits(c.layers.dropped), 'blocks dropped');
  assert.deepEqual(bits(run.layers.alone), bits(c.layers.alone), 'each block dropped alone');
  assert.deepEqual(bits(run.layers.constant), bits(c.layers.constant), 'each layer constant');
  for (const k of ['full', 'window', 'window_sinks']) {
    assert.deepEqual(run.streaming.runs[k].bits_by_position, c.streaming.runs[k].bits_by_position, `streaming ${k}`);
  }
  assert.equal(run.roles.digest, c.roles.digest, 'head roles: the same digest as the CLI');
  assert.deepEqual(run.roles.repeat.previous_token.heads, c.roles.repeat.previous_token.heads);
}

test('the embedded decoder: the four measures equal the CLI\'s, drawn with their tables, and the link reproduces them', { skip }, async () => {
  const p = await openUrl(browser, server.url);
  await modelReady(p);
  assert.equal(await p.evaluate(() => document.getElementById('lm-need').hidden), false, 'shown for a causal model');
  assert.equal(await p.evaluate(() => document.querySelector('#page-nav a[data-section="lm-need"]').parentElement.hidden), false);
  await setControls(p, SETTINGS);
  assert.equal(await runNeed(p), '');
  const run = await lastRun(p);
  assert.equal(run.requests.papa.corpus.split('\n\n').length, 20, 'the built-in held-out split: 20 documents');
  assert.equal(run.requests.papa.constants_corpus.split('\n\n').length, 40);
  assert.equal(run.papa.score.direction, 'lower is better');
  assertSameAsCli(run, cliMeasures(run));

  const drawn = await p.evaluate(() => ({
    figures: [...document.querySelectorAll('#need-results figure[data-name]')].map((f) => f.dataset.name),
    verdict: document.getElementById('need-verdict-text').textContent,
    rows: document.querySelectorAll('#need-papa-table tbody tr').length,
    layerRows: document.querySelectorAll('#need-layers-table tbody tr').length,
    roles: document.getElementById('need-roles-table').textContent,
    orderRoles: document.querySelectorAll('#need-order-roles-table tbody tr').length,
    streaming: document.querySelectorAll('#need-streaming-table tbody tr').length,
    lines: window.attnlab.panels['lm-need'].charts.papa.data.datasets.filter((d) => !d.band).map((d) => d.label),
    layersLines: window.attnlab.panels['lm-need'].charts.layers.data.datasets.filter((d) => !d.band).map((d) => d.label),
  }));
  for (const f of ['need_papa', 'need_position', 'need_layers', 'need_streaming', 'need_role_repeat_induction', 'need_role_text_sink']) {
    assert.ok(drawn.figures.includes(f), `figure ${f}`);
  }
  assert.equal(drawn.verdict, run.papa.findings.text);
  assert.equal(drawn.rows, run.papa.configs.length);
  assert.equal(drawn.layerRows, 2);
  assert.equal(drawn.streaming, 3);
  assert.equal(drawn.orderRoles, 3, 'one row per order');
  assert.match(drawn.roles, /induction/);
  for (const o of ['first to last layer', 'random order', 'gradient-importance order']) assert.ok(drawn.lines.some((l) => l.includes(o)), `a line for ${o}`);
  assert.ok(drawn.layersLines.some((l) => /blocks dropped/.test(l)));

  // the JSON export: the page's provenance, the four requests (texts by name) and replies
  const [d] = await Promise.all([p.waitForEvent('download'), p.click('#need-export-json')]);
  const file = path.join(work, d.suggestedFilename());
  await d.saveAs(file);
  const exported = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(d.suggestedFilename(), 'attnlab_lm_need.json');
  assert.ok(exported.provenance.engine && exported.provenance.link);
  assert.equal(exported.digest, run.papa.digest);
  assert.deepEqual(Object.keys(exported.reply), ['papa', 'layers', 'streaming', 'head_roles']);
  assert.match(exported.request.papa.corpus, /^\(heldout\.txt/);

  // the link: a fresh page shows the stored numbers, recomputes and says reproduced
  const url = await p.evaluate(async () => { await window.attnlab.link?.flush?.(); return location.href; });
  assert.ok(await p.evaluate(() => window.attnlab.state.need_result !== null));
  const q = await openUrl(browser, url);
  await q.waitForSelector('#need-stored-table');
  await q.waitForFunction(() => /reproduced|not reproduced/.test(document.getElementById('need-verdict').textContent), null, { timeout: 240000 });
  assert.match(await q.textContent('#need-verdict'), /^reproduced: identical/);
  await q.context().close();

  // lambda, learned against the language-model loss, is one more line of the sweep
  await setControls(p, { 'need-orders': 'lambda,random', 'need-seqs': '8' });
  assert.equal(await runNeed(p), '');
  const ran = await p.evaluate(() => window.attnlab.panels['lm-need'].last.reply.configs.map((c) => c.order).filter(Boolean));
  assert.ok(ran.includes('lambda') && ran.includes('random'), ran.join(', '));

  // Cancel stops a run; the panel works on
  await setControls(p, { 'need-orders': 'first_to_last', 'need-docs': '200' });
  await p.click('#need-run');
  await p.waitForFunction(() => !document.getElementById('need-progress').hidden);
  await p.click('#need-cancel');
  await p.waitForFunction(() => !window.attnlab.panels['lm-need'].job, null, { timeout: 60000 });
  assert.equal(await p.textContent('#need-status'), 'Cancelled.');
  await p.context().close();
});

test('a GPT-2 opened from local files: the same numbers as the CLI', { skip }, async () => {
  const p = await openUrl(browser, server.url);
  await modelReady(p);
  const before = await p.evaluate(() => ({ model: window.attnlab.app.modelId, runs: window.attnlab.app.runCount }));
  await p.setInputFiles('#file-input', FILES.map((f) => path.join(FIXTURE, f)));
  await p.waitForFunction((id) => window.attnlab.app.modelId !== id && !window.attnlab.app.modelJob, before.model, { timeout: 60000 });
  await p.waitForFunction((n) => window.attnlab.app.runCount > n, before.runs, { timeout: 30000 });
  await waitIdle(p);
  await setControls(p, { ...SETTINGS, 'need-docs': '24' });
  assert.equal(await runNeed(p), '');
  const run = await lastRun(p);
  assertSameAsCli(run, cliMeasures(run));
  await p.context().close();
});

test('the embedded decoder on the built-in held-out split: the same numbers as the CLI', { skip: skipMini }, async () => {
  const models = path.join(work, 'mini-models');
  mkdirSync(models);
  symlinkSync(MINI_GPT, path.join(models, 'attnlab-mini-gpt'));
  writeModelIndex(models, [{ id: 'attnlab-mini-gpt', name: 'attnlab mini GPT', default: true, files: MINI_GPT_FILES }]);
  const own = await startServer({ AL_MODELS_DIR: models, AL_DATA_DIR: DATA });
  try {
    const p = await openUrl(browser, own.url);
    await modelReady(p);
    // ten documents and one order keep it short: the language-model head over 30,522 tokens is most of the time
    await setControls(p, { 'need-docs': '10', 'need-cdocs': '20', 'need-L': '128', 'need-constants': 'average', 'need-orders': 'random',
                           'need-fractions': '1,0.5,0', 'need-window': '32', 'need-seqs': '12' });
    assert.equal(await runNeed(p), '');
    const run = await lastRun(p);
    assert.match(run.requests.papa.corpus_name, /^heldout\.txt \(first 10 documents/);
    assertSameAsCli(run, cliMeasures(run, MINI_GPT));
    await p.context().close();
  } finally {
    own.child.kill();
  }
});
