/* layer_pre_ln_glu.c: ModernBERT's pre-norm layer with a gated feed-forward (layer_rule.h, docs/families.md), one
 * chunk:
 *   x = x + Wo attn(attn_norm(x))          (layer 0 has no attn_norm: the embedding norm precedes it)
 *   x = x + Wo_mlp(act(u) * g)             (u, g = the two halves of Wi mlp_norm(x), input first)
 * and after the last layer x = final_norm(x). Norms have no bias, projections no bias. Its training twin is the
 * decoders' pre-norm layer (src/train/train_decoder.c), for a frozen encoder. */
#include <string.h>

#include "../../kernels/kernels.h"
#include "../layer_rule.h"

static void layer_tail(const al_model *m, int l, al_threadpool *pool, const float *ctx, float *x, int rows, float *tmp,
                       float *wide);

static void layer(const al_model *m, int l, const al_head_policy *policies, float *x, const float *mask,
                         int L, al_fwd_scratch *s, float *attn_out, float *values_out) {
    const al_config *c = &m->config;
    const al_layer_weights *lw = &m->w.layers[l];
    const int D = c->hidden_size, rows = s->n_rows; /* x holds the chunk's real rows (forward_internal.h) */
    const float eps = c->layer_norm_eps;
    const float *attn_in = x;
    if (lw->ln_attn_g) {
        al_layernorm(x, s->tmp, rows, D, lw->ln_attn_g, NULL, eps);
        attn_in = s->tmp;
    }
    al_fwd_attention(m, l, policies, attn_in, mask, L, s, attn_out, values_out); /* s->ctx */
    layer_tail(m, l, s->pool, s->ctx, x, rows, s->tmp, s->wide);
}

/* The layer after self-attention (ctx [rows, D]): x += ctx Wo, the gated feed-forward, and after the last layer the
 * final norm. tmp [rows, D], wide [rows, 2I]. */
static void layer_tail(const al_model *m, int l, al_threadpool *pool, const float *ctx, float *x, int rows, float *tmp,
                       float *wide) {
    const al_config *c = &m->config;
    const al_layer_weights *lw = &m->w.layers[l];
    const int D = c->hidden_size, I = c->intermediate_size;
    const size_t n = (size_t)rows * D;
    const float eps = c->layer_norm_eps;
    al_linear_pool(pool, rows, D, D, ctx, lw->o_w, NULL, tmp);
    al_layer_add_inplace(x, tmp, n);

    al_layernorm(x, tmp, rows, D, lw->ln_ffn_g, NULL, eps);
    al_linear_pool(pool, rows, 2 * I, D, tmp, lw->ff_in_w, NULL, wide); /* wide [rows, 2I] */
    al_fwd_glu_pool(pool, c->act, wide, rows, I);
    al_gemm_nt_pool(pool, rows, D, I, 1.0f, wide, 2 * I, lw->ff_out_w, I, tmp, D, 0);
    al_layer_add_inplace(x, tmp, n);

    if (l == c->n_layers - 1) al_layernorm(x, x, rows, D, m->w.final_ln_g, NULL, eps);
}

const al_layer_rule al_layer_pre_ln_glu = {
    .name = "pre_ln_glu",
    .ffn_factor = 2,
    .pre_norm = 1,
    .frozen = 1,
    .layer = layer,
    .tail = layer_tail,
    .train_fwd = al_tr_prenorm_layer_fwd,
    .train_bwd = al_tr_prenorm_layer_bwd,
};
