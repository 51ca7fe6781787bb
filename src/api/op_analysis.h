/* op_analysis.h: the effective-attention and analysis ops of the JSON API, and the runner they
 * share: texts -> padded batches of "batch_size" -> al_forward (attentions + values) -> effective
 * attention -> a per-batch callback. Not public. */
#ifndef AL_API_OP_ANALYSIS_H
#define AL_API_OP_ANALYSIS_H

#include "attention_parts.h"

al_status al_op_effective(al_op_ctx *ctx, al_error *err);      /* "effective_attention" */
al_status al_op_attention_diff(al_op_ctx *ctx, al_error *err); /* "attention_diff" */
al_status al_op_attention_stats(al_op_ctx *ctx, al_error *err);
al_status al_op_attention_patterns(al_op_ctx *ctx, al_error *err);
al_status al_op_attention_by_pos(al_op_ctx *ctx, al_error *err);
al_status al_op_attention_similarity(al_op_ctx *ctx, al_error *err);

/* Request fields every analysis op reads: "mode" ("exact" | "paper"), "average" ("exact" |
 * "paper", default: as "mode"), "pad_to", "max_length", "add_special_tokens", "batch_size". */
typedef struct al_an_opts {
    al_effective_mode mode;
    al_average average;
    int add_special, pad_to, max_length, batch_size;
} al_an_opts;

al_status al_an_read_opts(const al_op_ctx *ctx, int default_batch, al_an_opts *o, al_error *err);
/* Reads the texts (or input_ids) with the truncation limit that pad_to / max_length / the model
 * imply. */
al_status al_an_read_inputs(const al_op_ctx *ctx, const al_model *model, const al_an_opts *o,
                            al_api_inputs *in, al_error *err);
/* The usual start of an analysis op: the model, the common options, warnings for fields not in
 * `known`, then the inputs. */
al_status al_an_begin(const al_op_ctx *ctx, int default_batch, const char *const *known,
                      const al_api_model **model, al_an_opts *o, al_api_inputs *in, al_error *err);
/* The padded length: pad_to, else the longest sequence. */
int al_an_length(const al_api_inputs *in, const al_an_opts *o);

/* One batch as the callback sees it. */
typedef struct al_an_chunk {
    int first, B, L;           /* examples first .. first + B - 1 of the request */
    const int32_t *ids, *mask; /* [B, L] */
    const uint8_t *classes;    /* [B, L] al_key_classes */
    const int32_t *segments;   /* [B, L] 0/1 segment of each token, -1 special or pad */
    const float *attn, *values, *eff; /* [NL, B, H, L, L], [NL, B, H, L, dh], [NL, B, H, L, L] */
    const int *ranks;          /* [NL, B, H] */
    const float *attn_b, *eff_b; /* the second model's (al_an_run with model_b) */
} al_an_chunk;

typedef al_status (*al_an_fn)(void *user, const al_an_chunk *chunk, al_error *err);

/* Runs the batches of `in` through `model` (and `model_b` when not NULL: same layers and heads),
 * computing effective attention in o->mode, and calls fn per batch. Reports progress and honours
 * cancellation between batches. */
al_status al_an_run(const al_op_ctx *ctx, const al_model *model, const al_model *model_b,
                    const al_api_inputs *in, const al_an_opts *o, int L, al_an_fn fn, void *user,
                    al_error *err);

/* A [rows][cols] JSON array of numbers from doubles divided by `div` (div 0: left as is). */
cJSON *al_an_matrix(al_reply_builder *rb, cJSON *obj, const char *key, const double *v, int rows,
                    int cols, double div);

#endif
