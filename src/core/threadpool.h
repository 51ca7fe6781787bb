/* threadpool.h: persistent worker threads and a parallel-for (threadpool.c).
 * The type al_threadpool and its public calls (al_threadpool_new, _free, _size, al_threads_default)
 * are declared in attnlab.h; this header adds what the core's own modules use.
 *
 * Determinism (docs/threads.md): al_threadpool_for runs tasks 0 .. n-1, each exactly once, on whichever
 * thread claims it first; the tasks must write disjoint outputs and may use the running thread's index
 * only to pick scratch memory. Callers cut their work so that every output element is computed by the
 * same sequence of operations whichever task computes it (GEMM by column blocks, attention by head, a
 * batch by example; never a reduction across tasks), so the numbers depend neither on the thread count
 * nor on which thread ran what. */
#ifndef AL_CORE_THREADPOOL_H
#define AL_CORE_THREADPOOL_H

#include "../attnlab.h"

/* Task `task` of `n_tasks`; `thread` in [0, size) is the thread running it (for per-thread scratch:
 * the tasks of one thread run one after the other). */
typedef void (*al_task_fn)(void *arg, int task, int n_tasks, int thread);

/* Runs fn for tasks 0 .. n_tasks-1 and returns when all are done. The calling thread is thread 0 and
 * claims tasks like the others. pool NULL, a pool of size 1, n_tasks 1, or a call made while the pool is busy (from
 * one of its own tasks, or from another thread) runs every task on the calling thread, in order, as
 * thread 0. */
void al_threadpool_for(al_threadpool *pool, int n_tasks, al_task_fn fn, void *arg);

/* How many parts to cut `work` units into: 1 below `min_per_part` units per part, else at most a few per
 * thread of the pool (so that a delayed thread's share is taken by the others), 1 for NULL. */
int al_threadpool_parts(const al_threadpool *pool, double work, double min_per_part);

/* The least work a part should have when a caller cuts its own parts: min_per_part, or 0 while the pool splits
 * every problem (al_threadpool_split_all). */
double al_threadpool_least_part(const al_threadpool *pool, double min_per_part);

/* For the tests: split every problem as far as the pool's size allows, however small (so the
 * thread-count identity is checked on tiny golden models too). */
void al_threadpool_split_all(al_threadpool *pool, int on);

#endif
