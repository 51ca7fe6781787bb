/* train_decoder.c: GPT-2's pre-LayerNorm decoder layer (src/model/rules/layer_decoder.c's sequential rule with
 * LayerNorm and the plain feed-forward; docs/decoder_pretraining.md) on the training path, with weight gradients:
 *
 *   a    = ln_1(x)
 *   res1 = x + drop(attn(a) Wo^T + bo)          (causal attention: train_attention.c with the causal_dot rule)
 *   h1   = ln_2(res1)
 *   res2 = res1 + drop(act(h1 Wi^T + bi) Wo_mlp^T + bo_mlp)
 *   y    = res2, or ln_f(res2) after the last layer
 *
 * Backward, from dy: ln_f's (last layer), then d res2 reaches res1 directly and through the MLP and ln_2;
 * d res1 reaches x directly and through the attention (d ctx = d Wo, the heads' backward, da = dq Wq + dk Wk +
 * dv Wv) and ln_1. Dropout sits where Hugging Face's GPT2Model puts it (resid_pdrop after each output
 * projection, attn_pdrop on the probabilities, embd_pdrop on the embeddings' sum: train_forward.c), at the
 * context's hidden and attention rates. The norms' outputs come from the inference kernel and the projections
 * from the same products as the forward pass, so without dropout every hidden state has al_forward's bits
 * (tests/c/test_decoder_train.c).
 *
 * The structure is ModernBERT's pre-norm layer's (train_modernbert.c) with biases, the plain feed-forward and
 * weight gradients; what GPT-2 does not use (RMSNorm, gated feed-forward, rotary positions, grouped keys and
 * values, the parallel residual) is refused by name before a context is made (al_tr_decoder_unbuilt). With real
 * rows (ctx->n_rows < B L, a frozen model only) the row-wise tensors hold compact rows, as there. */
#include <string.h>

#include "../kernels/kernels.h"
#include "../model/family_params.h"
#include "../model/layer_rule.h"
#include "../model/real_rows.h"
#include "../model/score_rule.h"
#include "grad_ops.h"
#include "train_internal.h"

const char *al_tr_decoder_unbuilt(const al_config *c) {
    const al_decoder_params *d = al_decoder(c);
    if (d->norm == AL_DEC_RMSNORM) return "RMSNorm";
    if (d->mlp == AL_DEC_GLU) return "the gated feed-forward (GLU)";
    if (d->rotary_dims > 0) return "rotary positions";
    if (al_kv_heads(c) != c->n_heads) return "grouped-query attention";
    if (d->parallel_residual) return "the parallel residual";
    if (d->window > 0) return "the sliding window";
    if (al_attn_width(c) != c->hidden_size) return "a head width other than hidden_size / n_heads";
    return NULL;
}

void al_tr_decoder_layer_fwd(al_train_ctx *ctx, int l) {
    const al_model *m = ctx->model;
    const al_config *c = &m->config;
    const al_layer_weights *lw = &m->w.layers[l];
    al_tr_layer_cache *lc = &ctx->layers[l];
    const int BL = ctx->B * ctx->L, rows = ctx->n_rows, D = c->hidden_size, I = c->intermediate_size;
    const int packed = rows < BL;
    const size_t n_full = (size_t)BL * D, n = (size_t)rows * D, row_bytes = sizeof(float) * (size_t)D;
    const float *x = ctx->hidden + (size_t)l * n_full;
    float *y = ctx->hidden + (size_t)(l + 1) * n_full;
    const float p_drop = ctx->opt.training ? ctx->opt.hidden_dropout : 0.0f;
    const float eps = c->layer_norm_eps;
    if (packed) {
        al_rows_gather(y, x, row_bytes, ctx->row_of, rows);
        x = y;
    }

    al_tr_layernorm_kernel_fwd(x, lc->attn_in, rows, D, lw->ln_attn_g, lw->ln_attn_b, eps, lc->mean1, lc->rstd1);
    al_tr_attention_fwd(ctx, l, lc->attn_in);
    al_linear(rows, D, D, lc->ctx, lw->o_w, lw->o_b, lc->res1);
    al_tr_dropout_draw(&ctx->rng, lc->keep1, n_full, p_drop); /* every position draws, as the padded pass */
    if (packed && p_drop > 0.0f) al_rows_compact(lc->keep1, (size_t)D, ctx->row_of, rows);
    al_tr_dropout_apply(lc->res1, lc->keep1, n, p_drop);
    al_layer_add_inplace(lc->res1, x, n);

    al_tr_layernorm_kernel_fwd(lc->res1, lc->h1, rows, D, lw->ln_ffn_g, lw->ln_ffn_b, eps, lc->mean2, lc->rstd2);
    al_linear(rows, I, D, lc->h1, lw->ff_in_w, lw->ff_in_b, lc->ff_pre);
    memcpy(lc->ff_act, lc->ff_pre, sizeof(float) * (size_t)rows * I);
    al_tr_act_fwd(c->act, lc->ff_act, (size_t)rows * I);
    al_linear(rows, D, I, lc->ff_act, lw->ff_out_w, lw->ff_out_b, lc->res2);
    al_tr_dropout_draw(&ctx->rng, lc->keep2, n_full, p_drop);
    if (packed && p_drop > 0.0f) al_rows_compact(lc->keep2, (size_t)D, ctx->row_of, rows);
    al_tr_dropout_apply(lc->res2, lc->keep2, n, p_drop);
    al_layer_add_inplace(lc->res2, lc->res1, n);
    if (l == c->n_layers - 1)
        al_tr_layernorm_kernel_fwd(lc->res2, y, rows, D, m->w.final_ln_g, m->w.final_ln_b, eps, ctx->fin_mean,
                                   ctx->fin_rstd);
    else
        memcpy(y, lc->res2, sizeof(float) * n);
    if (packed) al_rows_expand(y, row_bytes, ctx->row_of, rows, BL);
}

void al_tr_decoder_layer_bwd(al_train_ctx *ctx, int l, const float *dy, float *dx) {
    const al_model *m = ctx->model;
    const al_config *c = &m->config;
    const al_layer_weights *lw = &m->w.layers[l];
    al_tr_layer_cache *lc = &ctx->layers[l];
    const int BL = ctx->B * ctx->L, rows = ctx->n_rows, D = c->hidden_size, I = c->intermediate_size;
    const int packed = rows < BL;
    const size_t n = (size_t)rows * D, row_bytes = sizeof(float) * (size_t)D;
    const float *x = ctx->hidden + (size_t)l * BL * D;
    const float p_drop = ctx->opt.training ? ctx->opt.hidden_dropout : 0.0f;
    float *d_res = ctx->d_res, *d_branch = ctx->d_h1, *d_ff = ctx->d_ff;

    /* d res2 */
    if (l == c->n_layers - 1)
        al_tr_layernorm_bwd(lc->res2, ctx->fin_mean, ctx->fin_rstd, dy, rows, D, m->w.final_ln_g, d_res,
                            al_tr_grad(ctx, m->w.final_ln_g), al_tr_grad(ctx, m->w.final_ln_b));
    else
        memcpy(d_res, dy, sizeof(float) * n);

    /* MLP: out projection, activation, in projection into d h1, then ln_2; d res1 = d res2 + that */
    memcpy(d_branch, d_res, sizeof(float) * n);
    al_tr_dropout_apply(d_branch, lc->keep2, n, p_drop);
    al_tr_linear_bwd(rows, D, I, lc->ff_act, lw->ff_out_w, d_branch, d_ff, 0, al_tr_grad(ctx, lw->ff_out_w),
                     al_tr_grad(ctx, lw->ff_out_b));
    al_tr_act_bwd(c->act, lc->ff_pre, d_ff, d_ff, (size_t)rows * I);
    al_tr_linear_bwd(rows, I, D, lc->h1, lw->ff_in_w, d_ff, d_branch, 0, al_tr_grad(ctx, lw->ff_in_w),
                     al_tr_grad(ctx, lw->ff_in_b));
    al_tr_layernorm_bwd(lc->res1, lc->mean2, lc->rstd2, d_branch, rows, D, lw->ln_ffn_g, d_branch,
                        al_tr_grad(ctx, lw->ln_ffn_g), al_tr_grad(ctx, lw->ln_ffn_b));
    al_layer_add_inplace(d_res, d_branch, n);

    /* attention: d ctx (in the [B, L] layout around the heads' backward), then the fused projection's three
     * blocks (gradients at their places in qkv_w and qkv_b), d a into d_branch, then ln_1 */
    memcpy(d_branch, d_res, sizeof(float) * n);
    al_tr_dropout_apply(d_branch, lc->keep1, n, p_drop);
    al_tr_linear_bwd(rows, D, D, lc->ctx, lw->o_w, d_branch, ctx->d_ctx, 0, al_tr_grad(ctx, lw->o_w),
                     al_tr_grad(ctx, lw->o_b));
    if (packed) al_rows_expand(ctx->d_ctx, row_bytes, ctx->row_of, rows, BL);
    al_tr_attention_bwd(ctx, l);
    if (packed) {
        al_rows_compact(ctx->dq, row_bytes, ctx->row_of, rows);
        al_rows_compact(ctx->dk, row_bytes, ctx->row_of, rows);
        al_rows_compact(ctx->dv, row_bytes, ctx->row_of, rows);
        al_rows_gather(ctx->d_ctx, x, row_bytes, ctx->row_of, rows); /* d_ctx is free: the input's real rows */
        x = ctx->d_ctx;
    }
    const float *w3[3];
    al_tr_qkv_weights(lw, D, &w3[0], &w3[1], &w3[2]);
    const float *d3[3] = {ctx->dq, ctx->dk, ctx->dv};
    for (int i = 0; i < 3; i++)
        al_tr_linear_bwd(rows, D, D, lc->attn_in, w3[i], d3[i], d_branch, i > 0, al_tr_grad(ctx, w3[i]),
                         al_tr_grad(ctx, al_tr_qkv_bias(lw, D, i)));
    al_tr_layernorm_bwd(x, lc->mean1, lc->rstd1, d_branch, rows, D, lw->ln_attn_g, d_branch,
                        al_tr_grad(ctx, lw->ln_attn_g), al_tr_grad(ctx, lw->ln_attn_b));
    for (size_t i = 0; i < n; i++) dx[i] = d_res[i] + d_branch[i];
}
