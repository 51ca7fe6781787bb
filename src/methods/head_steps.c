/* head_steps.c: one head for one query token, step by step (head_steps.h, docs/head_steps.md). The
 * projections are the forward's (nn.Linear rows of q_w, k_w, v_w), the softmax is the forward's kernel
 * on the same pre-softmax row, so the weights match src/model/attention.c to float rounding. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../kernels/kernels.h"
#include "../model/family.h"
#include "../model/head_policy.h"
#include "../model/model_internal.h"
#include "head_steps.h"

/* y[c] = b[col + c] + sum_i x[i] W[(col + c) * D + i] for c < dh: one head's slice of a Linear. */
static void head_linear(const float *x, const float *W, const float *b, int D, int col, int dh, float *y) {
    for (int c = 0; c < dh; c++) {
        const float *w = W + (size_t)(col + c) * D;
        double acc = 0.0;
        for (int i = 0; i < D; i++) acc += (double)x[i] * w[i];
        y[c] = (float)(acc + b[col + c]);
    }
}

al_status al_head_steps(const al_model *model, int layer, int head, int query, const float *x,
                        const int32_t *mask, int L, al_head_steps_out *out, al_error *err) {
    const al_config *c = &model->config;
    const int D = c->hidden_size, dh = c->head_dim;
    if (al_family_of(c)->scores != AL_SCORES_SCALED_DOT) /* DeBERTa's three score terms, ModernBERT's rotary windowed scores: not shown yet */
        return al_err(err, AL_ERR_UNSUPPORTED, "head_steps: explaining one head is not built for %s yet",
                      al_arch_name(c->arch));
    if (layer < 0 || layer >= c->n_layers)
        return al_err(err, AL_ERR_INVALID, "head_steps: field 'layer': %d is outside 0..%d", layer,
                      c->n_layers - 1);
    if (head < 0 || head >= c->n_heads)
        return al_err(err, AL_ERR_INVALID, "head_steps: field 'head': %d is outside 0..%d", head,
                      c->n_heads - 1);
    int n = 0;
    while (n < L && mask[n]) n++;
    if (query < 0 || query >= n)
        return al_err(err, AL_ERR_INVALID, "head_steps: field 'query': %d is outside the %d real tokens 0..%d",
                      query, n, n - 1);
    const al_layer_weights *lw = &model->w.layers[layer];
    const int col = head * dh;
    head_linear(x + (size_t)query * D, lw->q_w, lw->q_b, D, col, dh, out->query);
    for (int j = 0; j < L; j++) {
        head_linear(x + (size_t)j * D, lw->k_w, lw->k_b, D, col, dh, out->keys + (size_t)j * dh);
        head_linear(x + (size_t)j * D, lw->v_w, lw->v_b, D, col, dh, out->values + (size_t)j * dh);
    }
    const float inv_sqrt = 1.0f / sqrtf((float)dh); /* the forward's scale (al_head_softmax) */
    for (int j = 0; j < L; j++) {
        double dot = 0.0;
        for (int i = 0; i < dh; i++) dot += (double)out->query[i] * out->keys[(size_t)j * dh + i];
        out->scores[j] = (float)dot;
        out->scaled[j] = (float)dot * inv_sqrt;
        out->mask_add[j] = mask[j] ? 0.0f : AL_MASK_ADD;
        out->weights[j] = out->scaled[j] + out->mask_add[j];
    }
    al_softmax_rows(out->weights, 1, L, L);
    for (int i = 0; i < dh; i++) {
        double acc = 0.0;
        for (int j = 0; j < L; j++) acc += (double)out->weights[j] * out->values[(size_t)j * dh + i];
        out->context[i] = (float)acc;
    }
    /* The head's columns of W_O [D, D]: output[r] = sum_i o_w[r, col + i] context[i]. */
    for (int r = 0; r < D; r++) {
        const float *w = lw->o_w + (size_t)r * D + col;
        double acc = 0.0;
        for (int i = 0; i < dh; i++) acc += (double)w[i] * out->context[i];
        out->output[r] = (float)acc;
    }
    /* Effective attention over the real tokens (exact mode, attnlab.h); pads are 0 in both parts. */
    memset(out->effective, 0, sizeof(float) * (size_t)L);
    memset(out->invisible, 0, sizeof(float) * (size_t)L);
    al_status st = al_effective_head(out->weights, 1, L, out->values, n, dh, dh, out->effective, L,
                                     &out->rank, err);
    if (st) return st;
    for (int j = 0; j < n; j++) out->invisible[j] = out->weights[j] - out->effective[j];
    return AL_OK;
}
