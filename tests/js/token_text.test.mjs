// token_text.test.mjs: web/token_text.js, a token as people read it: byte-level BPE's "Ġ" and its byte
// alphabet, SentencePiece's "▁", special tokens and WordPiece left as they are.
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { readableToken, tokenWithRaw } from '../../web/token_text.js';

test('byte-level BPE: the space marker goes, the bytes are decoded, a space or a newline alone is a sign', () => {
  assert.equal(readableToken('\u0120cat', 'bpe'), 'cat');
  assert.equal(readableToken('\u0120caf\u00c3\u00a9', 'bpe'), 'caf\u00e9'); // "é" is the bytes C3 A9
  assert.equal(readableToken('ing', 'bpe'), 'ing');
  assert.equal(readableToken('\u0120', 'bpe'), '\u2423');
  assert.equal(readableToken('\u010a', 'bpe'), '\u21b5'); // a newline
  assert.equal(readableToken('\u00c3', 'bpe'), '\u00c3', 'half a character stays raw');
  assert.equal(readableToken('<s>', 'bpe'), '<s>');
  assert.equal(tokenWithRaw('\u0120cat', 'bpe'), 'cat (\u0120cat)');
  assert.equal(tokenWithRaw('cat', 'bpe'), 'cat');
});

test('SentencePiece: "▁" is a word\u2019s start; special tokens and byte pieces stay; WordPiece is left alone', () => {
  assert.equal(readableToken('\u2581the', 'unigram'), 'the');
  assert.equal(readableToken('\u2581', 'unigram'), '\u2423');
  assert.equal(readableToken('\u2581new\u2581york', 'unigram'), 'new york');
  assert.equal(readableToken('\u2581hello', 'bpe'), 'hello', 'SentencePiece BPE');
  assert.equal(readableToken('[CLS]', 'unigram'), '[CLS]');
  assert.equal(readableToken('<0xE9>', 'unigram'), '<0xE9>');
  assert.equal(readableToken('##ing', 'wordpiece'), '##ing');
  assert.equal(readableToken('\u0120odd', 'wordpiece'), '\u0120odd');
  assert.equal(readableToken('\u2581x', undefined), '\u2581x', 'no kind: raw');
});
