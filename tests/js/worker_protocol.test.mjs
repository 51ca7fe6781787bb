// worker_protocol.test.mjs: the Web Worker's message protocol (wasm/worker.mjs) under node, with the
// real WASM build: every op, progress events, error replies, cancel (queued and running), and the
// fatal path that makes the page restart the worker. Messages go through structuredClone with the
// transfer list the worker gives, as postMessage would, so transfers that would fail fail here.
//   AL_WASM_DIR (default build/wasm): attnlab_wasm.js + .wasm
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadNode } from '../../wasm/attnlab_node.mjs';
import { createHandler } from '../../wasm/worker.mjs';
import { makeGoldenModel, makeWideModel } from '../e2e/make_test_model.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const wasmDir = path.resolve(root, process.env.AL_WASM_DIR ?? 'build/wasm');
const skip = existsSync(path.join(wasmDir, 'attnlab_wasm.js')) ? false : `no WASM build in ${wasmDir}`;

let work;
let golden;
let wide;

function readModel(dir) {
  const files = {};
  for (const name of readdirSync(dir)) {
    const bytes = readFileSync(path.join(dir, name));
    files[name] = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  }
  return files;
}

// A page-side harness: send() returns {id, done} where done resolves with every message for the id.
function harness(loadApi = () => loadNode(wasmDir), { onMessage } = {}) {
  const byId = new Map();
  const fatal = [];
  let nextId = 1;
  const handle = createHandler({
    loadApi,
    post: (msg, transfer = []) => {
      const copy = structuredClone(msg, { transfer });
      if (copy.fatal) { fatal.push(copy.fatal); return; }
      onMessage?.(copy);
      const entry = byId.get(copy.id);
      assert.ok(entry, `message for unknown id ${copy.id}`);
      entry.messages.push(copy);
      if (copy.result || copy.error) entry.resolve(entry.messages);
    },
  });
  const send = (op, args = {}, transfer = []) => {
    const id = nextId++;
    let resolve;
    const done = new Promise((r) => { resolve = r; });
    byId.set(id, { messages: [], resolve });
    handle(structuredClone({ id, op, args }, { transfer }));
    return { id, done };
  };
  return { send, fatal, handle };
}

const last = (messages) => messages[messages.length - 1];

before(() => {
  if (skip) return;
  work = mkdtempSync(path.join(tmpdir(), 'attnlab-worker-test-'));
  golden = makeGoldenModel(path.join(work, 'golden'));
  wide = makeWideModel(path.join(work, 'wide'));
});

after(() => { if (work) rmSync(work, { recursive: true, force: true }); });

// The core's progress as the WASM exports hand it over (wasm/exports.c): an op that works through a plan (a PAPA
// sweep) adds its configuration, step of n; the worker passes both on, and every other op's reports stay as they were.
test('a sweep\'s progress names its configuration: config and n_configs pass through; other ops keep {stage, fraction}', async () => {
  const api = {
    onProgress: null,
    cancel() {},
    run(request) {
      if (request.op === 'version') return { reply: { ops: [{ name: 'papa', worker: true }, { name: 'attention', worker: true }] } };
      if (request.op === 'papa') [['inputs', 0, 0], ['features', 0.5, 1], ['sweep', 0.5, 1], ['features', 1, 2]].forEach(([s, f, i]) => this.onProgress(s, f, i, 2));
      else this.onProgress('layer 1/2', 0.5);
      return { reply: { op: request.op }, tensors: {} };
    },
  };
  const { send } = harness(async () => api);
  const sweep = (await send('papa', { model: 'm' }).done).filter((m) => m.progress).map((m) => m.progress);
  assert.deepEqual(sweep, [{ stage: 'inputs', fraction: 0, config: 0, n_configs: 2 }, { stage: 'features', fraction: 0.5, config: 1, n_configs: 2 },
                           { stage: 'sweep', fraction: 0.5, config: 1, n_configs: 2 }, { stage: 'features', fraction: 1, config: 2, n_configs: 2 }]);
  const other = (await send('attention', { model: 'm' }).done).filter((m) => m.progress).map((m) => m.progress);
  assert.deepEqual(other, [{ stage: 'layer 1/2', fraction: 0.5 }]);
  assert.equal(api.onProgress, null, 'the callback is cleared after the run');
});

test('every op: init, loadModel, info, tokenize, attention', { skip }, async () => {
  const board = new SharedArrayBuffer(4);
  const { send } = harness();
  const init = last(await send('init', { cancelBoard: board }).done);
  assert.match(init.result.reply.version, /\d/);
  assert.equal(init.result.reply.sharedCancel, true);
  // The core's tables the page lists (engine_tables.js): its built-in tasks and metrics, as "version" lists them.
  assert.deepEqual(init.result.reply.tasks.map((t) => t.id), ['pos', 'agreement', 'definition', 'order']);
  assert.deepEqual(init.result.reply.metrics.find((m) => m.name === 'mcc'), { name: 'mcc', summary: 'Matthews correlation', min: -1, max: 1 });
  assert.deepEqual(init.result.reply.families.find((f) => f.name === 'bert'), { name: 'bert', model_types: ['bert'], class_prefixes: ['Bert'] });

  const files = readModel(golden);
  const buffers = Object.values(files);
  const load = await send('loadModel', { modelId: 'g', files }, buffers).done;
  assert.ok(buffers.every((b) => b.byteLength === 0), 'the page transferred the files');
  assert.deepEqual(load.filter((m) => m.progress).map((m) => m.progress.fraction), [0, 1]);
  const info = last(load).result.reply;
  assert.equal(info.arch, 'bert');
  assert.equal(info.config.num_hidden_layers, 3);
  assert.equal(info.tokenizer.kind, 'wordpiece');
  assert.deepEqual(info.files.sort(), ['config.json', 'model.safetensors', 'vocab.txt']);

  const again = last(await send('info', { model: 'g' }).done).result.reply;
  assert.equal(again.config.num_attention_heads, 4);

  const tok = last(await send('tokenize', { model: 'g', text: 'the cats sat', text_pair: 'a dog' }).done);
  assert.deepEqual(tok.result.reply.tokens, ['[CLS]', 'the', 'cat', '##s', 'sat', '[SEP]', 'a', 'dog', '[SEP]']);
  assert.deepEqual(tok.result.reply.word_ids, [-1, 0, 1, 1, 2, -1, 0, 1, -1]);

  const run = await send('attention', { model: 'g', text: 'the cat sat on the mat' }).done;
  const stages = run.filter((m) => m.progress).map((m) => m.progress.stage);
  assert.ok(stages.includes('tokenize'), `stages: ${stages}`);
  assert.ok(stages.includes('layer 3/3'), `stages: ${stages}`);
  const { reply, tensors } = last(run).result;
  const L = reply.seq_len;
  assert.equal(L, 8);
  const att = tensors.attentions;
  assert.ok(att.data instanceof Float32Array, 'tensors travel as typed arrays, not JSON arrays');
  assert.deepEqual(att.shape, [3, 1, 4, L, L]);
  for (let row = 0; row < 3 * 4 * L; row++) {
    let sum = 0;
    for (let k = 0; k < L; k++) sum += att.data[row * L + k];
    assert.ok(Math.abs(sum - 1) < 1e-4, `row ${row} sums to ${sum}`);
  }
  assert.ok(tensors.input_ids.data instanceof Int32Array);

  // The measures beside PAPA pass through as their op table entries say (docs/measures.md).
  const norm = last(await send('norm_attention', { model: 'g', text: 'the cat sat on the mat' }).done);
  assert.ok(norm.result, JSON.stringify(norm.error ?? ''));
  assert.deepEqual(norm.result.tensors.norm_attentions.shape, [3, 1, 4, L, L]);
  assert.deepEqual(norm.result.tensors.res_ln_norms.shape, [3, 1, L, L]);
  const roll = last(await send('attention_rollout', { model: 'g', text: 'the cat sat on the mat', source: 'norm' }).done);
  assert.deepEqual(roll.result.tensors.rollout.shape, [3, 1, L, L]);
  assert.match(roll.result.reply.digest, /^sha256:/);
});

test('error replies name the problem and the worker keeps serving', { skip }, async () => {
  const { send } = harness();
  const unknown = last(await send('explode').done);
  assert.equal(unknown.error.code, 'invalid');
  assert.match(unknown.error.message, /unknown op 'explode'/);
  // The ops it lists come from the core's op table (the "version" op), forward being an alias it hides.
  assert.match(unknown.error.message, /loadModel, cancel, info, tokenize, attention, effective_attention/);
  assert.doesNotMatch(unknown.error.message, /forward|load_model/);

  const noModel = last(await send('info', { model: 'nope' }).done);
  assert.equal(noModel.error.code, 'invalid');
  assert.match(noModel.error.message, /no model 'nope'/);

  const files = readModel(golden);
  files['model.safetensors'] = new TextEncoder().encode('this is not a safetensors file at all').buffer;
  const corrupt = last(await send('loadModel', { modelId: 'bad', files }).done);
  assert.ok(corrupt.error, 'garbage weights are refused');
  assert.match(corrupt.error.message, /safetensors/);

  const badArgs = last(await send('loadModel', { files: {} }).done);
  assert.equal(badArgs.error.code, 'invalid');

  await send('loadModel', { modelId: 'g', files: readModel(golden) }).done;
  const badField = last(await send('attention', { model: 'g', text: 'hi', max_length: 'x' }).done);
  assert.match(badField.error.message, /max_length/);
  const ok = last(await send('attention', { model: 'g', text: 'the dog ran' }).done);
  assert.ok(ok.result.tensors.attentions, 'still works after errors');
});

// docs/memory.md: the WASM heap stops at 4,096 MB. A model or a request beyond it is refused with the
// size it needs and the limit, before anything of that size is allocated, and the models stay loaded.
test('beyond the WASM memory limit: a model and a request are refused by size; the models stay', { skip }, async () => {
  const { send } = harness();
  await send('loadModel', { modelId: 'g', files: readModel(golden) }).done;
  const files = readModel(golden);
  const config = JSON.parse(new TextDecoder().decode(files['config.json']));
  Object.assign(config, { hidden_size: 2048, num_hidden_layers: 48, num_attention_heads: 16, intermediate_size: 8192 });
  files['config.json'] = new TextEncoder().encode(JSON.stringify(config)).buffer;
  const huge = last(await send('loadModel', { modelId: 'g', files }).done);
  assert.equal(huge.error?.code, 'out_of_memory');
  assert.match(huge.error.message, /^config\.json: 48 layers of hidden size 2048, intermediate 8192, vocabulary \d+ \(\d+ weights\): needs [\d,]+ MB of memory; memory limit 4,096 MB \(WebAssembly maximum\), [\d.,]+ MB in use$/);

  // 60,000 texts padded to 40 tokens: attentions [3, 60000, 4, 40, 40] would take 4,395 MB
  const texts = Array.from({ length: 60000 }, (_, i) => (i ? 'a' : 'the cat sat on the mat '.repeat(8)));
  const big = last(await send('attention', { model: 'g', texts }).done);
  assert.equal(big.error?.code, 'out_of_memory');
  assert.match(big.error.message, /^reply: tensor 'attentions' \[3, 60000, 4, 40, 40\]: needs 4,395 MB of memory; memory limit 4,096 MB \(WebAssembly maximum\)/);

  // the model loaded before ('g', the golden weights, not the refused config) still answers
  const info = last(await send('info', { model: 'g' }).done);
  assert.equal(info.result.reply.config.hidden_size, 8 * 4);
  const ok = last(await send('attention', { model: 'g', text: 'the dog ran' }).done);
  assert.deepEqual(ok.result.tensors.attentions.shape.slice(0, 3), [3, 1, 4]);
});

test('cancel: a queued request is dropped, a running one stops between layers', { skip }, async () => {
  const board = new Int32Array(new SharedArrayBuffer(4));
  let target = 0;
  // Writes the board when the target reports its second layer, as the page would mid-run.
  const h = harness(undefined, {
    onMessage: (m) => {
      if (m.id === target && m.progress?.stage === 'layer 2/12') Atomics.store(board, 0, target);
    },
  });
  await h.send('init', { cancelBoard: board.buffer }).done;
  await h.send('loadModel', { modelId: 'w', files: readModel(wide) }).done;

  const first = h.send('attention', { model: 'w', text: 'the cat sat' });
  const second = h.send('attention', { model: 'w', text: 'the dog ran' });
  const cancel = h.send('cancel', { targetId: second.id });
  assert.equal(last(await cancel.done).result.cancelled, true);
  assert.equal(last(await second.done).error.code, 'cancelled');
  assert.ok(last(await first.done).result.tensors.attentions);

  const long = h.send('attention', { model: 'w', text: Array(100).fill('word').join(' ') });
  target = long.id;
  const messages = await long.done;
  const error = last(messages).error;
  assert.equal(error?.code, 'cancelled', JSON.stringify(last(messages)));
  const layers = messages.filter((m) => m.progress?.stage.startsWith('layer')).length;
  assert.ok(layers < 12, `stopped after ${layers} layer reports`);
  assert.equal(Atomics.load(board, 0), 0, 'the worker clears the board after the run');

  const after = last(await h.send('attention', { model: 'w', text: 'hello world' }).done);
  assert.ok(after.result.tensors.attentions, 'runs again after a cancel');
});

test('a trapped module reports fatal and refuses further requests', { skip }, async () => {
  const fake = {
    version: 'fake', cancel() {}, onProgress: null,
    run() { throw new WebAssembly.RuntimeError('memory access out of bounds'); },
  };
  const h = harness(async () => fake);
  const r = last(await h.send('attention', { model: 'x', text: 'a' }).done);
  assert.equal(r.error.code, 'crashed');
  assert.equal(h.fatal.length, 1);
  assert.match(h.fatal[0].message, /out of bounds/);
  const next = last(await h.send('info', { model: 'x' }).done);
  assert.equal(next.error.code, 'crashed');
});
