/* lm_score.h: a causal model's next-token predictions over a batch (lm_score.c, docs/decoders.md "The language-model
 * head"): each position's loss on the token that follows, the entropy of its prediction and its top-k tokens, and
 * the corpus's cross-entropy with a 95% interval over documents. Not public. */
#ifndef AL_METHODS_LM_SCORE_H
#define AL_METHODS_LM_SCORE_H

#include "../../attnlab.h"

/* Per position of a [B, L] batch (position i predicts token i + 1): filled for every real position with a real
 * successor, else nll = entropy = NAN and top ids -1. */
typedef struct al_lm_rows {
    int top_k;
    float *nll;       /* [B, L] -log p(token i+1 | tokens <= i), nats */
    float *entropy;   /* [B, L] of the prediction at i, nats */
    int32_t *top_ids; /* [B, L, top_k] most probable next tokens, best first (ties: lower id first) */
    float *top_p;     /* [B, L, top_k] their probabilities */
} al_lm_rows;

/* Allocates rows for a [B, L] batch (top_k >= 0); al_lm_rows_free releases them. */
al_status al_lm_rows_new(int B, int L, int top_k, al_lm_rows *out, al_error *err);
void al_lm_rows_free(al_lm_rows *r);

/* Runs the batch (policies and pool as al_forward's; params may be NULL) and fills rows. The log-softmax runs in
 * double with src/core/det_math.h's exp and log, so every build gives the same bits. */
al_status al_lm_score(const al_model *model, const al_batch *batch, const al_forward_params *params, al_lm_rows *rows,
                      al_error *err);

/* The same, and the forward's other outputs the caller asks for in also (its attentions, values, ...; its
 * hidden_states are the scoring's own and ignored): one forward where a caller needs the losses and more (head
 * roles' repeats). also may be NULL. */
al_status al_lm_score_outputs(const al_model *model, const al_batch *batch, const al_forward_params *params,
                              al_lm_rows *rows, const al_forward_outputs *also, al_error *err);

/* One row of logits [V]: the nll of target (-1: none, NAN), the entropy and the top k (top_ids, top_p [k]; k may be
 * 0), as al_lm_score fills a position; a cache that reads a token at a time (streaming) scores its rows here. */
void al_lm_score_row(const float *x, int V, int target, int k, float *nll, float *entropy, int32_t *top_ids,
                     float *top_p);

/* The k largest of x [V] in order, ties to the lower id (top_ids [k], -1 past V): al_lm_score_row's top k without its
 * pass of exponentials, for a caller that has the normaliser already (generation's alternatives). */
void al_lm_top_ids(const float *x, int V, int k, int32_t *top_ids);

/* The corpus's cross-entropy over documents d with nll_sum[d] nats on n[d] predicted tokens: the ratio sum nll /
 * sum n, and its 95% interval by the ratio estimator's standard error over documents (Student t, D - 1 degrees of
 * freedom; docs/decoders.md). With one document the interval is [NAN, NAN]. */
typedef struct al_lm_summary {
    int documents;
    long long tokens;
    double nats, lo, hi; /* mean cross-entropy per token and its 95% interval, nats */
} al_lm_summary;
void al_lm_summarize(const double *nll_sum, const long long *n, int documents, al_lm_summary *out);

#endif
