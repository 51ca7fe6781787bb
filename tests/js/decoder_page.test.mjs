// decoder_page.test.mjs: the page's pure parts for causal language models: tokens as text (web/decoder_text.js),
// the generation panel's progress reports and the attention that predicted a token (web/panel_generate.js), and
// the causal "cannot see" cells of a heatmap image (web/heatmap.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isCausal, readableToken, visibleToken } from '../../web/decoder_text.js';
import { generateArgs, predictingAttention, tokenReport } from '../../web/panel_generate.js';
import { CANNOT_SEE_RGB, SEQUENTIAL, matrixImage } from '../../web/heatmap.js';

test('tokens read as text: byte-level BPE and SentencePiece spaces, bytes, raw otherwise', () => {
  assert.equal(readableToken('\u0120world'), ' world');   // Ġworld
  assert.equal(readableToken('\u010a'), '\n');            // Ċ
  assert.equal(readableToken('\u00c3\u00a9'), '\u00e9');   // Ã© is é's two bytes
  assert.equal(readableToken('\u00f0\u0141'), '\\xF0\\x9F'); // half an emoji: its bytes
  assert.equal(readableToken('\u2581the'), ' the');        // ▁the
  assert.equal(readableToken('<0x0A>'), '\n');
  assert.equal(readableToken('<s>'), '<s>');
  assert.equal(visibleToken('\u010a'), '\u21b5');
  assert.equal(visibleToken(''), '\u2205');
  assert.ok(isCausal({ arch: 'gpt2', config: { causal: true } }) && !isCausal({ arch: 'bert', config: {} }) && !isCausal(null));
});

test('generation: token reports, the request, and the attention that predicted token s', () => {
  assert.deepEqual(tokenReport('token\t42\t hello\tworld'), { id: 42, text: ' hello\tworld' });
  assert.equal(tokenReport('prefill'), null);
  assert.deepEqual(generateArgs('m', { gprompt: 'Hi', gmax: 3, gtemp: '0.5', gtopk: 0, gtopp: '1', gseed: 9 }),
                   { model: 'm', text: 'Hi', max_new_tokens: 3, temperature: 0.5, top_k: 0, top_p: 1, seed: 9, alternatives: 5, attentions: true });
  // [n_new 3, NL 1, H 2, T 5] with a prompt of 2: row s-1 over positions 0..P+s-1
  const data = new Float32Array(3 * 2 * 5).map((_, i) => i);
  const t = { shape: [3, 1, 2, 5], data };
  assert.equal(predictingAttention(t, 0, 2), null, 'the first token was predicted by the prompt');
  const a = predictingAttention(t, 2, 2);
  assert.equal(a.len, 4);
  assert.deepEqual(a.rows.map((r) => [r.layer, r.head, r.weights]), [[0, 0, [10, 11, 12, 13]], [0, 1, [15, 16, 17, 18]]]);
});

test('a causal heatmap paints the cells above the diagonal "cannot see" and leaves the rest to the palette', () => {
  const ctx = { createImageData: (w, h) => ({ data: new Uint8ClampedArray(w * h * 4) }) };
  const m = new Float32Array([1, 0, 0.5, 0.5]);
  const img = matrixImage(ctx, m, 2, 2, { min: 0, max: 1, palette: SEQUENTIAL }, { causal: true });
  const px = (i) => Array.from(img.data.slice(4 * i, 4 * i + 3));
  assert.deepEqual(px(1), CANNOT_SEE_RGB);
  assert.deepEqual(px(0), SEQUENTIAL.rgb[255]);
  assert.deepEqual(px(2), SEQUENTIAL.rgb[128]);
  const plain = matrixImage(ctx, m, 2, 2, { min: 0, max: 1, palette: SEQUENTIAL });
  assert.deepEqual(Array.from(plain.data.slice(4, 7)), SEQUENTIAL.rgb[0], 'not causal: a 0 is a 0');
});
