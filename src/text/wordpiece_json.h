/* wordpiece_json.h: a WordPiece vocabulary (vocab.txt, one token a line) written as a Hugging Face tokenizer.json
 * (wordpiece_json.c; docs/decoder_pretraining.md, "Data and tokenizer"). attnlab's decoder reads text as BERT does
 * (lower-cased, split on whitespace and punctuation, ## continuations) but adds no special tokens around it, which
 * a vocab.txt cannot say: tokenizer.json's post_processor null does, for attnlab's loader and for the Hugging Face
 * tokenizers alike. Not public. */
#ifndef AL_TEXT_WORDPIECE_JSON_H
#define AL_TEXT_WORDPIECE_JSON_H

#include <stddef.h>

#include "../attnlab.h"

/* The tokenizer.json of vocab [len] (named `name` in errors): BertNormalizer (lower case, clean text, Chinese
 * characters spaced, accents stripped as lower-casing does), BertPreTokenizer, WordPiece with [UNK] and "##", the
 * bracketed tokens [PAD] [UNK] [CLS] [SEP] [MASK] present in the vocabulary as special added tokens, no
 * post-processor. *out is malloc'd text. */
al_status al_wordpiece_tokenizer_json(const char *vocab, size_t len, const char *name, char **out, al_error *err);

#endif
