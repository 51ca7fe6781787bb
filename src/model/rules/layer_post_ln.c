/* layer_post_ln.c: BERT's post-LayerNorm layer (layer_rule.h, docs/families.md), which RoBERTa, DistilBERT, ELECTRA
 * and DeBERTa share, one chunk:
 *   x = LN(x + attn(x) W_O + b_O)
 *   x = LN(x + act(x W_in + b_in) W_out + b_out)
 * Its training twins are src/train/train_forward.c and train_backward.c. */
#include "../../kernels/kernels.h"
#include "../layer_rule.h"

static void layer_tail(const al_model *m, int l, al_threadpool *pool, const float *ctx, float *x, int rows, float *tmp,
                       float *wide) {
    const al_config *c = &m->config;
    const al_layer_weights *lw = &m->w.layers[l];
    const int D = c->hidden_size, I = c->intermediate_size;
    const size_t n = (size_t)rows * D;
    al_linear_pool(pool, rows, D, D, ctx, lw->o_w, lw->o_b, tmp); /* tmp [rows, D] */
    al_layer_add_inplace(tmp, x, n);
    al_layernorm(tmp, x, rows, D, lw->ln_attn_g, lw->ln_attn_b, c->layer_norm_eps);

    al_linear_pool(pool, rows, I, D, x, lw->ff_in_w, lw->ff_in_b, wide); /* wide [rows, I] */
    al_fwd_activate_pool(pool, c->act, wide, (size_t)rows * I);
    al_linear_pool(pool, rows, D, I, wide, lw->ff_out_w, lw->ff_out_b, tmp);
    al_layer_add_inplace(tmp, x, n);
    al_layernorm(tmp, x, rows, D, lw->ln_ffn_g, lw->ln_ffn_b, c->layer_norm_eps);
}

static void layer(const al_model *m, int l, const al_head_policy *policies, float *x, const float *mask, int L,
                  al_fwd_scratch *s, float *attn_out, float *values_out) {
    al_fwd_attention(m, l, policies, x, mask, L, s, attn_out, values_out);
    layer_tail(m, l, s->pool, s->ctx, x, s->n_rows, s->tmp, s->wide);
}

const al_layer_rule al_layer_post_ln = {
    .name = "post_ln",
    .ffn_factor = 1,
    .res_ln = 1,
    .layer = layer,
    .tail = layer_tail,
    .train_fwd = al_tr_post_ln_layer_fwd,
    .train_bwd = al_tr_post_ln_layer_bwd,
};
