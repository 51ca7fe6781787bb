// make_test_model.mjs: tiny BERT models in Hugging Face layout, with a vocab.txt of real words, for
// the worker and browser tests (the committed goldens have no tokenizer).
//   makeWideModel(dir)   12 layers x 12 heads (144 heads), 512 positions, random weights from a
//                        seeded generator: exercises the explorer at full size.
//   makeGoldenModel(dir) tests/golden/bert's weights (3 layers x 4 heads, 40 positions) + a vocab.
// CLI: node tests/e2e/make_test_model.mjs DIR [wide|golden]
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { serializeSafetensors } from '../../wasm/safetensors.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const WORDS = `the a an cat dog sat on mat ran quickly over lazy fox brown jumped bank river money
deposit withdraw he she it they we you i is was are were be been have has had do does did not and or
but if then because so when where what who which why how this that these those there here of to in
for with at by from up down out about into through after before under again further once all any
both each few more most other some such no nor only own same than too very can will just should now
big small red green blue house car tree book read write play run walk talk see look watch hear listen
time day night year week good bad new old first last long great little right left high low next
early young important public private same able man woman child world life hand part place case point
government company number group problem fact eye city love sea sky sun moon star water fire earth
word sentence attention head layer model token hello music paris france london capital tired asleep fell`.split(/\s+/);
const PIECES = ['##s', '##ing', '##ed', '##ly', '##er', '##est', '##ness', '##ful'];
const PUNCT = ['.', ',', '!', '?', '<', '>', '=', '/', '_', "'", '"', '(', ')', ';', ':', '-'];

// [PAD]=0 [UNK]=1 [CLS]=2 [SEP]=3 [MASK]=4, then words, word pieces and punctuation.
export function vocabTokens(size) {
  const tokens = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...PUNCT, ...PIECES, ...WORDS];
  const unique = [...new Set(tokens)];
  if (size !== undefined) {
    if (unique.length > size) unique.length = size;
    while (unique.length < size) unique.push(`extra${unique.length}`);
  }
  return unique;
}

// mulberry32: a small seeded generator, so the test model is the same on every run.
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function normal(next) {
  const u = Math.max(next(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
}

export function makeWideModel(dir, { layers = 12, heads = 12, hidden = 48, intermediate = 96,
                                     positions = 512, seed = 1234 } = {}) {
  mkdirSync(dir, { recursive: true });
  const vocab = vocabTokens();
  const V = vocab.length;
  const next = rng(seed);
  const tensors = {};
  const add = (name, shape, scale, offset = 0) => {
    const n = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    for (let i = 0; i < n; i++) data[i] = offset + (scale ? scale * normal(next) : 0);
    tensors[name] = { shape, data };
  };
  add('bert.embeddings.word_embeddings.weight', [V, hidden], 0.5);
  add('bert.embeddings.position_embeddings.weight', [positions, hidden], 0.5);
  add('bert.embeddings.token_type_embeddings.weight', [2, hidden], 0.1);
  add('bert.embeddings.LayerNorm.weight', [hidden], 0, 1);
  add('bert.embeddings.LayerNorm.bias', [hidden], 0);
  for (let l = 0; l < layers; l++) {
    const p = `bert.encoder.layer.${l}.`;
    // Large query/key weights give peaked, varied attention patterns (small ones give uniform rows).
    add(`${p}attention.self.query.weight`, [hidden, hidden], 0.6);
    add(`${p}attention.self.query.bias`, [hidden], 0.1);
    add(`${p}attention.self.key.weight`, [hidden, hidden], 0.6);
    add(`${p}attention.self.key.bias`, [hidden], 0.1);
    add(`${p}attention.self.value.weight`, [hidden, hidden], 0.2);
    add(`${p}attention.self.value.bias`, [hidden], 0);
    add(`${p}attention.output.dense.weight`, [hidden, hidden], 0.2);
    add(`${p}attention.output.dense.bias`, [hidden], 0);
    add(`${p}attention.output.LayerNorm.weight`, [hidden], 0, 1);
    add(`${p}attention.output.LayerNorm.bias`, [hidden], 0);
    add(`${p}intermediate.dense.weight`, [intermediate, hidden], 0.2);
    add(`${p}intermediate.dense.bias`, [intermediate], 0);
    add(`${p}output.dense.weight`, [hidden, intermediate], 0.2);
    add(`${p}output.dense.bias`, [hidden], 0);
    add(`${p}output.LayerNorm.weight`, [hidden], 0, 1);
    add(`${p}output.LayerNorm.bias`, [hidden], 0);
  }
  const config = {
    architectures: ['BertModel'], model_type: 'bert', vocab_size: V, hidden_size: hidden,
    num_hidden_layers: layers, num_attention_heads: heads, intermediate_size: intermediate,
    hidden_act: 'gelu', max_position_embeddings: positions, type_vocab_size: 2,
    layer_norm_eps: 1e-12, pad_token_id: 0,
  };
  writeFileSync(path.join(dir, 'config.json'), JSON.stringify(config, null, 2));
  writeFileSync(path.join(dir, 'model.safetensors'), serializeSafetensors(tensors, { format: 'pt' }));
  writeFileSync(path.join(dir, 'vocab.txt'), vocab.join('\n') + '\n');
  writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify({ do_lower_case: true }));
  return dir;
}

export function makeGoldenModel(dir) {
  mkdirSync(dir, { recursive: true });
  const src = path.join(root, 'tests/golden/bert');
  for (const f of ['config.json', 'model.safetensors']) copyFileSync(path.join(src, f), path.join(dir, f));
  writeFileSync(path.join(dir, 'vocab.txt'), vocabTokens(100).join('\n') + '\n');
  return dir;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [dir, kind = 'wide'] = process.argv.slice(2);
  if (!dir) {
    console.error('usage: node tests/e2e/make_test_model.mjs DIR [wide|golden]');
    process.exit(2);
  }
  (kind === 'golden' ? makeGoldenModel : makeWideModel)(path.resolve(dir));
  console.log(`wrote a ${kind} test model to ${dir}`);
}
