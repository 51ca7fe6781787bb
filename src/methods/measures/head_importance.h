/* head_importance.h: gradient head importance (Michel et al. 2019; docs/importance.md). A head mask xi
 * scales every head's output; I_h is the mean over examples of |dL(x)/dxi_h| at xi = 1, with L the loss
 * of a probe trained on the full model's features, the model's own MLM loss or a causal model's next-token loss. The gradient comes from
 * the training path's lambda hook: every head MIX at lambda = 1 with a zero constant computes the
 * standard head, and dL/dlambda there is dL/dxi (src/train/train.h). */
#ifndef AL_METHODS_HEAD_IMPORTANCE_H
#define AL_METHODS_HEAD_IMPORTANCE_H

#include <stdint.h>

#include "../../attnlab.h"
#include "../papa/papa_features.h"
#include "../probes/probe.h"
#include "../tasks/task.h"

typedef enum al_importance_loss {
    AL_IMPORTANCE_PROBE = 0, /* the probe's cross-entropy on the task's labels */
    AL_IMPORTANCE_MLM = 1,   /* the model's MLM head on masked tokens of the task's text */
    AL_IMPORTANCE_LM = 2,    /* a causal model's next-token cross-entropy over the text's predicted positions */
} al_importance_loss;

const char *al_importance_loss_name(al_importance_loss loss); /* "probe", "mlm", "lm" */
int al_importance_loss_from_name(const char *name);          /* -1 when unknown */
extern const char *const al_importance_loss_names[]; /* "probe", "mlm", "lm", NULL */

typedef struct al_head_importance {
    int n_layers, n_heads;
    double *raw;        /* [NL * H] mean over examples of |dL(x)/dxi_h| */
    double *signed_sum; /* [NL * H] mean over examples of dL(x)/dxi_h (for reference: Michel's code's sign) */
    double *normalized; /* [NL * H] raw divided by the L2 norm of its layer's raw values (Michel et al.) */
    int n_examples;     /* examples that had a loss (at least one label or masked token) */
    double mean_loss;   /* mean over those examples of L(x) */
} al_head_importance;

void al_head_importance_free(al_head_importance *r);

/* The core: per example (eval mode, no dropout, one example at a time so the sum does not depend on any
 * batching or thread count), the loss L(x) and dL(x)/dxi_h for every head. Loss PROBE: in is a task's
 * inputs (labels [n] or [n, L]) and probe a probe whose config matches the model and L (any max_batch).
 * Loss MLM: in->labels [n, L] hold the original token at masked positions and AL_IGNORE_INDEX elsewhere
 * (in->token_task is ignored), probe is NULL. Loss LM (a causal model whose layers' backward is built:
 * al_train_check_family): an example's loss is the mean over its predicted positions (i and i + 1 both real, the
 * label the token at i + 1: al_clm_labels) of the next-token cross-entropy, probe is NULL and in->labels unread.
 * The examples run on params->pool's threads. */
al_status al_head_importance_measure(al_model *model, const al_papa_inputs *in, al_importance_loss loss,
                                     const al_probe *probe, const al_forward_params *params,
                                     al_head_importance *out, al_error *err);

/* The probe of the full model (every head standard), trained as a PAPA sweep trains one seed's probe
 * (features cached once, al_probe_fit with the sweep's probe settings): *out is the caller's. */
al_status al_head_importance_probe(al_model *model, const al_task *task, const al_papa_inputs *train,
                                   const al_papa_probe_settings *ps, uint64_t seed, int batch_size,
                                   size_t mem_limit, const al_forward_params *params, al_probe **out,
                                   al_error *err);

/* The probe loss's importance as a sweep measures it (docs/importance.md#pruning-curve): the full model's probe
 * (al_head_importance_probe, seeded with seed), then al_head_importance_measure over the first max_examples
 * (<= 0: all) examples of train. The head_importance op and the sweep's gradient order both call this. */
al_status al_head_importance_task(al_model *model, const al_task *task, const al_papa_inputs *train,
                                  const al_papa_probe_settings *ps, uint64_t seed, int batch_size, size_t mem_limit,
                                  int max_examples, const al_forward_params *params, al_head_importance *out,
                                  al_error *err);

#endif
