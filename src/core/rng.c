/* rng.c: xoshiro128** (Blackman & Vigna), seeded through splitmix64. */
#include "rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void al_rng_seed(al_rng *r, uint64_t seed) {
    uint64_t a = splitmix64(&seed), b = splitmix64(&seed);
    r->s[0] = (uint32_t)a;
    r->s[1] = (uint32_t)(a >> 32);
    r->s[2] = (uint32_t)b;
    r->s[3] = (uint32_t)(b >> 32);
    if (!(r->s[0] | r->s[1] | r->s[2] | r->s[3])) r->s[0] = 1; /* the all-zero state is a fixed point */
}

static uint32_t rotl(uint32_t x, int k) { return (x << k) | (x >> (32 - k)); }

uint32_t al_rng_u32(al_rng *r) {
    uint32_t *s = r->s;
    uint32_t result = rotl(s[1] * 5, 7) * 9;
    uint32_t t = s[1] << 9;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 11);
    return result;
}

float al_rng_uniform(al_rng *r) { return (float)(al_rng_u32(r) >> 8) * (1.0f / 16777216.0f); }

uint32_t al_rng_below(al_rng *r, uint32_t n) {
    uint32_t limit = (uint32_t)(-n) % n; /* reject the first 2^32 mod n values */
    for (;;) {
        uint32_t x = al_rng_u32(r);
        if (x >= limit) return x % n;
    }
}

float al_rng_normal(al_rng *r) {
    double u1 = ((double)(al_rng_u32(r) >> 8) + 1.0) / 16777217.0; /* (0, 1] avoids log(0) */
    double u2 = (double)(al_rng_u32(r) >> 8) / 16777216.0;
    return (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
}
