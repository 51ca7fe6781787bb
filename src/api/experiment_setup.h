/* experiment_setup.h: one experiment over a task, set up as the papa, head_importance, head_stats and
 * head_agreement ops set it up (docs/papa-op.md): the task ("task" + "tasks_dir", "task_jsonl" +
 * "task_jsonl_name", or "import"), the preset and every sweep field read once into one
 * al_papa_sweep_request, the checks made before the first pass, the task's inputs as a sweep lays them
 * out, and the session names of PAPA's averaged constants and learned lambdas (papa_cache.h). Each op
 * keeps its own fields, its known list and its reply. Not public. */
#ifndef AL_API_EXPERIMENT_SETUP_H
#define AL_API_EXPERIMENT_SETUP_H

#include "../methods/papa/papa_sweep.h"
#include "../methods/tasks/task.h"
#include "api_internal.h"

typedef struct al_experiment {
    const al_api_model *m;      /* the request's "model" (al_experiment_open) */
    al_task *task;              /* owned */
    al_papa_sweep_request q;    /* the preset's values, then every field the request gives */
    const char *preset;         /* the request's "preset", or "quick" */
    al_papa_inputs train, val;  /* al_experiment_inputs: laid out as the sweep lays them out */
    char model_hash[65];        /* al_experiment_cache_names: the model's content hash (hex) */
    char c_name[64], t_name[64]; /* ... and the session names of the constants and the lambdas */
} al_experiment;

/* The model ("model"); when who is not NULL, a model without a tokenizer is refused ("<who>: model '<id>'
 * has no tokenizer to read a task with") before the task is read; then al_experiment_read. */
al_status al_experiment_open(al_op_ctx *ctx, const char *who, al_experiment *x, al_error *err);

/* The task, then "preset" and every sweep field (for an op that reads fields of its own between the model
 * and the task). On failure nothing is held. x is zeroed first, but for x->m. */
al_status al_experiment_read(al_op_ctx *ctx, al_experiment *x, al_error *err);

/* Every sweep field of req into q without a task (no preset: al_papa_sweep_default_request's values first), for
 * the papa op on a language model's corpus (op_papa_lm.c). */
al_status al_experiment_read_fields(const cJSON *req, al_papa_sweep_request *q, al_error *err);

/* The sequence length fits the model: "request: field 'L' = <L> must be in [4, <max>] for this model". */
al_status al_experiment_check_length(const al_experiment *x, al_error *err);

/* The training inputs, and with validation the validation inputs (refused when the task has none: "<who>:
 * task '<id>' has no validation examples"), laid out as the sweep lays them out; for a causal model as a language
 * model reads them (al_lm_task_inputs: right padded, x->q.layout set to right_pad; a pair task is refused). */
al_status al_experiment_inputs(al_experiment *x, int validation, const char *who, al_error *err);

/* The model's content hash and the session names of the averaged constants and the learned lambdas for
 * this model, task and fields (papa_cache.h). */
void al_experiment_cache_names(al_experiment *x);

/* The task and the inputs (not the model: the session's). */
void al_experiment_free(al_experiment *x);

#endif
