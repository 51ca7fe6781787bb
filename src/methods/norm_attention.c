/* norm_attention.c: norm-based attention (measures.h, docs/measures.md). f_h(x_j) is the head's value
 * vector (the forward's, bias included) through the head's columns of the output projection; in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../model/model_internal.h"
#include "measures.h"

al_status al_norm_attention_layer(const al_model *model, int layer, const float *x, const float *attn,
                                  const float *values, const int32_t *mask, int L, const al_norm_outputs *out,
                                  al_error *err) {
    const al_config *c = &model->config;
    if (layer < 0 || layer >= c->n_layers)
        return al_err(err, AL_ERR_INVALID, "norm_attention: layer %d is outside 0..%d", layer, c->n_layers - 1);
    const al_layer_weights *lw = &model->w.layers[layer];
    return al_norm_attention_weights(lw->o_w, lw->o_b, lw->ln_attn_g, c->layer_norm_eps, c->hidden_size,
                                     c->n_heads, x, attn, values, mask, L, out, err);
}

al_status al_norm_attention_weights(const float *o_w, const float *o_b, const float *ln_g, float ln_eps, int D,
                                    int H, const float *x, const float *attn, const float *values,
                                    const int32_t *mask, int L, const al_norm_outputs *out, al_error *err) {
    if (D < 1 || H < 1 || D % H || L < 1)
        return al_err(err, AL_ERR_INVALID, "norm_attention: bad shape (D %d, H %d, L %d)", D, H, L);
    const int dh = D / H;
    const int want_sum = out->layer_norms || out->res_ln;
    /* F [L, H, D]: f_h(x_j) for every real j; norms [H, L] */
    double *F = malloc(sizeof(double) * (size_t)L * H * D);
    double *fn = malloc(sizeof(double) * (size_t)H * L);
    double *y = malloc(sizeof(double) * (size_t)L * D); /* one query's y_ij for every j */
    double *u = malloc(sizeof(double) * (size_t)D);      /* the LayerNorm's input for that query */
    if (!F || !fn || !y || !u) {
        free(F), free(fn), free(y), free(u);
        return al_err(err, AL_ERR_OOM, "norm_attention: out of memory for %d tokens", L);
    }
    for (int j = 0; j < L; j++)
        for (int h = 0; h < H; h++) {
            double *f = F + ((size_t)j * H + h) * D;
            const float *v = values + ((size_t)h * L + j) * dh;
            double ss = 0.0;
            for (int r = 0; r < D; r++) {
                const float *w = o_w + (size_t)r * D + (size_t)h * dh;
                double acc = 0.0;
                for (int k = 0; k < dh; k++) acc += (double)w[k] * v[k];
                f[r] = mask[j] ? acc : 0.0;
                ss += f[r] * f[r];
            }
            fn[(size_t)h * L + j] = sqrt(ss);
        }
    if (out->value_norms)
        for (int i = 0; i < H * L; i++) out->value_norms[i] = (float)fn[i];
    if (out->head_norms)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < L; i++)
                for (int j = 0; j < L; j++) {
                    const size_t at = ((size_t)h * L + i) * L + j;
                    out->head_norms[at] = mask[i] && mask[j] ? (float)((double)attn[at] * fn[(size_t)h * L + j]) : 0.0f;
                }
    for (int i = 0; want_sum && i < L; i++) {
        float *lrow = out->layer_norms ? out->layer_norms + (size_t)i * L : NULL;
        float *rrow = out->res_ln ? out->res_ln + (size_t)i * L : NULL;
        if (lrow) memset(lrow, 0, sizeof(float) * (size_t)L);
        if (rrow) memset(rrow, 0, sizeof(float) * (size_t)L);
        if (!mask[i]) continue;
        /* y_ij = sum_h alpha_h[i, j] f_h(x_j), and u_i = sum_j y_ij + b_O + x_i (the LayerNorm's input) */
        double u_mean = 0.0, u_var = 0.0;
        for (int j = 0; j < L; j++) {
            double *yj = y + (size_t)j * D;
            memset(yj, 0, sizeof(double) * (size_t)D);
            if (!mask[j]) continue;
            for (int h = 0; h < H; h++) {
                const double a = attn[((size_t)h * L + i) * L + j];
                const double *f = F + ((size_t)j * H + h) * D;
                for (int r = 0; r < D; r++) yj[r] += a * f[r];
            }
            if (lrow) {
                double ss = 0.0;
                for (int r = 0; r < D; r++) ss += yj[r] * yj[r];
                lrow[j] = (float)sqrt(ss);
            }
        }
        if (!rrow) continue;
        for (int r = 0; r < D; r++) y[(size_t)i * D + r] += x[(size_t)i * D + r]; /* the residual is token i's */
        for (int r = 0; r < D; r++) {
            double s = (double)o_b[r];
            for (int j = 0; j < L; j++) s += y[(size_t)j * D + r];
            u[r] = s;
            u_mean += s;
        }
        u_mean /= D;
        for (int r = 0; r < D; r++) u_var += (u[r] - u_mean) * (u[r] - u_mean);
        u_var /= D;
        const double inv_s = 1.0 / sqrt(u_var + (double)ln_eps);
        for (int j = 0; j < L; j++) {
            if (!mask[j]) continue;
            const double *yj = y + (size_t)j * D;
            double m = 0.0;
            for (int r = 0; r < D; r++) m += yj[r];
            m /= D;
            double ss = 0.0;
            for (int r = 0; r < D; r++) {
                const double g = (double)ln_g[r] * (yj[r] - m) * inv_s;
                ss += g * g;
            }
            rrow[j] = (float)sqrt(ss);
        }
    }
    free(F), free(fn), free(y), free(u);
    return AL_OK;
}
