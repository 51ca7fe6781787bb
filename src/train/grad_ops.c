/* grad_ops.c: LayerNorm, linear, activation, softmax, mask_and_normalize, dropout and cross-entropy
 * backward passes (see grad_ops.h). Reductions over a row run in double: gradients are compared with
 * finite differences and with PyTorch, and the rows are short enough for this to cost nothing. */
#include "grad_ops.h"

#include <math.h>
#include <string.h>

#include "../kernels/kernels.h"
#include "../model/head_policy.h"

/* One row's mean and 1/sqrt(var + eps), accumulated in double: the one rule for both entry points below. */
static void row_stats(const float *xr, int dim, float eps, double *mu, double *rs) {
    double s = 0.0;
    for (int i = 0; i < dim; i++) s += xr[i];
    *mu = s / dim;
    double v = 0.0;
    for (int i = 0; i < dim; i++) v += ((double)xr[i] - *mu) * ((double)xr[i] - *mu);
    *rs = 1.0 / sqrt(v / dim + (double)eps);
}

void al_tr_layernorm_fwd(const float *x, float *y, int rows, int dim, const float *gamma, const float *beta,
                         float eps, float *mean, float *rstd) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * dim;
        float *yr = y + (size_t)r * dim;
        double mu, rs;
        row_stats(xr, dim, eps, &mu, &rs);
        for (int i = 0; i < dim; i++) {
            double t = ((double)xr[i] - mu) * rs;
            if (gamma) t *= gamma[i];
            if (beta) t += beta[i];
            yr[i] = (float)t;
        }
        mean[r] = (float)mu;
        rstd[r] = (float)rs;
    }
}

void al_tr_layernorm_kernel_fwd(const float *x, float *y, int rows, int dim, const float *gamma, const float *beta,
                                float eps, float *mean, float *rstd) {
    for (int r = 0; r < rows; r++) {
        double mu, rs;
        row_stats(x + (size_t)r * dim, dim, eps, &mu, &rs);
        mean[r] = (float)mu;
        rstd[r] = (float)rs;
    }
    al_layernorm(x, y, rows, dim, gamma, beta, eps); /* after the statistics: y may equal x */
}

void al_tr_layernorm_bwd(const float *x, const float *mean, const float *rstd, const float *dy, int rows,
                         int dim, const float *gamma, float *dx, float *dgamma, float *dbeta) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * dim, *dyr = dy + (size_t)r * dim;
        float *dxr = dx + (size_t)r * dim;
        const double mu = mean[r], rs = rstd[r];
        /* dxhat = dy * gamma; dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)) */
        double s1 = 0.0, s2 = 0.0;
        for (int i = 0; i < dim; i++) {
            const double xhat = ((double)xr[i] - mu) * rs;
            const double dxhat = (double)dyr[i] * (gamma ? gamma[i] : 1.0f);
            s1 += dxhat;
            s2 += dxhat * xhat;
            if (dgamma) dgamma[i] += (float)((double)dyr[i] * xhat);
            if (dbeta) dbeta[i] += dyr[i];
        }
        s1 /= dim;
        s2 /= dim;
        for (int i = 0; i < dim; i++) {
            const double xhat = ((double)xr[i] - mu) * rs;
            const double dxhat = (double)dyr[i] * (gamma ? gamma[i] : 1.0f);
            dxr[i] = (float)(rs * (dxhat - s1 - xhat * s2));
        }
    }
}

void al_tr_rmsnorm_kernel_fwd(const float *x, float *y, int rows, int dim, const float *gamma, float eps, float *rstd) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * dim;
        double s = 0.0;
        for (int i = 0; i < dim; i++) s += (double)xr[i] * xr[i];
        rstd[r] = (float)(1.0 / sqrt(s / dim + (double)eps));
    }
    al_rmsnorm(x, y, rows, dim, gamma, eps); /* after the statistics: y may equal x */
}

void al_tr_rmsnorm_bwd(const float *x, const float *rstd, const float *dy, int rows, int dim, const float *gamma,
                       float *dx, float *dgamma) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * dim, *dyr = dy + (size_t)r * dim;
        float *dxr = dx + (size_t)r * dim;
        const double rs = rstd[r];
        /* xhat = x rstd, dxhat = dy * gamma; dx = rstd * (dxhat - xhat * mean(dxhat * xhat)) */
        double s2 = 0.0;
        for (int i = 0; i < dim; i++) {
            const double xhat = (double)xr[i] * rs;
            s2 += (double)dyr[i] * (gamma ? gamma[i] : 1.0f) * xhat;
            if (dgamma) dgamma[i] += (float)((double)dyr[i] * xhat);
        }
        s2 /= dim;
        for (int i = 0; i < dim; i++) {
            const double xhat = (double)xr[i] * rs;
            const double dxhat = (double)dyr[i] * (gamma ? gamma[i] : 1.0f);
            dxr[i] = (float)(rs * (dxhat - xhat * s2));
        }
    }
}

void al_tr_glu_fwd(al_act act, const float *pre, float *f, int rows, int I) {
    for (int r = 0; r < rows; r++) { /* act(u) * g as al_fwd_glu_pool (src/model/forward.c) computes it */
        const float *u = pre + (size_t)r * 2 * I, *g = u + I;
        float *fr = f + (size_t)r * I;
        memcpy(fr, u, sizeof(float) * (size_t)I);
        al_tr_act_fwd(act, fr, (size_t)I);
        for (int i = 0; i < I; i++) fr[i] *= g[i];
    }
}

void al_tr_glu_bwd(al_act act, const float *pre, float *d_pre, float *act_u, int rows, int I) {
    for (int r = 0; r < rows; r++) {
        const float *u = pre + (size_t)r * 2 * I, *g = u + I;
        float *du = d_pre + (size_t)r * 2 * I, *dg = du + I;
        memcpy(act_u, u, sizeof(float) * (size_t)I);
        al_tr_act_fwd(act, act_u, (size_t)I);
        for (int i = 0; i < I; i++) {
            du[i] = dg[i] * g[i];
            dg[i] *= act_u[i];
        }
        al_tr_act_bwd(act, u, du, du, (size_t)I);
    }
}

void al_tr_linear_bwd(int rows, int n_out, int n_in, const float *x, const float *W, const float *dy, float *dx,
                      int dx_accumulate, float *dW, float *db) {
    al_tr_linear_bwd_pool(NULL, rows, n_out, n_in, x, W, dy, dx, dx_accumulate, dW, db);
}

void al_tr_linear_bwd_pool(al_threadpool *pool, int rows, int n_out, int n_in, const float *x, const float *W,
                           const float *dy, float *dx, int dx_accumulate, float *dW, float *db) {
    if (dx) al_gemm_nn_pool(pool, rows, n_in, n_out, 1.0f, dy, n_out, W, n_in, dx, n_in, dx_accumulate);
    if (dW) al_gemm_tn_pool(pool, n_out, n_in, rows, 1.0f, dy, n_out, x, n_in, dW, n_in, 1);
    if (db)
        for (int o = 0; o < n_out; o++) {
            double s = 0.0;
            for (int r = 0; r < rows; r++) s += dy[(size_t)r * n_out + o];
            db[o] += (float)s;
        }
}

void al_tr_act_fwd(al_act act, float *x, size_t n) {
    switch (act) {
    case AL_ACT_GELU: al_gelu(x, n); break;
    case AL_ACT_GELU_TANH: al_gelu_tanh(x, n); break;
    case AL_ACT_RELU: al_relu(x, n); break;
    case AL_ACT_SILU: al_silu(x, n); break;
    }
}

/* The derivatives' formulas are kernels.h's; their vector kernels give every path the same bits. */
void al_tr_act_bwd(al_act act, const float *pre, const float *dy, float *dx, size_t n) {
    switch (act) {
    case AL_ACT_GELU: al_gelu_bwd(pre, dy, dx, n); break;
    case AL_ACT_GELU_TANH: al_gelu_tanh_bwd(pre, dy, dx, n); break;
    case AL_ACT_SILU: al_silu_bwd(pre, dy, dx, n); break;
    case AL_ACT_RELU:
    default: al_relu_bwd(pre, dy, dx, n); break;
    }
}

void al_tr_softmax_bwd(const float *p, const float *dp, float *dz, int rows, int cols) {
    for (int r = 0; r < rows; r++) {
        const float *pr = p + (size_t)r * cols, *dpr = dp + (size_t)r * cols;
        float *dzr = dz + (size_t)r * cols;
        double dot = 0.0;
        for (int j = 0; j < cols; j++) dot += (double)pr[j] * dpr[j];
        for (int j = 0; j < cols; j++) dzr[j] = (float)((double)pr[j] * ((double)dpr[j] - dot));
    }
}

/* Forward (al_head_mask_and_normalize, src/model/head_policy.c): u = r * m_i * m_j, n = max(sum |u|, 1e-12), p = u / n. When n > eps,
 * du_j = dp_j / n - sign(u_j) * sum_k(dp_k u_k) / n^2. A row at the eps floor has no mass on the valid
 * keys (|.| is not differentiable there); it gets gradient 0 rather than dp / 1e-12. Rows that carry a
 * softmax never reach it (softmax > 0), and C itself takes no gradient. */
void al_tr_mask_normalize_bwd(const float *r, const float *mask, const float *dp, float *dr, int L) {
    for (int i = 0; i < L; i++) {
        const float *rr = r + (size_t)i * L, *dpr = dp + (size_t)i * L;
        float *drr = dr + (size_t)i * L;
        if (mask[i] == 0.0f) {
            memset(drr, 0, sizeof(float) * (size_t)L);
            continue;
        }
        double l1 = 0.0, dot = 0.0;
        for (int j = 0; j < L; j++)
            if (mask[j] != 0.0f) {
                l1 += fabs((double)rr[j]);
                dot += (double)dpr[j] * rr[j];
            }
        if (!(l1 > AL_NORMALIZE_EPS)) {
            memset(drr, 0, sizeof(float) * (size_t)L);
            continue;
        }
        for (int j = 0; j < L; j++) {
            if (mask[j] == 0.0f) {
                drr[j] = 0.0f;
                continue;
            }
            const double sign = rr[j] > 0.0f ? 1.0 : rr[j] < 0.0f ? -1.0 : 0.0;
            drr[j] = (float)(dpr[j] / l1 - sign * dot / (l1 * l1));
        }
    }
}

void al_tr_dropout_draw(al_rng *rng, uint8_t *keep, size_t n, float p) {
    if (!(p > 0.0f)) {
        memset(keep, 1, n);
        return;
    }
    for (size_t i = 0; i < n; i++) keep[i] = al_rng_uniform(rng) >= p;
}

void al_tr_dropout_apply(float *x, const uint8_t *keep, size_t n, float p) {
    if (!(p > 0.0f)) return;
    const float scale = 1.0f / (1.0f - p);
    for (size_t i = 0; i < n; i++) x[i] = keep[i] ? x[i] * scale : 0.0f;
}

double al_tr_cross_entropy(float *logits, const int32_t *labels, int n, int V) {
    double total = 0.0;
    const double inv_n = 1.0 / n;
    for (int r = 0; r < n; r++) {
        float *z = logits + (size_t)r * V;
        double mx = z[0];
        for (int j = 1; j < V; j++) mx = z[j] > mx ? z[j] : mx;
        double s = 0.0;
        for (int j = 0; j < V; j++) s += exp((double)z[j] - mx);
        const double lse = mx + log(s);
        total += lse - z[labels[r]];
        for (int j = 0; j < V; j++) z[j] = (float)(exp((double)z[j] - lse) * inv_n);
        z[labels[r]] -= (float)inv_n;
    }
    return total * inv_n;
}
