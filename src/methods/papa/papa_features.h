/* papa_features.h: the frozen encoder's features of one head configuration, cached as probe rows, and the probe
 * a PAPA sweep trains on them (docs/papa.md#sweeps). Below the sweep (papa_sweep.h) and gradient head importance
 * (src/methods/measures/head_importance.h), which both train that probe. */
#ifndef AL_METHODS_PAPA_FEATURES_H
#define AL_METHODS_PAPA_FEATURES_H

#include <stddef.h>
#include <stdint.h>

#include "../../attnlab.h"
#include "../../train/adamw.h"
#include "papa.h"
#include "../probes/probe.h"
#include "../tasks/task.h"

/* The encoder (eval mode, with policies, NULL: all standard) over every example of in, cached as probe rows:
 * all NL+1 hidden states, or only the embedding output when embeddings_only. */
al_status al_papa_features(const al_model *model, const al_papa_inputs *in, const al_head_policy *policies,
                           int embeddings_only, int batch_size, size_t mem_limit, const al_forward_params *params,
                           al_probe_data **out, al_error *err);

/* ---------------------------------------------------------------- the probe */

typedef struct al_papa_probe_settings {
    int epochs, batch_size;
    float lr;
    float dropout;           /* the sequence probe's dropout (BERT 0.1, RoBERTa 0) */
    al_lr_schedule schedule; /* constant (the reference) */
} al_papa_probe_settings;

/* The probe a sweep trains on a configuration's features (every seed the same shape). */
al_probe_config al_papa_probe_config(const al_model *model, const al_task *task, int L, const al_papa_probe_settings *ps,
                                     int embeddings_only);
/* How a sweep trains that probe with one seed. */
al_probe_fit_options al_papa_probe_fit_options(const al_papa_probe_settings *ps, uint64_t seed,
                                               const volatile int *cancel);

#endif
