/* train_mlm.c: the MLM head (dense -> act -> LayerNorm -> tied decoder + bias) and the mean cross-entropy
 * over the labelled positions, forward and backward at once. Only the labelled rows go through the head
 * (about 15% of tokens in pretraining), gathered into head_x. */
#include <string.h>

#include "../core/error.h"
#include "../kernels/kernels.h"
#include "grad_ops.h"
#include "train_internal.h"

al_status al_train_mlm_loss(al_train_ctx *ctx, const int32_t *labels, float *loss, int *n_labelled,
                            al_error *err) {
    if (!ctx) return al_err(err, AL_ERR_INVALID, "train: context is NULL");
    const al_model *m = ctx->model;
    const al_config *c = &m->config;
    const al_weights *w = &m->w;
    if (!w->mlm_decoder_w) return al_err(err, AL_ERR_INVALID, "train: MLM loss needs a model with an MLM head");
    if (!ctx->opt.mlm_head)
        return al_err(err, AL_ERR_INVALID, "train: MLM loss needs a context created with mlm_head = 1");
    if (!ctx->forward_done) return al_err(err, AL_ERR_INVALID, "train: MLM loss called before a forward pass");
    if (!labels) return al_err(err, AL_ERR_INVALID, "train: labels are NULL");
    const int D = c->hidden_size, V = c->vocab_size, M = w->mlm_dim;
    int n;
    al_status st = al_tr_gather_labelled(ctx, labels, loss, n_labelled, &n, err);
    if (st || n == 0) return st;

    /* Forward over the labelled rows. */
    al_linear(n, M, D, ctx->head_x, w->mlm_dense_w, w->mlm_dense_b, ctx->head_pre);
    memcpy(ctx->head_act, ctx->head_pre, sizeof(float) * (size_t)n * M);
    al_tr_act_fwd(w->mlm_act, ctx->head_act, (size_t)n * M);
    al_tr_layernorm_fwd(ctx->head_act, ctx->head_ln, n, M, w->mlm_ln_g, w->mlm_ln_b, c->layer_norm_eps,
                        ctx->head_mean, ctx->head_rstd);
    al_linear(n, V, M, ctx->head_ln, w->mlm_decoder_w, w->mlm_decoder_b, ctx->logits);
    const double mean_loss = al_tr_cross_entropy(ctx->logits, ctx->sel_labels, n, V); /* logits -> dlogits */
    if (loss) *loss = (float)mean_loss;

    /* Backward: decoder, LayerNorm, activation, dense; the hidden-state gradient goes to d_top. */
    float *d_ln = ctx->d_head_a, *d_pre = ctx->d_head_b;
    al_tr_linear_bwd(n, V, M, ctx->head_ln, w->mlm_decoder_w, ctx->logits, d_ln, 0, al_tr_grad(ctx, w->mlm_decoder_w),
                     al_tr_grad(ctx, w->mlm_decoder_b));
    al_tr_layernorm_bwd(ctx->head_act, ctx->head_mean, ctx->head_rstd, d_ln, n, M, w->mlm_ln_g, d_ln,
                        al_tr_grad(ctx, w->mlm_ln_g), al_tr_grad(ctx, w->mlm_ln_b));
    al_tr_act_bwd(w->mlm_act, ctx->head_pre, d_ln, d_pre, (size_t)n * M);
    /* dx_a [BL, D] is free scratch until al_train_backward starts. */
    al_tr_linear_bwd(n, M, D, ctx->head_x, w->mlm_dense_w, d_pre, ctx->dx_a, 0, al_tr_grad(ctx, w->mlm_dense_w),
                     al_tr_grad(ctx, w->mlm_dense_b));
    for (int r = 0; r < n; r++)
        memcpy(ctx->d_top + (size_t)ctx->sel_rows[r] * D, ctx->dx_a + (size_t)r * D, sizeof(float) * (size_t)D);
    return AL_OK;
}
