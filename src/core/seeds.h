/* seeds.h: every random stream attnlab derives from a request's seed, named in one place. A stream is
 * al_mlm_derive_seed(seed, purpose, index) with one of the purposes below, so two purposes never share
 * draws and a batch, a mask or a dropout pattern is a pure function of (seed, purpose, index); the
 * values are part of every stored digest and checkpoint, so they never change (docs/pretraining.md,
 * "Seeds"). Streams seeded with the seed itself (a model's or a probe's initial weights, a task's split,
 * the long phase's epoch order) need no purpose. */
#ifndef AL_CORE_SEEDS_H
#define AL_CORE_SEEDS_H

#include <stdint.h>

enum {
    /* pretraining (src/train/pretrain.c, shards.c), index = the step unless said */
    AL_SEED_MLM_MASKING = 1,     /* the step's masking: one generator, in batch order */
    AL_SEED_STEP_DROPOUT = 2,    /* the step's dropout seed, given to the shards */
    AL_SEED_SHARD_DROPOUT = 3,   /* shard i > 0's dropout, derived from the step's dropout seed (index = i) */
    AL_SEED_SHORT_ORDER = 4,     /* the epoch orders of the short phase's packed sequences (index 0) */
    AL_SEED_SOP_HEAD = 5,        /* the sentence-order head's initial weights (index 0) */
    AL_SEED_SOP_RUN_ORDER = 6,   /* the epoch orders of the sentence-order runs (index 0) */
    AL_SEED_SOP_PAIRS = 7,       /* the step's sentence-order split points and swaps, in batch order */
    AL_SEED_CLM_REPEAT = 8,      /* a causal step's repeated spans (al_clm_plan_copies), in batch order */
    /* al_mlm_epoch_order (src/train/mlm_data.c): the permutation of an epoch (index = the epoch) */
    AL_SEED_EPOCH_ORDER = 0xE90C,
    /* the PAPA sweep (src/methods/papa) */
    AL_SEED_PAPA_MLM_MASKING = 0x31A,    /* the MLM score's masking of example x (index = x) */
    AL_SEED_RANK_PROBE_DROPOUT = 0x9A9A, /* the lambda ranking: shard i's probe dropout (index = i) */
    AL_SEED_RANK_ORDER = 0x7A4B,         /* the lambda ranking: the epoch orders of its examples (index 0) */
    AL_SEED_RANK_STEP_DROPOUT = 0xD0,    /* the lambda ranking: the step's encoder dropout seed (index = step) */
    /* generation (src/methods/lm/sampler.c): the draws of a sampled continuation, one generator (index 0) */
    AL_SEED_GENERATE = 0x6E7,
    /* the head roles' repeated random sequences (src/methods/roles/role_inputs.c): sequence r's draws (index = r) */
    AL_SEED_HEAD_ROLES = 0x201E,
};

/* The probe's streams in al_probe_fit (docs/probes.md, "Training"): per epoch one shuffles the examples
 * and one draws the dropout masks. */
enum { AL_SEED_PROBE_SHUFFLE = 0, AL_SEED_PROBE_DROPOUT = 1 };

/* A seed derived from (seed, purpose, index) by splitmix64 rounds: independent streams per step and purpose. */
uint64_t al_mlm_derive_seed(uint64_t seed, uint64_t purpose, uint64_t index);
/* The seed of a probe's stream (AL_SEED_PROBE_*) in an epoch of al_probe_fit. */
uint64_t al_probe_stream_seed(uint64_t seed, int epoch, int stream);

#endif
