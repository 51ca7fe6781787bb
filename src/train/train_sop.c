/* train_sop.c: the sentence-order head of pretraining (docs/pretraining.md, "Sentence order"): BERT's
 * pooler (dense D x D + tanh on the [CLS] state of the last layer) and a 2-way classifier, with the mean
 * cross-entropy over the batch's pairs, forward and backward at once. The head's parameters live outside the
 * model (the encoder loader has no place for them): one flat block, al_sop_head_size floats. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../kernels/kernels.h"
#include "grad_ops.h"
#include "train_internal.h"

size_t al_sop_head_size(int D) { return (size_t)D * D + (size_t)D + 2 * (size_t)D + 2; }

al_sop_head al_sop_head_carve(float *block, int D) {
    al_sop_head h;
    h.pool_w = block;
    h.pool_b = h.pool_w + (size_t)D * D;
    h.cls_w = h.pool_b + D;
    h.cls_b = h.cls_w + 2 * (size_t)D;
    return h;
}

al_status al_train_sop_loss(al_train_ctx *ctx, const float *head, const int *rows, const int32_t *labels, int n,
                            float scale, float *head_grads, float *loss, int *n_correct, al_error *err) {
    if (!ctx || !head || !head_grads || (n > 0 && (!rows || !labels)))
        return al_err(err, AL_ERR_INVALID, "train: sentence-order loss: context, head, gradients, rows or labels is NULL");
    if (!ctx->opt.mlm_head || !ctx->d_top)
        return al_err(err, AL_ERR_INVALID, "train: sentence-order loss needs a context created with mlm_head = 1");
    if (!ctx->forward_done) return al_err(err, AL_ERR_INVALID, "train: sentence-order loss called before a forward pass");
    const int B = ctx->B, L = ctx->L, D = ctx->model->config.hidden_size;
    if (n < 0 || n > B) return al_err(err, AL_ERR_INVALID, "train: sentence-order loss: %d pairs in a batch of %d", n, B);
    for (int r = 0; r < n; r++) {
        if (rows[r] < 0 || rows[r] >= B)
            return al_err(err, AL_ERR_INVALID, "train: sentence-order rows[%d] = %d is not a sequence of the batch [0, %d)",
                          r, rows[r], B);
        if (labels[r] != 0 && labels[r] != 1)
            return al_err(err, AL_ERR_INVALID, "train: sentence-order labels[%d] = %d must be 0 (in order) or 1 (swapped)",
                          r, (int)labels[r]);
    }
    if (!ctx->mlm_pending) { /* no MLM loss since the forward: d_top starts from zero */
        memset(ctx->d_top, 0, sizeof(float) * (size_t)B * L * D);
        ctx->mlm_pending = 1;
    }
    if (loss) *loss = 0.0f;
    if (n_correct) *n_correct = 0;
    if (n == 0) return AL_OK;
    float *buf = malloc(sizeof(float) * ((size_t)4 * n * D + 2 * (size_t)n));
    if (!buf) return al_err(err, AL_ERR_OOM, "train: sentence-order loss: out of memory");
    float *x = buf, *pooled = x + (size_t)n * D, *d_pooled = pooled + (size_t)n * D, *dx = d_pooled + (size_t)n * D;
    float *logits = dx + (size_t)n * D;
    const al_sop_head w = al_sop_head_carve((float *)head, D);
    const al_sop_head g = al_sop_head_carve(head_grads, D);

    const float *top = ctx->hidden + (size_t)ctx->model->config.n_layers * B * L * D;
    for (int r = 0; r < n; r++) memcpy(x + (size_t)r * D, top + (size_t)rows[r] * L * D, sizeof(float) * (size_t)D);
    al_linear(n, D, D, x, w.pool_w, w.pool_b, pooled);
    for (size_t i = 0; i < (size_t)n * D; i++) pooled[i] = tanhf(pooled[i]);
    al_linear(n, 2, D, pooled, w.cls_w, w.cls_b, logits);
    int correct = 0;
    for (int r = 0; r < n; r++) correct += (logits[2 * r + 1] > logits[2 * r]) == (labels[r] == 1);
    const double mean = al_tr_cross_entropy(logits, labels, n, 2); /* logits -> (softmax - onehot) / n */
    if (loss) *loss = (float)mean;
    if (n_correct) *n_correct = correct;
    for (int i = 0; i < 2 * n; i++) logits[i] *= scale;

    al_tr_linear_bwd(n, 2, D, pooled, w.cls_w, logits, d_pooled, 0, g.cls_w, g.cls_b);
    for (size_t i = 0; i < (size_t)n * D; i++) d_pooled[i] *= 1.0f - pooled[i] * pooled[i]; /* tanh' */
    al_tr_linear_bwd(n, D, D, x, w.pool_w, d_pooled, dx, 0, g.pool_w, g.pool_b);
    for (int r = 0; r < n; r++) {
        float *dt = ctx->d_top + (size_t)rows[r] * L * D;
        for (int e = 0; e < D; e++) dt[e] += dx[(size_t)r * D + e];
    }
    free(buf);
    return AL_OK;
}
