/* rng.h: the one seeded random generator (xoshiro128** seeded by splitmix64). Every random choice in
 * attnlab draws from an al_rng, so the same request gives the same numbers on every platform. */
#ifndef AL_CORE_RNG_H
#define AL_CORE_RNG_H

#include <stdint.h>

typedef struct al_rng { uint32_t s[4]; } al_rng;

void al_rng_seed(al_rng *r, uint64_t seed);
uint32_t al_rng_u32(al_rng *r);
/* Uniform in [0, 1) with 24 random bits (exact in float). */
float al_rng_uniform(al_rng *r);
/* Uniform integer in [0, n), n > 0, without modulo bias. */
uint32_t al_rng_below(al_rng *r, uint32_t n);
/* Standard normal (Box-Muller in double, so the bits do not depend on libm float variants). */
float al_rng_normal(al_rng *r);

#endif
