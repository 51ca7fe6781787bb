// decoder_tokenizer_oracle.test.mjs: the decoders' tokenizers (GPT-2, GPT-NeoX/Pythia, Qwen2, Llama) through the
// native helper build/<dir>/tool_tokenize against the Hugging Face JS tokenizers of node_modules, on the hard
// strings and pairs of hard_strings.mjs, and against the test vectors of ../shared/decoders/testvectors (made
// with a later version of the same library; tests/c/test_decoder_tokenizers.c checks them too). The real files
// are read from ../shared/decoders (or AL_DECODERS) and never copied into the repository: without them the
// tests skip. The counts of agreeing strings are printed; docs/tokenizers.md records them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PreTrainedTokenizer } from '@huggingface/transformers';
import { HARD_STRINGS, HARD_PAIRS } from './hard_strings.mjs';
import { TOOL, runTool } from './tool_tokenize.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DECODERS = process.env.AL_DECODERS || path.resolve(ROOT, '../shared/decoders');
const dec = (rel) => path.join(DECODERS, rel);
const readJSON = (rel) => JSON.parse(fs.readFileSync(dec(rel), 'utf8'));

const skip = !fs.existsSync(TOOL) ? `no ${TOOL} (build first or set AL_BUILD_DIR)`
  : !fs.existsSync(dec('testvectors/gpt2.json')) ? `no ${dec('testvectors')} (set AL_DECODERS)` : false;

// A folder holding the given shared files under the names the loader looks for (symbolic links: nothing copied).
function linkDir(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-dectok-'));
  for (const [name, rel] of Object.entries(files)) fs.symlinkSync(dec(rel), path.join(dir, name));
  return dir;
}

// The test vectors: ids without special tokens and with them, every case.
function checkVectors(dir, vectorFile) {
  const cases = readJSON(vectorFile).cases;
  const requests = cases.map((c) => ({ text: c.text }));
  const plain = runTool(dir, requests, ['--no-special']), special = runTool(dir, requests);
  let agree = 0;
  cases.forEach((c, i) => {
    if (JSON.stringify(plain[i].ids) === JSON.stringify(c.ids) &&
        JSON.stringify(special[i].ids) === JSON.stringify(c.ids_with_special)) agree++;
    else console.log('  differs:', JSON.stringify({ text: c.text, want: c.ids_with_special, ours: special[i].ids ?? special[i].error }));
  });
  console.log(`${vectorFile}: ${agree} of ${cases.length} agree`);
  return { agree, total: cases.length };
}

// The hard strings and pairs, with special tokens, against the JS library.
function compareJS(name, jsTok, dir) {
  const requests = [...HARD_STRINGS.map((text) => ({ text })), ...HARD_PAIRS.map(([text, text_pair]) => ({ text, text_pair }))];
  const ours = runTool(dir, requests);
  const failures = [];
  requests.forEach((req, i) => {
    const r = jsTok._encode_plus(req.text, { text_pair: req.text_pair ?? null, add_special_tokens: true });
    const js = r.input_ids.map(Number);
    if (ours[i].error || JSON.stringify(ours[i].ids) !== JSON.stringify(js)) failures.push({ req, js, ours: ours[i].error ?? ours[i].ids });
  });
  console.log(`${name}: ${requests.length - failures.length}/${requests.length} strings agree with the Hugging Face JS tokenizer`);
  for (const f of failures.slice(0, process.env.AL_ORACLE_SHOW ? 1000 : 5)) console.log('  differs:', JSON.stringify(f));
  return { total: requests.length, failures };
}

// The tokenizer JSON Hugging Face's converters build from vocab.json + merges.txt (GPT-2's pattern, or Qwen2's
// Split + NFC), with tokenizer_config.json's added tokens.
function bpeJSON(vocab, merges, config, qwen2) {
  const added = Object.entries(config.added_tokens_decoder ?? {}).map(([id, t]) => ({ id: Number(id), ...t }));
  if (!qwen2) added.push({ id: vocab['<|endoftext|>'], content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true });
  const pattern = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
  return {
    version: '1.0', truncation: null, padding: null, added_tokens: added,
    normalizer: qwen2 ? { type: 'NFC' } : null,
    pre_tokenizer: qwen2
      ? { type: 'Sequence', pretokenizers: [{ type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false }] }
      : { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    decoder: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false,
      byte_fallback: false, vocab, merges },
  };
}

function readMerges(rel) {
  return fs.readFileSync(dec(rel), 'utf8').split('\n').filter((l) => l && !l.startsWith('#version'));
}

const SETS = [
  { name: 'gpt2 vocab.json + merges.txt', files: { 'vocab.json': 'gpt2/vocab.json', 'merges.txt': 'gpt2/merges.txt', 'tokenizer_config.json': 'gpt2/tokenizer_config.json' },
    vectors: 'testvectors/gpt2.json',
    js: () => new PreTrainedTokenizer(bpeJSON(readJSON('gpt2/vocab.json'), readMerges('gpt2/merges.txt'), {}, false), {}) },
  { name: 'gpt2 tokenizer.json', files: { 'tokenizer.json': 'gpt2/tokenizer.json', 'tokenizer_config.json': 'gpt2/tokenizer_config.json' },
    vectors: 'testvectors/gpt2.json', js: () => new PreTrainedTokenizer(readJSON('gpt2/tokenizer.json'), readJSON('gpt2/tokenizer_config.json')) },
  { name: 'gpt-neox-20b 20B_tokenizer.json', files: { 'tokenizer.json': 'gpt-neox-20b/20B_tokenizer.json' }, vectors: 'testvectors/pythia.json',
    js: () => new PreTrainedTokenizer(readJSON('gpt-neox-20b/20B_tokenizer.json'), {}) },
  { name: 'qwen2.5-0.5b vocab.json + merges.txt',
    files: { 'vocab.json': 'qwen2.5-0.5b/vocab.json', 'merges.txt': 'qwen2.5-0.5b/merges.txt', 'tokenizer_config.json': 'qwen2.5-0.5b/tokenizer_config.json' },
    vectors: 'testvectors/qwen2.5-0.5b.json',
    js: () => {
      const config = readJSON('qwen2.5-0.5b/tokenizer_config.json');
      return new PreTrainedTokenizer(bpeJSON(readJSON('qwen2.5-0.5b/vocab.json'), readMerges('qwen2.5-0.5b/merges.txt'), config, true), config);
    } },
  { name: 'llama-spm tokenizer.model', files: { 'tokenizer.model': 'llama-spm/tokenizer.model' }, vectors: 'testvectors/tinyllama-1.1b.json',
    js: () => new PreTrainedTokenizer(readJSON('tinyllama-1.1b/tokenizer.json'), readJSON('tinyllama-1.1b/tokenizer_config.json')) },
  { name: 'tinyllama-1.1b tokenizer.json',
    files: { 'tokenizer.json': 'tinyllama-1.1b/tokenizer.json', 'tokenizer_config.json': 'tinyllama-1.1b/tokenizer_config.json' },
    vectors: 'testvectors/tinyllama-1.1b.json',
    js: () => new PreTrainedTokenizer(readJSON('tinyllama-1.1b/tokenizer.json'), readJSON('tinyllama-1.1b/tokenizer_config.json')) },
];

for (const set of SETS) {
  test(`${set.name}: the test vectors and the HF JS tokenizer`, { skip }, () => {
    const dir = linkDir(set.files);
    try {
      const v = checkVectors(dir, set.vectors);
      assert.equal(v.agree, v.total);
      const js = compareJS(`${set.name} (hard strings)`, set.js(), dir);
      assert.ok(js.total >= 300);
      assert.deepEqual(js.failures.map((f) => f.req), []);
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  });
}
