/* score_rule.h: an attention-score rule in one file (docs/families.md, "How to add a score rule"). A rule says
 * how one head turns its queries and keys into probabilities; the family descriptor (family.h) points at its
 * rule and every caller goes through the pointer: the forward pass (attention.c), the training forward and
 * backward (src/train/train_attention.c) and "explain one head" (src/methods/explain/head_steps.c). The head
 * policies, P V, the outputs and the threads stay the callers'. Rules live in src/model/rules/, one file each,
 * and are listed in the families' descriptors. Not public. */
#ifndef AL_MODEL_SCORE_RULE_H
#define AL_MODEL_SCORE_RULE_H

#include <stddef.h>
#include <stdint.h>

#include "model_internal.h"

/* What one layer's heads share, filled by the caller (al_score_layer_begin). */
typedef struct al_score_layer {
    const al_config *c;
    int layer;
    int window;                 /* the rule's window of the layer (rotary_window: -1 global), else -1 */
    int key_window, key_sinks;  /* causal rules: the caller's window-and-sinks rule (al_forward_params), 0: none */
    const int32_t *rel_row;     /* relative rules: the table row of each distance d = i - j at d + L_out - 1 */
    const float *pos_q, *pos_k; /* relative rules: the layer's query / key projections of the table [rows, D] */
} al_score_layer;

/* One sequence and head. */
typedef struct al_score_head {
    const float *q, *k; /* the head's first column of the sequence's first row, row stride hidden_size */
    size_t col;         /* the head's first column (into pos_q, pos_k) */
    const float *mask;  /* [L] 1 real, 0 pad */
    const int32_t *pos; /* [L] the rows' position ids */
    const int32_t *map; /* NULL, or each packed row's position in the caller's sequence of L_out */
    int L, L_out;
    float *work;        /* head_scratch floats, per thread */
} al_score_head;

/* One head for one query, step by step (head_steps.c fills it from al_head_steps_out; head_steps.h says what
 * each array holds). Positions are indices: no packing. */
typedef struct al_score_steps {
    const al_model *model;
    int layer, col, token, L;     /* token: the query token's index */
    int kv_col;                   /* the first column of the key/value head the query head reads (col without GQA) */
    const float *in;              /* [L, D] what the layer's attention reads */
    const int32_t *mask;          /* [L] */
    const int32_t *pos;           /* [L] 0, 1, ... */
    const float *q_w, *k_w, *v_w; /* the layer's projections [D, D] (a fused one split) */
    float *scratch;               /* D + dh floats */
    float *query, *keys, *values, *scores, *scaled, *mask_add, *weights; /* written */
    float *c2c, *c2p, *p2c, *rel_bucket, *excluded;                      /* written when not NULL */
    float scale;                  /* 1 / what scores are divided by */
    int window;                   /* -1 unless the rule has windows */
    double rotary_base;           /* 0 unless the rule turns queries and keys */
} al_score_steps;

typedef struct al_score_rule {
    const char *name; /* head_steps' "score_rule": "scaled_dot" */
    int terms;        /* head_steps gives the score's terms (c2c, c2p, p2c) */
    int frozen;       /* training builds no weight gradients through it (a frozen encoder only: train_ctx.c) */
    /* Refuses a config whose rule fields it cannot run, naming the family (NULL: any; model.c). */
    al_status (*check)(const al_config *c, const char *family, al_error *err);
    /* Rows of a relative-position table the scores read (0: none; the callers then keep no table). With rows:
     * prepare fills the table [rows, D] and rel_row [2 L_out - 1] once per call; range gives the rows
     * [lo, lo + n) a sequence of L_out reads, the only ones the callers project per layer. */
    int (*table_rows)(const al_config *c);
    void (*prepare)(const al_model *m, int L_out, float *table, int32_t *rel_row);
    void (*range)(const int32_t *rel_row, int L_out, int *lo, int *n);
    /* Floats of per-thread scratch one head needs (NULL: none). */
    size_t (*head_scratch)(const al_config *c, int L, int L_out);
    /* The layer's window (NULL: -1). */
    int (*window)(const al_config *c, int layer);
    /* Queries and keys as the scores read them, turned in place after the projections (rows [rows, ld], each by
     * its position id); turn_back is its backward on the gradients. NULL: left as projected. */
    void (*turn)(const al_config *c, int layer, float *q, float *k, int ld, const int32_t *pos, int rows);
    void (*turn_back)(const al_config *c, int layer, float *dq, float *dk, int ld, const int32_t *pos, int rows);
    /* One head's probabilities S [L, L] (the softmax before the head policies). */
    void (*probs)(const al_score_layer *ly, const al_score_head *hd, float *probs);
    /* What the scores are divided by (the backward's scale). */
    float (*divisor)(const al_config *c);
    /* The backward's gradients the scores send beyond dZ K / divisor and dZ^T Q / divisor (NULL: none): dZ [L, L]
     * of one sequence (map NULL) and head, g = dZ * scale, added into dq_h, dk_h (row stride hidden_size). */
    void (*extra_bwd)(const al_score_layer *ly, const al_score_head *hd, const float *dZ, float scale, float *dq_h,
                      float *dk_h);
    /* head_steps: the projections, turn, scores, mask and softmax of one query. */
    void (*steps)(al_score_steps *st);
} al_score_rule;

/* The rules (src/model/rules/). */
extern const al_score_rule al_rule_scaled_dot, al_rule_disentangled, al_rule_rotary_window, al_rule_causal_dot,
    al_rule_causal_rotary;

/* Causal rows (rules/causal_rows.c): which keys a causal query reads, in one rule the causal score rules, head_steps
 * and the key/value cache (decode.c) share: j <= i, a real key (mask, when given), pos[i] - pos[j] < window in a
 * layer with the family's window (window > 0), and, with the caller's window-and-sinks rule (recent > 0),
 * pos[i] - pos[j] < recent or pos[j] < sinks. al_causal_softmax_row is row i's softmax over its allowed keys among
 * n_keys scores in place, zeros elsewhere. */
typedef struct al_causal_keys {
    const float *mask;  /* [n_keys] 1 real, 0 pad; NULL: all real */
    const int32_t *pos; /* [n_keys] the position ids */
    int window;         /* the family's window of the layer (Qwen2's sliding window); <= 0: none */
    int recent, sinks;  /* al_forward_params' key_window and key_sinks; recent <= 0: none */
} al_causal_keys;
int al_causal_key_allowed(const al_causal_keys *keys, int i, int j);
void al_causal_softmax_row(float *row, int n_keys, int i, const al_causal_keys *keys);
/* A causal rule's keys for one head of a layer (the layer's window and the caller's rule, the head's mask and
 * positions). */
al_causal_keys al_causal_keys_of(const al_score_layer *ly, const al_score_head *hd);

/* The family's rule, and its table rows (0 without a table). */
const al_score_rule *al_score_rule_of(const al_config *c);
int al_score_table_rows(const al_config *c);
/* A layer's shared state: window from the rule; rel_row, pos_q, pos_k as given (NULL without a table). */
al_score_layer al_score_layer_begin(const al_config *c, int layer, const int32_t *rel_row, const float *pos_q,
                                    const float *pos_k);

/* Helpers the rules' steps share (rules/steps_common.c). y[c] = b[col + c] + sum_i x[i] W[(col + c) * D + i] for
 * c < dh in double (b NULL: no bias); the same slice with the forward's kernel (al_gemm_nt, then the bias in float,
 * as attention.c's projections) for rows [rows, D] of x; a dot product with the forward's kernel. */
void al_steps_linear_exact(const float *x, const float *W, const float *b, int D, int col, int dh, float *y);
void al_steps_linear_fwd(const float *x, int rows, const float *W, const float *b, int D, int col, int dh, float *y);
float al_steps_dot(const float *a, const float *b, int n);
/* Writes v at dst[j] when dst is given. */
void al_steps_put(float *dst, int j, float v);
/* The softmax over the keys not excluded (mask_add 0; the others already packed to weights' front, n_allowed of
 * them), spread back with zeros, as the forward's excluding rules. */
void al_steps_softmax_excluding(float *weights, const float *mask_add, int n_allowed, int L);
/* The plain-product rules' last step: per key j the raw and scaled products (the forward's kernel and factor
 * inv_sqrt), no relative terms, j excluded where excluded(st, j, rule) says so, then the softmax over the others. */
typedef int (*al_steps_excluded_fn)(const al_score_steps *st, int j, const void *rule);
void al_steps_plain_scores(al_score_steps *st, float inv_sqrt, al_steps_excluded_fn excluded, const void *rule);

#endif
