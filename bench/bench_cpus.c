/* bench_cpus.c: is every CPU of this machine as fast as the others? A thread pool's 2 threads can only be
 * twice as fast as one if the second core is as fast as the first, and on a VM it need not be
 * (docs/threads.md, "The two vCPUs are not equal"). Linux only (it pins threads with sched_setaffinity).
 *
 *   bench_cpus [--rounds R]
 *
 * 1. One product of bert-base's shape (128 x 768 x 768, al_gemm_nt) on one thread pinned to each online CPU
 *    in turn, round by round so a busy moment hits every CPU: best GFLOP/s per CPU.
 * 2. The same, while a second thread pinned to another CPU runs the same product on its own copy of the data
 *    without a pause: what one core keeps of its speed when its neighbour works too (no pool, no sharing).
 * 3. The same product split over a 2-thread pool as the forward pass splits it (al_gemm_nt_pool), with the
 *    calling thread pinned to each CPU in turn: the best time, and its ratio to the best one-thread time
 *    on the fastest CPU and on the slowest, which bound the ratio bench_threads can print. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_args.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/threadpool.h"
#include "kernels/kernels.h"

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>

#define MAX_CPUS 64

static int pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
}

enum { M = 128, N = 768, K = 768 };

static void fill(float *A, float *B) {
    for (int i = 0; i < M * K; i++) A[i] = (float)((unsigned)i * 7919u % 1000u) / 1000.f - .5f;
    for (int i = 0; i < N * K; i++) B[i] = (float)((unsigned)i * 104729u % 1000u) / 1000.f - .5f;
}

/* The neighbour: the same product on its own buffers, pinned to its CPU, until stop. */
typedef struct neighbour {
    int cpu;
    atomic_int stop;
} neighbour;

static void *neighbour_main(void *p) {
    neighbour *nb = p;
    if (pin(nb->cpu)) return NULL;
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * N * K), *C = malloc(sizeof(float) * M * N);
    if (A && B && C) {
        fill(A, B);
        while (!atomic_load(&nb->stop)) al_gemm_nt(M, N, K, 1.f, A, K, B, K, C, N, 0);
    }
    free(A);
    free(B);
    free(C);
    return NULL;
}

int main(int argc, char **argv) {
    int rounds = 30;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds")) rounds = bench_int("bench_cpus", "--rounds", bench_next(argc, argv, &i), 1, BENCH_ROUNDS_MAX);
        else {
            fprintf(stderr, "usage: bench_cpus [--rounds R]\n");
            return 2;
        }
    }
    cpu_set_t allowed;
    if (sched_getaffinity(0, sizeof allowed, &allowed)) return perror("sched_getaffinity"), 1;
    int cpus[MAX_CPUS], n_cpus = 0;
    for (int c = 0; c < MAX_CPUS; c++)
        if (CPU_ISSET(c, &allowed)) cpus[n_cpus++] = c;
    float *A = malloc(sizeof(float) * M * K), *B = malloc(sizeof(float) * N * K), *C = malloc(sizeof(float) * M * N);
    if (!A || !B || !C) return fprintf(stderr, "out of memory\n"), 1;
    fill(A, B);
    al_threadpool *pool = NULL;
    al_error err;
    /* the pool's worker starts before any pinning, so it may run on any CPU */
    if (al_threadpool_new(2, &pool, &err)) return fprintf(stderr, "%s\n", err.message), 1;
    double one[MAX_CPUS], two[MAX_CPUS];
    for (int c = 0; c < n_cpus; c++) one[c] = two[c] = 1e9;
    for (int r = 0; r < rounds; r++) {
        for (int c = 0; c < n_cpus; c++) {
            if (pin(cpus[c])) return perror("sched_setaffinity"), 1;
            for (int rep = 0; rep < 5; rep++) {
                double t0 = al_now_seconds();
                al_gemm_nt(M, N, K, 1.f, A, K, B, K, C, N, 0);
                double t1 = al_now_seconds();
                al_gemm_nt_pool(pool, M, N, K, 1.f, A, K, B, K, C, N, 0);
                double t2 = al_now_seconds();
                if (t1 - t0 < one[c]) one[c] = t1 - t0;
                if (t2 - t1 < two[c]) two[c] = t2 - t1;
            }
        }
    }
    /* 2: each CPU with a neighbour at work on the next CPU */
    double busy[MAX_CPUS];
    for (int c = 0; c < n_cpus; c++) busy[c] = 1e9;
    for (int c = 0; n_cpus > 1 && c < n_cpus; c++) {
        neighbour nb = { .cpu = cpus[(c + 1) % n_cpus] };
        atomic_init(&nb.stop, 0);
        pthread_t th;
        if (pthread_create(&th, NULL, neighbour_main, &nb)) return fprintf(stderr, "pthread_create failed\n"), 1;
        if (pin(cpus[c])) return perror("sched_setaffinity"), 1;
        for (int r = 0; r < rounds * 5; r++) {
            double t0 = al_now_seconds();
            al_gemm_nt(M, N, K, 1.f, A, K, B, K, C, N, 0);
            double t = al_now_seconds() - t0;
            if (t < busy[c]) busy[c] = t;
        }
        atomic_store(&nb.stop, 1);
        pthread_join(th, NULL);
    }
    const double flops = 2.0 * M * N * K;
    int fast = 0, slow = 0;
    for (int c = 0; c < n_cpus; c++) {
        if (one[c] < one[fast]) fast = c;
        if (one[c] > one[slow]) slow = c;
    }
    printf("%d x %d x %d product, %s kernels, best of %d rounds x 5\n", M, N, K, al_kernels_path(), rounds);
    for (int c = 0; c < n_cpus; c++)
        printf("CPU %-3d one thread %7.1f GFLOP/s (%.3f ms, %.2fx the fastest CPU's time)\n", cpus[c],
               flops / one[c] * 1e-9, one[c] * 1e3, one[c] / one[fast]);
    for (int c = 0; n_cpus > 1 && c < n_cpus; c++)
        printf("CPU %-3d one thread, CPU %d at work too: %7.1f GFLOP/s (%.2fx its time alone)\n", cpus[c],
               cpus[(c + 1) % n_cpus], flops / busy[c] * 1e-9, busy[c] / one[c]);
    for (int c = 0; c < n_cpus; c++)
        printf("CPU %-3d calling a 2-thread pool: %.3f ms: %.2fx one thread on the fastest CPU, %.2fx on the slowest\n",
               cpus[c], two[c] * 1e3, one[fast] / two[c], one[slow] / two[c]);
    al_threadpool_free(pool);
    free(A);
    free(B);
    free(C);
    return 0;
}
#else
int main(void) {
    fprintf(stderr, "bench_cpus: needs Linux (sched_setaffinity)\n");
    return 77;
}
#endif
