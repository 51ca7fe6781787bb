/* papa_theta.h: the lambda stage's training loop, shared by the encoder's ranking (papa_rank.c, a probe's loss) and
 * the causal model's (papa_lm_rank.c, the next-token loss): every head MIX with its constant, lambda = sigmoid(theta)
 * from theta = 0, the model frozen, theta (and whatever the loss trains beside it, e.g. a probe) stepped by one
 * AdamW (constant schedule, no weight decay) over seeded epochs of the examples, each step on the sharded trainer
 * (src/train/shards.h). docs/papa.md, "Ranking heads by a learned weight (lambda)". Not public. */
#ifndef AL_METHODS_PAPA_THETA_H
#define AL_METHODS_PAPA_THETA_H

#include <stddef.h>
#include <stdint.h>

#include "../../train/shards.h"
#include "../../train/train.h"
#include "papa_sweep.h"

/* What one loss brings to the loop. */
typedef struct al_papa_theta_loss {
    al_shard_loss_fn loss; /* a shard's forward, loss and backward (its weight: the terms of its mean) */
    /* copies the step's examples (indices into the examples, nb of them) into the batch the loss reads */
    void (*fill)(void *user, const int32_t *examples, int nb);
    /* the parameters trained beside theta, given to every shard before a step; NULL when n_extra is 0 */
    void (*set_extra)(void *user, const float *extra);
    void *user;
    size_t n_extra;         /* parameters trained beside theta (0: theta alone) */
    const float *extra_init; /* [n_extra] their start */
    int extra_slot;          /* their gradients' buffer (al_shards_add_grads) */
} al_papa_theta_loss;

/* The shard set of the lambda stage: n_shards contexts of opt (its weight_grads must be 0) for batches of B examples
 * of L tokens, every head MIX with its constant C [NL, H, L, L] at lambda 0.5. With mem_limit > 0 the contexts'
 * size is checked first (the message names it and what to lower). */
al_status al_papa_theta_shards(al_model *model, const float *C, int B, int L, int n_shards, const al_train_options *opt,
                               uint64_t mem_limit, al_shard_set **out, al_error *err);

/* s->epochs epochs over n examples in the seeded order of s->seed, batches of B (a last batch smaller than the
 * shard count is dropped), each step's dropout seeded from s->seed and the step; progress as stage "ranking".
 * theta [n_heads] gets the learned logits; *final_loss (may be NULL) the last epoch's mean step loss, as a float. */
al_status al_papa_theta_train(al_shard_set *set, int n_heads, int n, int B, const al_papa_rank_settings *s,
                              const al_forward_params *params, const al_papa_theta_loss *f, float *theta,
                              double *final_loss, al_error *err);

#endif
