// family_tokenizers.mjs: tokenizers written for the random-weight goldens of tests/golden (vocabulary 100), whose
// ids are the golden's token ids: a Unigram tokenizer.json and a SentencePiece spm.model over the same pieces.
// families.test.mjs gives them to the page with the golden checkpoints.

// The tokenizer's pieces: ids 0-3 the specials DeBERTa-v3 has there, 4 the mask token (the MLM score needs one;
// no golden row used here holds id 4); every id in `words` (the golden ids a test types) is the word "t<i>", so
// the text "t41 t46" reads as 41 46; the highest other ids are "▁" and the letters a-z, so English text (a
// PAPA task) reads as letters the MLM score can mask instead of [UNK]; the rest are unused words "t<i>".
export const V = 100;
export const SPECIALS = ['[PAD]', '[CLS]', '[SEP]', '[UNK]', '[MASK]'];
const LETTERS = ['\u2581', ...'abcdefghijklmnopqrstuvwxyz'];
export function pieces(words) {
  const out = Array.from({ length: V }, (_, i) => (i < SPECIALS.length ? SPECIALS[i] : `\u2581t${i}`));
  let at = V;
  for (const letter of LETTERS) {
    do at--; while (words.has(at));
    if (at < SPECIALS.length) throw new Error('family_tokenizers: no room for the letters');
    out[at] = letter;
  }
  return out;
}
const scoreOf = (piece, i) => (i < SPECIALS.length ? 0 : piece.length > 2 ? -1 : -2);
export const textOf = (ids) => ids.map((i) => `t${i}`).join(' ');

// A tokenizer.json with a Unigram model over those pieces. Without a post-processor the ids are the text's words
// and nothing else, as the golden's inputs are; with specials, [CLS] A [SEP] (B [SEP]) as ModernBERT's
// tokenizer.json adds them (PAPA's layout needs the separator).
const special = (id) => ({ SpecialToken: { id, type_id: 0 } });
const sequence = (id) => ({ Sequence: { id, type_id: 0 } });
const TEMPLATE = {
  type: 'TemplateProcessing',
  single: [special('[CLS]'), sequence('A'), special('[SEP]')],
  pair: [special('[CLS]'), sequence('A'), special('[SEP]'), sequence('B'), special('[SEP]')],
  special_tokens: { '[CLS]': { id: '[CLS]', ids: [1], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [2], tokens: ['[SEP]'] } },
};

export function unigramJson({ specials = false, words }) {
  const list = pieces(words);
  return JSON.stringify({
    version: '1.0',
    added_tokens: SPECIALS.map((content, id) => ({ id, content, single_word: false, lstrip: false, rstrip: false,
                                                   normalized: false, special: true })),
    normalizer: null, post_processor: specials ? TEMPLATE : null, decoder: null,
    pre_tokenizer: { type: 'Metaspace', replacement: '\u2581', prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: 3, byte_fallback: false,
             vocab: list.map((piece, i) => [piece, scoreOf(piece, i)]) },
  });
}

// spm.model (SentencePiece's ModelProto in protobuf wire format) with the same pieces, the specials as
// control / unknown pieces (the layout scripts/spm_fixture.py writes, without a charsmap).
export function spmModel({ words }) {
  const list = pieces(words);
  const varint = (n) => {
    const out = [];
    do {
      out.push((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
      n >>>= 7;
    } while (n);
    return out;
  };
  const fieldVarint = (num, v) => [...varint(num << 3), ...varint(v)];
  const fieldBytes = (num, data) => {
    const bytes = typeof data === 'string' ? [...new TextEncoder().encode(data)] : data;
    return [...varint((num << 3) | 2), ...varint(bytes.length), ...bytes];
  };
  const fieldFloat = (num, v) => {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    return [...varint((num << 3) | 5), ...b];
  };
  const NORMAL = 1, UNKNOWN = 2, CONTROL = 3;
  const out = [];
  for (let i = 0; i < V; i++) {
    const type = i === 3 ? UNKNOWN : i < SPECIALS.length ? CONTROL : NORMAL;
    out.push(...fieldBytes(1, [...fieldBytes(1, list[i]), ...fieldFloat(2, scoreOf(list[i], i)), ...fieldVarint(3, type)]));
  }
  out.push(...fieldBytes(2, [...fieldVarint(3, 1), ...fieldVarint(35, 0), ...fieldVarint(40, 3)]));
  out.push(...fieldBytes(3, [...fieldBytes(1, 'nmt_nfkc'), ...fieldVarint(3, 1), ...fieldVarint(4, 1), ...fieldVarint(5, 1)]));
  return Buffer.from(out);
}

