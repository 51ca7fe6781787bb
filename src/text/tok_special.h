/* tok_special.h: which ids of a tokenizer are ordinary tokens (tok_vocab.c). An analysis that draws random text
 * (the head roles' repeated sequences, docs/measures.md "Head roles") draws from the others only. Not public. */
#ifndef AL_TEXT_TOK_SPECIAL_H
#define AL_TEXT_TOK_SPECIAL_H

#include "../attnlab.h"

/* 1 when id is no ordinary token: a special id (al_tokenizer_special_ids), <s> / </s>, an added token marked
 * special, a SentencePiece control, unknown or unused piece, or an id the vocabulary holds no token for; 0 for the
 * tokens text is made of. */
int al_tokenizer_is_special(const al_tokenizer *tok, int id);

#endif
