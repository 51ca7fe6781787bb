/* attention_parts.h: what the ops that run the model share: the truncation limit a request implies,
 * its inputs (texts or ids) as examples for the batch runner (src/methods/batches/batch_runner.h), and its
 * per-head policies. Not public. */
#ifndef AL_API_ATTENTION_PARTS_H
#define AL_API_ATTENTION_PARTS_H

#include "../methods/batches/batch_runner.h"
#include "api_internal.h"

/* One sequence of the batch before padding. */
typedef struct al_api_seq {
    int n_tokens;
    int n_before_truncation; /* tokens the text had before any truncation */
    int truncated;
    al_encoding enc;         /* filled for texts; ids owned by enc */
    int32_t *raw_ids;        /* filled for "input_ids" requests (owned); in the papa layout ids, mask and type ids
                                of L positions back to back, then (for "words") each position's first_word */
} al_api_seq;

typedef struct al_api_inputs {
    int n_seqs;
    al_api_seq *seqs;
    int from_text;           /* 1: texts (or words) were tokenized; 0: ids were given */
    int from_words;          /* 1: "words" (pre-split, as a token task's example) were tokenized */
    int papa_layout;         /* 1: texts laid out as a PAPA sweep lays them out (docs/papa.md, "Input layout"): each
                                seq's raw_ids holds ids, mask and type ids of pad_to positions back to back */
    al_run_example *examples; /* [n_seqs] the sequences for al_batch_run (pointers into seqs) */
} al_api_inputs;

/* How many tokens a sequence may keep, and why: the one truncation rule of every op that runs the
 * model. The limit is the model's positions, lowered to "pad_to" (or to the size N of the policies'
 * constant matrices, which then pads the batch when "pad_to" is absent), then to "max_length". */
typedef struct al_api_limits {
    int pad_to;      /* 0: pad to the longest sequence */
    int max_tokens;  /* truncation limit */
    const char *reason; /* what set max_tokens, for the truncation warning; NULL: the user's max_length
                           (truncation is then silent) */
    char reason_buf[96];
    int papa_layout; /* 1: the "papa" layout of the attention op (needs pad_to, the sweep's L) */
    int takes_words; /* 1: the op reads "words" (pre-split word lists, a token task's examples) */
} al_api_limits;

/* pad_to, max_length: the request's fields (0: absent). const_size / const_name: the policies'
 * constant matrices (0 / NULL: none). Errors name "pad_to" or "policies". */
al_status al_api_limits_make(const al_model *model, int pad_to, int max_length, int const_size,
                             const char *const_name, al_api_limits *out, al_error *err);

/* Reads "text"/"texts"/"input_ids" (+ pairs) or, when lim->takes_words, "words", tokenizes, truncates to
 * lim->max_tokens tokens (with a warning naming lim->reason) and fills out->examples. */
al_status al_api_read_inputs(const al_op_ctx *ctx, const al_model *model, int add_special,
                             const al_api_limits *lim, al_api_inputs *out, al_error *err);
/* Fills in->examples from in->seqs (al_api_read_inputs does it; ops that build seqs themselves call it). */
al_status al_api_inputs_index(al_api_inputs *in, al_error *err);
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
