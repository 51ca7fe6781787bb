/* papa.h: PAPA (Hassid et al. 2022), the input layout and the constant matrices that replace a head's
 * attention. The rules are written out in docs/papa.md (sections "Input layout" and "Constant
 * matrices"); each function below names the section it follows. Internal to the core: the JSON ops
 * (src/api) and the CLI reach it. */
#ifndef AL_METHODS_PAPA_H
#define AL_METHODS_PAPA_H

#include <stdint.h>

#include "../../attnlab.h"

/* ---------------------------------------------------------------- input layout (docs/papa.md#input-layout) */

typedef enum al_papa_layout {
    AL_LAYOUT_PAPA = 0,      /* final [SEP] at L-1; a pair's middle [SEP] at L/2 with B after it */
    AL_LAYOUT_RIGHT_PAD = 1, /* the ordinary encoding, truncated to L and padded on the right */
} al_papa_layout;

const char *al_papa_layout_name(al_papa_layout layout); /* "papa", "right_pad" */
int al_papa_layout_from_name(const char *name);         /* -1 when unknown */
extern const char *const al_papa_layout_names[];        /* NULL-terminated */

/* One example laid out in L positions (caller-owned arrays of L). Position ids are left to the model's
 * default: BERT's array index, RoBERTa's cumulative count of non-pad ids (so its positions skip the pads
 * the PAPA layout inserts, as the reference does). */
typedef struct al_papa_example {
    int32_t *ids;        /* [L] token ids; pad id where mask is 0 */
    int32_t *mask;       /* [L] 1 real, 0 pad */
    int32_t *type_ids;   /* [L] the ORIGINAL encoding's token types position by position (not moved) */
    int32_t *first_word; /* [L] or NULL: word index where a position holds a word's first sub-token, else -1 */
    int truncated;       /* 1 when tokens were dropped to fit L */
} al_papa_example;

/* Sequence tasks: text and text_pair (may be NULL) encoded with [CLS]/[SEP] (truncated to L, longest
 * first), then laid out. first_word is filled when non-NULL (word ids of the pre-tokenised text). */
al_status al_papa_encode(const al_tokenizer *tok, al_papa_layout layout, const char *text,
                         const char *text_pair, int L, al_papa_example *out, al_error *err);
/* Token tasks: pre-split words; the PAPA layout here is the token-classification one: the first [SEP]
 * becomes padding and [SEP] is written at L-1. first_word must be non-NULL. */
al_status al_papa_encode_words(const al_tokenizer *tok, al_papa_layout layout, const char *const *words,
                               int n_words, int L, al_papa_example *out, al_error *err);

/* A task's literal "[MASK]" as the tokenizer's own mask token (RoBERTa's "<mask>"), the rule a sweep reads
 * its examples by (papa_inputs.c) and the attention op's "papa" layout follows: text with every "[MASK]"
 * replaced, or the words with each word "[MASK]" replaced (the strings not copied), malloc'd; NULL when
 * nothing needs replacing. */
char *al_papa_mask_text(const al_tokenizer *tok, const char *text);
const char **al_papa_mask_words(const al_tokenizer *tok, const char *const *words, int n);

/* ---------------------------------------------------------------- constant matrices (docs/papa.md#constant-matrices) */

typedef enum al_papa_constant_kind {
    AL_CONST_AVERAGE = 0,  /* the masked average of a corpus's attention */
    AL_CONST_IDENTITY = 1, /* each token attends to itself */
    AL_CONST_TOEPLITZ = 2, /* entry (i, j) proportional to 1 / (|i - j| + 1) */
    AL_CONST_ZEROS = 3,    /* the pruned head: zero after masking and normalising */
    AL_CONST_UNIFORM = 4,  /* every valid key alike (on a causal head: uniform over the prefix) */
    /* made for causal heads (docs/papa.md, "Causal language models"); an encoder takes the same raw rows */
    AL_CONST_PREVIOUS = 5,       /* row i on key i - 1, row 0 on itself */
    AL_CONST_FIRST = 6,          /* every row on key 0 (the sink) */
    AL_CONST_FIRST_PREVIOUS = 7, /* half first, half previous (row 0: all on 0) */
    AL_CONST_FIRST_UNIFORM = 8,  /* half first, half uniform over keys 0 .. i */
} al_papa_constant_kind;
#define AL_N_CONST_KINDS 9
/* The encoder sweep's baselines put every data-free kind up to this one on all heads (the kinds before the causal
 * ones, so an encoder's plan, and its digest, stay what they were). */
#define AL_CONST_LAST_ENCODER_BASELINE AL_CONST_UNIFORM

const char *al_papa_constant_name(al_papa_constant_kind kind); /* "average", "identity", ... */
int al_papa_constant_from_name(const char *name);              /* -1 when unknown */
extern const char *const al_papa_constant_names[AL_N_CONST_KINDS + 1]; /* NULL-terminated */

/* A data-free matrix C [L, L], raw (the forward pass masks and row-normalises it per example; on a causal head it
 * first drops the entries above the diagonal). The causal kinds' rows already sum to 1 over keys 0 .. i. */
al_status al_papa_data_free(al_papa_constant_kind kind, int L, float *C, al_error *err);

/* Running sums of the masked average: S [NL, H, L, L] and the shared count N [L, L], in double so the
 * result does not depend on how the corpus is batched. */
typedef struct al_papa_sums {
    int n_layers, n_heads, L;
    double *S;          /* [NL, H, L, L]  sum over examples of A[i, j] * m[i] * m[j] */
    double *N;          /* [L, L]         number of examples where both i and j are real */
    int64_t n_examples;
} al_papa_sums;

al_status al_papa_sums_init(al_papa_sums *s, int n_layers, int n_heads, int L, al_error *err);
void al_papa_sums_free(al_papa_sums *s);
/* Adds a batch: attentions [NL, B, H, L, L] as al_forward returns them, mask [B, L]. */
void al_papa_sums_add(al_papa_sums *s, const float *attentions, const int32_t *mask, int B);
/* C [NL, H, L, L] = S / N where N > 0, else exactly 0. */
void al_papa_sums_average(const al_papa_sums *s, float *C);

/* The averaging pass: the model (eval mode, every head standard) over n examples already laid out
 * (ids, mask, type_ids [n, L] back to back), in batches of batch_size; C [NL, H, L, L]. */
al_status al_papa_average_constants(const al_model *model, const int32_t *ids, const int32_t *mask,
                                    const int32_t *type_ids, int n, int L, int batch_size,
                                    const al_forward_params *params, float *C, al_error *err);

/* ---------------------------------------------------------------- head orders (docs/papa.md#ranking-heads-by-a-learned-weight-lambda) */

typedef enum al_papa_order {
    AL_ORDER_LAMBDA = 0,          /* ascending learned lambda over all layers: most constant-like first */
    AL_ORDER_FIRST_TO_LAST = 1,   /* layer 0 first, heads in index order within a layer */
    AL_ORDER_LAST_TO_FIRST = 2,   /* the last layer first, heads in index order within a layer */
    AL_ORDER_RANDOM = 3,          /* a seeded random permutation */
    AL_ORDER_REVERSED_LAMBDA = 4, /* descending lambda: most input-dependent first */
    AL_ORDER_GRADIENT = 5,        /* ascending gradient importance (docs/importance.md): least important first */
} al_papa_order;
#define AL_N_ORDERS 6

const char *al_papa_order_name(al_papa_order order); /* "lambda", "first_to_last", ... */
int al_papa_order_from_name(const char *name);       /* -1 when unknown */
extern const char *const al_papa_order_names[AL_N_ORDERS + 1]; /* NULL-terminated */

/* The order in which heads are replaced: out [NL * H] holds flat head indices l * H + h. theta [NL * H]
 * is needed by the two lambda orders (the learned lambda logits) and by gradient (the layer-normalised
 * importance); ties keep index order; seed by random. */
al_status al_papa_head_order(al_papa_order order, int n_layers, int n_heads, const float *theta, uint64_t seed,
                             int *out, al_error *err);
/* Every order into orders [AL_N_ORDERS, NL * H] (al_papa_head_order each): the lambda orders from theta, gradient from
 * scores; an order whose numbers are NULL (not learned, not measured) is all -1. */
al_status al_papa_all_orders(int n_layers, int n_heads, const float *theta, const float *scores, uint64_t seed,
                             int *orders, al_error *err);
/* Heads replaced for a fraction of input-dependent heads kept: NL*H - round(fraction * NL*H). */
int al_papa_heads_replaced(double fraction_kept, int n_layers, int n_heads);
/* Policies [NL * H]: the first k heads of order CONSTANT with their matrix of C [NL, H, L, L] (ZERO when
 * zero_heads), every other head STANDARD. */
void al_papa_policies(const int *order, int k, int n_layers, int n_heads, const float *C, int L, int zero_heads,
                      al_head_policy *out);

/* ---------------------------------------------------------------- MLM score (docs/papa.md#mlm-score) */

/* Masked-token examples from text lines for the MLM score: each line laid out (ids, mask, type_ids, labels
 * [n, L] back to back), with pairs[x] as its segment B when pairs and pairs[x] are not NULL, then round(15%)
 * of its real non-special tokens replaced by the mask token from al_rng(seed, line index); labels hold the
 * original id there and -100 elsewhere. */
al_status al_papa_mlm_examples(const al_tokenizer *tok, al_papa_layout layout, const char *const *lines,
                               const char *const *pairs, int n, int L, uint64_t seed, int32_t *ids, int32_t *mask,
                               int32_t *type_ids, int32_t *labels, al_error *err);

typedef struct al_papa_mlm_stats {
    double nll_sum;  /* sum over labelled positions of -log p(original token) */
    int64_t n;       /* labelled positions */
    int64_t correct; /* top-1 hits */
} al_papa_mlm_stats;

/* The model's own MLM head over the examples with the given policies (NULL: all standard), in batches.
 * The score is -nll_sum / n (negative log perplexity), accuracy correct / n. */
al_status al_papa_mlm_eval(const al_model *model, const int32_t *ids, const int32_t *mask, const int32_t *type_ids,
                           const int32_t *labels, int n, int L, int batch_size, const al_head_policy *policies,
                           const al_forward_params *params, al_papa_mlm_stats *out, al_error *err);

/* ---------------------------------------------------------------- a task's examples laid out (papa_inputs.c) */

struct al_task;

typedef struct al_papa_inputs {
    int n, L;
    int token_task;       /* 1: labels per position; 0: one label per example */
    int32_t *ids, *mask, *type_ids; /* [n, L] */
    int32_t *labels;      /* sequence tasks [n]; token tasks [n, L] with -100 where a position has none */
    int32_t *group;       /* [n] the task's subgroup per example (-1: none) */
    int n_truncated;      /* examples that lost tokens to L */
} al_papa_inputs;

/* The first max_examples (<= 0: all) examples of a task split (0 train, 1 validation) laid out in L
 * positions. A literal "[MASK]" in a sequence task's text, or a token task's word "[MASK]", is the
 * tokenizer's own mask token (RoBERTa's "<mask>"). A token task's unlabelled words get no label. */
al_status al_papa_inputs_build(const al_tokenizer *tok, const struct al_task *task, int split, int max_examples,
                               al_papa_layout layout, int L, al_papa_inputs *out, al_error *err);
void al_papa_inputs_free(al_papa_inputs *in);

/* The MLM score's examples from the first n examples (n < 0: all) of a task split (0 train, 1 validation):
 * each example's text (and pair), or its words joined, through al_papa_mlm_examples with seed; out holds
 * them as token-task inputs whose labels are the masked tokens' ids (groups -1). */
al_status al_papa_mlm_task_examples(const al_tokenizer *tok, const struct al_task *task, int split, int n,
                                    al_papa_layout layout, int L, uint64_t seed, al_papa_inputs *out, al_error *err);

#endif
