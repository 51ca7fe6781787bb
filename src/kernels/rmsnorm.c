/* rmsnorm.c: RMSNorm over the last dimension as Llama defines it (docs/decoders.md, "Llama"):
 * y = x / sqrt(mean(x^2) + eps) * gamma, no mean subtracted, no bias. The sum of squares runs in the fixed
 * 4-lane order of layernorm.c's sums (simd.h) and the scaling element by element, so every path and build
 * gives the same bits. x may equal y. */
#include <math.h>

#include "kernels.h"
#include "simd.h"

static float row_mean_square(const float *x, int n) {
    int i = 0;
    v4f s4 = v4f_splat(0.0f);
    for (; i + 4 <= n; i += 4) {
        v4f v = v4f_load(x + i);
        s4 = v4f_add(s4, v4f_mul(v, v));
    }
    float s = v4f_hsum(s4);
    for (; i < n; i++) s += x[i] * x[i];
    return s / (float)n;
}

void al_rmsnorm(const float *x, float *y, int rows, int dim, const float *gamma, float eps) {
    if (rows <= 0 || dim <= 0) return;
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * (size_t)dim;
        float *yr = y + (size_t)r * (size_t)dim;
        const float rstd = 1.0f / sqrtf(row_mean_square(xr, dim) + eps);
        for (int i = 0; i < dim; i++) yr[i] = gamma ? (xr[i] * rstd) * gamma[i] : xr[i] * rstd;
    }
}
