/* papa_lm_rank.c: PAPA's lambda on a causal language model (papa_lm.h, docs/papa.md "Causal language models"):
 * the encoder's parametrisation (every head MIX with its causal constant, lambda = sigmoid(theta) from 0, the
 * model frozen) with the probe's loss replaced by the model's own next-token cross-entropy on the constants'
 * windows (METHODS.md section 10). The loop, its optimiser and its seeds are the encoder's (papa_theta.c); this file
 * brings the loss: per shard, forward, the LM head's mean cross-entropy over the predicted tokens
 * (src/train/train_lm.c), backward to theta. */
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "papa_lm.h"
#include "papa_theta.h"

typedef struct lm_step {
    int L;
    int32_t *ids, *mask, *types, *labels; /* this step's batch [B, L]; labels the token after each position */
    const al_lm_corpus *c;
} lm_step;

static al_status shard_loss(void *user, const al_shard_job *job, float *loss, double *weight, al_error *err) {
    lm_step *ls = user;
    const int L = ls->L, B = job->b1 - job->b0;
    const size_t at = (size_t)job->b0 * L;
    al_batch batch = {B, L, ls->ids + at, ls->mask + at, ls->types + at, NULL};
    al_status st = al_train_forward(job->ctx, &batch, err);
    int n_labelled = 0;
    if (!st) st = al_train_lm_loss(job->ctx, ls->labels + at, loss, &n_labelled, err);
    if (!st) st = al_train_backward(job->ctx, NULL, err);
    /* the loss is a mean over the predicted tokens: weight shards by how many they have */
    *weight = n_labelled;
    return st;
}

/* The step's windows, right padded, and their next-token labels (al_clm_labels: a label where both positions are
 * real, so the last real token and the pads predict nothing). */
static void fill_batch(void *user, const int32_t *examples, int nb) {
    lm_step *ls = user;
    const int L = ls->L;
    for (int b = 0; b < nb; b++) {
        const int w = examples[b];
        memcpy(ls->ids + (size_t)b * L, ls->c->ids + (size_t)w * L, sizeof(int32_t) * L);
        for (int i = 0; i < L; i++) ls->mask[(size_t)b * L + i] = i < ls->c->len[w];
    }
    al_clm_labels(ls->ids, ls->mask, nb, L, ls->labels);
}

/* The largest batch in [n_shards, B] whose contexts fit mem_limit (B when it fits or there is no limit; n_shards
 * when none fits, so that the refusal names the smallest). */
static int fitting_batch(const al_model *model, int B, int L, int n_shards, const al_train_options *opt,
                         uint64_t mem_limit) {
    if (!mem_limit) return B;
    for (; B > n_shards; B--) {
        al_train_size size;
        al_error e;
        if (al_shards_measure(model, n_shards, B, L, opt, &size, &e) || size.total <= mem_limit) break;
    }
    return B;
}

al_status al_papa_lm_rank(al_model *model, const al_lm_corpus *c, const float *C, const al_papa_rank_settings *s,
                          const al_forward_params *params, float *theta, double *final_loss, int *batch,
                          al_error *err) {
    const al_config *cfg = al_model_config(model);
    al_status st = al_train_check_family(model, AL_PAPA_LM_LAMBDA_WHAT, AL_PAPA_LM_LAMBDA_INSTEAD, err);
    if (st) return st;
    const int n_heads = cfg->n_layers * cfg->n_heads, L = c->window;
    int n = c->n_windows;
    if (s->max_examples > 0 && n > s->max_examples) n = s->max_examples;
    if (n < 1) return al_err(err, AL_ERR_INVALID, "request: field 'constants_corpus': order 'lambda' needs a window "
                             "of 2 tokens or more to train on");
    const int B0 = s->batch_size < 1 ? 16 : s->batch_size > n ? n : s->batch_size;
    const int n_shards = s->shards < 1 ? 1 : s->shards > B0 ? B0 : s->shards;

    al_train_options opt = al_train_default_options();
    opt.weight_grads = 0; /* the model is frozen: gradients reach theta only */
    opt.mlm_head = 1;     /* room for the LM head's rows and logits (train_lm.c) */
    opt.training = s->train_mode;
    opt.seed = s->seed;
    opt.pool = params ? params->pool : NULL; /* the session's threads (docs/threads.md) */
    const int B = fitting_batch(model, B0, L, n_shards, &opt, s->mem_limit);
    if (batch) *batch = B;
    int32_t *buf = calloc((size_t)B * L * 4, sizeof(int32_t)); /* ids, mask, types (all 0), labels */
    if (!buf) return al_err(err, AL_ERR_OOM, "ranking: out of memory");
    lm_step ls = {L, buf, buf + (size_t)B * L, buf + (size_t)2 * B * L, buf + (size_t)3 * B * L, c};
    al_shard_set *set = NULL;
    st = al_papa_theta_shards(model, C, B, L, n_shards, &opt, s->mem_limit, &set, err);
    if (!st) {
        const al_papa_theta_loss f = {shard_loss, fill_batch, NULL, &ls, 0, NULL, 0};
        st = al_papa_theta_train(set, n_heads, n, B, s, params, &f, theta, final_loss, err);
    }
    al_shards_free(set);
    free(buf);
    return st;
}
