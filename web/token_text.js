// token_text.js: a token as people read it. Tokenizers mark a word's start in the piece itself: byte-level
// BPE (GPT-2, RoBERTa) writes every byte as a printable character, a space as "Ġ" (U+0120) and a newline as
// "Ċ"; SentencePiece writes a space as "▁" (U+2581). Labels show the piece without its marker, its bytes
// decoded (byte-level "cafÃ©" reads "café"); a piece that is only a space or a newline shows "␣" or "↵".
// The raw piece stays what the engine returned (exports, links, tests) and is shown beside the readable
// one on hover. WordPiece's "##" continuation is readable as it is and stays.
// kind: the tokenizer's kind as the engine names it (model info: "wordpiece", "bpe", "unigram").

// GPT-2's bytes_to_unicode: printable bytes stand for themselves, the others for U+0100 upwards in order.
const BYTE_OF = new Map();
{
  const printable = (b) => (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
  let next = 256;
  for (let b = 0; b < 256; b++) BYTE_OF.set(printable(b) ? b : next++, b);
}
const utf8 = new TextDecoder('utf-8', { fatal: true });

// A byte-level piece's bytes, or null when one of its characters is outside the byte alphabet.
function pieceBytes(piece) {
  const bytes = [];
  for (const ch of piece) {
    const b = BYTE_OF.get(ch.codePointAt(0));
    if (b === undefined) return null;
    bytes.push(b);
  }
  return new Uint8Array(bytes);
}

const hexByte = (b) => `\\x${b.toString(16).toUpperCase().padStart(2, '0')}`;

// A byte-level piece's text, or null when it is not one (a character outside the byte alphabet, or bytes
// that are not whole UTF-8: a character split between two pieces stays raw).
function bytesText(piece) {
  const bytes = pieceBytes(piece);
  if (!bytes) return null;
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

// The text a piece stands for, spaces kept (the language-model panels show tokens side by side as the text they
// make): SentencePiece's "▁" is a space and "<0xNN>" its byte; a byte-level piece's bytes decoded, or, when they are
// part of a UTF-8 character (a piece of an emoji), written "\xF0\x9F"; anything else as it is.
export function pieceText(raw) {
  const t = String(raw ?? '');
  const sp = /^<0x([0-9A-Fa-f]{2})>$/.exec(t);
  if (sp) {
    const b = Number.parseInt(sp[1], 16);
    return b < 128 ? String.fromCharCode(b) : hexByte(b);
  }
  if (t.includes('\u2581')) return t.replaceAll('\u2581', ' ');
  const bytes = pieceBytes(t);
  if (!bytes) return t;
  try {
    return utf8.decode(bytes);
  } catch {
    return Array.from(bytes, (b) => (b < 128 ? String.fromCharCode(b) : hexByte(b))).join('');
  }
}

// The piece's text with its leading space (or newline) read as a word's start.
function shown(text) {
  if (text === '') return text;
  if (/^\s+$/.test(text)) return text.includes('\n') ? '\u21b5' : '\u2423';
  return text.replace(/^ /, '').replace(/\n/g, '\u21b5');
}

export function readableToken(raw, kind) {
  if (typeof raw !== 'string' || kind === 'wordpiece' || !kind) return raw;
  if (/^\[[A-Z]+\]$|^<[^<>]*>$/.test(raw)) return raw; // special tokens and SentencePiece's <0xNN> bytes
  if (raw.includes('\u2581')) return shown(raw.replace(/\u2581/g, ' '));
  if (kind === 'bpe') {
    const text = bytesText(raw);
    if (text !== null) return shown(text);
  }
  return raw;
}

// A token for a tooltip: the readable form, and the raw piece beside it when they differ.
export function tokenWithRaw(raw, kind) {
  const text = readableToken(raw, kind);
  return text === raw ? raw : `${text} (${raw})`;
}
