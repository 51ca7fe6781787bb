/* shards.h: one training step of any loss split over shards of the batch (shards.c). MLM pretraining
 * (pretrain_shards.c) and PAPA's lambda ranking with a probe share it.
 *
 * The batch's examples are cut into n contiguous parts; each part has its own training context
 * (activations, dropout generator, gradients) and runs as one task of the set's thread pool, one thread
 * per shard (src/core/threadpool.h; one after the other in a build without threads). A loss callback
 * does the shard's work: forward, its loss and its gradient with respect to the hidden states, backward; it reports the shard's loss and a weight (e.g. how many terms
 * its mean has). The step then combines, in shard order, the parameter gradients (when the contexts have
 * them), the lambda-logit gradients and any extra gradient buffers registered with al_shards_add_grads
 * (e.g. a probe's), each shard's weighted by w_i = weight_i / sum of weights: the combined gradient of
 * per-shard means is the gradient of the batch's mean.
 *
 * Determinism: the numbers depend on the shard count, never on the core count or the scheduling. Shard
 * i's dropout generator is reseeded every step from the step's seed (shard 0 with the seed itself, so one
 * shard is exactly the unsharded step); the combination runs in a fixed order after every shard is done.
 *
 * Typical use (frozen encoder, a probe with P parameters):
 *   opt.weight_grads = 0; opt.mlm_head = 0;
 *   al_shards_new(model, n, B, L, &opt, &set, &err);
 *   al_shards_add_grads(set, P, &probe_slot, &err);
 *   al_shards_set_policies(set, policies, &err);
 *   each step: al_shards_set_lambda_logits(set, theta);
 *              al_shards_run(set, B, seed, my_loss, &my_data, &res, &err);
 *              res.lambda_grads, res.extra[probe_slot] -> the optimiser
 */
#ifndef AL_TRAIN_SHARDS_H
#define AL_TRAIN_SHARDS_H

#include <stddef.h>
#include <stdint.h>

#include "../attnlab.h"

#define AL_MAX_SHARDS 64

typedef struct al_train_options al_train_options;
typedef struct al_train_ctx al_train_ctx;
typedef struct al_train_size al_train_size;
typedef struct al_shard_set al_shard_set;

/* What the loss callback works on. */
typedef struct al_shard_job {
    al_train_ctx *ctx;    /* the shard's context: dropout generator seeded for this step, gradients zeroed */
    int shard, n_shards;
    int b0, b1;           /* the shard's examples [b0, b1) of the step's batch (never empty) */
    float *const *extra;  /* the shard's registered gradient buffers, zeroed, in registration order */
    int n_extra;
} al_shard_job;

/* Runs the shard's forward, loss, external hidden-state gradients and backward (al_train_forward,
 * al_train_mlm_loss and/or al_train_backward(ctx, d_hidden)); accumulates its extra gradients into
 * job->extra. Writes the shard's loss and its weight (finite, >= 0). Runs in the shard's thread: it may
 * touch only the shard's own state (job->ctx, job->extra, its part of user). */
typedef al_status (*al_shard_loss_fn)(void *user, const al_shard_job *job, float *loss, double *weight,
                                      al_error *err);

typedef struct al_shards_result {
    float loss;           /* sum_i w_i loss_i; one shard: its loss */
    double weight;        /* sum of the shards' weights */
    /* Combined gradients, valid until the next step (the caller may scale them in place, e.g. clipping).
     * One shard: the shard's own buffers, unweighted (exactly the unsharded step). All weights 0: zeros. */
    float *grads;         /* [n_params], NULL when the contexts have no parameter gradients (weight_grads 0) */
    float *lambda_grads;  /* [n_layers * n_heads] */
    float *const *extra;  /* [n_extra] buffers of the sizes registered */
    int n_extra;
} al_shards_result;

/* n_shards training contexts for batches of up to batch_size examples of up to max_len tokens (each
 * context sized for ceil(batch_size / n_shards) examples). */
al_status al_shards_new(al_model *model, int n_shards, int batch_size, int max_len, const al_train_options *opt,
                        al_shard_set **out, al_error *err);
void al_shards_free(al_shard_set *set);
/* What al_shards_new would allocate: the n contexts plus the combined gradient buffers. */
al_status al_shards_measure(const al_model *model, int n_shards, int batch_size, int max_len,
                            const al_train_options *opt, al_train_size *out, al_error *err);
int al_shards_count(const al_shard_set *set);
/* Shard i's examples [*b0, *b1) of a batch of batch_size examples cut into n contiguous parts. */
void al_shards_range(int batch_size, int n, int i, int *b0, int *b1);
al_train_ctx *al_shards_ctx(al_shard_set *set, int i);

/* Registers one more gradient buffer of n floats per shard (e.g. a probe's parameters), zeroed before each
 * shard's callback and combined like the others; *index gets its position in job->extra and result.extra. */
al_status al_shards_add_grads(al_shard_set *set, size_t n, int *index, al_error *err);

/* The same attention policies (al_train_set_policies) and lambda logits ([n_layers * n_heads]) in every
 * shard's context: a step refuses to run when the shards' policies or lambda logits differ. */
al_status al_shards_set_policies(al_shard_set *set, const al_head_policy *policies, al_error *err);
void al_shards_set_lambda_logits(al_shard_set *set, const float *theta);

/* One step over examples [0, batch_size) (n_shards <= batch_size <= the set's batch_size): seeds the
 * shards' dropout from dropout_seed (shard i > 0 from a seed derived from it and i), zeroes their
 * gradients, runs fn per shard (threads on native builds) and combines. On error the first failing
 * shard's error is returned (shard order). */
al_status al_shards_run(al_shard_set *set, int batch_size, uint64_t dropout_seed, al_shard_loss_fn fn, void *user,
                        al_shards_result *out, al_error *err);

#endif
