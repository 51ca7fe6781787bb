/* bench_threads.c: 1 thread against N threads, side by side in one run (docs/threads.md). The two pools
 * take turns round by round, so a busy moment of the machine hits both; printed per workload: the best
 * time of each, the ratio (1 thread / N threads: above 1, N threads are faster) and whether the outputs
 * are identical bit for bit, which they must be.
 *
 *   bench_threads [--threads N] [--rounds R] [--papa MODEL_DIR]
 *
 * Workloads: the pool's own cost (an empty parallel-for back to back, when the workers spin, and after an
 * idle gap, when they sleep and must be woken: docs/threads.md, "The pool's costs"); forward passes of random MiniLM-L6 (6 x 384) and bert-base (12 x 768) models at 32, 128 and
 * 512 tokens (one sequence); with --papa, a small PAPA sweep (task pos from build/data/tasks: 300
 * training and 150 validation examples, fractions 1, 0.5, 0, lambda order, 3 seeds). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnlab.h"
#include "core/clock.h"
#include "core/threadpool.h"
#include "methods/papa/papa_sweep.h"
#include "methods/tasks/task.h"
#include "bench_args.h"

static double load_average(void) {
    double l = NAN;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = NAN;
        fclose(f);
    }
    return l;
}

static void report(const char *what, int n, double best1, double bestN, int same) {
    printf("%-28s 1 thread %9.2f ms   %d threads %9.2f ms   ratio %.2f   outputs %s   load %.1f\n", what,
           best1 * 1e3, n, bestN * 1e3, best1 / bestN, same ? "identical" : "DIFFER", load_average());
    fflush(stdout);
}

static void empty_task(void *arg, int t, int n_tasks, int thread) {
    (void)arg, (void)t, (void)n_tasks, (void)thread;
}

/* Microseconds per empty parallel-for of 4 tasks per thread: back to back (calls = 2000) or each after
 * an idle gap of gap_ms (the workers have gone to sleep). */
static double pool_us(al_threadpool *pool, int calls, int gap_ms) {
    const int n = 4 * al_threadpool_size(pool);
    double total = 0.0;
    for (int i = 0; i < calls; i++) {
        if (gap_ms) nanosleep(&(struct timespec){0, gap_ms * 1000000L}, NULL);
        const double t0 = al_now_seconds();
        al_threadpool_for(pool, n, empty_task, NULL);
        total += al_now_seconds() - t0;
    }
    return total / calls * 1e6;
}

static void bench_pool(al_threadpool *pool) {
    const int n = al_threadpool_size(pool);
    pool_us(pool, 100, 0); /* warm-up */
    const double hot = pool_us(pool, 2000, 0), cold = pool_us(pool, 40, 5);
    printf("%-28s %d threads: %.2f us back to back, %.2f us after 5 ms idle   load %.1f\n", "pool: empty parallel-for",
           n, hot, cold, load_average());
    fflush(stdout);
}

static int forward(al_model *m, const al_batch *b, al_threadpool *pool, float *hidden, double *seconds) {
    al_forward_params p = al_forward_default_params();
    p.pool = pool;
    al_forward_outputs out = {0};
    out.hidden_states = hidden; /* [NL+1, 1, L, D] */
    al_error err;
    const double t0 = al_now_seconds();
    const int ok = al_forward(m, b, &p, &out, &err) == AL_OK;
    *seconds = al_now_seconds() - t0;
    if (!ok) fprintf(stderr, "bench_threads: %s\n", err.message);
    return ok;
}

static void bench_forward(const char *name, int layers, int hidden, int heads, al_threadpool *pools[2], int rounds) {
    al_config cfg = al_config_bert(30522, hidden, layers, heads, 4 * hidden);
    al_model *m = NULL;
    al_error err;
    if (al_model_new_random(&cfg, 42, 0, &m, &err) != AL_OK) {
        fprintf(stderr, "bench_threads: %s\n", err.message);
        return;
    }
    static const int lengths[] = {32, 128, 512};
    for (int li = 0; li < 3; li++) {
        const int L = lengths[li];
        int32_t *ids = malloc(sizeof(int32_t) * (size_t)L);
        const size_t n_h = (size_t)(layers + 1) * L * hidden;
        float *h[2] = {malloc(sizeof(float) * n_h), malloc(sizeof(float) * n_h)};
        if (!ids || !h[0] || !h[1]) break;
        for (int t = 0; t < L; t++) ids[t] = 1000 + (t * 37) % 20000;
        al_batch b = {.n_seqs = 1, .seq_len = L, .input_ids = ids};
        double best[2] = {INFINITY, INFINITY}, s;
        int ok = 1;
        for (int r = 0; r <= rounds && ok; r++) /* round 0 warms up */
            for (int k = 0; k < 2 && ok; k++) {
                ok = forward(m, &b, pools[k], h[k], &s);
                if (r > 0 && s < best[k]) best[k] = s;
            }
        char what[64];
        snprintf(what, sizeof what, "forward %s @ %d", name, L);
        if (ok) report(what, al_threadpool_size(pools[1]), best[0], best[1],
                       memcmp(h[0], h[1], sizeof(float) * n_h) == 0);
        free(ids), free(h[0]), free(h[1]);
    }
    al_model_free(m);
}

static void bench_papa(const char *model_dir, al_threadpool *pools[2], int rounds) {
    al_model *m = NULL;
    al_task *task = NULL;
    al_error err;
    if (al_model_load_dir(model_dir, &m, &err) != AL_OK ||
        al_task_load_builtin("build/data/tasks", "pos", &task, &err) != AL_OK) {
        fprintf(stderr, "bench_threads: %s\n", err.message);
        al_model_free(m);
        return;
    }
    double best[2] = {INFINITY, INFINITY};
    int same = 1;
    al_papa_sweep_result first = {0};
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < 2; k++) {
            al_papa_sweep_request req = al_papa_sweep_default_request();
            req.max_train = 300;
            req.max_validation = 150;
            req.n_fractions = 3;
            req.fractions[0] = 1.0, req.fractions[1] = 0.5, req.fractions[2] = 0.0;
            req.rank.max_examples = 300;
            req.pool = pools[k];
            al_papa_sweep_result res;
            const double t0 = al_now_seconds();
            if (al_papa_sweep_run(m, task, &req, &res, &err) != AL_OK) {
                fprintf(stderr, "bench_threads: papa: %s\n", err.message);
                goto done;
            }
            const double s = al_now_seconds() - t0;
            if (s < best[k]) best[k] = s;
            if (r == 0 && k == 0) {
                first = res;
                continue;
            }
            same &= res.n_runs == first.n_runs;
            for (int i = 0; same && i < res.n_runs; i++) same &= res.runs[i].score == first.runs[i].score;
            al_papa_sweep_result_free(&res);
        }
    report("papa sweep (pos, 300/150)", al_threadpool_size(pools[1]), best[0], best[1], same);
done:
    al_papa_sweep_result_free(&first);
    al_task_free(task);
    al_model_free(m);
}

int main(int argc, char **argv) {
    int threads = 2, rounds = 5;
    const char *papa = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--threads") == 0) threads = bench_int("bench_threads", "--threads", bench_next(argc, argv, &i), 1, al_threads_max());
        else if (strcmp(argv[i], "--rounds") == 0) rounds = bench_int("bench_threads", "--rounds", bench_next(argc, argv, &i), 1, BENCH_ROUNDS_MAX);
        else if (strcmp(argv[i], "--papa") == 0 && i + 1 < argc) papa = argv[++i];
        else {
            fprintf(stderr, "usage: bench_threads [--threads N] [--rounds R] [--papa MODEL_DIR]\n");
            return 2;
        }
    }
    al_threadpool *pools[2] = {NULL, NULL};
    al_error err;
    if (al_threadpool_new(1, &pools[0], &err) != AL_OK || al_threadpool_new(threads, &pools[1], &err) != AL_OK) {
        fprintf(stderr, "bench_threads: %s\n", err.message);
        return 2;
    }
    bench_pool(pools[1]);
    bench_forward("MiniLM-L6", 6, 384, 12, pools, rounds);
    bench_forward("bert-base", 12, 768, 12, pools, rounds);
    if (papa) bench_papa(papa, pools, rounds < 2 ? rounds : 2);
    al_threadpool_free(pools[0]);
    al_threadpool_free(pools[1]);
    return 0;
}
