/* test_kernels.c: every kernel against its al_ref_* (or double libm) on random and edge sizes,
 * strides, alpha and accumulate; the portable math functions over dense grids; the vector math
 * against the scalar math bit for bit; and a checksum of fixed kernel outputs, which must be
 * KERNELS_CHECKSUM on every build (native, WASM) and every kernel path the build and CPU can run
 * (x86-sse and x86-avx2 natively, path.h): all of it runs once per path. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fnv_digest.h"
#include "core/rng.h"
#include "kernels/kernels.h"
#include "kernels/vmath.h"

#define SENTINEL 12345.0f

static float *alloc_floats(size_t n) {
    float *p = malloc((n ? n : 1) * sizeof(float));
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

static void fill_uniform(al_rng *r, float *x, size_t n, float lo, float hi) {
    for (size_t i = 0; i < n; i++) x[i] = lo + (hi - lo) * al_rng_uniform(r);
}

static float max_abs(const float *x, size_t n) {
    float m = 0.0f;
    for (size_t i = 0; i < n; i++) m = fabsf(x[i]) > m ? fabsf(x[i]) : m;
    return m;
}

/* ---------------------------------------------------------------- math functions vs libm */

static void test_expf(void) {
    double worst = 0.0, worst_x = 0.0;
    for (float x = -87.0f; x <= 88.0f; x += 0.000173f) {
        double ref = exp((double)x), rel = fabs(al_expf(x) - ref) / ref;
        if (rel > worst) worst = rel, worst_x = x;
    }
    /* Every float in [-1, 1] near 0 with small exponents too. */
    for (float x = -1e-3f; x <= 1e-3f; x += 1.7e-7f) {
        double ref = exp((double)x), rel = fabs(al_expf(x) - ref) / ref;
        if (rel > worst) worst = rel, worst_x = x;
    }
    printf("expf: max relative error %.3g at %.9g\n", worst, worst_x);
    CHECK_MSG(worst < 1e-6, "expf max rel err %g at %g", worst, worst_x);
    /* Subnormal results: absolute error within a few subnormal steps. */
    double worst_sub = 0.0;
    for (float x = -103.0f; x < -87.5f; x += 0.0013f) worst_sub = fmax(worst_sub, fabs(al_expf(x) - exp((double)x)));
    CHECK_MSG(worst_sub < 8e-45, "expf subnormal abs err %g", worst_sub);
    CHECK(al_expf(0.0f) == 1.0f);
    CHECK(al_expf(-10000.0f) == 0.0f);
    CHECK(al_expf(-1e30f) == 0.0f);
    CHECK(al_expf(-INFINITY) == 0.0f);
    CHECK(al_expf(-104.0f) == 0.0f);
    CHECK(isinf(al_expf(INFINITY)) && al_expf(INFINITY) > 0);
    CHECK(isinf(al_expf(89.0f)));
    CHECK(isinf(al_expf(1e30f)));
    CHECK(al_expf(88.7f) < FLT_MAX && al_expf(88.7f) > 3e38f);
    CHECK(isnan(al_expf(NAN)));
}

static void test_erff(void) {
    double worst = 0.0, worst_x = 0.0;
    for (float x = -6.0f; x <= 6.0f; x += 0.0000731f) {
        double err = fabs(al_erff(x) - erf((double)x));
        if (err > worst) worst = err, worst_x = x;
    }
    printf("erff: max absolute error %.3g at %.9g\n", worst, worst_x);
    CHECK_MSG(worst < 2e-7, "erff max abs err %g at %g", worst, worst_x);
    double worst_rel = 0.0;
    for (float x = 1e-30f; x < 0.5f; x *= 1.01f) worst_rel = fmax(worst_rel, fabs(al_erff(x) - erf(x)) / erf(x));
    CHECK_MSG(worst_rel < 1e-6, "erff small-x rel err %g", worst_rel);
    CHECK(al_erff(0.0f) == 0.0f);
    CHECK(al_erff(INFINITY) == 1.0f);
    CHECK(al_erff(-INFINITY) == -1.0f);
    CHECK(al_erff(10.0f) == 1.0f);
    CHECK(al_erff(-1e30f) == -1.0f);
    CHECK(signbit(al_erff(-0.0f)));
    CHECK(isnan(al_erff(NAN)));
}

static void test_tanhf(void) {
    double worst = 0.0, worst_x = 0.0;
    for (float x = -12.0f; x <= 12.0f; x += 0.0000913f) {
        double err = fabs(al_tanhf(x) - tanh((double)x));
        if (err > worst) worst = err, worst_x = x;
    }
    printf("tanhf: max absolute error %.3g at %.9g\n", worst, worst_x);
    CHECK_MSG(worst < 2e-7, "tanhf max abs err %g at %g", worst, worst_x);
    double worst_rel = 0.0;
    for (float x = 1e-30f; x < 0.6f; x *= 1.01f) worst_rel = fmax(worst_rel, fabs(al_tanhf(x) - tanh(x)) / tanh(x));
    CHECK_MSG(worst_rel < 1e-6, "tanhf small-x rel err %g", worst_rel);
    CHECK(al_tanhf(0.0f) == 0.0f);
    CHECK(al_tanhf(INFINITY) == 1.0f);
    CHECK(al_tanhf(-INFINITY) == -1.0f);
    CHECK(al_tanhf(50.0f) == 1.0f);
    CHECK(signbit(al_tanhf(-0.0f)));
    CHECK(isnan(al_tanhf(NAN)));
}

/* The vector functions must give the scalar bits in every lane: over wide inputs, and over narrow ones where
 * every lane of a vector, some lanes or none are below erf's and tanh's branch cuts (a vector with every lane
 * below skips the other branch), with a NaN lane now and then (it must take the full path). */
static void test_vector_math_bits(al_rng *r) {
    int mismatches = 0;
    float in[4], out[4];
    const float scales[3] = {200.0f, 3.0f, 1.2f};
    for (int t = 0; t < 30000; t++) {
        for (int l = 0; l < 4; l++) in[l] = (al_rng_uniform(r) - 0.5f) * scales[t % 3];
        if (t % 7 == 0) in[t % 4] = NAN;
        vf_store(out, vf_exp(vf_load(in)));
        for (int l = 0; l < 4; l++) mismatches += memcmp(&out[l], &(float){al_expf(in[l])}, 4) != 0;
        vf_store(out, vf_erf(vf_load(in)));
        for (int l = 0; l < 4; l++) mismatches += memcmp(&out[l], &(float){al_erff(in[l])}, 4) != 0;
        vf_store(out, vf_tanh(vf_load(in)));
        for (int l = 0; l < 4; l++) mismatches += memcmp(&out[l], &(float){al_tanhf(in[l])}, 4) != 0;
    }
    CHECK_MSG(mismatches == 0, "%d vector/scalar math mismatches", mismatches);
}

/* ---------------------------------------------------------------- GEMM */

typedef void (*gemm_fn)(int, int, int, float, const float *, int, const float *, int, float *, int, int);

/* op: 0 = nt, 1 = nn, 2 = tn. Checks one call against the reference, including that nothing
 * outside C's M x N window (the ld padding) was written. */
static void check_gemm_case(al_rng *r, int op, int M, int N, int K, int pad, float alpha, int accumulate) {
    static const char *names[] = {"nt", "nn", "tn"};
    gemm_fn fast = op == 0 ? al_gemm_nt : op == 1 ? al_gemm_nn : al_gemm_tn;
    gemm_fn ref = op == 0 ? al_ref_gemm_nt : op == 1 ? al_ref_gemm_nn : al_ref_gemm_tn;
    /* Stored shapes: A is [M,K] (nt, nn) or [K,M] (tn); B is [N,K] (nt) or [K,N] (nn, tn). */
    int a_rows = op == 2 ? K : M, a_cols = op == 2 ? M : K;
    int b_rows = op == 0 ? N : K, b_cols = op == 0 ? K : N;
    int lda = a_cols + pad, ldb = b_cols + pad, ldc = N + pad;
    size_t na = (size_t)a_rows * lda, nb = (size_t)b_rows * ldb, nc = (size_t)M * ldc;
    float *A = alloc_floats(na), *B = alloc_floats(nb), *C = alloc_floats(nc), *R = alloc_floats(nc);
    fill_uniform(r, A, na, -1.0f, 1.0f);
    fill_uniform(r, B, nb, -2.0f, 2.0f);
    fill_uniform(r, C, nc, -3.0f, 3.0f);
    for (int i = 0; i < M; i++)
        for (int j = N; j < ldc; j++) C[(size_t)i * ldc + j] = SENTINEL;
    memcpy(R, C, nc * sizeof(float));
    float c_scale = max_abs(C, nc);
    fast(M, N, K, alpha, A, lda, B, ldb, C, ldc, accumulate);
    ref(M, N, K, alpha, A, lda, B, ldb, R, ldc, accumulate);
    double tol = 1e-5 * sqrt((double)K + 1.0) * max_abs(A, na) * max_abs(B, nb) * fabs(alpha) +
                 (accumulate ? 1e-6 * c_scale : 0.0) + 1e-30;
    double worst = 0.0;
    int pad_ok = 1;
    for (int i = 0; i < M; i++) {
        for (int j = 0; j < N; j++) worst = fmax(worst, fabs(C[(size_t)i * ldc + j] - R[(size_t)i * ldc + j]));
        for (int j = N; j < ldc; j++) pad_ok &= C[(size_t)i * ldc + j] == SENTINEL;
    }
    CHECK_MSG(worst <= tol, "gemm_%s M=%d N=%d K=%d pad=%d alpha=%g acc=%d: err %g > tol %g", names[op], M,
              N, K, pad, alpha, accumulate, worst, tol);
    CHECK_MSG(pad_ok, "gemm_%s M=%d N=%d K=%d wrote into the ld padding", names[op], M, N, K);
    free(A), free(B), free(C), free(R);
}

static void test_gemm(al_rng *r) {
    static const int edges[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33, 129};
    const int ne = (int)(sizeof edges / sizeof edges[0]);
    for (int op = 0; op < 3; op++) {
        /* Every small edge combination once, plain. */
        for (int a = 0; a < ne; a += 2)
            for (int b = 0; b < ne; b += 2)
                for (int c = 0; c < ne; c += 3) check_gemm_case(r, op, edges[a], edges[b], edges[c], 0, 1.0f, 0);
        /* Random shapes with strides, alpha and accumulate, some past the KC=256 / NC=128 blocks. */
        for (int t = 0; t < 40; t++) {
            int M = al_rng_uniform(r) < 0.3f ? edges[al_rng_below(r, ne)] : 1 + (int)al_rng_below(r, 70);
            int N = al_rng_uniform(r) < 0.3f ? edges[al_rng_below(r, ne)] : 1 + (int)al_rng_below(r, 300);
            int K = al_rng_uniform(r) < 0.3f ? edges[al_rng_below(r, ne)] : 1 + (int)al_rng_below(r, 600);
            int pad = (int)al_rng_below(r, 3) * (int)al_rng_below(r, 7);
            float alpha = al_rng_uniform(r) < 0.3f ? 1.0f : (al_rng_uniform(r) - 0.5f) * 4.0f;
            check_gemm_case(r, op, M, N, K, pad, alpha, (int)al_rng_below(r, 2));
        }
    }
}

/* Same inputs, nt vs nn vs tn must agree to the bit (the driver is shared). */
static void test_gemm_layouts_agree(al_rng *r) {
    int M = 37, N = 45, K = 300;
    float *A = alloc_floats((size_t)M * K), *At = alloc_floats((size_t)M * K);
    float *B = alloc_floats((size_t)N * K), *Bt = alloc_floats((size_t)N * K);
    float *C1 = alloc_floats((size_t)M * N), *C2 = alloc_floats((size_t)M * N), *C3 = alloc_floats((size_t)M * N);
    fill_uniform(r, A, (size_t)M * K, -1, 1);
    fill_uniform(r, B, (size_t)N * K, -1, 1);
    for (int i = 0; i < M; i++)
        for (int k = 0; k < K; k++) At[(size_t)k * M + i] = A[(size_t)i * K + k];
    for (int j = 0; j < N; j++)
        for (int k = 0; k < K; k++) Bt[(size_t)k * N + j] = B[(size_t)j * K + k];
    al_gemm_nt(M, N, K, 0.5f, A, K, B, K, C1, N, 0);
    al_gemm_nn(M, N, K, 0.5f, A, K, Bt, N, C2, N, 0);
    al_gemm_tn(M, N, K, 0.5f, At, M, Bt, N, C3, N, 0);
    CHECK(memcmp(C1, C2, (size_t)M * N * sizeof(float)) == 0);
    CHECK(memcmp(C1, C3, (size_t)M * N * sizeof(float)) == 0);
    free(A), free(At), free(B), free(Bt), free(C1), free(C2), free(C3);
}

/* Every C entry goes through the same operations wherever it sits, so one row computed alone (M = 1)
 * or a column block computed alone equals the same entries of the full product, bit for bit: the
 * model's outputs for a sentence do not depend on the batch it came in. */
static void test_gemm_batch_invariance(al_rng *r) {
    int M = 23, N = 70, K = 520;
    float *A = alloc_floats((size_t)M * K), *B = alloc_floats((size_t)N * K);
    float *C = alloc_floats((size_t)M * N), *row = alloc_floats((size_t)N), *blk = alloc_floats((size_t)M * 5);
    fill_uniform(r, A, (size_t)M * K, -1, 1);
    fill_uniform(r, B, (size_t)N * K, -1, 1);
    al_gemm_nt(M, N, K, 0.7f, A, K, B, K, C, N, 0);
    int same = 1;
    for (int i = 0; i < M; i += 5) {
        al_gemm_nt(1, N, K, 0.7f, A + (size_t)i * K, K, B, K, row, N, 0);
        same &= memcmp(row, C + (size_t)i * N, (size_t)N * sizeof(float)) == 0;
    }
    CHECK_MSG(same, "gemm_nt: a row computed alone differs from the batched row");
    al_gemm_nt(M, 5, K, 0.7f, A, K, B + (size_t)61 * K, K, blk, 5, 0);
    for (int i = 0; i < M; i++) same &= memcmp(blk + (size_t)i * 5, C + (size_t)i * N + 61, 5 * sizeof(float)) == 0;
    CHECK_MSG(same, "gemm_nt: a column block computed alone differs from the full product");
    free(A), free(B), free(C), free(row), free(blk);
}

/* A product of 1 to AL_GEMM_ROWS_MAX rows reads B in place (gemm_rows.c) instead of packing it: every entry of C,
 * and the ld padding, must equal the packed driver's bit for bit, on shapes off every block (K past KC = 256 and
 * not a multiple of 4, N not a multiple of the 8 or 16 column groups), with strides, alpha and accumulate. */
static void test_gemm_rows_packed(al_rng *r) {
    static const char *names[] = {"nt", "nn", "tn"};
    static const int Ks[] = {1, 3, 7, 64, 255, 257, 300, 517};
    static const int Ns[] = {1, 5, 9, 15, 17, 33, 131, 200};
    for (int op = 0; op < 3; op++) {
        gemm_fn fn = op == 0 ? al_gemm_nt : op == 1 ? al_gemm_nn : al_gemm_tn;
        for (int M = 1; M <= 4; M++)
            for (int ki = 0; ki < 8; ki++)
                for (int ni = 0; ni < 8; ni++) {
                    const int K = Ks[ki], N = Ns[ni], pad = (int)al_rng_below(r, 3);
                    const int accumulate = (int)al_rng_below(r, 2);
                    const float alpha = al_rng_uniform(r) < 0.5f ? 1.0f : (al_rng_uniform(r) - 0.5f) * 4.0f;
                    int a_rows = op == 2 ? K : M, a_cols = op == 2 ? M : K;
                    int b_rows = op == 0 ? N : K, b_cols = op == 0 ? K : N;
                    int lda = a_cols + pad, ldb = b_cols + pad, ldc = N + pad;
                    size_t na = (size_t)a_rows * lda, nb = (size_t)b_rows * ldb, nc = (size_t)M * ldc;
                    float *A = alloc_floats(na), *B = alloc_floats(nb);
                    float *packed = alloc_floats(nc), *rows = alloc_floats(nc);
                    fill_uniform(r, A, na, -1.0f, 1.0f);
                    fill_uniform(r, B, nb, -2.0f, 2.0f);
                    fill_uniform(r, packed, nc, -3.0f, 3.0f);
                    memcpy(rows, packed, nc * sizeof(float));
                    const int rows_max = al_gemm_set_rows_max(0);
                    fn(M, N, K, alpha, A, lda, B, ldb, packed, ldc, accumulate);
                    al_gemm_set_rows_max(rows_max);
                    fn(M, N, K, alpha, A, lda, B, ldb, rows, ldc, accumulate);
                    CHECK_MSG(memcmp(packed, rows, nc * sizeof(float)) == 0, "gemm_%s M=%d N=%d K=%d pad=%d alpha=%g acc=%d: the in-place rows differ from the packed "
                              "driver", names[op], M, N, K, pad, alpha, accumulate);
                    free(A), free(B), free(packed), free(rows);
                }
    }
    /* nn.Linear with its bias, as a generation step calls it: one thread packed against the in-place rows on 1 and
     * 2 threads (the columns split over the pool: enough multiply-adds at one row for two tasks). */
    const int N = 2053, K = 389;
    al_threadpool *pool = NULL;
    al_error err = {0};
    CHECK(al_threadpool_new(2, &pool, &err) == AL_OK);
    float *x = alloc_floats((size_t)4 * K), *W = alloc_floats((size_t)N * K), *bias = alloc_floats((size_t)N);
    float *packed = alloc_floats((size_t)4 * N), *rows = alloc_floats((size_t)4 * N);
    fill_uniform(r, x, (size_t)4 * K, -1, 1);
    fill_uniform(r, W, (size_t)N * K, -1, 1);
    fill_uniform(r, bias, (size_t)N, -1, 1);
    for (int M = 1; M <= 4; M++)
        for (int threads = 1; threads <= 2; threads++) {
            const int rows_max = al_gemm_set_rows_max(0);
            al_linear(M, N, K, x, W, bias, packed);
            al_gemm_set_rows_max(rows_max);
            al_linear_pool(threads == 2 ? pool : NULL, M, N, K, x, W, bias, rows);
            CHECK_MSG(memcmp(packed, rows, (size_t)M * N * sizeof(float)) == 0,
                      "linear M=%d on %d thread(s): the in-place rows differ from the packed driver", M, threads);
        }
    al_threadpool_free(pool);
    free(x), free(W), free(bias), free(packed), free(rows);
}

static void test_linear(al_rng *r) {
    int M = 19, N = 35, K = 70;
    float *x = alloc_floats((size_t)M * K), *W = alloc_floats((size_t)N * K), *bias = alloc_floats((size_t)N);
    float *y = alloc_floats((size_t)M * N), *ref = alloc_floats((size_t)M * N);
    fill_uniform(r, x, (size_t)M * K, -1, 1);
    fill_uniform(r, W, (size_t)N * K, -1, 1);
    fill_uniform(r, bias, (size_t)N, -1, 1);
    for (int with_bias = 0; with_bias < 2; with_bias++) {
        al_linear(M, N, K, x, W, with_bias ? bias : NULL, y);
        al_ref_gemm_nt(M, N, K, 1.0f, x, K, W, K, ref, N, 0);
        double worst = 0.0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++)
                worst = fmax(worst, fabs(y[(size_t)i * N + j] - (ref[(size_t)i * N + j] + (with_bias ? bias[j] : 0.0f))));
        CHECK_MSG(worst < 1e-5 * sqrt(K) + 1e-6, "linear bias=%d err %g", with_bias, worst);
    }
    free(x), free(W), free(bias), free(y), free(ref);
}

/* ---------------------------------------------------------------- softmax, layernorm, activations */

static void test_softmax(al_rng *r) {
    static const int cols_list[] = {0, 1, 2, 3, 4, 5, 7, 8, 17, 33, 128, 129, 512};
    for (size_t c = 0; c < sizeof cols_list / sizeof cols_list[0]; c++) {
        int cols = cols_list[c], rows = 5, ld = cols + 3;
        float *x = alloc_floats((size_t)rows * ld), *ref = alloc_floats((size_t)rows * ld);
        fill_uniform(r, x, (size_t)rows * ld, -8.0f, 8.0f);
        /* Additive -10000 masks on some keys of rows 1 and 3; ld padding holds a sentinel. */
        for (int j = 0; j < cols; j++) {
            if (j % 3 == 2) x[1 * ld + j] -= 10000.0f;
            if (j >= cols / 2 && j > 0) x[3 * ld + j] = -10000.0f;
        }
        for (int i = 0; i < rows; i++)
            for (int j = cols; j < ld; j++) x[(size_t)i * ld + j] = SENTINEL;
        memcpy(ref, x, (size_t)rows * ld * sizeof(float));
        al_softmax_rows(x, rows, cols, ld);
        al_ref_softmax_rows(ref, rows, cols, ld);
        double worst = 0.0, worst_sum = 0.0;
        int masked_zero = 1, pad_ok = 1;
        for (int i = 0; i < rows; i++) {
            double s = 0.0;
            for (int j = 0; j < cols; j++) {
                float v = x[(size_t)i * ld + j];
                worst = fmax(worst, fabs(v - ref[(size_t)i * ld + j]) / fmax(ref[(size_t)i * ld + j], 1e-30));
                s += v;
                if ((i == 1 && j % 3 == 2) || (i == 3 && j >= cols / 2 && j > 0)) masked_zero &= v == 0.0f;
            }
            if (cols > 0) worst_sum = fmax(worst_sum, fabs(s - 1.0));
            for (int j = cols; j < ld; j++) pad_ok &= x[(size_t)i * ld + j] == SENTINEL;
        }
        CHECK_MSG(worst < 2e-6, "softmax cols=%d rel err %g", cols, worst);
        CHECK_MSG(worst_sum < 1e-6 * (1 + sqrt(cols)), "softmax cols=%d row sum off by %g", cols, worst_sum);
        CHECK_MSG(masked_zero, "softmax cols=%d: a -10000 masked entry is not exactly 0", cols);
        CHECK_MSG(pad_ok, "softmax cols=%d wrote into the ld padding", cols);
        free(x), free(ref);
    }
    /* The bits of the order softmax.c states, written out in scalars: the row's maximum, al_expf of x - max, the
     * sum with lane l of four adding x[l], x[l + 4], ... then (l0 + l2) + (l1 + l3) and the last n % 4 in turn,
     * then x * (1 / sum). Every length up to 70 and 512 (every split of whole vectors, 4-groups and scalars on 4
     * and 8 lanes), a row whose maximum is a zero of either sign, and a row holding a NaN (all NaN). */
    for (int cols = 1; cols <= 512; cols = cols == 70 ? 512 : cols + 1) {
        for (int kind = 0; kind < 3; kind++) {
            float x[512], want[512];
            fill_uniform(r, x, (size_t)cols, -30.0f, 30.0f);
            if (kind == 1) { /* every entry negative but two zeros of opposite sign: the maximum is a zero */
                for (int j = 0; j < cols; j++) x[j] = -fabsf(x[j]) - 1.0f;
                x[cols / 2] = -0.0f;
                x[cols - 1] = 0.0f;
            }
            if (kind == 2) x[(cols * 5) / 7] = NAN;
            float mx = -INFINITY, lanes[4] = {0.0f, 0.0f, 0.0f, 0.0f};
            for (int j = 0; j < cols; j++) mx = x[j] > mx ? x[j] : mx;
            for (int j = 0; j < cols; j++) want[j] = al_expf(x[j] - mx);
            int whole = cols / 4 * 4;
            for (int j = 0; j < whole; j++) lanes[j % 4] += want[j];
            float sum = (lanes[0] + lanes[2]) + (lanes[1] + lanes[3]);
            for (int j = whole; j < cols; j++) sum += want[j];
            const float inv = 1.0f / sum;
            for (int j = 0; j < cols; j++) want[j] *= inv;
            al_softmax_rows(x, 1, cols, cols);
            int same = 1;
            for (int j = 0; j < cols; j++) same &= kind == 2 ? isnan(x[j]) != 0 : memcmp(&x[j], &want[j], 4) == 0;
            CHECK_MSG(same, "softmax cols=%d kind %d: not the bits of the stated order", cols, kind);
        }
    }
    /* Large logits must not overflow (the max is subtracted first). */
    float big[3] = {1000.0f, 1000.0f, -1000.0f};
    al_softmax_rows(big, 1, 3, 3);
    CHECK(big[0] == 0.5f && big[1] == 0.5f && big[2] == 0.0f);
}

static void test_layernorm(al_rng *r) {
    static const int dims[] = {1, 2, 3, 4, 5, 7, 8, 17, 64, 129, 768};
    for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++) {
        int dim = dims[d], rows = 4;
        size_t n = (size_t)rows * dim;
        float *x = alloc_floats(n), *y = alloc_floats(n), *ref = alloc_floats(n);
        float *gamma = alloc_floats((size_t)dim), *beta = alloc_floats((size_t)dim);
        /* A large common offset makes a one-pass variance fail; the two-pass one must not. */
        fill_uniform(r, x, n, 100.0f, 102.0f);
        fill_uniform(r, gamma, (size_t)dim, 0.5f, 1.5f);
        fill_uniform(r, beta, (size_t)dim, -1.0f, 1.0f);
        for (int affine = 0; affine < 2; affine++) {
            const float *g = affine ? gamma : NULL, *b = affine ? beta : NULL;
            al_layernorm(x, y, rows, dim, g, b, 1e-12f);
            al_ref_layernorm(x, ref, rows, dim, g, b, 1e-12f);
            /* The error is relative to the conditioning of each row: x - mean carries ~eps * |x| of
             * rounding, which the normalisation divides by the row's standard deviation. */
            double worst = 0.0;
            for (int row = 0; row < rows; row++) {
                const float *xr = x + (size_t)row * dim;
                double mean = 0.0, var = 0.0;
                for (int i = 0; i < dim; i++) mean += xr[i];
                mean /= dim;
                for (int i = 0; i < dim; i++) var += (xr[i] - mean) * (xr[i] - mean);
                double sd = sqrt(var / dim + 1e-12);
                double tol = 1e-5 + 16.0 * FLT_EPSILON * 102.0 * 1.5 / sd;
                for (int i = 0; i < dim; i++) {
                    size_t at = (size_t)row * dim + (size_t)i;
                    worst = fmax(worst, fabs(y[at] - ref[at]) / tol);
                }
            }
            CHECK_MSG(worst <= 1.0, "layernorm dim=%d affine=%d err %g x tolerance", dim, affine, worst);
        }
        /* In place gives the same result. */
        memcpy(ref, y, n * sizeof(float));
        al_layernorm(x, y, rows, dim, gamma, beta, 1e-12f);
        memcpy(ref, y, n * sizeof(float));
        al_layernorm(x, x, rows, dim, gamma, beta, 1e-12f);
        CHECK_MSG(memcmp(x, ref, n * sizeof(float)) == 0, "layernorm in place dim=%d differs", dim);
        free(x), free(y), free(ref), free(gamma), free(beta);
    }
    /* Well-conditioned rows (hidden-state-like values): tight absolute tolerance. */
    {
        int rows = 8, dim = 768;
        size_t n = (size_t)rows * dim;
        float *x = alloc_floats(n), *y = alloc_floats(n), *ref = alloc_floats(n);
        for (size_t i = 0; i < n; i++) x[i] = 0.5f + 2.0f * al_rng_normal(r);
        al_layernorm(x, y, rows, dim, NULL, NULL, 1e-12f);
        al_ref_layernorm(x, ref, rows, dim, NULL, NULL, 1e-12f);
        double worst = 0.0;
        for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs(y[i] - ref[i]));
        CHECK_MSG(worst < 3e-6, "layernorm N(0.5, 2) rows err %g", worst);
        free(x), free(y), free(ref);
    }
    /* eps inside the square root: a constant row gives beta exactly (0 * rstd). */
    float cst[4] = {3, 3, 3, 3}, out[4];
    al_layernorm(cst, out, 1, 4, NULL, NULL, 1e-5f);
    CHECK(out[0] == 0.0f && out[3] == 0.0f);
    /* var 1e-6, eps 1e-5: (x - mean) / sqrt(var + eps) = -0.001 / sqrt(1.1e-5) = -0.30151. */
    float two[2] = {0.0f, 0.002f};
    al_layernorm(two, out, 1, 2, NULL, NULL, 1e-5f);
    CHECK_NEAR(out[0], -0.001 / sqrt(1.1e-5), 1e-5);
    CHECK_NEAR(out[1], 0.001 / sqrt(1.1e-5), 1e-5);
}

static void test_activations(al_rng *r) {
    static const size_t sizes[] = {0, 1, 3, 4, 5, 17, 1000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        float *x = alloc_floats(n + 1), *y = alloc_floats(n + 1), *ref = alloc_floats(n + 1);
        fill_uniform(r, x, n, -8.0f, 8.0f);
        x[n] = y[n] = SENTINEL;
        double worst_gelu = 0.0, worst_tanh = 0.0;
        memcpy(y, x, n * sizeof(float)), memcpy(ref, x, n * sizeof(float));
        al_gelu(y, n), al_ref_gelu(ref, n);
        for (size_t i = 0; i < n; i++) worst_gelu = fmax(worst_gelu, fabs(y[i] - ref[i]));
        CHECK(y[n] == SENTINEL);
        memcpy(y, x, n * sizeof(float)), memcpy(ref, x, n * sizeof(float));
        al_gelu_tanh(y, n), al_ref_gelu_tanh(ref, n);
        for (size_t i = 0; i < n; i++) worst_tanh = fmax(worst_tanh, fabs(y[i] - ref[i]));
        CHECK_MSG(worst_gelu < 2e-6, "gelu n=%zu err %g", n, worst_gelu);
        CHECK_MSG(worst_tanh < 2e-6, "gelu_tanh n=%zu err %g", n, worst_tanh);
        memcpy(y, x, n * sizeof(float));
        al_relu(y, n);
        int relu_ok = 1;
        for (size_t i = 0; i < n; i++) relu_ok &= y[i] == (x[i] > 0.0f ? x[i] : 0.0f);
        CHECK(relu_ok);
        CHECK(y[n] == SENTINEL);
        free(x), free(y), free(ref);
    }
    /* A scalar tail and a vector body give the same bits for the same value. */
    float v[5] = {0.3f, -1.7f, 2.5f, 0.3f, 0.3f};
    al_gelu(v, 5);
    CHECK(memcmp(&v[0], &v[4], 4) == 0 && memcmp(&v[3], &v[4], 4) == 0);
    float special[4] = {NAN, -INFINITY, INFINITY, -0.0f};
    al_gelu(special, 4);
    CHECK(isnan(special[0]) && special[2] == INFINITY && special[3] == 0.0f);
    float rl[2] = {NAN, -0.5f};
    al_relu(rl, 2);
    CHECK(isnan(rl[0]) && rl[1] == 0.0f);
}

/* The activations' backward (kernels.h's formulas) against the same formulas one value at a time with the scalar
 * al_erff/al_expf/al_tanhf: the same bits at every size (the vector body and the padded tail), in place too, and
 * their values against double precision. */
static float gelu_grad_1(float x) {
    const float cdf = 0.5f * (1.0f + al_erff(x * 0.707106781186547524f));
    const float pdf = 0.398942280401432678f * al_expf(-0.5f * x * x);
    return cdf + x * pdf;
}
static float gelu_tanh_grad_1(float x) {
    const float c = 0.797884560802865355f, a = 0.044715f;
    const float t = al_tanhf(c * (x + a * x * x * x));
    return 0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * c * (1.0f + 3.0f * a * x * x);
}
static float silu_grad_1(float x) {
    const float s = 1.0f / (1.0f + al_expf(0.0f - x));
    return s * (1.0f + x * (1.0f - s));
}
static float relu_grad_1(float x) { return x > 0.0f ? 1.0f : 0.0f; }
static double gelu_grad_d(double x) { return 0.5 * (1.0 + erf(x / sqrt(2.0))) + x * exp(-0.5 * x * x) / sqrt(2.0 * M_PI); }
static double silu_grad_d(double x) {
    const double s = 1.0 / (1.0 + exp(-x));
    return s * (1.0 + x * (1.0 - s));
}

static void test_activation_grads(al_rng *r) {
    typedef void (*bwd_fn)(const float *, const float *, float *, size_t);
    const bwd_fn fns[4] = {al_gelu_bwd, al_gelu_tanh_bwd, al_silu_bwd, al_relu_bwd};
    float (*const one[4])(float) = {gelu_grad_1, gelu_tanh_grad_1, silu_grad_1, relu_grad_1};
    const char *names[4] = {"gelu", "gelu_tanh", "silu", "relu"};
    static const size_t sizes[] = {0, 1, 3, 4, 7, 8, 9, 17, 1000};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        const size_t n = sizes[s];
        float *pre = alloc_floats(n + 1), *dy = alloc_floats(n + 1), *dx = alloc_floats(n + 1), *in = alloc_floats(n + 1);
        fill_uniform(r, pre, n, -9.0f, 9.0f);
        fill_uniform(r, dy, n, -2.0f, 2.0f);
        if (n > 2) pre[0] = 0.0f, pre[1] = -0.0f, pre[2] = NAN;
        for (int f = 0; f < 4; f++) {
            dx[n] = in[n] = SENTINEL;
            fns[f](pre, dy, dx, n);
            memcpy(in, dy, n * sizeof(float));
            fns[f](pre, in, in, n); /* in place */
            int same = 1;
            for (size_t i = 0; i < n; i++) {
                const float want = dy[i] * one[f](pre[i]);
                same &= memcmp(&dx[i], &want, 4) == 0 && memcmp(&in[i], &want, 4) == 0;
            }
            CHECK_MSG(same, "%s backward n=%zu: not the scalar formula's bits on path %s", names[f], n, al_kernels_path());
            CHECK(dx[n] == SENTINEL && in[n] == SENTINEL);
        }
        free(pre), free(dy), free(dx), free(in);
    }
    /* the values: the derivatives in double precision (gelu and silu; gelu_tanh is within 1e-3 of gelu's) */
    double worst_gelu = 0.0, worst_silu = 0.0, worst_tanh = 0.0;
    for (int i = 0; i <= 2000; i++) {
        const float x = -10.0f + 0.01f * (float)i, one_dy = 1.0f;
        float g, t, si;
        al_gelu_bwd(&x, &one_dy, &g, 1), al_gelu_tanh_bwd(&x, &one_dy, &t, 1), al_silu_bwd(&x, &one_dy, &si, 1);
        worst_gelu = fmax(worst_gelu, fabs(g - gelu_grad_d(x)));
        worst_silu = fmax(worst_silu, fabs(si - silu_grad_d(x)));
        worst_tanh = fmax(worst_tanh, fabs(t - gelu_grad_d(x)));
    }
    CHECK_MSG(worst_gelu < 1e-5 && worst_silu < 1e-5, "gelu' err %g, silu' err %g", worst_gelu, worst_silu);
    CHECK_MSG(worst_tanh < 2e-2, "gelu_tanh' vs gelu' %g", worst_tanh);
}

/* ---------------------------------------------------------------- bit-identity checksum */

/* Fixed-seed inputs through every kernel; the hash of all output bits must be the same on the
 * native (SSE or scalar) and WASM builds. */
/* The hash print_checksum computes: the same on every build and path (docs/kernels.md). */
#define KERNELS_CHECKSUM 0x0074f2d353ab6311ULL

static void print_checksum(void) {
    al_rng r;
    al_rng_seed(&r, 20240607);
    uint64_t h = FNV_DIGEST_START;
    int M = 67, N = 141, K = 300;
    float *A = alloc_floats((size_t)M * K), *B = alloc_floats((size_t)N * K), *C = alloc_floats((size_t)M * N);
    for (size_t i = 0; i < (size_t)M * K; i++) A[i] = al_rng_normal(&r);
    for (size_t i = 0; i < (size_t)N * K; i++) B[i] = al_rng_normal(&r);
    al_gemm_nt(M, N, K, 0.125f, A, K, B, K, C, N, 0);
    h = fnv_digest(h, C, (size_t)M * N);
    al_gemm_nn(M, N, 141, 1.0f, A, K, B, N, C, N, 1);
    h = fnv_digest(h, C, (size_t)M * N);
    al_gemm_tn(M, N, 100, -0.5f, A, M, B, N, C, N, 1);
    h = fnv_digest(h, C, (size_t)M * N);
    al_softmax_rows(C, M, N, N);
    h = fnv_digest(h, C, (size_t)M * N);
    al_layernorm(A, A, M, K, B, B + K, 1e-12f);
    h = fnv_digest(h, A, (size_t)M * K);
    al_gelu(A, (size_t)M * K);
    h = fnv_digest(h, A, (size_t)M * K);
    al_gelu_tanh(B, (size_t)N * K);
    h = fnv_digest(h, B, (size_t)N * K);
    float g[1001];
    for (int i = 0; i <= 1000; i++) g[i] = al_expf(-100.0f + 0.19f * i) + al_erff(-5.0f + 0.01f * i) + al_tanhf(-5.0f + 0.01f * i);
    h = fnv_digest(h, g, 1001);
    printf("kernels checksum (%s): %016llx\n", al_kernels_path(), (unsigned long long)h);
    CHECK_MSG(h == KERNELS_CHECKSUM, "kernel path %s: checksum %016llx, every build and path gives %016llx",
              al_kernels_path(), (unsigned long long)h, (unsigned long long)KERNELS_CHECKSUM);
    free(A), free(B), free(C);
}

int main(void) {
    const char *paths[8];
    const int n_paths = al_kernels_paths(paths, 8);
    CHECK(n_paths >= 1 && n_paths <= 8);
    CHECK(al_kernels_set_path("no-such-path") == -1);
    test_expf();
    test_erff();
    test_tanhf();
    for (int p = 0; p < n_paths && p < 8; p++) {
        CHECK(al_kernels_set_path(paths[p]) == 0);
        CHECK(strcmp(al_kernels_path(), paths[p]) == 0);
        printf("kernel path: %s\n", al_kernels_path());
        al_rng r;
        al_rng_seed(&r, 7);
        test_vector_math_bits(&r);
        test_gemm(&r);
        test_gemm_layouts_agree(&r);
        test_gemm_batch_invariance(&r);
        test_linear(&r);
        test_softmax(&r);
        test_layernorm(&r);
        test_activations(&r);
        test_activation_grads(&r);
        print_checksum();
        al_rng_seed(&r, 11);
        test_gemm_rows_packed(&r);
    }
    return check_summary("kernels");
}
