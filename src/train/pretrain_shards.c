/* pretrain_shards.c: one pretraining step's forward and backward pass split over shards of the batch.
 *
 * The batch's sequences are cut into `shards` contiguous parts; each part has its own training context
 * (activations, dropout generator, gradient buffer) and runs in its own thread on native builds (one
 * after the other under Emscripten, which has no threads here). The shards' gradients are then combined
 * in a fixed order, weighted by their share of the labelled positions, so the step equals the mean loss
 * over the whole batch. The numbers depend on the shard count (a config field), never on the thread
 * scheduling or the core count: a run repeats bit for bit on any machine. With one shard the step is
 * exactly the unsharded one (same masking draws, same dropout seed, no reweighting). */
#include <stdlib.h>
#include <string.h>

#ifndef __EMSCRIPTEN__
#include <pthread.h>
#endif

#include "../core/error.h"
#include "pretrain.h"
#include "train.h"

typedef struct shard {
    al_train_ctx *ctx;
    al_mlm_batch batch;
    float loss;
    int n_labelled;
    al_status st;
    al_error err;
} shard;

struct al_shard_set {
    int n;
    size_t n_params;
    shard *s;
    float *grads; /* combined gradients when n > 1 */
};

al_status al_shards_new(al_model *model, int n_shards, int batch_size, int max_len, const al_train_options *opt,
                        al_shard_set **out, al_error *err) {
    *out = NULL;
    if (n_shards < 1 || n_shards > batch_size || n_shards > AL_MAX_SHARDS)
        return al_err(err, AL_ERR_INVALID, "train config: shards %d must be in [1, min(batch_size %d, %d)]", n_shards,
                      batch_size, AL_MAX_SHARDS);
    al_shard_set *set = calloc(1, sizeof *set);
    if (!set) return al_err(err, AL_ERR_OOM, "pretrain: out of memory");
    set->n = n_shards;
    set->n_params = al_model_n_params(model);
    set->s = calloc((size_t)n_shards, sizeof *set->s);
    if (!set->s) {
        al_shards_free(set);
        return al_err(err, AL_ERR_OOM, "pretrain: out of memory");
    }
    int per = (batch_size + n_shards - 1) / n_shards;
    for (int i = 0; i < n_shards; i++) {
        al_status st = al_train_ctx_new(model, per, max_len, opt, &set->s[i].ctx, err);
        if (st) {
            al_shards_free(set);
            return st;
        }
    }
    if (n_shards > 1 && !(set->grads = malloc(sizeof *set->grads * set->n_params))) {
        al_shards_free(set);
        return al_err(err, AL_ERR_OOM, "pretrain: out of memory");
    }
    *out = set;
    return AL_OK;
}

void al_shards_free(al_shard_set *set) {
    if (!set) return;
    for (int i = 0; set->s && i < set->n; i++) {
        al_train_ctx_free(set->s[i].ctx);
        al_mlm_batch_free(&set->s[i].batch);
    }
    free(set->s);
    free(set->grads);
    free(set);
}

al_train_ctx *al_shards_ctx(al_shard_set *set, int i) { return set && i >= 0 && i < set->n ? set->s[i].ctx : NULL; }

static void *run_shard(void *arg) {
    shard *sh = arg;
    al_batch in = {sh->batch.B, sh->batch.L, sh->batch.ids, sh->batch.mask, NULL, NULL};
    al_train_zero_grads(sh->ctx);
    sh->st = al_train_forward(sh->ctx, &in, &sh->err);
    if (!sh->st) sh->st = al_train_mlm_loss(sh->ctx, sh->batch.labels, &sh->loss, &sh->n_labelled, &sh->err);
    if (!sh->st) sh->st = al_train_backward(sh->ctx, NULL, &sh->err);
    return NULL;
}

al_status al_shards_step(al_shard_set *set, const al_mlm_corpus *c, const int *seq_index, int batch_size,
                         const al_mlm_masking *mk, al_rng *mask_rng, uint64_t dropout_seed, al_shard_step *out,
                         al_error *err) {
    memset(out, 0, sizeof *out);
    /* batches first, in shard order: the masking draws come from one generator in sequence order, so
     * they are the same for any shard count */
    for (int i = 0; i < set->n; i++) {
        shard *sh = &set->s[i];
        al_mlm_batch_free(&sh->batch);
        int b0 = (int)((int64_t)batch_size * i / set->n), b1 = (int)((int64_t)batch_size * (i + 1) / set->n);
        al_status st = al_mlm_make_batch(c, seq_index + b0, b1 - b0, mk, mask_rng, &sh->batch, err);
        if (st) return st;
        out->n_tokens += sh->batch.n_tokens;
        al_train_seed(sh->ctx, i == 0 ? dropout_seed : al_mlm_derive_seed(dropout_seed, 3, (uint64_t)i));
        sh->st = AL_OK;
        sh->loss = 0;
        sh->n_labelled = 0;
    }
#ifndef __EMSCRIPTEN__
    pthread_t tid[AL_MAX_SHARDS];
    int started[AL_MAX_SHARDS] = {0};
    for (int i = 1; i < set->n; i++) started[i] = pthread_create(&tid[i], NULL, run_shard, &set->s[i]) == 0;
    run_shard(&set->s[0]);
    for (int i = 1; i < set->n; i++) {
        if (started[i]) pthread_join(tid[i], NULL);
        else run_shard(&set->s[i]); /* no thread to spare: same numbers, just later */
    }
#else
    for (int i = 0; i < set->n; i++) run_shard(&set->s[i]);
#endif
    for (int i = 0; i < set->n; i++)
        if (set->s[i].st) {
            *err = set->s[i].err;
            return set->s[i].st;
        }
    if (set->n == 1) {
        out->loss = set->s[0].loss;
        out->n_labelled = set->s[0].n_labelled;
        out->grads = al_train_grads(set->s[0].ctx);
        return AL_OK;
    }
    int total = 0;
    for (int i = 0; i < set->n; i++) total += set->s[i].n_labelled;
    float w[AL_MAX_SHARDS];
    double loss = 0;
    for (int i = 0; i < set->n; i++) {
        w[i] = total ? (float)set->s[i].n_labelled / (float)total : 0.0f;
        loss += (double)w[i] * (double)set->s[i].loss;
    }
    const float *g0 = al_train_grads(set->s[0].ctx);
    for (size_t p = 0; p < set->n_params; p++) set->grads[p] = w[0] * g0[p];
    for (int i = 1; i < set->n; i++) {
        const float *gi = al_train_grads(set->s[i].ctx);
        for (size_t p = 0; p < set->n_params; p++) set->grads[p] += w[i] * gi[p];
    }
    out->loss = (float)loss;
    out->n_labelled = total;
    out->grads = set->grads;
    return AL_OK;
}
