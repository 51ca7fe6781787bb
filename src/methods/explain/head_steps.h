/* head_steps.h: one head of one layer taken apart for one query token, for teaching (the page's
 * "explain a head" view, docs/head_steps.md): the query and key vectors, the dot products, the
 * scaling, the mask, the softmax, the value vectors, their weighted sum (the head's context vector)
 * and its share of the attention output, plus the row's effective attention (the part the values
 * can see) and the rest (invisible to the output). Same rules and kernels as the forward pass
 * (src/model/attention.c), so the weights equal the attention the forward returns. Every family's score
 * rule (src/model/rules/): BERT's scaled dot product; DeBERTa's three terms, each given; ModernBERT's
 * rotary, windowed scores, with the rotated query and keys. Not public. */
#ifndef AL_METHODS_HEAD_STEPS_H
#define AL_METHODS_HEAD_STEPS_H

#include "../../attnlab.h"

/* Caller-owned outputs (L: the padded length, dh: head_dim, D: hidden_size). */
typedef struct al_head_steps_out {
    float *query;     /* [dh]     q = x[query] W_q[head]^T + b_q[head] (ModernBERT: of the attention norm's
                                  output, then rotated by the query's position) */
    float *keys;      /* [L, dh]  k_j, every position (ModernBERT: rotated by each key's position) */
    float *values;    /* [L, dh]  v_j, every position (value bias included) */
    float *scores;    /* [L]      q . k_j (DeBERTa: c2c + c2p + p2c) */
    float *scaled;    /* [L]      scores / scale: the softmax's input before the mask (DeBERTa: each term
                                  divided by the scale, then added, as the forward) */
    float *mask_add;  /* [L]      0 on keys read; BERT-like: -10000 on pad keys (as Hugging Face); DeBERTa and
                                  ModernBERT: -FLT_MAX (float32's finfo.min) on excluded keys */
    float *weights;   /* [L]      softmax(scaled + mask_add): the attention row */
    float *context;   /* [dh]     sum_j weights_j v_j: the head's output before the output projection */
    float *output;    /* [D]      W_O[:, head] context: the head's share of the attention output (no bias) */
    float *effective; /* [L]      the row projected onto col(V) over the real tokens (0 on pads) */
    float *invisible; /* [L]      weights - effective on real tokens (0 on pads): times V gives 0 */
    /* optional (NULL: not written) */
    float *excluded;  /* [L]      1 where the rule leaves the key out (weight exactly 0: DeBERTa's and
                                  ModernBERT's pads, ModernBERT's keys outside the window), else 0 */
    float *c2c, *c2p, *p2c; /* [L] DeBERTa's terms, unscaled: q . k_j, q . Kr[r(query, j)], k_j . Qr[r(query, j)]
                                  (0 for a term pos_att_type leaves out, and in other families) */
    float *rel_bucket; /* [L]     DeBERTa: the bucketed relative distance of query - j (other families: query - j) */
    float scale;      /* what scores are divided by: 1/sqrt(dh); DeBERTa 1/sqrt(dh (1 + terms)) */
    int window;       /* ModernBERT: the layer's window (keys within window positions of the query), -1 global;
                         other families -1 */
    double rotary_base; /* ModernBERT: the layer's rotary base (global or local rope_theta); else 0 */
    int rank;         /* rank of V over the real tokens */
} al_head_steps_out;

/* x: the layer's input hidden states [L, D] of one sequence; mask [L] 1 real / 0 pad (real tokens
 * first, at least one); positions are 0 .. L-1 (the op passes no position ids). Errors name layer, head or query when out of range. */
al_status al_head_steps(const al_model *model, int layer, int head, int query, const float *x,
                        const int32_t *mask, int L, al_head_steps_out *out, al_error *err);

#endif
