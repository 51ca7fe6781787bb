/* test_shard_step.c: the generic sharded step (src/train/shards.c) with a client that is not MLM: a frozen
 * tiny encoder whose heads all MIX softmax attention with a uniform constant matrix (PAPA's lambda stage) and a
 * probe-like loss on the last hidden state, loss_b = (v . h_b)^2 with h_b the [CLS] row of example b and v a
 * trainable vector whose gradient is an extra buffer registered with the set. Checks:
 *  - no parameter-gradient buffer anywhere (frozen contexts, result.grads NULL);
 *  - 1 shard is bit-identical to the unsharded step on one context; 2 and 3 shards give the same loss,
 *    lambda-logit and v gradients up to float rounding (relative 1e-6);
 *  - the lambda-logit gradient matches central differences of the step's loss;
 *  - a 3-shard step (threads on native builds) repeats bit for bit on new sets, also with dropout on;
 *  - bad use is refused with a message: shards with differing lambda logits, a negative weight, a batch
 *    outside [shards, set batch], a failing callback (its message comes through). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/error.h"
#include "core/rng.h"
#include "model/model_internal.h"
#include "train/shards.h"
#include "train/train.h"

#define B 7
#define L 9
#define D 16
#define NL 2
#define H 2
#define NH (NL * H)

typedef struct probe_data {
    int32_t ids[B * L], mask[B * L];
    float v[D];
    float *d_hidden[AL_MAX_SHARDS]; /* per shard [NL + 1, B, L, D] */
    int fail_shard;                 /* >= 0: that shard's callback fails */
    double weight_override;         /* != 0: every shard reports this weight */
} probe_data;

/* Loss of examples [b0, b1) as their mean, its gradient with respect to the hidden states (into dh, sized
 * for those examples) and to v (added to gv). The unsharded reference and the shards both call this. */
static al_status probe_loss(const probe_data *pd, al_train_ctx *ctx, int b0, int b1, float *dh, float *gv, float *loss,
                            al_error *err) {
    const int n = b1 - b0;
    al_batch batch = {n, L, pd->ids + b0 * L, pd->mask + b0 * L, NULL, NULL};
    al_status st = al_train_forward(ctx, &batch, err);
    if (st) return st;
    const float *top = al_train_hidden(ctx, NL);
    memset(dh, 0, sizeof(float) * (size_t)(NL + 1) * n * L * D);
    double total = 0;
    for (int b = 0; b < n; b++) {
        const float *h = top + (size_t)b * L * D; /* the [CLS] row */
        double s = 0;
        for (int d = 0; d < D; d++) s += (double)pd->v[d] * h[d];
        total += s * s;
        float *g = dh + (size_t)NL * n * L * D + (size_t)b * L * D;
        for (int d = 0; d < D; d++) {
            g[d] = (float)(2.0 * s * pd->v[d] / n);
            gv[d] += (float)(2.0 * s * h[d] / n);
        }
    }
    *loss = (float)(total / n);
    return al_train_backward(ctx, dh, err);
}

static al_status shard_loss(void *user, const al_shard_job *job, float *loss, double *weight, al_error *err) {
    probe_data *pd = user;
    if (job->shard == pd->fail_shard) return al_err(err, AL_ERR_INVALID, "probe: shard %d failed on purpose", job->shard);
    *weight = pd->weight_override != 0 ? pd->weight_override : job->b1 - job->b0;
    return probe_loss(pd, job->ctx, job->b0, job->b1, pd->d_hidden[job->shard], job->extra[0], loss, err);
}

typedef struct step_out {
    float loss;
    float dtheta[NH], gv[D];
} step_out;

static al_train_options frozen_options(int dropout) {
    al_train_options o = al_train_default_options();
    o.weight_grads = 0;
    o.mlm_head = 0;
    o.training = dropout;
    return o;
}

/* One step with n shards on a new set; returns 1 when it ran. */
static int sharded(al_model *m, probe_data *pd, const al_head_policy *pol, const float *theta, int n, int dropout,
                   step_out *out) {
    al_train_options o = frozen_options(dropout);
    al_shard_set *set = NULL;
    al_error err;
    int ok = 0, slot = -1;
    if (al_shards_new(m, n, B, L, &o, &set, &err) || al_shards_add_grads(set, D, &slot, &err) ||
        al_shards_set_policies(set, pol, &err)) {
        CHECK_MSG(0, "%s", err.message);
        goto done;
    }
    al_shards_set_lambda_logits(set, theta);
    for (int i = 0; i < n; i++) CHECK(al_train_grads(al_shards_ctx(set, i)) == NULL);
    al_shards_result r;
    al_status st = al_shards_run(set, B, 77, shard_loss, pd, &r, &err);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    if (st) goto done;
    CHECK(r.grads == NULL && r.n_extra == 1 && slot == 0 && r.weight == B);
    out->loss = r.loss;
    memcpy(out->dtheta, r.lambda_grads, sizeof out->dtheta);
    memcpy(out->gv, r.extra[slot], sizeof out->gv);
    ok = 1;
done:
    al_shards_free(set);
    return ok;
}

static double rel_diff(const float *a, const float *b, int n) {
    double dmax = 0, scale = 0;
    for (int i = 0; i < n; i++) {
        dmax = fmax(dmax, fabs((double)a[i] - b[i]));
        scale = fmax(scale, fabs((double)b[i]));
    }
    return dmax / (scale > 0 ? scale : 1);
}

int main(void) {
    al_config cfg = al_config_bert(40, D, NL, H, 32);
    cfg.max_position_embeddings = 16;
    al_model *m = NULL;
    al_error err;
    if (al_model_new_random(&cfg, 5, 1, &m, &err)) {
        CHECK_MSG(0, "%s", err.message);
        return check_summary("shard_step");
    }
    /* sharper attention than BERT's initialisation, so softmax and the uniform matrix differ */
    for (int l = 0; l < NL; l++)
        for (int i = 0; i < D * D; i++) m->w.layers[l].q_w[i] *= 30.0f, m->w.layers[l].k_w[i] *= 30.0f;

    probe_data *pd = calloc(1, sizeof *pd);
    al_rng r;
    al_rng_seed(&r, 11);
    const int lengths[B] = {9, 4, 7, 9, 3, 6, 8};
    for (int b = 0; b < B; b++)
        for (int i = 0; i < L; i++) {
            const int real = i < lengths[b];
            pd->ids[b * L + i] = real ? 5 + (int32_t)al_rng_below(&r, 35) : 0;
            pd->mask[b * L + i] = real;
        }
    for (int d = 0; d < D; d++) pd->v[d] = al_rng_normal(&r);
    for (int i = 0; i < AL_MAX_SHARDS; i++) pd->d_hidden[i] = malloc(sizeof(float) * (NL + 1) * B * L * D);
    pd->fail_shard = -1;
    float uniform[L * L];
    for (int i = 0; i < L * L; i++) uniform[i] = 1.0f / L;
    al_head_policy pol[NH];
    float theta[NH];
    for (int i = 0; i < NH; i++) {
        pol[i] = (al_head_policy){AL_HEAD_MIX, 0.3f + 0.1f * (float)i, uniform};
        theta[i] = logf(pol[i].lambda / (1.0f - pol[i].lambda));
    }

    /* the unsharded step on one frozen context */
    step_out ref;
    memset(&ref, 0, sizeof ref);
    al_train_options o = frozen_options(0);
    al_train_ctx *ctx = NULL;
    CHECK(al_train_ctx_new(m, B, L, &o, &ctx, &err) == AL_OK);
    CHECK(al_train_set_policies(ctx, pol, &err) == AL_OK);
    memcpy(al_train_lambda_logits(ctx), theta, sizeof theta);
    al_train_seed(ctx, 77);
    al_train_zero_grads(ctx);
    CHECK(al_train_grads(ctx) == NULL);
    CHECK(probe_loss(pd, ctx, 0, B, pd->d_hidden[0], ref.gv, &ref.loss, &err) == AL_OK);
    memcpy(ref.dtheta, al_train_lambda_grads(ctx), sizeof ref.dtheta);
    al_train_ctx_free(ctx);
    double lscale = 0;
    for (int i = 0; i < NH; i++) lscale = fmax(lscale, fabs(ref.dtheta[i]));
    printf("unsharded: loss %.6g, max |dtheta| %.3g\n", (double)ref.loss, lscale);
    CHECK(lscale > 1e-4); /* the lambda gradients are not trivially zero */

    /* 1 shard: the same bits; 2 and 3 shards: the same numbers up to rounding */
    for (int n = 1; n <= 3; n++) {
        step_out s;
        if (!sharded(m, pd, pol, theta, n, 0, &s)) continue;
        const double el = rel_diff(s.dtheta, ref.dtheta, NH), ev = rel_diff(s.gv, ref.gv, D);
        const double eloss = fabs((double)s.loss - ref.loss) / ref.loss;
        printf("%d shard(s) vs unsharded: lambda grads rel %.2e, v grads rel %.2e, loss rel %.2e\n", n, el, ev, eloss);
        if (n == 1) {
            CHECK(memcmp(&s, &ref, sizeof s) == 0);
        } else {
            CHECK(el <= 1e-6 && ev <= 1e-6 && eloss <= 1e-6);
        }
    }

    /* the combined lambda gradient is the gradient of the step's loss (central differences through the set) */
    {
        step_out base, plus, minus;
        double worst = 0;
        if (sharded(m, pd, pol, theta, 3, 0, &base))
            for (int i = 0; i < NH; i++) {
                float t[NH];
                memcpy(t, theta, sizeof t);
                const float h = 5e-2f;
                t[i] = theta[i] + h;
                int ok = sharded(m, pd, pol, t, 3, 0, &plus);
                t[i] = theta[i] - h;
                ok = ok && sharded(m, pd, pol, t, 3, 0, &minus);
                if (!ok) continue;
                const double fd = ((double)plus.loss - minus.loss) / (2.0 * h);
                worst = fmax(worst, fabs(fd - base.dtheta[i]) / lscale);
            }
        printf("3 shards: lambda grads vs central differences: rel err %.2e\n", worst);
        CHECK(worst < 3e-3);
    }

    /* a step repeats bit for bit, with dropout too (each shard's masks come from its own seed) */
    for (int dropout = 0; dropout <= 1; dropout++) {
        step_out a, b;
        memset(&a, 0, sizeof a);
        memset(&b, 0, sizeof b);
        if (sharded(m, pd, pol, theta, 3, dropout, &a) && sharded(m, pd, pol, theta, 3, dropout, &b))
            CHECK(memcmp(&a, &b, sizeof a) == 0);
        if (dropout) CHECK(memcmp(a.dtheta, ref.dtheta, sizeof a.dtheta) != 0); /* dropout did change something */
    }

    /* bad use */
    al_shard_set *set = NULL;
    o = frozen_options(0);
    CHECK(al_shards_new(m, 3, B, L, &o, &set, &err) == AL_OK);
    int slot;
    CHECK(set && al_shards_add_grads(set, D, &slot, &err) == AL_OK && al_shards_set_policies(set, pol, &err) == AL_OK);
    al_shards_result res;
    if (set) {
        al_shards_set_lambda_logits(set, theta);
        al_train_lambda_logits(al_shards_ctx(set, 2))[1] += 0.5f;
        CHECK(al_shards_run(set, B, 1, shard_loss, pd, &res, &err) == AL_ERR_INVALID);
        CHECK_MSG(strstr(err.message, "shard 2") && strstr(err.message, "al_shards_set_lambda_logits"), "%s", err.message);
        al_shards_set_lambda_logits(set, theta);
        CHECK(al_shards_run(set, 2, 1, shard_loss, pd, &res, &err) == AL_ERR_INVALID);
        CHECK_MSG(strstr(err.message, "batch_size 2"), "%s", err.message);
        CHECK(al_shards_run(set, B + 1, 1, shard_loss, pd, &res, &err) == AL_ERR_INVALID);
        pd->weight_override = -1;
        CHECK(al_shards_run(set, B, 1, shard_loss, pd, &res, &err) == AL_ERR_INVALID);
        CHECK_MSG(strstr(err.message, "weight"), "%s", err.message);
        pd->weight_override = 0;
        pd->fail_shard = 1;
        CHECK(al_shards_run(set, B, 1, shard_loss, pd, &res, &err) == AL_ERR_INVALID);
        CHECK_MSG(strstr(err.message, "shard 1 failed on purpose"), "%s", err.message);
        pd->fail_shard = -1;
        CHECK(al_shards_run(set, B, 1, shard_loss, pd, &res, &err) == AL_OK); /* and it recovers */
        CHECK(al_shards_add_grads(set, 0, &slot, &err) == AL_ERR_INVALID);
        al_shards_free(set);
    }
    CHECK(al_shards_new(m, 8, B, L, &o, &set, &err) == AL_ERR_INVALID && set == NULL);
    CHECK_MSG(strstr(err.message, "shards 8"), "%s", err.message);

    for (int i = 0; i < AL_MAX_SHARDS; i++) free(pd->d_hidden[i]);
    free(pd);
    al_model_free(m);
    return check_summary("shard_step");
}
