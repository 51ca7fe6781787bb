// run_notes.js: what the explorer tells a reader about the text it shows, in plain words: an empty
// text (the model would see only [CLS] and [SEP]), a text cut to the model's length (the caption then
// quotes only what the model read), and words split into pieces by a small vocabulary.
import { groupLabel, wordGroups } from './views.js';

export const EMPTY_TEXT = 'Type a sentence first: an empty text gives the model only its two special tokens ' +
  '[CLS] and [SEP], so there is no attention between words to show.';

export const NO_TOKENIZER = 'This model has no tokenizer files (vocab.txt, tokenizer.json, spm.model, tokenizer.model, or vocab.json ' +
  'with merges.txt), so it cannot read text. Load them together with config.json and the weights.';

export const isEmptyText = (text, pair) => !text.trim() && (pair === null || !pair.trim());

// The words the model read (its tokens put back together), for the caption of a truncated text.
export function readText(tokens, wordIds, typeIds) {
  const groups = wordGroups(tokens, wordIds, typeIds);
  const parts = [];
  let seg = typeIds?.[0] ?? 0;
  for (const g of groups) {
    if ((wordIds?.[g[0]] ?? 0) < 0) continue;
    if ((typeIds?.[g[0]] ?? 0) !== seg) {
      parts.push('\u2016');
      seg = typeIds[g[0]];
    }
    parts.push(groupLabel(tokens, g));
  }
  return parts.join(' ');
}

export function truncationNote(seq, maxTokens) {
  return `The text is longer than this model can read: only its first ${seq.n_tokens} tokens (the model\u2019s limit ` +
    `is ${maxTokens}) are shown, and the caption quotes only that part. Shorten the text to see all of it.`;
}

// One sentence where a split word shows: which word, and why a small model splits common words.
export function splitNote(tokens, wordIds, typeIds, vocabSize) {
  const groups = wordGroups(tokens, wordIds, typeIds).filter((g) => g.length > 1 && (wordIds?.[g[0]] ?? 0) >= 0);
  if (!groups.length) return null;
  const g = groups[0];
  const word = groupLabel(tokens, g);
  const pieces = g.map((i) => tokens[i]).join(' ');
  const size = vocabSize ? `${vocabSize.toLocaleString('en')} pieces` : 'few pieces';
  if (vocabSize && vocabSize >= 20000) {
    return `\u201c${word}\u201d is split into \u201c${pieces}\u201d: the model\u2019s vocabulary of ${size} keeps only frequent words whole.`;
  }
  return `\u201c${word}\u201d is split into \u201c${pieces}\u201d because this small model learned a vocabulary of only ${size} ` +
    'from a small corpus, so even common words are built from pieces (models such as bert-base-uncased have 30,522 and keep them whole).';
}
