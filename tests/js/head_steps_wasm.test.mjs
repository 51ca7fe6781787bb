// head_steps_wasm.test.mjs: the "head_steps" op (src/api/op_head_steps.c) in the WASM build, as the
// page's "Explain one head" view calls it: its numbers against the same module's attention op
// (softmax(q.k / sqrt(d) + mask) must be the attention row, sum(weights x values) the context), its
// steps against each other, and the native CLI's reply bit for bit on the golden BERT (3 layers,
// 4 heads of dimension 8); DeBERTa-v3's score terms and ModernBERT's windowed rows on their goldens, with
// the teaching view's columns (web/explain_head.js). Fields it refuses are named.
//   AL_WASM_DIR (default build/wasm), AL_BUILD_DIR (default build/native)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadNode } from '../../wasm/attnlab_node.mjs';
import { parseSafetensors } from '../../wasm/safetensors.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const wasmDir = path.resolve(root, process.env.AL_WASM_DIR ?? 'build/wasm');
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const golden = path.join(root, 'tests/golden/bert');
const missing = !existsSync(path.join(wasmDir, 'attnlab_wasm.js')) ? `no WASM build in ${wasmDir}`
  : !existsSync(path.join(golden, 'model.safetensors')) ? 'no golden BERT' : null;

let api;
let work;
const IDS = [2, 17, 40, 63, 9, 81, 33, 12, 57, 70, 3]; // 11 tokens > head dimension 8: a null space
before(async () => {
  if (missing) return;
  api = await loadNode(wasmDir);
  api.addModel('g', {
    'config.json': new Uint8Array(readFileSync(path.join(golden, 'config.json'))),
    'model.safetensors': new Uint8Array(readFileSync(path.join(golden, 'model.safetensors'))),
  });
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-head-steps-'));
});
after(() => { if (work) rmSync(work, { recursive: true, force: true }); });

const maxDiff = (a, b) => a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i])), 0);

test('head_steps matches the attention op and its own steps', { skip: missing ?? false }, () => {
  const att = api.run({ op: 'attention', model: 'g', input_ids: IDS, pad_to: 14, outputs: ['attentions', 'values'] });
  assert.equal(att.status, 0, JSON.stringify(att.reply));
  const L = 14;
  const H = 4;
  const dh = 8;
  const worst = { row: 0, softmax: 0, context: 0, invisibleV: 0, scale: 0 };
  for (const [layer, head, query] of [[0, 0, 0], [1, 2, 5], [2, 3, 10]]) {
    const r = api.run({ op: 'head_steps', model: 'g', input_ids: IDS, pad_to: 14, layer, head, query });
    assert.equal(r.status, 0, JSON.stringify(r.reply));
    assert.equal(r.reply.n_tokens, 11);
    assert.equal(r.reply.seq_len, L);
    const t = Object.fromEntries(Object.entries(r.tensors).map(([k, v]) => [k, Array.from(v.data)]));
    const off = ((layer * H + head) * L + query) * L;
    const row = Array.from(att.tensors.attentions.data.subarray(off, off + L));
    const V = Array.from(att.tensors.values.data.subarray((layer * H + head) * L * dh, (layer * H + head + 1) * L * dh));
    worst.row = Math.max(worst.row, maxDiff(t.weights, row), maxDiff(t.attention_row, row));
    // softmax(q.k / sqrt(d) + mask), recomputed here from q and the keys
    const z = t.keys.length && Array.from({ length: L }, (_, j) => {
      let dot = 0;
      for (let i = 0; i < dh; i++) dot += t.query[i] * t.keys[j * dh + i];
      worst.scale = Math.max(worst.scale, Math.abs(dot - t.scores[j]) / (1 + Math.abs(dot)));
      return dot / Math.sqrt(dh) + t.mask_add[j];
    });
    const mx = Math.max(...z);
    const e = z.map((x) => Math.exp(x - mx));
    const sum = e.reduce((a, b) => a + b, 0);
    worst.softmax = Math.max(worst.softmax, maxDiff(e.map((x) => x / sum), row));
    for (let j = 0; j < L; j++) assert.equal(t.mask_add[j], j < 11 ? 0 : -10000);
    for (let i = 0; i < dh; i++) {
      let c = 0;
      let inv = 0;
      for (let j = 0; j < L; j++) {
        c += row[j] * V[j * dh + i];
        inv += t.invisible[j] * V[j * dh + i];
      }
      worst.context = Math.max(worst.context, Math.abs(c - t.context[i]));
      worst.invisibleV = Math.max(worst.invisibleV, Math.abs(inv));
    }
    assert.ok(r.reply.rank <= dh);
    assert.ok(t.invisible.some((x) => Math.abs(x) > 1e-4), '11 tokens over 8 dimensions leave an invisible part');
  }
  console.log(`head_steps (WASM): attention row ${worst.row.toExponential(2)}, softmax ${worst.softmax.toExponential(2)}, ` +
              `scores ${worst.scale.toExponential(2)}, context ${worst.context.toExponential(2)}, invisible x V ${worst.invisibleV.toExponential(2)}`);
  assert.ok(worst.row <= 1e-6 && worst.softmax <= 1e-6 && worst.scale <= 1e-6);
  assert.ok(worst.context <= 1e-6 && worst.invisibleV <= 1e-5);
});

test('head_steps: WASM and the native CLI agree (1e-6)', { skip: missing ?? (!existsSync(cli) && 'no native CLI') }, () => {
  const request = { op: 'head_steps', model: 'g', input_ids: IDS, layer: 1, head: 1, query: 3 };
  const w = api.run(request);
  const req = path.join(work, 'req.json');
  const out = path.join(work, 'out.safetensors');
  writeFileSync(req, JSON.stringify({ ...request, model_dir: golden }));
  const reply = JSON.parse(execFileSync(cli, ['run', req, '--out', out], { encoding: 'utf8' }));
  const native = parseSafetensors(new Uint8Array(readFileSync(out))).tensors;
  assert.deepEqual({ ...w.reply, model: null }, { ...reply, model: null });
  for (const [name, v] of Object.entries(w.tensors)) assert.ok(maxDiff(Array.from(v.data), Array.from(native[name].data)) <= 1e-6, name);
});

test('head_steps names the field at fault', { skip: missing ?? false }, () => {
  const bad = [
    [{ layer: 3, head: 0, query: 0 }, "'layer'"],
    [{ layer: 0, head: 9, query: 0 }, "'head'"],
    [{ layer: 0, head: 0, query: 11 }, "'query'"],
    [{ head: 0, query: 0 }, "'layer'"],
  ];
  for (const [fields, needle] of bad) {
    const r = api.run({ op: 'head_steps', model: 'g', input_ids: IDS, ...fields });
    assert.notEqual(r.status, 0);
    assert.ok(r.reply.error.message.includes(needle), `${JSON.stringify(fields)}: ${r.reply.error.message}`);
  }
});

// DeBERTa-v3 and ModernBERT (tests/golden/deberta_v3, tests/golden/modernbert): the row is the attention op's,
// DeBERTa's three terms sum to the score, ModernBERT's excluded keys weigh 0, WASM and native agree bit for bit,
// and the page's teaching view (web/explain_head.js) shows the terms and the excluded keys from this reply.
const FAMILIES = [
  { id: 'deberta_v3', rule: 'disentangled', layer: 1 },
  { id: 'modernbert', rule: 'rotary_window', layer: 1 },
];
const FAMILY_IDS = [1, 10, 20, 30, 40, 50, 60, 70, 2];
for (const f of FAMILIES) {
  const dir = path.join(root, 'tests/golden', f.id);
  const skipFamily = missing ?? (!existsSync(path.join(dir, 'model.safetensors')) && `no ${dir}`);
  test(`head_steps on ${f.id}: the forward's row, each score term, WASM = native bit for bit`, { skip: skipFamily }, async () => {
    const { explainData, maskCell, scoreColumns, scaleDivisor } = await import('../../web/explain_head.js');
    api.addModel(f.id, {
      'config.json': new Uint8Array(readFileSync(path.join(dir, 'config.json'))),
      'model.safetensors': new Uint8Array(readFileSync(path.join(dir, 'model.safetensors'))),
    });
    const L = 12;
    const H = 4;
    const query = 6;
    const att = api.run({ op: 'attention', model: f.id, input_ids: FAMILY_IDS, pad_to: L, outputs: ['attentions'] });
    assert.equal(att.status, 0, JSON.stringify(att.reply));
    const request = { op: 'head_steps', model: f.id, input_ids: FAMILY_IDS, pad_to: L, layer: f.layer, head: 2, query };
    const r = api.run(request);
    assert.equal(r.status, 0, JSON.stringify(r.reply));
    assert.equal(r.reply.score_rule, f.rule);
    const t = Object.fromEntries(Object.entries(r.tensors).map(([k, v]) => [k, Array.from(v.data)]));
    const off = ((f.layer * H + 2) * L + query) * L;
    const row = Array.from(att.tensors.attentions.data.subarray(off, off + L));
    assert.ok(maxDiff(t.weights, row) <= 1e-6 && maxDiff(t.attention_row, row) === 0);
    const excludedWant = Array.from({ length: L }, (_, j) => (j >= 9 || (f.rule === 'rotary_window' && Math.abs(j - query) > 2) ? 1 : 0));
    assert.deepEqual(t.excluded, excludedWant);
    for (let j = 0; j < L; j++) if (excludedWant[j]) assert.equal(t.weights[j], 0);
    const d = explainData(r, null);
    const cols = scoreColumns(d).map((c) => c.head);
    if (f.rule === 'disentangled') {
      assert.deepEqual(r.reply.terms, ['c2c', 'c2p', 'p2c']);
      for (let j = 0; j < L; j++) {
        const sum = t.c2c[j] + t.c2p[j] + t.p2c[j];
        assert.ok(Math.abs(sum - t.scores[j]) <= 1e-6 * (1 + Math.abs(sum)), `key ${j}: ${sum} vs ${t.scores[j]}`);
      }
      assert.equal(cols.length, 4);
      assert.equal(scaleDivisor(d), '\u221a(8 \u00d7 3)');
    } else {
      assert.equal(r.reply.window, 2);
      assert.equal(r.reply.rotary_base, 10000);
      assert.equal(t.c2c, undefined);
      assert.deepEqual(cols, ['q \u00b7 k']);
      assert.equal(scaleDivisor(d), '\u221a8');
    }
    assert.equal(maskCell(d, 10), 'excluded');
    assert.equal(maskCell(d, query), '0');
    if (!existsSync(cli)) return;
    const req = path.join(work, `req_${f.id}.json`);
    const out = path.join(work, `out_${f.id}.safetensors`);
    writeFileSync(req, JSON.stringify({ ...request, model_dir: dir }));
    const reply = JSON.parse(execFileSync(cli, ['run', req, '--out', out], { encoding: 'utf8' }));
    const native = parseSafetensors(new Uint8Array(readFileSync(out))).tensors;
    assert.deepEqual({ ...r.reply, model: null }, { ...reply, model: null });
    for (const [name, v] of Object.entries(r.tensors)) assert.deepEqual(Array.from(v.data), Array.from(native[name].data), name);
  });
}
