/* gemm.c: the three GEMM layouts and nn.Linear, over one blocked, packed, register-tiled driver.
 *
 * C[M,N] = alpha * op(A) op(B) (+ C). The driver sees A as "element (i,k) = A[i*a_rs + k*a_cs]" and B
 * as "element (n,k) = B[n*b_rs + k*b_cs]", so nt, nn and tn differ only in those strides.
 * Blocking (GotoBLAS order): columns in blocks of NC, depth in blocks of KC; each NC x KC block of B is
 * packed on the stack into NR-wide panels ([k][NR], zero-padded), then for every MR rows of A the
 * micro-kernel keeps an MR x NR tile of C in 2 x MR vector registers and streams the panel (gemm_tile4.h: 6 x 8
 * natively, 5 x 8 in WebAssembly, or 4 x 8 on the "wasm-simd128-4x8" path). A is read in place (its MR x KC
 * micro-panel stays in L1 across the panels). No allocation: the packed
 * block is a fixed stack array of KC * NC floats (128 KiB).
 *
 * Rounding: every C entry is sum_k a*b accumulated in k order inside a depth block (multiply then
 * add, no FMA), then C = alpha * tile for the first block (or C + alpha * tile when accumulating)
 * and C = C + alpha * tile for later blocks. Edge tiles go through a stack tile with the same
 * operations, so the result does not depend on where an entry sits, and is the same on every path.
 * The tile shape is free (it decides which entries are computed together, not how): the 8-lane
 * path (gemm_avx2.c) runs 6 x 16 tiles over the same packed panels. A product of at most AL_GEMM_ROWS_MAX rows (a
 * generation step) skips the packing and reads B in place with the same per-entry operations (gemm_rows.c). */
#include <stddef.h>
#include <string.h>

#include "gemm_block.h"
#include "kernels.h"
#include "path.h"
#include "simd.h"

/* Rows per tile: 6 natively (12 accumulators, 15 of x86-64's 16 vector registers), 5 in WebAssembly.
 * V8 keeps one of the 16 xmm registers as scratch and needs one for each product before its add, so
 * 10 accumulators, two B vectors, a broadcast and a product fit where 12 accumulators spill: measured
 * side by side under node 20 (docs/kernels.md), 5 x 8 runs the bert-base GEMMs faster than 4 x 8 (about
 * 1.2x on Zen 5, 1.02x to 1.07x on Zen 3), which ran them about 1.5x faster than 6 x 8. Chromium's V8 runs
 * 4 x 8 faster than 5 x 8 (the same docs, "The tile under Chromium"), so WebAssembly builds carry both and
 * the page picks (path.h). */
#ifndef AL_GEMM4_MR
#if defined(__wasm_simd128__)
#define AL_GEMM4_MR 5
#else
#define AL_GEMM4_MR 6
#endif
#endif
#define NR AL_GEMM_NR
#define KC AL_GEMM_KC
#define NC AL_GEMM_NC

/* Packs B(n, k) for n < nc, k < kc into panels of NR columns: panel p holds bp[p*kc*NR + k*NR + j]
 * = B(p*NR + j, k), zero for columns past nc (so the micro-kernel never tests for edges). */
static void pack_b(int kc, int nc, const float *B, ptrdiff_t rs, ptrdiff_t cs, float *bp) {
    for (int j0 = 0; j0 < nc; j0 += NR) {
        int nr = nc - j0 < NR ? nc - j0 : NR;
        float *dst = bp + (size_t)j0 * kc;
        if (rs == 1 && nr == NR) {
            /* B(n, k) contiguous in n (nn, tn layouts): copy 8 floats per k. */
            for (int k = 0; k < kc; k++) {
                const float *src = B + j0 + (ptrdiff_t)k * cs;
                v4f_store(dst + k * NR, v4f_load(src));
                v4f_store(dst + k * NR + 4, v4f_load(src + 4));
            }
            continue;
        }
        if (cs == 1 && nr == NR) {
            /* B(n, k) contiguous in k (nt layout): 4x4 register transposes, then the k tail. */
            int k = 0;
            for (; k + 4 <= kc; k += 4) {
                for (int h = 0; h < NR; h += 4) {
                    const float *src = B + (ptrdiff_t)(j0 + h) * rs + k;
                    v4f r0 = v4f_load(src), r1 = v4f_load(src + rs);
                    v4f r2 = v4f_load(src + 2 * rs), r3 = v4f_load(src + 3 * rs);
                    v4f_transpose4(&r0, &r1, &r2, &r3);
                    v4f_store(dst + k * NR + h, r0);
                    v4f_store(dst + (k + 1) * NR + h, r1);
                    v4f_store(dst + (k + 2) * NR + h, r2);
                    v4f_store(dst + (k + 3) * NR + h, r3);
                }
            }
            for (; k < kc; k++)
                for (int j = 0; j < NR; j++) dst[k * NR + j] = B[(ptrdiff_t)(j0 + j) * rs + k];
            continue;
        }
        for (int j = 0; j < NR; j++) {
            if (j < nr) {
                const float *src = B + (ptrdiff_t)(j0 + j) * rs;
                for (int k = 0; k < kc; k++) dst[k * NR + j] = src[(ptrdiff_t)k * cs];
            } else {
                for (int k = 0; k < kc; k++) dst[k * NR + j] = 0.0f;
            }
        }
    }
}

/* Writes one row of a tile: c = alpha * acc, or c = c + alpha * acc when add is set. */
static inline void store_row(float *c, v4f lo, v4f hi, v4f alpha, int add) {
    lo = v4f_mul(alpha, lo);
    hi = v4f_mul(alpha, hi);
    if (add) {
        lo = v4f_add(v4f_load(c), lo);
        hi = v4f_add(v4f_load(c + 4), hi);
    }
    v4f_store(c, lo);
    v4f_store(c + 4, hi);
}

/* The 4-lane packed block, once per tile height (gemm_tile4.h): AL_GEMM4_MR rows on the path named by the
 * build (simd.h), and in WebAssembly also 4 rows, the "wasm-simd128-4x8" path (path.h). */
#define TILE_MR AL_GEMM4_MR
#define TILE(name) name##_main
#include "gemm_tile4.h"
#undef TILE_MR
#undef TILE
#if AL_KERNELS_HAVE_4X8
#define TILE_MR 4
#define TILE(name) name##_4x8
#include "gemm_tile4.h"
#undef TILE_MR
#undef TILE
#endif

/* Rows up to which the driver reads B in place (gemm_rows.c); al_gemm_set_rows_max changes it. */
static int rows_max = AL_GEMM_ROWS_MAX;

int al_gemm_set_rows_max(int max_rows) {
    const int old = rows_max;
    rows_max = max_rows < 0 ? 0 : max_rows > AL_GEMM_ROWS_MAX ? AL_GEMM_ROWS_MAX : max_rows;
    return old;
}

static void gemm_driver(int M, int N, int K, float alpha, const float *A, ptrdiff_t a_rs,
                        ptrdiff_t a_cs, const float *B, ptrdiff_t b_rs, ptrdiff_t b_cs, float *C,
                        ptrdiff_t ldc, int accumulate) {
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        if (!accumulate)
            for (int i = 0; i < M; i++) memset(C + i * ldc, 0, (size_t)N * sizeof(float));
        return;
    }
    /* A few rows (a generation step): packing B would cost more than the products; the same bits. */
    if (M <= rows_max) {
#if AL_KERNELS_HAVE_AVX2
        /* One row of A against B contiguous in k (nt): the 4-lane kernel's 8 streams read memory faster than the
         * 8-lane kernel's 16, and a step's weights come from memory (docs/speed.md, "One long stream per lane"). */
        if (al_kernels_use_avx2() && !(M == 1 && b_cs == 1)) {
            al_gemm_rows_avx2(M, N, K, alpha, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, accumulate);
            return;
        }
#endif
        al_gemm_rows_4(M, N, K, alpha, A, a_rs, a_cs, B, b_rs, b_cs, C, ldc, accumulate);
        return;
    }
    /* The 8-lane path keeps the packed panels and the per-entry operations; only its tile is larger. */
    void (*block)(int, int, int, const float *, ptrdiff_t, ptrdiff_t, const float *, float *, ptrdiff_t,
                  float, int) = gemm_block_main;
#if AL_KERNELS_HAVE_AVX2
    if (al_kernels_use_avx2()) block = al_gemm_block_avx2;
#endif
#if AL_KERNELS_HAVE_4X8
    if (al_kernels_use_4x8()) block = gemm_block_4x8;
#endif
    float bp[KC * NC];
    for (int jc = 0; jc < N; jc += NC) {
        int nc = N - jc < NC ? N - jc : NC;
        for (int pc = 0; pc < K; pc += KC) {
            int kc = K - pc < KC ? K - pc : KC;
            pack_b(kc, nc, B + jc * b_rs + pc * b_cs, b_rs, b_cs, bp);
            block(M, nc, kc, A + pc * a_cs, a_rs, a_cs, bp, C + jc, ldc, alpha, accumulate || pc > 0);
        }
    }
}

/* The most column tasks one product is cut into (gemm_split). */
#define GEMM_MAX_TASKS 256

/* One product's arguments, in the driver's strided form, for the column-block tasks. */
typedef struct gemm_job {
    int M, N, K, accumulate;
    float alpha;
    const float *A, *B, *bias;
    ptrdiff_t a_rs, a_cs, b_rs, b_cs, ldc;
    float *C;
    const int *first_col; /* task t: columns [first_col[t], first_col[t + 1]), multiples of NR (gemm_split) */
} gemm_job;

static void add_bias_cols(float *C, ptrdiff_t ldc, int M, int n, const float *bias) {
    for (int i = 0; i < M; i++) {
        float *row = C + (ptrdiff_t)i * ldc;
        int j = 0;
        for (; j + 4 <= n; j += 4) v4f_store(row + j, v4f_add(v4f_load(row + j), v4f_load(bias + j)));
        for (; j < n; j++) row[j] += bias[j];
    }
}

/* Task t: columns [first_col[t], first_col[t + 1]) of C, and their bias. */
static void gemm_task(void *arg, int t, int n_tasks, int thread) {
    const gemm_job *g = arg;
    const int j0 = g->first_col[t];
    const int n = (g->first_col[t + 1] < g->N ? g->first_col[t + 1] : g->N) - j0; /* at least 1: a task has a panel */
    gemm_driver(g->M, n, g->K, g->alpha, g->A, g->a_rs, g->a_cs, g->B + j0 * g->b_rs, g->b_rs, g->b_cs,
                g->C + j0, g->ldc, g->accumulate);
    if (g->bias) add_bias_cols(g->C + j0, g->ldc, g->M, n, g->bias + j0);
}

/* Below this many multiply-adds per task the wake-up costs more than it saves. */
#define GEMM_MIN_TASK_MACS (1 << 18)

/* The column tasks shrink as the product goes (guided): each takes about 1/(2 x threads) of the panels not yet
 * given out, at least two panels and GEMM_MIN_TASK_MACS. The first tasks are long, the last short, so a thread that
 * runs slower than the others (a VM's vCPU, a thread woken late) holds up the end of the product by a short task
 * at most. Where a column is computed does not change its bits (the header), so neither does the cut. */
static void gemm_split(al_threadpool *pool, gemm_job *g) {
    const int panels = (g->N + NR - 1) / NR;
    int min_w = panels, share = 1; /* one task holding every panel, unless the product is worth sharing */
    if (al_threadpool_parts(pool, (double)g->M * g->N * g->K, GEMM_MIN_TASK_MACS) > 1) {
        const double macs_per_panel = (double)g->M * g->K * NR;
        min_w = (int)(al_threadpool_least_part(pool, GEMM_MIN_TASK_MACS) / macs_per_panel) + 1;
        if (min_w < 2) min_w = 2;
        share = 2 * al_threadpool_size(pool);
    }
    int first_col[GEMM_MAX_TASKS + 1]; /* filled only as far as the tasks go */
    int n_tasks = 0;
    first_col[0] = 0;
    for (int given = 0; given < panels;) {
        const int left = panels - given;
        int w = (left + share - 1) / share;
        if (w < min_w) w = min_w;
        if (w > left || n_tasks == GEMM_MAX_TASKS - 1) w = left; /* the last task takes the rest */
        given += w;
        first_col[++n_tasks] = given * NR;
    }
    g->first_col = first_col;
    al_threadpool_for(pool, n_tasks, gemm_task, g);
}

void al_gemm_nt_pool(al_threadpool *pool, int M, int N, int K, float alpha, const float *A, int lda,
                     const float *B, int ldb, float *C, int ldc, int accumulate) {
    if (M <= 0 || N <= 0) return;
    gemm_job g = {M, N, K, accumulate, alpha, A, B, NULL, lda, 1, ldb, 1, ldc, C, NULL};
    gemm_split(pool, &g);
}

void al_gemm_nn_pool(al_threadpool *pool, int M, int N, int K, float alpha, const float *A, int lda,
                     const float *B, int ldb, float *C, int ldc, int accumulate) {
    if (M <= 0 || N <= 0) return;
    gemm_job g = {M, N, K, accumulate, alpha, A, B, NULL, lda, 1, 1, ldb, ldc, C, NULL};
    gemm_split(pool, &g);
}

void al_gemm_tn_pool(al_threadpool *pool, int M, int N, int K, float alpha, const float *A, int lda,
                     const float *B, int ldb, float *C, int ldc, int accumulate) {
    if (M <= 0 || N <= 0) return;
    gemm_job g = {M, N, K, accumulate, alpha, A, B, NULL, 1, lda, 1, ldb, ldc, C, NULL};
    gemm_split(pool, &g);
}

void al_linear_pool(al_threadpool *pool, int M, int N, int K, const float *x, const float *W,
                    const float *bias, float *y) {
    if (M <= 0 || N <= 0) return;
    gemm_job g = {M, N, K, 0, 1.0f, x, W, bias, K, 1, K, 1, N, y, NULL};
    gemm_split(pool, &g);
}

void al_gemm_nt(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float *C, int ldc, int accumulate) {
    gemm_driver(M, N, K, alpha, A, lda, 1, B, ldb, 1, C, ldc, accumulate);
}

void al_gemm_nn(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float *C, int ldc, int accumulate) {
    gemm_driver(M, N, K, alpha, A, lda, 1, B, 1, ldb, C, ldc, accumulate);
}

void al_gemm_tn(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float *C, int ldc, int accumulate) {
    gemm_driver(M, N, K, alpha, A, 1, lda, B, 1, ldb, C, ldc, accumulate);
}

void al_linear(int M, int N, int K, const float *x, const float *W, const float *bias, float *y) {
    al_linear_pool(NULL, M, N, K, x, W, bias, y);
}
