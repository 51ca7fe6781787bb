/* sha256.h: SHA-256 (FIPS 180-4), streaming. Used for content hashes (a task's examples,
 * src/methods/tasks/task_hash.c); tested against the FIPS 180-4 example vectors in tests/c/test_tasks.c. */
#ifndef AL_CORE_SHA256_H
#define AL_CORE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct al_sha256 {
    uint32_t h[8];
    uint64_t n_bytes;    /* message length so far */
    uint8_t block[64];   /* pending bytes of the current block */
    size_t n_block;
} al_sha256;

void al_sha256_init(al_sha256 *s);
void al_sha256_update(al_sha256 *s, const void *data, size_t len);
/* Pads, writes the 32-byte digest and leaves s finished (init again to reuse). */
void al_sha256_final(al_sha256 *s, uint8_t digest[32]);
/* The digest as 64 lower-case hex digits and a NUL. */
void al_sha256_hex(const uint8_t digest[32], char hex[65]);
/* The hex digest of len bytes at once. */
void al_sha256_hex_of(const void *data, size_t len, char hex[65]);

#endif
