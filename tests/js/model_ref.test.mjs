// model_ref.test.mjs: how a link names a model (web/model_ref.js): the checks on a reference read
// from a link, SHA-256 of local files (crypto.subtle, the same call as in the browser), and the
// matching of given files against the files a link names; and which entry of models/index.json is the default and
// which entries have weights (web/models.js), and the config.json family check against the engine's families.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { loadEngineTables } from '../../scripts/engine_tables.mjs';

import { checkModelRef, matchFiles, recordFiles, refOf, sha256Hex } from '../../web/model_ref.js';
import { checkConfig, defaultEmbedded, hasWeights, isEncoderWithWeights, readLocalFiles } from '../../web/models.js';

const bytes = (s) => new TextEncoder().encode(s).buffer;
const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..', process.env.AL_BUILD_DIR ?? 'build/native', 'attnlab');

test('SHA-256: the FIPS 180-2 test vectors', async () => {
  assert.equal(await sha256Hex(bytes('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  assert.equal(await sha256Hex(bytes('')), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
});

test('model references from a link: valid ones pass, the rest is named', () => {
  const h = 'a'.repeat(64);
  for (const ok of [null, { kind: 'embedded', id: 'attnlab-mini-bert' }, { kind: 'hub', repo: 'prajjwal1/bert-tiny' },
                    { kind: 'hub', repo: 'bert-base-uncased', rev: 'v1.0', base: 'https://hf-mirror.example' },
                    { kind: 'local', files: [{ name: 'config.json', size: 10, sha256: h }] }]) {
    assert.equal(checkModelRef(ok), null, JSON.stringify(ok));
  }
  const bad = [
    [[], /object/], [{ kind: 'ftp' }, /kind/], [{ kind: 'embedded', id: '../x' }, /id/],
    [{ kind: 'embedded', id: 'x', extra: 1 }, /unknown field "extra"/],
    [{ kind: 'hub', repo: 'a/../b' }, /repository/], [{ kind: 'hub', repo: 'a/b', base: 'javascript:alert(1)' }, /http/],
    [{ kind: 'local', files: [] }, /1 to 64/],
    [{ kind: 'local', files: [{ name: '../passwd', size: 1, sha256: h }] }, /plain name/],
    [{ kind: 'local', files: [{ name: 'a', size: -1, sha256: h }] }, /size/],
    [{ kind: 'local', files: [{ name: 'a', size: 1, sha256: 'A'.repeat(64) }] }, /SHA-256/],
    [{ kind: 'local', files: [{ name: 'a', size: 1, sha256: h }, { name: 'a', size: 1, sha256: h }] }, /twice/],
  ];
  for (const [ref, why] of bad) assert.match(checkModelRef(ref), why, JSON.stringify(ref));
});

test('given files match a link by content; a changed or missing file is named, nothing is returned', async () => {
  const original = { 'config.json': bytes('{"model_type":"bert"}'), 'vocab.txt': bytes('[PAD]\n[UNK]\n'),
                     'model.safetensors': bytes('weights') };
  const expected = await recordFiles(original);
  assert.deepEqual(expected.map((f) => f.name), ['config.json', 'model.safetensors', 'vocab.txt']);
  assert.deepEqual(refOf({ kind: 'files', record: expected }), { kind: 'local', files: expected });

  // The same contents under other names, plus an extra file: matched by hash, renamed, extra left out.
  const renamed = { 'my-config.json': original['config.json'], 'vocab.txt': original['vocab.txt'],
                    'weights.bin': original['model.safetensors'], 'README.md': bytes('hello') };
  const ok = matchFiles(expected, renamed, await recordFiles(renamed));
  assert.deepEqual(Object.keys(ok.files).sort(), ['config.json', 'model.safetensors', 'vocab.txt']);
  assert.equal(ok.files['model.safetensors'], original['model.safetensors']);

  // One byte different: the same name, another hash.
  const changed = { ...original, 'model.safetensors': bytes('weightS') };
  const bad = matchFiles(expected, changed, await recordFiles(changed));
  assert.equal(bad.files, undefined);
  assert.equal(bad.problems.length, 1);
  assert.match(bad.problems[0], /^model\.safetensors is a different file: its SHA-256 is [0-9a-f]{12}\u2026 \(7 B\), the link expects [0-9a-f]{12}\u2026 \(7 B\)$/);

  const missing = { 'config.json': original['config.json'] };
  const gone = matchFiles(expected, missing, await recordFiles(missing));
  assert.deepEqual(gone.problems.map((p) => p.split(' ')[0]), ['model.safetensors', 'vocab.txt']);
  assert.match(gone.problems[0], /is missing/);
});

test('models/index.json: the default entry, and which entries have weights', () => {
  assert.equal(defaultEmbedded([{ id: 'a' }, { id: 'b', default: true }]).id, 'b');
  assert.equal(defaultEmbedded([{ id: 'a' }, { id: 'b' }]).id, 'a', 'none marked: the first');
  assert.equal(defaultEmbedded([]), undefined);
  const files = (...f) => ({ id: 'm', files: f });
  assert.ok(hasWeights(files('config.json', 'model.safetensors')));
  assert.ok(hasWeights(files('config.json', 'pytorch_model.bin')));
  assert.ok(hasWeights(files('config.json', 'model.safetensors.index.json')), 'float16 shards named by an index');
  assert.ok(!hasWeights(files('config.json', 'vocab.txt')));
  assert.ok(!hasWeights(files('config.json', 'tf_model.h5')), 'weights the loader does not read are not weights');
  assert.ok(!hasWeights({ id: 'm' }), 'no file list');
  assert.ok(isEncoderWithWeights(files('config.json', 'model.safetensors')));
  assert.ok(!isEncoderWithWeights({ ...files('config.json', 'model.safetensors'), causal: true }), 'a language model is not the PAPA panel\'s');
});

test('config.json family check before a download: a classic config (no model_type, no architectures) passes',
     { skip: existsSync(cli) ? false : `no CLI at ${cli}` }, () => {
  loadEngineTables(cli); // the families are the engine's (its version reply), as the page gets them from the worker
  const cfg = (o) => new TextEncoder().encode(JSON.stringify(o));
  const classic = { hidden_size: 8, num_hidden_layers: 2, num_attention_heads: 2, intermediate_size: 16, vocab_size: 32 };
  assert.equal(checkConfig(cfg(classic), 'm').hidden_size, 8, 'the core decides by its fields, the loader by tensor names');
  assert.ok(checkConfig(cfg({ ...classic, architectures: ['BertForMaskedLM'] }), 'm'));
  // a decoder family the engine lists passes (docs/decoders.md); one it does not (Mistral) is refused by name
  assert.ok(checkConfig(cfg({ ...classic, model_type: 'gpt2' }), 'm'));
  assert.ok(checkConfig(cfg({ ...classic, model_type: 'llama', architectures: ['LlamaForCausalLM'] }), 'm'));
  assert.throws(() => checkConfig(cfg({ ...classic, model_type: 'mistral' }), 'm'), /not a model family attnlab runs \(model_type "mistral"\)/);
  assert.throws(() => checkConfig(cfg({ ...classic, architectures: ['MistralForCausalLM'] }), 'm'), /not a model family attnlab runs/);
  assert.throws(() => checkConfig(cfg({ ...classic, model_type: 'mistral' }), 'm'), /runs the model families bert, roberta, distilbert, electra.*gpt2, llama, qwen2, gpt_neox/);
  assert.ok(checkConfig(cfg({ ...classic, architectures: ['DistilBertForMaskedLM'] }), 'm'));
  assert.ok(checkConfig(cfg({ ...classic, model_type: 'electra' }), 'm'));
  assert.ok(checkConfig(cfg({ ...classic, model_type: 'modernbert' }), 'm'), 'ModernBERT (docs/families.md)');
});

test('local files: a DeBERTa-v3 folder gives its spm.model and added_tokens.json to the core, a README stays behind', async () => {
  const file = (name, text) => new File([text], name);
  const config = JSON.stringify({ model_type: 'deberta-v2', architectures: ['DebertaV2ForMaskedLM'] });
  const got = await readLocalFiles([file('config.json', config), file('model.safetensors', 'w'), file('spm.model', 's'),
                                    file('added_tokens.json', '{"[MASK]": 128000}'), file('README.md', '# card')]);
  assert.deepEqual(Object.keys(got.files).sort(), ['added_tokens.json', 'config.json', 'model.safetensors', 'spm.model']);
  // without config.json the message lists spm.model and Llama's tokenizer.model among the tokenizer files
  await assert.rejects(readLocalFiles([file('spm.model', 's')]), /tokenizer: vocab\.txt, tokenizer\.json, spm\.model, tokenizer\.model or vocab\.json/);
  // a Llama folder: its SentencePiece tokenizer.model goes to the core
  const llama = await readLocalFiles([file('config.json', JSON.stringify({ model_type: 'llama' })), file('model.safetensors', 'w'),
                                      file('tokenizer.model', 's'), file('README.md', '# card')]);
  assert.deepEqual(Object.keys(llama.files).sort(), ['config.json', 'model.safetensors', 'tokenizer.model']);
});
