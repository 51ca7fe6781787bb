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

void *al_alloc_large(size_t bytes, int zero) {
    if (bytes == 0) bytes = 1;
#if defined(__linux__) && !defined(__EMSCRIPTEN__) && defined(MADV_HUGEPAGE)
    const size_t huge = (size_t)2 << 20;
    if (huge_pages && bytes >= 2 * huge) {
        void *p = NULL;
        if (posix_memalign(&p, huge, bytes) != 0) return NULL;
        madvise(p, bytes, MADV_HUGEPAGE); /* advice only: without huge pages the array still works */
        if (zero) memset(p, 0, bytes);
        return p;
    }
#endif
    return zero ? calloc(1, bytes) : malloc(bytes);
}
