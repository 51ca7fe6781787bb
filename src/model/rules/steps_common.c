/* steps_common.c: what the score rules' head_steps functions share (score_rule.h, docs/head_steps.md). */
#include <float.h>

#include "../../kernels/kernels.h"
#include "../score_rule.h"

void al_steps_linear_exact(const float *x, const float *W, const float *b, int D, int col, int dh, float *y) {
    for (int c = 0; c < dh; c++) {
        const float *w = W + (size_t)(col + c) * D;
        double acc = 0.0;
        for (int i = 0; i < D; i++) acc += (double)x[i] * w[i];
        y[c] = (float)(acc + (b ? b[col + c] : 0.0f));
    }
}

void al_steps_linear_fwd(const float *x, int rows, const float *W, const float *b, int D, int col, int dh, float *y) {
    al_gemm_nt(rows, dh, D, 1.0f, x, D, W + (size_t)col * D, D, y, dh, 0);
    for (int r = 0; b && r < rows; r++)
        for (int c = 0; c < dh; c++) y[(size_t)r * dh + c] += b[col + c];
}

float al_steps_dot(const float *a, const float *b, int n) {
    float v;
    al_gemm_nt(1, 1, n, 1.0f, a, n, b, n, &v, 1, 0);
    return v;
}

void al_steps_put(float *dst, int j, float v) {
    if (dst) dst[j] = v;
}

void al_steps_softmax_excluding(float *weights, const float *mask_add, int n_allowed, int L) {
    al_softmax_rows(weights, 1, n_allowed, n_allowed);
    for (int j = L - 1; j >= 0; j--) weights[j] = mask_add[j] == 0.0f ? weights[--n_allowed] : 0.0f;
}

void al_steps_plain_scores(al_score_steps *st, float inv_sqrt, al_steps_excluded_fn excluded, const void *rule) {
    const int dh = st->model->config.head_dim, L = st->L, query = st->token;
    int n_allowed = 0;
    for (int j = 0; j < L; j++) {
        const float *k = st->keys + (size_t)j * dh;
        st->scores[j] = al_steps_dot(st->query, k, dh);
        al_gemm_nt(1, 1, dh, inv_sqrt, st->query, dh, k, dh, &st->scaled[j], 1, 0); /* as the forward */
        const int out = excluded(st, j, rule);
        al_steps_put(st->c2c, j, 0.0f), al_steps_put(st->c2p, j, 0.0f), al_steps_put(st->p2c, j, 0.0f);
        al_steps_put(st->rel_bucket, j, (float)(query - j));
        al_steps_put(st->excluded, j, (float)out);
        st->mask_add[j] = out ? -FLT_MAX : 0.0f;
        if (!out) st->weights[n_allowed++] = st->scaled[j]; /* packed to the front, as the forward */
    }
    al_steps_softmax_excluding(st->weights, st->mask_add, n_allowed, L);
}
