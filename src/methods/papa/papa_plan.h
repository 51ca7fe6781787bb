/* papa_plan.h: the list of probe runs a PAPA sweep makes (docs/papa.md#sweeps), and how it is split into
 * shards whose results merge into exactly the numbers of the unsharded run.
 *
 * A run is one probe trained and scored on one head configuration with one seed. A configuration is
 * (constant kind, head order, k heads replaced) or a baseline. Configurations that are the same model are
 * listed once: k = 0 is the full model for every order and kind, and k = NL*H (every head constant) does
 * not depend on the order. */
#ifndef AL_METHODS_PAPA_PLAN_H
#define AL_METHODS_PAPA_PLAN_H

#include <stdint.h>

#include "../../attnlab.h"
#include "papa.h"

typedef enum al_papa_config_kind {
    AL_CFG_SWEEP = 0,           /* k heads of an order replaced by a constant kind (k = 0: full model) */
    AL_CFG_RIGHT_PAD = 1,       /* baseline: the full model on ordinary right-padded inputs */
    AL_CFG_EMBEDDINGS_ONLY = 2, /* baseline: the probe sees the embedding output only */
} al_papa_config_kind;

typedef struct al_papa_config {
    al_papa_config_kind what;
    al_papa_constant_kind constant; /* AL_CFG_SWEEP with k > 0 */
    al_papa_order order;            /* AL_CFG_SWEEP with 0 < k < NL*H */
    int k;                          /* heads replaced */
} al_papa_config;

typedef struct al_papa_plan_request {
    int n_layers, n_heads;
    int n_constants;
    al_papa_constant_kind constants[AL_N_CONST_KINDS];
    int n_orders;
    al_papa_order orders[AL_N_ORDERS];
    int n_k;
    int k[64];              /* heads replaced, ascending, distinct, each in [0, NL*H] */
    int baselines;          /* 1: right-pad and embeddings-only runs, and every data-free kind at k = NL*H
                             * (an encoder's up to AL_CONST_LAST_ENCODER_BASELINE) */
    int causal;             /* 1: a language model's sweep (papa_lm.h): its baselines are every data-free kind
                             * at k = NL*H, no right-pad or embeddings-only run */
    int n_seeds;
} al_papa_plan_request;

#define AL_PAPA_MAX_CONFIGS 1024

typedef struct al_papa_plan {
    int n_configs;
    al_papa_config configs[AL_PAPA_MAX_CONFIGS];
    int n_seeds;
} al_papa_plan;

/* Heads replaced for each fraction of input-dependent heads kept, ascending and distinct: out [n]; returns
 * the count written. */
int al_papa_k_from_fractions(const double *fractions, int n, int n_layers, int n_heads, int *out);

/* The configurations of a sweep, in a fixed order (so a run's index names it in every shard). */
al_status al_papa_plan_build(const al_papa_plan_request *req, al_papa_plan *plan, al_error *err);

/* Whether configuration index c belongs to shard i of n (round robin). A configuration's seeds stay in one
 * shard, so its frozen features are computed once. */
int al_papa_plan_in_shard(int config, int shard_index, int n_shards);

/* Whether some configuration replaces heads by the corpus average (the constants must be averaged), and whether
 * some configuration between none and all of the n_total heads follows `order` (its ranking must be computed). */
int al_papa_plan_uses_average(const al_papa_plan *plan);
int al_papa_plan_uses_order(const al_papa_plan *plan, int n_total, al_papa_order order);

/* "average k=8 lambda", "full", "right_pad", "embeddings_only": a label for messages and replies. */
void al_papa_config_label(const al_papa_config *c, int n_heads_total, char *out, size_t cap);

#endif
