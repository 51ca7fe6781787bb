/* op_analysis.h: the effective-attention and analysis ops of the JSON API and what they share: their
 * common request fields and al_an_run, the batch runner (src/methods/batches/batch_runner.h) set up for them:
 * batches of "batch_size", attentions + values + effective attention in "mode", "analysis" progress.
 * Not public. */
#ifndef AL_API_OP_ANALYSIS_H
#define AL_API_OP_ANALYSIS_H

#include "attention_parts.h"

al_status al_op_effective(al_op_ctx *ctx, al_error *err);      /* "effective_attention" */
al_status al_op_attention_diff(al_op_ctx *ctx, al_error *err); /* "attention_diff" */
al_status al_op_attention_stats(al_op_ctx *ctx, al_error *err);
al_status al_op_attention_patterns(al_op_ctx *ctx, al_error *err);
al_status al_op_attention_by_pos(al_op_ctx *ctx, al_error *err);
al_status al_op_attention_similarity(al_op_ctx *ctx, al_error *err);
al_status al_op_norm_attention(al_op_ctx *ctx, al_error *err);    /* op_measures.c */
al_status al_op_attention_rollout(al_op_ctx *ctx, al_error *err); /* op_measures.c */
al_status al_op_head_stats(al_op_ctx *ctx, al_error *err);        /* op_head_stats.c */
al_status al_op_head_agreement(al_op_ctx *ctx, al_error *err);    /* op_agreement.c */

/* Request fields every analysis op reads: "mode" ("exact" | "paper"), "average" ("exact" |
 * "paper", default: as "mode"), "pad_to", "max_length", "add_special_tokens", "batch_size". */
typedef struct al_an_opts {
    al_effective_mode mode;
    al_average average;
    int add_special, pad_to, max_length, batch_size;
} al_an_opts;

/* The analyses' shared fields (op_analysis_common.c) and their own (beside each handler). */
extern const al_req_field al_fields_an_mode[], al_fields_an_average[], al_fields_an_batch[];
extern const al_req_field al_fields_effective_own[], al_fields_by_pos_own[], al_fields_similarity_own[],
    al_fields_norm_own[], al_fields_rollout_own[], al_fields_agreement_own[];

al_status al_an_read_opts(const al_op_ctx *ctx, int default_batch, al_an_opts *o, al_error *err);
/* Reads the texts (or input_ids) with the truncation limit that pad_to / max_length / the model
 * imply (al_api_limits_make). */
al_status al_an_read_inputs(const al_op_ctx *ctx, const al_model *model, const al_an_opts *o,
                            al_api_inputs *in, al_error *err);
/* The usual start of an analysis op: the model, the common options, warnings for fields its op's tables
 * do not name, then the inputs. */
al_status al_an_begin(const al_op_ctx *ctx, int default_batch,
                      const al_api_model **model, al_an_opts *o, al_api_inputs *in, al_error *err);
/* The padded length of the run: al_batch_run_length(in->examples, in->n_seqs, o->pad_to). */
int al_an_length(const al_api_inputs *in, const al_an_opts *o);

/* Runs the batches of `in` through `model` (and `model_b` when not NULL: same layers and heads),
 * with effective attention in o->mode, and calls fn per batch (al_run_chunk: attentions, values,
 * effective, ranks; attentions_b, effective_b with model_b). Reports "analysis" progress and honours
 * cancellation between batches. */
al_status al_an_run(const al_op_ctx *ctx, const al_model *model, const al_model *model_b,
                    const al_api_inputs *in, const al_an_opts *o, al_batch_run_fn fn, void *user,
                    al_error *err);

/* The same with the runner's outputs (AL_RUN_*) and effective attention (0: none) chosen by the op. */
al_status al_an_run_outputs(const al_op_ctx *ctx, const al_model *model, const al_model *model_b,
                            const al_api_inputs *in, const al_an_opts *o, int outputs, int effective,
                            al_batch_run_fn fn, void *user, al_error *err);

/* A [rows][cols] JSON array of numbers from doubles divided by `div` (div 0: left as is). */
cJSON *al_an_matrix(al_reply_builder *rb, cJSON *obj, const char *key, const double *v, int rows,
                    int cols, double div);

#endif
