/* bench_sweep_parts.c: the sweep's probe stage at bert-base scale, before and after docs/speed.md's changes,
 * side by side in one run (a shared machine's load moves both alike):
 *  - one configuration's 3 seeds of a token probe over 13 x 768 features (17 labels): every seed a task of
 *    the pool ("side by side", as before) against the last round's seed with its products split over the
 *    pool (src/methods/papa_sweep.c, run_seeds); the parameters must be the same bits;
 *  - the AdamW update of the probe's 7.7 million parameters: one at a time (the rule as it was written)
 *    against 4 at a time (src/train/adamw.c); the same bits.
 *
 *   bench_sweep_parts [--threads 2] [--examples 48] [--rounds 2] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnlab.h"
#include "core/rng.h"
#include "core/threadpool.h"
#include "methods/papa_sweep.h"
#include "methods/probe.h"
#include "train/adamw.h"

enum { S = 13, D = 768, L = 64, C = 17, SEEDS = 3 };

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

int main(int argc, char **argv) {
    int threads = 2, examples = 48, rounds = 2;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--threads")) threads = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--examples")) examples = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
    }
    al_error err;
    al_threadpool *pool = NULL;
    if (threads < 1 || examples < 16 || rounds < 1 || al_threadpool_new(threads, &pool, &err) != AL_OK) {
        fprintf(stderr, "usage: bench_sweep_parts [--threads N] [--examples N >= 16] [--rounds N]\n");
        return 2;
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
