// wasm_api.test.mjs: the WASM module's API (wasm/exports.c through wasm/attnlab.mjs) against the
// native CLI on the same requests. The golden models (tests/golden/<family>) are handed over as
// buffers, as the worker does; the native side reads the same directories. The kernels are designed
// to give the same bits natively and in WASM, so the test reports whether tensors are exactly equal
// and fails only beyond 1e-6.
//   AL_WASM_DIR  (default build/wasm):   attnlab_wasm.js + .wasm
//   AL_BUILD_DIR (default build/native): the attnlab CLI
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadNode, readModelFiles } from '../../wasm/attnlab_node.mjs';
import { parseSafetensors, serializeSafetensors } from '../../wasm/safetensors.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const wasmDir = path.resolve(root, process.env.AL_WASM_DIR ?? 'build/wasm');
const cli = path.resolve(root, process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');
const goldenDir = path.join(root, 'tests/golden');
const families = existsSync(goldenDir)
  ? readdirSync(goldenDir).filter((d) => existsSync(path.join(goldenDir, d, 'model.safetensors'))).sort()
  : [];
const missing = !existsSync(path.join(wasmDir, 'attnlab_wasm.js')) ? `no WASM build in ${wasmDir}`
  : !existsSync(cli) ? `no native CLI at ${cli}`
  : families.length === 0 ? 'no golden models in tests/golden' : null;

// The files a model needs (the goldens' reference outputs stay out).
function modelFiles(dir, every = false) {
  return readModelFiles(dir, (name) => every || /^(config\.json|model\.safetensors|vocab\.txt|tokenizer\.json|vocab\.json|merges\.txt)$/.test(name));
}

// A WordPiece vocab for the 100-id golden BERT, so text requests have a tokenizer.
function vocabText() {
  const words = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', 'the', 'cat', 'sat', 'on', 'mat', 'a',
                 'dog', 'ran', '.', ',', 'hello', 'world', '##s', 'is', 'and', 'big', 'red'];
  while (words.length < 100) words.push(`filler${words.length}`);
  return words.join('\n') + '\n';
}

let api;
let work; // temporary directory for requests, outputs and the tokenizer model
const diffs = [];

before(async () => {
  if (missing) return;
  api = await loadNode(wasmDir);
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-wasm-test-'));
  const tokDir = path.join(work, 'bert_tok');
  execFileSync('mkdir', [tokDir]);
  for (const f of ['config.json', 'model.safetensors']) copyFileSync(path.join(goldenDir, 'bert', f), path.join(tokDir, f));
  writeFileSync(path.join(tokDir, 'vocab.txt'), vocabText());
});

after(() => {
  if (work) rmSync(work, { recursive: true, force: true });
  if (diffs.length) {
    const max = Math.max(...diffs.map((d) => d.max));
    const exact = diffs.every((d) => d.exact);
    console.log(`native vs WASM: ${diffs.length} tensors compared, max |diff| = ${max}, ` +
                `${exact ? 'all bit-identical' : 'not all bit-identical'}`);
  }
});

// Runs a request with the native CLI; returns { reply, tensors } from stdout and the --out file.
function runNative(request, modelDir, inputs = null) {
  const tag = `${request.op}-${request.model}-${diffs.length}-${Math.random().toString(36).slice(2, 8)}`;
  const reqPath = path.join(work, `${tag}.json`);
  const outPath = path.join(work, `${tag}.safetensors`);
  writeFileSync(reqPath, JSON.stringify({ ...request, model_dir: modelDir }));
  const args = ['run', reqPath, '--out', outPath];
  if (inputs) {
    const inPath = path.join(work, `${tag}-inputs.safetensors`);
    writeFileSync(inPath, serializeSafetensors(inputs));
    args.push('--inputs', inPath);
  }
  const stdout = execFileSync(cli, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return { reply: JSON.parse(stdout), tensors: parseSafetensors(new Uint8Array(readFileSync(outPath))).tensors };
}

function compareTensors(label, wasmTensors, nativeTensors) {
  assert.deepEqual(Object.keys(wasmTensors).sort(), Object.keys(nativeTensors).sort(), `${label}: tensor names`);
  for (const [name, w] of Object.entries(wasmTensors)) {
    const n = nativeTensors[name];
    assert.equal(w.dtype, n.dtype, `${label}/${name}: dtype`);
    assert.deepEqual(w.shape, n.shape, `${label}/${name}: shape`);
    assert.equal(w.data.length, n.data.length);
    let max = 0;
    let exact = true;
    for (let i = 0; i < w.data.length; i++) {
      const d = Math.abs(w.data[i] - n.data[i]);
      if (!(d <= max)) max = Number.isNaN(d) ? Infinity : d;
      if (!Object.is(w.data[i], n.data[i])) exact = false;
    }
    diffs.push({ label: `${label}/${name}`, max, exact });
    assert.ok(max <= 1e-6, `${label}/${name}: native vs WASM max |diff| ${max} > 1e-6`);
  }
}

test('WASM module loads, reports its version and holds one handle', { skip: missing ?? false }, () => {
  assert.equal(api.version, '0.2.0');
  const { reply } = api.run({ op: 'version' });
  assert.equal(reply.version, '0.2.0');
  assert.equal(reply.kernels, 'wasm-simd128');
  const attention = reply.ops.find((o) => o.name === 'attention');
  assert.ok(attention?.worker && attention.summary, JSON.stringify(reply.ops));
  assert.equal(api.liveHandles(), 1);
});

test('golden models: info and attention match the native CLI', { skip: missing ?? false }, () => {
  for (const family of families) {
    const dir = path.join(goldenDir, family);
    api.addModel(family, modelFiles(dir, true)); // the directory's every file, as the native CLI reads it
    const info = api.run({ op: 'info', model: family });
    assert.equal(info.status, 0, JSON.stringify(info.reply));
    const nativeInfo = runNative({ op: 'info', model: family }, dir);
    assert.deepEqual(info.reply, nativeInfo.reply, `${family}: info differs`);

    const outputs = ['attentions', 'hidden_states', 'values'];
    if (info.reply.mlm_head) outputs.push('mlm_logits');
    const request = { op: 'attention', model: family, input_ids: [[2, 5, 6, 7, 8, 3], [2, 9, 10, 3]], outputs };
    const w = api.run(request);
    assert.equal(w.status, 0, JSON.stringify(w.reply));
    assert.deepEqual(w.tensors.attentions.shape,
                     [info.reply.config.num_hidden_layers, 2, info.reply.config.num_attention_heads, 6, 6]);
    const n = runNative(request, dir);
    assert.deepEqual(w.reply, n.reply, `${family}: attention reply JSON differs`);
    compareTensors(family, w.tensors, n.tensors);
  }
  assert.equal(api.liveHandles(), 1);
});

test('text requests with a tokenizer: tokenize and attention match the native CLI', { skip: missing ?? false }, () => {
  const dir = path.join(work, 'bert_tok');
  api.addModel('bert_tok', modelFiles(dir));
  const tok = api.run({ op: 'tokenize', model: 'bert_tok', text: 'The cats sat on the mat.', text_pair: 'A dog' });
  assert.equal(tok.status, 0, JSON.stringify(tok.reply));
  assert.deepEqual(tok.reply.tokens, ['[CLS]', 'the', 'cat', '##s', 'sat', 'on', 'the', 'mat', '.', '[SEP]', 'a', 'dog', '[SEP]']);
  assert.deepEqual(tok.reply, runNative({ op: 'tokenize', model: 'bert_tok', text: 'The cats sat on the mat.', text_pair: 'A dog' }, dir).reply);

  const request = { op: 'attention', model: 'bert_tok', texts: ['hello world', 'the big red dog ran on the mat'],
                    outputs: ['attentions', 'hidden_states'] };
  const w = api.run(request);
  assert.equal(w.status, 0, JSON.stringify(w.reply));
  assert.deepEqual(w.reply.sequences[0].tokens, ['[CLS]', 'hello', 'world', '[SEP]']);
  const n = runNative(request, dir);
  assert.deepEqual(w.reply, n.reply);
  compareTensors('bert_tok', w.tensors, n.tensors);
});

test('policies with a constant tensor match the native CLI', { skip: missing ?? false }, () => {
  const dir = path.join(work, 'bert_tok');
  const L = 10;
  const C = new Float32Array(L * L).map((_, k) => 1 + ((k * 7) % 5));
  const request = { op: 'attention', model: 'bert_tok', text: 'the cat sat on the mat',
                    policies: [{ layer: 0, mode: 'constant', constant: 'C' },
                               { layer: 1, head: 2, mode: 'mix', lambda: 0.3, constant: 'C' },
                               { layer: 2, head: 0, mode: 'zero' }] };
  const w = api.run(request, { C: { shape: [L, L], data: C } });
  assert.equal(w.status, 0, JSON.stringify(w.reply));
  assert.equal(w.reply.seq_len, L); // padded to the constant's size
  const att = w.tensors.attentions;
  // Head 0 of layer 0: C restricted to the 8 real keys and renormalised.
  const row0 = Array.from(C.subarray(0, 8));
  const sum = row0.reduce((a, b) => a + b, 0);
  for (let j = 0; j < 8; j++) assert.ok(Math.abs(att.data[j] - row0[j] / sum) < 1e-6);
  assert.equal(att.data[8], 0);
  const n = runNative(request, dir, { C: { shape: [L, L], data: C } });
  assert.deepEqual(w.reply, n.reply);
  compareTensors('policies', w.tensors, n.tensors);
  // The inputs were attached for that run only.
  const again = api.run(request);
  assert.equal(again.reply.error.code, 'invalid');
  assert.match(again.reply.error.message, /policies\[0\]\.constant.*no input tensor 'C'/);
});

test('value zeroing on every golden family matches the native CLI', { skip: missing ?? false }, () => {
  for (const family of families) { // loaded by the golden-models test above
    const request = { op: 'value_zeroing', model: family, input_ids: [[2, 5, 6, 7, 8, 3], [2, 9, 10, 3]] };
    const w = api.run(request);
    assert.equal(w.status, 0, JSON.stringify(w.reply));
    assert.deepEqual(w.tensors.value_zeroing.shape, [2, w.reply.n_layers, 6, 6]);
    const n = runNative(request, path.join(goldenDir, family));
    assert.deepEqual(w.reply, n.reply, `${family}: value_zeroing reply JSON differs`);
    compareTensors(`${family}/value_zeroing`, w.tensors, n.tensors);
  }
});

test('a bad model file throws an error naming the file; the handle is released', { skip: missing ?? false }, () => {
  const files = modelFiles(path.join(goldenDir, 'bert'));
  files['config.json'] = new TextEncoder().encode('{"model_type": "bert", "hidden_size": ');
  assert.throws(() => api.addModel('broken', files), (e) => e.code === 'format' && /config\.json/.test(e.message));
  const truncated = modelFiles(path.join(goldenDir, 'bert'));
  truncated['model.safetensors'] = truncated['model.safetensors'].subarray(0, 100);
  assert.throws(() => api.addModel('broken', truncated), (e) => e.code === 'format' && /model\.safetensors/.test(e.message));
  assert.equal(api.liveHandles(), 1);
  const { reply } = api.run({ op: 'models' });
  assert.ok(!reply.models.includes('broken'));
});

test('bad requests get error replies naming the field', { skip: missing ?? false }, () => {
  const cases = [
    [{ op: 'tokenize', model: 'bert_tok', text: 5 }, 'invalid', "request: field 'text' must be a string"],
    [{ op: 'attention', model: 'bert_tok', text: 'a', max_length: 'x' }, 'invalid', "field 'max_length' must be an integer"],
    [{ op: 'attention', model: 'nope', text: 'a' }, 'invalid', "field 'model': no model 'nope'"],
    [{ op: 'fly' }, 'invalid', "unknown op 'fly'"],
    [{ op: 'attention', model: 'bert', text: 'a' }, 'invalid', "model 'bert' has no tokenizer"],
    [{ op: 'load_model', model: 'x', path: '/nonexistent' }, 'io', '/nonexistent'],
  ];
  for (const [request, code, text] of cases) {
    const { status, reply, tensors } = api.run(request);
    assert.notEqual(status, 0);
    assert.equal(reply.error.code, code, JSON.stringify(reply));
    assert.ok(reply.error.message.includes(text), `${reply.error.message} lacks ${text}`);
    assert.deepEqual(tensors, {});
  }
  const bad = api.run('{"op": ');
  assert.equal(bad.reply.error.code, 'format');
  assert.equal(api.liveHandles(), 1);
});

test('progress reaches JavaScript and the cancel flag stops a run', { skip: missing ?? false }, () => {
  const stages = [];
  api.onProgress = (stage, fraction) => stages.push([stage, fraction]);
  const ok = api.run({ op: 'attention', model: 'bert', input_ids: [2, 5, 3] });
  assert.equal(ok.status, 0);
  assert.ok(stages.some(([s]) => s === 'tokenize'));
  assert.ok(stages.some(([s]) => s === 'layer 3/3'), JSON.stringify(stages));
  api.onProgress = (stage) => { if (stage.startsWith('layer')) api.cancel(); };
  const cancelled = api.run({ op: 'attention', model: 'bert', input_ids: [2, 5, 3] });
  assert.equal(cancelled.reply.error.code, 'cancelled');
  api.onProgress = null;
  assert.equal(api.run({ op: 'attention', model: 'bert', input_ids: [2, 5, 3] }).status, 0);
});

test('bytes JavaScript cannot copy into WASM memory get the core\'s error: size needed and limit', { skip: missing ?? false }, () => {
  const e = api._memoryError(5e9, 'model.safetensors');
  assert.equal(e.code, 'out_of_memory');
  assert.match(e.message, /^model\.safetensors: needs 4,768 MB of memory; memory limit 4,096 MB \(WebAssembly maximum\), [\d.,]+ MB in use$/);
  // the core's own check: a config too large for the module, refused before any weights (docs/memory.md)
  const config = JSON.stringify({ model_type: 'bert', hidden_size: 2048, num_hidden_layers: 48, num_attention_heads: 16,
                                  intermediate_size: 8192, vocab_size: 30522 });
  const { reply } = api.run({ op: 'check_config', config });
  assert.equal(reply.error?.code, 'out_of_memory');
  assert.match(reply.error.message, /^config\.json: 48 layers of hidden size 2048, intermediate 8192, vocabulary 30522 \(2480762880 weights\) with at least 4,732 MB of weight files: needs 13\.9 GB of memory; memory limit 4,096 MB \(WebAssembly maximum\)/);
  const small = api.run({ op: 'check_config', config: readFileSync(path.join(goldenDir, 'bert/config.json'), 'utf8') }).reply;
  assert.equal(small.arch, 'bert');
  assert.ok(small.weights > 0 && small.bytes_needed === small.weights * 6 && small.memory_limit === 65535 * 65536, JSON.stringify(small));
  const relative = api.run({ op: 'check_config', config: JSON.stringify({ ...JSON.parse(config), hidden_size: 64, num_hidden_layers: 2,
                                                                          intermediate_size: 128, position_embedding_type: 'relative_key' }) }).reply;
  assert.match(relative.error?.message ?? '', /position_embedding_type/);
  // decoders (docs/decoders.md, "Memory"): TinyLlama-1.1B's shape is refused by size, Qwen2.5-0.5B's fits
  const llama = { model_type: 'llama', hidden_size: 2048, intermediate_size: 5632, num_hidden_layers: 22, num_attention_heads: 32,
                  num_key_value_heads: 4, vocab_size: 32000, max_position_embeddings: 2048, hidden_act: 'silu', rms_norm_eps: 1e-5,
                  rope_theta: 10000, tie_word_embeddings: false };
  const tiny = api.run({ op: 'check_config', config: JSON.stringify(llama) }).reply;
  assert.equal(tiny.error?.code, 'out_of_memory', JSON.stringify(tiny));
  assert.match(tiny.error.message, /^config\.json: .*needs [\d.,]+ [MG]B of memory; memory limit 4,096 MB \(WebAssembly maximum\)/);
  const qwen = api.run({ op: 'check_config', config: JSON.stringify({ ...llama, model_type: 'qwen2', hidden_size: 896, intermediate_size: 4864,
    num_hidden_layers: 24, num_attention_heads: 14, num_key_value_heads: 2, vocab_size: 151936, tie_word_embeddings: true,
    rope_theta: 1000000, max_position_embeddings: 32768, use_sliding_window: false, sliding_window: 32768, max_window_layers: 21 }) }).reply;
  assert.equal(qwen.error, undefined, JSON.stringify(qwen));
  assert.equal(qwen.arch, 'qwen2');
  assert.ok(qwen.bytes_needed < qwen.memory_limit, JSON.stringify(qwen));
});

test('every handle is released', { skip: missing ?? false }, () => {
  assert.equal(api.liveHandles(), 1); // the session
  api.release();
  assert.equal(api.liveHandles(), 0);
});
