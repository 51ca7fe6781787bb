/* op_papa_task.h: how the papa op reads its task and its sweep settings (op_papa.c), for the ops that take
 * the same request fields (op_importance.c). Not public. */
#ifndef AL_API_OP_PAPA_TASK_H
#define AL_API_OP_PAPA_TASK_H

#include "../methods/papa_sweep.h"
#include "api_internal.h"

/* "task" | "task_jsonl" | "import" (+ "tasks_dir", "task_jsonl_name"); errors name the field. */
al_status al_api_papa_task(const cJSON *req, al_reply_builder *rb, al_task **task, al_error *err);
/* "preset" and the settings it may override ("L", "layout", "max_train", "probe", "ranking", ...). */
al_status al_api_papa_request(const cJSON *req, const al_task *task, al_papa_sweep_request *r, const char **preset,
                              al_error *err);

#endif
