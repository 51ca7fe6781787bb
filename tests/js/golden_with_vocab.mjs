// golden_with_vocab.mjs: a golden random-weight checkpoint (tests/golden/<family>: config.json and
// model.safetensors, no tokenizer) copied into dir with a WordPiece vocab.txt of its 100 ids written here, so the
// command line can run tasks on it (the ids only need to reach the model). Special tokens sit where the config
// puts them: [PAD] at pad_token_id (ModernBERT's golden: 3; DeBERTa's: 0), [MASK] for the MLM score.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const WORDS = ['the', 'a', 'of', 'to', 'and', 'in', 'is', 'was', 'for', 'on', 'that', 'with', 'as', 'by', 'it',
  'at', 'he', 'from', 'his', 'be', 'an', 'are', 'this', 'or', 'had', 'not', 'were', '.', ',', "'", '-', '(', ')'];

export function goldenWithVocab(root, family, dir) {
  const golden = path.join(root, 'tests/golden', family);
  mkdirSync(dir, { recursive: true });
  for (const f of ['config.json', 'model.safetensors']) copyFileSync(path.join(golden, f), path.join(dir, f));
  const config = JSON.parse(readFileSync(path.join(golden, 'config.json'), 'utf8'));
  const specials = ['[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  specials.splice(config.pad_token_id ?? 0, 0, '[PAD]');
  const vocab = [...specials, ...WORDS];
  for (let i = 0; vocab.length < config.vocab_size; i++) vocab.push('##' + String.fromCharCode(97 + (i % 26)).repeat(1 + Math.floor(i / 26)));
  writeFileSync(path.join(dir, 'vocab.txt'), vocab.join('\n') + '\n');
  return dir;
}
