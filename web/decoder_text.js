// decoder_text.js: what the page needs to show a causal language model's tokens: which models are causal, and
// a token as the text it stands for. No DOM access: node tests import this module.
//
// Byte-level BPE (GPT-2, Qwen2, GPT-NeoX, SmolLM2) writes each byte of the text as one printable character
// (docs/tokenizers.md): space is "Ġ", newline "Ċ". SentencePiece (Llama's tokenizer.model) writes a space as "▁"
// and a byte it has no piece for as "<0xNN>". readableToken undoes both so a token reads as text; the raw form
// stays for the tooltip.

// The families whose attention is causal and which have a language-model head (docs/decoders.md; the engine
// refuses the lm and generate ops for any other with a message naming the model).
export const CAUSAL_FAMILIES = new Set(['gpt2', 'llama', 'qwen2', 'gpt_neox']);

export const isCausal = (info) => !!info && CAUSAL_FAMILIES.has(info.arch);

// Byte-level BPE's table: the printable bytes stand for themselves, the others (controls, space, 127-160, 173)
// take the characters from U+0100 on, in byte order.
const CHAR_TO_BYTE = (() => {
  const map = new Map();
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
    map.set(String.fromCodePoint(printable ? b : next++), b);
  }
  return map;
})();

const utf8 = new TextDecoder('utf-8', { fatal: true });
const SP_BYTE = /^<0x([0-9A-Fa-f]{2})>$/;

// The bytes a byte-level token stands for, or null when one of its characters is not in the table.
function byteLevelBytes(token) {
  const out = [];
  for (const ch of token) {
    const b = CHAR_TO_BYTE.get(ch);
    if (b === undefined) return null;
    out.push(b);
  }
  return new Uint8Array(out);
}

// A token as text: "Ġworld" -> " world", "▁the" -> " the", "<0x0A>" -> "\n". A token that is part of a UTF-8
// character (a byte-level piece of an emoji) is shown as its bytes, "\xF0\x9F"; anything else as it is.
export function readableToken(token) {
  const t = String(token ?? '');
  const sp = SP_BYTE.exec(t);
  if (sp) {
    const b = Number.parseInt(sp[1], 16);
    return b < 128 ? String.fromCharCode(b) : `\\x${sp[1].toUpperCase()}`;
  }
  if (t.includes('\u2581')) return t.replaceAll('\u2581', ' ');
  const bytes = byteLevelBytes(t);
  if (!bytes) return t;
  try {
    return utf8.decode(bytes);
  } catch {
    return Array.from(bytes, (b) => (b < 128 ? String.fromCharCode(b) : `\\x${b.toString(16).toUpperCase().padStart(2, '0')}`)).join('');
  }
}

// What a token shows in a row of tokens (drawn with white-space: pre, so its spaces are spaces): line breaks and
// tabs as arrows, so a token is never an empty-looking box.
export function visibleToken(token) {
  return readableToken(token).replace(/\n/g, '\u21b5').replace(/\t/g, '\u21e5') || '\u2205';
}
