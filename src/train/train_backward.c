/* train_backward.c: the backward pass of the encoder, last layer first, then the embeddings. Parameter
 * gradients are accumulated into ctx->grads at the weight's offset in model->storage (skipped when the
 * encoder is frozen); lambda-logit gradients of MIX heads always. */
#include <string.h>

#include "../core/error.h"
#include "../model/family.h"
#include "../model/layer_rule.h"
#include "../model/real_rows.h"
#include "grad_ops.h"
#include "train_internal.h"

static void scale_by_keep(float *x, const uint8_t *keep, size_t n, float p) { al_tr_dropout_apply(x, keep, n, p); }

/* dy: gradient wrt layer l's output; dx: written with the gradient wrt its input; both ctx->n_rows rows (compact
 * with real rows: the attention's gradients are expanded to the [B, L] layout around it, zeros at pads). */
void al_tr_post_ln_layer_bwd(al_train_ctx *ctx, int l, const float *dy, float *dx) { /* layer_post_ln.c's twin */
    const al_model *m = ctx->model;
    const al_config *c = &m->config;
    const al_layer_weights *lw = &m->w.layers[l];
    al_tr_layer_cache *lc = &ctx->layers[l];
    const int BL = ctx->B * ctx->L, rows = ctx->n_rows, D = c->hidden_size, I = c->intermediate_size;
    const size_t n = (size_t)rows * D, row_bytes = sizeof(float) * (size_t)D;
    const float *x = ctx->hidden + (size_t)l * BL * D; /* read for weight gradients only, never with real rows */
    const float p_drop = ctx->opt.training ? ctx->opt.hidden_dropout : 0.0f;

    /* LayerNorm 2; the residual branch gives h1 the same gradient. */
    al_tr_layernorm_bwd(lc->res2, lc->mean2, lc->rstd2, dy, rows, D, lw->ln_ffn_g, ctx->d_res,
                        al_tr_grad(ctx, lw->ln_ffn_g), al_tr_grad(ctx, lw->ln_ffn_b));
    memcpy(ctx->d_h1, ctx->d_res, sizeof(float) * n);
    scale_by_keep(ctx->d_res, lc->keep2, n, p_drop);
    /* FFN: out projection, activation, in projection (dx of the latter added to d_h1). */
    al_tr_linear_bwd(rows, D, I, lc->ff_act, lw->ff_out_w, ctx->d_res, ctx->d_ff, 0, al_tr_grad(ctx, lw->ff_out_w),
                     al_tr_grad(ctx, lw->ff_out_b));
    al_tr_act_bwd(c->act, lc->ff_pre, ctx->d_ff, ctx->d_ff, (size_t)rows * I);
    al_tr_linear_bwd(rows, I, D, lc->h1, lw->ff_in_w, ctx->d_ff, ctx->d_h1, 1, al_tr_grad(ctx, lw->ff_in_w),
                     al_tr_grad(ctx, lw->ff_in_b));
    /* LayerNorm 1; the residual branch gives x the same gradient. */
    al_tr_layernorm_bwd(lc->res1, lc->mean1, lc->rstd1, ctx->d_h1, rows, D, lw->ln_attn_g, ctx->d_res,
                        al_tr_grad(ctx, lw->ln_attn_g), al_tr_grad(ctx, lw->ln_attn_b));
    memcpy(dx, ctx->d_res, sizeof(float) * n);
    scale_by_keep(ctx->d_res, lc->keep1, n, p_drop);
    al_tr_linear_bwd(rows, D, D, lc->ctx, lw->o_w, ctx->d_res, ctx->d_ctx, 0, al_tr_grad(ctx, lw->o_w),
                     al_tr_grad(ctx, lw->o_b));
    /* Attention, then the Q, K, V projections. */
    const int packed = rows < BL;
    if (packed) al_rows_expand(ctx->d_ctx, row_bytes, ctx->row_of, rows, BL);
    al_tr_attention_bwd(ctx, l);
    if (packed) {
        al_rows_compact(ctx->dq, row_bytes, ctx->row_of, rows);
        al_rows_compact(ctx->dk, row_bytes, ctx->row_of, rows);
        al_rows_compact(ctx->dv, row_bytes, ctx->row_of, rows);
    }
    al_tr_linear_bwd(rows, D, D, x, lw->q_w, ctx->dq, dx, 1, al_tr_grad(ctx, lw->q_w), al_tr_grad(ctx, lw->q_b));
    al_tr_linear_bwd(rows, D, D, x, lw->k_w, ctx->dk, dx, 1, al_tr_grad(ctx, lw->k_w), al_tr_grad(ctx, lw->k_b));
    al_tr_linear_bwd(rows, D, D, x, lw->v_w, ctx->dv, dx, 1, al_tr_grad(ctx, lw->v_w), al_tr_grad(ctx, lw->v_b));
}

/* d0: gradient wrt hidden[0]. Hugging Face's nn.Embedding(padding_idx=pad) gives the pad token's word row
 * no gradient (likewise RoBERTa's position row pad_token_id); the tied decoder still updates that row. */
static void embed_bwd(al_train_ctx *ctx, const float *d0) {
    const al_model *m = ctx->model;
    const al_config *c = &m->config;
    const al_weights *w = &m->w;
    if (!ctx->opt.weight_grads) return;
    const int rows = ctx->B * ctx->L, E = c->embedding_size, D = c->hidden_size;
    const float p_drop = ctx->opt.training ? ctx->opt.hidden_dropout : 0.0f;
    float *d = ctx->d_emb;
    if (w->emb_proj_w)
        al_tr_linear_bwd(rows, D, E, ctx->emb_ln, w->emb_proj_w, d0, d, 0, al_tr_grad(ctx, w->emb_proj_w),
                         al_tr_grad(ctx, w->emb_proj_b));
    else
        memcpy(d, d0, sizeof(float) * (size_t)rows * E);
    scale_by_keep(d, ctx->emb_keep, (size_t)rows * E, p_drop);
    if (w->emb_ln_g) /* a decoder's embeddings have no norm (train_forward.c) */
        al_tr_layernorm_bwd(ctx->emb_sum, ctx->emb_mean, ctx->emb_rstd, d, rows, E, w->emb_ln_g, d,
                            al_tr_grad(ctx, w->emb_ln_g), al_tr_grad(ctx, w->emb_ln_b));
    float *g_word = al_tr_grad(ctx, w->word_emb), *g_pos = al_tr_grad(ctx, w->pos_emb);
    float *g_type = al_tr_grad(ctx, w->type_emb);
    const int pos_pad = al_family_padding_position(c);
    const int decoder = al_family_of(c)->causal; /* GPT-2's wte has no padding row: every id gets its gradient */
    for (int r = 0; r < rows; r++) {
        const float *dr = d + (size_t)r * E;
        float *gw = (ctx->ids[r] != c->pad_token_id || decoder) ? g_word + (size_t)ctx->ids[r] * E : NULL;
        float *gp = g_pos && ctx->pos[r] != pos_pad ? g_pos + (size_t)ctx->pos[r] * E : NULL; /* rotary: none */
        float *gt = g_type ? g_type + (size_t)ctx->types[r] * E : NULL;
        for (int e = 0; e < E; e++) {
            if (gw) gw[e] += dr[e];
            if (gp) gp[e] += dr[e];
            if (gt) gt[e] += dr[e];
        }
    }
}

al_status al_train_backward(al_train_ctx *ctx, const float *d_hidden, al_error *err) {
    if (!ctx) return al_err(err, AL_ERR_INVALID, "train: context is NULL");
    if (!ctx->forward_done) return al_err(err, AL_ERR_INVALID, "train: backward called before a forward pass");
    const al_config *c = &ctx->model->config;
    const int NL = c->n_layers;
    const int BL = ctx->B * ctx->L, D = c->hidden_size, packed = ctx->n_rows < BL;
    const size_t n = (size_t)BL * D;
    float *dy = ctx->dx_a, *dx = ctx->dx_b;
    if (ctx->mlm_pending) memcpy(dy, ctx->d_top, sizeof(float) * n);
    else memset(dy, 0, sizeof(float) * n);
    if (d_hidden)
        for (size_t i = 0; i < n; i++) dy[i] += d_hidden[(size_t)NL * n + i];
    /* with real rows the gradients run compact; those given at pads are ignored (train.h) */
    if (packed) al_rows_compact(dy, sizeof(float) * (size_t)D, ctx->row_of, ctx->n_rows);
    for (int l = NL - 1; l >= 0; l--) {
        al_layer_rule_of(&ctx->model->config)->train_bwd(ctx, l, dy, dx); /* the layer rule's twin */
        if (d_hidden && packed)
            for (int r = 0; r < ctx->n_rows; r++) {
                const float *g = d_hidden + (size_t)l * n + (size_t)ctx->row_of[r] * D;
                float *o = dx + (size_t)r * D;
                for (int e = 0; e < D; e++) o[e] += g[e];
            }
        else if (d_hidden)
            for (size_t i = 0; i < n; i++) dx[i] += d_hidden[(size_t)l * n + i];
        float *t = dy;
        dy = dx;
        dx = t;
    }
    embed_bwd(ctx, dy);
    ctx->mlm_pending = 0;
    return AL_OK;
}
