/* op_papa.h: what the papa op shares with the ops that read a task the way a sweep does (head_stats,
 * op_head_stats.c): the task fields, the request's presets and fields, and the session cache of the
 * averaged constant matrices (docs/papa-op.md). Not public. */
#ifndef AL_API_OP_PAPA_H
#define AL_API_OP_PAPA_H

#include "../methods/papa/papa_sweep.h"
#include "../methods/tasks/task.h"
#include "api_internal.h"

/* The task of "task" (+ "tasks_dir"), "task_jsonl" (+ "task_jsonl_name") or "import". */
al_status al_papa_load_task(const cJSON *req, al_reply_builder *rb, al_task **task, al_error *err);
/* "preset" first, then every field a papa request may give. */
al_status al_papa_read_request(const cJSON *req, const al_task *task, al_papa_sweep_request *r, const char **preset,
                               al_error *err);
/* The session tensor names of the averaged constants and the learned lambdas for this model, task and
 * request (everything they depend on). */
void al_papa_cache_keys(const char *model_hash, const al_task *task, const al_papa_sweep_request *q, char c_name[64],
                        char t_name[64]);
/* Keeps data under name unless the session has it already. */
void al_papa_cache_put(al_session *session, const char *name, int ndim, const int64_t *shape, const float *data);

#endif
