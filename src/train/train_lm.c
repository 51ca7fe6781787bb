/* train_lm.c: a causal language model's next-token loss (train.h, docs/decoder_pretraining.md): the LM head
 * (no transform: logits = h W^T with W = lm_head_w, tied to the word embeddings in GPT-2) on the labelled rows of
 * the last hidden state (ln_f's output), the mean cross-entropy, and its gradients, forward and backward at once.
 * The rows are gathered into head_x, as the MLM head's (train_mlm.c). */
#include <string.h>

#include "../core/error.h"
#include "../kernels/kernels.h"
#include "grad_ops.h"
#include "train_internal.h"

void al_clm_labels(const int32_t *ids, const int32_t *attention_mask, int B, int L, int32_t *labels) {
    for (int b = 0; b < B; b++)
        for (int i = 0; i < L; i++) {
            const size_t t = (size_t)b * L + i;
            const int real = i + 1 < L && (!attention_mask || (attention_mask[t] && attention_mask[t + 1]));
            labels[t] = real ? ids[t + 1] : AL_IGNORE_INDEX;
        }
}

al_status al_train_lm_loss(al_train_ctx *ctx, const int32_t *labels, float *loss, int *n_labelled, al_error *err) {
    if (!ctx) return al_err(err, AL_ERR_INVALID, "train: context is NULL");
    const al_model *m = ctx->model;
    const al_config *c = &m->config;
    const float *W = m->w.lm_head_w;
    if (!W) return al_err(err, AL_ERR_INVALID, "train: the next-token loss needs a causal model with an LM head");
    if (!ctx->opt.mlm_head)
        return al_err(err, AL_ERR_INVALID, "train: the next-token loss needs a context created with mlm_head = 1");
    if (!ctx->forward_done) return al_err(err, AL_ERR_INVALID, "train: next-token loss called before a forward pass");
    if (!labels) return al_err(err, AL_ERR_INVALID, "train: labels are NULL");
    const int D = c->hidden_size, V = c->vocab_size;
    int n;
    al_status st = al_tr_gather_labelled(ctx, labels, loss, n_labelled, &n, err);
    if (st || n == 0) return st;
    al_linear(n, V, D, ctx->head_x, W, NULL, ctx->logits);
    const double mean_loss = al_tr_cross_entropy(ctx->logits, ctx->sel_labels, n, V); /* logits -> dlogits */
    if (loss) *loss = (float)mean_loss;
    /* dx_a [BL, D] is free scratch until al_train_backward starts */
    al_tr_linear_bwd(n, V, D, ctx->head_x, W, ctx->logits, ctx->dx_a, 0, al_tr_grad(ctx, W), NULL);
    for (int r = 0; r < n; r++)
        memcpy(ctx->d_top + (size_t)ctx->sel_rows[r] * D, ctx->dx_a + (size_t)r * D, sizeof(float) * (size_t)D);
    return AL_OK;
}
