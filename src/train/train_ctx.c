/* train_ctx.c: the training context: options, workspace carving, policies and lambda logits, gradient
 * buffer, and the weight-decay mask. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/carve.h"
#include "../core/det_math.h"
#include "../core/error.h"
#include "../kernels/kernels.h"
#include "../model/layer_rule.h"
#include "../model/score_rule.h"
#include "../model/family.h"
#include "../model/head_policy.h"
#include "train_internal.h"

al_train_options al_train_default_options(void) {
    al_train_options o;
    memset(&o, 0, sizeof o);
    o.training = 1;
    o.hidden_dropout = 0.1f;
    o.attention_dropout = 0.1f;
    o.seed = 42;
    o.weight_grads = 1;
    o.mlm_head = 1;
    return o;
}

/* al_expf: the same bits on every path, so native and WASM mix heads identically. */
float al_tr_sigmoid(float theta) { return 1.0f / (1.0f + al_expf(-theta)); }

/* The MLM head's rows and logits exist only when the context may compute the MLM loss, or a causal model's
 * next-token loss (train_lm.c: its rows are the hidden size wide, the LM head [V, D] reads them). */
static int has_mlm(const al_train_ctx *ctx) {
    return ctx->opt.mlm_head && (ctx->model->w.mlm_decoder_w || ctx->model->w.lm_head_w);
}

uint64_t al_tr_carve(al_train_ctx *ctx, float *base, int B, int L) {
    const al_model *m = ctx->model;
    const al_config *c = &m->config;
    const uint64_t BL = (uint64_t)B * L, D = (uint64_t)c->hidden_size, E = (uint64_t)c->embedding_size;
    const uint64_t I = (uint64_t)c->intermediate_size, H = (uint64_t)c->n_heads, V = (uint64_t)c->vocab_size;
    const int mlm = has_mlm(ctx);
    const int lm = mlm && !m->w.mlm_decoder_w; /* the LM head: the logits only, no transform rows */
    const uint64_t M = mlm ? (uint64_t)(lm ? 0 : m->w.mlm_dim) : 0, LL = (uint64_t)L * L;
    const uint64_t BHLL = (uint64_t)B * H * LL;
    const uint64_t FF = (uint64_t)al_layer_rule_of(c)->ffn_factor * I; /* 2: ff_pre and d_ff hold input and gate */
    /* the heads' width: q, k, v, ctx and their gradients hold rows of A = n_heads * head_dim columns (D in
     * encoders and GPT-2; a decoder's head_dim may say otherwise) */
    const uint64_t A = (uint64_t)al_attn_width(c) > D ? (uint64_t)al_attn_width(c) : D;
    al_carver cv = {base, 0}; /* src/core/carve.h */
    ctx->ids = al_carve_i32(&cv, BL);
    ctx->types = al_carve_i32(&cv, BL);
    ctx->pos = al_carve_i32(&cv, BL);
    ctx->row_of = ctx->opt.real_rows ? al_carve_i32(&cv, BL) : NULL; /* real rows (real_rows.h) */
    ctx->pos_of = ctx->opt.real_rows ? al_carve_i32(&cv, BL) : NULL;
    ctx->mask = al_carve(&cv, BL);
    ctx->emb_sum = al_carve(&cv, BL * E);
    ctx->emb_mean = al_carve(&cv, BL);
    ctx->emb_rstd = al_carve(&cv, BL);
    ctx->emb_keep = al_carve_u8(&cv, BL * E);
    ctx->emb_ln = al_carve(&cv, BL * E);
    ctx->hidden = al_carve(&cv, ((uint64_t)c->n_layers + 1) * BL * D);
    /* A frozen encoder's backward reads ctx, h1 and ff_act of no layer (only weight gradients need them):
     * one copy serves every layer's forward as scratch. */
    const int share = !ctx->opt.weight_grads;
    float *shared_ctx = NULL, *shared_h1 = NULL, *shared_ff_act = NULL, *shared_attn_in = NULL;
    const int decoder = al_family_of(c)->causal; /* its ln_1 output (train_decoder.c) */
    for (int l = 0; l < c->n_layers; l++) {
        al_tr_layer_cache measure_only, *lc = ctx->layers ? &ctx->layers[l] : &measure_only;
        const int own = !share || l == 0;
        lc->q = al_carve(&cv, BL * A);
        lc->k = al_carve(&cv, BL * A);
        lc->v = al_carve(&cv, BL * A);
        lc->S = al_carve(&cv, BHLL);
        lc->P = al_carve(&cv, BHLL);
        lc->attn_keep = al_carve_u8(&cv, BHLL);
        lc->ctx = own ? (shared_ctx = al_carve(&cv, BL * A)) : shared_ctx;
        lc->keep1 = al_carve_u8(&cv, BL * D);
        lc->res1 = al_carve(&cv, BL * D);
        lc->mean1 = al_carve(&cv, BL);
        lc->rstd1 = al_carve(&cv, BL);
        lc->h1 = own ? (shared_h1 = al_carve(&cv, BL * D)) : shared_h1;
        lc->ff_pre = al_carve(&cv, BL * FF);
        lc->ff_act = own ? (shared_ff_act = al_carve(&cv, BL * I)) : shared_ff_act;
        lc->keep2 = al_carve_u8(&cv, BL * D);
        lc->res2 = al_carve(&cv, BL * D);
        lc->mean2 = al_carve(&cv, BL);
        lc->rstd2 = al_carve(&cv, BL);
        lc->attn_in = decoder && own ? (shared_attn_in = al_carve(&cv, BL * D)) : decoder ? shared_attn_in : NULL;
    }
    ctx->sel_rows = al_carve_i32(&cv, mlm ? BL : 0);
    ctx->sel_labels = al_carve_i32(&cv, mlm ? BL : 0);
    ctx->head_x = al_carve(&cv, M || lm ? BL * D : 0);
    ctx->head_pre = al_carve(&cv, BL * M);
    ctx->head_act = al_carve(&cv, BL * M);
    ctx->head_mean = al_carve(&cv, M ? BL : 0);
    ctx->head_rstd = al_carve(&cv, M ? BL : 0);
    ctx->head_ln = al_carve(&cv, BL * M);
    ctx->logits = al_carve(&cv, M || lm ? BL * V : 0);
    ctx->d_top = al_carve(&cv, mlm ? BL * D : 0);
    ctx->dx_a = al_carve(&cv, BL * D);
    ctx->dx_b = al_carve(&cv, BL * D);
    ctx->d_res = al_carve(&cv, BL * D);
    ctx->d_h1 = al_carve(&cv, BL * D);
    ctx->d_ctx = al_carve(&cv, BL * A);
    ctx->dq = al_carve(&cv, BL * A);
    ctx->dk = al_carve(&cv, BL * A);
    ctx->dv = al_carve(&cv, BL * A);
    ctx->d_ff = al_carve(&cv, BL * FF);
    ctx->d_emb = al_carve(&cv, ctx->opt.weight_grads ? BL * E : 0); /* the embeddings' backward only feeds weights */
    ctx->d_head_a = al_carve(&cv, BL * M);
    ctx->d_head_b = al_carve(&cv, BL * M);
    ctx->dP = al_carve(&cv, LL);
    ctx->dS = al_carve(&cv, LL);
    ctx->tmp_LL = al_carve(&cv, LL);
    ctx->chat = al_carve(&cv, LL);
    ctx->pd = al_carve(&cv, LL);
    const al_score_rule *rule = al_score_rule_of(c);
    const int rel = al_score_table_rows(c) > 0; /* the score rule's relative-position table (DeBERTa's) */
    const uint64_t R = rel ? (uint64_t)al_score_table_rows(c) : 0;
    ctx->rel = rel ? al_carve(&cv, R * D) : NULL;
    ctx->pos_q = rel ? al_carve(&cv, R * D) : NULL;
    ctx->pos_k = rel ? al_carve(&cv, R * D) : NULL;
    ctx->rel_row = rel ? al_carve_i32(&cv, 2 * (uint64_t)L) : NULL;
    ctx->rel_work = rel && rule->head_scratch ? al_carve(&cv, rule->head_scratch(c, L, L)) : NULL;
    const int final_norm = al_layer_rule_of(c)->pre_norm; /* a pre-norm rule's norm after the last layer */
    ctx->fin_mean = final_norm ? al_carve(&cv, BL) : NULL;
    ctx->fin_rstd = final_norm ? al_carve(&cv, BL) : NULL;
    ctx->B = B;
    ctx->L = L;
    return cv.used;
}

al_status al_train_check_family(const al_model *model, const char *what, const char *instead, al_error *err) {
    /* the layer rules whose training twins exist (src/model/layer_rule.h): BERT's post-LayerNorm layers
     * (train_forward.c, train_backward.c) and the pre-norm layers of ModernBERT and the decoders (train_decoder.c);
     * a new rule is refused here until it has one */
    if (al_layer_rule_of(&model->config)->train_fwd) return AL_OK;
    return al_err(err, AL_ERR_UNSUPPORTED, "%s is not built for %s yet%s", what, al_arch_name(model->config.arch),
                  instead ? instead : "");
}

static al_status check_request(const al_model *model, int max_batch, int max_len, const al_train_options *o,
                               al_error *err) {
    if (!model) return al_err(err, AL_ERR_INVALID, "train: model is NULL");
    al_status st = al_train_check_family(model, "training (the training forward and backward)", "", err);
    if (st) return st;
    if (o->real_rows && o->weight_grads)
        return al_err(err, AL_ERR_INVALID,
                      "train: real_rows needs weight_grads = 0 (weight gradients sum over every row)");
    /* DeBERTa and ModernBERT train with a frozen encoder only (the lambda ranking, probes): DeBERTa's weight
     * gradients (relative embeddings, position projections) and a projected embedding's dropout, and ModernBERT's
     * weight gradients (embedding norm, fused QKV, GeGLU, final norm) are not built */
    const al_config *mc = &model->config;
    const int frozen_only = al_score_rule_of(mc)->frozen || al_layer_rule_of(mc)->frozen;
    if (frozen_only && (o->weight_grads || mc->embedding_size != mc->hidden_size))
        return al_err(err, AL_ERR_UNSUPPORTED,
                      "train: weight gradients (pretraining) are not built for %s yet; only the lambda ranking's "
                      "frozen encoder is",
                      al_arch_name(mc->arch));
    if (max_batch < 1 || max_len < 1)
        return al_err(err, AL_ERR_INVALID, "train: max_batch %d and max_len %d must be >= 1", max_batch, max_len);
    if (!(o->hidden_dropout >= 0.0f && o->hidden_dropout < 1.0f))
        return al_err(err, AL_ERR_INVALID, "train: hidden_dropout %g must be in [0, 1)", (double)o->hidden_dropout);
    if (!(o->attention_dropout >= 0.0f && o->attention_dropout < 1.0f))
        return al_err(err, AL_ERR_INVALID, "train: attention_dropout %g must be in [0, 1)",
                      (double)o->attention_dropout);
    return AL_OK;
}

al_status al_train_ctx_measure(const al_model *model, int max_batch, int max_len, const al_train_options *opt,
                               al_train_size *out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "train: no output pointer");
    memset(out, 0, sizeof *out);
    al_train_options o = opt ? *opt : al_train_default_options();
    al_status st = check_request(model, max_batch, max_len, &o, err);
    if (st) return st;
    const al_config *c = &model->config;
    /* A context with no layer array: al_tr_carve only counts (the carving is the one rule for the sizes). */
    al_train_ctx probe;
    memset(&probe, 0, sizeof probe);
    probe.model = (al_model *)model;
    probe.opt = o;
    const uint64_t with = al_tr_carve(&probe, NULL, max_batch, max_len);
    probe.opt.mlm_head = 0;
    const uint64_t without = al_tr_carve(&probe, NULL, max_batch, max_len);
    const uint64_t NH = (uint64_t)c->n_layers * c->n_heads;
    out->max_batch = max_batch;
    out->max_len = max_len;
    out->activations = without * sizeof(float);
    out->mlm_head = (with - without) * sizeof(float);
    out->grads = o.weight_grads ? (uint64_t)model->n_floats * sizeof(float) : 0;
    out->other = sizeof(al_train_ctx) + (uint64_t)c->n_layers * sizeof(al_tr_layer_cache) +
                 NH * (2 * sizeof(float) + sizeof(double) + sizeof(al_head_mode) + sizeof(const float *));
    out->total = out->activations + out->mlm_head + out->grads + out->other;
    return AL_OK;
}

static double mb(uint64_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

/* "needs X MB (activations A MB, MLM head M MB, parameter gradients G MB)" and what lowers it. */
static al_status size_error(const char *what, const al_train_size *s, const char *why, al_error *err) {
    char parts[160], lower[200];
    int n = snprintf(parts, sizeof parts, "activations %.1f MB", mb(s->activations));
    if (s->mlm_head) n += snprintf(parts + n, sizeof parts - (size_t)n, ", MLM head %.1f MB", mb(s->mlm_head));
    if (s->grads) snprintf(parts + n, sizeof parts - (size_t)n, ", parameter gradients %.1f MB", mb(s->grads));
    n = snprintf(lower, sizeof lower, "lower the batch (%d) or the sequence length (%d)", s->max_batch, s->max_len);
    if (s->grads) n += snprintf(lower + n, sizeof lower - (size_t)n, ", or set weight_grads = 0 (frozen encoder)");
    if (s->mlm_head) snprintf(lower + n, sizeof lower - (size_t)n, ", or set mlm_head = 0 (no MLM loss)");
    return al_err(err, AL_ERR_OOM, "%s: a training context for batch [%d, %d] needs %.1f MB (%s), %s; %s",
                  what ? what : "train", s->max_batch, s->max_len, mb(s->total), parts, why, lower);
}

al_status al_train_check_budget(const char *what, const al_train_size *size, uint64_t budget_bytes, al_error *err) {
    if (!size) return al_err(err, AL_ERR_INVALID, "train: no size given");
    if (size->total <= budget_bytes) return AL_OK;
    char why[64];
    snprintf(why, sizeof why, "more than the %.1f MB allowed", mb(budget_bytes));
    return size_error(what, size, why, err);
}

al_status al_train_ctx_new(al_model *model, int max_batch, int max_len, const al_train_options *opt,
                           al_train_ctx **out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "train: no output pointer");
    *out = NULL;
    al_train_size size;
    al_status st = al_train_ctx_measure(model, max_batch, max_len, opt, &size, err);
    if (st) return st;
    /* Refuse what size_t cannot address (wasm32) before any size_t arithmetic on it. */
    if (size.total > SIZE_MAX / 2) return size_error("train", &size, "more than this build can address", err);
    const al_config *c = &model->config;
    al_train_ctx *ctx = calloc(1, sizeof *ctx);
    if (!ctx) return al_err(err, AL_ERR_OOM, "train: out of memory");
    ctx->model = model;
    ctx->opt = opt ? *opt : al_train_default_options();
    ctx->max_batch = max_batch;
    ctx->max_len = max_len;
    al_rng_seed(&ctx->rng, ctx->opt.seed);
    const size_t NH = (size_t)c->n_layers * c->n_heads;
    ctx->layers = calloc((size_t)c->n_layers, sizeof *ctx->layers);
    if (ctx->opt.weight_grads) ctx->grads = calloc(model->n_floats ? model->n_floats : 1, sizeof(float));
    ctx->theta = calloc(NH, sizeof(float));
    ctx->dtheta = calloc(NH, sizeof(float));
    ctx->dlambda = calloc(NH, sizeof(double));
    ctx->policies = calloc(NH, sizeof *ctx->policies); /* zeroed: AL_HEAD_STANDARD */
    if (ctx->layers) ctx->mem_floats = (size_t)al_tr_carve(ctx, NULL, max_batch, max_len);
    if (ctx->layers) ctx->mem = malloc(ctx->mem_floats * sizeof(float));
    if (!ctx->layers || (ctx->opt.weight_grads && !ctx->grads) || !ctx->theta || !ctx->dtheta || !ctx->dlambda || !ctx->policies ||
        !ctx->mem) {
        al_train_ctx_free(ctx);
        return size_error("train", &size, "and the allocation failed (out of memory)", err);
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
    free(ctx->dlambda);
    free(ctx->policies);
    free(ctx);
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
            ctx->theta[i] = (float)al_det_log(lam / (1.0 - lam)); /* the same bits in every build */
        }
    }
    ctx->forward_done = 0;
    return AL_OK;
}

float *al_train_lambda_logits(al_train_ctx *ctx) { return ctx ? ctx->theta : NULL; }
float *al_train_lambda_grads(al_train_ctx *ctx) { return ctx ? ctx->dtheta : NULL; }
const double *al_train_lambda_value_grads(const al_train_ctx *ctx) { return ctx ? ctx->dlambda : NULL; }
float *al_train_grads(al_train_ctx *ctx) { return ctx ? ctx->grads : NULL; }

void al_train_zero_grads(al_train_ctx *ctx) {
    if (!ctx) return;
    if (ctx->grads) memset(ctx->grads, 0, ctx->model->n_floats * sizeof(float));
    memset(ctx->dtheta, 0, (size_t)ctx->model->config.n_layers * ctx->model->config.n_heads * sizeof(float));
    memset(ctx->dlambda, 0, (size_t)ctx->model->config.n_layers * ctx->model->config.n_heads * sizeof(double));
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
        mark(m, decay, lw->qkv_w, 3 * D * D, 1); /* GPT-2's fused c_attn (encoders: ModernBERT's Wqkv) */
    }
    mark(m, decay, w->lm_head_w, V * D, 1);      /* a causal model's LM head (word_emb itself when tied) */
    mark(m, decay, w->mlm_dense_w, M * D, 1);
    mark(m, decay, w->mlm_decoder_w, V * M, 1);
}

al_status al_tr_gather_labelled(al_train_ctx *ctx, const int32_t *labels, float *loss, int *n_labelled, int *n_rows,
                                al_error *err) {
    const al_config *c = &ctx->model->config;
    const int B = ctx->B, L = ctx->L, D = c->hidden_size, V = c->vocab_size;
    int n = 0;
    *n_rows = 0;
    for (int t = 0; t < B * L; t++) {
        if (labels[t] == AL_IGNORE_INDEX) continue;
        if (labels[t] < 0 || labels[t] >= V)
            return al_err(err, AL_ERR_INVALID, "train: labels[%d][%d] = %d is neither %d nor a token id in [0, %d)",
                          t / L, t % L, (int)labels[t], AL_IGNORE_INDEX, V);
        ctx->sel_rows[n] = t;
        ctx->sel_labels[n] = labels[t];
        n++;
    }
    ctx->n_sel = n;
    *n_rows = n;
    if (n_labelled) *n_labelled = n;
    if (loss) *loss = 0.0f;
    memset(ctx->d_top, 0, sizeof(float) * (size_t)B * L * D);
    ctx->mlm_pending = 1;
    const float *top = ctx->hidden + (size_t)c->n_layers * B * L * D;
    for (int r = 0; r < n; r++)
        memcpy(ctx->head_x + (size_t)r * D, top + (size_t)ctx->sel_rows[r] * D, sizeof(float) * (size_t)D);
    return AL_OK;
}
