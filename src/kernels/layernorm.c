/* layernorm.c: LayerNorm over the last dimension as PyTorch defines it: biased variance, computed in
 * two passes (mean, then the mean of squared deviations) for accuracy, eps inside the square root,
 * y = (x - mean) * rstd * gamma + beta. gamma/beta may be NULL (1 and 0). x may equal y.
 * The two sums run in a fixed 4-lane order on every path (simd.h); the normalisation runs on vf (4
 * lanes, or 8 in layernorm_avx2.c), element by element, so every path gives the same bits. */
#include <math.h>

#include "kernels.h"
#include "path.h"
#include "simd.h"

static float row_mean(const float *x, int n) {
    int i = 0;
    v4f s4 = v4f_splat(0.0f);
    for (; i + 4 <= n; i += 4) s4 = v4f_add(s4, v4f_load(x + i));
    float s = v4f_hsum(s4);
    for (; i < n; i++) s += x[i];
    return s / (float)n;
}

static float row_var(const float *x, int n, float mean) {
    int i = 0;
    v4f m4 = v4f_splat(mean), s4 = v4f_splat(0.0f);
    for (; i + 4 <= n; i += 4) {
        v4f d = v4f_sub(v4f_load(x + i), m4);
        s4 = v4f_add(s4, v4f_mul(d, d));
    }
    float s = v4f_hsum(s4);
    for (; i < n; i++) {
        float d = x[i] - mean;
        s += d * d;
    }
    return s / (float)n;
}

void AL_KFN(al_layernorm)(const float *x, float *y, int rows, int dim, const float *gamma, const float *beta,
                          float eps) {
    if (rows <= 0 || dim <= 0) return;
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * (size_t)dim;
        float *yr = y + (size_t)r * (size_t)dim;
        float mean = row_mean(xr, dim);
        float rstd = 1.0f / sqrtf(row_var(xr, dim, mean) + eps);
        const vf m_v = vf_splat(mean), r_v = vf_splat(rstd);
        int i = 0;
        for (; i + AL_VF_LANES <= dim; i += AL_VF_LANES) {
            vf v = vf_mul(vf_sub(vf_load(xr + i), m_v), r_v);
            if (gamma) v = vf_mul(v, vf_load(gamma + i));
            if (beta) v = vf_add(v, vf_load(beta + i));
            vf_store(yr + i, v);
        }
        for (; i < dim; i++) {
            float v = (xr[i] - mean) * rstd;
            if (gamma) v *= gamma[i];
            if (beta) v += beta[i];
            yr[i] = v;
        }
    }
}

#ifndef AL_SIMD_AVX2
void al_layernorm(const float *x, float *y, int rows, int dim, const float *gamma, const float *beta, float eps) {
    AL_KDISPATCH(al_layernorm, (x, y, rows, dim, gamma, beta, eps));
}
#endif
