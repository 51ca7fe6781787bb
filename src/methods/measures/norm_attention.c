/* norm_attention.c: norm-based attention (measures.h, docs/measures.md). f_h(x_j) is the head's value
 * vector (the forward's, bias included) through the head's columns of the output projection; in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../model/layer_rule.h"
#include "../../model/model_internal.h"
#include "measures.h"

al_status al_norm_attention_layer(const al_model *model, int layer, const float *x, const float *attn,
                                  const float *values, const int32_t *mask, int L, const al_norm_outputs *out,
                                  al_error *err) {
    const al_config *c = &model->config;
    if (layer < 0 || layer >= c->n_layers)
        return al_err(err, AL_ERR_INVALID, "norm_attention: layer %d is outside 0..%d", layer, c->n_layers - 1);
    if (out->res_ln && !al_layer_rule_of(c)->res_ln)
        return al_err(err, AL_ERR_UNSUPPORTED, "norm_attention: the residual and post-LayerNorm variant does not apply "
                      "to %s's pre-norm layers", al_arch_name(c->arch));
    const al_layer_weights *lw = &model->w.layers[layer];
    return al_norm_attention_heads(lw->o_w, lw->o_b, lw->ln_attn_g, c->layer_norm_eps, c->hidden_size, c->n_heads,
                                   c->head_dim, x, attn, values, mask, L, out, err);
}

al_status al_norm_attention_weights(const float *o_w, const float *o_b, const float *ln_g, float ln_eps, int D,
                                    int H, const float *x, const float *attn, const float *values,
                                    const int32_t *mask, int L, const al_norm_outputs *out, al_error *err) {
    if (H < 1 || D % H)
        return al_err(err, AL_ERR_INVALID, "norm_attention: bad shape (D %d, H %d)", D, H);
    return al_norm_attention_heads(o_w, o_b, ln_g, ln_eps, D, H, D / H, x, attn, values, mask, L, out, err);
}

/* Why Gram matrices: ||sum_h a_h f_h||^2 = sum_h sum_h' a_h a_h' <f_h, f_h'>, so with the H x H inner products
 * of each key's head vectors every (query, key) pair costs H^2 instead of H * D; the LayerNorm's linear part
 * g_i is linear in its argument (centering, then gamma / s_i), so the same holds for the centred, gamma-scaled
 * vectors, plus the residual x_i on the diagonal. Everything in double: the differences of squares this
 * could cancel are far below float32 output precision. */
al_status al_norm_attention_heads(const float *o_w, const float *o_b, const float *ln_g, float ln_eps, int D, int H,
                                  int dh, const float *x, const float *attn, const float *values, const int32_t *mask,
                                  int L, const al_norm_outputs *out, al_error *err) {
    if (D < 1 || H < 1 || H > 1023 || dh < 1 || L < 1)
        return al_err(err, AL_ERR_INVALID, "norm_attention: bad shape (D %d, H %d (at most 1023), head_dim %d, L %d)",
                      D, H, dh, L);
    const int A = H * dh, H1 = H + 1; /* A: the heads' width, the output projection's input (o_w [D, A]) */
    const int want_layer = out->layer_norms != NULL, want_res = out->res_ln != NULL;
    double *WT = malloc(sizeof(double) * (size_t)A * D);      /* W_O as x W: WT[c * D + r] = o_w[r * A + c] */
    double *F = malloc(sizeof(double) * (size_t)H1 * D);       /* one key's f_h, then (res) x_j, row by row */
    double *fn = malloc(sizeof(double) * (size_t)H * L);
    double *G = calloc((size_t)L * H * H, sizeof(double));     /* <f_h(x_j), f_h'(x_j)> per key */
    double *E = calloc((size_t)L * H1 * H1, sizeof(double));   /* the same for gamma * centred vectors, x_j last */
    double *ctx = malloc(sizeof(double) * (size_t)D), *u = malloc(sizeof(double) * (size_t)D);
    double *mean = malloc(sizeof(double) * (size_t)H1);
    if (!WT || !F || !fn || !G || !E || !ctx || !u || !mean) {
        free(WT), free(F), free(fn), free(G), free(E), free(ctx), free(u), free(mean);
        return al_err(err, AL_ERR_OOM, "norm_attention: out of memory for %d tokens", L);
    }
    for (int r = 0; r < D; r++)
        for (int c = 0; c < A; c++) WT[(size_t)c * D + r] = o_w[(size_t)r * A + c];
    for (int j = 0; j < L; j++) {
        for (int h = 0; h < H; h++) { /* f_h(x_j)[r] = sum_k v[k] W_O[h dh + k, r], k ascending */
            double *f = F + (size_t)h * D;
            const float *v = values + ((size_t)h * L + j) * dh;
            memset(f, 0, sizeof(double) * (size_t)D);
            for (int k = 0; mask[j] && k < dh; k++) {
                const double vk = v[k];
                const double *w = WT + ((size_t)h * dh + k) * D;
                for (int r = 0; r < D; r++) f[r] += vk * w[r];
            }
            double ss = 0.0;
            for (int r = 0; r < D; r++) ss += f[r] * f[r];
            fn[(size_t)h * L + j] = sqrt(ss);
        }
        if (!mask[j]) continue;
        for (int h = 0; want_layer && h < H; h++)
            for (int g = 0; g <= h; g++) {
                double d = 0.0;
                for (int r = 0; r < D; r++) d += F[(size_t)h * D + r] * F[(size_t)g * D + r];
                G[((size_t)j * H + h) * H + g] = G[((size_t)j * H + g) * H + h] = d;
            }
        if (!want_res) continue;
        for (int r = 0; r < D; r++) F[(size_t)H * D + r] = x[(size_t)j * D + r];
        for (int h = 0; h < H1; h++) {
            double m = 0.0;
            for (int r = 0; r < D; r++) m += F[(size_t)h * D + r];
            mean[h] = m / D;
        }
        for (int h = 0; h < H1; h++)
            for (int g = 0; g <= h; g++) {
                double d = 0.0;
                for (int r = 0; r < D; r++) {
                    const double gr = ln_g[r];
                    d += gr * (F[(size_t)h * D + r] - mean[h]) * gr * (F[(size_t)g * D + r] - mean[g]);
                }
                E[((size_t)j * H1 + h) * H1 + g] = E[((size_t)j * H1 + g) * H1 + h] = d;
            }
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
    double a[1024]; /* one (query, key) pair's weights per head, then the residual's 0 or 1 */
    for (int i = 0; (want_layer || want_res) && i < L; i++) {
        float *lrow = want_layer ? out->layer_norms + (size_t)i * L : NULL;
        float *rrow = want_res ? out->res_ln + (size_t)i * L : NULL;
        if (lrow) memset(lrow, 0, sizeof(float) * (size_t)L);
        if (rrow) memset(rrow, 0, sizeof(float) * (size_t)L);
        if (!mask[i]) continue;
        double inv_s = 0.0;
        if (want_res) { /* u_i = sum_h (sum_j alpha_h[i, j] v_h(x_j)) W_O^h + b_O + x_i over the real keys */
            for (int r = 0; r < D; r++) u[r] = (o_b ? (double)o_b[r] : 0.0) + x[(size_t)i * D + r];
            for (int h = 0; h < H; h++)
                for (int k = 0; k < dh; k++) {
                    double c = 0.0;
                    for (int j = 0; j < L; j++)
                        if (mask[j]) c += (double)attn[((size_t)h * L + i) * L + j] * values[((size_t)h * L + j) * dh + k];
                    ctx[k] = c;
                    const double *w = WT + ((size_t)h * dh + k) * D;
                    for (int r = 0; r < D; r++) u[r] += c * w[r];
                }
            double um = 0.0, uv = 0.0;
            for (int r = 0; r < D; r++) um += u[r];
            um /= D;
            for (int r = 0; r < D; r++) uv += (u[r] - um) * (u[r] - um);
            uv /= D;
            inv_s = 1.0 / sqrt(uv + (double)ln_eps);
        }
        for (int j = 0; j < L; j++) {
            if (!mask[j]) continue;
            for (int h = 0; h < H; h++) a[h] = attn[((size_t)h * L + i) * L + j];
            a[H] = i == j; /* the residual: token i's own input, on the diagonal only */
            if (lrow) {
                const double *g = G + (size_t)j * H * H;
                double q = 0.0;
                for (int h = 0; h < H; h++)
                    for (int k = 0; k < H; k++) q += a[h] * a[k] * g[(size_t)h * H + k];
                lrow[j] = (float)sqrt(q > 0.0 ? q : 0.0);
            }
            if (rrow) {
                const double *e = E + (size_t)j * H1 * H1;
                double q = 0.0;
                for (int h = 0; h < H1; h++)
                    for (int k = 0; k < H1; k++) q += a[h] * a[k] * e[(size_t)h * H1 + k];
                rrow[j] = (float)(sqrt(q > 0.0 ? q : 0.0) * inv_s);
            }
        }
    }
    free(WT), free(F), free(fn), free(G), free(E), free(ctx), free(u), free(mean);
    return AL_OK;
}

void al_norm_head_mass(const float *head_norms, const float *value_norms, const int32_t *mask, int L, int H,
                       double *mass, double *vmean) {
    const size_t LL = (size_t)L * L;
    int n = 0;
    for (int t = 0; t < L; t++) n += mask[t] != 0;
    for (int h = 0; n && h < H; h++) {
        double m = 0.0, vn = 0.0;
        for (int i = 0; i < L; i++) {
            if (!mask[i]) continue;
            if (vmean) vn += value_norms[(size_t)h * L + i];
            for (int j = 0; j < L; j++) m += head_norms[(size_t)h * LL + (size_t)i * L + j];
        }
        mass[h] += m / n;
        if (vmean) vmean[h] += vn / n;
    }
}
