/* pretrain_shards.c: one MLM pretraining step as a client of the generic sharded step (shards.c).
 *
 * The step's batch is built first, in shard order, from one masking generator, so the masking draws are the
 * same for any shard count; each shard then runs forward, MLM loss and backward on its sequences and reports
 * its labelled positions as its weight, so the combined gradient is that of the mean loss over the whole
 * batch. With one shard the step is exactly the unsharded one (same masking draws, same dropout seed, no
 * reweighting). */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "pretrain.h"
#include "train.h"

/* The shards' batches; callback user data (each shard reads only its own). */
typedef struct mlm_step {
    al_mlm_batch batch[AL_MAX_SHARDS];
} mlm_step;

static al_status mlm_shard_loss(void *user, const al_shard_job *job, float *loss, double *weight, al_error *err) {
    const al_mlm_batch *b = &((const mlm_step *)user)->batch[job->shard];
    al_batch in = {b->B, b->L, b->ids, b->mask, NULL, NULL};
    int n_labelled = 0;
    al_status st = al_train_forward(job->ctx, &in, err);
    if (!st) st = al_train_mlm_loss(job->ctx, b->labels, loss, &n_labelled, err);
    if (!st) st = al_train_backward(job->ctx, NULL, err);
    *weight = n_labelled;
    return st;
}

al_status al_shards_step(al_shard_set *set, const al_mlm_corpus *c, const int *seq_index, int batch_size,
                         const al_mlm_masking *mk, al_rng *mask_rng, uint64_t dropout_seed, al_shard_step *out,
                         al_error *err) {
    memset(out, 0, sizeof *out);
    const int n = al_shards_count(set);
    if (n < 1 || batch_size < n) return al_err(err, AL_ERR_INVALID, "pretrain: batch_size %d is below the shards %d",
                                               batch_size, n);
    mlm_step *ms = calloc(1, sizeof *ms);
    if (!ms) return al_err(err, AL_ERR_OOM, "pretrain: out of memory");
    al_status st = AL_OK;
    for (int i = 0; i < n && !st; i++) {
        int b0, b1;
        al_shards_range(batch_size, n, i, &b0, &b1); /* the sequences al_shards_run gives shard i */
        st = al_mlm_make_batch(c, seq_index + b0, b1 - b0, mk, mask_rng, &ms->batch[i], err);
        out->n_tokens += ms->batch[i].n_tokens;
    }
    al_shards_result r;
    if (!st) st = al_shards_run(set, batch_size, dropout_seed, mlm_shard_loss, ms, &r, err);
    if (!st) {
        out->loss = r.loss;
        out->n_labelled = (int)r.weight;
        out->grads = r.grads;
    }
    for (int i = 0; i < n; i++) al_mlm_batch_free(&ms->batch[i]);
    free(ms);
    return st;
}
