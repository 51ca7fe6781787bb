/* papa_theta.c: the lambda stage's loop (papa_theta.h), one for the encoder's probe loss and the causal model's
 * next-token loss. */
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/seeds.h"
#include "../../train/adamw.h"
#include "../../train/pretrain.h"
#include "papa_theta.h"

al_status al_papa_theta_shards(al_model *model, const float *C, int B, int L, int n_shards, const al_train_options *opt,
                               uint64_t mem_limit, al_shard_set **out, al_error *err) {
    const al_config *cfg = al_model_config(model);
    const int n_heads = cfg->n_layers * cfg->n_heads;
    *out = NULL;
    al_status st = AL_OK;
    if (mem_limit) { /* refuse before allocating, naming the size and what to lower */
        al_train_size size;
        st = al_shards_measure(model, n_shards, B, L, opt, &size, err);
        if (!st) st = al_train_check_budget("lambda ranking", &size, mem_limit, err);
    }
    al_shard_set *set = NULL;
    if (!st) st = al_shards_new(model, n_shards, B, L, opt, &set, err);
    al_head_policy *pol = st ? NULL : calloc((size_t)n_heads, sizeof *pol);
    if (!st && !pol) st = al_err(err, AL_ERR_OOM, "ranking: out of memory");
    for (int i = 0; !st && i < n_heads; i++) {
        pol[i].mode = AL_HEAD_MIX;
        pol[i].lambda = 0.5f; /* theta = 0 */
        pol[i].constant = C + (size_t)i * L * L;
    }
    if (!st) st = al_shards_set_policies(set, pol, err); /* copies the modes and the constants' pointers */
    free(pol);
    if (st) al_shards_free(set);
    else *out = set;
    return st;
}

al_status al_papa_theta_train(al_shard_set *set, int n_heads, int n, int B, const al_papa_rank_settings *s,
                              const al_forward_params *params, const al_papa_theta_loss *f, float *theta,
                              double *final_loss, al_error *err) {
    const int n_shards = al_shards_count(set), epochs = s->epochs < 1 ? 1 : s->epochs;
    const size_t P = f->n_extra;
    /* one optimiser over [theta; extra], clipped together as one model's parameters */
    float *params_all = malloc(sizeof(float) * ((size_t)n_heads + P));
    float *grads_all = malloc(sizeof(float) * ((size_t)n_heads + P));
    int32_t *order = malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
    al_adamw *adam = NULL;
    al_status st = (!params_all || !grads_all || !order) ? al_err(err, AL_ERR_OOM, "ranking: out of memory") : AL_OK;
    if (!st) {
        memset(params_all, 0, sizeof(float) * (size_t)n_heads);
        if (P) memcpy(params_all + n_heads, f->extra_init, sizeof(float) * P);
        al_adamw_config ac = al_adamw_default_config();
        ac.lr = s->lr;
        ac.schedule = AL_LR_CONSTANT;
        ac.weight_decay = 0.0f;
        st = al_adamw_new((size_t)n_heads + P, &ac, NULL, &adam, err);
    }
    const int steps_per_epoch = (n + B - 1) / B, total = steps_per_epoch * epochs;
    double loss_sum = 0.0;
    int loss_count = 0, step = 0;
    for (int epoch = 0; !st && epoch < epochs; epoch++) {
        al_mlm_epoch_order(n, al_mlm_derive_seed(s->seed, AL_SEED_RANK_ORDER, 0), epoch, order);
        loss_sum = 0.0;
        loss_count = 0;
        for (int b0 = 0; !st && b0 < n; b0 += B, step++) {
            if (params && params->cancel && *params->cancel) {
                st = al_err(err, AL_ERR_CANCELLED, "ranking: cancelled at step %d", step);
                break;
            }
            const int nb = n - b0 < B ? n - b0 : B;
            if (nb < n_shards) break; /* a last batch smaller than the shard count is dropped */
            f->fill(f->user, order + b0, nb);
            al_shards_set_lambda_logits(set, params_all);
            if (P) f->set_extra(f->user, params_all + n_heads);
            al_shards_result res;
            st = al_shards_run(set, nb, al_mlm_derive_seed(s->seed, AL_SEED_RANK_STEP_DROPOUT, (uint64_t)step), f->loss,
                               f->user, &res, err);
            if (st) break;
            memcpy(grads_all, res.lambda_grads, sizeof(float) * (size_t)n_heads);
            if (P) memcpy(grads_all + n_heads, res.extra[f->extra_slot], sizeof(float) * P);
            al_adamw_step(adam, params_all, grads_all, NULL, NULL);
            loss_sum += res.loss;
            loss_count++;
            if (params && params->progress) params->progress(params->progress_user, "ranking", (double)(step + 1) / total);
        }
    }
    if (!st) {
        memcpy(theta, params_all, sizeof(float) * (size_t)n_heads);
        /* as a float: the value a session keeps with the lambdas, so a reused ranking reports the same */
        if (final_loss) *final_loss = (float)(loss_count ? loss_sum / loss_count : 0.0);
    }
    al_adamw_free(adam);
    free(params_all), free(grads_all), free(order);
    return st;
}
