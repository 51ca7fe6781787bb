/* batch_runner.h: running a model over many examples, batch by batch: pads each batch to one length
 * L, runs al_forward with the given per-head policies (and optionally a second model on the same
 * batch), computes effective attention when asked, and hands every batch's inputs and outputs to a
 * callback. Every op that runs the model over texts goes through here (src/api/op_attention.c, the
 * analysis ops and effective attention), so padding, chunking, progress and cancellation follow one
 * set of rules. No JSON: texts enter as al_encoding (al_run_example_encoding) or as rows the caller
 * has already laid out (ids, mask, type and position ids per position). Not public. */
#ifndef AL_METHODS_BATCH_RUNNER_H
#define AL_METHODS_BATCH_RUNNER_H

#include "../../attnlab.h"

/* One example. Positions 0 .. n - 1 come from the arrays below; the runner pads positions n .. L - 1
 * with the pad token (mask 0, type 0, segment -1, the family's default position id).
 *   - a tokenized sequence: ids and type_ids / segments of n real tokens, mask NULL (all real);
 *   - an already-built row (e.g. PAPA's layout with pads inside it): ids, mask, type_ids and
 *     position_ids of every position, n up to L; positions whose mask is 0 get segment -1. */
typedef struct al_run_example {
    int n;                       /* positions given, >= 1 */
    const int32_t *ids;          /* [n] token ids */
    const int32_t *mask;         /* [n] 1 real / 0 pad, or NULL: all n real */
    const int32_t *type_ids;     /* [n] or NULL: all 0 */
    const int32_t *position_ids; /* [n] or NULL: the family's default (al_forward's rule) */
    const int32_t *segments;     /* [n] 0/1 segment of each token, -1 special, or NULL: all 0 */
} al_run_example;

/* A tokenized text (or pair): ids, type ids and sequence ids of its n_tokens tokens (pointers into enc). */
al_run_example al_run_example_encoding(const al_encoding *enc);

/* Outputs to compute, bit flags. */
enum {
    AL_RUN_ATTENTIONS = 1, /* [NL, B, H, L, L] */
    AL_RUN_HIDDEN = 2,     /* [NL + 1, B, L, D] */
    AL_RUN_VALUES = 4,     /* [NL, B, H, L, head_dim] */
    AL_RUN_MLM = 8,        /* [B, L, V], needs an MLM head */
    AL_RUN_LAST_HIDDEN = 16, /* [B, L, D]: hidden_states[NL] alone */
};

typedef struct al_batch_run_params {
    const al_head_policy *policies; /* [NL * H] for `model`, or NULL: all standard */
    int outputs;                    /* AL_RUN_* */
    int effective;                  /* 1: effective attention in effective_mode (computes attentions
                                       and values even when not in outputs) */
    al_effective_mode effective_mode;
    int batch_size;                 /* examples per batch; 0: all in one batch */
    int pad_to;                     /* L = max(pad_to, longest example); 0: the longest */
    const al_model *model_b;        /* or NULL: a second model (same layers, heads, head_dim) run on
                                       the same batches without policies: attentions, values and
                                       effective attention only */
    /* Whole-request output buffers, layouts as al_forward's with B = all examples; any may be NULL.
     * When one is set the run is one batch and that output is written there instead of the runner's
     * own buffer (an op can fill its reply's tensors without a copy). */
    al_forward_outputs dest;
    /* Progress: ("forward", fraction of the current batch's layers) from al_forward, then ("batches",
     * examples done / all) after each batch. May be NULL. */
    al_progress_fn progress;
    void *progress_user;
    const volatile int *cancel;     /* checked before each batch and between layers; may be NULL */
    const char *who;                /* prefixes the runner's own errors ("attention", "analysis") */
    al_threadpool *pool;            /* the forward passes' threads (NULL: one); same numbers either way */
} al_batch_run_params;

al_batch_run_params al_batch_run_default_params(void);

/* One batch as the callback sees it: examples first .. first + B - 1, padded to L. Arrays are the
 * runner's (valid during the callback) or the dest buffers. Outputs not computed are NULL. */
typedef struct al_run_chunk {
    int first, B, L;
    const int32_t *ids, *mask, *type_ids; /* [B, L] as given to al_forward (type ids all 0 when none) */
    const int32_t *position_ids;          /* [B, L], or NULL when no example gave position ids */
    const int32_t *segments;              /* [B, L] segment per position, -1 special or pad */
    const uint8_t *classes;               /* [B, L] al_key_classes with model's tokenizer */
    const float *hidden_states, *attentions, *values, *mlm_logits; /* al_forward layouts for B */
    const float *effective;               /* [NL, B, H, L, L] */
    const int *ranks;                     /* [NL, B, H] (al_effective_attention's ranks_out) */
    const float *attentions_b, *values_b, *effective_b; /* model_b's */
    const float *last_hidden_state;       /* [B, L, D] */
} al_run_chunk;

typedef al_status (*al_batch_run_fn)(void *user, const al_run_chunk *chunk, al_error *err);

/* The padded length of a run: max(pad_to, the longest example's n). */
int al_batch_run_length(const al_run_example *examples, int n_examples, int pad_to);

/* Runs the n_examples through model in batches of p->batch_size and calls fn once per batch, in order.
 * The callback's error stops the run. */
al_status al_batch_run(const al_model *model, const al_run_example *examples, int n_examples,
                       const al_batch_run_params *p, al_batch_run_fn fn, void *user, al_error *err);

#endif
