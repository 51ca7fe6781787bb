/* bench_families.c: the forward pass of deberta-v3-base and ModernBERT-base shapes against bert-base, all
 * three in one run (random weights, configs built here, nothing downloaded), at 128 and 512 tokens (one
 * sequence, no MLM head), and the cost of constant heads in each family: every head CONSTANT against every
 * head standard. The passes are interleaved round by round (every model and mode once per round), so all
 * see the same machine; each figure is the best of the rounds. Prints one table of times and ratios
 * (docs/speed.md, "Families"). Measured natively; the WASM build of it was not run.
 *
 *   bench_families [--rounds N] [--threads N]   (defaults 3 and 1) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "core/clock.h"
#include "bench_args.h"

static const char *const k_names[3] = {"bert-base", "deberta-v3-base", "ModernBERT-base"};
static const char *const k_configs[3] = {
    "{\"model_type\": \"bert\", \"vocab_size\": 1000, \"hidden_size\": 768, \"num_hidden_layers\": 12,"
    " \"num_attention_heads\": 12, \"intermediate_size\": 3072}",
    /* microsoft/deberta-v3-base's config.json, vocabulary cut to 1000 (the embedding lookup's cost does not
     * depend on it) */
    "{\"model_type\": \"deberta-v2\", \"hidden_act\": \"gelu\", \"hidden_size\": 768, \"intermediate_size\": 3072,"
    " \"max_position_embeddings\": 512, \"relative_attention\": true, \"position_buckets\": 256,"
    " \"norm_rel_ebd\": \"layer_norm\", \"share_att_key\": true, \"pos_att_type\": \"p2c|c2p\","
    " \"layer_norm_eps\": 1e-7, \"max_relative_positions\": -1, \"position_biased_input\": false,"
    " \"num_attention_heads\": 12, \"num_hidden_layers\": 12, \"type_vocab_size\": 0, \"vocab_size\": 1000}",
    /* answerdotai/ModernBERT-base's shape: 22 layers, GeGLU 1152, a global layer every 3, window 128 */
    "{\"model_type\": \"modernbert\", \"vocab_size\": 1000, \"hidden_size\": 768, \"num_hidden_layers\": 22,"
    " \"num_attention_heads\": 12, \"intermediate_size\": 1152, \"max_position_embeddings\": 8192,"
    " \"global_attn_every_n_layers\": 3, \"local_attention\": 128, \"pad_token_id\": 0}",
};

static al_model *make(const char *json) {
    al_config c;
    al_error err;
    al_model *m = NULL;
    if (al_config_parse(json, strlen(json), "config.json", &c, &err) != AL_OK ||
        al_model_new_random(&c, 42, 0, &m, &err) != AL_OK) {
        fprintf(stderr, "bench_families: %s\n", err.message);
        exit(1);
    }
    return m;
}

/* Seconds of one forward pass of one sequence of L tokens (every head constant C when C is not NULL). */
static double one_pass(const al_model *m, int L, const float *C, al_threadpool *pool) {
    const al_config *c = al_model_config(m);
    const int n = c->n_layers * c->n_heads;
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)L);
    for (int i = 0; i < L; i++) ids[i] = 5 + (i * 37) % 900;
    al_head_policy *pol = C ? calloc((size_t)n, sizeof *pol) : NULL;
    for (int i = 0; pol && i < n; i++) pol[i].mode = AL_HEAD_CONSTANT, pol[i].constant = C;
    al_batch batch = {1, L, ids, NULL, NULL, NULL};
    al_forward_params p = al_forward_default_params();
    p.policies = pol;
    p.pool = pool;
    al_error err;
    const double t0 = al_now_seconds();
    if (al_forward(m, &batch, &p, NULL, &err) != AL_OK) {
        fprintf(stderr, "bench_families: %s\n", err.message);
        exit(1);
    }
    const double t = al_now_seconds() - t0;
    free(ids), free(pol);
    return t;
}

int main(int argc, char **argv) {
    int rounds = 3, threads = 1;
    for (int i = 1; i < argc; i += 2) { /* argv[argc] is NULL: a last option without its number is said */
        if (strcmp(argv[i], "--rounds") == 0) rounds = bench_int("bench_families", "--rounds", argv[i + 1], 1, BENCH_ROUNDS_MAX);
        else if (strcmp(argv[i], "--threads") == 0) threads = bench_int("bench_families", "--threads", argv[i + 1], 1, al_threads_max());
        else {
            fprintf(stderr, "bench_families: unknown option %s (--rounds N, --threads N)\n", argv[i]);
            return 2;
        }
    }
    al_threadpool *pool = NULL;
    al_error err;
    if (threads > 1 && al_threadpool_new(threads, &pool, &err) != AL_OK) {
        fprintf(stderr, "bench_families: %s\n", err.message);
        return 1;
    }
    al_model *models[3];
    for (int f = 0; f < 3; f++) models[f] = make(k_configs[f]);
    printf("%d thread(s), best of %d interleaved rounds; ratios to bert-base at the same length\n", threads, rounds);
    printf("| model | tokens | forward ms | / bert-base | all heads constant ms | constant / standard |\n");
    printf("|---|---:|---:|---:|---:|---:|\n");
    const int lengths[2] = {128, 512};
    for (int k = 0; k < 2; k++) {
        const int L = lengths[k];
        float *C = malloc(sizeof(float) * (size_t)L * L);
        for (size_t i = 0; i < (size_t)L * L; i++) C[i] = 1.0f; /* uniform rows after normalising */
        double best[3][2];
        for (int f = 0; f < 3; f++) best[f][0] = best[f][1] = 1e30;
        for (int r = 0; r < rounds; r++)
            for (int mode = 0; mode < 2; mode++)
                for (int f = 0; f < 3; f++) {
                    const double t = one_pass(models[f], L, mode ? C : NULL, pool);
                    if (t < best[f][mode]) best[f][mode] = t;
                }
        for (int f = 0; f < 3; f++)
            printf("| %s | %d | %.0f | %.2f | %.0f | %.2f |\n", k_names[f], L, best[f][0] * 1e3,
                   best[f][0] / best[0][0], best[f][1] * 1e3, best[f][1] / best[f][0]);
        fflush(stdout);
        free(C);
    }
    for (int f = 0; f < 3; f++) al_model_free(models[f]);
    al_threadpool_free(pool);
    return 0;
}
