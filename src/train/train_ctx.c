/* train_ctx.c: the training context: options, workspace carving, policies and lambda logits, gradient
 * buffer, and the weight-decay mask. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../kernels/kernels.h"
#include "../model/head_policy.h"
#include "train_internal.h"

#define AL_TR_ALIGN 16 /* floats: 64-byte alignment of every carved tensor */

al_train_options al_train_default_options(void) {
    al_train_options o;
    memset(&o, 0, sizeof o);
    o.training = 1;
    o.hidden_dropout = 0.1f;
    o.attention_dropout = 0.1f;
    o.seed = 42;
    o.weight_grads = 1;
    return o;
}

/* al_expf: the same bits on every path, so native and WASM mix heads identically. */
float al_tr_sigmoid(float theta) { return 1.0f / (1.0f + al_expf(-theta)); }

typedef struct carver {
    float *base;
    size_t used;
} carver;

static float *take(carver *cv, size_t n) {
    float *p = cv->base ? cv->base + cv->used : NULL;
    cv->used += (n + AL_TR_ALIGN - 1) / AL_TR_ALIGN * AL_TR_ALIGN;
    return p;
}
static uint8_t *take_u8(carver *cv, size_t n) { return (uint8_t *)(void *)take(cv, (n + 3) / 4); }
static int32_t *take_i32(carver *cv, size_t n) { return (int32_t *)(void *)take(cv, n); }

size_t al_tr_carve(al_train_ctx *ctx, float *base, int B, int L) {
    const al_model *m = ctx->model;
    const al_config *c = &m->config;
    const size_t BL = (size_t)B * L, D = (size_t)c->hidden_size, E = (size_t)c->embedding_size;
    const size_t I = (size_t)c->intermediate_size, H = (size_t)c->n_heads, V = (size_t)c->vocab_size;
    const size_t M = m->w.mlm_decoder_w ? (size_t)m->w.mlm_dim : 0, LL = (size_t)L * L;
    const size_t BHLL = (size_t)B * H * LL;
    carver cv = {base, 0};
    ctx->ids = take_i32(&cv, BL);
    ctx->types = take_i32(&cv, BL);
    ctx->pos = take_i32(&cv, BL);
    ctx->mask = take(&cv, BL);
    ctx->emb_sum = take(&cv, BL * E);
    ctx->emb_mean = take(&cv, BL);
    ctx->emb_rstd = take(&cv, BL);
    ctx->emb_keep = take_u8(&cv, BL * E);
    ctx->emb_ln = take(&cv, BL * E);
    ctx->hidden = take(&cv, ((size_t)c->n_layers + 1) * BL * D);
    for (int l = 0; l < c->n_layers; l++) {
        al_tr_layer_cache *lc = &ctx->layers[l];
        lc->q = take(&cv, BL * D);
        lc->k = take(&cv, BL * D);
        lc->v = take(&cv, BL * D);
        lc->S = take(&cv, BHLL);
        lc->P = take(&cv, BHLL);
        lc->attn_keep = take_u8(&cv, BHLL);
        lc->ctx = take(&cv, BL * D);
        lc->keep1 = take_u8(&cv, BL * D);
        lc->res1 = take(&cv, BL * D);
        lc->mean1 = take(&cv, BL);
        lc->rstd1 = take(&cv, BL);
        lc->h1 = take(&cv, BL * D);
        lc->ff_pre = take(&cv, BL * I);
        lc->ff_act = take(&cv, BL * I);
        lc->keep2 = take_u8(&cv, BL * D);
        lc->res2 = take(&cv, BL * D);
        lc->mean2 = take(&cv, BL);
        lc->rstd2 = take(&cv, BL);
    }
    ctx->sel_rows = take_i32(&cv, BL);
    ctx->sel_labels = take_i32(&cv, BL);
    ctx->head_x = take(&cv, M ? BL * D : 0);
    ctx->head_pre = take(&cv, BL * M);
    ctx->head_act = take(&cv, BL * M);
    ctx->head_mean = take(&cv, M ? BL : 0);
    ctx->head_rstd = take(&cv, M ? BL : 0);
    ctx->head_ln = take(&cv, BL * M);
    ctx->logits = take(&cv, M ? BL * V : 0);
    ctx->d_top = take(&cv, BL * D);
    ctx->dx_a = take(&cv, BL * D);
    ctx->dx_b = take(&cv, BL * D);
    ctx->d_res = take(&cv, BL * D);
    ctx->d_h1 = take(&cv, BL * D);
    ctx->d_ctx = take(&cv, BL * D);
    ctx->dq = take(&cv, BL * D);
    ctx->dk = take(&cv, BL * D);
    ctx->dv = take(&cv, BL * D);
    ctx->d_ff = take(&cv, BL * I);
    ctx->d_emb = take(&cv, BL * E);
    ctx->d_head_a = take(&cv, BL * M);
    ctx->d_head_b = take(&cv, BL * M);
    ctx->dP = take(&cv, LL);
    ctx->dS = take(&cv, LL);
    ctx->tmp_LL = take(&cv, LL);
    ctx->chat = take(&cv, LL);
    ctx->pd = take(&cv, LL);
    ctx->B = B;
    ctx->L = L;
    return cv.used;
}

al_status al_train_ctx_new(al_model *model, int max_batch, int max_len, const al_train_options *opt,
                           al_train_ctx **out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "train: no output pointer");
    *out = NULL;
    if (!model) return al_err(err, AL_ERR_INVALID, "train: model is NULL");
    if (max_batch < 1 || max_len < 1)
        return al_err(err, AL_ERR_INVALID, "train: max_batch %d and max_len %d must be >= 1", max_batch, max_len);
    al_train_options o = opt ? *opt : al_train_default_options();
    if (!(o.hidden_dropout >= 0.0f && o.hidden_dropout < 1.0f))
        return al_err(err, AL_ERR_INVALID, "train: hidden_dropout %g must be in [0, 1)", (double)o.hidden_dropout);
    if (!(o.attention_dropout >= 0.0f && o.attention_dropout < 1.0f))
        return al_err(err, AL_ERR_INVALID, "train: attention_dropout %g must be in [0, 1)",
                      (double)o.attention_dropout);
    const al_config *c = &model->config;
    /* Refuse workspaces whose size overflows size_t (32-bit WASM) before measuring in size_t. */
    const double approx = (double)max_batch * max_len *
                          ((double)c->n_layers * (12.0 * c->hidden_size + 2.0 * c->intermediate_size +
                                                  2.25 * c->n_heads * (double)max_len) +
                           20.0 * c->hidden_size + 4.0 * c->embedding_size + 3.0 * c->intermediate_size +
                           5.0 * c->hidden_size + (double)c->vocab_size);
    if (approx * sizeof(float) > (double)SIZE_MAX / 4)
        return al_err(err, AL_ERR_OOM, "train: workspace for batch [%d, %d] is too large", max_batch, max_len);
    al_train_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return al_err(err, AL_ERR_OOM, "train: out of memory");
    ctx->model = model;
    ctx->opt = o;
    ctx->max_batch = max_batch;
    ctx->max_len = max_len;
    al_rng_seed(&ctx->rng, o.seed);
    const size_t NH = (size_t)c->n_layers * c->n_heads;
    ctx->layers = calloc((size_t)c->n_layers, sizeof *ctx->layers);
    ctx->grads = calloc(model->n_floats ? model->n_floats : 1, sizeof(float));
    ctx->theta = calloc(NH, sizeof(float));
    ctx->dtheta = calloc(NH, sizeof(float));
    ctx->policies = calloc(NH, sizeof *ctx->policies); /* zeroed: AL_HEAD_STANDARD */
    if (ctx->layers) ctx->mem_floats = al_tr_carve(ctx, NULL, max_batch, max_len);
    if (ctx->layers) ctx->mem = malloc(ctx->mem_floats * sizeof(float));
    if (!ctx->layers || !ctx->grads || !ctx->theta || !ctx->dtheta || !ctx->policies || !ctx->mem) {
        size_t mb = ctx->mem_floats * sizeof(float) >> 20;
        al_train_ctx_free(ctx);
        return al_err(err, AL_ERR_OOM, "train: out of memory allocating %zu MB of workspace for batch [%d, %d]",
                      mb, max_batch, max_len);
    }
    *out = ctx;
    return AL_OK;
}

void al_train_ctx_free(al_train_ctx *ctx) {
    if (!ctx) return;
    free(ctx->mem);
    free(ctx->layers);
    free(ctx->grads);
    free(ctx->theta);
    free(ctx->dtheta);
    free(ctx->policies);
    free(ctx);
}

void al_train_set_training(al_train_ctx *ctx, int training) {
    if (ctx) ctx->opt.training = training != 0;
}

void al_train_seed(al_train_ctx *ctx, uint64_t seed) {
    if (ctx) al_rng_seed(&ctx->rng, seed);
}

al_status al_train_set_policies(al_train_ctx *ctx, const al_head_policy *policies, al_error *err) {
    if (!ctx) return al_err(err, AL_ERR_INVALID, "train: context is NULL");
    const al_config *c = &ctx->model->config;
    const int NH = c->n_layers * c->n_heads;
    al_status st = al_head_policies_check(policies, c->n_layers, c->n_heads, 0, "train", err);
    if (st) return st;
    ctx->has_policies = policies != NULL;
    for (int i = 0; i < NH; i++) {
        if (policies) ctx->policies[i] = policies[i];
        else ctx->policies[i] = (al_head_policy){AL_HEAD_STANDARD, 0.0f, NULL};
        if (policies && policies[i].mode == AL_HEAD_MIX) {
            double lam = policies[i].lambda;
            if (lam < 1e-6) lam = 1e-6;
            if (lam > 1.0 - 1e-6) lam = 1.0 - 1e-6;
            ctx->theta[i] = (float)log(lam / (1.0 - lam));
        }
    }
    ctx->forward_done = 0;
    return AL_OK;
}

float *al_train_lambda_logits(al_train_ctx *ctx) { return ctx ? ctx->theta : NULL; }
float *al_train_lambda_grads(al_train_ctx *ctx) { return ctx ? ctx->dtheta : NULL; }
float *al_train_grads(al_train_ctx *ctx) { return ctx ? ctx->grads : NULL; }

void al_train_zero_grads(al_train_ctx *ctx) {
    if (!ctx) return;
    memset(ctx->grads, 0, ctx->model->n_floats * sizeof(float));
    memset(ctx->dtheta, 0, (size_t)ctx->model->config.n_layers * ctx->model->config.n_heads * sizeof(float));
}

const float *al_train_hidden(const al_train_ctx *ctx, int layer) {
    if (!ctx || !ctx->forward_done || layer < 0 || layer > ctx->model->config.n_layers) return NULL;
    return ctx->hidden + (size_t)layer * ctx->B * ctx->L * ctx->model->config.hidden_size;
}

/* Marks [p, p + n) of the storage as decayed (1) or not (0); NULL weights are skipped. */
static void mark(const al_model *m, uint8_t *decay, const float *p, size_t n, int value) {
    if (!p || p < m->storage || p >= m->storage + m->n_floats) return;
    memset(decay + (p - m->storage), value, n);
}

void al_train_decay_mask(const al_model *m, uint8_t *decay) {
    const al_config *c = &m->config;
    const al_weights *w = &m->w;
    const size_t V = (size_t)c->vocab_size, E = (size_t)c->embedding_size, D = (size_t)c->hidden_size;
    const size_t I = (size_t)c->intermediate_size, M = (size_t)w->mlm_dim;
    memset(decay, 0, m->n_floats); /* biases and LayerNorm parameters: no decay */
    mark(m, decay, w->word_emb, V * E, 1);
    mark(m, decay, w->pos_emb, (size_t)c->max_position_embeddings * E, 1);
    mark(m, decay, w->type_emb, (size_t)c->type_vocab_size * E, 1);
    mark(m, decay, w->emb_proj_w, D * E, 1);
    for (int l = 0; l < c->n_layers; l++) {
        const al_layer_weights *lw = &w->layers[l];
        mark(m, decay, lw->q_w, D * D, 1);
        mark(m, decay, lw->k_w, D * D, 1);
        mark(m, decay, lw->v_w, D * D, 1);
        mark(m, decay, lw->o_w, D * D, 1);
        mark(m, decay, lw->ff_in_w, I * D, 1);
        mark(m, decay, lw->ff_out_w, D * I, 1);
    }
    mark(m, decay, w->mlm_dense_w, M * D, 1);
    mark(m, decay, w->mlm_decoder_w, V * M, 1);
}
