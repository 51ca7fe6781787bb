// decoder_text.js: what the page needs to show a causal language model's tokens: which models are causal, and
// a token as the text it stands for. No DOM access: node tests import this module.
//
// A token reads as the text it stands for (token_text.js's pieceText: byte-level BPE's "Ġ", SentencePiece's "▁"
// and "<0xNN>"); the raw form stays for the tooltip.

import { pieceText } from './token_text.js';

// A causal language model: the engine's info reply says so (its config's "causal", docs/decoders.md); the page keeps
// no list of families of its own.
export const isCausal = (info) => !!info?.config?.causal;

// A token as text: "Ġworld" -> " world", "▁the" -> " the", "<0x0A>" -> "\n"; the rule is token_text.js's.
export const readableToken = pieceText;

// What a token shows in a row of tokens (drawn with white-space: pre, so its spaces are spaces): line breaks and
// tabs as arrows, so a token is never an empty-looking box.
export function visibleToken(token) {
  return readableToken(token).replace(/\n/g, '\u21b5').replace(/\t/g, '\u21e5') || '\u2205';
}
