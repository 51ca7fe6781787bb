/* bench_decoder.c: a causal language model's speed, one JSON line per measurement. Run natively and as WASM under
 * node by bench/decoder_compare.mjs, which puts it beside onnxruntime-web on the same weights (docs/speed.md,
 * "Decoders").
 *
 *   bench_decoder MODEL_DIR [--threads 1,2] [--rounds R] [--lengths 128,512] [--prompt 128] [--new 64] [--gemm]
 *                 [--serve] [--check PREFIX] [--ab]
 *
 * One thread pool per count in --threads; each round runs every pool in turn. --serve instead reads commands on
 * stdin (serve_stdin below), which is how bench/decoder_compare.mjs interleaves this program with onnxruntime.
 *
 * Per round: a prefill (al_forward with every position's next-token logits, batch 1) at each length, then a
 * generation: the prompt into an empty key/value cache (al_decode of `--prompt` tokens), and `--new` greedy steps of
 * one token each (al_decode, then the argmax of its logits). A round starts with an untimed prefill at the first
 * length (page faults, and in WASM the engine's tier-up to optimised code). The prompt's ids are fixed
 * (1000 + 7919 t mod 20000), so every runner reads the same text.
 *
 * --gemm measures the GEMM rate on the model's own shapes (512 rows: the query projection, FFN up, FFN down; best
 * call of each, their mean) before the rounds, and every line carries the FLOPs its work must do (the linear layers
 * and the LM head over its rows, and 4 H hd per visible key per query: the causal half of the scores and P V), so
 * the driver prints each figure as a share of that rate.
 *
 * --check PREFIX writes what decoder_compare.mjs checks onnxruntime against before timing: PREFIX.prefill.f32 (the
 * logits [L, V] of the first length's prefill), PREFIX.steps.f32 (the logits [4, V] of the prompt's last token and
 * the first 3 greedy steps) and PREFIX.ids.json (the 3 generated ids); then exits.
 *
 * --ab times a generation step's two GEMM paths side by side (docs/speed.md, "One-token steps"): the packed driver
 * (al_gemm_set_rows_max(0)) and B read in place (gemm_rows.c, the default). First the model's products for 1, 2 and 4
 * rows (best of 7 calls each, the two paths call by call), then per round the prompt into the cache and `--new`
 * greedy steps with the paths alternating step by step (which path takes the even steps swaps every round). It
 * checks that both paths give the same logits bit for bit, and prints the load average (/proc/loadavg) per round. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "core/clock.h"
#include "kernels/kernels.h"
#include "model/family_params.h"
#include "bench_args.h"

static void fail(const char *what, const al_error *err) {
    printf("{\"kind\":\"error\",\"message\":\"%s: %s\"}\n", what, err ? err->message : "out of memory");
    fflush(stdout);
    exit(1);
}

/* The prompt's token at position t: ids 1000 to 20999 on a vocabulary that holds them (GPT-2's, Llama's: the ids of
 * the figures measured so far), else spread over the whole of a smaller one (the embedded decoder's 8000 tokens). */
static int32_t prompt_id(int t, int V) {
    return (int32_t)(V > 21000 ? 1000 + (t * 7919) % 20000 : (t * 7919) % V);
}

static int argmax(const float *x, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

/* FLOPs the rows of positions p0 .. p0 + n - 1 must do: every linear layer and the LM head per row, and 4 H hd per
 * key each query sees (its scores and P V over keys 0 .. p). */
static double flops(const al_config *c, int p0, int n) {
    const double D = c->hidden_size, A = al_attn_width(c), KVW = al_kv_width(c), I = c->intermediate_size;
    const int gated = strcmp(c->model_type, "llama") == 0 || strcmp(c->model_type, "qwen2") == 0;
    const double per_row = 2.0 * (c->n_layers * (D * A + 2.0 * D * KVW + A * D + (gated ? 3.0 : 2.0) * D * I) +
                                  (double)c->vocab_size * D);
    double keys = 0;
    for (int p = p0; p < p0 + n; p++) keys += p + 1;
    return per_row * n + 4.0 * A * keys * c->n_layers;
}

static double gemm_best(al_threadpool *pool, int M, int N, int K) {
    float *A = malloc(sizeof(float) * (size_t)M * K), *B = malloc(sizeof(float) * (size_t)N * K);
    float *C = malloc(sizeof(float) * (size_t)M * N);
    if (!A || !B || !C) fail("gemm", NULL);
    for (size_t i = 0; i < (size_t)M * K; i++) A[i] = (float)((i * 7919u) % 101) / 101.0f - 0.5f;
    for (size_t i = 0; i < (size_t)N * K; i++) B[i] = (float)((i * 104729u) % 97) / 97.0f - 0.5f;
    al_gemm_nt_pool(pool, M, N, K, 1.0f, A, K, B, K, C, N, 0);
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t = al_now_seconds();
        al_gemm_nt_pool(pool, M, N, K, 1.0f, A, K, B, K, C, N, 0);
        t = al_now_seconds() - t;
        if (t < best) best = t;
    }
    free(A), free(B), free(C);
    return 2.0 * M * N * K / best * 1e-9;
}

static void write_f32(const char *prefix, const char *suffix, const float *x, size_t n) {
    char path[1024];
    snprintf(path, sizeof path, "%s%s", prefix, suffix);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(x, sizeof(float), n, f) != n) {
        printf("{\"kind\":\"error\",\"message\":\"cannot write %s\"}\n", path);
        exit(1);
    }
    fclose(f);
}

/* What a run holds: the model, one pool per thread count asked for, the ids, a logits buffer, the cache. */
typedef struct bench {
    al_model *model;
    const al_config *c;
    al_threadpool *pools[4];
    int n_pools;
    int32_t *ids;
    float *logits;
    al_kv_cache *cache;
    int max_len;
} bench;

static al_threadpool *pool_of(const bench *b, int threads) {
    for (int i = 0; i < b->n_pools; i++)
        if (al_threadpool_size(b->pools[i]) == threads) return b->pools[i];
    return b->pools[0];
}

/* One prefill of L tokens on the pool; round < 0: a warm-up, not printed. */
static void prefill(bench *b, int L, int round, al_threadpool *pool) {
    al_error err = {0};
    al_forward_params fp = al_forward_default_params();
    fp.pool = pool;
    al_batch batch = {.n_seqs = 1, .seq_len = L, .input_ids = b->ids};
    al_forward_outputs out = {.lm_logits = b->logits};
    double t = al_now_seconds();
    if (al_forward(b->model, &batch, &fp, &out, &err) != AL_OK) fail("prefill", &err);
    t = al_now_seconds() - t;
    if (round < 0) return;
    printf("{\"kind\":\"prefill\",\"round\":%d,\"threads\":%d,\"tokens\":%d,\"ms\":%.3f,\"gflop\":%.3f}\n", round,
           al_threadpool_size(pool), L, t * 1e3, flops(b->c, 0, L) * 1e-9);
    fflush(stdout);
}

/* The prompt into an empty cache, then n_new greedy steps of one token. */
static void generate(bench *b, int prompt, int n_new, int round, al_threadpool *pool) {
    al_error err = {0};
    const int V = b->c->vocab_size;
    al_kv_cache_reset(b->cache);
    double t0 = al_now_seconds();
    if (al_decode(b->model, b->cache, b->ids, prompt, pool, b->logits, NULL, &err) != AL_OK) fail("decode", &err);
    const double t_prompt = al_now_seconds() - t0;
    int32_t next = argmax(b->logits + (size_t)(prompt - 1) * V, V);
    t0 = al_now_seconds();
    for (int s = 0; s < n_new; s++) {
        if (al_decode(b->model, b->cache, &next, 1, pool, b->logits, NULL, &err) != AL_OK) fail("decode", &err);
        next = argmax(b->logits, V);
    }
    const double t_steps = al_now_seconds() - t0;
    printf("{\"kind\":\"generate\",\"round\":%d,\"threads\":%d,\"prompt\":%d,\"new\":%d,\"prompt_ms\":%.3f,"
           "\"steps_ms\":%.3f,\"prompt_gflop\":%.3f,\"steps_gflop\":%.3f,\"last_id\":%d}\n",
           round, al_threadpool_size(pool), prompt, n_new, t_prompt * 1e3, t_steps * 1e3,
           flops(b->c, 0, prompt) * 1e-9, flops(b->c, prompt, n_new) * 1e-9, (int)next);
    fflush(stdout);
}

static void gemm_rate(bench *b, al_threadpool *pool) {
    const al_config *c = b->c;
    const int shapes[3][2] = {{al_attn_width(c), c->hidden_size},
                              {c->intermediate_size, c->hidden_size},
                              {c->hidden_size, c->intermediate_size}};
    double sum = 0;
    for (int i = 0; i < 3; i++) {
        const double g = gemm_best(pool, 512, shapes[i][0], shapes[i][1]);
        sum += g;
        printf("{\"kind\":\"gemm\",\"threads\":%d,\"shape\":\"512x%dx%d\",\"gflops\":%.2f}\n",
               al_threadpool_size(pool), shapes[i][0], shapes[i][1], g);
    }
    printf("{\"kind\":\"gemm_rate\",\"threads\":%d,\"gflops\":%.2f}\n", al_threadpool_size(pool), sum / 3);
    fflush(stdout);
}

static void write_check(bench *b, const char *prefix, int L, int prompt) {
    al_error err = {0};
    const int V = b->c->vocab_size;
    prefill(b, L, -1, b->pools[0]);
    write_f32(prefix, ".prefill.f32", b->logits, (size_t)L * V);
    float *steps = malloc(sizeof(float) * 4 * (size_t)V);
    int32_t gen[3];
    if (!steps) fail("buffers", NULL);
    al_kv_cache_reset(b->cache);
    if (al_decode(b->model, b->cache, b->ids, prompt, b->pools[0], b->logits, NULL, &err) != AL_OK)
        fail("decode", &err);
    memcpy(steps, b->logits + (size_t)(prompt - 1) * V, sizeof(float) * (size_t)V);
    for (int s = 0; s < 3; s++) {
        gen[s] = argmax(steps + (size_t)s * V, V);
        if (al_decode(b->model, b->cache, &gen[s], 1, b->pools[0], steps + (size_t)(s + 1) * V, NULL, &err) != AL_OK)
            fail("decode", &err);
    }
    write_f32(prefix, ".steps.f32", steps, 4 * (size_t)V);
    char path[1024];
    snprintf(path, sizeof path, "%s.ids.json", prefix);
    FILE *f = fopen(path, "w");
    if (!f) fail(path, NULL);
    fprintf(f, "[%d,%d,%d]\n", gen[0], gen[1], gen[2]);
    fclose(f);
    printf("{\"kind\":\"check\",\"prefix\":\"%s\"}\n", prefix);
    fflush(stdout);
    free(steps);
}

static double load_average(void) {
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1;
        fclose(f);
    }
    return l;
}

/* One product of M rows on one path: the best of 7 calls, the two paths alternating. */
static void ab_gemm(al_threadpool *pool, int M, int N, int K, const char *what) {
    float *A = malloc(sizeof(float) * (size_t)M * K), *B = malloc(sizeof(float) * (size_t)N * K);
    float *C = malloc(sizeof(float) * (size_t)M * N);
    if (!A || !B || !C) fail("gemm", NULL);
    for (size_t i = 0; i < (size_t)M * K; i++) A[i] = (float)((i * 7919u) % 101) / 101.0f - 0.5f;
    for (size_t i = 0; i < (size_t)N * K; i++) B[i] = (float)((i * 104729u) % 97) / 97.0f - 0.5f;
    double best[2] = {1e30, 1e30};
    for (int r = 0; r < 8; r++)
        for (int path = 0; path < 2; path++) {
            al_gemm_set_rows_max(path ? AL_GEMM_ROWS_MAX : 0);
            double t = al_now_seconds();
            al_gemm_nt_pool(pool, M, N, K, 1.0f, A, K, B, K, C, N, 0);
            t = al_now_seconds() - t;
            if (r > 0 && t < best[path]) best[path] = t; /* call 0 warms up */
        }
    al_gemm_set_rows_max(AL_GEMM_ROWS_MAX);
    printf("{\"kind\":\"ab_gemm\",\"threads\":%d,\"what\":\"%s\",\"shape\":\"%dx%dx%d\",\"packed_us\":%.1f,"
           "\"in_place_us\":%.1f,\"speedup\":%.2f,\"in_place_gbs\":%.2f,\"load\":%.2f}\n",
           al_threadpool_size(pool), what, M, N, K, best[0] * 1e6, best[1] * 1e6, best[0] / best[1],
           4.0 * N * K / best[1] * 1e-9, load_average());
    fflush(stdout);
    free(A), free(B), free(C);
}

/* The prompt into the cache, then n_new steps alternating the packed and in-place paths; returns the seconds of
 * each path's steps in t[0] (packed) and t[1] (in place). */
static void ab_steps(bench *b, int prompt, int n_new, int round, al_threadpool *pool) {
    al_error err = {0};
    const int V = b->c->vocab_size;
    double t[2] = {0, 0};
    int n[2] = {0, 0};
    const double load0 = load_average();
    al_kv_cache_reset(b->cache);
    if (al_decode(b->model, b->cache, b->ids, prompt, pool, b->logits, NULL, &err) != AL_OK) fail("decode", &err);
    int32_t next = argmax(b->logits + (size_t)(prompt - 1) * V, V);
    for (int s = 0; s < n_new; s++) {
        const int path = (s + round) % 2;
        al_gemm_set_rows_max(path ? AL_GEMM_ROWS_MAX : 0);
        double t0 = al_now_seconds();
        if (al_decode(b->model, b->cache, &next, 1, pool, b->logits, NULL, &err) != AL_OK) fail("decode", &err);
        t[path] += al_now_seconds() - t0;
        n[path]++;
        next = argmax(b->logits, V);
    }
    al_gemm_set_rows_max(AL_GEMM_ROWS_MAX);
    const double ms[2] = {t[0] * 1e3 / (n[0] ? n[0] : 1), t[1] * 1e3 / (n[1] ? n[1] : 1)};
    printf("{\"kind\":\"ab_steps\",\"round\":%d,\"threads\":%d,\"prompt\":%d,\"steps\":%d,\"packed_ms\":%.3f,"
           "\"in_place_ms\":%.3f,\"speedup\":%.2f,\"packed_tok_s\":%.2f,\"in_place_tok_s\":%.2f,\"last_id\":%d,"
           "\"load\":[%.2f,%.2f]}\n",
           round, al_threadpool_size(pool), prompt, n_new, ms[0], ms[1], ms[0] / ms[1], 1e3 / ms[0], 1e3 / ms[1],
           (int)next, load0, load_average());
    fflush(stdout);
}

/* Both paths' logits for the prompt and 3 greedy steps, compared bit for bit. */
static void ab_same_bits(bench *b, int prompt, al_threadpool *pool) {
    al_error err = {0};
    const int V = b->c->vocab_size;
    float *runs[2];
    int same = 1;
    for (int path = 0; path < 2; path++) {
        al_gemm_set_rows_max(path ? AL_GEMM_ROWS_MAX : 0);
        runs[path] = malloc(sizeof(float) * 4 * (size_t)V);
        if (!runs[path]) fail("buffers", NULL);
        al_kv_cache_reset(b->cache);
        if (al_decode(b->model, b->cache, b->ids, prompt, pool, b->logits, NULL, &err) != AL_OK) fail("decode", &err);
        memcpy(runs[path], b->logits + (size_t)(prompt - 1) * V, sizeof(float) * (size_t)V);
        for (int s = 0; s < 3; s++) {
            int32_t id = argmax(runs[path] + (size_t)s * V, V);
            if (al_decode(b->model, b->cache, &id, 1, pool, runs[path] + (size_t)(s + 1) * V, NULL, &err) != AL_OK)
                fail("decode", &err);
        }
    }
    al_gemm_set_rows_max(AL_GEMM_ROWS_MAX);
    same = memcmp(runs[0], runs[1], sizeof(float) * 4 * (size_t)V) == 0;
    printf("{\"kind\":\"ab_bits\",\"threads\":%d,\"same\":%s}\n", al_threadpool_size(pool), same ? "true" : "false");
    fflush(stdout);
    free(runs[0]), free(runs[1]);
}

static void ab(bench *b, int prompt, int n_new, int rounds) {
    const al_config *c = b->c;
    for (int p = 0; p < b->n_pools; p++) {
        al_threadpool *pool = b->pools[p];
        ab_same_bits(b, prompt, pool);
        const int ms[3] = {1, 2, 4};
        for (int i = 0; i < 3; i++) {
            ab_gemm(pool, ms[i], al_attn_width(c), c->hidden_size, "query projection");
            ab_gemm(pool, ms[i], c->intermediate_size, c->hidden_size, "FFN up");
            ab_gemm(pool, ms[i], c->hidden_size, c->intermediate_size, "FFN down");
            ab_gemm(pool, ms[i], c->vocab_size, c->hidden_size, "LM head");
        }
    }
    for (int r = 0; r < rounds; r++)
        for (int p = 0; p < b->n_pools; p++) ab_steps(b, prompt, n_new, r, b->pools[p]);
}

/* --serve: one command a line on stdin, so a driver can interleave this process's runs with other runners':
 * "prefill L THREADS", "warm L THREADS" (untimed), "generate PROMPT NEW THREADS", "gemm THREADS", "quit". */
static void serve_stdin(bench *b) {
    char line[256];
    printf("{\"kind\":\"ready\"}\n");
    fflush(stdout);
    while (fgets(line, sizeof line, stdin)) {
        int x = 0, y = 0, t = 1;
        if (sscanf(line, "prefill %d %d", &x, &t) == 2 && x >= 1 && x <= b->max_len) prefill(b, x, 0, pool_of(b, t));
        else if (sscanf(line, "warm %d %d", &x, &t) == 2 && x >= 1 && x <= b->max_len) {
            prefill(b, x, -1, pool_of(b, t));
            printf("{\"kind\":\"warm\"}\n");
            fflush(stdout);
        } else if (sscanf(line, "generate %d %d %d", &x, &y, &t) == 3 && x >= 1 && y >= 0 && x + y <= b->max_len)
            generate(b, x, y, 0, pool_of(b, t));
        else if (sscanf(line, "gemm %d", &t) == 1) gemm_rate(b, pool_of(b, t));
        else if (strncmp(line, "quit", 4) == 0) break;
        else {
            printf("{\"kind\":\"error\",\"message\":\"bad command\"}\n");
            fflush(stdout);
        }
    }
}

int main(int argc, char **argv) {
    const char *dir = NULL, *check = NULL;
    int thread_counts[4] = {1}, n_threads = 1, rounds = 1, prompt = 128, n_new = 64, gemm = 0, serve = 0;
    int lengths[8] = {128, 512}, n_lengths = 2, bad = 0, ab_paths = 0;
    const char *me = "bench_decoder";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0) n_threads = bench_int_list(me, "--threads", bench_next(argc, argv, &i), thread_counts, 4, 1, al_threads_max());
        else if (strcmp(argv[i], "--rounds") == 0) rounds = bench_int(me, "--rounds", bench_next(argc, argv, &i), 1, BENCH_ROUNDS_MAX);
        else if (strcmp(argv[i], "--lengths") == 0) n_lengths = bench_int_list(me, "--lengths", bench_next(argc, argv, &i), lengths, 8, 1, 1 << 20);
        else if (strcmp(argv[i], "--prompt") == 0) prompt = bench_int(me, "--prompt", bench_next(argc, argv, &i), 1, 1 << 20);
        else if (strcmp(argv[i], "--new") == 0) n_new = bench_int(me, "--new", bench_next(argc, argv, &i), 0, 1 << 20);
        else if (strcmp(argv[i], "--gemm") == 0) gemm = 1;
        else if (strcmp(argv[i], "--serve") == 0) serve = 1;
        else if (strcmp(argv[i], "--ab") == 0) ab_paths = 1;
        else if (strcmp(argv[i], "--check") == 0 && i + 1 < argc) check = argv[++i];
        else if (argv[i][0] != '-' && !dir) dir = argv[i];
        else bad = 1;
    }
    if (bad || !dir) {
        fprintf(stderr, "usage: bench_decoder MODEL_DIR [--threads 1,2] [--rounds R] [--lengths 128,512] [--prompt 128]"
                        " [--new 64] [--gemm] [--serve] [--check PREFIX] [--ab]\n");
        return 2;
    }
    al_error err = {0};
    bench b = {0};
    for (int i = 0; i < n_threads; i++)
        if (al_threadpool_new(thread_counts[i], &b.pools[b.n_pools++], &err) != AL_OK) fail("threads", &err);
    double t_load = al_now_seconds();
    if (al_model_load_dir(dir, &b.model, &err) != AL_OK) fail(dir, &err);
    t_load = al_now_seconds() - t_load;
    b.c = al_model_config(b.model);
    if (!al_model_is_causal(b.model)) {
        printf("{\"kind\":\"error\",\"message\":\"%s is not a causal language model\"}\n", dir);
        return 1;
    }
    const int V = b.c->vocab_size;
    b.max_len = prompt + n_new;
    for (int i = 0; i < n_lengths; i++)
        if (lengths[i] > b.max_len) b.max_len = lengths[i];
    if (b.max_len > b.c->max_position_embeddings) b.max_len = b.c->max_position_embeddings;
    b.ids = malloc(sizeof(int32_t) * (size_t)b.max_len);
    b.logits = malloc(sizeof(float) * (size_t)b.max_len * V);
    if (!b.ids || !b.logits) fail("buffers", NULL);
    for (int t = 0; t < b.max_len; t++) b.ids[t] = prompt_id(t, V);
    if (al_kv_cache_new(b.model, b.max_len, &b.cache, &err) != AL_OK) fail("cache", &err);
    printf("{\"kind\":\"model\",\"model_type\":\"%s\",\"layers\":%d,\"hidden\":%d,\"heads\":%d,\"kv_heads\":%d,"
           "\"vocab\":%d,\"params\":%zu,\"kernels\":\"%s\",\"load_s\":%.3f}\n",
           b.c->model_type, b.c->n_layers, b.c->hidden_size, b.c->n_heads, al_kv_heads(b.c), V,
           al_model_n_params(b.model), al_kernels_path(), t_load);
    fflush(stdout);

    if (check) write_check(&b, check, lengths[0], prompt);
    else if (serve) serve_stdin(&b);
    else if (ab_paths) ab(&b, prompt, n_new, rounds);
    else {
        for (int p = 0; p < b.n_pools; p++)
            if (gemm) gemm_rate(&b, b.pools[p]);
        for (int r = 0; r < rounds; r++)
            for (int p = 0; p < b.n_pools; p++) {
                prefill(&b, lengths[0], -1, b.pools[p]); /* warm-up */
                for (int i = 0; i < n_lengths; i++) prefill(&b, lengths[i], r, b.pools[p]);
                generate(&b, prompt, n_new, r, b.pools[p]);
            }
    }
    al_kv_cache_free(b.cache);
    free(b.ids), free(b.logits);
    al_model_free(b.model);
    for (int p = 0; p < b.n_pools; p++) al_threadpool_free(b.pools[p]);
    return 0;
}
