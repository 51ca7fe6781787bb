/* threadpool.c: persistent workers and a parallel-for whose tasks are claimed as threads come free
 * (contract in threadpool.h, reasons and measurements in docs/threads.md).
 *
 * A job (fn, arg, n_tasks) is published under a new generation number. One 64-bit word holds the
 * generation (high half) and the next unclaimed task (low half); every thread, the caller included,
 * claims tasks from it with a compare-and-swap until none is left, so a thread the machine delays
 * (another process on its core, a slow wake-up) simply claims fewer tasks instead of holding the
 * others at the join. The generation in the word keeps a late worker from claiming a task of a job it
 * did not read. The caller returns when every task has run (`done`), not when every worker has woken.
 *
 * Waiting: a thread with nothing to do spins for up to AL_POOL_SPIN_NS on the word before it sleeps
 * on a condition variable, because a forward pass publishes a job every few tens of microseconds and a
 * wake-up from sleep costs about as much (docs/threads.md, "The pool's costs"). Sleepers are counted so
 * that a job with every worker awake costs no system call.
 *
 * Which thread runs a task changes nothing in the results: a task writes its own outputs, and the
 * `thread` index only picks scratch memory (threadpool.h). A busy flag makes a second caller (a task
 * calling back into the pool, or another thread sharing it) run its tasks inline instead.
 *
 * Under Emscripten without -pthread, pthread_create fails: the pool then has size 1 and everything
 * runs on the calling thread, with the same numbers. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
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
/* How long an idle thread spins before it sleeps (docs/threads.md, "The pool's costs"). */
#define AL_POOL_SPIN_NS 100000
/* Tasks a parallel-for is cut into per thread at most, so that claiming can even out a delayed thread. */
#define AL_TASKS_PER_THREAD 4

/* One job: fn over tasks 0 .. n_tasks-1. Two slots, by the generation's parity: the caller writes the
 * next job's slot while a late worker may still read the current one. n_tasks is read before the
 * compare-and-swap that tells whether the slot still holds the job, so a late reader may race with
 * the caller's write: it is atomic (relaxed; a failed swap discards the value). fn and arg are read
 * only after a successful swap, ordered by the word's release and acquire. */
typedef struct job {
    al_task_fn fn;
    void *arg;
    _Atomic int n_tasks;
} job;

struct al_threadpool {
    int size;      /* threads, the caller's included */
    int n_workers; /* started workers (size - 1) */
    pthread_t workers[AL_THREADS_MAX];
    job jobs[2];
    _Atomic uint64_t word;  /* generation << 32 | next task to claim */
    _Atomic int done;       /* tasks of the current job that have finished */
    _Atomic int busy;       /* a job is running: later callers run inline */
    _Atomic int stop;
    pthread_mutex_t mu;     /* guards the sleeps below, nothing else */
    pthread_cond_t wake, finished;
    int sleepers;           /* workers asleep on wake (under mu) */
    int caller_asleep;      /* the caller asleep on finished (under mu) */
    int split_all;          /* al_threadpool_split_all: ignore min_per_part */
};

typedef struct worker_arg {
    al_threadpool *pool;
    int index;
} worker_arg;

static inline uint32_t generation_of(uint64_t w) { return (uint32_t)(w >> 32); }

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Claims and runs tasks of generation gen until none is left. */
static void run_claimed(al_threadpool *pool, uint32_t gen, int thread) {
    job *j = &pool->jobs[gen & 1];
    uint64_t w = atomic_load_explicit(&pool->word, memory_order_acquire);
    for (;;) {
        if (generation_of(w) != gen) break;
        const int n_tasks = atomic_load_explicit(&j->n_tasks, memory_order_relaxed);
        const uint32_t t = (uint32_t)w;
        if ((int)t >= n_tasks) break;
        /* the compare-and-swap succeeds only while the word still names this job, so the slot read
         * above was this job's */
        if (!atomic_compare_exchange_weak_explicit(&pool->word, &w, w + 1, memory_order_acq_rel,
                                                   memory_order_acquire))
            continue;
        j->fn(j->arg, (int)t, n_tasks, thread);
        if (atomic_fetch_add_explicit(&pool->done, 1, memory_order_acq_rel) + 1 == n_tasks) {
            pthread_mutex_lock(&pool->mu);
            if (pool->caller_asleep) pthread_cond_signal(&pool->finished);
            pthread_mutex_unlock(&pool->mu);
        }
        w = atomic_load_explicit(&pool->word, memory_order_acquire);
    }
}

/* Waits until the word's generation differs from seen (or the pool stops); returns the word. */
static uint64_t wait_for_job(al_threadpool *pool, uint32_t seen) {
    const int64_t until = now_ns() + AL_POOL_SPIN_NS;
    for (int spins = 0;; spins++) {
        uint64_t w = atomic_load_explicit(&pool->word, memory_order_acquire);
        if (generation_of(w) != seen || atomic_load_explicit(&pool->stop, memory_order_relaxed)) return w;
        cpu_relax();
        if ((spins & 63) == 63 && now_ns() > until) break;
    }
    pthread_mutex_lock(&pool->mu);
    uint64_t w;
    while (generation_of(w = atomic_load_explicit(&pool->word, memory_order_acquire)) == seen &&
           !atomic_load_explicit(&pool->stop, memory_order_relaxed)) {
        pool->sleepers++;
        pthread_cond_wait(&pool->wake, &pool->mu);
        pool->sleepers--;
    }
    pthread_mutex_unlock(&pool->mu);
    return w;
}

static void *worker_main(void *p) {
    worker_arg wa = *(worker_arg *)p;
    free(p);
    al_threadpool *pool = wa.pool;
    uint32_t seen = 0;
    for (;;) {
        const uint64_t w = wait_for_job(pool, seen);
        if (atomic_load_explicit(&pool->stop, memory_order_relaxed)) break;
        seen = generation_of(w);
        run_claimed(pool, seen, wa.index);
    }
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
    pthread_cond_init(&pool->finished, NULL);
    atomic_init(&pool->word, 0);
    atomic_init(&pool->done, 0);
    atomic_init(&pool->busy, 0);
    atomic_init(&pool->stop, 0);
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
    atomic_store(&pool->stop, 1);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mu);
    for (int i = 0; i < pool->n_workers; i++) pthread_join(pool->workers[i], NULL);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->finished);
    pthread_mutex_destroy(&pool->mu);
    free(pool);
}

int al_threadpool_size(const al_threadpool *pool) { return pool ? pool->size : 1; }

void al_threadpool_split_all(al_threadpool *pool, int on) {
    if (pool) pool->split_all = on != 0;
}

double al_threadpool_least_part(const al_threadpool *pool, double min_per_part) {
    return pool && pool->split_all ? 0.0 : min_per_part;
}

int al_threadpool_parts(const al_threadpool *pool, double work, double min_per_part) {
    const int size = al_threadpool_size(pool);
    if (size == 1) return 1;
    const int most = size * AL_TASKS_PER_THREAD;
    if (min_per_part <= 0 || pool->split_all) return most;
    double fit = work / min_per_part;
    if (fit < 2.0) return 1;
    return fit < most ? (int)fit : most;
}

static void run_inline(al_task_fn fn, void *arg, int n_tasks) {
    for (int t = 0; t < n_tasks; t++) fn(arg, t, n_tasks, 0);
}

void al_threadpool_for(al_threadpool *pool, int n_tasks, al_task_fn fn, void *arg) {
    if (n_tasks <= 0) return;
    int expected = 0;
    if (!pool || pool->size == 1 || n_tasks == 1 ||
        !atomic_compare_exchange_strong(&pool->busy, &expected, 1)) {
        run_inline(fn, arg, n_tasks);
        return;
    }
    /* Publish: the slot first, then the word (release), which names the new generation from task 0. */
    const uint32_t gen = generation_of(atomic_load_explicit(&pool->word, memory_order_relaxed)) + 1;
    job *j = &pool->jobs[gen & 1];
    j->fn = fn, j->arg = arg;
    atomic_store_explicit(&j->n_tasks, n_tasks, memory_order_relaxed);
    atomic_store_explicit(&pool->done, 0, memory_order_relaxed);
    atomic_store_explicit(&pool->word, (uint64_t)gen << 32, memory_order_release);
    pthread_mutex_lock(&pool->mu);
    if (pool->sleepers) pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->mu);

    run_claimed(pool, gen, 0);

    /* Join: the tasks other threads claimed may still run. */
    const int64_t until = now_ns() + AL_POOL_SPIN_NS;
    for (int spins = 0; atomic_load_explicit(&pool->done, memory_order_acquire) < n_tasks; spins++) {
        cpu_relax();
        if ((spins & 63) == 63 && now_ns() > until) {
            pthread_mutex_lock(&pool->mu);
            pool->caller_asleep = 1;
            while (atomic_load_explicit(&pool->done, memory_order_acquire) < n_tasks)
                pthread_cond_wait(&pool->finished, &pool->mu);
            pool->caller_asleep = 0;
            pthread_mutex_unlock(&pool->mu);
            break;
        }
    }
    atomic_store_explicit(&pool->busy, 0, memory_order_release);
}
