/* test_adamw.c: AdamW, schedules and clipping (src/train/adamw.c).
 *  - three updates against torch.optim.AdamW (lr 0.1, betas 0.9/0.999, eps 1e-8, weight decay 0.01 on the
 *    first two parameters only), values printed by torch 1.13 and written here;
 *  - the learning-rate factors of HF's linear / constant / constant_with_warmup schedules;
 *  - global-norm clipping as clip_grad_norm_ (coefficient max / (norm + 1e-6)), and none below the bound;
 *  - the update, a vector at a time on every kernel path, equals the one-at-a-time rule bit for bit (lengths that are not a multiple of the lanes, decay on some parameters only or on
 *    none, moments of every size);
 *  - the weight-decay mask of a model (matrices and embeddings decay; biases and LayerNorm do not);
 *  - pretraining steps on a tiny model: the loss goes down, and the same seed gives the same bits. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "kernels/kernels.h"
#include "model/model_internal.h"
#include "train/adamw.h"
#include "train/train.h"

static void check_against_torch(void) {
    al_adamw_config cfg = al_adamw_default_config();
    cfg.lr = 0.1f;
    cfg.weight_decay = 0.01f;
    cfg.max_grad_norm = 0.0f;
    cfg.schedule = AL_LR_CONSTANT;
    const uint8_t decay[4] = {1, 1, 0, 0};
    al_adamw *opt = NULL;
    al_error err;
    CHECK(al_adamw_new(4, &cfg, decay, &opt, &err) == AL_OK);
    float p[4] = {1.0f, -2.0f, 0.5f, 3.0f};
    const float grads[3][4] = {{0.1f, -0.2f, 0.0f, 0.4f}, {0.3f, 0.1f, -0.5f, 0.2f}, {-0.2f, 0.05f, 0.1f, 0.0f}};
    const double torch_out[3][4] = {{0.899000049, -1.898, 0.5, 2.9000001},
                                    {0.806322932, -1.86946833, 0.574413657, 2.80678225},
                                    {0.779726207, -1.86145997, 0.618283331, 2.73472452}};
    /* Step 1 by hand: m_hat = g, v_hat = g^2, so p = p (1 - lr wd) - lr g / (|g| + eps). */
    CHECK_NEAR(1.0 * (1.0 - 0.1 * 0.01) - 0.1 * 0.1 / (0.1 + 1e-8), torch_out[0][0], 1e-7);
    double worst = 0.0;
    for (int s = 0; s < 3; s++) {
        float g[4];
        memcpy(g, grads[s], sizeof g);
        double lr_used = -1.0;
        al_adamw_step(opt, p, g, NULL, &lr_used);
        CHECK_NEAR(lr_used, (double)0.1f, 1e-12);
        for (int i = 0; i < 4; i++) {
            worst = fmax(worst, fabs(p[i] - torch_out[s][i]));
            CHECK_NEAR(p[i], torch_out[s][i], 2e-6);
        }
    }
    CHECK(al_adamw_step_count(opt) == 3);
    printf("adamw vs torch.optim.AdamW, 3 steps: max abs diff %.2e\n", worst);
    al_adamw_free(opt);

    /* Invalid configurations are refused with a message. */
    al_adamw_config bad = al_adamw_default_config(); /* linear without total_steps */
    CHECK(al_adamw_new(4, &bad, NULL, &opt, &err) == AL_ERR_INVALID && strstr(err.message, "total_steps"));
    bad.total_steps = 10;
    bad.beta2 = 1.0f;
    CHECK(al_adamw_new(4, &bad, NULL, &opt, &err) == AL_ERR_INVALID && strstr(err.message, "betas"));
}

static void check_schedules(void) {
    al_adamw_config c = al_adamw_default_config();
    c.warmup_steps = 10;
    c.total_steps = 100;
    /* HF get_linear_schedule_with_warmup: step / warmup, then (total - step) / (total - warmup). */
    CHECK_NEAR(al_lr_factor(&c, 0), 0.0, 1e-12);
    CHECK_NEAR(al_lr_factor(&c, 5), 0.5, 1e-12);
    CHECK_NEAR(al_lr_factor(&c, 10), 1.0, 1e-12);
    CHECK_NEAR(al_lr_factor(&c, 55), 0.5, 1e-12);
    CHECK_NEAR(al_lr_factor(&c, 99), 1.0 / 90.0, 1e-12);
    CHECK_NEAR(al_lr_factor(&c, 100), 0.0, 1e-12);
    CHECK_NEAR(al_lr_factor(&c, 150), 0.0, 1e-12);
    c.warmup_steps = 0;
    CHECK_NEAR(al_lr_factor(&c, 0), 1.0, 1e-12); /* no warm-up: decay from the first update */
    CHECK_NEAR(al_lr_factor(&c, 25), 0.75, 1e-12);
    c.schedule = AL_LR_CONSTANT;
    c.warmup_steps = 10;
    CHECK_NEAR(al_lr_factor(&c, 3), 1.0, 1e-12);
    c.schedule = AL_LR_CONSTANT_WARMUP;
    CHECK_NEAR(al_lr_factor(&c, 3), 0.3, 1e-12);
    CHECK_NEAR(al_lr_factor(&c, 500), 1.0, 1e-12);

    /* The optimiser applies the schedule: with warm-up the first update uses lr 0 (params unchanged). */
    c = al_adamw_default_config();
    c.lr = 1e-3f;
    c.warmup_steps = 2;
    c.total_steps = 4;
    al_adamw *opt = NULL;
    al_error err;
    CHECK(al_adamw_new(1, &c, NULL, &opt, &err) == AL_OK);
    float p = 1.0f, g;
    const double expect_lr[4] = {0.0, 0.5 * (double)1e-3f, (double)1e-3f, 0.5 * (double)1e-3f};
    for (int s = 0; s < 4; s++) {
        double lr;
        g = 0.5f;
        al_adamw_step(opt, &p, &g, NULL, &lr);
        CHECK_NEAR(lr, expect_lr[s], 1e-12);
        if (s == 0) CHECK(p == 1.0f);
    }
    CHECK(p < 1.0f);
    al_adamw_free(opt);
}

static void check_clipping(void) {
    float a[2] = {3.0f, 0.0f}, b[1] = {4.0f};
    float *groups[2] = {a, b};
    const size_t sizes[2] = {2, 1};
    double norm = al_clip_grad_norm(groups, sizes, 2, 1.0f);
    CHECK_NEAR(norm, 5.0, 1e-12);
    const double coef = 1.0 / (5.0 + 1e-6);
    CHECK_NEAR(a[0], 3.0 * coef, 1e-7);
    CHECK_NEAR(b[0], 4.0 * coef, 1e-7);
    CHECK(a[1] == 0.0f);
    /* Below the bound nothing changes. */
    float c[2] = {0.3f, 0.4f};
    float *g1[1] = {c};
    const size_t s1[1] = {2};
    CHECK_NEAR(al_clip_grad_norm(g1, s1, 1, 1.0f), 0.5, 1e-7);
    CHECK(c[0] == 0.3f && c[1] == 0.4f);
    /* max_norm 0 only measures. */
    float d[1] = {10.0f};
    float *g2[1] = {d};
    const size_t s2[1] = {1};
    CHECK_NEAR(al_clip_grad_norm(g2, s2, 1, 0.0f), 10.0, 1e-9);
    CHECK(d[0] == 10.0f);
    /* Inside a step: a huge gradient moves the parameter like a clipped one (Adam is scale-free at step 1,
     * but the reported norm is the unclipped one). */
    al_adamw_config cfg = al_adamw_default_config();
    cfg.schedule = AL_LR_CONSTANT;
    al_adamw *opt = NULL;
    al_error err;
    CHECK(al_adamw_new(2, &cfg, NULL, &opt, &err) == AL_OK);
    float p[2] = {0, 0}, g[2] = {30.0f, 40.0f};
    double gn = 0.0;
    al_adamw_step(opt, p, g, &gn, NULL);
    CHECK_NEAR(gn, 50.0, 1e-9);
    CHECK_NEAR(g[0], 30.0 / (50.0 + 1e-6), 1e-6); /* clipped in place */
    al_adamw_free(opt);
}

static void check_decay_mask(void) {
    al_config cfg = al_config_bert(50, 16, 2, 2, 32);
    al_model *m = NULL;
    al_error err;
    CHECK(al_model_new_random(&cfg, 1, 1, &m, &err) == AL_OK);
    uint8_t *decay = malloc(m->n_floats);
    al_train_decay_mask(m, decay);
    CHECK(decay[m->w.word_emb - m->storage] == 1);
    CHECK(decay[m->w.layers[1].ff_out_w + 7 - m->storage] == 1);
    CHECK(decay[m->w.layers[0].q_b - m->storage] == 0);
    CHECK(decay[m->w.layers[0].ln_attn_g - m->storage] == 0);
    CHECK(decay[m->w.emb_ln_g - m->storage] == 0);
    CHECK(decay[m->w.mlm_decoder_b - m->storage] == 0);
    CHECK(decay[m->w.mlm_ln_g - m->storage] == 0);
    size_t n_decay = 0;
    for (size_t i = 0; i < m->n_floats; i++) n_decay += decay[i];
    const size_t D = 16, I = 32, expect = 50 * D + 512 * D + 2 * D + 2 * (4 * D * D + 2 * I * D) + D * D;
    CHECK(n_decay == expect);
    free(decay);
    al_model_free(m);
}

/* A few MLM pretraining steps with dropout; returns the final weights (malloc'd) and the losses. */
static float *pretrain(int steps, float *first_loss, float *last_loss) {
    al_config cfg = al_config_bert(50, 16, 2, 2, 32);
    al_model *m = NULL;
    al_error err;
    al_model_new_random(&cfg, 7, 1, &m, &err);
    al_train_options to = al_train_default_options();
    to.seed = 2024;
    al_train_ctx *ctx = NULL;
    al_train_ctx_new(m, 2, 8, &to, &ctx, &err);
    uint8_t *decay = malloc(m->n_floats);
    al_train_decay_mask(m, decay);
    al_adamw_config ac = al_adamw_default_config();
    ac.lr = 1e-2f;
    ac.weight_decay = 0.01f;
    ac.warmup_steps = 2;
    ac.total_steps = steps;
    al_adamw *opt = NULL;
    al_adamw_new(m->n_floats, &ac, decay, &opt, &err);
    int32_t ids[16], labels[16];
    for (int i = 0; i < 16; i++) {
        ids[i] = 5 + (i * 7) % 40;
        labels[i] = (i % 4 == 1) ? ids[i] : AL_IGNORE_INDEX;
        if (labels[i] != AL_IGNORE_INDEX) ids[i] = 3; /* the "[MASK]" token */
    }
    al_batch batch = {2, 8, ids, NULL, NULL, NULL};
    for (int s = 0; s < steps; s++) {
        float loss = 0.0f;
        al_train_zero_grads(ctx);
        al_train_forward_backward(ctx, &batch, labels, &loss, &err);
        al_adamw_step(opt, m->storage, al_train_grads(ctx), NULL, NULL);
        if (s == 0) *first_loss = loss;
        *last_loss = loss;
    }
    float *w = malloc(m->n_floats * sizeof(float));
    memcpy(w, m->storage, m->n_floats * sizeof(float));
    al_adamw_free(opt);
    free(decay);
    al_train_ctx_free(ctx);
    al_model_free(m);
    return w;
}

static void check_pretraining_determinism(void) {
    float l0 = 0, l1 = 0, k0 = 0, k1 = 0;
    float *a = pretrain(40, &l0, &l1), *b = pretrain(40, &k0, &k1);
    al_config cfg = al_config_bert(50, 16, 2, 2, 32);
    al_model *m = NULL;
    al_error err;
    al_model_new_random(&cfg, 7, 1, &m, &err);
    printf("pretraining 40 steps: loss %.4f -> %.4f\n", l0, l1);
    CHECK(l1 < 0.5f * l0); /* a fixed batch is learnt */
    CHECK(memcmp(a, b, m->n_floats * sizeof(float)) == 0 && l1 == k1);
    al_model_free(m);
    free(a);
    free(b);
}

/* The rule one parameter at a time, as torch's single-tensor AdamW writes it: the reference for the vector
 * loop of al_adamw_update (src/kernels/adam.c), which must give the same bits on every kernel path (4 and 8
 * lanes), with and without weight decay (without it the loop skips the mask). */
static void check_lanes_match_scalar_once(int n, float weight_decay, const char *what) {
    enum { STEPS = 6 };
    float *p = malloc(sizeof(float) * (size_t)n), *q = malloc(sizeof(float) * (size_t)n);
    float *g = malloc(sizeof(float) * (size_t)n), *m = calloc((size_t)n, sizeof(float));
    float *v = calloc((size_t)n, sizeof(float));
    uint8_t *decay = malloc((size_t)n);
    al_rng rng;
    al_rng_seed(&rng, 9);
    for (int i = 0; i < n; i++) {
        p[i] = q[i] = al_rng_normal(&rng);
        decay[i] = i % 3 != 0;
    }
    al_adamw_config c = al_adamw_default_config();
    c.lr = 0.05f;
    c.weight_decay = weight_decay;
    c.max_grad_norm = 0.0f;
    c.schedule = AL_LR_CONSTANT;
    al_adamw *o = NULL;
    al_error err;
    CHECK(al_adamw_new((size_t)n, &c, decay, &o, &err) == AL_OK);
    if (!o) return;
    for (int step = 1; step <= STEPS; step++) {
        /* gradients from 1e-6 to 1e3, some exactly 0 */
        for (int i = 0; i < n; i++) g[i] = i % 11 == 0 ? 0.0f : al_rng_normal(&rng) * (float)pow(10.0, (i % 10) - 6);
        al_adamw_update(o, p, g, c.lr);
        const float b1 = c.beta1, b2 = c.beta2;
        const double bc1 = 1.0 - pow((double)b1, step), bc2 = 1.0 - pow((double)b2, step);
        const float step_size = (float)(c.lr / bc1), bc2_sqrt = (float)sqrt(bc2);
        const float decay_factor = (float)(1.0 - c.lr * c.weight_decay);
        for (int i = 0; i < n; i++) {
            if (decay[i]) q[i] *= decay_factor;
            m[i] = m[i] * b1 + g[i] * (1.0f - b1);
            v[i] = v[i] * b2 + g[i] * g[i] * (1.0f - b2);
            const float denom = sqrtf(v[i]) / bc2_sqrt + c.eps;
            q[i] -= step_size * (m[i] / denom);
        }
    }
    CHECK_MSG(memcmp(p, q, sizeof(float) * (size_t)n) == 0, "%s: parameters differ from the one-at-a-time rule", what);
    CHECK_MSG(memcmp(al_adamw_first_moments(o), m, sizeof(float) * (size_t)n) == 0 &&
                  memcmp(al_adamw_second_moments(o), v, sizeof(float) * (size_t)n) == 0,
              "%s: moments differ from the one-at-a-time rule", what);
    al_adamw_free(o);
    free(p), free(q), free(g), free(m), free(v), free(decay);
}

static void check_lanes_match_scalar(void) {
    const char *paths[8], *was = al_kernels_path();
    const int n_paths = al_kernels_paths(paths, 8);
    for (int k = 0; k < n_paths && k < 8; k++) {
        CHECK(al_kernels_set_path(paths[k]) == 0);
        char what[64];
        snprintf(what, sizeof what, "%s, decay", paths[k]);
        check_lanes_match_scalar_once(1027, 0.01f, what);
        snprintf(what, sizeof what, "%s, no decay", paths[k]);
        check_lanes_match_scalar_once(1029, 0.0f, what);
    }
    al_kernels_set_path(was);
}

int main(void) {
    check_against_torch();
    check_schedules();
    check_clipping();
    check_decay_mask();
    check_lanes_match_scalar();
    check_pretraining_determinism();
    return check_summary("adamw");
}
