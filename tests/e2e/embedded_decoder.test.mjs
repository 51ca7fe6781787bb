// embedded_decoder.test.mjs: the decoder of our own (models/attnlab-mini-gpt, a GPT-2 pretrained by attnlab,
// float16 weights, a WordPiece tokenizer.json) as the page's embedded model: it loads from a models/index.json, the
// explorer draws causal heads, the language-model panel's perplexity and greedy generation equal the CLI's on the
// same folder, and the page reports no error.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { cli, launchChromium, modelReady, openUrl, root, runPanel, skipReason, startServer, writeModelIndex } from './helpers.mjs';

const MODEL = path.join(root, 'models/attnlab-mini-gpt');
const skip = skipReason || (!existsSync(cli) ? `no CLI at ${cli}` : false) ||
  (!existsSync(path.join(MODEL, 'model.safetensors')) ? 'no attnlab-mini-gpt weights' : false);
let work;
let server;
let browser;

before(async () => {
  if (skip) return;
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-mini-gpt-'));
  const models = path.join(work, 'models');
  mkdirSync(models);
  symlinkSync(MODEL, path.join(models, 'attnlab-mini-gpt'));
  writeModelIndex(models, [{ id: 'attnlab-mini-gpt', name: 'attnlab mini GPT', default: true,
                             files: ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'] }]);
  server = await startServer({ AL_MODELS_DIR: models });
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  server?.child.kill();
  if (work) rmSync(work, { recursive: true, force: true });
});

const cliJson = (cmd, text, fields) => JSON.parse(execFileSync(cli, [cmd, MODEL, text, ...Object.entries(fields)
  .flatMap(([k, v]) => [`--${k}`, String(v)]), '--json'], { encoding: 'utf8' }));
const close = (a, b, tol = 1e-4) => Math.abs(a - b) <= tol * Math.max(1, Math.abs(b));


test('the embedded decoder loads, reads text and generates as the CLI does', { skip }, async () => {
  const p = await openUrl(browser, server.url);
  await modelReady(p);
  const run = await p.evaluate(() => ({ causal: window.attnlab.app.run.causal, id: window.attnlab.app.modelId }));
  assert.equal(run.causal, true, 'a causal model');
  const text = 'the committee said that the city would pay for the new school .';
  await p.fill('#lm-text', text);
  await p.dispatchEvent('#lm-text', 'change');
  assert.equal(await runPanel(p, 'lm', 'lm-panel', 120000), '');
  const page = await p.evaluate(() => window.attnlab.panels['lm-panel'].last.sequences[0]);
  const ref = cliJson('lm', text, { top_k: 5 }).sequences[0];
  assert.deepEqual(page.ids, ref.ids, 'the tokenizer.json ids');
  assert.ok(close(page.summary.perplexity, ref.summary.perplexity), `${page.summary.perplexity} vs ${ref.summary.perplexity}`);
  assert.ok(ref.summary.perplexity < 2000, `a trained model reads English (perplexity ${ref.summary.perplexity})`);
  await p.fill('#gen-prompt', 'the man said that');
  for (const [id, v] of [['gen-max', '8'], ['gen-temperature', '0']]) {
    await p.fill(`#${id}`, v);
    await p.dispatchEvent(`#${id}`, 'change');
  }
  await p.dispatchEvent('#gen-prompt', 'change');
  assert.equal(await runPanel(p, 'gen', 'generate-panel', 120000), '');
  const got = await p.evaluate(() => window.attnlab.panels['generate-panel'].last.reply.generated.ids);
  const want = cliJson('generate', 'the man said that', { max_new_tokens: 8, temperature: 0 }).generated.ids;
  assert.deepEqual(got, want, 'greedy generation: the page\'s tokens are the CLI\'s');
  assert.deepEqual(p.errors, []);
  await p.close();
});
