/* attention_parts.h: the pieces of the "attention" op: reading the inputs into a padded batch and
 * reading the per-head policies. Not public. */
#ifndef AL_API_ATTENTION_PARTS_H
#define AL_API_ATTENTION_PARTS_H

#include "api_internal.h"

/* One sequence of the batch before padding. */
typedef struct al_api_seq {
    int n_tokens;
    int n_before_truncation; /* tokens the text had before any truncation */
    int truncated;
    al_encoding enc;         /* filled for texts; ids owned by enc */
    int32_t *raw_ids;        /* filled for "input_ids" requests (owned) */
} al_api_seq;

typedef struct al_api_inputs {
    int n_seqs;
    al_api_seq *seqs;
    int from_text;           /* 1: texts were tokenized; 0: ids were given */
} al_api_inputs;

/* Reads "text"/"texts"/"input_ids" (+ pairs), tokenizes, truncates to `limit` tokens (0: none).
 * `limit_reason` names what set the limit, for the warning ("max_position_embeddings", "pad_to"...);
 * NULL when the user's own max_length set it (truncation is then silent). */
al_status al_api_read_inputs(const al_op_ctx *ctx, const al_model *model, int add_special,
                             int limit, const char *limit_reason, al_api_inputs *out,
                             al_error *err);
void al_api_inputs_free(al_api_inputs *in);

/* Per-head policies. */
typedef struct al_api_policy_set {
    al_head_policy *heads; /* [NL * H] */
    int const_size;        /* N of the constant matrices, 0 when none is used */
    char const_name[64];   /* the first constant tensor, for messages */
} al_api_policy_set;

/* Reads "policies" (absent: NULL heads, all standard). Constant pointers point into session tensors
 * of size [N, N] or [NL, H, N, N]; the batch must then be padded to exactly N. */
al_status al_api_read_policies(const al_op_ctx *ctx, const al_config *cfg, al_api_policy_set *out,
                               al_error *err);
void al_api_policies_free(al_api_policy_set *p);

#endif
