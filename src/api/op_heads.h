/* op_heads.h: what the ops that measure heads over a task's examples share (head_stats, head_agreement):
 * PAPA's averaged constants and learned lambdas through the session cache the papa op fills (papa_cache.h: so
 * any of them computes them once per model, task and fields), the statistics pass over the validation
 * examples, and the reply's identity and ranking settings (the papa reply's too). Not public. */
#ifndef AL_API_OP_HEADS_H
#define AL_API_OP_HEADS_H

#include "../methods/measures/measures.h"
#include "../methods/papa/papa_sweep.h"
#include "api_internal.h"

/* The averaged constants [NL, H, L, L] of q over the first max_train (or constants_examples) examples of
 * train: the session's tensor c_name when a request left it, else averaged as a sweep averages them and
 * left under c_name. *C points at the session's copy or at *owned (the caller frees *owned); *reused
 * says which. */
al_status al_heads_constants(const al_op_ctx *ctx, const al_model *model, const al_papa_sweep_request *q,
                             const al_papa_inputs *train, const char *c_name, const float **C, float **owned,
                             int *reused, al_error *err);

/* The learned lambda logits theta [NL * H] of PAPA's ranking (docs/papa.md): the session's tensor t_name
 * (a papa sweep's or an earlier request's) or trained here as the sweep trains them (al_papa_rank on train
 * with the constants C) and left under t_name in the papa op's form (the logits, then the ranking loss). */
al_status al_heads_theta(const al_op_ctx *ctx, al_model *model, const al_papa_sweep_request *q,
                         const al_papa_inputs *train, const float *C, const char *t_name, float *theta,
                         int *reused, al_error *err);

/* The lambda a logit stands for, as the papa reply gives it: 1 / (1 + exp(-theta)). */
double al_heads_lambda(float theta);

/* The head statistics over the examples of val (docs/measures.md, "Head statistics over a dataset"): mean
 * [NL * H * AL_HS_N] the mean over examples (of those that have the statistic; NAN when none) of each
 * example's statistics, ci [same] its 95% Student-t half-width (NAN with fewer than 2), both canonical
 * (al_json_canonical). norm_mass [NL * H] (or NULL; then the pass needs attentions only): the mean over the
 * examples of each example's norm mass (al_norm_head_mass), canonical. Progress: (stage, examples done). */
al_status al_heads_stats(const al_op_ctx *ctx, const al_model *model, const al_papa_inputs *val, const float *C,
                         int batch_size, al_confidence_kind confidence, const char *stage, double *mean, double *ci,
                         double *norm_mass, al_error *err);

/* The request's "confidence" field (al_fields_confidence): "max" (the default) or "voita". */
extern const al_req_field al_fields_confidence[];
al_status al_heads_read_confidence(const al_op_ctx *ctx, al_confidence_kind *out, al_error *err);

/* The reply's identity, as the papa reply gives it: "model" (the session's id), "engine", "shape" {n_layers,
 * n_heads} and "hashes" {model, task} ("sha256:" + hex). */
void al_heads_reply_identity(al_reply_builder *rb, const char *model_id, int NL, int H, const char *model_hash,
                             const char *task_hash);

/* The ranking's settings as the replies' "config.ranking" gives them, under parent. */
void al_heads_reply_ranking(al_reply_builder *rb, cJSON *parent, const al_papa_rank_settings *rank);

#endif
