/* papa_cache.h: PAPA's averaged constants and learned lambdas kept in the session between requests
 * (docs/papa-op.md): they depend only on the model, the task and a few fields, so a page that reruns a sweep
 * with other fractions, orders or seeds, and the head_stats and head_agreement ops, reuse them. They are
 * session tensors named by a hash of everything they depend on (al_session_clear_tensors drops them).
 * Not public. */
#ifndef AL_API_PAPA_CACHE_H
#define AL_API_PAPA_CACHE_H

#include "../methods/papa/papa_sweep.h"
#include "../methods/tasks/task.h"
#include "api_internal.h"

/* The session tensor names of the averaged constants and the learned lambdas for this model, task and
 * request (everything they depend on). */
void al_papa_cache_keys(const char *model_hash, const al_task *task, const al_papa_sweep_request *q, char c_name[64],
                        char t_name[64]);
/* The same names for a causal language model's constants [NL, H, L, L] and lambdas (the papa op's corpus sweep,
 * head_stats and head_agreement with a corpus): the model, the averaged text's hash and the fields they depend on. */
void al_papa_lm_cache_keys(const char *model_hash, const char *averaged_hash, const al_papa_sweep_request *q,
                           int min_windows, char c_name[64], char t_name[64]);
/* Keeps data under name unless the session has it already. */
void al_papa_cache_put(al_session *session, const char *name, int ndim, const int64_t *shape, const float *data);

#endif
