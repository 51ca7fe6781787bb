// families.test.mjs: DeBERTa-v3 and ModernBERT in the page (headless Chromium, the real WASM worker). The
// random-weight checkpoints of tests/golden/deberta_v3 and tests/golden/modernbert (the ones test_golden.c
// and test_modernbert.c compare natively) are given as local files, with a tokenizer written here whose
// pieces are the golden's token ids (tests/e2e/family_tokenizers.mjs), so the page's text is the golden's input:
//   - each loads from picked files (tokenizer.json without and with [CLS]/[SEP]; DeBERTa also spm.model, also
//     from the localhost Hub);
//     the model facts and the embedded-model list name the family;
//   - the explorer draws every head, and its attention equals the float64 reference's (golden.safetensors)
//     within 1e-5; effective attention is drawn;
//   - "explain one head" shows its steps for the family (DeBERTa's three score terms, ModernBERT's windows);
//   - a short PAPA run gives a result table (DeBERTa-v3 with orders random; ModernBERT with its λ ranking); a
//     DeBERTa-v3 discriminator (no MLM head) says there is no MLM score.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { parseSafetensors, serializeSafetensors } from '../../wasm/safetensors.mjs';
import { makeWideModel } from './make_test_model.mjs';
import { spmModel, textOf, unigramJson } from './family_tokenizers.mjs';
import { distinctColours, launchChromium, loadFromHub, newContext, newPage, root, runText, setControls, skipReason, startMirror, startServer, waitIdle, writeModelIndex } from './helpers.mjs';

const skip = skipReason || (!existsSync(path.join(root, 'build/data/tasks/pos.jsonl')) ? 'no built-in tasks (build/data/tasks)' : false);
const golden = (dir) => path.join(root, 'tests/golden', dir);

// A small PAPA request: every stage, few examples.
const SMALL = { 'papa-train': '32', 'papa-val': '16', 'papa-fractions': '1,0.5,0', 'papa-seeds': '1', 'papa-epochs': '1',
                'papa-rank-epochs': '1', 'papa-rank-n': '16', 'papa-orders': 'random' };

let work;
let server;
let mirror;
let mirrorBase;
let browser;
const mirrorLog = [];

// A folder of the golden checkpoint with the given tokenizer file(s); config and weights as the C tests read them.
function folder(name, from, tokenizer, { config = null, weights = null } = {}) {
  const dir = path.join(work, name);
  mkdirSync(dir, { recursive: true });
  if (config) writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config));
  else copyFileSync(path.join(golden(from), 'config.json'), path.join(dir, 'config.json'));
  if (weights) writeFileSync(path.join(dir, 'model.safetensors'), weights);
  else copyFileSync(path.join(golden(from), 'model.safetensors'), path.join(dir, 'model.safetensors'));
  for (const [file, bytes] of Object.entries(tokenizer)) writeFileSync(path.join(dir, file), bytes);
  return dir;
}

// The golden's input ids and float64 reference attention [NL, B, H, L, L].
function goldenOf(dir) {
  const { tensors } = parseSafetensors(new Uint8Array(readFileSync(path.join(golden(dir), 'golden.safetensors'))));
  const [B, L] = tensors.input_ids.shape;
  const ids = [];
  for (let b = 0; b < B; b++) {
    const row = [];
    for (let t = 0; t < L; t++) if (tensors.attention_mask.data[b * L + t]) row.push(tensors.input_ids.data[b * L + t]);
    ids.push(row);
  }
  return { ids, B, L, shape: tensors.attentions.shape, att: tensors.attentions.data };
}

let dirs = {};

before(async () => {
  if (skip) return;
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-families-'));
  const models = path.join(work, 'models');
  makeWideModel(path.join(models, 'test-bert'), { layers: 2, heads: 2, hidden: 16, intermediate: 32 });
  writeModelIndex(models, [{ id: 'test-bert', name: 'Test BERT 2x2', default: true }]);
  // the golden rows the tests type: DeBERTa's rows 1 and 2, ModernBERT's row 0
  const deberta = goldenOf('deberta_v3');
  const words = new Set([...deberta.ids[1], ...deberta.ids[2], ...goldenOf('modernbert').ids[0]]);
  const json = { 'tokenizer.json': unigramJson({ words }) };
  const spm = { 'spm.model': spmModel({ words }) };
  // DeBERTa-v3 as Microsoft ships it: a discriminator (DebertaV2Model weights, no MLM head) with spm.model
  const { tensors } = parseSafetensors(new Uint8Array(readFileSync(path.join(golden('deberta_v3'), 'model.safetensors'))));
  const encoder = Object.fromEntries(Object.entries(tensors).filter(([k]) => !k.startsWith('cls.')));
  const config = { ...JSON.parse(readFileSync(path.join(golden('deberta_v3'), 'config.json'), 'utf8')), architectures: ['DebertaV2Model'] };
  dirs = {
    deberta: folder('deberta', 'deberta_v3', json),
    debertaSpm: folder('deberta-spm', 'deberta_v3', spm),
    discriminator: folder('deberta-disc', 'deberta_v3', spm, { config, weights: serializeSafetensors(encoder) }),
    modernbert: folder('modernbert', 'modernbert', json),
    // ModernBERT's tokenizer.json adds [CLS] and [SEP], which PAPA's layout needs
    modernbertSpecials: folder('modernbert-specials', 'modernbert', { 'tokenizer.json': unigramJson({ specials: true, words }) }),
  };
  const hub = path.join(work, 'hub');
  folder('hub/test-org/deberta-v3-tiny', 'deberta_v3', spm);
  mirror = await startMirror(hub, mirrorLog);
  mirrorBase = `http://127.0.0.1:${mirror.address().port}`;
  server = await startServer({ AL_MODELS_DIR: models }); // build/data: the built-in tasks PAPA reads
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.child.kill();
  mirror?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

async function openPage() {
  const p = await newPage(await newContext(browser));
  await p.goto(server.url);
  await waitIdle(p, 60000);
  return p;
}

// Picks the files of a folder in the Local files input and waits until the model is loaded (a new model id, or
// an error) and its first run drawn.
async function pickFolder(p, dir, files) {
  const before = await p.evaluate(() => ({ model: window.attnlab.app.modelId, runs: window.attnlab.app.runCount }));
  await p.setInputFiles('#file-input', files.map((f) => path.join(dir, f)));
  await p.waitForFunction((id) => (window.attnlab.app.modelId !== id || !document.getElementById('model-error').hidden) &&
    !window.attnlab.app.modelJob, before.model, { timeout: 60000 });
  const error = await p.evaluate(() => { const e = document.getElementById('model-error'); return e.hidden ? '' : e.textContent; });
  assert.equal(error, '', 'the model loads without an error');
  await p.waitForFunction((n) => window.attnlab.app.runCount > n, before.runs, { timeout: 30000 });
  await waitIdle(p);
}

// The page's attention for its last run against the golden's batch row b (real tokens only), max |diff|.
async function attentionDiff(p, g, b) {
  const run = await p.evaluate(() => {
    const r = window.attnlab.app.run;
    return { n: r.n, NL: r.NL, H: r.H, att: Array.from(r.att), tokens: r.tokens };
  });
  const n = g.ids[b].length;
  const [NL, B, H, L] = g.shape;
  assert.equal(run.n, n, `the page read ${run.n} tokens (${run.tokens.join(' ')}), the golden row ${n}`);
  assert.equal(run.NL, NL);
  assert.equal(run.H, H);
  let max = 0;
  for (let l = 0; l < NL; l++) {
    for (let h = 0; h < H; h++) {
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < n; j++) {
          const page = run.att[((l * H + h) * n + i) * n + j];
          const want = g.att[((((l * B + b) * H + h) * L + i) * L) + j];
          max = Math.max(max, Math.abs(page - want));
        }
      }
    }
  }
  return max;
}

// Runs the PAPA panel once; returns its reply or its error message.
async function runPapa(p) {
  const before = await p.evaluate(() => ({ runs: window.attnlab.panels.papa.runs }));
  await p.click('#papa-run');
  await p.waitForFunction((n) => (window.attnlab.panels.papa.runs > n || !document.getElementById('papa-error').hidden) &&
    !window.attnlab.panels.papa.job, before.runs, { timeout: 240000 });
  return p.evaluate(() => {
    const e = document.getElementById('papa-error');
    return { error: e.hidden ? null : e.textContent, reply: window.attnlab.panels.papa.last?.reply ?? null };
  });
}

// "Explain one head" for the selected head: its text once it has answered (steps or an error).
async function explainText(p) {
  const before = await p.evaluate(() => window.attnlab.panels.explain?.count ?? 0);
  await p.evaluate(() => document.getElementById('explain').scrollIntoView());
  await p.waitForFunction((n) => !document.getElementById('explain-error').hidden ||
    (window.attnlab.panels.explain?.count ?? 0) > n, before, { timeout: 30000 });
  return p.evaluate(() => ({ error: document.getElementById('explain-error').hidden ? null : document.getElementById('explain-error').textContent,
                             body: document.getElementById('explain-body').textContent }));
}

// "Explain one head" answers for the family with its steps (DeBERTa's three score terms, ModernBERT's rotated,
// windowed scores: docs/head_steps.md), never an error.
async function explainChecked(p, family) {
  const x = await explainText(p);
  assert.equal(x.error, null, `explain (${family}): ${JSON.stringify(x)}`);
  assert.ok(x.body.length > 50, `explain shows its steps: ${x.body.slice(0, 80)}`);
  if (family === 'deberta-v2') { // each of the three terms has its column, and their sum
    for (const t of ['content\u2192content', 'content\u2192position', 'position\u2192content', 'sum'])
      assert.ok(x.body.includes(t), `explain shows "${t}"`);
  }
}

test('DeBERTa-v3 from local files (tokenizer.json): the golden\'s attention, effective attention, explain one head, PAPA random', { skip }, async () => {
  const g = goldenOf('deberta_v3');
  const p = await openPage();
  await pickFolder(p, dirs.deberta, ['config.json', 'model.safetensors', 'tokenizer.json']);
  assert.match(await p.textContent('#model-info'), /deberta-v2 \(2 layers × 4 heads, hidden 32/);
  assert.match(await p.textContent('#model-info'), /unigram, 100 tokens/i);
  assert.match(await p.$eval('#embedded-select', (s) => s.selectedOptions[0].textContent), /deberta-v2/);
  // row 1 of the golden batch (17 real tokens; the reference's padded row gives its real tokens the numbers
  // of the unpadded text)
  await runText(p, textOf(g.ids[1]));
  const d = await attentionDiff(p, g, 1);
  assert.ok(d <= 1e-5, `attention within 1e-5 of the float64 reference (max |diff| ${d})`);
  assert.ok((await distinctColours(p, '#heatmap')) > 5, 'the heatmap is drawn');
  console.log(`deberta-v3 in the page: attention max |diff| ${d.toExponential(2)} against the float64 reference`);

  // the rest with spm.model, whose [CLS] and [SEP] PAPA's layout needs
  await pickFolder(p, dirs.debertaSpm, ['config.json', 'model.safetensors', 'spm.model']);
  await runText(p, textOf(g.ids[1]));
  assert.equal(await p.evaluate(() => window.attnlab.app.run.n), 19);

  // effective attention
  const prev = await p.evaluate(() => window.attnlab.app.effCount);
  await p.selectOption('#view-select', 'effective');
  await p.waitForFunction((n) => window.attnlab.app.effCount > n && !window.attnlab.app.effJob, prev, { timeout: 30000 });
  await waitIdle(p);
  const eff = await p.evaluate(() => Array.from(window.attnlab.current.matrix));
  assert.equal(eff.length, 19 * 19);
  assert.ok(eff.every(Number.isFinite) && eff.some((v) => v !== 0), 'effective attention has values');
  assert.ok((await distinctColours(p, '#heatmap')) > 5, 'the effective heatmap is drawn');
  await p.selectOption('#view-select', 'standard');
  await waitIdle(p);

  await explainChecked(p, 'deberta-v2');

  // PAPA with orders random: a result table, an MLM score (this checkpoint has its MLM head); L within its 32 positions
  await setControls(p, { ...SMALL, 'papa-L': '32', 'papa-mlm': true });
  const r = await runPapa(p);
  assert.equal(r.error, null, r.error);
  assert.equal(r.reply.shape.n_layers, 2);
  assert.ok(r.reply.configs.length >= 3);
  assert.ok(await p.$$eval('#papa-table tbody tr', (rows) => rows.length) >= 3);
  assert.ok(r.reply.configs.some((c) => Number.isFinite(c.mlm_score)), `an MLM score: ${JSON.stringify(r.reply.configs[0])}`);
  assert.equal(await p.$('#papa-no-mlm'), null);
  assert.deepEqual(p.errors, []);
  await p.context().close();
});

test('DeBERTa-v3 with spm.model, from local files and from the (localhost) Hub', { skip }, async () => {
  const g = goldenOf('deberta_v3');
  const p = await openPage();
  await pickFolder(p, dirs.debertaSpm, ['config.json', 'model.safetensors', 'spm.model']);
  assert.match(await p.textContent('#model-info'), /unigram, 100 tokens/i);
  // DebertaV2Tokenizer's rule: [CLS] text [SEP]
  await runText(p, textOf(g.ids[2]));
  const tokens = await p.evaluate(() => window.attnlab.app.run.tokens);
  assert.deepEqual(tokens, ['[CLS]', ...g.ids[2].map((i) => `\u2581t${i}`), '[SEP]']);
  assert.ok((await distinctColours(p, '#heatmap')) > 5, 'the heatmap is drawn');

  // the Hub: spm.model is among the files downloaded
  await loadFromHub(p, mirrorBase, 'test-org/deberta-v3-tiny');
  assert.equal(await p.isHidden('#model-error'), true, await p.textContent('#model-error'));
  assert.ok(mirrorLog.includes('/test-org/deberta-v3-tiny/resolve/main/spm.model'));
  assert.match(await p.textContent('#model-info'), /deberta-v2 .*unigram, 100 tokens/is);
  assert.deepEqual(p.errors, []);
  await p.context().close();
});

test('a DeBERTa-v3 discriminator (no MLM head): the PAPA panel says there is no MLM score', { skip }, async () => {
  const p = await openPage();
  await pickFolder(p, dirs.discriminator, ['config.json', 'model.safetensors', 'spm.model']);
  await setControls(p, { ...SMALL, 'papa-fractions': '1,0', 'papa-mlm': true, 'papa-L': '32' });
  const r = await runPapa(p);
  assert.equal(r.error, null, r.error);
  assert.match(await p.textContent('#papa-no-mlm'), /no MLM score for this model/);
  assert.ok(r.reply.configs.every((c) => c.mlm_score === null || c.mlm_score === undefined), 'no MLM score is invented');
  assert.deepEqual(p.errors, []);
  await p.context().close();
});

test('ModernBERT from local files: the golden\'s attention (window 4 at 12 tokens), effective, explain one head, the λ ranking runs', { skip }, async () => {
  const g = goldenOf('modernbert');
  const p = await openPage();
  await pickFolder(p, dirs.modernbert, ['config.json', 'model.safetensors', 'tokenizer.json']);
  assert.match(await p.textContent('#model-info'), /modernbert \(4 layers × 4 heads, hidden 32/);
  await runText(p, textOf(g.ids[0]));
  const d = await attentionDiff(p, g, 0);
  assert.ok(d <= 1e-5, `attention within 1e-5 of the float64 reference (max |diff| ${d})`);
  assert.ok((await distinctColours(p, '#heatmap')) > 5, 'the heatmap is drawn');
  console.log(`modernbert in the page: attention max |diff| ${d.toExponential(2)} against the float64 reference`);

  // the rest with [CLS] and [SEP], which PAPA's layout needs
  await pickFolder(p, dirs.modernbertSpecials, ['config.json', 'model.safetensors', 'tokenizer.json']);
  await runText(p, textOf(g.ids[0]));
  assert.equal(await p.evaluate(() => window.attnlab.app.run.n), 14);
  const prev = await p.evaluate(() => window.attnlab.app.effCount);
  await p.selectOption('#view-select', 'effective');
  await p.waitForFunction((n) => window.attnlab.app.effCount > n && !window.attnlab.app.effJob, prev, { timeout: 30000 });
  await waitIdle(p);
  const eff = await p.evaluate(() => Array.from(window.attnlab.current.matrix));
  assert.equal(eff.length, 14 * 14);
  assert.ok(eff.every(Number.isFinite) && eff.some((v) => v !== 0));
  await p.selectOption('#view-select', 'standard');
  await waitIdle(p);

  await explainChecked(p, 'modernbert');

  // ModernBERT's λ ranking runs through the training path (docs/families.md): the λ order gives a table and its λ
  await setControls(p, { ...SMALL, 'papa-orders': 'lambda' });
  const r = await runPapa(p);
  assert.ok(r.reply, `a reply: ${r.error}`);
  assert.equal(r.reply.lambdas.length, 4);
  assert.ok(r.reply.lambdas.flat().every((v) => v > 0 && v < 1), 'every λ in (0, 1)');
  assert.ok(r.reply.lambdas.flat().some((v) => v !== 0.5), 'the ranking moved λ');
  assert.equal(r.error, null, r.error);
  assert.equal(r.reply.shape.n_layers, 4);
  assert.ok(await p.$$eval('#papa-table tbody tr', (rows) => rows.length) >= 3);
  assert.deepEqual(p.errors, []);
  await p.context().close();
});
