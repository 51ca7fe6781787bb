/* lm_corpus.h: a corpus as a causal language model is scored on it (lm_corpus.c; docs/decoders.md "The
 * language-model head"). A corpus is a text file's documents (separated by blank lines) or a JSONL file's "text"
 * fields; each document is tokenized with the model's tokenizer (its own special tokens) and cut into windows of W
 * tokens, each predicting its tokens after the first (no context crosses a window's start). Every analysis that
 * scores a model on held-out text (the lm op, PAPA on a decoder, dropped layers, streaming) goes through here, so
 * they agree on what "the corpus's perplexity" is. Not public. */
#ifndef AL_METHODS_LM_CORPUS_H
#define AL_METHODS_LM_CORPUS_H

#include <stdint.h>

#include "../../attnlab.h"
#include "lm_score.h"

/* The documents of a corpus text: JSONL lines' "text" when the first non-blank line starts with '{', else runs of
 * non-blank lines. Each is a malloc'd string (al_lm_documents_free). Errors name `name` and the line. */
al_status al_lm_split_documents(const char *text, const char *name, char ***docs, int *n_docs, al_error *err);
void al_lm_documents_free(char **docs, int n_docs);

typedef struct al_lm_corpus {
    int n_docs;    /* documents */
    int n_windows; /* windows over all documents, in document order */
    int window;    /* W: the most tokens a window holds */
    int *doc;      /* [n_windows] the document a window comes from */
    int *len;      /* [n_windows] its tokens, 2 .. W */
    int32_t *ids;  /* [n_windows, W] its ids, pad_token_id after len */
} al_lm_corpus;

/* Tokenizes a corpus text for model and cuts it into windows of W >= 2 tokens (the lm op passes the model's
 * positions). Errors name `name` and the document. A document of one token predicts nothing and adds no window (it
 * still counts as a document, with no tokens). */
al_status al_lm_corpus_build(const al_model *model, const char *text, const char *name, int window,
                             al_lm_corpus *out, al_error *err);
void al_lm_corpus_free(al_lm_corpus *c);

/* The loss of one scoring: per document the summed nats and predicted tokens (the interval's units), per window
 * position i the nats summed over windows on the token after i (the loss by position), and the summary. */
typedef struct al_lm_corpus_loss {
    int n_docs, window;
    double *doc_nll;       /* [n_docs] */
    long long *doc_tokens; /* [n_docs] */
    double *pos_nll;       /* [window]: position i predicting token i + 1 */
    long long *pos_tokens; /* [window] */
    al_lm_summary summary;
} al_lm_corpus_loss;

al_status al_lm_corpus_loss_new(const al_lm_corpus *c, al_lm_corpus_loss *out, al_error *err);
void al_lm_corpus_loss_free(al_lm_corpus_loss *l);

/* Scores every window of c, batch_size windows per forward (right padded; a causal row reads only the real keys
 * before it and a product's entry does not depend on other rows, so the bits do not depend on batch_size:
 * tests/c/test_lm_ops.c; with params->policies every batch keeps W positions, the size of the policies' constant
 * matrices [W, W], which a causal row's keys before it do not see either). params as al_forward's (policies, pool, cancel); its progress, if any, is called once per
 * batch with stage "lm" and the fraction of windows done, never by the forward itself. out from
 * al_lm_corpus_loss_new (its sums are reset here). */
al_status al_lm_corpus_score(const al_model *model, const al_lm_corpus *c, const al_forward_params *params,
                             int batch_size, al_lm_corpus_loss *out, al_error *err);

#endif
