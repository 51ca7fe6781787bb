/* carve.h: one allocation carved into aligned tensors. A layout function runs twice with the same code:
 * first over no memory (it only measures), then over one allocation of the measured size, so sizes and
 * offsets cannot disagree. The forward pass's workspace (src/model/forward.c), a probe's
 * (src/methods/probes/probe.c) and a training context's (src/train/train_ctx.c) are carved here.
 *
 * Sizes are counted in 64 bits and saturate instead of wrapping, so a layout too large for the build
 * (on wasm32, 4 GB or more) measures as too large rather than as a small number (docs/memory.md). */
#ifndef AL_CORE_CARVE_H
#define AL_CORE_CARVE_H

#include <stdint.h>

#define AL_CARVE_ALIGN 16 /* floats: every tensor starts 64 bytes after the previous one's start, at least */

typedef struct al_carver {
    float *base;   /* the allocation; NULL: measure only */
    uint64_t used; /* floats so far, each tensor rounded up to AL_CARVE_ALIGN; UINT64_MAX once past 64 bits */
} al_carver;

/* The next n floats: NULL when measuring or when n is 0. */
float *al_carve(al_carver *c, uint64_t n);
/* rows * cols floats, the product counted without wrapping. */
float *al_carve_rows(al_carver *c, uint64_t rows, uint64_t cols);
/* n int32 values (the size of a float each). */
int32_t *al_carve_i32(al_carver *c, uint64_t n);
/* n bytes, in whole floats. */
uint8_t *al_carve_u8(al_carver *c, uint64_t n);
/* The bytes measured so far; UINT64_MAX when they do not fit in 64 bits. */
uint64_t al_carve_bytes(const al_carver *c);
/* 1 when the measured layout can be allocated and addressed in this build's size_t: the one overflow
 * guard every carver's caller checks before it allocates. */
int al_carve_fits(const al_carver *c);

#endif
