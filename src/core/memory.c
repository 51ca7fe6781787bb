/* memory.c: the memory limit and the bytes in use, for out-of-memory errors (docs/memory.md). */
#include "memory.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

#if defined(__EMSCRIPTEN__)
#include <emscripten/heap.h>
#else
#include <sys/resource.h>
#endif
#if defined(__linux__) && !defined(__EMSCRIPTEN__)
#include <sys/mman.h>
#endif

/* The limit and where it comes from (source may be NULL). */
static uint64_t limit_of(const char **source) {
    const char *unused;
    if (!source) source = &unused;
#if defined(__EMSCRIPTEN__)
    *source = "WebAssembly maximum";
    return (uint64_t)emscripten_get_heap_max();
#else
    struct rlimit r;
    if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
        *source = "address-space limit, ulimit -v";
        return (uint64_t)r.rlim_cur;
    }
    if (getrlimit(RLIMIT_DATA, &r) == 0 && r.rlim_cur != RLIM_INFINITY) {
        *source = "data limit, ulimit -d";
        return (uint64_t)r.rlim_cur;
    }
    return 0;
#endif
}

uint64_t al_memory_limit(void) { return limit_of(NULL); }

uint64_t al_memory_in_use(void) {
#if defined(__EMSCRIPTEN__)
    struct mallinfo mi = mallinfo();
    return (uint64_t)(unsigned)mi.uordblks;
#elif defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 33)
    struct mallinfo2 mi = mallinfo2();
    return (uint64_t)mi.uordblks + (uint64_t)mi.hblkhd;
#else
    return 0;
#endif
}

void al_memory_format(char *buf, size_t size, uint64_t bytes) {
    const double mb = (double)bytes / (1024.0 * 1024.0);
    if (mb < 10.0) {
        snprintf(buf, size, "%.1f MB", mb);
    } else if (mb < 10240.0) {
        unsigned long long m = (unsigned long long)(mb + 0.5);
        if (m >= 1000) snprintf(buf, size, "%llu,%03llu MB", m / 1000, m % 1000);
        else snprintf(buf, size, "%llu MB", m);
    } else {
        snprintf(buf, size, "%.1f GB", mb / 1024.0);
    }
}

void al_memory_describe(char *buf, size_t size) {
    char limit[32], used[32];
    const char *source = "";
    const uint64_t lim = limit_of(&source);
    al_memory_format(used, sizeof used, al_memory_in_use());
    if (lim) {
        al_memory_format(limit, sizeof limit, lim);
        snprintf(buf, size, "memory limit %s (%s), %s in use", limit, source, used);
    } else {
        snprintf(buf, size, "no memory limit is set, %s in use", used);
    }
}

al_status al_memory_refuse(uint64_t bytes, const char *what, const char *why, al_error *err) {
    char need[32];
    al_memory_format(need, sizeof need, bytes);
    return al_err(err, AL_ERR_OOM, "%s: needs %s of memory%s%s%s", what ? what : "input", need, why ? " (" : "",
                  why ? why : "", why ? ")" : "");
}

al_status al_memory_check(uint64_t bytes, const char *what, al_error *err) {
    if (bytes > (uint64_t)SIZE_MAX) return al_memory_refuse(bytes, what, NULL, err);
    const uint64_t lim = al_memory_limit();
    if (!lim) return AL_OK; /* no limit: malloc alone can refuse, and the bytes in use need not be counted */
#if defined(__EMSCRIPTEN__)
    /* mallinfo walks every chunk of the heap (about 0.3 ms with a 30,522-word vocabulary loaded, more on a
     * fragmented heap), and a forward pass checks its workspace each time. The heap's current size bounds
     * the bytes in use from above, so a size that fits beside it fits: only larger ones are counted. */
    const uint64_t heap = (uint64_t)emscripten_get_heap_size();
    if (heap <= lim && bytes <= lim - heap) return AL_OK;
#endif
    const uint64_t used = al_memory_in_use();
    return bytes > (lim > used ? lim - used : 0) ? al_memory_refuse(bytes, what, NULL, err) : AL_OK;
}

static int huge_pages = 1;

void al_memory_set_huge_pages(int on) { huge_pages = on; }

#if defined(__linux__) && !defined(__EMSCRIPTEN__) && defined(MADV_HUGEPAGE)
#define AL_LARGE_NATIVE 1
#include <pthread.h>
#include <stdint.h>

#define HUGE_PAGE ((size_t)2 << 20)
/* Blocks given back with al_free_large, kept for the next request they fit: a sweep frees and allocates
 * the same sizes for every probe, and memory returned to the system comes back as fresh pages the kernel
 * must fault in and clear again. At most KEPT_BLOCKS blocks and KEPT_BYTES bytes (an eighth of a known
 * limit). */
#define KEPT_BLOCKS 16
#define KEPT_BYTES ((size_t)1 << 30)
static struct kept_block {
    void *p;
    size_t bytes;
} kept[KEPT_BLOCKS];
static int n_kept;
static size_t kept_bytes;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

/* A kept block of bytes .. 2 bytes (the tightest), or NULL. */
static void *take_kept(size_t bytes) {
    void *p = NULL;
    pthread_mutex_lock(&kept_lock);
    int best = -1;
    for (int i = 0; i < n_kept; i++)
        if (kept[i].bytes >= bytes && kept[i].bytes / 2 <= bytes && (best < 0 || kept[i].bytes < kept[best].bytes))
            best = i;
    if (best >= 0) {
        p = kept[best].p;
        kept_bytes -= kept[best].bytes;
        kept[best] = kept[--n_kept];
    }
    pthread_mutex_unlock(&kept_lock);
    return p;
}
#else
#define AL_LARGE_NATIVE 0
#endif

void *al_alloc_large(size_t bytes, int zero) {
    if (bytes == 0) bytes = 1;
#if AL_LARGE_NATIVE
    if (huge_pages && bytes >= 2 * HUGE_PAGE) {
        void *p = take_kept(bytes);
        if (!p) {
            if (posix_memalign(&p, HUGE_PAGE, bytes) != 0) return NULL;
            madvise(p, bytes, MADV_HUGEPAGE); /* advice only: without huge pages the array still works */
        }
        if (zero) memset(p, 0, bytes);
        return p;
    }
#endif
    return zero ? calloc(1, bytes) : malloc(bytes);
}

void al_free_large(void *p) {
    if (!p) return;
#if AL_LARGE_NATIVE
    const size_t bytes = malloc_usable_size(p);
    if (huge_pages && bytes >= 2 * HUGE_PAGE && (uintptr_t)p % HUGE_PAGE == 0) {
        const uint64_t limit = al_memory_limit();
        const size_t cap = limit && limit / 8 < KEPT_BYTES ? (size_t)(limit / 8) : KEPT_BYTES;
        pthread_mutex_lock(&kept_lock);
        const int keep = n_kept < KEPT_BLOCKS && kept_bytes + bytes <= cap;
        if (keep) {
            kept[n_kept].p = p;
            kept[n_kept++].bytes = bytes;
            kept_bytes += bytes;
        }
        pthread_mutex_unlock(&kept_lock);
        if (keep) return;
    }
#endif
    free(p);
}

void al_free_large_kept(void) {
#if AL_LARGE_NATIVE
    pthread_mutex_lock(&kept_lock);
    for (int i = 0; i < n_kept; i++) free(kept[i].p);
    n_kept = 0;
    kept_bytes = 0;
    pthread_mutex_unlock(&kept_lock);
#endif
}
