// first_view.test.mjs: the default model's stored first view (models/first-view.json, docs/first-view.md) is what
// the engine computes now: the WASM build in node (AL_WASM_DIR, default build/wasm) runs the page's default
// sentence on the default model again, and every field and every bit of the attentions must match; the page's
// reader (web/first_view.js) takes the file and refuses damaged ones, naming the fault.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

import { FIRST_VIEW_FILE, defaultModel, defaultText, firstView } from '../../scripts/first_view.mjs';
import { loadNode } from '../../wasm/attnlab_node.mjs';
import { readFirstView, sameBits } from '../../web/first_view.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const wasmDir = path.resolve(root, process.env.AL_WASM_DIR ?? 'build/wasm');
const models = path.join(root, 'models');
const storedPath = path.join(models, FIRST_VIEW_FILE);
const skip = !existsSync(path.join(wasmDir, 'attnlab_wasm.js')) ? `no WASM build in ${wasmDir}` : false;

test('the stored first view is the default model\'s attention on the page\'s default sentence, bit for bit', { skip }, async () => {
  const stored = JSON.parse(readFileSync(storedPath, 'utf8'));
  const { id, dir } = defaultModel(models);
  assert.equal(stored.model, id, 'the view is the default model\'s');
  assert.equal(stored.text, defaultText(), 'the view is of the text box\'s default sentence (web/index.html)');
  const api = await loadNode(wasmDir);
  try {
    const fresh = firstView(api, id, dir, stored.text);
    assert.equal(fresh.engine, stored.engine, 'the engine version: run `node scripts/first_view.mjs` after a release');
    assert.deepEqual({ ...fresh, attentions: null }, { ...stored, attentions: null });
    const a = readFirstView(fresh).tensors.attentions.data;
    const b = readFirstView(stored).tensors.attentions.data;
    assert.ok(sameBits(a, b), 'the attentions differ: run `node scripts/first_view.mjs` (docs/first-view.md)');
    // every row of every head is a distribution, as the live run's are
    const n = stored.reply.seq_len;
    for (let r = 0; r < b.length / n; r += 17) {
      const sum = b.subarray(r * n, r * n + n).reduce((s, x) => s + x, 0);
      assert.ok(Math.abs(sum - 1) < 1e-5, `row ${r} sums to ${sum}`);
    }
  } finally {
    api.release();
  }
});

test('the page\'s reader takes the stored view and names what is wrong with a damaged one', { skip: !existsSync(storedPath) && 'no models/first-view.json' }, () => {
  const stored = JSON.parse(readFileSync(storedPath, 'utf8'));
  const view = readFirstView(stored);
  const { seq_len: n, n_layers: NL, n_heads: H } = stored.reply;
  assert.equal(view.tensors.attentions.data.length, NL * H * n * n);
  assert.equal(view.pair, null);
  assert.throws(() => readFirstView({ ...stored, model: undefined }), /names no model/);
  assert.throws(() => readFirstView({ ...stored, reply: { ...stored.reply, seq_len: n + 1 } }), /do not agree/);
  assert.throws(() => readFirstView({ ...stored, attentions: { ...stored.attentions, shape: [NL, 1, H, n, n + 1] } }),
                /attentions must be F32 of shape/);
  assert.throws(() => readFirstView({ ...stored, attentions: { ...stored.attentions, dtype: 'F16' } }), /F32/);
  const cut = stored.attentions.data.slice(0, stored.attentions.data.length - 8);
  assert.throws(() => readFirstView({ ...stored, attentions: { ...stored.attentions, data: cut } }), /attentions hold \d+ bytes/);
  assert.throws(() => readFirstView(null), /names no model/);
});

test('sameBits tells equal bits from unequal, including -0 and NaN payloads', () => {
  const a = new Float32Array([0.25, 0, Number.NaN]);
  assert.ok(sameBits(a, new Float32Array(a)));
  assert.ok(!sameBits(a, new Float32Array([0.25, -0, Number.NaN])));
  assert.ok(!sameBits(a, new Float32Array([0.25, 0])));
  const b = new Float32Array(a);
  new Uint32Array(b.buffer)[0] ^= 1; // one ulp
  assert.ok(!sameBits(a, b));
});
