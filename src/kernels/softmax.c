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
    /* the max over four running 4-lane maxima instead of one: the same value whatever the order (only the sign
     * of a zero maximum can differ, and x - 0 and x - (-0) have the same exponential), and a row holding a NaN
     * comes out all NaN either way (its exponential makes the sum NaN); four independent chains instead of one
     * dependent one (docs/kernels.md, "Softmax") */
    int i = 0;
    v4f m0 = v4f_splat(-INFINITY), m1 = m0, m2 = m0, m3 = m0;
    for (; i + 16 <= n; i += 16) {
        m0 = v4f_max(m0, v4f_load(x + i));
        m1 = v4f_max(m1, v4f_load(x + i + 4));
        m2 = v4f_max(m2, v4f_load(x + i + 8));
        m3 = v4f_max(m3, v4f_load(x + i + 12));
    }
    for (; i + 4 <= n; i += 4) m0 = v4f_max(m0, v4f_load(x + i));
    float mx = v4f_hmax(v4f_max(v4f_max(m0, m1), v4f_max(m2, m3)));
    for (int j = i; j < n; j++) mx = x[j] > mx ? x[j] : mx;

    /* x = exp(x - mx), summed in the same pass in the 4-lane order (lane l of s4 adds x[l], x[l + 4], ...;
     * v4f_add_vf), two vectors at a time; the last partial vector through a padded copy */
    const vf mxv = vf_splat(mx);
    v4f s4 = v4f_splat(0.0f);
    for (i = 0; i + 2 * AL_VF_LANES <= n; i += 2 * AL_VF_LANES) {
        vf e0 = vf_exp(vf_sub(vf_load(x + i), mxv)), e1 = vf_exp(vf_sub(vf_load(x + i + AL_VF_LANES), mxv));
        vf_store(x + i, e0);
        vf_store(x + i + AL_VF_LANES, e1);
        s4 = v4f_add_vf(v4f_add_vf(s4, e0), e1);
    }
    for (; i + AL_VF_LANES <= n; i += AL_VF_LANES) {
        vf e = vf_exp(vf_sub(vf_load(x + i), mxv));
        vf_store(x + i, e);
        s4 = v4f_add_vf(s4, e);
    }
    if (i < n) vf_store_part(x + i, vf_exp(vf_sub(vf_load_part(x + i, (size_t)(n - i)), mxv)), (size_t)(n - i));
    /* the sum's last whole 4 (8 lanes: a partial vector may hold one), then the last n % 4 in turn */
    for (; i + 4 <= n; i += 4) s4 = v4f_add(s4, v4f_load(x + i));
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
