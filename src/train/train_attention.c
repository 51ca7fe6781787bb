/* train_attention.c: multi-head self-attention with the PAPA hooks, forward (caching S and P) and
 * backward. The forward applies the rules of docs/head_policies.md through the same functions as
 * src/model/attention.c (src/model/head_policy.c), so both passes compute the same probabilities:
 *
 *   STANDARD  P = softmax(Z),  Z = Q K^T / sqrt(dh) + mask_add
 *   CONSTANT  P = C_hat = mask_and_normalize(C)          no gradient to C
 *   MIX       P = lambda S + (1 - lambda) C_hat,         lambda = sigmoid(theta), S = softmax(Z)
 *   ZERO      P = 0
 *   a layer with a CONSTANT or ZERO head is "static": STANDARD and MIX heads go through
 *   mask_and_normalize too, P = mn(R) with R = S (STANDARD) or the MIX combination.
 *
 * then attention dropout on P and ctx_h = dropout(P) V_h. Backward per (sequence, head):
 *   dPd = dctx_h V_h^T, dV_h = Pd^T dctx_h, dP = dPd * keep / (1 - p),
 *   static: dR = mn_bwd(R, dP); MIX: dtheta += sum(dR (S - C_hat)) lambda (1 - lambda), dS = lambda dR;
 *   dZ = softmax_bwd(S, dS); dQ_h = dZ K_h / sqrt(dh); dK_h = dZ^T Q_h / sqrt(dh).
 * S is the family's score rule's (src/model/score_rule.h), as in the forward: its divisor replaces sqrt(dh), its
 * extra_bwd adds the position terms' gradients (DeBERTa) and its turn_back (rotary, ModernBERT) is applied by the
 * layer (train_decoder.c). A rule that excludes keys (ModernBERT's pads and out-of-window keys) leaves S exactly
 * 0 on them and on a row with none left, so softmax_bwd gives them a zero gradient as it should.
 */
#include <math.h>
#include <string.h>

#include "../kernels/kernels.h"
#include "../model/forward_internal.h"
#include "../model/head_policy.h"
#include "../model/real_rows.h"
#include "../model/score_rule.h"
#include "grad_ops.h"
#include "train_internal.h"

/* A rule with a relative-position table (DeBERTa): this layer's query and key projections of the table, the rows
 * the distances read. */
static void project_positions(al_train_ctx *ctx, int l) {
    const al_config *c = &ctx->model->config;
    const al_layer_weights *lw = &ctx->model->w.layers[l];
    const int D = c->hidden_size;
    int lo, n;
    al_score_rule_of(c)->range(ctx->rel_row, ctx->L, &lo, &n);
    const size_t at = (size_t)lo * D;
    al_linear(n, D, D, ctx->rel + at, lw->q_w, lw->q_b, ctx->pos_q + at);
    al_linear(n, D, D, ctx->rel + at, lw->k_w, lw->k_b, ctx->pos_k + at);
}

void al_tr_attention_fwd(al_train_ctx *ctx, int l, const float *x) {
    const al_model *m = ctx->model;
    const al_config *c = &m->config;
    al_tr_layer_cache *lc = &ctx->layers[l];
    /* q and ctx hold H heads in rows of A columns, k and v the KV key/value heads in the first KVW columns of theirs
     * (as projected: query head h reads key/value head h / group) */
    const int B = ctx->B, L = ctx->L, A = al_attn_width(c), H = c->n_heads, dh = c->head_dim;
    const int group = H / al_kv_heads(c), rows = B * L;
    const size_t LL = (size_t)L * L;
    const al_head_policy *layer_pol = ctx->policies + (size_t)l * H;
    const int is_static = al_head_layer_is_static(layer_pol, H);
    const float p_drop = ctx->opt.training ? ctx->opt.attention_dropout : 0.0f;

    /* the projections over the rows the row-wise layers run on (x holds ctx->n_rows of them) by the forward's own
     * (the same bits), q and k kept turned by a turning rule (rotary), each row by its own position id (row_pos;
     * the layer's backward turns their gradients back), then back in the [B, L] layout with zeros at pads
     * (real_rows.h) */
    al_fwd_project_qkv(m, l, layer_pol, NULL, x, ctx->n_rows, ctx->row_pos, lc->q, lc->k, lc->v);
    const al_score_rule *rule = al_score_rule_of(c);
    if (ctx->n_rows < rows) {
        al_rows_expand(lc->q, sizeof(float) * (size_t)A, ctx->row_of, ctx->n_rows, rows);
        al_rows_expand(lc->k, sizeof(float) * (size_t)A, ctx->row_of, ctx->n_rows, rows);
        al_rows_expand(lc->v, sizeof(float) * (size_t)A, ctx->row_of, ctx->n_rows, rows);
    }
    al_tr_dropout_draw(&ctx->rng, lc->attn_keep, (size_t)B * H * LL, p_drop);
    if (ctx->rel) project_positions(ctx, l);
    const al_score_layer ly = al_score_layer_begin(c, l, ctx->rel_row, ctx->pos_q, ctx->pos_k);

    for (int b = 0; b < B; b++) {
        const size_t row0 = (size_t)b * L * A;
        const float *mb = ctx->mask + (size_t)b * L;
        for (int h = 0; h < H; h++) {
            const int lh = l * H + h;
            const al_head_mode mode = layer_pol[h].mode;
            const size_t col = (size_t)h * dh, kv_col = (size_t)(h / group) * dh, at = ((size_t)b * H + h) * LL;
            float *S = lc->S + at, *P = lc->P + at;
            if (al_head_mode_needs_qk(mode)) {
                const al_score_head hd = {lc->q + row0 + col, lc->k + row0 + kv_col, col, mb, ctx->pos + (size_t)b * L,
                                          NULL, L, L, ctx->rel_work};
                rule->probs(&ly, &hd, S);
            } else
                memset(S, 0, sizeof(float) * LL);
            const float lambda = mode == AL_HEAD_MIX ? al_tr_sigmoid(ctx->theta[lh]) : 0.0f;
            al_head_final_probs(mode, lambda, layer_pol[h].constant, is_static, mb, L, S, P, ctx->chat);

            float *ctx_h = lc->ctx + row0 + col;
            if (mode == AL_HEAD_ZERO) {
                for (int i = 0; i < L; i++) memset(ctx_h + (size_t)i * A, 0, sizeof(float) * (size_t)dh);
                continue;
            }
            const float *Pd = P;
            if (p_drop > 0.0f) {
                memcpy(ctx->pd, P, sizeof(float) * LL);
                al_tr_dropout_apply(ctx->pd, lc->attn_keep + at, LL, p_drop);
                Pd = ctx->pd;
            }
            al_gemm_nn(L, dh, L, 1.0f, Pd, L, lc->v + row0 + kv_col, A, ctx_h, A, 0);
        }
    }
    if (ctx->n_rows < rows) al_rows_compact(lc->ctx, sizeof(float) * (size_t)A, ctx->row_of, ctx->n_rows);
}

void al_tr_attention_bwd(al_train_ctx *ctx, int l) {
    const al_config *c = &ctx->model->config;
    al_tr_layer_cache *lc = &ctx->layers[l];
    const int B = ctx->B, L = ctx->L, A = al_attn_width(c), H = c->n_heads, dh = c->head_dim;
    const int group = H / al_kv_heads(c);
    const size_t LL = (size_t)L * L;
    const al_head_policy *layer_pol = ctx->policies + (size_t)l * H;
    const int is_static = al_head_layer_is_static(layer_pol, H);
    const float p_drop = ctx->opt.training ? ctx->opt.attention_dropout : 0.0f;
    const al_score_rule *rule = al_score_rule_of(c);
    const float scale = 1.0f / rule->divisor(c);
    float *dP = ctx->dP, *dS = ctx->dS, *R = ctx->tmp_LL, *chat = ctx->chat;
    if (ctx->rel) project_positions(ctx, l);
    const al_score_layer ly = al_score_layer_begin(c, l, ctx->rel_row, ctx->pos_q, ctx->pos_k);

    for (int b = 0; b < B; b++) {
        const size_t row0 = (size_t)b * L * A;
        const float *mb = ctx->mask + (size_t)b * L;
        for (int h = 0; h < H; h++) {
            const int lh = l * H + h;
            const al_head_mode mode = layer_pol[h].mode;
            const size_t col = (size_t)h * dh, kv_col = (size_t)(h / group) * dh, at = ((size_t)b * H + h) * LL;
            const float *S = lc->S + at, *P = lc->P + at;
            const float *dctx_h = ctx->d_ctx + row0 + col;
            float *dq_h = ctx->dq + row0 + col, *dk_h = ctx->dk + row0 + kv_col, *dv_h = ctx->dv + row0 + kv_col;
            /* a group's first query head writes its key/value head's dK and dV, the others add theirs */
            const int first = h % group == 0, has_softmax = al_head_mode_needs_qk(mode);
            if (!has_softmax)
                for (int i = 0; i < L; i++) {
                    memset(dq_h + (size_t)i * A, 0, sizeof(float) * (size_t)dh);
                    if (first) memset(dk_h + (size_t)i * A, 0, sizeof(float) * (size_t)dh);
                }
            if (mode == AL_HEAD_ZERO) {
                for (int i = 0; first && i < L; i++) memset(dv_h + (size_t)i * A, 0, sizeof(float) * (size_t)dh);
                continue;
            }
            /* P V backward through the dropout mask. */
            const float *Pd = P;
            if (p_drop > 0.0f) {
                memcpy(ctx->pd, P, sizeof(float) * LL);
                al_tr_dropout_apply(ctx->pd, lc->attn_keep + at, LL, p_drop);
                Pd = ctx->pd;
            }
            al_gemm_tn(L, dh, L, 1.0f, Pd, L, dctx_h, A, dv_h, A, !first);
            if (!has_softmax) continue; /* CONSTANT: no gradient to C */
            al_gemm_nt(L, L, dh, 1.0f, dctx_h, A, lc->v + row0 + kv_col, A, dP, L, 0);
            al_tr_dropout_apply(dP, lc->attn_keep + at, LL, p_drop);

            /* dP -> gradient wrt R, the matrix before the static layer's renormalisation. */
            float lambda = 0.0f;
            if (mode == AL_HEAD_MIX) {
                lambda = al_tr_sigmoid(ctx->theta[lh]);
                al_head_constant_hat(layer_pol[h].constant, mb, L, chat);
            }
            if (is_static) {
                if (mode == AL_HEAD_MIX)
                    al_head_mix(lambda, S, chat, LL, R);
                else
                    memcpy(R, S, sizeof(float) * LL);
                al_tr_mask_normalize_bwd(R, mb, dP, dP, L);
            }
            if (mode == AL_HEAD_MIX) {
                double g = 0.0;
                for (size_t e = 0; e < LL; e++) g += (double)dP[e] * ((double)S[e] - chat[e]);
                ctx->dtheta[lh] += (float)(g * lambda * (1.0 - lambda));
                ctx->dlambda[lh] += g; /* dL/dlambda: at lambda = 1 with C = 0, dL/dxi of a head mask */
                for (size_t e = 0; e < LL; e++) dS[e] = lambda * dP[e];
            } else {
                memcpy(dS, dP, sizeof(float) * LL);
            }
            al_tr_softmax_bwd(S, dS, dS, L, L); /* dS now holds dZ */
            al_gemm_nn(L, dh, L, scale, dS, L, lc->k + row0 + kv_col, A, dq_h, A, 0);
            al_gemm_tn(L, dh, L, scale, dS, L, lc->q + row0 + col, A, dk_h, A, !first);
            if (rule->extra_bwd) { /* DeBERTa: no groups */
                const al_score_head hd = {lc->q + row0 + col, lc->k + row0 + kv_col, col, mb, ctx->pos + (size_t)b * L,
                                          NULL, L, L, ctx->rel_work};
                rule->extra_bwd(&ly, &hd, dS, scale, dq_h, dk_h);
            }
        }
    }
}
