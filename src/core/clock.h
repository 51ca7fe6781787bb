/* clock.h: the one clock for timings the core and its bench programs report. A monotonic clock, so a
 * stepped wall clock never makes a duration negative; timings are reported, never part of a result. */
#ifndef AL_CORE_CLOCK_H
#define AL_CORE_CLOCK_H

#include <math.h>
#include <time.h>

/* Seconds on the monotonic clock since an arbitrary start: only differences mean something. */
static inline double al_now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds this process has used on all its threads: beside wall time it tells how busy the cores were.
 * NaN where the system has no such clock (Emscripten's clock_gettime knows only the real and monotonic ones, and its
 * clock() is wall time since the first call in an int32 of microseconds: not CPU time, and it wraps after about 36 minutes). */
static inline double al_cpu_seconds(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return NAN;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
