/* gemm_rows.c: the GEMM for a few rows of A (a generation step: one new token, M = 1 to AL_GEMM_ROWS_MAX), reading
 * B where it lies instead of packing it.
 *
 * The packed driver (gemm.c) copies every KC x NC block of B into panels before it multiplies. For one row the copy
 * reads and writes each weight to use it once, and costs more than the products (docs/speed.md, "Where attnlab's
 * time goes"). Here 8 columns of C sit in the lanes (two 4-lane vectors; in the nt layout 8 columns a slab apart, see
 * al_gemm_rows_4), and B is read in place: in the nt layout
 * (B(n, k) contiguous in k, the weights of nn.Linear) 4 k at a time from each of the 8 columns' rows, turned in
 * registers by 4 x 4 transposes as pack_b does; contiguous in n (nn, tn) 8 floats per k; else one float at a time.
 *
 * Rounding: the packed driver's, entry for entry (gemm.c, docs/kernels.md): acc = 0, acc = acc + a*b in k order
 * inside each KC depth block (multiply then add, no FMA), then c = alpha * acc for the first block (or c + alpha *
 * acc when accumulating) and c = c + alpha * acc for later ones. Columns past N read the last column (in bounds) and
 * are never written. So every bit is the packed driver's; test_kernels compares the two paths entry for entry. */
#include <stddef.h>

#include "gemm_block.h"
#include "path.h"
#include "simd.h"

#define KC AL_GEMM_KC
#define RN 8 /* columns per group: two 4-lane vectors */

#if defined(__GNUC__) || defined(__clang__)
#define AL_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define AL_ALWAYS_INLINE inline
#endif

/* c = alpha * acc, or c + alpha * acc when add is set, for the group's first nr columns; lane j's column is
 * c[j * cs]. */
static inline void store_group(float *c, ptrdiff_t cs, v4f lo, v4f hi, v4f alpha, int add, int nr) {
    lo = v4f_mul(alpha, lo);
    hi = v4f_mul(alpha, hi);
    if (nr == RN && cs == 1) {
        if (add) {
            lo = v4f_add(v4f_load(c), lo);
            hi = v4f_add(v4f_load(c + 4), hi);
        }
        v4f_store(c, lo);
        v4f_store(c + 4, hi);
        return;
    }
    float t[RN];
    v4f_store(t, lo);
    v4f_store(t + 4, hi);
    for (int j = 0; j < nr; j++) c[j * cs] = add ? c[j * cs] + t[j] : t[j];
}

/* One k step for rows below M: acc[2m + h] = acc[2m + h] + a_m * b_h. M is a constant in every caller, so the
 * unused rows fold away and the accumulators stay in registers. */
static AL_ALWAYS_INLINE void step(const int M, const float *const a[4], ptrdiff_t o, v4f b0, v4f b1, v4f acc[8]) {
    v4f x = v4f_splat(a[0][o]);
    acc[0] = v4f_add(acc[0], v4f_mul(x, b0));
    acc[1] = v4f_add(acc[1], v4f_mul(x, b1));
    if (M > 1) {
        x = v4f_splat(a[1][o]);
        acc[2] = v4f_add(acc[2], v4f_mul(x, b0));
        acc[3] = v4f_add(acc[3], v4f_mul(x, b1));
    }
    if (M > 2) {
        x = v4f_splat(a[2][o]);
        acc[4] = v4f_add(acc[4], v4f_mul(x, b0));
        acc[5] = v4f_add(acc[5], v4f_mul(x, b1));
    }
    if (M > 3) {
        x = v4f_splat(a[3][o]);
        acc[6] = v4f_add(acc[6], v4f_mul(x, b0));
        acc[7] = v4f_add(acc[7], v4f_mul(x, b1));
    }
}

/* Columns j0 .. j0 + nr - 1 (nr <= RN) of C for M rows, every depth block. col[j] points at column j's B(n, 0). */
static AL_ALWAYS_INLINE void rows_group(const int M, int K, float alpha, const float *A, ptrdiff_t a_rs,
                                        ptrdiff_t a_cs, const float *const col[RN], ptrdiff_t b_cs, int contiguous_n,
                                        int nr, float *C, ptrdiff_t cs, ptrdiff_t ldc, int accumulate) {
    const v4f al = v4f_splat(alpha);
    for (int pc = 0; pc < K; pc += KC) {
        const int kc = K - pc < KC ? K - pc : KC;
        const float *a[4];
        for (int m = 0; m < 4; m++) a[m] = A + (ptrdiff_t)(m < M ? m : M - 1) * a_rs + (ptrdiff_t)pc * a_cs;
        v4f acc[8];
        for (int i = 0; i < 8; i++) acc[i] = v4f_splat(0.0f);
        int k = 0;
        if (M == 1 && b_cs == 1 && a_cs == 1) {
            /* One row, both operands contiguous in k: multiply first, 4 k of a column in the lanes against one load
             * of A's 4 k, then turn the products (a_k * b_jk, the same rounded products as a splat of a_k times the
             * turned B) and add them in k order. One vector load of A replaces four splats, which a 4-lane target
             * pays for (docs/speed.md, "Where a one-token step goes"). */
            for (; k + 4 <= kc; k += 4) {
                const ptrdiff_t o = pc + k;
                const v4f x = v4f_load(a[0] + k);
                v4f r0 = v4f_mul(x, v4f_load(col[0] + o)), r1 = v4f_mul(x, v4f_load(col[1] + o));
                v4f r2 = v4f_mul(x, v4f_load(col[2] + o)), r3 = v4f_mul(x, v4f_load(col[3] + o));
                v4f s0 = v4f_mul(x, v4f_load(col[4] + o)), s1 = v4f_mul(x, v4f_load(col[5] + o));
                v4f s2 = v4f_mul(x, v4f_load(col[6] + o)), s3 = v4f_mul(x, v4f_load(col[7] + o));
                v4f_transpose4(&r0, &r1, &r2, &r3);
                v4f_transpose4(&s0, &s1, &s2, &s3);
                acc[0] = v4f_add(v4f_add(v4f_add(v4f_add(acc[0], r0), r1), r2), r3);
                acc[1] = v4f_add(v4f_add(v4f_add(v4f_add(acc[1], s0), s1), s2), s3);
            }
        } else if (b_cs == 1) {
            for (; k + 4 <= kc; k += 4) {
                const ptrdiff_t o = pc + k;
                v4f r0 = v4f_load(col[0] + o), r1 = v4f_load(col[1] + o);
                v4f r2 = v4f_load(col[2] + o), r3 = v4f_load(col[3] + o);
                v4f s0 = v4f_load(col[4] + o), s1 = v4f_load(col[5] + o);
                v4f s2 = v4f_load(col[6] + o), s3 = v4f_load(col[7] + o);
                v4f_transpose4(&r0, &r1, &r2, &r3);
                v4f_transpose4(&s0, &s1, &s2, &s3);
                step(M, a, (ptrdiff_t)k * a_cs, r0, s0, acc);
                step(M, a, (ptrdiff_t)(k + 1) * a_cs, r1, s1, acc);
                step(M, a, (ptrdiff_t)(k + 2) * a_cs, r2, s2, acc);
                step(M, a, (ptrdiff_t)(k + 3) * a_cs, r3, s3, acc);
            }
        } else if (contiguous_n && nr == RN) {
            for (; k < kc; k++) {
                const float *b = col[0] + (ptrdiff_t)(pc + k) * b_cs;
                step(M, a, (ptrdiff_t)k * a_cs, v4f_load(b), v4f_load(b + 4), acc);
            }
        }
        for (; k < kc; k++) {
            float t[RN];
            for (int j = 0; j < RN; j++) t[j] = col[j][(ptrdiff_t)(pc + k) * b_cs];
            step(M, a, (ptrdiff_t)k * a_cs, v4f_load(t), v4f_load(t + 4), acc);
        }
        const int add = accumulate || pc > 0;
        store_group(C, cs, acc[0], acc[1], al, add, nr);
        if (M > 1) store_group(C + ldc, cs, acc[2], acc[3], al, add, nr);
        if (M > 2) store_group(C + 2 * ldc, cs, acc[4], acc[5], al, add, nr);
        if (M > 3) store_group(C + 3 * ldc, cs, acc[6], acc[7], al, add, nr);
    }
}

void al_gemm_rows_4(int M, int N, int K, float alpha, const float *A, ptrdiff_t a_rs, ptrdiff_t a_cs,
                    const float *B, ptrdiff_t b_rs, ptrdiff_t b_cs, float *C, ptrdiff_t ldc, int accumulate) {
    /* Which columns share a group. Contiguous in k (nt): lane j takes column s + j * slab, so each lane walks its
     * slab of B's rows front to back and the group reads RN long streams, not RN rows of K floats that end after
     * 4 * K bytes (docs/speed.md, "One long stream per lane"). Otherwise RN neighbouring columns. Lanes are
     * independent, so the grouping changes no bit. */
    const int slab = b_cs == 1 ? (N + RN - 1) / RN : 1;
    const ptrdiff_t cs = b_cs == 1 ? slab : 1;
    const int step_j = b_cs == 1 ? 1 : RN;
    const int groups = b_cs == 1 ? slab : N;
    for (int s = 0; s < groups; s += step_j) {
        int nr = 0; /* valid lanes: a prefix, since lane j's column grows with j */
        while (nr < RN && s + (ptrdiff_t)nr * cs < N) nr++;
        const float *col[RN];
        for (int j = 0; j < RN; j++) col[j] = B + (s + (ptrdiff_t)(j < nr ? j : nr - 1) * cs) * b_rs;
        float *c = C + s;
        switch (M) {
        case 1: rows_group(1, K, alpha, A, a_rs, a_cs, col, b_cs, b_rs == 1, nr, c, cs, ldc, accumulate); break;
        case 2: rows_group(2, K, alpha, A, a_rs, a_cs, col, b_cs, b_rs == 1, nr, c, cs, ldc, accumulate); break;
        case 3: rows_group(3, K, alpha, A, a_rs, a_cs, col, b_cs, b_rs == 1, nr, c, cs, ldc, accumulate); break;
        default: rows_group(4, K, alpha, A, a_rs, a_cs, col, b_cs, b_rs == 1, nr, c, cs, ldc, accumulate); break;
        }
    }
}
