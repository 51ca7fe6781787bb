/* bench_pretrain.c: pretraining step time with the batch in 1 shard and in N shards side by side.
 *
 *   bench_pretrain [MODEL_DIR] [TEXT] [--shards N] [--steps S]
 *
 * Defaults: models/attnlab-mini-bert, build/data/train.txt (its first 20,000 lines), N = 2, S = 8. Times S
 * steps (forward, MLM loss, backward, gradient combination; batch 32 x 128, dropout on) with 1 shard and
 * with N shards, alternating three times, and prints the best seconds per step and tokens per second of
 * each and their ratio. The numbers of a run depend on the shard count, not on the threads that ran them
 * (tests/c/test_pretrain_shards.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnlab.h"
#include "train/pretrain.h"
#include "train/train.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Seconds per step and real tokens per step over `steps` steps with n shards. */
static int time_steps(al_model *model, const al_mlm_corpus *c, int n, int steps, double *sec, double *tokens) {
    const int B = 32;
    al_train_options to = al_train_default_options();
    al_shard_set *set = NULL;
    al_error err;
    if (al_shards_new(model, n, B, c->max_len, &to, &set, &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    al_mlm_masking mk = al_mlm_default_masking(al_model_tokenizer(model));
    int idx[32];
    long tok = 0;
    double t0 = now_s();
    for (int s = 0; s < steps; s++) {
        for (int b = 0; b < B; b++) idx[b] = (s * B + b) % c->n_seqs;
        al_rng rng;
        al_rng_seed(&rng, (uint64_t)s);
        al_shard_step ss;
        if (al_shards_step(set, c, idx, B, &mk, &rng, (uint64_t)s, &ss, &err)) {
            fprintf(stderr, "%s\n", err.message);
            al_shards_free(set);
            return 1;
        }
        tok += ss.n_tokens;
    }
    *sec = (now_s() - t0) / steps;
    *tokens = (double)tok / steps;
    al_shards_free(set);
    return 0;
}

int main(int argc, char **argv) {
    const char *dir = "models/attnlab-mini-bert", *text_path = "build/data/train.txt";
    int shards = 2, steps = 8, pos = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--shards") && i + 1 < argc) shards = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--steps") && i + 1 < argc) steps = atoi(argv[++i]);
        else if (pos == 0) dir = argv[i], pos++;
        else text_path = argv[i];
    }
    if (shards < 2 || shards > 32 || steps < 1) {
        fprintf(stderr, "bench_pretrain: --shards must be in [2, 32], --steps >= 1\n");
        return 2;
    }
    al_error err;
    al_model *model = NULL;
    if (al_model_load_dir(dir, &model, &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    char *text;
    size_t len;
    if (al_read_file(text_path, &text, &len, &err)) {
        fprintf(stderr, "%s\n", err.message);
        al_model_free(model);
        return 1;
    }
    al_mlm_corpus c;
    int max_len = al_model_config(model)->max_position_embeddings < 128 ? al_model_config(model)->max_position_embeddings : 128;
    al_status st = al_mlm_corpus_build(al_model_tokenizer(model), text, len, max_len, 20000, &c, &err);
    free(text);
    if (st) {
        fprintf(stderr, "%s\n", err.message);
        al_model_free(model);
        return 1;
    }
    double best[2] = {1e30, 1e30}, tok[2] = {0, 0};
    for (int rep = 0; rep < 3; rep++)
        for (int k = 0; k < 2; k++) {
            double s, t;
            if (time_steps(model, &c, k ? shards : 1, steps, &s, &t)) return 1;
            if (s < best[k]) best[k] = s, tok[k] = t;
        }
    printf("pretraining step, %s, batch 32 x %d, best of 3 x %d steps:\n", dir, max_len, steps);
    printf("  1 shard:   %.3f s/step, %.0f tokens/s\n", best[0], tok[0] / best[0]);
    printf("  %d shards:  %.3f s/step, %.0f tokens/s\n", shards, best[1], tok[1] / best[1]);
    printf("  speed-up %.2fx\n", best[0] / best[1]);
    al_mlm_corpus_free(&c);
    al_model_free(model);
    return 0;
}
