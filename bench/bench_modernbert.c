/* bench_modernbert.c: a ModernBERT-base-shaped forward pass (22 layers, hidden 768, 12 heads, GeGLU 1152, a
 * global layer every 3, window 128; random weights) against bert-base (12 x 768, 12 heads, 3072) at 128 and
 * 512 tokens, and the cost of constant heads in each, all timed side by side in one run; prints ratios.
 *
 *   bench_modernbert [--threads N] [--min-seconds S]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnlab.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static const char *const k_modernbert =
    "{\"model_type\": \"modernbert\", \"vocab_size\": 1000, \"hidden_size\": 768, \"num_hidden_layers\": 22,"
    " \"num_attention_heads\": 12, \"intermediate_size\": 1152, \"max_position_embeddings\": 8192,"
    " \"global_attn_every_n_layers\": 3, \"local_attention\": 128, \"pad_token_id\": 0}";
static const char *const k_bert =
    "{\"model_type\": \"bert\", \"vocab_size\": 1000, \"hidden_size\": 768, \"num_hidden_layers\": 12,"
    " \"num_attention_heads\": 12, \"intermediate_size\": 3072}";

/* Seconds per forward pass of one sequence of L tokens (every head constant when constant is not NULL). */
static double time_forward(const al_model *m, int L, const float *constant, al_threadpool *pool, double min_s) {
    const al_config *c = al_model_config(m);
    int32_t *ids = malloc(sizeof(int32_t) * L);
    for (int i = 0; i < L; i++) ids[i] = 1 + (i * 37) % (c->vocab_size - 1);
    const int n = c->n_layers * c->n_heads;
    al_head_policy *pol = constant ? calloc((size_t)n, sizeof *pol) : NULL;
    for (int i = 0; pol && i < n; i++) pol[i].mode = AL_HEAD_CONSTANT, pol[i].constant = constant;
    al_batch batch = {1, L, ids, NULL, NULL, NULL};
    al_forward_params p = al_forward_default_params();
    p.policies = pol;
    p.pool = pool;
    al_error err;
    int reps = 0;
    double t0 = now_s(), el;
    do {
        if (al_forward(m, &batch, &p, NULL, &err) != AL_OK) {
            fprintf(stderr, "bench_modernbert: %s\n", err.message);
            exit(1);
        }
        reps++;
        el = now_s() - t0;
    } while (el < min_s);
    free(ids), free(pol);
    return el / reps;
}

static al_model *make(const char *json) {
    al_config c;
    al_error err;
    al_model *m = NULL;
    if (al_config_parse(json, strlen(json), "config.json", &c, &err) != AL_OK ||
        al_model_new_random(&c, 42, 0, &m, &err) != AL_OK) {
        fprintf(stderr, "bench_modernbert: %s\n", err.message);
        exit(1);
    }
    return m;
}

int main(int argc, char **argv) {
    int threads = 1;
    double min_s = 1.0;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--threads") == 0) threads = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--min-seconds") == 0) min_s = atof(argv[i + 1]);
    }
    al_threadpool *pool = NULL;
    al_error err;
    if (threads > 1 && al_threadpool_new(threads, &pool, &err) != AL_OK) return 1;
    al_model *mb = make(k_modernbert), *bb = make(k_bert);
    const int lengths[2] = {128, 512};
    for (int k = 0; k < 2; k++) {
        const int L = lengths[k];
        float *C = malloc(sizeof(float) * (size_t)L * L);
        for (size_t i = 0; i < (size_t)L * L; i++) C[i] = 1.0f;
        const double tb = time_forward(bb, L, NULL, pool, min_s), tm = time_forward(mb, L, NULL, pool, min_s);
        const double tbc = time_forward(bb, L, C, pool, min_s), tmc = time_forward(mb, L, C, pool, min_s);
        printf("{\"L\":%d,\"threads\":%d,\"bert_base_ms\":%.1f,\"modernbert_base_ms\":%.1f,"
               "\"modernbert_over_bert\":%.3f,\"bert_all_constant_over_standard\":%.3f,"
               "\"modernbert_all_constant_over_standard\":%.3f}\n",
               L, threads, tb * 1e3, tm * 1e3, tm / tb, tbc / tb, tmc / tm);
        fflush(stdout);
        free(C);
    }
    al_model_free(mb), al_model_free(bb);
    al_threadpool_free(pool);
    return 0;
}
