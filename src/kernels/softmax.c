/* softmax.c: in-place row softmax as PyTorch computes it: subtract the row max, exponentiate, sum,
 * then multiply every entry by 1/sum. Multiplying by the reciprocal (instead of dividing each
 * entry) is PyTorch's CPU choice too; it costs at most one extra rounding (<= 1 ulp) per entry.
 * A -10000 additive mask gives exp(<= -10000) = exactly 0. The max and the sum run in a fixed
 * 4-lane order on every path (simd.h); the exponentials and the scaling run on vf (4 lanes, or 8 in
 * softmax_avx2.c), element by element, so every path gives the same bits. */
#include <math.h>

#include "kernels.h"
#include "path.h"
#include "vmath.h"

static void softmax_row(float *x, int n) {
    int i = 0;
    v4f m4 = v4f_splat(-INFINITY);
    for (; i + 4 <= n; i += 4) m4 = v4f_max(m4, v4f_load(x + i));
    float mx = v4f_hmax(m4);
    for (int j = i; j < n; j++) mx = x[j] > mx ? x[j] : mx;

    /* x = exp(x - mx), the last partial vector through a padded copy */
    const vf mxv = vf_splat(mx);
    for (i = 0; i + AL_VF_LANES <= n; i += AL_VF_LANES) vf_store(x + i, vf_exp(vf_sub(vf_load(x + i), mxv)));
    if (i < n) {
        float t[AL_VF_LANES] = {0.0f};
        for (int j = i; j < n; j++) t[j - i] = x[j];
        vf_store(t, vf_exp(vf_sub(vf_load(t), mxv)));
        for (int j = i; j < n; j++) x[j] = t[j - i];
    }
    /* sum in the 4-lane order: lane l of s4 adds x[l], x[l + 4], ...; then the last n % 4 in turn */
    v4f s4 = v4f_splat(0.0f);
    for (i = 0; i + 4 <= n; i += 4) s4 = v4f_add(s4, v4f_load(x + i));
    float sum = v4f_hsum(s4);
    for (int j = i; j < n; j++) sum += x[j];

    const float inv = 1.0f / sum;
    const vf inv_v = vf_splat(inv);
    for (i = 0; i + AL_VF_LANES <= n; i += AL_VF_LANES) vf_store(x + i, vf_mul(vf_load(x + i), inv_v));
    for (int j = i; j < n; j++) x[j] *= inv;
}

void AL_KFN(al_softmax_rows)(float *x, int rows, int cols, int ld) {
    if (rows <= 0 || cols <= 0) return;
    for (int r = 0; r < rows; r++) softmax_row(x + (size_t)r * (size_t)ld, cols);
}

#ifndef AL_SIMD_AVX2
void al_softmax_rows(float *x, int rows, int cols, int ld) { AL_KDISPATCH(al_softmax_rows, (x, rows, cols, ld)); }
#endif
