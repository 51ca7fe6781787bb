/* bench_sweep_parts.c: parts of a sweep at bert-base scale, before and after docs/speed.md's changes, side by
 * side in one run (a shared machine's load moves both alike):
 *  - one configuration's 3 seeds of a token probe over 13 x 768 features (17 labels): every seed a task of
 *    the pool ("side by side", as before) against the last round's seed with its products split over the
 *    pool (src/methods/papa_sweep.c, run_seeds); the parameters must be the same bits;
 *  - the AdamW update of the probe's 7.7 million parameters: one at a time (the rule as it was written)
 *    against 4 at a time (src/train/adamw.c); the same bits;
 *  - padding (--padding): the lambda ranking (the quick preset's settings) and one configuration's features on
 *    the built-in POS task at L 64 over a bert-base-shaped model with random weights, the linear layers over
 *    every position (rank.pad_rows, al_forward_params.pad_rows: as before) against the real rows only
 *    (src/model/real_rows.h); the learned logits and the features must be the same bits. --shape modernbert-base
 *    runs it on ModernBERT-base's shape instead (22 layers, GeGLU 1152, a global layer every 3, window 128).
 *
 *   bench_sweep_parts [--threads 2] [--examples 48] [--rounds 2] [--padding] [--rank-examples 32]
 *                     [--rank-epochs 1] [--shape bert-base|modernbert-base] [--tasks build/data/tasks]
 *                     [--tokenizer models/attnlab-small-bert] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnlab.h"
#include "core/rng.h"
#include "core/threadpool.h"
#include "kernels/kernels.h"
#include "methods/task.h"
#include "methods/papa_sweep.h"
#include "methods/probe.h"
#include "methods/probe_data_internal.h"
#include "train/adamw.h"

enum { S = 13, D = 768, L = 64, C = 17, SEEDS = 3 };

/* CPU seconds of the process, every thread's (the pool's threads block, never spin, while they wait): on a shared
 * machine the work a pass does, which wall time shows only when the cores are free */
static double cpu_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef struct job {
    const al_probe_data *data;
    al_probe_config pc;
    al_threadpool *pool; /* the probes' products (NULL: none) */
    float *params[SEEDS];
} job;

static void fit_seed(void *arg, int si, int n, int thread) {
    (void)n, (void)thread;
    job *j = arg;
    al_probe *p = NULL;
    al_error err;
    if (al_probe_new(&j->pc, (uint64_t)si + 1, &p, &err) != AL_OK) return;
    al_probe_set_pool(p, j->pool);
    al_probe_fit_options o = al_probe_fit_default_options();
    o.epochs = 1;
    o.batch_size = 16;
    o.lr = 5e-4f;
    o.seed = (uint64_t)si + 1;
    if (al_probe_fit(p, j->data, &o, NULL, &err) == AL_OK)
        memcpy(j->params[si], al_probe_params(p), al_probe_n_params(p) * sizeof(float));
    al_probe_free(p);
}

/* The rule one parameter at a time, as adamw.c wrote it before its 4-lane loop. */
static void adamw_scalar(float *params, const float *grads, float *m, float *v, size_t n, int step, float lr) {
    const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    const double bc1 = 1.0 - pow((double)b1, step), bc2 = 1.0 - pow((double)b2, step);
    const float step_size = (float)(lr / bc1), bc2_sqrt = (float)sqrt(bc2), decay_factor = 1.0f;
    for (size_t i = 0; i < n; i++) {
        const float g = grads[i];
        params[i] *= decay_factor;
        m[i] = m[i] * b1 + g * (1.0f - b1);
        v[i] = v[i] * b2 + g * g * (1.0f - b2);
        const float denom = sqrtf(v[i]) / bc2_sqrt + eps;
        params[i] -= step_size * (m[i] / denom);
    }
}

static double load1(void) {
    double l = -1.0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1.0;
        fclose(f);
    }
    return l;
}

/* Real tokens, and positions the packed passes run (each batch of 16 padded to its longest example). */
static void count_tokens(const al_papa_inputs *in, long long *real, long long *packed) {
    *real = *packed = 0;
    for (int b0 = 0; b0 < in->n; b0 += 16) {
        int longest = 0, nb = in->n - b0 < 16 ? in->n - b0 : 16;
        for (int x = b0; x < b0 + nb; x++) {
            int n = 0;
            for (int t = 0; t < in->L; t++) n += in->mask[(size_t)x * in->L + t] != 0;
            *real += n;
            if (n > longest) longest = n;
        }
        *packed += (long long)longest * nb;
    }
}

/* The ranking and one configuration's features over the pads (before) and on the real rows (after). */
static int bench_padding(al_threadpool *pool, int rounds, int rank_examples, int rank_epochs, const char *shape,
                         const char *tasks_dir, const char *tok_dir) {
    al_error err = {0};
    al_task *task = NULL;
    al_fileset *fs = al_fileset_new();
    al_tokenizer *tok = NULL;
    if (al_task_load_builtin(tasks_dir, "pos", &task, &err) != AL_OK || !fs || al_fileset_add_dir(fs, tok_dir, &err) != AL_OK ||
        al_tokenizer_load(fs, &tok, &err) != AL_OK) {
        fprintf(stderr, "bench_sweep_parts: %s\n", err.message);
        return 1;
    }
    al_fileset_free(fs);
    /* answerdotai/ModernBERT-base's shape (its vocabulary holds the tokenizer's ids) */
    static const char modernbert_base[] =
        "{\"model_type\": \"modernbert\", \"vocab_size\": 50368, \"hidden_size\": 768, \"num_hidden_layers\": 22,"
        " \"num_attention_heads\": 12, \"intermediate_size\": 1152, \"max_position_embeddings\": 8192,"
        " \"global_attn_every_n_layers\": 3, \"local_attention\": 128, \"pad_token_id\": 0}";
    const int modernbert = !strcmp(shape, "modernbert-base");
    al_config cfg = al_config_bert(30522, 768, 12, 12, 3072);
    if (modernbert && al_config_parse(modernbert_base, strlen(modernbert_base), "config.json", &cfg, &err) != AL_OK) {
        fprintf(stderr, "bench_sweep_parts: %s\n", err.message);
        return 1;
    }
    al_model *model = NULL;
    al_papa_inputs tr;
    if (al_model_new_random(&cfg, 42, 0, &model, &err) != AL_OK ||
        al_papa_inputs_build(tok, task, AL_TASK_TRAIN, rank_examples, AL_LAYOUT_PAPA, L, &tr, &err) != AL_OK) {
        fprintf(stderr, "bench_sweep_parts: %s\n", err.message);
        return 1;
    }
    const int NH = cfg.n_layers * cfg.n_heads;
    float *Cs = malloc(sizeof(float) * (size_t)NH * L * L), *theta[2] = {malloc(sizeof(float) * NH), malloc(sizeof(float) * NH)};
    al_rng rng;
    al_rng_seed(&rng, 3);
    for (size_t i = 0; i < (size_t)NH * L * L; i++) Cs[i] = 0.05f + al_rng_uniform(&rng);
    al_papa_sweep_request req = al_papa_sweep_default_request();
    if (al_papa_sweep_preset("quick", task, &req, &err) != AL_OK) return 1;
    al_papa_rank_settings rs = req.rank;
    rs.epochs = rank_epochs;
    rs.max_examples = rank_examples;
    long long real = 0, packed = 0;
    count_tokens(&tr, &real, &packed);
    printf("padding at %s scale (random weights): POS, %d training examples at L %d, %.1f real tokens per "
           "example (%.0f%% of the positions; batches of 16 packed to their longest: %.0f%%), %d threads, kernels %s, "
           "load %.2f\n",
           modernbert ? "ModernBERT-base" : "bert-base", tr.n, L, (double)real / tr.n, 100.0 * real / ((double)tr.n * L), 100.0 * real / packed, al_threadpool_size(pool),
           al_kernels_path(), load1());
    al_forward_params fp = al_forward_default_params();
    fp.pool = pool;
    double best_rank[2] = {1e30, 1e30}, best_feat[2] = {1e30, 1e30}, loss[2] = {0, 0};
    double cpu_rank[2] = {1e30, 1e30}, cpu_feat[2] = {1e30, 1e30};
    int same_rank = 1, same_feat = 1;
    for (int r = 0; r < rounds; r++) {
        al_probe_data *feats[2] = {NULL, NULL};
        for (int after = 0; after < 2; after++) {
            rs.pad_rows = !after;
            double t0 = now_s(), c0 = cpu_s();
            if (al_papa_rank(model, &tr, Cs, &rs, &fp, theta[after], &loss[after], &err) != AL_OK) {
                fprintf(stderr, "bench_sweep_parts: ranking: %s\n", err.message);
                return 1;
            }
            const double t = now_s() - t0, ct = cpu_s() - c0;
            if (t < best_rank[after]) best_rank[after] = t;
            if (ct < cpu_rank[after]) cpu_rank[after] = ct;
            al_forward_params ff = fp;
            ff.skip_pads = 1; /* as the sweep's features */
            ff.pad_rows = !after;
            t0 = now_s(), c0 = cpu_s();
            if (al_papa_features(model, &tr, NULL, 0, 16, 0, &ff, &feats[after], &err) != AL_OK) {
                fprintf(stderr, "bench_sweep_parts: features: %s\n", err.message);
                return 1;
            }
            const double tf = now_s() - t0, cf = cpu_s() - c0;
            if (tf < best_feat[after]) best_feat[after] = tf;
            if (cf < cpu_feat[after]) cpu_feat[after] = cf;
        }
        same_rank &= memcmp(theta[0], theta[1], sizeof(float) * NH) == 0 && loss[0] == loss[1];
        same_feat &= feats[0]->n_rows == feats[1]->n_rows &&
                     memcmp(feats[0]->feats, feats[1]->feats,
                            sizeof(float) * (size_t)feats[0]->n_rows * feats[0]->S * feats[0]->D) == 0;
        al_probe_data_free(feats[0]), al_probe_data_free(feats[1]);
    }
    printf("  ranking (%d epoch%s, batches of %d, %d shards): over the pads %.2f s, real rows %.2f s: %.2fx; logits and "
           "loss %s\n",
           rs.epochs, rs.epochs == 1 ? "" : "s", rs.batch_size, rs.shards, best_rank[0], best_rank[1],
           best_rank[0] / best_rank[1], same_rank ? "the same bits" : "DIFFER");
    printf("  features (every head standard, packed batches of 16): over the packing pads %.2f s, real rows %.2f s: "
           "%.2fx; features %s\n",
           best_feat[0], best_feat[1], best_feat[0] / best_feat[1], same_feat ? "the same bits" : "DIFFER");
    printf("  CPU seconds (every thread's): ranking %.2f against %.2f: %.2fx; features %.2f against %.2f: %.2fx\n",
           cpu_rank[0], cpu_rank[1], cpu_rank[0] / cpu_rank[1], cpu_feat[0], cpu_feat[1], cpu_feat[0] / cpu_feat[1]);
    printf("  load %.2f after\n", load1());
    free(Cs), free(theta[0]), free(theta[1]);
    al_papa_inputs_free(&tr);
    al_model_free(model);
    al_tokenizer_free(tok);
    al_task_free(task);
    return same_rank && same_feat ? 0 : 1;
}

int main(int argc, char **argv) {
    int threads = 2, examples = 48, rounds = 2, padding = 0, rank_examples = 32, rank_epochs = 1;
    const char *tasks_dir = "build/data/tasks", *tok_dir = "models/attnlab-small-bert", *shape = "bert-base";
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(argv[i], "--padding")) padding = 1;
        else if (!strcmp(argv[i], "--threads")) threads = atoi(v), i++;
        else if (!strcmp(argv[i], "--examples")) examples = atoi(v), i++;
        else if (!strcmp(argv[i], "--rounds")) rounds = atoi(v), i++;
        else if (!strcmp(argv[i], "--rank-examples")) rank_examples = atoi(v), i++;
        else if (!strcmp(argv[i], "--rank-epochs")) rank_epochs = atoi(v), i++;
        else if (!strcmp(argv[i], "--shape")) shape = v, i++;
        else if (!strcmp(argv[i], "--tasks")) tasks_dir = v, i++;
        else if (!strcmp(argv[i], "--tokenizer")) tok_dir = v, i++;
    }
    al_error err;
    al_threadpool *pool = NULL;
    if (threads < 1 || examples < 16 || rounds < 1 || rank_examples < 16 || rank_epochs < 1 ||
        (strcmp(shape, "bert-base") && strcmp(shape, "modernbert-base")) ||
        al_threadpool_new(threads, &pool, &err) != AL_OK) {
        fprintf(stderr, "usage: bench_sweep_parts [--threads N] [--examples N >= 16] [--rounds N] [--padding] "
                        "[--rank-examples N >= 16] [--rank-epochs N] [--shape bert-base|modernbert-base] [--tasks DIR] "
                        "[--tokenizer DIR]\n");
        return 2;
    }
    if (padding) {
        const int st = bench_padding(pool, rounds, rank_examples, rank_epochs, shape, tasks_dir, tok_dir);
        al_threadpool_free(pool);
        return st;
    }
    /* features: examples of 8..16 labelled words, as POS sentences at L 64 */
    al_probe_data *data = NULL;
    if (al_probe_data_new(AL_PROBE_TOKEN, S, D, L, examples, (int64_t)examples * L, 0, &data, &err) != AL_OK) {
        fprintf(stderr, "bench_sweep_parts: %s\n", err.message);
        return 1;
    }
    float *hidden = malloc(sizeof(float) * S * L * D);
    const float *states[S];
    int32_t mask[L], labels[L];
    al_rng rng;
    al_rng_seed(&rng, 1);
    for (int x = 0; x < examples; x++) {
        const int n = 8 + (int)al_rng_below(&rng, 9);
        for (size_t i = 0; i < (size_t)S * L * D; i++) hidden[i] = al_rng_normal(&rng);
        for (int k = 0; k < S; k++) states[k] = hidden + (size_t)k * L * D;
        for (int t = 0; t < L; t++) mask[t] = t < n, labels[t] = t < n ? (int)al_rng_below(&rng, C) : AL_IGNORE_INDEX;
        al_probe_dense in = {S, 1, L, D, states, mask, labels};
        if (al_probe_data_add(data, &in, NULL, 1, &err) != AL_OK) {
            fprintf(stderr, "bench_sweep_parts: %s\n", err.message);
            return 1;
        }
    }
    free(hidden);
    job j = {data, al_probe_default_config(), NULL, {0}};
    j.pc.kind = AL_PROBE_TOKEN, j.pc.n_states = S, j.pc.hidden = D, j.pc.max_len = L, j.pc.n_labels = C;
    j.pc.dropout = 0.0f, j.pc.max_batch = 64;
    al_probe *probe = NULL;
    if (al_probe_new(&j.pc, 1, &probe, &err) != AL_OK) return 1;
    const size_t P = al_probe_n_params(probe);
    al_probe_free(probe);
    float *before[SEEDS];
    for (int s = 0; s < SEEDS; s++) j.params[s] = malloc(P * sizeof(float)), before[s] = malloc(P * sizeof(float));

    printf("probe stage at bert-base scale: token probe %d x %d features, %d labels, %zu parameters; %d examples "
           "(%d rows), 1 epoch of batches of 16, %d seeds, %d threads\n",
           S, D, C, P, examples, al_probe_data_n_rows(data), SEEDS, al_threadpool_size(pool));
    double best_side = 1e30, best_mixed = 1e30;
    int same = 1;
    for (int r = 0; r < rounds; r++) {
        double t0 = now_s();
        j.pool = NULL;
        al_threadpool_for(pool, SEEDS, fit_seed, &j); /* before: every seed a task */
        const double side = now_s() - t0;
        for (int s = 0; s < SEEDS; s++) memcpy(before[s], j.params[s], P * sizeof(float));
        t0 = now_s();
        const int together = al_papa_seeds_side_by_side(SEEDS, al_threadpool_size(pool));
        if (together) al_threadpool_for(pool, together, fit_seed, &j); /* after: run_seeds' rule */
        j.pool = pool;
        for (int s = together; s < SEEDS; s++) fit_seed(&j, s, SEEDS, 0);
        const double mixed = now_s() - t0;
        for (int s = 0; s < SEEDS; s++) same &= memcmp(before[s], j.params[s], P * sizeof(float)) == 0;
        if (side < best_side) best_side = side;
        if (mixed < best_mixed) best_mixed = mixed;
    }
    printf("  seeds side by side %.2f s, last round's seed across the pool %.2f s: %.2fx; parameters %s\n", best_side,
           best_mixed, best_side / best_mixed, same ? "the same bits" : "DIFFER");

    /* AdamW over the probe's parameters */
    float *p0 = malloc(P * sizeof(float)), *p1 = malloc(P * sizeof(float)), *g = malloc(P * sizeof(float));
    float *m = calloc(P, sizeof(float)), *v = calloc(P, sizeof(float));
    for (size_t i = 0; i < P; i++) p0[i] = p1[i] = 0.02f * al_rng_normal(&rng), g[i] = 1e-3f * al_rng_normal(&rng);
    al_adamw_config ac = al_adamw_default_config();
    ac.lr = 5e-4f, ac.schedule = AL_LR_CONSTANT, ac.max_grad_norm = 0.0f;
    al_adamw *opt = NULL;
    if (al_adamw_new(P, &ac, NULL, &opt, &err) != AL_OK) return 1;
    double best_scalar = 1e30, best_lanes = 1e30;
    const int steps = 3 * rounds;
    for (int step = 1; step <= steps; step++) {
        double t0 = now_s();
        adamw_scalar(p0, g, m, v, P, step, ac.lr);
        const double ts = now_s() - t0;
        t0 = now_s();
        al_adamw_update(opt, p1, g, ac.lr);
        const double tl = now_s() - t0;
        if (ts < best_scalar) best_scalar = ts;
        if (tl < best_lanes) best_lanes = tl;
    }
    printf("  AdamW update of %zu parameters: one at a time %.1f ms, 4 at a time %.1f ms: %.2fx; parameters %s\n", P,
           1e3 * best_scalar, 1e3 * best_lanes, best_scalar / best_lanes,
           memcmp(p0, p1, P * sizeof(float)) == 0 ? "the same bits" : "DIFFER");
    al_adamw_free(opt);
    free(p0), free(p1), free(g), free(m), free(v);
    for (int s = 0; s < SEEDS; s++) free(j.params[s]), free(before[s]);
    al_probe_data_free(data);
    al_threadpool_free(pool);
    return same ? 0 : 1;
}
