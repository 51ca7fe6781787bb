/* train_modernbert.c: ModernBERT's pre-norm layer (src/model/rules/layer_pre_ln_glu.c) on the
 * training path, for a frozen encoder (train_ctx.c refuses its weight gradients): the forward keeps what the
 * lambda-logit and hidden-state gradients need, the backward computes those only.
 *
 *   a    = attn_norm(x)                      (layer 0: a = x; the embedding norm precedes it)
 *   res1 = x + drop(attn(a) Wo^T)            (attention: train_attention.c, rotary and windowed)
 *   h1   = mlp_norm(res1)
 *   [u | g] = h1 Wi^T,  f = act(u) * g
 *   res2 = res1 + drop(f Wo_mlp^T)
 *   y    = res2, or final_norm(res2) after the last layer
 *
 * Backward, from dy: the final norm's, then d res2 reaches res1 directly and through the MLP
 * (df = d Wo_mlp, du = df g act'(u), dg = df act(u), dh1 = [du | dg] Wi), then the MLP norm's; d res1 reaches x
 * directly and through the attention (dctx = d Wo, attention backward, the inverse rotation of dq and dk,
 * da = dq Wq + dk Wk + dv Wv), then the attention norm's. Dropout sits where the BERT path puts it (after
 * each output projection, before its residual), at the context's rates. The norms' outputs come from the
 * inference kernel and the projections from the same products, so without dropout every hidden state has
 * al_forward's bits (tests/c/test_modernbert.c).
 *
 * With real rows (ctx->n_rows < B L, src/model/real_rows.h) the row-wise tensors hold compact rows, as in
 * train_forward.c's layers: the input is gathered into the output's slice (free until the layer's end writes it),
 * the attention expands q, k and v to the [B, L] layout and turns them by each row's true position (row_pos), and
 * the output is expanded back with zeros at the pads; the backward gathers the input again for the attention
 * norm. */
#include <string.h>

#include "../kernels/kernels.h"
#include "../model/layer_rule.h"
#include "../model/real_rows.h"
#include "../model/score_rule.h"
#include "grad_ops.h"
#include "train_internal.h"

static void add_inplace(float *y, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] += x[i];
}

void al_tr_prenorm_layer_fwd(al_train_ctx *ctx, int l) {
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

    /* h1 is free until the MLP norm: it holds the attention's input */
    const float *a = x;
    if (lw->ln_attn_g) {
        al_tr_layernorm_kernel_fwd(x, lc->h1, rows, D, lw->ln_attn_g, NULL, eps, lc->mean1, lc->rstd1);
        a = lc->h1;
    }
    al_tr_attention_fwd(ctx, l, a);
    al_linear(rows, D, D, lc->ctx, lw->o_w, NULL, lc->res1);
    al_tr_dropout_draw(&ctx->rng, lc->keep1, n_full, p_drop); /* every position draws, as the padded pass */
    if (packed && p_drop > 0.0f) al_rows_compact(lc->keep1, (size_t)D, ctx->row_of, rows);
    al_tr_dropout_apply(lc->res1, lc->keep1, n, p_drop);
    add_inplace(lc->res1, x, n);

    al_tr_layernorm_kernel_fwd(lc->res1, lc->h1, rows, D, lw->ln_ffn_g, NULL, eps, lc->mean2, lc->rstd2);
    al_linear(rows, 2 * I, D, lc->h1, lw->ff_in_w, NULL, lc->ff_pre);
    for (int r = 0; r < rows; r++) { /* act(u) * g as layer_pre_ln_glu.c computes it */
        const float *u = lc->ff_pre + (size_t)r * 2 * I, *g = u + I;
        float *f = lc->ff_act + (size_t)r * I;
        memcpy(f, u, sizeof(float) * (size_t)I);
        al_tr_act_fwd(c->act, f, (size_t)I);
        for (int i = 0; i < I; i++) f[i] *= g[i];
    }
    al_linear(rows, D, I, lc->ff_act, lw->ff_out_w, NULL, lc->res2);
    al_tr_dropout_draw(&ctx->rng, lc->keep2, n_full, p_drop);
    if (packed && p_drop > 0.0f) al_rows_compact(lc->keep2, (size_t)D, ctx->row_of, rows);
    al_tr_dropout_apply(lc->res2, lc->keep2, n, p_drop);
    add_inplace(lc->res2, lc->res1, n);
    if (l == c->n_layers - 1)
        al_tr_layernorm_kernel_fwd(lc->res2, y, rows, D, m->w.final_ln_g, NULL, eps, ctx->fin_mean, ctx->fin_rstd);
    else
        memcpy(y, lc->res2, sizeof(float) * n);
    if (packed) al_rows_expand(y, row_bytes, ctx->row_of, rows, BL);
}

void al_tr_prenorm_layer_bwd(al_train_ctx *ctx, int l, const float *dy, float *dx) {
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
        al_tr_layernorm_bwd(lc->res2, ctx->fin_mean, ctx->fin_rstd, dy, rows, D, m->w.final_ln_g, d_res, NULL, NULL);
    else
        memcpy(d_res, dy, sizeof(float) * n);

    /* MLP: df into the gate half of d_ff, then [du | dg] in place; act(u) recomputed into ff_act (the
     * forward's copy is not kept per layer for a frozen encoder) */
    memcpy(d_branch, d_res, sizeof(float) * n);
    al_tr_dropout_apply(d_branch, lc->keep2, n, p_drop);
    al_gemm_nn(rows, I, D, 1.0f, d_branch, D, lw->ff_out_w, I, d_ff + I, 2 * I, 0);
    for (int r = 0; r < rows; r++) {
        const float *u = lc->ff_pre + (size_t)r * 2 * I, *g = u + I;
        float *du = d_ff + (size_t)r * 2 * I, *dg = du + I, *act_u = lc->ff_act + (size_t)r * I;
        memcpy(act_u, u, sizeof(float) * (size_t)I);
        al_tr_act_fwd(c->act, act_u, (size_t)I);
        for (int i = 0; i < I; i++) {
            du[i] = dg[i] * g[i];
            dg[i] *= act_u[i];
        }
        al_tr_act_bwd(c->act, u, du, du, (size_t)I);
    }
    /* d h1 (in d_branch), the MLP norm's backward, and d res1 = d res2 + that */
    al_tr_linear_bwd(rows, 2 * I, D, lc->h1, lw->ff_in_w, d_ff, d_branch, 0, NULL, NULL);
    al_tr_layernorm_bwd(lc->res1, lc->mean2, lc->rstd2, d_branch, rows, D, lw->ln_ffn_g, d_branch, NULL, NULL);
    add_inplace(d_res, d_branch, n);

    /* attention: d ctx (in the [B, L] layout around the heads' backward), dq, dk wrt the turned vectors turned
     * back by each row's position, d a into d_branch */
    memcpy(d_branch, d_res, sizeof(float) * n);
    al_tr_dropout_apply(d_branch, lc->keep1, n, p_drop);
    al_tr_linear_bwd(rows, D, D, lc->ctx, lw->o_w, d_branch, ctx->d_ctx, 0, NULL, NULL);
    if (packed) al_rows_expand(ctx->d_ctx, row_bytes, ctx->row_of, rows, BL);
    al_tr_attention_bwd(ctx, l);
    if (packed) {
        al_rows_compact(ctx->dq, row_bytes, ctx->row_of, rows);
        al_rows_compact(ctx->dk, row_bytes, ctx->row_of, rows);
        al_rows_compact(ctx->dv, row_bytes, ctx->row_of, rows);
        al_rows_gather(ctx->d_ctx, x, row_bytes, ctx->row_of, rows); /* d_ctx is free: the input's real rows */
        x = ctx->d_ctx;
    }
    const al_score_rule *rule = al_score_rule_of(c); /* the turn's backward (rotary) */
    if (rule->turn_back) rule->turn_back(c, l, ctx->dq, ctx->dk, D, ctx->row_pos, rows);
    const float *q_w, *k_w, *v_w;
    al_tr_qkv_weights(c, lw, &q_w, &k_w, &v_w);
    al_tr_linear_bwd(rows, D, D, x, q_w, ctx->dq, d_branch, 0, NULL, NULL);
    al_tr_linear_bwd(rows, D, D, x, k_w, ctx->dk, d_branch, 1, NULL, NULL);
    al_tr_linear_bwd(rows, D, D, x, v_w, ctx->dv, d_branch, 1, NULL, NULL);
    if (lw->ln_attn_g)
        al_tr_layernorm_bwd(x, lc->mean1, lc->rstd1, d_branch, rows, D, lw->ln_attn_g, d_branch, NULL, NULL);
    for (size_t i = 0; i < n; i++) dx[i] = d_res[i] + d_branch[i];
}
