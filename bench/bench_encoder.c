/* bench_encoder.c: GEMM GFLOP/s and encoder throughput on random models, one JSON line per result.
 * Run natively and as WASM under node by bench/compare.mjs, which prints both side by side.
 *
 *   bench_encoder [--quick] [--only GROUP] [--threads N]   GROUP: gemm, bert-tiny, minilm or bert-base
 *
 * --threads N runs the GEMMs and forward passes on a pool of N threads (docs/threads.md; default 1).
 * A GEMM's GFLOP/s is from its best call; a forward pass's time is the mean over the timed calls.
 *
 * Shapes: bert-tiny (2 x 128, 2 heads), MiniLM (12 x 384, 12 heads), bert-base (12 x 768, 12 heads),
 * each at 32, 128 and 512 tokens, batch of one sequence, all heads standard. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "core/clock.h"
#include "kernels/kernels.h"
#include "bench_args.h"

/* Repeats fn until at least min_s seconds have passed (and at least once); returns seconds per call. */
#define TIME_LOOP(min_s, body)                                  \
    ({                                                          \
        int reps_ = 0;                                          \
        double t0_ = al_now_seconds(), el_;                              \
        do {                                                    \
            body;                                               \
            reps_++;                                            \
            el_ = al_now_seconds() - t0_;                                \
        } while (el_ < (min_s));                                \
        el_ / reps_;                                            \
    })

static al_threadpool *g_pool; /* --threads */

static void bench_gemm(int M, int N, int K, double min_s) {
    float *A = malloc(sizeof(float) * (size_t)M * K);
    float *B = malloc(sizeof(float) * (size_t)N * K);
    float *C = malloc(sizeof(float) * (size_t)M * N);
    if (!A || !B || !C) {
        printf("{\"kind\":\"error\",\"message\":\"out of memory for gemm %dx%dx%d\"}\n", M, N, K);
        free(A), free(B), free(C);
        return;
    }
    for (size_t i = 0; i < (size_t)M * K; i++) A[i] = (float)((i * 7919u) % 101) / 101.0f - 0.5f;
    for (size_t i = 0; i < (size_t)N * K; i++) B[i] = (float)((i * 104729u) % 97) / 97.0f - 0.5f;
    al_gemm_nt_pool(g_pool, M, N, K, 1.0f, A, K, B, K, C, N, 0); /* warm-up */
    /* The best single call, not the mean: on a shared machine the mean measures the other processes
     * (a loaded 2-core machine halved it while the best call stayed within a few percent). */
    double s = 1e30, t0 = al_now_seconds();
    for (int reps = 0; reps < 3 || al_now_seconds() - t0 < min_s; reps++) {
        double t = al_now_seconds();
        al_gemm_nt_pool(g_pool, M, N, K, 1.0f, A, K, B, K, C, N, 0);
        t = al_now_seconds() - t;
        if (t < s) s = t;
    }
    printf("{\"kind\":\"gemm\",\"threads\":%d,\"shape\":\"%dx%dx%d\",\"gflops\":%.3f}\n",
           al_threadpool_size(g_pool), M, N, K, 2.0 * M * N * K / s * 1e-9);
    fflush(stdout);
    free(A), free(B), free(C);
}

typedef struct shape { const char *name; int layers, hidden, heads, ffn; } shape;

static void bench_encoder(const shape *sh, const int *lengths, int n_lengths, double min_s) {
    al_config cfg = al_config_bert(30522, sh->hidden, sh->layers, sh->heads, sh->ffn);
    al_model *model = NULL;
    al_error err = {0};
    if (al_model_new_random(&cfg, 42, 0, &model, &err) != AL_OK) {
        printf("{\"kind\":\"error\",\"message\":\"%s\"}\n", err.message);
        return;
    }
    for (int li = 0; li < n_lengths; li++) {
        int L = lengths[li];
        int32_t *ids = malloc(sizeof(int32_t) * (size_t)L);
        for (int t = 0; t < L; t++) ids[t] = 1000 + (t * 37) % 20000;
        al_batch batch = {.n_seqs = 1, .seq_len = L, .input_ids = ids};
        al_forward_params params = al_forward_default_params();
        params.pool = g_pool;
        al_forward_outputs out = {0};
        al_status st = al_forward(model, &batch, &params, &out, &err); /* warm-up */
        if (st != AL_OK) {
            printf("{\"kind\":\"error\",\"message\":\"%s\"}\n", err.message);
            free(ids);
            break;
        }
        double s = TIME_LOOP(min_s, al_forward(model, &batch, &params, &out, &err));
        printf("{\"kind\":\"encoder\",\"threads\":%d,\"model\":\"%s\",\"tokens\":%d,\"tokens_per_s\":%.1f,"
               "\"ms\":%.2f}\n", al_threadpool_size(g_pool), sh->name, L, L / s, s * 1e3);
        fflush(stdout);
        free(ids);
    }
    al_model_free(model);
}

int main(int argc, char **argv) {
    int quick = 0, threads = 1;
    const char *only = NULL; /* NULL: every group */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else if (strcmp(argv[i], "--threads") == 0) threads = bench_int("bench_encoder", "--threads", bench_next(argc, argv, &i), 1, al_threads_max());
        else {
            fprintf(stderr, "usage: bench_encoder [--quick] [--only gemm|bert-tiny|minilm|bert-base] [--threads N]\n");
            return 2;
        }
    }
    al_error err = {0};
    if (al_threadpool_new(threads, &g_pool, &err) != AL_OK) {
        fprintf(stderr, "bench_encoder: %s\n", err.message);
        return 2;
    }
    double min_s = quick ? 0.05 : 0.5;
    printf("{\"kind\":\"path\",\"kernels\":\"%s\"}\n", al_kernels_path());
    /* M x N x K: bert-base's projection (128 and 512 tokens), FFN up, FFN down, one head's Q K^T (512) */
    static const int gemm_shapes[][3] = {{128, 768, 768}, {512, 768, 768}, {512, 3072, 768}, {512, 768, 3072},
                                         {512, 512, 64}};
    if (!only || strcmp(only, "gemm") == 0)
        for (size_t i = 0; i < sizeof gemm_shapes / sizeof gemm_shapes[0]; i++)
            bench_gemm(gemm_shapes[i][0], gemm_shapes[i][1], gemm_shapes[i][2], min_s);
    static const shape shapes[] = {
        {"bert-tiny", 2, 128, 2, 512},
        {"minilm", 12, 384, 12, 1536},
        {"bert-base", 12, 768, 12, 3072},
    };
    static const int lengths[] = {32, 128, 512};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (!only || strcmp(only, shapes[i].name) == 0) bench_encoder(&shapes[i], lengths, quick ? 1 : 3, min_s);
    al_threadpool_free(g_pool);
    return 0;
}
