/* bench_sweep_parts.c: parts of a sweep at bert-base scale, before and after docs/speed.md's changes, side by
 * side in one run (a shared machine's load moves both alike):
 *  - one configuration's 3 seeds of a token probe over 13 x 768 features (17 labels): every seed a task of
 *    the pool ("side by side", as before) against the last round's seed with its products split over the
 *    pool (src/methods/papa/papa_sweep.c, run_seeds); the parameters must be the same bits;
 *  - a configuration's 3 seeds as the sweep runs them after its first configuration (--epochs, 4 as the
 *    quick preset): every probe drawn in fresh memory of 4 KiB pages (before), drawn in huge pages that
 *    al_free_large keeps for the next probe (src/core/memory.c), and copied from the seeds' kept starts
 *    as well (src/methods/papa/papa_sweep.c: after); the parameters and predictions must be the same bits;
 *  - the AdamW update of the probe's 7.7 million parameters: one at a time (the rule as it was written),
 *    4 at a time (as adamw.c ran it before), then src/kernels/adam.c's lanes (src/train/adamw.c); the same
 *    bits;
 *  - padding (--padding): the lambda ranking (the quick preset's settings) and one configuration's features on
 *    the built-in POS task at L 64 over a bert-base-shaped model with random weights, the linear layers over
 *    every position (rank.pad_rows, al_forward_params.pad_rows: as before) against the real rows only
 *    (src/model/real_rows.h); the learned logits and the features must be the same bits. --shape modernbert-base
 *    runs it on ModernBERT-base's shape instead (22 layers, GeGLU 1152, a global layer every 3, window 128).
 *
 *   bench_sweep_parts [--threads 2] [--examples 48] [--rounds 2] [--epochs 4] [--padding] [--rank-examples 32]
 *                     [--rank-epochs 1] [--shape bert-base|modernbert-base] [--tasks build/data/tasks]
 *                     [--tokenizer models/attnlab-small-bert] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "core/clock.h"
#include "core/rng.h"
#include "core/threadpool.h"
#include "core/memory.h"
#include "kernels/kernels.h"
#include "kernels/simd.h"
#include "methods/tasks/task.h"
#include "methods/papa/papa_sweep.h"
#include "methods/probes/probe.h"
#include "methods/probes/probe_data_internal.h"
#include "train/adamw.h"
#include "bench_args.h"

enum { S = 13, D = 768, L = 64, C = 17, SEEDS = 3 };

typedef struct job {
    const al_probe_data *data;
    al_probe_config pc;
    al_threadpool *pool; /* the probes' products (NULL: none) */
    int epochs;
    const float *starts[SEEDS]; /* NULL: draw the probe (al_probe_new), else copy it (al_probe_new_from) */
    float *params[SEEDS];
    int32_t *preds[SEEDS];      /* NULL: no evaluation */
} job;

static void fit_seed(void *arg, int si, int n, int thread) {
    (void)n, (void)thread;
    job *j = arg;
    al_probe *p = NULL;
    al_error err;
    if ((j->starts[si] ? al_probe_new_from(&j->pc, j->starts[si], &p, &err)
                       : al_probe_new(&j->pc, (uint64_t)si + 1, &p, &err)) != AL_OK)
        return;
    al_probe_set_pool(p, j->pool);
    al_probe_fit_options o = al_probe_fit_default_options();
    o.epochs = j->epochs;
    o.batch_size = 16;
    o.lr = 5e-4f;
    o.seed = (uint64_t)si + 1;
    if (al_probe_fit(p, j->data, &o, NULL, &err) == AL_OK)
        memcpy(j->params[si], al_probe_params(p), al_probe_n_params(p) * sizeof(float));
    if (j->preds[si]) al_probe_evaluate(p, j->data, j->preds[si], &err);
    al_probe_free(p);
}

/* A configuration's seeds as run_seeds (src/methods/papa/papa_sweep.c) trains them: side by side, then the last
 * round's seeds across the pool. */
static void run_seeds(job *j, al_threadpool *pool) {
    const int together = al_papa_seeds_side_by_side(SEEDS, al_threadpool_size(pool));
    j->pool = NULL;
    if (together) al_threadpool_for(pool, together, fit_seed, j);
    j->pool = pool;
    for (int s = together; s < SEEDS; s++) fit_seed(j, s, SEEDS, 0);
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

/* The rule 4 parameters at a time, as adamw.c ran it before src/kernels/adam.c (8 lanes on AVX2). */
static void adamw_4(float *params, const float *grads, float *m, float *v, size_t n, int step, float lr) {
    const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
    const double bc1 = 1.0 - pow((double)b1, step), bc2 = 1.0 - pow((double)b2, step);
    const float step_size = (float)(lr / bc1), bc2_sqrt = (float)sqrt(bc2), decay_factor = 1.0f;
    const v4f vb1 = v4f_splat(b1), vb2 = v4f_splat(b2), vc1 = v4f_splat(1.0f - b1), vc2 = v4f_splat(1.0f - b2);
    const v4f vbc2 = v4f_splat(bc2_sqrt), veps = v4f_splat(eps), vstep = v4f_splat(step_size);
    const float f[4] = {decay_factor, decay_factor, decay_factor, decay_factor};
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const v4f g = v4f_load(grads + i);
        const v4f p = v4f_mul(v4f_load(params + i), v4f_load(f));
        const v4f mi = v4f_add(v4f_mul(v4f_load(m + i), vb1), v4f_mul(g, vc1));
        const v4f vv = v4f_add(v4f_mul(v4f_load(v + i), vb2), v4f_mul(v4f_mul(g, g), vc2));
        const v4f denom = v4f_add(v4f_div(v4f_sqrt(vv), vbc2), veps);
        v4f_store(m + i, mi);
        v4f_store(v + i, vv);
        v4f_store(params + i, v4f_sub(p, v4f_mul(vstep, v4f_div(mi, denom))));
    }
    adamw_scalar(params + i, grads + i, m + i, v + i, n - i, step, lr); /* the tail, one at a time */
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
            double t0 = al_now_seconds(), c0 = al_cpu_seconds();
            if (al_papa_rank(model, &tr, Cs, &rs, &fp, theta[after], &loss[after], &err) != AL_OK) {
                fprintf(stderr, "bench_sweep_parts: ranking: %s\n", err.message);
                return 1;
            }
            const double t = al_now_seconds() - t0, ct = al_cpu_seconds() - c0;
            if (t < best_rank[after]) best_rank[after] = t;
            if (ct < cpu_rank[after]) cpu_rank[after] = ct;
            al_forward_params ff = fp;
            ff.skip_pads = 1; /* as the sweep's features */
            ff.pad_rows = !after;
            t0 = al_now_seconds(), c0 = al_cpu_seconds();
            if (al_papa_features(model, &tr, NULL, 0, 16, 0, &ff, &feats[after], &err) != AL_OK) {
                fprintf(stderr, "bench_sweep_parts: features: %s\n", err.message);
                return 1;
            }
            const double tf = al_now_seconds() - t0, cf = al_cpu_seconds() - c0;
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
    int threads = 2, examples = 48, rounds = 2, padding = 0, rank_examples = 32, rank_epochs = 1, epochs = 4;
    const char *tasks_dir = "build/data/tasks", *tok_dir = "models/attnlab-small-bert", *shape = "bert-base";
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(argv[i], "--padding")) padding = 1;
        else if (!strcmp(argv[i], "--threads")) threads = bench_int("bench_sweep_parts", "--threads", v, 1, al_threads_max()), i++;
        else if (!strcmp(argv[i], "--examples")) examples = bench_int("bench_sweep_parts", "--examples", v, 1, 1 << 24), i++;
        else if (!strcmp(argv[i], "--rounds")) rounds = bench_int("bench_sweep_parts", "--rounds", v, 1, BENCH_ROUNDS_MAX), i++;
        else if (!strcmp(argv[i], "--epochs")) epochs = bench_int("bench_sweep_parts", "--epochs", v, 1, BENCH_ROUNDS_MAX), i++;
        else if (!strcmp(argv[i], "--rank-examples")) rank_examples = bench_int("bench_sweep_parts", "--rank-examples", v, 1, 1 << 24), i++;
        else if (!strcmp(argv[i], "--rank-epochs")) rank_epochs = bench_int("bench_sweep_parts", "--rank-epochs", v, 1, BENCH_ROUNDS_MAX), i++;
        else if (!strcmp(argv[i], "--shape")) shape = v, i++;
        else if (!strcmp(argv[i], "--tasks")) tasks_dir = v, i++;
        else if (!strcmp(argv[i], "--tokenizer")) tok_dir = v, i++;
    }
    al_error err;
    al_threadpool *pool = NULL;
    if (examples < 16 || rank_examples < 16 ||
        (strcmp(shape, "bert-base") && strcmp(shape, "modernbert-base")) ||
        al_threadpool_new(threads, &pool, &err) != AL_OK) {
        fprintf(stderr, "usage: bench_sweep_parts [--threads N] [--examples N >= 16] [--rounds N] [--epochs N] [--padding] "
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
    job j = {data, al_probe_default_config(), NULL, 1, {0}, {0}, {0}};
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
        double t0 = al_now_seconds();
        j.pool = NULL;
        al_threadpool_for(pool, SEEDS, fit_seed, &j); /* before: every seed a task */
        const double side = al_now_seconds() - t0;
        for (int s = 0; s < SEEDS; s++) memcpy(before[s], j.params[s], P * sizeof(float));
        t0 = al_now_seconds();
        const int together = al_papa_seeds_side_by_side(SEEDS, al_threadpool_size(pool));
        if (together) al_threadpool_for(pool, together, fit_seed, &j); /* after: run_seeds' rule */
        j.pool = pool;
        for (int s = together; s < SEEDS; s++) fit_seed(&j, s, SEEDS, 0);
        const double mixed = al_now_seconds() - t0;
        for (int s = 0; s < SEEDS; s++) same &= memcmp(before[s], j.params[s], P * sizeof(float)) == 0;
        if (side < best_side) best_side = side;
        if (mixed < best_mixed) best_mixed = mixed;
    }
    printf("  seeds side by side %.2f s, last round's seed across the pool %.2f s: %.2fx; parameters %s\n", best_side,
           best_mixed, best_side / best_mixed, same ? "the same bits" : "DIFFER");

    /* A configuration's seeds after the sweep's first (quick preset: 4 epochs): before, every probe drawn
     * (al_probe_new) in fresh memory of 4 KiB pages; after, copied from the seed's kept start
     * (al_probe_new_from, src/methods/papa/papa_sweep.c) in huge pages kept between probes (al_alloc_large,
     * al_free_large). Every variant with the optimiser of this build. */
    {
        job k = j;
        k.epochs = epochs;
        float *kept[SEEDS];
        int32_t *preds[2][SEEDS];
        const int n_rows = al_probe_data_n_rows(data);
        for (int s = 0; s < SEEDS; s++) {
            al_probe *q = NULL;
            if (al_probe_new(&j.pc, (uint64_t)s + 1, &q, &err) != AL_OK) return 1;
            kept[s] = malloc(P * sizeof(float));
            memcpy(kept[s], al_probe_params(q), P * sizeof(float));
            al_probe_free(q);
            preds[0][s] = malloc(sizeof(int32_t) * (size_t)n_rows);
            preds[1][s] = malloc(sizeof(int32_t) * (size_t)n_rows);
        }
        /* variants: probes drawn in 4 KiB pages (before), drawn in huge pages, copied in huge pages (after) */
        double best[3] = {1e30, 1e30, 1e30};
        int same_fit = 1;
        for (int r = 0; r < rounds; r++)
            for (int x = 0; x < 3; x++) {
                al_memory_set_huge_pages(x > 0);
                for (int s = 0; s < SEEDS; s++) k.starts[s] = x == 2 ? kept[s] : NULL, k.preds[s] = preds[x > 0][s];
                const double t0 = al_now_seconds();
                run_seeds(&k, pool);
                const double t = al_now_seconds() - t0;
                if (t < best[x]) best[x] = t;
                if (x == 0)
                    for (int s = 0; s < SEEDS; s++) memcpy(before[s], k.params[s], P * sizeof(float));
                else
                    for (int s = 0; s < SEEDS; s++)
                        same_fit &= memcmp(before[s], k.params[s], P * sizeof(float)) == 0 &&
                                    memcmp(preds[0][s], preds[1][s], sizeof(int32_t) * (size_t)n_rows) == 0;
            }
        const double steps = (double)epochs * ((examples + 15) / 16);
        printf("  a configuration's %d seeds, %d epochs (%.0f steps a seed) and the evaluation: probes drawn in 4 KiB pages "
               "(before) %.2f s; drawn in huge pages kept between probes %.2f s (%.2fx); copied from the kept starts too (after) "
               "%.2f s: %.2fx; parameters and predictions %s\n",
               SEEDS, epochs, steps, best[0], best[1], best[0] / best[1], best[2], best[0] / best[2],
               same_fit ? "the same bits" : "DIFFER");
        same &= same_fit;
        for (int s = 0; s < SEEDS; s++) free(kept[s]), free(preds[0][s]), free(preds[1][s]);
    }

    /* AdamW over the probe's parameters */
    float *p0 = malloc(P * sizeof(float)), *p1 = malloc(P * sizeof(float)), *g = malloc(P * sizeof(float));
    float *p3 = malloc(P * sizeof(float));
    float *m = calloc(P, sizeof(float)), *v = calloc(P, sizeof(float));
    float *m4 = calloc(P, sizeof(float)), *v4 = calloc(P, sizeof(float));
    for (size_t i = 0; i < P; i++) p0[i] = p1[i] = p3[i] = 0.02f * al_rng_normal(&rng), g[i] = 1e-3f * al_rng_normal(&rng);
    al_adamw_config ac = al_adamw_default_config();
    ac.lr = 5e-4f, ac.schedule = AL_LR_CONSTANT, ac.max_grad_norm = 0.0f;
    al_adamw *opt = NULL;
    if (al_adamw_new(P, &ac, NULL, &opt, &err) != AL_OK) return 1;
    double best_scalar = 1e30, best_4 = 1e30, best_lanes = 1e30;
    const int steps = 3 * rounds;
    for (int step = 1; step <= steps; step++) {
        double t0 = al_now_seconds();
        adamw_scalar(p0, g, m, v, P, step, ac.lr);
        const double ts = al_now_seconds() - t0;
        t0 = al_now_seconds();
        adamw_4(p3, g, m4, v4, P, step, ac.lr);
        const double t4 = al_now_seconds() - t0;
        t0 = al_now_seconds();
        al_adamw_update(opt, p1, g, ac.lr);
        const double tl = al_now_seconds() - t0;
        if (ts < best_scalar) best_scalar = ts;
        if (t4 < best_4) best_4 = t4;
        if (tl < best_lanes) best_lanes = tl;
    }
    const int same_adam = memcmp(p0, p1, P * sizeof(float)) == 0 && memcmp(p0, p3, P * sizeof(float)) == 0;
    printf("  AdamW update of %zu parameters: one at a time %.1f ms, 4 at a time (before) %.1f ms, src/kernels/adam.c "
           "on %s %.1f ms: %.2fx; parameters %s\n",
           P, 1e3 * best_scalar, 1e3 * best_4, al_kernels_path(), 1e3 * best_lanes, best_4 / best_lanes,
           same_adam ? "the same bits" : "DIFFER");
    same &= same_adam;
    free(p3), free(m4), free(v4);
    al_adamw_free(opt);
    free(p0), free(p1), free(g), free(m), free(v);
    for (int s = 0; s < SEEDS; s++) free(j.params[s]), free(before[s]);
    al_probe_data_free(data);
    al_threadpool_free(pool);
    return same ? 0 : 1;
}
