/* papa_sweep.h: the PAPA experiment end to end (docs/papa.md#sweeps): constant matrices from the task's
 * training inputs, the lambda ranking of heads, frozen features per head configuration, probes trained per
 * seed, scores, baselines and the MLM score. The JSON op (src/api/op_papa.c) and the CLI drive it. */
#ifndef AL_METHODS_PAPA_SWEEP_H
#define AL_METHODS_PAPA_SWEEP_H

#include <stddef.h>
#include <stdint.h>

#include "../../attnlab.h"
#include "../../train/adamw.h"
#include "papa.h"
#include "papa_features.h"
#include "papa_plan.h"
#include "../probes/probe.h"
#include "../tasks/task.h"

#define AL_PAPA_MAX_SEEDS 16
#define AL_PAPA_MAX_GROUPS 4 /* per-group accuracy: groups 0, 1, 2, >= 3 */

/* ---------------------------------------------------------------- lambda ranking (papa_rank.c) */

typedef struct al_papa_rank_settings {
    int epochs, batch_size, max_examples; /* max_examples <= 0: every training example */
    float lr;                             /* AdamW, constant schedule, for the lambda logits and the probe */
    int shards;                           /* the step split in this many parts (threads on native builds) */
    int train_mode;                       /* 1: dropout in the encoder as the reference (paper preset) */
    float probe_dropout;                  /* the sequence probe's dropout */
    uint64_t mem_limit;                   /* bytes the training contexts may take (0: no limit) */
    uint64_t seed;                        /* probe initialisation, shuffling, dropout */
    int pad_rows;                         /* 1: the linear layers run on the pads too, as before docs/speed.md's
                                           * real rows (the same bits, slower; tests and benchmarks compare) */
} al_papa_rank_settings;

/* Every head MIX with its averaged constant C [NL, H, L, L], lambda logits from 0 (lambda 0.5), trained
 * jointly with a fresh probe through the frozen encoder; theta [NL * H] receives the learned logits. */
al_status al_papa_rank(al_model *model, const al_papa_inputs *train, const float *C,
                       const al_papa_rank_settings *s, const al_forward_params *params, float *theta,
                       double *final_loss, al_error *err);

/* ---------------------------------------------------------------- the sweep (papa_sweep.c) */

typedef struct al_papa_sweep_request {
    al_papa_plan_request plan;       /* constants, orders, k (n_k 0: from fractions), baselines, n_seeds */
    int n_fractions;
    double fractions[16];            /* of input-dependent heads kept; default {1, 1/2, 1/8, 1/16, 0} */
    uint64_t seeds[AL_PAPA_MAX_SEEDS];
    int L;
    al_papa_layout layout;
    int max_train, max_validation;   /* <= 0: the whole split */
    int constants_examples;          /* training examples averaged for the constants (<= 0: all used) */
    int batch_size;                  /* forward passes */
    al_papa_probe_settings probe;
    al_papa_rank_settings rank;
    int mlm;                         /* 1: the MLM score per configuration (needs an MLM head) */
    int shard_index, n_shards;       /* configurations of this shard only (n_shards <= 1: all) */
    size_t mem_limit;                /* bytes the cached features may take; 0: no limit */
    const float *constants;          /* optional: averaged constants [NL, H, L, L] computed before */
    const float *theta;              /* optional: the learned lambda logits [NL * H] from a ranking before */
    const double *importance;        /* optional: layer-normalised head importance [NL * H] for order gradient;
                                      * else measured with the probe's loss (docs/importance.md#pruning-curve) */
    int importance_examples;         /* training examples the importance averages over (<= 0: all used) */
    al_progress_fn progress;
    al_plan_progress_fn plan_progress; /* may be NULL; set, every report goes through it in place of progress, with
                                        * the configuration it belongs to: i of this run's n (docs/papa-op.md) */
    void *progress_user;
    const volatile int *cancel;
    al_threadpool *pool;             /* the forward passes' threads (NULL: one); same numbers either way */
    int pad_rows;                    /* 1: the packed passes' linear layers run on their pads too (the same bits,
                                      * slower: al_forward_params.pad_rows; the ranking's is rank.pad_rows) */
} al_papa_sweep_request;

typedef struct al_papa_run_result {
    int config;                               /* index into plan.configs */
    int seed_index;
    double score;                             /* the task's metric */
    double accuracy;                          /* accuracy over examples or labelled tokens */
    double group_accuracy[AL_PAPA_MAX_GROUPS]; /* sequence tasks with groups; NaN where a group is empty */
    int group_count[AL_PAPA_MAX_GROUPS];
} al_papa_run_result;

typedef struct al_papa_sweep_result {
    al_papa_plan plan;
    int n_runs;
    al_papa_run_result *runs;   /* this shard's runs, in (config, seed) order */
    float *theta;               /* [NL * H] learned lambda logits, NULL when no lambda order was asked */
    double rank_loss;
    double *importance, *importance_raw; /* [NL * H] when order gradient was asked: normalised and raw */
    int *orders;                /* [AL_N_ORDERS, NL * H] the replacement order of each head order */
    float *constants;           /* [NL, H, L, L] the averaged constants (NULL when only data-free kinds) */
    double *mlm_score, *mlm_accuracy; /* [n_configs]: NaN where not computed */
    int64_t mlm_tokens;
    int n_train, n_validation, truncated_train, truncated_validation;
    double seconds_constants, seconds_rank, seconds_features, seconds_probe, seconds_mlm, seconds_importance;
} al_papa_sweep_result;

al_papa_sweep_request al_papa_sweep_default_request(void);
/* How many of a configuration's seeds train side by side, one per thread (the first ones); the rest train
 * one after another with their probes' products split over the pool (docs/threads.md). */
int al_papa_seeds_side_by_side(int n_seeds, int n_threads);
/* Applies a preset ("quick" or "paper") for the task to r (the JSON op's "preset" field and bench_sweep_scale). */
al_status al_papa_sweep_preset(const char *preset, const al_task *task, al_papa_sweep_request *r, al_error *err);
extern const char *const al_papa_preset_names[]; /* "quick", "paper", NULL */
al_status al_papa_sweep_run(al_model *model, const al_task *task, const al_papa_sweep_request *req,
                            al_papa_sweep_result *out, al_error *err);
void al_papa_sweep_result_free(al_papa_sweep_result *r);

#endif
