/* bench_kernels.c: throughput of the kernels, single thread, as a plain table with one column per
 * kernel path the build and CPU can run (natively x86-avx2 and x86-sse; in WebAssembly wasm-simd128-4x8 and
 * wasm-simd128, the GEMM's two tiles; src/kernels/path.h), the paths alternating repetition by repetition, and the
 * first path's ratio to the last.
 * Usage: bench_kernels [repetitions]   (default 5; the best repetition is reported)
 * GEMM rows are al_gemm_nt at nn.Linear- and attention-like shapes M x N x K, in GFLOP/s (2MNK
 * flops); softmax, layernorm and GELU rows are in millions of elements per second. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "core/rng.h"
#include "kernels/kernels.h"
#include "bench_args.h"

static float *random_floats(al_rng *r, size_t n, float scale) {
    float *p = malloc(n * sizeof(float));
    if (!p) {
        fprintf(stderr, "bench_kernels: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) p[i] = scale * (2.0f * al_rng_uniform(r) - 1.0f);
    return p;
}

/* Best time over reps of one call, each rep repeating the call until it lasted >= 50 ms.
 * Out of line and called through a pointer on purpose: if the optimisers (clang, then binaryen's
 * one-caller inlining) folded the kernels into main, which runs once, V8 would never tier that
 * code up (wasm has no on-stack replacement) and the WASM numbers would be baseline-compiler ones. */
typedef void (*bench_fn)(void *ctx);
__attribute__((noinline)) static double best_seconds(bench_fn fn, void *ctx, int reps) {
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        int calls = 0;
        double t0 = al_now_seconds(), t;
        do {
            fn(ctx);
            calls++;
            t = al_now_seconds() - t0;
        } while (t < 0.05);
        if (t / calls < best) best = t / calls;
    }
    return best;
}

/* The kernel paths, the build's 4-lane path last (al_kernels_paths lists it first). */
static const char *g_paths[8];
static int g_n_paths;

/* Best seconds per call on each path, the paths taking turns per repetition. */
static void best_by_path(bench_fn fn, void *ctx, int reps, double *best) {
    for (int p = 0; p < g_n_paths; p++) best[p] = 1e30;
    for (int r = 0; r < reps; r++)
        for (int p = 0; p < g_n_paths; p++) {
            al_kernels_set_path(g_paths[p]);
            double t = best_seconds(fn, ctx, 1);
            if (t < best[p]) best[p] = t;
        }
}

/* One table row: the rate (work / seconds * scale) on each path, then first / last. */
static void print_row(const char *name, const double *best, double work, double scale) {
    printf("%-22s", name);
    for (int p = 0; p < g_n_paths; p++) printf(" %14.2f", work / best[p] * scale);
    if (g_n_paths > 1) printf(" %8.2fx", best[g_n_paths - 1] / best[0]);
    printf("\n");
}

static void print_header(const char *what, const char *unit) {
    printf("\n%-22s", what);
    for (int p = 0; p < g_n_paths; p++) printf(" %14s", g_paths[p]);
    if (g_n_paths > 1) printf(" %9s", "ratio");
    printf("   (%s)\n", unit);
}

typedef struct {
    int M, N, K;
    float *A, *B, *C;
} gemm_ctx;

static void run_gemm(void *p) {
    gemm_ctx *g = p;
    al_gemm_nt(g->M, g->N, g->K, 1.0f, g->A, g->K, g->B, g->K, g->C, g->N, 0);
}

typedef struct {
    int rows, cols;
    float *x, *y, *gamma, *beta;
} row_ctx;

static void run_softmax(void *p) {
    row_ctx *c = p;
    al_softmax_rows(c->x, c->rows, c->cols, c->cols);
}
static void run_layernorm(void *p) {
    row_ctx *c = p;
    al_layernorm(c->x, c->y, c->rows, c->cols, c->gamma, c->beta, 1e-12f);
}
/* GELU runs on a fresh copy of the input each call (the copy is included in the time): rerunning it
 * on its own output drives negative values into subnormals, which x86 handles in slow microcode. */
static void run_gelu(void *p) {
    row_ctx *c = p;
    memcpy(c->y, c->x, (size_t)c->rows * c->cols * sizeof(float));
    al_gelu(c->y, (size_t)c->rows * c->cols);
}
static void run_gelu_tanh(void *p) {
    row_ctx *c = p;
    memcpy(c->y, c->x, (size_t)c->rows * c->cols * sizeof(float));
    al_gelu_tanh(c->y, (size_t)c->rows * c->cols);
}

int main(int argc, char **argv) {
    int reps = argc > 1 ? bench_int("bench_kernels", "repetitions", argv[1], 1, 1000) : 5;
    al_rng rng;
    al_rng_seed(&rng, 1);
    const char *listed[8];
    g_n_paths = al_kernels_paths(listed, 8);
    g_n_paths = g_n_paths < 8 ? g_n_paths : 8;
    for (int p = 0; p < g_n_paths; p++) g_paths[p] = listed[g_n_paths - 1 - p];
    printf("kernel paths side by side, best of %d alternating repetitions, single thread\n", reps);
    double best[8];

    /* bert-base's projection and FFN shapes, MiniLM's (384 wide, 1536 FFN) at 128 tokens, then attention-like
     * ones (a head's scores: 128 x 128 over MiniLM's head width 32 and bert-base's 64) */
    static const int shapes[][3] = {{128, 768, 768}, {512, 768, 768}, {512, 3072, 768}, {128, 384, 384},
                                    {128, 1536, 384}, {128, 384, 1536}, {128, 128, 128}, {128, 128, 32},
                                    {512, 512, 64}};
    print_header("al_gemm_nt M x N x K", "GFLOP/s");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        gemm_ctx g = {shapes[s][0], shapes[s][1], shapes[s][2], NULL, NULL, NULL};
        g.A = random_floats(&rng, (size_t)g.M * g.K, 1.0f);
        g.B = random_floats(&rng, (size_t)g.N * g.K, 1.0f);
        g.C = random_floats(&rng, (size_t)g.M * g.N, 1.0f);
        best_by_path(run_gemm, &g, reps, best);
        char name[64];
        snprintf(name, sizeof name, "%d x %d x %d", g.M, g.N, g.K);
        print_row(name, best, 2.0 * g.M * g.N * g.K, 1e-9);
        free(g.A), free(g.B), free(g.C);
    }

    /* Row kernels at BERT-base sizes: 12 heads x 128 x 128 attention rows, 128 x 768 hidden,
     * 128 x 3072 intermediate. Softmax reruns on its own output (values stay in [0, 1]). */
    print_header("row kernel (rows x n)", "Melem/s");
    row_ctx c = {12 * 128, 128, NULL, NULL, NULL, NULL};
    c.x = random_floats(&rng, (size_t)c.rows * c.cols, 5.0f);
    best_by_path(run_softmax, &c, reps, best);
    print_row("softmax 1536 x 128", best, (double)c.rows * c.cols, 1e-6);
    free(c.x);

    row_ctx ln = {128, 768, NULL, NULL, NULL, NULL};
    ln.x = random_floats(&rng, (size_t)ln.rows * ln.cols, 3.0f);
    ln.y = random_floats(&rng, (size_t)ln.rows * ln.cols, 1.0f);
    ln.gamma = random_floats(&rng, (size_t)ln.cols, 1.0f);
    ln.beta = random_floats(&rng, (size_t)ln.cols, 1.0f);
    best_by_path(run_layernorm, &ln, reps, best);
    print_row("layernorm 128 x 768", best, (double)ln.rows * ln.cols, 1e-6);
    free(ln.x), free(ln.y), free(ln.gamma), free(ln.beta);

    row_ctx ge = {128, 3072, NULL, NULL, NULL, NULL};
    ge.x = random_floats(&rng, (size_t)ge.rows * ge.cols, 4.0f);
    ge.y = random_floats(&rng, (size_t)ge.rows * ge.cols, 1.0f);
    best_by_path(run_gelu, &ge, reps, best);
    print_row("gelu 128 x 3072", best, (double)ge.rows * ge.cols, 1e-6);
    best_by_path(run_gelu_tanh, &ge, reps, best);
    print_row("gelu_tanh 128 x 3072", best, (double)ge.rows * ge.cols, 1e-6);
    free(ge.x), free(ge.y);
    return 0;
}
