/* path.c: picks the kernel path once per process (path.h) and lets tests and benchmarks switch it
 * (al_kernels_set_path) to compare the paths side by side. */
#include "path.h"

#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "simd.h"

enum { PATH_UNSET = -1, PATH_BASE = 0, PATH_AVX2 = 1, PATH_4X8 = 2 };

#define PATH_4X8_NAME AL_SIMD_PATH "-4x8"

/* Read and written with relaxed atomics: threads that race on the first call compute the same value. */
static int current_path = PATH_UNSET;

static int cpu_has_avx2(void) {
#if AL_KERNELS_HAVE_AVX2
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") != 0;
#else
    return 0;
#endif
}

static const char *path_name(int path) {
    return path == PATH_AVX2 ? "x86-avx2" : path == PATH_4X8 ? PATH_4X8_NAME : AL_SIMD_PATH;
}

static int path_by_name(const char *name) {
    if (strcmp(name, AL_SIMD_PATH) == 0) return PATH_BASE;
    if (strcmp(name, "x86-avx2") == 0 && cpu_has_avx2()) return PATH_AVX2;
    if (AL_KERNELS_HAVE_4X8 && strcmp(name, PATH_4X8_NAME) == 0) return PATH_4X8;
    return PATH_UNSET;
}

static int pick_path(void) {
    const char *want = getenv("AL_KERNELS");
    if (want && *want) {
        int path = path_by_name(want);
        if (path != PATH_UNSET) return path;
        /* Not a path of this build and CPU: the default runs (the core never prints: the CLI says so;
         * al_kernels_paths lists what there is, and the version reply's "kernels" names the path that runs). */
    }
    return cpu_has_avx2() ? PATH_AVX2 : PATH_BASE;
}

static int path_now(void) {
    int path = __atomic_load_n(&current_path, __ATOMIC_RELAXED);
    if (path == PATH_UNSET) {
        path = pick_path();
        __atomic_store_n(&current_path, path, __ATOMIC_RELAXED);
    }
    return path;
}

int al_kernels_use_avx2(void) { return path_now() == PATH_AVX2; }

int al_kernels_use_4x8(void) { return AL_KERNELS_HAVE_4X8 && path_now() == PATH_4X8; }

const char *al_kernels_path(void) { return path_name(path_now()); }

int al_kernels_paths(const char **names, int max) {
    int n = 0;
    if (n < max) names[n] = AL_SIMD_PATH;
    n++;
    if (cpu_has_avx2()) {
        if (n < max) names[n] = "x86-avx2";
        n++;
    }
    if (AL_KERNELS_HAVE_4X8) {
        if (n < max) names[n] = PATH_4X8_NAME;
        n++;
    }
    return n;
}

int al_kernels_set_path(const char *name) {
    int path = name ? path_by_name(name) : PATH_UNSET;
    if (path == PATH_UNSET) return -1;
    __atomic_store_n(&current_path, path, __ATOMIC_RELAXED);
    return 0;
}
