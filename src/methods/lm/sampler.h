/* sampler.h: the next token from a causal model's logits (sampler.c, docs/decoders.md "Generation"): greedy, or
 * sampled with a temperature, top-k and top-p from a seeded generator. Not public. */
#ifndef AL_METHODS_LM_SAMPLER_H
#define AL_METHODS_LM_SAMPLER_H

#include <stdint.h>

#include "../../core/rng.h"

typedef struct al_sampling {
    float temperature; /* 0: greedy (the most probable token; ties: the lower id) */
    int top_k;         /* 0: no limit */
    float top_p;       /* 1: no limit; else the fewest most probable tokens whose probabilities reach top_p */
} al_sampling;

/* Picks from logits [V] (scratch: [V] ints and [V] doubles). *p is the picked token's probability under the model
 * (temperature 1, before any limit); *z, if not NULL, its normaliser: the sum over v of
 * al_det_exp((double)logits[v] - max) in v order, so a caller's further probabilities need no second pass over V.
 * rng is drawn once per sampled token, never for greedy. -1: out of memory. */
int al_sample_next(const float *logits, int V, const al_sampling *s, al_rng *rng, int32_t *order, double *prob,
                   float *p, double *z);

#endif
