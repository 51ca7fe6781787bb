/* gemm_rows_avx2.c: gemm_rows.c on 8 AVX2 lanes (compiled with -mavx2, never -mfma; run only when the CPU has
 * AVX2, path.c).
 *
 * 16 columns of C per group (two ymm per row of A, so one row still has two independent sums in flight). In the nt
 * layout each 8 columns are read 4 k at a time: columns j and j + 4 share a ymm (low and high 128 bits), and one
 * 4 x 4 transpose inside the 128-bit lanes leaves k, k + 1, k + 2, k + 3 as 8 columns in column order. Every entry
 * gets gemm_rows.c's operations, which are the packed driver's (gemm.c): acc = 0, acc = acc + a*b in k order over
 * each KC depth block, then c = alpha * acc (+ c). */
#include "path.h"

#if AL_KERNELS_HAVE_AVX2
#include <immintrin.h>

#include "gemm_block.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

#define KC AL_GEMM_KC
#define RN 16 /* columns per group: two ymm */

/* Lane j's column is c[j * cs] (gemm_rows.c). */
static inline void store_group(float *c, ptrdiff_t cs, __m256 lo, __m256 hi, __m256 alpha, int add, int nr) {
    lo = _mm256_mul_ps(alpha, lo);
    hi = _mm256_mul_ps(alpha, hi);
    if (nr == RN && cs == 1) {
        if (add) {
            lo = _mm256_add_ps(_mm256_loadu_ps(c), lo);
            hi = _mm256_add_ps(_mm256_loadu_ps(c + 8), hi);
        }
        _mm256_storeu_ps(c, lo);
        _mm256_storeu_ps(c + 8, hi);
        return;
    }
    float t[RN];
    _mm256_storeu_ps(t, lo);
    _mm256_storeu_ps(t + 8, hi);
    for (int j = 0; j < nr; j++) c[j * cs] = add ? c[j * cs] + t[j] : t[j];
}

static inline __attribute__((always_inline)) void step(const int M, const float *const a[4], ptrdiff_t o, __m256 b0,
                                                       __m256 b1, __m256 acc[8]) {
    __m256 x = _mm256_broadcast_ss(a[0] + o);
    acc[0] = _mm256_add_ps(acc[0], _mm256_mul_ps(x, b0));
    acc[1] = _mm256_add_ps(acc[1], _mm256_mul_ps(x, b1));
    if (M > 1) {
        x = _mm256_broadcast_ss(a[1] + o);
        acc[2] = _mm256_add_ps(acc[2], _mm256_mul_ps(x, b0));
        acc[3] = _mm256_add_ps(acc[3], _mm256_mul_ps(x, b1));
    }
    if (M > 2) {
        x = _mm256_broadcast_ss(a[2] + o);
        acc[4] = _mm256_add_ps(acc[4], _mm256_mul_ps(x, b0));
        acc[5] = _mm256_add_ps(acc[5], _mm256_mul_ps(x, b1));
    }
    if (M > 3) {
        x = _mm256_broadcast_ss(a[3] + o);
        acc[6] = _mm256_add_ps(acc[6], _mm256_mul_ps(x, b0));
        acc[7] = _mm256_add_ps(acc[7], _mm256_mul_ps(x, b1));
    }
}

/* B(j .. j + 7, o .. o + 3) for columns c[0..7] (contiguous in k), as 4 vectors: k[i] lane l = B(j + l, o + i). */
static inline __attribute__((always_inline)) void load_turn(const float *const c[8], ptrdiff_t o, __m256 k[4]) {
    __m256 r0 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(c[0] + o)), _mm_loadu_ps(c[4] + o), 1);
    __m256 r1 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(c[1] + o)), _mm_loadu_ps(c[5] + o), 1);
    __m256 r2 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(c[2] + o)), _mm_loadu_ps(c[6] + o), 1);
    __m256 r3 = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(c[3] + o)), _mm_loadu_ps(c[7] + o), 1);
    __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
    __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
    k[0] = _mm256_shuffle_ps(t0, t2, 0x44);
    k[1] = _mm256_shuffle_ps(t0, t2, 0xEE);
    k[2] = _mm256_shuffle_ps(t1, t3, 0x44);
    k[3] = _mm256_shuffle_ps(t1, t3, 0xEE);
}

static inline __attribute__((always_inline)) void rows_group(const int M, int K, float alpha, const float *A,
                                                             ptrdiff_t a_rs, ptrdiff_t a_cs, const float *const col[RN],
                                                             ptrdiff_t b_cs, int contiguous_n, int nr, float *C,
                                                             ptrdiff_t cs, ptrdiff_t ldc, int accumulate) {
    const __m256 al = _mm256_set1_ps(alpha);
    for (int pc = 0; pc < K; pc += KC) {
        const int kc = K - pc < KC ? K - pc : KC;
        const float *a[4];
        for (int m = 0; m < 4; m++) a[m] = A + (ptrdiff_t)(m < M ? m : M - 1) * a_rs + (ptrdiff_t)pc * a_cs;
        __m256 acc[8];
        for (int i = 0; i < 8; i++) acc[i] = _mm256_setzero_ps();
        int k = 0;
        if (b_cs == 1) {
            for (; k + 4 <= kc; k += 4) {
                __m256 lo[4], hi[4];
                load_turn(col, pc + k, lo);
                load_turn(col + 8, pc + k, hi);
                step(M, a, (ptrdiff_t)k * a_cs, lo[0], hi[0], acc);
                step(M, a, (ptrdiff_t)(k + 1) * a_cs, lo[1], hi[1], acc);
                step(M, a, (ptrdiff_t)(k + 2) * a_cs, lo[2], hi[2], acc);
                step(M, a, (ptrdiff_t)(k + 3) * a_cs, lo[3], hi[3], acc);
            }
        } else if (contiguous_n && nr == RN) {
            for (; k < kc; k++) {
                const float *b = col[0] + (ptrdiff_t)(pc + k) * b_cs;
                step(M, a, (ptrdiff_t)k * a_cs, _mm256_loadu_ps(b), _mm256_loadu_ps(b + 8), acc);
            }
        }
        for (; k < kc; k++) {
            float t[RN];
            for (int j = 0; j < RN; j++) t[j] = col[j][(ptrdiff_t)(pc + k) * b_cs];
            step(M, a, (ptrdiff_t)k * a_cs, _mm256_loadu_ps(t), _mm256_loadu_ps(t + 8), acc);
        }
        const int add = accumulate || pc > 0;
        store_group(C, cs, acc[0], acc[1], al, add, nr);
        if (M > 1) store_group(C + ldc, cs, acc[2], acc[3], al, add, nr);
        if (M > 2) store_group(C + 2 * ldc, cs, acc[4], acc[5], al, add, nr);
        if (M > 3) store_group(C + 3 * ldc, cs, acc[6], acc[7], al, add, nr);
    }
}

void al_gemm_rows_avx2(int M, int N, int K, float alpha, const float *A, ptrdiff_t a_rs, ptrdiff_t a_cs,
                       const float *B, ptrdiff_t b_rs, ptrdiff_t b_cs, float *C, ptrdiff_t ldc, int accumulate) {
    /* Contiguous in k: lane j takes column s + j * slab, one long stream per lane (gemm_rows.c). */
    const int slab = b_cs == 1 ? (N + RN - 1) / RN : 1;
    const ptrdiff_t cs = b_cs == 1 ? slab : 1;
    const int step_j = b_cs == 1 ? 1 : RN;
    const int groups = b_cs == 1 ? slab : N;
    for (int s = 0; s < groups; s += step_j) {
        int nr = 0;
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
#endif
