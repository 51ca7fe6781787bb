/* memory.h: the memory a process may use, so that running out of it is an error that names the size
 * needed and the limit (docs/memory.md). Every AL_ERR_OOM message ends with the limit and the bytes in
 * use (error.c appends them); al_memory_check refuses a size before malloc is asked for it. */
#ifndef AL_CORE_MEMORY_H
#define AL_CORE_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "../attnlab.h"

/* Bytes this process may hold at most: WebAssembly's heap maximum, or natively the address-space or
 * data limit (ulimit -v / -d) when one is set; 0 when none is known. */
uint64_t al_memory_limit(void);
/* Bytes malloc has handed out and not taken back. */
uint64_t al_memory_in_use(void);
/* "memory limit 4,096 MB (WebAssembly maximum), 12 MB in use" (or "no memory limit is set, ...") into buf. */
void al_memory_describe(char *buf, size_t size);
/* "12.5 MB", "3,120 MB", "9.6 GB". */
void al_memory_format(char *buf, size_t size, uint64_t bytes);
/* AL_OK when bytes may be allocated: they fit in size_t and, under a known limit, in what is left of
 * it. Otherwise AL_ERR_OOM with "<what>: needs <size>" (plus the limit, as every OOM message). */
al_status al_memory_check(uint64_t bytes, const char *what, al_error *err);
/* AL_ERR_OOM with "<what>: needs <size> of memory" and " (<why>)" when why is not NULL (plus the limit),
 * whatever the limit: for a caller whose allocation already failed (wasm/exports.c) or that refuses a
 * size by a rule of its own (the loader's 2^32 weights). */
al_status al_memory_refuse(uint64_t bytes, const char *what, const char *why, al_error *err);

/* Memory for one large array (a probe's 7.7 million parameters, their gradients, AdamW's moments): natively
 * on Linux, from 4 MiB up, aligned to 2 MiB and advised for transparent huge pages, and given back with
 * al_free_large to a few kept blocks that the next request of a similar size reuses, because a sweep
 * allocates and first touches such arrays for every probe and the page faults cost as much as the probe's
 * matrix products (docs/speed.md); elsewhere plain malloc and free. Zeroed when zero is set. NULL when
 * out of memory. */
void *al_alloc_large(size_t bytes, int zero);
void al_free_large(void *p); /* p from al_alloc_large, or NULL */
/* Gives the kept blocks back to the system (the end of a sweep: memory is not held between requests). */
void al_free_large_kept(void);
/* On (the default) or off: plain malloc and free, as before (bench_sweep_parts' before / after pair). Set it
 * only while no other thread allocates. */
void al_memory_set_huge_pages(int on);

#endif
