/* carve.c: the carving rule of carve.h. */
#include "carve.h"

#include <stddef.h>

float *al_carve(al_carver *c, uint64_t n) {
    float *p = c->base && n ? c->base + c->used : NULL;
    const uint64_t padded = n > UINT64_MAX - (AL_CARVE_ALIGN - 1) ? UINT64_MAX
                                                                  : (n + AL_CARVE_ALIGN - 1) / AL_CARVE_ALIGN * AL_CARVE_ALIGN;
    c->used = padded > UINT64_MAX - c->used ? UINT64_MAX : c->used + padded;
    return p;
}

float *al_carve_rows(al_carver *c, uint64_t rows, uint64_t cols) {
    return al_carve(c, cols && rows > UINT64_MAX / cols ? UINT64_MAX : rows * cols);
}

int32_t *al_carve_i32(al_carver *c, uint64_t n) { return (int32_t *)(void *)al_carve(c, n); }

uint8_t *al_carve_u8(al_carver *c, uint64_t n) { return (uint8_t *)(void *)al_carve(c, n / 4 + (n % 4 != 0)); }

uint64_t al_carve_bytes(const al_carver *c) {
    return c->used > UINT64_MAX / sizeof(float) ? UINT64_MAX : c->used * sizeof(float);
}

int al_carve_fits(const al_carver *c) { return al_carve_bytes(c) <= (uint64_t)SIZE_MAX; }
