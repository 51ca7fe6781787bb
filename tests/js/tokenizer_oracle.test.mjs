// tokenizer_oracle.test.mjs: our tokenizers (through the native helper build/<dir>/tool_tokenize)
// against the Hugging Face JS tokenizers, offline: the tokenizer JSON is built here from vocab.txt
// (bert-base-uncased's, which models/attnlab-small-bert uses, and a small vocabulary written here) and from the
// byte-level BPE fixture tests/fixtures/tokenizers/bpe_small. Ids are compared exactly; the counts
// of agreeing strings are printed. Where the JS library and Python's tokenizers differ, the JS
// library is the reference (see src/text/tok_wordpiece.c for the cases).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PreTrainedTokenizer } from '@huggingface/transformers';
import { HARD_STRINGS, HARD_PAIRS } from './hard_strings.mjs';
import { TOOL, runTool } from './tool_tokenize.mjs';
import { spawnSync } from 'node:child_process';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// bert-base-uncased's WordPiece vocabulary, which the larger embedded model uses (its model card).
const BERT_VOCAB = path.join(ROOT, 'models/attnlab-small-bert/vocab.txt');
const BPE_DIR = path.join(ROOT, 'tests/fixtures/tokenizers/bpe_small');

// A small WordPiece vocabulary whose pieces reach characters bert-base-uncased's leaves whole.
const SMALL_VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]', ...'!"#$%&\'()*+,-./0123456789:;<=>?@[\\]^_`{|}~',
  ...'abcdefghijklmnopqrstuvwxyz', ...'abcdefghijklmnopqrstuvwxyz'.split('').map((c) => '##' + c), 'the', 'quick', 'brown',
  'fox', 'hello', 'world', 'cafe', 'test', '##s', '##ing', '##ed', 'un', '##believ', '##able', '你', '好', 'σ', 'ς', 'α',
  'é', '##é', '1', '##2', '##3', 'token', '##ization', 'a', 'an', 'at', '##tention'];

function dedupe(list) {
  return [...new Set(list)];
}

function specialAdded(tokens, vocab, lstripMask = false) {
  return tokens.filter((t) => t in vocab).map((t) => ({
    id: vocab[t], content: t, single_word: false, lstrip: lstripMask && t === '<mask>', rstrip: false,
    normalized: false, special: true,
  })).sort((a, b) => a.id - b.id);
}

function wordpieceJSON(vocabList) {
  const vocab = Object.fromEntries(vocabList.map((t, i) => [t, i]));
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: specialAdded(['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'], vocab),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

function bpeJSON(vocab, merges) {
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: specialAdded(['<s>', '<pad>', '</s>', '<unk>', '<mask>'], vocab, true),
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'RobertaProcessing', sep: ['</s>', vocab['</s>']], cls: ['<s>', vocab['<s>']], trim_offsets: true, add_prefix_space: false },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab, merges },
  };
}

function jsEncode(tok, text, pair) {
  const r = tok._encode_plus(text, { text_pair: pair ?? null, add_special_tokens: true, return_token_type_ids: true });
  return { ids: r.input_ids.map(Number), type_ids: r.token_type_ids ? r.token_type_ids.map(Number) : null };
}

function compare(name, jsTok, dir, { typeIds }) {
  const requests = [...HARD_STRINGS.map((text) => ({ text })), ...HARD_PAIRS.map(([text, text_pair]) => ({ text, text_pair }))];
  const ours = runTool(dir, requests);
  let agree = 0;
  const failures = [];
  requests.forEach((req, i) => {
    const ref = jsEncode(jsTok, req.text, req.text_pair);
    const got = ours[i];
    const same = !got.error && JSON.stringify(got.ids) === JSON.stringify(ref.ids) &&
      (!typeIds || !ref.type_ids || JSON.stringify(got.type_ids) === JSON.stringify(ref.type_ids));
    if (same) agree++;
    else failures.push({ req, js: ref.ids, ours: got.error ?? got.ids });
  });
  console.log(`${name}: ${agree}/${requests.length} strings agree with the Hugging Face JS tokenizer`);
  for (const f of failures.slice(0, process.env.AL_ORACLE_SHOW ? 1000 : 10)) console.log('  differs:', JSON.stringify(f));
  return { agree, total: requests.length, failures };
}

const haveTool = fs.existsSync(TOOL);
const skip = haveTool ? false : `no ${TOOL} (build first or set AL_BUILD_DIR)`;

function tmpDir(files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-tok-'));
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  return dir;
}

for (const [name, readVocab] of [['bert-base-uncased', () => fs.readFileSync(BERT_VOCAB, 'utf8')],
                                 ['small', () => dedupe(SMALL_VOCAB).join('\n') + '\n']]) {
  test(`WordPiece (vocab.txt and tokenizer.json, ${name} vocabulary) matches the HF JS tokenizer`, { skip }, () => {
    const vocabText = readVocab();
    const vocabList = vocabText.split('\n');
    if (vocabList[vocabList.length - 1] === '') vocabList.pop();
    const json = wordpieceJSON(vocabList);
    const jsTok = new PreTrainedTokenizer(json, { do_lower_case: true, model_max_length: 512 });
    const txtDir = tmpDir({ 'vocab.txt': vocabText });
    const jsonDir = tmpDir({ 'tokenizer.json': JSON.stringify(json) });
    try {
      const a = compare(`WordPiece vocab.txt (${vocabList.length} tokens)`, jsTok, txtDir, { typeIds: true });
      const b = compare('WordPiece tokenizer.json', jsTok, jsonDir, { typeIds: true });
      assert.ok(a.total >= 300);
      assert.deepEqual(a.failures.map((f) => f.req), []);
      assert.deepEqual(b.failures.map((f) => f.req), []);
    } finally {
      fs.rmSync(txtDir, { recursive: true });
      fs.rmSync(jsonDir, { recursive: true });
    }
  });
}

test('byte-level BPE (vocab.json + merges.txt and tokenizer.json) matches the HF JS tokenizer', { skip }, () => {
  const vocab = JSON.parse(fs.readFileSync(path.join(BPE_DIR, 'vocab.json'), 'utf8'));
  const merges = fs.readFileSync(path.join(BPE_DIR, 'merges.txt'), 'utf8').split('\n').filter((l) => l && !l.startsWith('#version'));
  const json = bpeJSON(vocab, merges);
  const jsTok = new PreTrainedTokenizer(json, {});
  const jsonDir = tmpDir({ 'tokenizer.json': JSON.stringify(json) });
  try {
    const a = compare(`BPE vocab.json + merges.txt (${Object.keys(vocab).length} tokens, ${merges.length} merges)`, jsTok, BPE_DIR, { typeIds: false });
    const b = compare('BPE tokenizer.json', jsTok, jsonDir, { typeIds: false });
    assert.ok(a.total >= 300);
    assert.deepEqual(a.failures.map((f) => f.req), []);
    assert.deepEqual(b.failures.map((f) => f.req), []);
  } finally {
    fs.rmSync(jsonDir, { recursive: true });
  }
});

// The real files of the DeBERTa-v3 and ModernBERT families (docs/tokenizers.md): ../shared/families from the
// repository's root, or AL_FAMILIES; never part of the repository, so their tests skip without them.
const FAMILIES = process.env.AL_FAMILIES || path.resolve(ROOT, '../shared/families');
const MODERNBERT = path.join(FAMILIES, 'modernbert/tokenizer.json');

test('ModernBERT tokenizer.json (byte-level BPE, NFC, 116 added tokens, [CLS] $A [SEP]) matches the HF JS tokenizer',
  { skip: skip || (!fs.existsSync(MODERNBERT) && `no ${MODERNBERT}`) }, () => {
    const json = JSON.parse(fs.readFileSync(MODERNBERT, 'utf8'));
    const config = JSON.parse(fs.readFileSync(path.join(FAMILIES, 'modernbert/tokenizer_config.json'), 'utf8'));
    const jsTok = new PreTrainedTokenizer(json, config);
    const dir = tmpDir({ 'tokenizer.json': JSON.stringify(json) });
    try {
      const known = runTool(dir, [{ text: 'The cat sat on the mat.' }, { text: 'Hello world' }]);
      assert.deepEqual(known[0].ids, [50281, 510, 5798, 2206, 327, 253, 1111, 15, 50282]);
      assert.deepEqual(known[1].ids, [50281, 12092, 1533, 50282]);
      const a = compare('ModernBERT tokenizer.json', jsTok, dir, { typeIds: true });
      assert.ok(a.total >= 300);
      assert.deepEqual(a.failures.map((f) => f.req), []);
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  });

// spm.model's pieces, scores, byte_fallback and precompiled charsmap, read with a few lines of protobuf
// wire format (fields of sentencepiece_model.proto), to write the tokenizer.json Hugging Face's
// DebertaV2Converter makes of it.
function readSpm(buf) {
  function* fields(b, from, to) {
    let p = from;
    const varint = () => { let x = 0n, s = 0n; for (;;) { const c = b[p++]; x |= BigInt(c & 0x7f) << s; s += 7n; if (!(c & 0x80)) return x; } };
    while (p < to) {
      const key = Number(varint()), num = key >> 3, wire = key & 7;
      if (wire === 0) yield { num, value: varint() };
      else if (wire === 5) { yield { num, f32: b.readFloatLE(p) }; p += 4; }
      else if (wire === 1) p += 8;
      else if (wire === 2) { const len = Number(varint()); yield { num, from: p, to: p + len }; p += len; }
      else throw new Error(`spm.model: wire type ${wire}`);
    }
  }
  const pieces = [];
  let charsmap = null, byteFallback = false;
  for (const f of fields(buf, 0, buf.length)) {
    if (f.num === 1) {
      const piece = { piece: '', score: 0, type: 1 };
      for (const g of fields(buf, f.from, f.to)) {
        if (g.num === 1) piece.piece = buf.subarray(g.from, g.to).toString('utf8');
        else if (g.num === 2) piece.score = g.f32;
        else if (g.num === 3) piece.type = Number(g.value);
      }
      pieces.push(piece);
    } else if (f.num === 2) {
      for (const g of fields(buf, f.from, f.to)) if (g.num === 35) byteFallback = g.value !== 0n;
    } else if (f.num === 3) {
      for (const g of fields(buf, f.from, f.to)) if (g.num === 2) charsmap = buf.subarray(g.from, g.to);
    }
  }
  return { pieces, charsmap, byteFallback };
}

function debertaUnigramJSON(spm, addedTokens) {
  const { pieces, charsmap, byteFallback } = spm;
  const special = (content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
  const ids = Object.fromEntries(pieces.map((p, i) => [p.piece, i]));
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [...['[PAD]', '[CLS]', '[SEP]', '[UNK]'].map((t) => special(t, ids[t])),
      ...Object.entries(addedTokens).map(([t, id]) => special(t, id))],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Strip', strip_left: true, strip_right: true },
      { type: 'Precompiled', precompiled_charsmap: Buffer.from(charsmap).toString('base64') },
      { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true }] },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [ids['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [ids['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: ids['[UNK]'], vocab: pieces.map((p) => [p.piece, p.score]), byte_fallback: byteFallback },
  };
}

const DEBERTA = path.join(FAMILIES, 'deberta-v3');
const VECTORS = path.join(FAMILIES, 'testvectors/fib_models--microsoft--deberta-v3-base.json');

test('DeBERTa-v3: a Unigram tokenizer.json built from spm.model gives the ids of spm.model and of the test vectors; the HF JS tokenizer compared',
  { skip: skip || (!fs.existsSync(path.join(DEBERTA, 'spm.model')) && `no ${DEBERTA}/spm.model`) }, () => {
    const addedTokens = JSON.parse(fs.readFileSync(path.join(DEBERTA, 'added_tokens.json'), 'utf8'));
    const json = debertaUnigramJSON(readSpm(fs.readFileSync(path.join(DEBERTA, 'spm.model'))), addedTokens);
    const jsonDir = tmpDir({ 'tokenizer.json': JSON.stringify(json) });
    const spmDir = tmpDir({});
    for (const f of ['spm.model', 'added_tokens.json', 'tokenizer_config.json', 'special_tokens_map.json'])
      fs.copyFileSync(path.join(DEBERTA, f), path.join(spmDir, f));
    try {
      const vectors = JSON.parse(fs.readFileSync(VECTORS, 'utf8')).datasets;
      const fromJson = runTool(jsonDir, vectors.map((v) => ({ text: v.input })));
      const vectorsEqual = vectors.filter((v, i) => JSON.stringify(fromJson[i].ids) === JSON.stringify(v.ids)).length;
      console.log(`Unigram tokenizer.json: ${vectorsEqual}/${vectors.length} deberta-v3-base test vectors equal`);
      assert.equal(vectorsEqual, vectors.length);
      const requests = [...HARD_STRINGS.map((text) => ({ text })), ...HARD_PAIRS.map(([text, text_pair]) => ({ text, text_pair }))];
      const a = runTool(jsonDir, requests), b = runTool(spmDir, requests);
      const same = requests.filter((r, i) => JSON.stringify(a[i]) === JSON.stringify(b[i])).length;
      console.log(`Unigram tokenizer.json vs spm.model: ${same}/${requests.length} hard strings give the same encoding`);
      for (const [i, r] of requests.entries()) if (JSON.stringify(a[i]) !== JSON.stringify(b[i]) && i < 2000) console.log('  differs:', JSON.stringify(r), JSON.stringify(a[i].ids), JSON.stringify(b[i].ids));
      assert.equal(same, requests.length);
      const jsTok = new PreTrainedTokenizer(json, { model_max_length: 512 });
      const js = compare('DeBERTa-v3 Unigram tokenizer.json', jsTok, jsonDir, { typeIds: true });
      const jsVectors = vectors.filter((v) => JSON.stringify(jsEncode(jsTok, v.input).ids) === JSON.stringify(v.ids)).length;
      console.log(`HF JS tokenizer: ${jsVectors}/${vectors.length} deberta-v3-base test vectors equal`);
      assert.ok(js.total >= 300);
    } finally {
      fs.rmSync(jsonDir, { recursive: true });
      fs.rmSync(spmDir, { recursive: true });
    }
  });

// The embedded decoder's tokenizer (docs/decoder_pretraining.md, "Data and tokenizer"): attnlab-mini-bert's WordPiece
// vocabulary written as tokenizer.json without a post-processor by the checkpoint writer's function
// (src/text/wordpiece_json.c, through tests/c/tool_wordpiece_json.c). attnlab and the HF JS tokenizer read it alike,
// and neither adds [CLS] or [SEP] around a text.
test('a decoder tokenizer.json from attnlab-mini-bert\'s vocab.txt: no special tokens added, as the HF JS tokenizer reads it',
  { skip }, () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'al-dec-wp-'));
    try {
      const writer = path.join(path.dirname(TOOL), 'tool_wordpiece_json');
      const res = spawnSync(writer, [path.join(ROOT, 'models/attnlab-mini-bert/vocab.txt'), dir], { encoding: 'utf8' });
      assert.equal(res.status, 0, res.stderr);
      const json = JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer.json'), 'utf8'));
      assert.equal(json.post_processor, null);
      const js = new PreTrainedTokenizer(json, {});
      const ours = runTool(dir, HARD_STRINGS.map((text) => ({ text })));
      const failures = [];
      HARD_STRINGS.forEach((text, i) => {
        const want = js._encode_plus(text, { add_special_tokens: true }).input_ids.map(Number);
        if (ours[i].error || JSON.stringify(ours[i].ids) !== JSON.stringify(want)) failures.push({ text, want, ours: ours[i].error ?? ours[i].ids });
      });
      console.log(`decoder WordPiece tokenizer.json: ${HARD_STRINGS.length - failures.length}/${HARD_STRINGS.length} strings agree`);
      for (const f of failures.slice(0, 5)) console.log('  differs:', JSON.stringify(f));
      assert.deepEqual(failures, []);
      const [plain] = runTool(dir, [{ text: 'The man walked into the room.' }]);
      const cls = json.model.vocab['[CLS]'], sep = json.model.vocab['[SEP]'];
      assert.ok(plain.ids.length >= 6 && !plain.ids.includes(cls) && !plain.ids.includes(sep), JSON.stringify(plain.ids));
    } finally {
      fs.rmSync(dir, { recursive: true });
    }
  });
