/* papa_lm.h: PAPA on a causal language model (docs/papa.md, "Causal language models"): constant matrices averaged
 * over the windows of a text (papa_causal.c), and the sweep of head configurations scored by the model's own
 * next-token loss on held-out text (papa_lm.c, through lm_corpus.h's scorer) instead of by probes. The papa op
 * (src/api/op_papa_lm.c) drives it. Not public. */
#ifndef AL_METHODS_PAPA_LM_H
#define AL_METHODS_PAPA_LM_H

#include "../lm/lm_corpus.h"
#include "papa_sweep.h"

/* Fewer windows than this reach a row of the constants: the row takes the uniform prefix instead of an
 * average of a handful of texts (docs/papa.md, "Causal language models"). */
#define AL_PAPA_LM_MIN_WINDOWS 4

/* What a family without the training path is refused for when a lambda order is asked (al_train_check_family). */
#define AL_PAPA_LM_LAMBDA_WHAT "request: field 'orders': 'lambda' (trained against the language-model loss)"
#define AL_PAPA_LM_LAMBDA_INSTEAD "; use orders random, first_to_last or last_to_first"

/* The causal average over the windows of c (every head standard, eval mode): for each head and row i,
 *   C[i, j] = (1 / n_i) sum over windows longer than i of A[i, j]   (j <= i; 0 above the diagonal),
 * n_i the windows that reach position i: al_papa_sums' masked mean, whose count N[i, j] is n_i for every j <= i
 * under right padding. A row that fewer than min_windows windows reach (rows past the corpus's longest window
 * among them) is the uniform prefix 1 / (i + 1), for every head; *rows_filled counts those rows. C is
 * [NL, H, W, W], W = c->window. batch_size windows per forward. */
al_status al_papa_causal_constants(const al_model *model, const al_lm_corpus *c, int min_windows, int batch_size,
                                   const al_forward_params *params, float *C, int *rows_filled, al_error *err);

/* The sweep's result: per configuration the corpus's loss (nats per predicted token, its 95% interval over
 * documents), each document's bits per token and the loss by position. */
typedef struct al_papa_lm_result {
    al_papa_plan plan;
    int n_docs, window, n_windows; /* the scored corpus's documents, window and windows */
    int *ran;               /* [n_configs] 1 where this run (its shard) scored the configuration */
    al_lm_summary *summary; /* [n_configs] */
    double *doc_bits;       /* [n_configs, n_docs] a document's bits per token, NAN: not run or no tokens */
    double *pos_bits;       /* [n_configs, window] bits on the token after position i, NAN: no token there */
    long long *doc_tokens;  /* [n_docs] predicted tokens per document (the same in every configuration) */
    long long *pos_tokens;  /* [window] */
    int *orders;            /* [AL_N_ORDERS, NL * H] the replacement orders, -1 where not computed */
    double *importance;     /* [NL * H] layer-normalised gradient importance (order gradient), else NULL */
    float *constants;       /* [NL, H, W, W] the averaged constants, NULL when no configuration needs them */
    int averaged;           /* 1: the average constants were computed or given (constants set by the sweep) */
    int min_windows_used;   /* the request's minimum of windows per row */
    int rows_filled;        /* rows of the constants that took the uniform prefix */
    int constants_windows, constants_docs; /* what the constants were averaged over */
    /* order lambda or reversed_lambda (al_papa_lm_rank), else theta NULL and the rest 0 */
    float *theta;           /* [NL * H] the learned lambda logits */
    double rank_loss;       /* the last epoch's mean step loss (nats per predicted token), as a float */
    double rank_before, rank_after; /* nats per predicted token on the windows trained on, eval mode, every head
                                     * mixed: at lambda 0.5 (theta 0) and at the learned lambdas */
    int rank_windows;       /* the windows trained on (ranking.max_examples of the constants' corpus) */
    int rank_batch;         /* the batch the ranking trained with: ranking.batch_size, or lower to fit mem_limit */
    double seconds_constants, seconds_importance, seconds_score, seconds_rank;
} al_papa_lm_result;

/* PAPA's lambda on a causal model: every head MIX with its causal constant C [NL, H, W, W] (W = c->window), theta
 * from 0, the model frozen, theta trained against the next-token cross-entropy on the first s->max_examples windows
 * of c (<= 0: all), by the encoder's loop (papa_theta.h: s's epochs, batch_size, lr, shards, train_mode, seed,
 * mem_limit). theta [NL * H] gets the learned logits, *final_loss (may be NULL) the last epoch's mean step loss.
 * A batch whose training contexts would pass mem_limit is lowered to the largest that fits (the LM head's logits
 * over a large vocabulary make a language model's contexts big: docs/papa.md, "Causal language models"); *batch
 * (may be NULL) gets the batch used. Needs a family the training path builds (al_train_check_family). */
al_status al_papa_lm_rank(al_model *model, const al_lm_corpus *c, const float *C, const al_papa_rank_settings *s,
                          const al_forward_params *params, float *theta, double *final_loss, int *batch,
                          al_error *err);

/* Michel et al.'s head importance with the language-model loss (al_head_importance_measure, loss lm) over the first
 * max_examples (<= 0: all) windows of c, one window an example: the gradient order's scores, and the head_agreement
 * op's gradient on a decoder. out as al_head_importance_measure's (al_head_importance_free). */
struct al_head_importance;
al_status al_papa_lm_importance(al_model *model, const al_lm_corpus *c, int max_examples, const al_forward_params *fp,
                                struct al_head_importance *out, al_error *err);

/* The sweep on a causal model: q's plan (its causal flag set here), fractions or k, L as the window of both
 * corpora, batch_size, rank.seed (the random order), importance_examples (windows the gradient order averages
 * over), shard, constants (cached: skips the averaging), progress (stages "constants", "importance", "lm"; with
 * plan_progress "configuration i of n"), cancel and pool. scored is the held-out corpus; averaged the text the
 * constants, the gradient importance and the lambdas come from (may be NULL when no configuration needs them).
 * The lambda orders train lambda on averaged's windows (al_papa_lm_rank with q->rank; stage "ranking"); they and
 * gradient need a family with a backward (al_train_check_family). */
al_status al_papa_lm_run(al_model *model, const al_lm_corpus *scored, const al_lm_corpus *averaged,
                         const al_papa_sweep_request *q, int min_windows, al_papa_lm_result *out, al_error *err);
void al_papa_lm_result_free(al_papa_lm_result *r);
/* The per-configuration arrays of r for r->plan's configurations, D documents and windows of W (none ran, every
 * bits NAN): the sweep's, and papa_merge's when it rebuilds a sweep from its shards. */
al_status al_papa_lm_result_alloc(al_papa_lm_result *r, int D, int W, al_error *err);

#endif
