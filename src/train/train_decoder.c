/* train_decoder.c: the pre-norm layers on the training path, with weight gradients: the decoders'
 * (src/model/rules/layer_decoder.c's sequential and parallel rules, with the family's norm and feed-forward of
 * decoder_parts.c; docs/decoders.md, docs/decoder_pretraining.md) and ModernBERT's (rules/layer_pre_ln_glu.c, a
 * frozen encoder: train_ctx.c refuses its weight gradients):
 *
 *   a    = norm1(x)                              (LayerNorm with bias: GPT-2, GPT-NeoX; RMSNorm: Llama, Qwen2;
 *                                                 LayerNorm without bias: ModernBERT, whose layer 0 has none: a = x)
 *   attn = drop(attn(a) Wo^T + bo)               (train_attention.c with the family's score rule: causal dot
 *                                                 products, or rotary on the first rotary_dims of each head,
 *                                                 with Qwen2's sliding window in its windowed layers;
 *                                                 H query heads over KV key/value heads, A = H head_dim columns)
 *   sequential (GPT-2, Llama, Qwen2, GPT-NeoX with use_parallel_residual false):
 *     res1 = x + attn,  res2 = res1 + drop(mlp(norm2(res1)))
 *   parallel (GPT-NeoX's default): res1 = attn,  res2 = (drop(mlp(norm2(x))) + x) + attn
 *   mlp(h) = act(h Wi^T + bi) Wo^T + bo,  or down(act(gate h) * up h) (Llama, Qwen2: separate gate and up;
 *            ModernBERT: the two halves of one [2I, D] block)
 *   y    = res2, or norm_f(res2) after the last layer
 *
 * Backward, from dy: norm_f's (last layer), then each branch from the gradient of its output: the MLP's (out
 * projection, activation or gate, in projections, norm2) and the attention's (d ctx = d Wo, the heads' backward, the
 * inverse turn of dq and dk, da = dq Wq + dk Wk + dv Wv with dK and dV summed over each group's query heads, norm1).
 * Sequential: d res1 = d res2 + the MLP's, dx = d res1 + the attention's; parallel: dx = dy + both. Dropout sits
 * where Hugging Face's GPT2Model puts it (after each output projection, attn_pdrop on the probabilities, embd_pdrop on
 * the embeddings' sum: train_forward.c), at the context's hidden and attention rates. The norms' outputs come from
 * the inference kernels and the projections from the same products as the forward pass, so without dropout every
 * hidden state has al_forward's bits (tests/c/test_decoder_train.c).
 *
 * With real rows (ctx->n_rows < B L, a frozen model only; src/model/real_rows.h) the row-wise tensors hold compact
 * rows, as in train_forward.c's layers: the input is gathered into the output's slice (free until the layer's end
 * writes it), the attention expands q, k and v to the [B, L] layout and turns them by each row's true position
 * (row_pos), and the output is expanded back with zeros at the pads; the backward gathers the input into dx (free
 * until its last line writes it). Qwen2's sliding window is the score rule's (rule_causal_rotary.c): its excluded keys
 * have probability exactly 0, so the softmax backward gives them no gradient. */
#include <string.h>

#include "../kernels/kernels.h"
#include "../model/family_params.h"
#include "../model/layer_rule.h"
#include "../model/real_rows.h"
#include "../model/score_rule.h"
#include "grad_ops.h"
#include "train_internal.h"

/* The family's norm (decoder_parts.c's al_dec_norm) keeping its statistics (RMSNorm: rstd only), and its
 * backward with the gain's and bias's gradients. */
static void norm_fwd(const al_config *c, const float *x, float *y, int rows, const float *g, const float *b,
                     float *mean, float *rstd) {
    if (al_decoder(c)->norm == AL_DEC_RMSNORM)
        al_tr_rmsnorm_kernel_fwd(x, y, rows, c->hidden_size, g, c->layer_norm_eps, rstd);
    else
        al_tr_layernorm_kernel_fwd(x, y, rows, c->hidden_size, g, b, c->layer_norm_eps, mean, rstd);
}

static void norm_bwd(const al_train_ctx *ctx, const float *x, const float *mean, const float *rstd, float *d,
                     int rows, const float *g, const float *b) {
    const al_config *c = &ctx->model->config;
    if (al_decoder(c)->norm == AL_DEC_RMSNORM)
        al_tr_rmsnorm_bwd(x, rstd, d, rows, c->hidden_size, g, d, al_tr_grad(ctx, g));
    else
        al_tr_layernorm_bwd(x, mean, rstd, d, rows, c->hidden_size, g, d, al_tr_grad(ctx, g), al_tr_grad(ctx, b));
}

/* A gated feed-forward: Llama's and Qwen2's, and ModernBERT's (its rule's own). */
static int gated(const al_config *c) {
    return al_decoder(c)->mlp == AL_DEC_GLU || al_layer_rule_of(c) == &al_layer_pre_ln_glu;
}

/* The gated feed-forward's up weight: Llama's separate up_proj, else the second half of a fused [2I, D] block. */
static const float *up_weight(const al_config *c, const al_layer_weights *lw) {
    return lw->ff_up_w ? lw->ff_up_w : lw->ff_in_w + (size_t)c->intermediate_size * c->hidden_size;
}

/* lc->h1 -> out: the family's feed-forward (decoder_parts.c's al_dec_mlp, the same products), keeping ff_pre and
 * ff_act. */
static void mlp_fwd(const al_config *c, const al_layer_weights *lw, al_tr_layer_cache *lc, int rows, float *out) {
    const int D = c->hidden_size, I = c->intermediate_size;
    if (gated(c)) {
        al_gemm_nt(rows, I, D, 1.0f, lc->h1, D, lw->ff_in_w, D, lc->ff_pre, 2 * I, 0);
        al_gemm_nt(rows, I, D, 1.0f, lc->h1, D, up_weight(c, lw), D, lc->ff_pre + I, 2 * I, 0);
        al_tr_glu_fwd(c->act, lc->ff_pre, lc->ff_act, rows, I);
        al_gemm_nt(rows, D, I, 1.0f, lc->ff_act, I, lw->ff_out_w, I, out, D, 0);
        if (lw->ff_out_b)
            for (int r = 0; r < rows; r++)
                for (int d = 0; d < D; d++) out[(size_t)r * D + d] += lw->ff_out_b[d];
        return;
    }
    al_linear(rows, I, D, lc->h1, lw->ff_in_w, lw->ff_in_b, lc->ff_pre);
    memcpy(lc->ff_act, lc->ff_pre, sizeof(float) * (size_t)rows * I);
    al_tr_act_fwd(c->act, lc->ff_act, (size_t)rows * I);
    al_linear(rows, D, I, lc->ff_act, lw->ff_out_w, lw->ff_out_b, out);
}

/* d (the gradient of the MLP's output, [rows, D]) -> the gradient of its input h1, in place. */
static void mlp_bwd(al_train_ctx *ctx, const al_layer_weights *lw, al_tr_layer_cache *lc, int rows, float *d) {
    const al_config *c = &ctx->model->config;
    const int D = c->hidden_size, I = c->intermediate_size;
    float *d_ff = ctx->d_ff;
    if (gated(c)) {
        /* df into the second half of d_ff, then [d gate | d up] in place (act(gate) recomputed into ff_act, whose
         * forward values only the out projection's weight gradient reads) */
        al_tr_linear_bwd(rows, D, I, lc->ff_act, lw->ff_out_w, d, NULL, 0, al_tr_grad(ctx, lw->ff_out_w),
                         al_tr_grad(ctx, lw->ff_out_b));
        al_gemm_nn(rows, I, D, 1.0f, d, D, lw->ff_out_w, I, d_ff + I, 2 * I, 0);
        al_tr_glu_bwd(c->act, lc->ff_pre, d_ff, lc->ff_act, rows, I);
        const float *w2[2] = {lw->ff_in_w, up_weight(c, lw)};
        for (int i = 0; i < 2; i++) {
            float *dW = al_tr_grad(ctx, w2[i]);
            if (dW) al_gemm_tn(I, D, rows, 1.0f, d_ff + (size_t)i * I, 2 * I, lc->h1, D, dW, D, 1);
        }
        /* d h1 = [d gate | d up] [gate; up]: one product over both halves when they are one block (ModernBERT) */
        if (!lw->ff_up_w) {
            al_gemm_nn(rows, D, 2 * I, 1.0f, d_ff, 2 * I, lw->ff_in_w, D, d, D, 0);
            return;
        }
        for (int i = 0; i < 2; i++) al_gemm_nn(rows, D, I, 1.0f, d_ff + (size_t)i * I, 2 * I, w2[i], D, d, D, i > 0);
        return;
    }
    al_tr_linear_bwd(rows, D, I, lc->ff_act, lw->ff_out_w, d, d_ff, 0, al_tr_grad(ctx, lw->ff_out_w),
                     al_tr_grad(ctx, lw->ff_out_b));
    al_tr_act_bwd(c->act, lc->ff_pre, d_ff, d_ff, (size_t)rows * I);
    al_tr_linear_bwd(rows, I, D, lc->h1, lw->ff_in_w, d_ff, d, 0, al_tr_grad(ctx, lw->ff_in_w),
                     al_tr_grad(ctx, lw->ff_in_b));
}

void al_tr_prenorm_layer_fwd(al_train_ctx *ctx, int l) {
    const al_model *m = ctx->model;
    const al_config *c = &m->config;
    const al_layer_weights *lw = &m->w.layers[l];
    al_tr_layer_cache *lc = &ctx->layers[l];
    const int BL = ctx->B * ctx->L, rows = ctx->n_rows, D = c->hidden_size, A = al_attn_width(c);
    const int packed = rows < BL, parallel = al_decoder(c)->parallel_residual;
    const size_t n_full = (size_t)BL * D, n = (size_t)rows * D, row_bytes = sizeof(float) * (size_t)D;
    const float *x = ctx->hidden + (size_t)l * n_full;
    float *y = ctx->hidden + (size_t)(l + 1) * n_full;
    const float p_drop = ctx->opt.training ? ctx->opt.hidden_dropout : 0.0f;
    if (packed) {
        al_rows_gather(y, x, row_bytes, ctx->row_of, rows);
        x = y;
    }

    /* the attention's input: a decoder keeps it (attn_in) for the projections' weight gradients; a frozen encoder's
     * h1 holds it until the MLP norm */
    const float *a = x;
    if (lw->ln_attn_g) {
        float *out = lc->attn_in ? lc->attn_in : lc->h1;
        norm_fwd(c, x, out, rows, lw->ln_attn_g, lw->ln_attn_b, lc->mean1, lc->rstd1);
        a = out;
    }
    al_tr_attention_fwd(ctx, l, a);
    al_linear(rows, D, A, lc->ctx, lw->o_w, lw->o_b, lc->res1);
    al_tr_dropout_draw(&ctx->rng, lc->keep1, n_full, p_drop); /* every position draws, as the padded pass */
    if (packed && p_drop > 0.0f) al_rows_compact(lc->keep1, (size_t)D, ctx->row_of, rows);
    al_tr_dropout_apply(lc->res1, lc->keep1, n, p_drop);
    if (!parallel) al_layer_add_inplace(lc->res1, x, n);

    /* the MLP reads norm2 of res1 (sequential) or of the layer's input (parallel) */
    norm_fwd(c, parallel ? x : lc->res1, lc->h1, rows, lw->ln_ffn_g, lw->ln_ffn_b, lc->mean2, lc->rstd2);
    mlp_fwd(c, lw, lc, rows, lc->res2);
    al_tr_dropout_draw(&ctx->rng, lc->keep2, n_full, p_drop);
    if (packed && p_drop > 0.0f) al_rows_compact(lc->keep2, (size_t)D, ctx->row_of, rows);
    al_tr_dropout_apply(lc->res2, lc->keep2, n, p_drop);
    if (parallel) al_layer_add_inplace(lc->res2, x, n); /* (x + mlp) + attn, the forward's order */
    al_layer_add_inplace(lc->res2, lc->res1, n);
    if (l == c->n_layers - 1)
        norm_fwd(c, lc->res2, y, rows, m->w.final_ln_g, m->w.final_ln_b, ctx->fin_mean, ctx->fin_rstd);
    else
        memcpy(y, lc->res2, sizeof(float) * n);
    if (packed) al_rows_expand(y, row_bytes, ctx->row_of, rows, BL);
}

/* Rows of x [rows, ld] to rows of their first w columns, in place (w <= ld). */
static void narrow_rows(float *x, int rows, int ld, int w) {
    for (int r = 1; r < rows && w < ld; r++) memmove(x + (size_t)r * w, x + (size_t)r * ld, sizeof(float) * (size_t)w);
}

/* The attention branch's backward: d (the gradient of its output after the dropout, [rows, D]) -> the gradient of
 * its norm's input x, in place. */
static void attention_bwd(al_train_ctx *ctx, int l, const float *x, float *d) {
    const al_config *c = &ctx->model->config;
    const al_layer_weights *lw = &ctx->model->w.layers[l];
    al_tr_layer_cache *lc = &ctx->layers[l];
    const int BL = ctx->B * ctx->L, rows = ctx->n_rows, D = c->hidden_size, A = al_attn_width(c);
    const int KVW = al_kv_width(c);
    const size_t a_bytes = sizeof(float) * (size_t)A;
    const float p_drop = ctx->opt.training ? ctx->opt.hidden_dropout : 0.0f;
    al_tr_dropout_apply(d, lc->keep1, (size_t)rows * D, p_drop);
    /* d ctx in the [B, L] layout around the heads' backward */
    al_tr_linear_bwd(rows, D, A, lc->ctx, lw->o_w, d, ctx->d_ctx, 0, al_tr_grad(ctx, lw->o_w), al_tr_grad(ctx, lw->o_b));
    if (rows < BL) al_rows_expand(ctx->d_ctx, a_bytes, ctx->row_of, rows, BL);
    al_tr_attention_bwd(ctx, l);
    if (rows < BL) {
        al_rows_compact(ctx->dq, a_bytes, ctx->row_of, rows);
        al_rows_compact(ctx->dk, a_bytes, ctx->row_of, rows);
        al_rows_compact(ctx->dv, a_bytes, ctx->row_of, rows);
    }
    /* dq, dk wrt the turned vectors turned back by each row's position (rotary); the key/value heads' gradients
     * from rows of A columns to rows of their KVW */
    const al_score_rule *rule = al_score_rule_of(c);
    if (rule->turn_back) rule->turn_back(c, l, ctx->dq, ctx->dk, A, ctx->row_pos, rows);
    narrow_rows(ctx->dk, rows, A, KVW);
    narrow_rows(ctx->dv, rows, A, KVW);
    const float *w3[3];
    al_tr_qkv_weights(c, lw, &w3[0], &w3[1], &w3[2]);
    const float *d3[3] = {ctx->dq, ctx->dk, ctx->dv};
    for (int i = 0; i < 3; i++)
        al_tr_linear_bwd(rows, i ? KVW : A, D, lw->ln_attn_g ? lc->attn_in : x, w3[i], d3[i], d, i > 0,
                         al_tr_grad(ctx, w3[i]), al_tr_grad(ctx, al_tr_qkv_bias(c, lw, i)));
    if (lw->ln_attn_g) norm_bwd(ctx, x, lc->mean1, lc->rstd1, d, rows, lw->ln_attn_g, lw->ln_attn_b);
}

/* The MLP branch's backward: d (its output's gradient, [rows, D]) -> the gradient of its norm's input h, in place. */
static void mlp_branch_bwd(al_train_ctx *ctx, int l, const float *h, float *d) {
    const al_layer_weights *lw = &ctx->model->w.layers[l];
    al_tr_layer_cache *lc = &ctx->layers[l];
    const int rows = ctx->n_rows;
    const float p_drop = ctx->opt.training ? ctx->opt.hidden_dropout : 0.0f;
    al_tr_dropout_apply(d, lc->keep2, (size_t)rows * ctx->model->config.hidden_size, p_drop);
    mlp_bwd(ctx, lw, lc, rows, d);
    norm_bwd(ctx, h, lc->mean2, lc->rstd2, d, rows, lw->ln_ffn_g, lw->ln_ffn_b);
}

void al_tr_prenorm_layer_bwd(al_train_ctx *ctx, int l, const float *dy, float *dx) {
    const al_model *m = ctx->model;
    const al_config *c = &m->config;
    al_tr_layer_cache *lc = &ctx->layers[l];
    const int BL = ctx->B * ctx->L, rows = ctx->n_rows, D = c->hidden_size;
    const size_t n = (size_t)rows * D, row_bytes = sizeof(float) * (size_t)D;
    const float *x = ctx->hidden + (size_t)l * BL * D;
    float *d_res = ctx->d_res, *d_branch = ctx->d_h1;
    if (rows < BL) { /* the input's real rows */
        al_rows_gather(dx, x, row_bytes, ctx->row_of, rows);
        x = dx;
    }

    /* d res2 */
    memcpy(d_res, dy, sizeof(float) * n);
    if (l == c->n_layers - 1)
        norm_bwd(ctx, lc->res2, ctx->fin_mean, ctx->fin_rstd, d_res, rows, m->w.final_ln_g, m->w.final_ln_b);

    if (!al_decoder(c)->parallel_residual) {
        memcpy(d_branch, d_res, sizeof(float) * n);
        mlp_branch_bwd(ctx, l, lc->res1, d_branch);
        al_layer_add_inplace(d_res, d_branch, n); /* d res1 */
        memcpy(d_branch, d_res, sizeof(float) * n);
        attention_bwd(ctx, l, x, d_branch);
        for (size_t i = 0; i < n; i++) dx[i] = d_res[i] + d_branch[i];
        return;
    }
    /* parallel: both branches from d res2; the attention's result waits in d_ctx (free after its backward) */
    memcpy(d_branch, d_res, sizeof(float) * n);
    attention_bwd(ctx, l, x, d_branch);
    memcpy(ctx->d_ctx, d_branch, sizeof(float) * n);
    memcpy(d_branch, d_res, sizeof(float) * n);
    mlp_branch_bwd(ctx, l, x, d_branch);
    for (size_t i = 0; i < n; i++) dx[i] = d_res[i] + d_branch[i] + ctx->d_ctx[i];
}
