/* train_forward.c: the training forward pass. Same arithmetic as al_forward (src/model/forward.c) with
 * dropout where Hugging Face puts it (after the embedding LayerNorm, on the attention probabilities, after
 * each output projection before its residual), keeping every activation the backward pass needs. */
#include <string.h>

#include "../core/error.h"
#include "../kernels/kernels.h"
#include "../model/deberta.h"
#include "../model/layer_rule.h"
#include "../model/score_rule.h"
#include "../model/family.h"
#include "../model/forward_internal.h"
#include "../model/real_rows.h"
#include "grad_ops.h"
#include "train_internal.h"

static al_status validate(const al_train_ctx *ctx, const al_batch *batch, al_error *err) {
    if (!ctx) return al_err(err, AL_ERR_INVALID, "train: context is NULL");
    if (!batch) return al_err(err, AL_ERR_INVALID, "train: batch is NULL");
    const al_config *c = &ctx->model->config;
    const int B = batch->n_seqs, L = batch->seq_len;
    if (B < 1 || B > ctx->max_batch)
        return al_err(err, AL_ERR_INVALID, "train: n_seqs %d must be in [1, %d] (max_batch)", B, ctx->max_batch);
    if (L < 1 || L > ctx->max_len)
        return al_err(err, AL_ERR_INVALID, "train: seq_len %d must be in [1, %d] (max_len)", L, ctx->max_len);
    if (!batch->input_ids) return al_err(err, AL_ERR_INVALID, "train: input_ids is NULL");
    for (int b = 0; b < B; b++)
        for (int i = 0; i < L; i++) {
            const size_t t = (size_t)b * L + i;
            const int32_t id = batch->input_ids[t];
            if (id < 0 || id >= c->vocab_size)
                return al_err(err, AL_ERR_INVALID, "train: input_ids[%d][%d] = %d is outside the vocabulary [0, %d)",
                              b, i, (int)id, c->vocab_size);
            if (batch->attention_mask && batch->attention_mask[t] != 0 && batch->attention_mask[t] != 1)
                return al_err(err, AL_ERR_INVALID, "train: attention_mask[%d][%d] = %d must be 0 or 1", b, i,
                              (int)batch->attention_mask[t]);
            const int32_t ty = batch->type_ids ? batch->type_ids[t] : 0;
            if (ty != 0 && (ty < 0 || ty >= c->type_vocab_size))
                return al_err(err, AL_ERR_INVALID, "train: type_ids[%d][%d] = %d is outside [0, %d) (type_vocab_size)",
                              b, i, (int)ty, c->type_vocab_size);
        }
    return AL_OK;
}

/* word + type + position, LayerNorm, dropout, ELECTRA's projection: hidden[0]. */
static void embed(al_train_ctx *ctx) {
    const al_model *m = ctx->model;
    const al_config *c = &m->config;
    const al_weights *w = &m->w;
    const int rows = ctx->B * ctx->L, E = c->embedding_size, D = c->hidden_size;
    const float p_drop = ctx->opt.training ? ctx->opt.hidden_dropout : 0.0f;
    if (al_family_of(c)->positions == AL_POS_ROTARY) {
        /* ModernBERT's embedding (word row, norm without bias) as the forward pass's; frozen encoder only */
        const al_batch batch = {ctx->B, ctx->L, ctx->ids, NULL, NULL, NULL};
        al_fwd_embed(m, &batch, ctx->pos, 0, ctx->B, NULL, ctx->hidden);
        al_tr_dropout_draw(&ctx->rng, ctx->emb_keep, (size_t)rows * E, p_drop);
        al_tr_dropout_apply(ctx->hidden, ctx->emb_keep, (size_t)rows * E, p_drop);
        return;
    }
    if (al_family_of(c)->positions == AL_POS_RELATIVE) {
        /* DeBERTa's embedding as the forward pass's (its LayerNorm statistics feed only weight gradients, which
         * train_ctx.c refuses for it), then its dropout; E == D there */
        const al_batch batch = {ctx->B, ctx->L, ctx->ids, NULL, w->type_emb ? ctx->types : NULL, NULL};
        al_deberta_embed(m, &batch, ctx->pos, 0, ctx->B, ctx->emb_sum, ctx->hidden);
        for (int r = 0; r < rows; r++)
            if (ctx->mask[r] == 0.0f) memset(ctx->hidden + (size_t)r * D, 0, sizeof(float) * (size_t)D);
        al_tr_dropout_draw(&ctx->rng, ctx->emb_keep, (size_t)rows * E, p_drop);
        al_tr_dropout_apply(ctx->hidden, ctx->emb_keep, (size_t)rows * E, p_drop);
        return;
    }
    if (!w->emb_ln_g) {
        /* a decoder (GPT-2): word + position, no norm, then embd_pdrop's dropout (train_decoder.c) */
        const al_batch batch = {ctx->B, ctx->L, ctx->ids, NULL, NULL, NULL};
        al_fwd_embed(m, &batch, ctx->pos, 0, ctx->B, NULL, ctx->hidden);
        al_tr_dropout_draw(&ctx->rng, ctx->emb_keep, (size_t)rows * E, p_drop);
        al_tr_dropout_apply(ctx->hidden, ctx->emb_keep, (size_t)rows * E, p_drop);
        return;
    }
    for (int r = 0; r < rows; r++) {
        const float *word = w->word_emb + (size_t)ctx->ids[r] * E;
        const float *posv = w->pos_emb + (size_t)ctx->pos[r] * E;
        const float *type = w->type_emb ? w->type_emb + (size_t)ctx->types[r] * E : NULL;
        float *out = ctx->emb_sum + (size_t)r * E;
        for (int e = 0; e < E; e++) { /* HF order: (word + type) + position */
            float v = word[e];
            if (type) v += type[e];
            out[e] = v + posv[e];
        }
    }
    float *ln_out = w->emb_proj_w ? ctx->emb_ln : ctx->hidden;
    al_tr_layernorm_fwd(ctx->emb_sum, ln_out, rows, E, w->emb_ln_g, w->emb_ln_b, c->layer_norm_eps, ctx->emb_mean,
                        ctx->emb_rstd);
    al_tr_dropout_draw(&ctx->rng, ctx->emb_keep, (size_t)rows * E, p_drop);
    al_tr_dropout_apply(ln_out, ctx->emb_keep, (size_t)rows * E, p_drop);
    if (w->emb_proj_w) al_linear(rows, D, E, ctx->emb_ln, w->emb_proj_w, w->emb_proj_b, ctx->hidden);
}

static void add_inplace(float *y, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] += x[i];
}

/* With real rows (ctx->n_rows < B L) the row-wise tensors below hold compact rows; the input is gathered into
 * the output's slice (free until the last LayerNorm writes it) and the output expanded back, zeros at pads. */
void al_tr_post_ln_layer_fwd(al_train_ctx *ctx, int l) { /* src/model/rules/layer_post_ln.c's twin */
    const al_model *m = ctx->model;
    const al_config *c = &m->config;
    const al_layer_weights *lw = &m->w.layers[l];
    al_tr_layer_cache *lc = &ctx->layers[l];
    const int BL = ctx->B * ctx->L, rows = ctx->n_rows, D = c->hidden_size, I = c->intermediate_size;
    const int packed = rows < BL;
    const size_t n_full = (size_t)BL * D, n = (size_t)rows * D;
    const float *x = ctx->hidden + (size_t)l * n_full;
    float *y = ctx->hidden + (size_t)(l + 1) * n_full;
    const float p_drop = ctx->opt.training ? ctx->opt.hidden_dropout : 0.0f;
    if (packed) {
        al_rows_gather(y, x, sizeof(float) * (size_t)D, ctx->row_of, rows);
        x = y;
    }

    al_tr_attention_fwd(ctx, l, x);
    al_linear(rows, D, D, lc->ctx, lw->o_w, lw->o_b, lc->res1);
    al_tr_dropout_draw(&ctx->rng, lc->keep1, n_full, p_drop); /* every position draws, as the padded pass */
    if (packed && p_drop > 0.0f) al_rows_compact(lc->keep1, (size_t)D, ctx->row_of, rows);
    al_tr_dropout_apply(lc->res1, lc->keep1, n, p_drop);
    add_inplace(lc->res1, x, n);
    al_tr_layernorm_fwd(lc->res1, lc->h1, rows, D, lw->ln_attn_g, lw->ln_attn_b, c->layer_norm_eps, lc->mean1,
                        lc->rstd1);

    al_linear(rows, I, D, lc->h1, lw->ff_in_w, lw->ff_in_b, lc->ff_pre);
    memcpy(lc->ff_act, lc->ff_pre, sizeof(float) * (size_t)rows * I);
    al_tr_act_fwd(c->act, lc->ff_act, (size_t)rows * I);
    al_linear(rows, D, I, lc->ff_act, lw->ff_out_w, lw->ff_out_b, lc->res2);
    al_tr_dropout_draw(&ctx->rng, lc->keep2, n_full, p_drop);
    if (packed && p_drop > 0.0f) al_rows_compact(lc->keep2, (size_t)D, ctx->row_of, rows);
    al_tr_dropout_apply(lc->res2, lc->keep2, n, p_drop);
    add_inplace(lc->res2, lc->h1, n);
    al_tr_layernorm_fwd(lc->res2, y, rows, D, lw->ln_ffn_g, lw->ln_ffn_b, c->layer_norm_eps, lc->mean2, lc->rstd2);
    if (packed) al_rows_expand(y, sizeof(float) * (size_t)D, ctx->row_of, rows, BL);
}

al_status al_train_forward(al_train_ctx *ctx, const al_batch *batch, al_error *err) {
    al_status st = validate(ctx, batch, err);
    if (st != AL_OK) return st;
    const al_config *c = &ctx->model->config;
    ctx->forward_done = 0;
    ctx->mlm_pending = 0;
    al_tr_carve(ctx, ctx->mem, batch->n_seqs, batch->seq_len);
    st = al_fwd_positions(c, batch, ctx->pos, err);
    if (st != AL_OK) return st;
    const size_t BL = (size_t)ctx->B * ctx->L;
    for (size_t t = 0; t < BL; t++) {
        ctx->ids[t] = batch->input_ids[t];
        ctx->types[t] = batch->type_ids ? batch->type_ids[t] : 0;
        ctx->mask[t] = batch->attention_mask ? (float)batch->attention_mask[t] : 1.0f;
    }
    ctx->n_rows = ctx->row_of ? al_real_rows(ctx->mask, (int)BL, ctx->row_of) : (int)BL;
    ctx->row_pos = ctx->pos;
    if (ctx->n_rows < (int)BL) {
        al_rows_gather(ctx->pos_of, ctx->pos, sizeof(int32_t), ctx->row_of, ctx->n_rows);
        ctx->row_pos = ctx->pos_of;
    }
    if (ctx->rel) al_score_rule_of(c)->prepare(ctx->model, ctx->L, ctx->rel, ctx->rel_row);
    embed(ctx);
    for (int l = 0; l < c->n_layers; l++) al_layer_rule_of(c)->train_fwd(ctx, l); /* the layer rule's twin */
    ctx->forward_done = 1;
    return AL_OK;
}

al_status al_train_forward_backward(al_train_ctx *ctx, const al_batch *batch, const int32_t *labels, float *loss,
                                    al_error *err) {
    al_status st = al_train_forward(ctx, batch, err);
    if (st == AL_OK) st = al_train_mlm_loss(ctx, labels, loss, NULL, err);
    if (st == AL_OK) st = al_train_backward(ctx, NULL, err);
    return st;
}
