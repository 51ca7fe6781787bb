/* threadpool.c: persistent workers and a fixed-partition parallel-for (contract in threadpool.h,
 * reasons in docs/threads.md).
 *
 * One mutex and two condition variables: the caller publishes a job (fn, arg, n_tasks) under a new
 * generation number and wakes the workers; worker w (1 .. size-1) runs tasks w, w + size, ... and
 * counts itself done; the caller runs thread 0's tasks and waits for the count. A busy flag taken
 * with the mutex makes a second caller (a task calling back into the pool, or another thread sharing
 * the pool) run its tasks inline instead of waiting.
 *
 * Under Emscripten without -pthread, pthread_create fails: the pool then has size 1 and everything
 * runs on the calling thread, with the same numbers. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "threadpool.h"

#define AL_THREADS_MAX 64
#define AL_THREADS_DEFAULT_CAP 8
/* A worker's stack: each GEMM task keeps a 128 KiB packed block on it, and a training shard runs a
 * whole forward and backward there (natively the size of the default pthread stack it had before;
 * under Emscripten the programs' main stack is 1 MiB and is enough). */
#ifdef __EMSCRIPTEN__
#define AL_WORKER_STACK (2u << 20)
#else
#define AL_WORKER_STACK (8u << 20)
#endif

struct al_threadpool {
    int size;            /* threads, the caller's included */
    int n_workers;       /* started workers (size - 1) */
    pthread_t workers[AL_THREADS_MAX];
    pthread_mutex_t mu;
    pthread_cond_t wake, done;
    unsigned long generation;
    int busy, stop, remaining;
    int split_all;       /* al_threadpool_split_all: ignore min_per_part */
    al_task_fn fn;
    void *arg;
    int n_tasks;
};

typedef struct worker_arg {
    al_threadpool *pool;
    int index;
} worker_arg;

static void run_share(al_task_fn fn, void *arg, int n_tasks, int thread, int size) {
    for (int t = thread; t < n_tasks; t += size) fn(arg, t, n_tasks, thread);
}

static void *worker_main(void *p) {
    worker_arg wa = *(worker_arg *)p;
    free(p);
    al_threadpool *pool = wa.pool;
    unsigned long seen = 0;
    pthread_mutex_lock(&pool->mu);
    for (;;) {
        while (!pool->stop && pool->generation == seen) pthread_cond_wait(&pool->wake, &pool->mu);
        if (pool->stop) break;
        seen = pool->generation;
        al_task_fn fn = pool->fn;
        void *arg = pool->arg;
        int n_tasks = pool->n_tasks, size = pool->size;
        pthread_mutex_unlock(&pool->mu);
        run_share(fn, arg, n_tasks, wa.index, size);
        pthread_mutex_lock(&pool->mu);
        if (--pool->remaining == 0) pthread_cond_signal(&pool->done);
    }
    pthread_mutex_unlock(&pool->mu);
    return NULL;
}

int al_threads_default(void) {
    long n = 1;
#if defined(_SC_NPROCESSORS_ONLN)
    n = sysconf(_SC_NPROCESSORS_ONLN);
#endif
    if (n < 1) n = 1;
    if (n > AL_THREADS_DEFAULT_CAP) n = AL_THREADS_DEFAULT_CAP;
    return (int)n;
}

int al_threads_max(void) { return AL_THREADS_MAX; }

al_status al_threadpool_new(int n_threads, al_threadpool **out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "threads: no output pointer");
    *out = NULL;
    if (n_threads < 1 || n_threads > AL_THREADS_MAX)
        return al_err(err, AL_ERR_INVALID, "threads: %d threads must be in [1, %d]", n_threads, AL_THREADS_MAX);
    al_threadpool *pool = calloc(1, sizeof *pool);
    if (!pool) return al_err(err, AL_ERR_OOM, "threads: out of memory");
    pthread_mutex_init(&pool->mu, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    pool->size = 1;
    pthread_attr_t attr;
    int have_attr = pthread_attr_init(&attr) == 0;
    if (have_attr) pthread_attr_setstacksize(&attr, AL_WORKER_STACK);
    /* Each worker's index is fixed before it starts; a failed start (no threads in this build, or
     * none to spare) just leaves a smaller pool. */
    for (int i = 1; i < n_threads; i++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (!wa) break;
        wa->pool = pool;
        wa->index = i;
        if (pthread_create(&pool->workers[i - 1], have_attr ? &attr : NULL, worker_main, wa) != 0) {
            free(wa);
            break;
        }
        pool->n_workers++;
        pool->size = i + 1;
    }
    if (have_attr) pthread_attr_destroy(&attr);
    *out = pool;
    return AL_OK;
}

void al_threadpool_free(al_threadpool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->mu);
    pool->stop = 1;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mu);
    for (int i = 0; i < pool->n_workers; i++) pthread_join(pool->workers[i], NULL);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->done);
    pthread_mutex_destroy(&pool->mu);
    free(pool);
}

int al_threadpool_size(const al_threadpool *pool) { return pool ? pool->size : 1; }

void al_threadpool_split_all(al_threadpool *pool, int on) {
    if (pool) pool->split_all = on != 0;
}

int al_threadpool_parts(const al_threadpool *pool, double work, double min_per_part) {
    int size = al_threadpool_size(pool);
    if (min_per_part <= 0 || (pool && pool->split_all)) return size;
    double fit = work / min_per_part;
    if (fit < 2.0) return 1;
    return fit < size ? (int)fit : size;
}

void al_threadpool_for(al_threadpool *pool, int n_tasks, al_task_fn fn, void *arg) {
    if (n_tasks <= 0) return;
    int claimed = 0;
    if (pool && pool->size > 1 && n_tasks > 1) {
        pthread_mutex_lock(&pool->mu);
        if (!pool->busy) {
            pool->busy = 1;
            claimed = 1;
            pool->fn = fn;
            pool->arg = arg;
            pool->n_tasks = n_tasks;
            pool->remaining = pool->n_workers;
            pool->generation++;
            pthread_cond_broadcast(&pool->wake);
        }
        pthread_mutex_unlock(&pool->mu);
    }
    if (!claimed) {
        run_share(fn, arg, n_tasks, 0, 1);
        return;
    }
    run_share(fn, arg, n_tasks, 0, pool->size);
    pthread_mutex_lock(&pool->mu);
    while (pool->remaining > 0) pthread_cond_wait(&pool->done, &pool->mu);
    pool->busy = 0;
    pthread_mutex_unlock(&pool->mu);
}
