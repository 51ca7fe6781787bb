// decoders.test.mjs: a causal language model in the page (tests/fixtures/decoder_tiny_gpt2: a random GPT-2 with a
// real byte-level BPE, as the page's embedded model): the explorer draws the cells a query cannot see as such, the
// language-model panel's surprisal and top-k equal the CLI's, generation streams its tokens, cancels, opens a
// token's attention and alternatives and is reproduced by its link, and bad input (an unsupported family, a
// prompt longer than the positions, a generation over the limit) is the engine's error naming the field while
// the page keeps working; the same model sharded on a localhost Hub look-alike opens by its name and reads the same;
// a Llama with Llama 2's tokenizer.model (from ../shared/decoders, as tests/c/test_decoder_tokenizers.c reads it;
// skipped without it) opens from the Hub and tokenizes as the CLI does, <s> added.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseSafetensors, serializeSafetensors } from '../../wasm/safetensors.mjs';
import { cli, launchChromium, linkUrl, loadFromHub, modelReady, openUrl, root, runPanel, skipReason, startMirror, startServer, writeModelIndex } from './helpers.mjs';

const skip = skipReason || (!existsSync(cli) ? `no CLI at ${cli}` : false);
const FIXTURE = path.join(root, 'tests/fixtures/decoder_tiny_gpt2');
const FILES = ['config.json', 'model.safetensors', 'vocab.json', 'merges.txt'];
let work;
let server;
let browser;
let mirror;
let hubDir;
let llamaDir = null;
const SPM = path.join(process.env.AL_DECODERS || path.join(root, '../shared/decoders'), 'llama-spm/tokenizer.model');

// A one-layer Llama with Llama 2's 32,000-piece vocabulary (grouped-query: 2 query heads over 1 key/value head),
// random weights from a seeded generator, and the real tokenizer.model.
function tinyLlama(dir) {
  mkdirSync(dir, { recursive: true });
  const V = 32000, D = 16, H = 2, KV = 1, hd = 8, I = 32;
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify({
    architectures: ['LlamaForCausalLM'], model_type: 'llama', vocab_size: V, hidden_size: D, intermediate_size: I,
    num_hidden_layers: 1, num_attention_heads: H, num_key_value_heads: KV, head_dim: hd, hidden_act: 'silu',
    max_position_embeddings: 64, rms_norm_eps: 1e-5, rope_theta: 10000, rope_scaling: null, attention_bias: false,
    mlp_bias: false, tie_word_embeddings: true, bos_token_id: 1, eos_token_id: 2 }));
  let x = 12345;
  const rand = (n) => Float32Array.from({ length: n }, () => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return ((x >>> 8) / 16777216 - 0.5) * 0.2;
  });
  const ones = (n) => new Float32Array(n).fill(1);
  const t = (shape, data) => ({ dtype: 'F32', shape, data });
  const L0 = 'model.layers.0.';
  writeFileSync(path.join(dir, 'model.safetensors'), serializeSafetensors({
    'model.embed_tokens.weight': t([V, D], rand(V * D)), 'model.norm.weight': t([D], ones(D)),
    [`${L0}input_layernorm.weight`]: t([D], ones(D)), [`${L0}post_attention_layernorm.weight`]: t([D], ones(D)),
    [`${L0}self_attn.q_proj.weight`]: t([H * hd, D], rand(H * hd * D)), [`${L0}self_attn.k_proj.weight`]: t([KV * hd, D], rand(KV * hd * D)),
    [`${L0}self_attn.v_proj.weight`]: t([KV * hd, D], rand(KV * hd * D)), [`${L0}self_attn.o_proj.weight`]: t([D, H * hd], rand(D * H * hd)),
    [`${L0}mlp.gate_proj.weight`]: t([I, D], rand(I * D)), [`${L0}mlp.up_proj.weight`]: t([I, D], rand(I * D)),
    [`${L0}mlp.down_proj.weight`]: t([D, I], rand(D * I)),
  }));
  copyFileSync(SPM, path.join(dir, 'tokenizer.model'));
  return dir;
}
const mirrorLog = [];

// The fixture as the Hub ships larger models: its weights in two safetensors shards with their index.
function shardedCopy(dir) {
  mkdirSync(dir, { recursive: true });
  for (const f of ['config.json', 'vocab.json', 'merges.txt']) copyFileSync(path.join(FIXTURE, f), path.join(dir, f));
  const { tensors } = parseSafetensors(new Uint8Array(readFileSync(path.join(FIXTURE, 'model.safetensors'))));
  const names = Object.keys(tensors).sort();
  const half = Math.ceil(names.length / 2);
  const shards = [names.slice(0, half), names.slice(half)];
  const weightMap = {};
  shards.forEach((list, i) => {
    const file = `model-0000${i + 1}-of-00002.safetensors`;
    writeFileSync(path.join(dir, file), serializeSafetensors(Object.fromEntries(list.map((n) => [n, tensors[n]]))));
    for (const n of list) weightMap[n] = file;
  });
  writeFileSync(path.join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map: weightMap }));
  return dir;
}

before(async () => {
  if (skip) return;
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-decoders-'));
  const models = path.join(work, 'models');
  mkdirSync(models);
  symlinkSync(FIXTURE, path.join(models, 'tiny-gpt2'));
  writeModelIndex(models, [{ id: 'tiny-gpt2', name: 'tiny random GPT-2', default: true, files: FILES }]);
  const mistral = path.join(work, 'mistral');
  mkdirSync(mistral);
  writeFileSync(path.join(mistral, 'config.json'), JSON.stringify({ model_type: 'mistral', architectures: ['MistralForCausalLM'] }));
  server = await startServer({ AL_MODELS_DIR: models });
  hubDir = shardedCopy(path.join(work, 'hub', 'test-org', 'tiny-gpt2-sharded'));
  if (existsSync(SPM)) llamaDir = tinyLlama(path.join(work, 'hub', 'test-org', 'tiny-llama-spm'));
  mirror = await startMirror(path.join(work, 'hub'), mirrorLog);
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.child.kill();
  mirror?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

const cliJson = (cmd, text, fields) => JSON.parse(execFileSync(cli, [cmd, FIXTURE, text, ...Object.entries(fields)
  .flatMap(([k, v]) => [`--${k}`, String(v)]), '--json'], { encoding: 'utf8' }));

const close = (a, b, tol = 1e-4) => Math.abs(a - b) <= tol * Math.max(1, Math.abs(b));

async function openPage(url = server.url) {
  const p = await openUrl(browser, url);
  await modelReady(p);
  return p;
}


// The language-model panel reads text; returns its sequence (the panel's error line must stay empty).
async function readText(p, text) {
  await p.fill('#lm-text', text);
  await p.dispatchEvent('#lm-text', 'change');
  assert.equal(await runPanel(p, 'lm', 'lm-panel'), '');
  return p.evaluate(() => window.attnlab.panels['lm-panel'].last.sequences[0]);
}

test('the explorer draws a causal head\'s later keys as "cannot see", not as 0', { skip }, async () => {
  const p = await openPage();
  const run = await p.evaluate(() => ({ causal: window.attnlab.app.run.causal, n: window.attnlab.app.run.n }));
  assert.equal(run.causal, true);
  const probe = await p.evaluate(() => {
    const c = document.getElementById('heatmap');
    const { left, top, cell, dpr } = c.dataset;
    const px = (q, k) => Array.from(c.getContext('2d').getImageData(Math.round((Number(left) + (k + 0.5) * Number(cell)) * Number(dpr)),
      Math.round((Number(top) + (q + 0.5) * Number(cell)) * Number(dpr)), 1, 1).data.slice(0, 3));
    const ex = window.attnlab.explorer;
    return { above: px(0, 1), below: px(1, 0), text: ex.cellText(0, 1, ' | '), legend: document.getElementById('legend').getAttribute('aria-label'),
             caption: ex.els.caption?.textContent ?? '', thumb: document.querySelector('.thumb').title };
  });
  assert.deepEqual(probe.above, [200, 200, 200], 'a later key is grey');
  assert.notDeepEqual(probe.below, [200, 200, 200], 'an earlier key has its weight\'s colour');
  assert.match(probe.text, /cannot see/);
  assert.match(probe.legend, /grey: cannot see/);
  assert.match(probe.caption, /cannot see later tokens/);
  assert.deepEqual(p.errors, []);
  await p.close();
});

test('a decoder\'s page lists its language-model, generation and attention-needed sections; #generate opens there', { skip }, async () => {
  const p = await openPage(`${server.url}#generate`);
  const entries = await p.$$eval('#page-nav li:not([hidden]) a', (as) => as.map((a) => a.dataset.section));
  assert.deepEqual(entries, ['model', 'explorer', 'explain', 'analyses', 'lm', 'generate', 'lm-need', 'papa', 'importance']);
  await p.waitForTimeout(300);
  const at = await p.evaluate(() => ({ top: document.getElementById('generate-panel').getBoundingClientRect().top,
                                       bar: document.getElementById('page-nav').getBoundingClientRect().bottom, y: scrollY }));
  assert.ok(at.y > 0 && at.top >= at.bar - 1 && at.top < 150, `the generation panel starts at ${at.top} px (scrolled ${at.y})`);
  assert.deepEqual(p.errors, []);
  await p.close();
});

test('the language-model panel: surprisal, top-k and perplexity equal the CLI\'s; tokens read as text', { skip }, async () => {
  const p = await openPage();
  const text = 'Hello world, the cat';
  const page = await readText(p, text);
  const ref = cliJson('lm', text, { top_k: 5 }).sequences[0];
  assert.deepEqual(page.ids, ref.ids);
  page.surprisal_bits.forEach((b, i) => assert.ok(b === null ? ref.surprisal_bits[i] === null : close(b, ref.surprisal_bits[i]), `surprisal ${i}`));
  assert.deepEqual(page.top.map((t) => t.map((c) => c.id)), ref.top.map((t) => t.map((c) => c.id)));
  assert.ok(close(page.summary.perplexity, ref.summary.perplexity));
  const shown = await p.evaluate(() => ({
    tokens: [...document.querySelectorAll('#lm-tokens .lm-tok')].map((s) => s.textContent),
    summary: document.getElementById('lm-summary').textContent, added: document.getElementById('lm-added').textContent }));
  assert.deepEqual(shown.tokens.slice(0, 3), ['Hello', ' world', ','], 'Ġ reads as a space');
  assert.match(shown.summary, /^Perplexity \d/);
  assert.match(shown.added, /added no special tokens/);
  await p.hover('#lm-tokens .lm-tok[data-i="1"]');
  const detail = await p.textContent('#lm-detail');
  assert.match(detail, /surprisal/);
  assert.equal(await p.$$eval('#lm-detail .lm-choices tr', (r) => r.length), 5, 'the top 5 next tokens');
  assert.deepEqual(p.errors, []);
  await p.close();
});

test('generation streams its tokens, equals the CLI for the same seed, opens a token\'s attention; its link reproduces it', { skip }, async () => {
  const p = await openPage();
  await p.fill('#gen-prompt', 'Hello world');
  for (const [id, v] of [['gen-max', '8'], ['gen-temperature', '0.9'], ['gen-topk', '50'], ['gen-topp', '0.95'], ['gen-seed', '7']]) {
    await p.fill(`#${id}`, v);
    await p.dispatchEvent(`#${id}`, 'change');
  }
  await p.dispatchEvent('#gen-prompt', 'change');
  assert.equal(await runPanel(p, 'gen', 'generate-panel'), '');
  const got = await p.evaluate(() => {
    const api = window.attnlab.panels['generate-panel'];
    return { ids: api.last.reply.generated.ids, streamed: api.streamed, status: document.getElementById('gen-status').textContent };
  });
  const ref = cliJson('generate', 'Hello world', { max_new_tokens: 8, temperature: 0.9, top_k: 50, top_p: 0.95, seed: 7 });
  assert.deepEqual(got.ids, ref.generated.ids, 'the same seed gives the same tokens in the page and the CLI');
  assert.deepEqual(got.streamed, ref.generated.ids, 'every token streamed in through progress as it came');
  await p.click('#gen-tokens .lm-tok[data-i="2"]');
  const detail = await p.textContent('#gen-detail');
  assert.match(detail, /The attention that predicted it/);
  assert.equal(await p.$$eval('#gen-detail .lm-choices tr', (r) => r.length), 5, 'five alternatives');
  assert.ok(await p.$('#gen-attention'), 'the heads\' attention over the earlier tokens is drawn');
  // the link reproduces it: a fresh page opens it and generates the same tokens
  const url = await linkUrl(p);
  const q = await openPage(url);
  await q.waitForFunction(() => window.attnlab.panels['generate-panel'].runs > 0 && !window.attnlab.panels['generate-panel'].frame.runner.current,
                          null, { timeout: 60000 });
  assert.deepEqual(await q.evaluate(() => window.attnlab.panels['generate-panel'].last.reply.generated.ids), ref.generated.ids);
  assert.deepEqual([...p.errors, ...q.errors], []);
  await p.close();
  await q.close();
});

test('generation cancels; bad input is the engine\'s error naming the field and the page keeps working', { skip }, async () => {
  const p = await openPage();
  const outcome = await p.evaluate(async () => {
    const api = window.attnlab.panels['generate-panel'];
    const pending = api.run();
    api.frame.runner.cancel();
    return pending;
  });
  assert.deepEqual(outcome, { cancelled: true });
  assert.equal(await p.textContent('#gen-status'), 'Cancelled.');

  await p.fill('#gen-max', '100');
  await p.dispatchEvent('#gen-max', 'change');
  assert.match(await runPanel(p, 'gen', 'generate-panel'), /field 'max_new_tokens'.*64 positions/);
  await p.fill('#gen-max', '5000');
  await p.dispatchEvent('#gen-max', 'change');
  assert.match(await runPanel(p, 'gen', 'generate-panel'), /field 'max_new_tokens' is 5000, outside \[1, 4096\]/);
  await p.fill('#gen-max', '4');
  await p.dispatchEvent('#gen-max', 'change');
  await p.fill('#gen-prompt', 'hello '.repeat(80));
  await p.dispatchEvent('#gen-prompt', 'change');
  assert.match(await runPanel(p, 'gen', 'generate-panel'), /field 'text'.*at most 64/);
  await p.fill('#gen-prompt', 'Hello');
  await p.dispatchEvent('#gen-prompt', 'change');
  assert.equal(await runPanel(p, 'gen', 'generate-panel'), '', 'a good request after the bad ones runs');
  assert.equal(await p.evaluate(() => window.attnlab.panels['generate-panel'].last.reply.steps.length), 4);

  // a Mistral config from local files: refused by name before any weights are read; the GPT-2 stays loaded
  await p.setInputFiles('#file-input', [path.join(work, 'mistral/config.json')]);
  await p.waitForFunction(() => !document.getElementById('model-error').hidden, null, { timeout: 30000 });
  assert.match(await p.textContent('#model-error'), /not a model family attnlab runs \(model_type "mistral"/);
  assert.equal(await p.evaluate(() => window.attnlab.app.modelId !== null), true);
  assert.deepEqual(p.errors, []);
  await p.close();
});

test('from the Hub: a sharded GPT-2 opens by its name, reads as a causal model and its language-model panel equals the CLI on the same folder', { skip }, async () => {
  const p = await openPage();
  await loadFromHub(p, `http://127.0.0.1:${mirror.address().port}`, 'test-org/tiny-gpt2-sharded');
  assert.equal(await p.isHidden('#model-error'), true, await p.textContent('#model-error'));
  for (const f of ['config.json', 'vocab.json', 'merges.txt', 'model.safetensors.index.json', 'model-00001-of-00002.safetensors',
    'model-00002-of-00002.safetensors']) assert.ok(mirrorLog.includes(`/test-org/tiny-gpt2-sharded/resolve/main/${f}`), f);
  assert.equal(await p.evaluate(() => window.attnlab.app.run?.causal ?? null), true);
  assert.equal(await p.isVisible('#lm-panel'), true);
  const text = 'The cat sat on the mat';
  const page = await readText(p, text);
  const ref = JSON.parse(execFileSync(cli, ['lm', hubDir, text, '--top_k', '5', '--json'], { encoding: 'utf8' })).sequences[0];
  assert.deepEqual(page.ids, ref.ids);
  page.surprisal_bits.forEach((b, i) => assert.ok(b === null ? ref.surprisal_bits[i] === null : close(b, ref.surprisal_bits[i]), `surprisal ${i}`));
  assert.ok(close(page.summary.perplexity, ref.summary.perplexity));
  // the shards hold the fixture's weights: the single-file model reads the same
  assert.equal(ref.summary.perplexity, cliJson('lm', text, { top_k: 5 }).sequences[0].summary.perplexity);
  assert.deepEqual(p.errors, []);
  await p.close();
});

test('from the Hub: a Llama with its SentencePiece tokenizer.model tokenizes as the CLI does, <s> added', { skip: skip || (!existsSync(SPM) && `no ${SPM}`) }, async () => {
  const p = await openPage();
  await loadFromHub(p, `http://127.0.0.1:${mirror.address().port}`, 'test-org/tiny-llama-spm');
  assert.equal(await p.isHidden('#model-error'), true, await p.textContent('#model-error'));
  assert.ok(mirrorLog.includes('/test-org/tiny-llama-spm/resolve/main/tokenizer.model'));
  const text = 'Hello world, the caf\u00e9 is open\u2014\u00bfno?';
  const page = await readText(p, text);
  const ref = JSON.parse(execFileSync(cli, ['lm', llamaDir, text, '--top_k', '5', '--json'], { encoding: 'utf8' })).sequences[0];
  assert.deepEqual(page.ids, ref.ids);
  assert.equal(page.ids[0], 1, 'Llama\'s tokenizer adds <s> (id 1)');
  assert.ok(close(page.summary.perplexity, ref.summary.perplexity));
  assert.match(await p.textContent('#lm-added'), /<s>/);
  assert.deepEqual(p.errors, []);
  await p.close();
});
