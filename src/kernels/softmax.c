/* softmax.c: in-place row softmax as PyTorch computes it: subtract the row max, exponentiate, sum,
 * then multiply every entry by 1/sum. Multiplying by the reciprocal (instead of dividing each
 * entry) is PyTorch's CPU choice too; it costs at most one extra rounding (<= 1 ulp) per entry.
 * A -10000 additive mask gives exp(<= -10000) = exactly 0. The lane order of the sums is fixed
 * (simd.h), so every path gives the same bits. */
#include <math.h>

#include "kernels.h"
#include "vmath.h"

static void softmax_row(float *x, int n) {
    int i = 0;
    v4f m4 = v4f_splat(-INFINITY);
    for (; i + 4 <= n; i += 4) m4 = v4f_max(m4, v4f_load(x + i));
    float mx = v4f_hmax(m4);
    for (int j = i; j < n; j++) mx = x[j] > mx ? x[j] : mx;

    v4f mx4 = v4f_splat(mx), s4 = v4f_splat(0.0f);
    for (i = 0; i + 4 <= n; i += 4) {
        v4f e = v4f_exp(v4f_sub(v4f_load(x + i), mx4));
        v4f_store(x + i, e);
        s4 = v4f_add(s4, e);
    }
    float sum = v4f_hsum(s4);
    for (int j = i; j < n; j++) {
        x[j] = al_expf(x[j] - mx);
        sum += x[j];
    }

    float inv = 1.0f / sum;
    v4f inv4 = v4f_splat(inv);
    for (i = 0; i + 4 <= n; i += 4) v4f_store(x + i, v4f_mul(v4f_load(x + i), inv4));
    for (int j = i; j < n; j++) x[j] *= inv;
}

void al_softmax_rows(float *x, int rows, int cols, int ld) {
    if (rows <= 0 || cols <= 0) return;
    for (int r = 0; r < rows; r++) softmax_row(x + (size_t)r * (size_t)ld, cols);
}
