/* corpus_reply.h: what the ops that score a causal model on a corpus share (corpus_reply.c): the corpus read from a
 * request's "corpus" and "corpus_name" (al_fields_corpus), and a corpus's loss written into a reply, so the lm,
 * layers and streaming ops say "perplexity" the same way (docs/decoders.md). Not public. */
#ifndef AL_API_CORPUS_REPLY_H
#define AL_API_CORPUS_REPLY_H

#include "../methods/lm/lm_corpus.h"
#include "api_internal.h"

/* Refuses a model that is not a causal language model, naming the field 'model'. */
al_status al_api_require_causal(const al_api_model *m, al_error *err);

/* The request's corpus, cut into windows of the model's positions; *label is corpus_name or "corpus". Errors name
 * the field ('corpus': required, the model has no tokenizer) or the corpus and its document. */
al_status al_api_read_corpus(const al_op_ctx *ctx, const al_api_model *m, al_lm_corpus *out, const char **label,
                             al_error *err);
/* The same cut into windows of `window` tokens (>= 2; the streaming op's cache reads texts past the positions). */
al_status al_api_read_corpus_window(const al_op_ctx *ctx, const al_api_model *m, int window, al_lm_corpus *out,
                                    const char **label, al_error *err);

/* The summary object: documents, tokens, cross-entropy in nats and bits with the interval, perplexity. */
void al_api_put_lm_summary(al_reply_builder *rb, cJSON *obj, const al_lm_summary *s);
/* obj's "summary" and "bits_by_position" (position i predicting token i + 1, the mean over the windows that reach
 * it, in bits; null where none does). */
void al_api_put_corpus_loss(al_reply_builder *rb, cJSON *obj, const al_lm_corpus_loss *loss);

#endif
