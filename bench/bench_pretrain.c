/* bench_pretrain.c: pretraining step time with the batch in 1 shard and in N shards side by side.
 *
 *   bench_pretrain [MODEL_DIR] [TEXT] [--shards N] [--steps S] [--sop DOCS] [--paths]
 *
 * Defaults: models/attnlab-mini-bert, build/data/train.txt (its first 20,000 lines), N = 2, S = 8. Times S
 * steps (forward, MLM loss, backward, gradient combination; batch 32 x 128, dropout on) with 1 shard and
 * with N shards, alternating three times, and prints the best seconds per step and tokens per second of
 * each and their ratio. The numbers of a run depend on the shard count, not on the threads that ran them
 * (tests/c/test_pretrain_shards.c). With --sop DOCS (a documents file, build/data/train_docs.txt), also the
 * step with sentence order on N shards (half the batch sentence-order pairs, docs/pretraining.md) and its
 * cost relative to the MLM-only step on N shards. With --paths, instead: the 1-shard step on every kernel
 * path the build and CPU can run (x86-avx2 and x86-sse natively, src/kernels/path.h), alternating three
 * times, and each path's tokens per second relative to the first (bench/lanes.mjs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "core/clock.h"
#include "kernels/kernels.h"
#include "train/pretrain.h"
#include "train/train.h"
#include "bench_args.h"

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
    double t0 = al_now_seconds();
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
    *sec = (al_now_seconds() - t0) / steps;
    *tokens = (double)tok / steps;
    al_shards_free(set);
    return 0;
}

/* Seconds and real tokens per step with sentence order: half the batch pairs of runs of docs. */
static int time_sop_steps(al_model *model, const al_mlm_corpus *c, const al_sop_docs *docs, int n, int steps,
                          double *sec, double *tokens) {
    enum { B = 32, P = 16 };
    al_train_options to = al_train_default_options();
    al_shard_set *set = NULL;
    al_error err;
    const size_t nh = al_sop_head_size(al_model_config(model)->hidden_size);
    float *head = malloc(sizeof *head * nh);
    int slot = -1;
    al_rng rng;
    al_rng_seed(&rng, 5);
    for (size_t i = 0; head && i < nh; i++) head[i] = 0.02f * al_rng_normal(&rng);
    if (!head || al_shards_new(model, n, B, c->max_len, &to, &set, &err) || al_shards_add_grads(set, nh, &slot, &err)) {
        fprintf(stderr, "%s\n", head ? err.message : "out of memory");
        al_shards_free(set);
        free(head);
        return 1;
    }
    al_mlm_masking mk = al_mlm_default_masking(al_model_tokenizer(model));
    int idx[B - P], runs[P];
    double t0 = al_now_seconds(), tok = 0;
    for (int s = 0; s < steps; s++) {
        for (int b = 0; b < B - P; b++) idx[b] = (s * (B - P) + b) % c->n_seqs;
        for (int b = 0; b < P; b++) runs[b] = (int)(((int64_t)s * P + b) * 7919 % docs->n_runs);
        al_rng mrng, prng;
        al_rng_seed(&mrng, (uint64_t)s);
        al_rng_seed(&prng, (uint64_t)s + 1000);
        al_sop_step ss;
        if (al_shards_step_sop(set, c, idx, B - P, docs, runs, P, &prng, &mk, &mrng, (uint64_t)s, head, slot, &ss, &err)) {
            fprintf(stderr, "%s\n", err.message);
            al_shards_free(set);
            free(head);
            return 1;
        }
        tok += ss.mlm.n_tokens;
    }
    *sec = (al_now_seconds() - t0) / steps;
    *tokens = tok / steps;
    al_shards_free(set);
    free(head);
    return 0;
}

int main(int argc, char **argv) {
    const char *dir = "models/attnlab-mini-bert", *text_path = "build/data/train.txt", *sop_path = NULL;
    int shards = 2, steps = 8, pos = 0, by_path = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--paths")) by_path = 1;
        else if (!strcmp(argv[i], "--shards")) shards = bench_int("bench_pretrain", "--shards", bench_next(argc, argv, &i), 1, 1024);
        else if (!strcmp(argv[i], "--steps")) steps = bench_int("bench_pretrain", "--steps", bench_next(argc, argv, &i), 1, 1 << 30);
        else if (!strcmp(argv[i], "--sop") && i + 1 < argc) sop_path = argv[++i];
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
    if (by_path) {
        const char *paths[8];
        int n = al_kernels_paths(paths, 8);
        n = n < 8 ? n : 8;
        /* the widest path first: the ratios read "8 lanes / 4 lanes" */
        for (int i = 0; i < n / 2; i++) {
            const char *t = paths[i];
            paths[i] = paths[n - 1 - i], paths[n - 1 - i] = t;
        }
        double pbest[8], ptok[8];
        for (int p = 0; p < n; p++) pbest[p] = 1e30, ptok[p] = 0;
        for (int rep = 0; rep < 3; rep++)
            for (int p = 0; p < n; p++) {
                double s, t;
                al_kernels_set_path(paths[p]);
                if (time_steps(model, &c, 1, steps, &s, &t)) return 1;
                if (s < pbest[p]) pbest[p] = s, ptok[p] = t;
            }
        printf("pretraining step, %s, batch 32 x %d, 1 shard, best of 3 alternating x %d steps:\n", dir, max_len, steps);
        for (int p = 0; p < n; p++)
            printf("  %-12s %.3f s/step, %.0f tokens/s, %.2fx %s\n", paths[p], pbest[p], ptok[p] / pbest[p],
                   (ptok[p] / pbest[p]) / (ptok[n - 1] / pbest[n - 1]), paths[n - 1]);
        al_mlm_corpus_free(&c);
        al_model_free(model);
        return 0;
    }
    double best[2] = {1e30, 1e30}, tok[2] = {0, 0};
    for (int rep = 0; rep < 3 && !sop_path; rep++) /* with --sop, only the comparison below */
        for (int k = 0; k < 2; k++) {
            double s, t;
            if (time_steps(model, &c, k ? shards : 1, steps, &s, &t)) return 1;
            if (s < best[k]) best[k] = s, tok[k] = t;
        }
    printf("pretraining step, %s, batch 32 x %d, best of 3 x %d steps:\n", dir, max_len, steps);
    if (!sop_path) {
        printf("  1 shard:   %.3f s/step, %.0f tokens/s\n", best[0], tok[0] / best[0]);
        printf("  %d shards:  %.3f s/step, %.0f tokens/s\n", shards, best[1], tok[1] / best[1]);
        printf("  speed-up %.2fx\n", best[0] / best[1]);
    }
    if (sop_path) {
        al_sop_docs docs;
        if (al_read_file(sop_path, &text, &len, &err) ||
            al_sop_docs_build(al_model_tokenizer(model), text, len, max_len, &docs, &err)) {
            fprintf(stderr, "%s: %s\n", sop_path, err.message);
            return 1;
        }
        free(text);
        double bm = 1e30, bs = 1e30, tm = 0, tsop = 0;
        for (int rep = 0; rep < 3; rep++) { /* alternating, as above */
            double s, t;
            if (time_steps(model, &c, shards, steps, &s, &t)) return 1;
            if (s < bm) bm = s, tm = t;
            if (time_sop_steps(model, &c, &docs, shards, steps, &s, &t)) return 1;
            if (s < bs) bs = s, tsop = t;
        }
        printf("  %d shards, MLM only:                     %.3f s/step, %.0f tokens/step\n", shards, bm, tm);
        printf("  %d shards, 16 of 32 sentence-order pairs: %.3f s/step, %.0f tokens/step: %.3fx the MLM-only step, "
               "%.3fx per token\n", shards, bs, tsop, bs / bm, (bs / tsop) / (bm / tm));
        al_sop_docs_free(&docs);
    }
    al_mlm_corpus_free(&c);
    al_model_free(model);
    return 0;
}
