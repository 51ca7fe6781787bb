/* fnv_digest.h: FNV-1a (64-bit) over the bytes of floats, the digest the C tests print and pin: it changes
 * with any bit of any value, so one constant holds for every build (native, WASM) and kernel path whose
 * numbers are the same bits (docs/kernels.md). */
#ifndef AL_TEST_FNV_DIGEST_H
#define AL_TEST_FNV_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#define FNV_DIGEST_START 14695981039346656037ull /* FNV-1a's offset basis, 0xcbf29ce484222325 */

/* h carried on over the bytes of x[0..n): start a digest with FNV_DIGEST_START, chain further arrays. */
static inline uint64_t fnv_digest(uint64_t h, const float *x, size_t n) {
    const unsigned char *p = (const unsigned char *)x;
    for (size_t i = 0; i < n * sizeof(float); i++) h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

#endif
