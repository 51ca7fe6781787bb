/* head_steps.h: one head of one layer taken apart for one query token, for teaching (the page's
 * "explain a head" view, docs/head_steps.md): the query and key vectors, the dot products, the
 * scaling, the mask, the softmax, the value vectors, their weighted sum (the head's context vector)
 * and its share of the attention output, plus the row's effective attention (the part the values
 * can see) and the rest (invisible to the output). Same rules and kernels as the forward pass
 * (src/model/attention.c), so the weights equal the attention the forward returns. Not public. */
#ifndef AL_METHODS_HEAD_STEPS_H
#define AL_METHODS_HEAD_STEPS_H

#include "../attnlab.h"

/* Caller-owned outputs (L: the padded length, dh: head_dim, D: hidden_size). */
typedef struct al_head_steps_out {
    float *query;     /* [dh]     q = x[query] W_q[head]^T + b_q[head] */
    float *keys;      /* [L, dh]  k_j, every position */
    float *values;    /* [L, dh]  v_j, every position (value bias included) */
    float *scores;    /* [L]      q . k_j */
    float *scaled;    /* [L]      q . k_j / sqrt(dh) */
    float *mask_add;  /* [L]      0 on real keys, -10000 on pad keys (as Hugging Face) */
    float *weights;   /* [L]      softmax(scaled + mask_add): the attention row */
    float *context;   /* [dh]     sum_j weights_j v_j: the head's output before the output projection */
    float *output;    /* [D]      W_O[:, head] context: the head's share of the attention output (no bias) */
    float *effective; /* [L]      the row projected onto col(V) over the real tokens (0 on pads) */
    float *invisible; /* [L]      weights - effective on real tokens (0 on pads): times V gives 0 */
    int rank;         /* rank of V over the real tokens */
} al_head_steps_out;

/* x: the layer's input hidden states [L, D] of one sequence; mask [L] 1 real / 0 pad (real tokens
 * first, at least one). Errors name layer, head or query when out of range. */
al_status al_head_steps(const al_model *model, int layer, int head, int query, const float *x,
                        const int32_t *mask, int L, al_head_steps_out *out, al_error *err);

#endif
