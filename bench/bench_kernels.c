/* bench_kernels.c: throughput of the kernels, single thread, as a plain table.
 * Usage: bench_kernels [repetitions]   (default 5; the best repetition is reported)
 * GEMM rows are al_gemm_nt at nn.Linear- and attention-like shapes M x N x K, in GFLOP/s (2MNK
 * flops); softmax, layernorm and GELU rows are in millions of elements per second. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/rng.h"
#include "kernels/kernels.h"

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

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
        double t0 = now_seconds(), t;
        do {
            fn(ctx);
            calls++;
            t = now_seconds() - t0;
        } while (t < 0.05);
        if (t / calls < best) best = t / calls;
    }
    return best;
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
    int reps = argc > 1 ? atoi(argv[1]) : 5;
    if (reps < 1) reps = 1;
    al_rng rng;
    al_rng_seed(&rng, 1);
    printf("kernel path: %s, best of %d repetitions, single thread\n\n", al_kernels_path(), reps);

    static const int shapes[][3] = {{128, 768, 768}, {512, 768, 768}, {512, 3072, 768}, {128, 128, 128},
                                    {512, 512, 64}};
    printf("%-22s %12s %10s\n", "al_gemm_nt M x N x K", "ms/call", "GFLOP/s");
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        gemm_ctx g = {shapes[s][0], shapes[s][1], shapes[s][2], NULL, NULL, NULL};
        g.A = random_floats(&rng, (size_t)g.M * g.K, 1.0f);
        g.B = random_floats(&rng, (size_t)g.N * g.K, 1.0f);
        g.C = random_floats(&rng, (size_t)g.M * g.N, 1.0f);
        double t = best_seconds(run_gemm, &g, reps);
        char name[64];
        snprintf(name, sizeof name, "%d x %d x %d", g.M, g.N, g.K);
        printf("%-22s %12.3f %10.2f\n", name, 1e3 * t, 2.0 * g.M * g.N * g.K / t * 1e-9);
        free(g.A), free(g.B), free(g.C);
    }

    /* Row kernels at BERT-base sizes: 12 heads x 128 x 128 attention rows, 128 x 768 hidden,
     * 128 x 3072 intermediate. Softmax reruns on its own output (values stay in [0, 1]). */
    printf("\n%-22s %12s %10s\n", "row kernel (rows x n)", "ms/call", "Melem/s");
    row_ctx c = {12 * 128, 128, NULL, NULL, NULL, NULL};
    c.x = random_floats(&rng, (size_t)c.rows * c.cols, 5.0f);
    double t = best_seconds(run_softmax, &c, reps);
    printf("%-22s %12.3f %10.1f\n", "softmax 1536 x 128", 1e3 * t, c.rows * c.cols / t * 1e-6);
    free(c.x);

    row_ctx ln = {128, 768, NULL, NULL, NULL, NULL};
    ln.x = random_floats(&rng, (size_t)ln.rows * ln.cols, 3.0f);
    ln.y = random_floats(&rng, (size_t)ln.rows * ln.cols, 1.0f);
    ln.gamma = random_floats(&rng, (size_t)ln.cols, 1.0f);
    ln.beta = random_floats(&rng, (size_t)ln.cols, 1.0f);
    t = best_seconds(run_layernorm, &ln, reps);
    printf("%-22s %12.3f %10.1f\n", "layernorm 128 x 768", 1e3 * t, ln.rows * ln.cols / t * 1e-6);
    free(ln.x), free(ln.y), free(ln.gamma), free(ln.beta);

    row_ctx ge = {128, 3072, NULL, NULL, NULL, NULL};
    ge.x = random_floats(&rng, (size_t)ge.rows * ge.cols, 4.0f);
    ge.y = random_floats(&rng, (size_t)ge.rows * ge.cols, 1.0f);
    t = best_seconds(run_gelu, &ge, reps);
    printf("%-22s %12.3f %10.1f\n", "gelu 128 x 3072", 1e3 * t, ge.rows * ge.cols / t * 1e-6);
    t = best_seconds(run_gelu_tanh, &ge, reps);
    printf("%-22s %12.3f %10.1f\n", "gelu_tanh 128 x 3072", 1e3 * t, ge.rows * ge.cols / t * 1e-6);
    free(ge.x), free(ge.y);
    return 0;
}
