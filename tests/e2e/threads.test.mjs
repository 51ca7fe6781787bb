// threads.test.mjs: the page's threads in headless Chromium (docs/threads.md). Served cross-origin
// isolated (scripts/serve.mjs's COOP/COEP), the worker runs the threaded core (attnlab_wasm_mt) with
// navigator.hardwareConcurrency threads (at most 8) and says how many; served without isolation
// (AL_NO_ISOLATION=1: no SharedArrayBuffer) it says once that it runs one thread. Either way an attention
// request on the default model gives the native CLI's numbers bit for bit. Served with the repository's own
// models/index.json, the page lists every embedded model and opens on the one it marks the default.
//   AL_WASM_DIR (default build/wasm), AL_BUILD_DIR (default build/native), AL_CHROMIUM
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { cli, embeddedModelOnly, launchChromium, newContext, newPage, root, skipReason, startServer, waitIdle, wasmDir } from './helpers.mjs';
import { parseSafetensors } from '../../wasm/safetensors.mjs';
import { defaultEmbedded, isEncoderWithWeights } from '../../web/models.js';

const skip = skipReason || (!existsSync(path.join(wasmDir, 'attnlab_wasm_mt.wasm')) ? `no threaded WASM build in ${wasmDir}`
  : !existsSync(cli) ? `no native CLI at ${cli}` : false);

const TEXT = 'The quick brown fox jumps over the lazy dog while the cat watches from the window. '.repeat(4);
const REQUEST = { text: TEXT, outputs: ['attentions', 'hidden_states', 'values'] };
const work = skip ? null : mkdtempSync(path.join(tmpdir(), 'attnlab-threads-browser-'));
after(() => { if (work) rmSync(work, { recursive: true, force: true }); });

const sha = (t) => createHash('sha256').update(Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)).digest('hex');

// The CLI's tensors for the request on an embedded model, as SHA-256 per name.
function nativeHashes(id = 'attnlab-mini-bert') {
  const req = path.join(work, 'req.json');
  const out = path.join(work, 'out.safetensors');
  writeFileSync(req, JSON.stringify({ op: 'attention', ...REQUEST, model_dir: path.join(root, 'models', id) }));
  execFileSync(cli, ['run', req, '--out', out, '--threads', '2'], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 << 20 });
  const { tensors } = parseSafetensors(new Uint8Array(readFileSync(out)));
  return Object.fromEntries(['attentions', 'hidden_states', 'values'].map((k) => [k, sha(tensors[k])]));
}

// env.AL_MODELS_DIR defaults to attnlab-mini-bert alone, the model nativeHashes() runs.
async function pageRun(env) {
  const server = await startServer({ AL_MODELS_DIR: embeddedModelOnly(work, 'attnlab-mini-bert'), ...env });
  const browser = await launchChromium();
  try {
    const page = await newPage(await newContext(browser));
    await page.goto(server.url);
    await waitIdle(page, 60000);
    return await page.evaluate(async (request) => {
      const a = window.attnlab;
      const { tensors } = await a.client.request('attention', { model: a.app.modelId, ...request }).promise;
      const hashes = {};
      for (const name of ['attentions', 'hidden_states', 'values']) {
        const d = tensors[name].data;
        const digest = await crypto.subtle.digest('SHA-256', new Uint8Array(d.buffer, d.byteOffset, d.byteLength));
        hashes[name] = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
      }
      const select = document.getElementById('embedded-select');
      return { status: document.getElementById('engine-status').textContent, isolated: window.crossOriginIsolated,
               kernels: (await a.client.ready).reply.kernels,
               listed: [...select.options].map((o) => o.value), shown: select.value,
               example: document.getElementById('papa-example-note')?.textContent ?? '',
               cores: navigator.hardwareConcurrency, hashes, errors: [] };
    }, REQUEST);
  } finally {
    await browser.close();
    server.child.kill();
  }
}

test('cross-origin isolated: the threaded core, as many threads as cores (at most 8), the CLI\'s numbers', { skip }, async () => {
  const r = await pageRun({});
  assert.equal(r.isolated, true);
  const threads = Math.min(8, r.cores);
  assert.match(r.status, new RegExp(`ready, ${threads} threads?$`));
  assert.equal(r.kernels, 'wasm-simd128-4x8');
  assert.deepEqual(r.hashes, nativeHashes());
  console.log(`page (isolated): "${r.status}", kernels ${r.kernels}`);
});

test('not isolated: one thread, said once, the same numbers', { skip }, async () => {
  const r = await pageRun({ AL_NO_ISOLATION: '1' });
  assert.equal(r.isolated, false);
  assert.match(r.status, /ready, 1 thread \(this page is not cross-origin isolated: no SharedArrayBuffer, so one thread/);
  assert.equal(r.kernels, 'wasm-simd128-4x8');
  assert.deepEqual(r.hashes, nativeHashes());
  console.log(`page (not isolated): "${r.status}"`);
});

test('the repository\'s models: every embedded model listed, the default loaded, the CLI\'s numbers', { skip }, async () => {
  const index = JSON.parse(readFileSync(path.join(root, 'models/index.json'), 'utf8'));
  const byDefault = defaultEmbedded(index);
  const r = await pageRun({ AL_MODELS_DIR: path.join(root, 'models') });
  assert.deepEqual(r.listed, index.map((m) => m.id));
  assert.equal(r.shown, byDefault.id);
  assert.deepEqual(r.hashes, nativeHashes(byDefault.path));
  // every embedded encoder has weights (one file or float16 shards), so the PAPA example compares them all, from
  // their stored records (web/examples/); a language model (marked causal) is the lm-need panel's
  const encoders = index.filter(isEncoderWithWeights).map((m) => m.id);
  assert.ok(encoders.length >= 2, encoders.join(', '));
  assert.match(r.example, new RegExp(`^Opens the stored results of agreement on ${encoders.join(' and ')} `), r.example);
  console.log(`page on the repository's models: ${r.listed.join(', ')}; opened ${r.shown}`);
});
