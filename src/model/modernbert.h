/* modernbert.h: ModernBERT's layer (modernbert_layer.c) and its attention windows (rules/rule_rotary_window.c;
 * docs/families.md). Not public. */
#ifndef AL_MODEL_MODERNBERT_H
#define AL_MODEL_MODERNBERT_H

#include "forward_internal.h"

/* The window of layer: -1 for a global layer, else how far a key's position may be from the query's. */
int al_modernbert_window(const al_config *c, int layer);
/* One pre-norm layer on one chunk (x [rows, D] updated in place), and after the last layer the final
 * norm. */
void al_modernbert_layer(const al_model *m, int l, const al_head_policy *policies, float *x, const float *mask,
                         int L, al_fwd_scratch *s, float *attn_out, float *values_out);
/* The layer after self-attention (ctx [rows, D]): x += ctx Wo, the gated feed-forward, and after the last
 * layer the final norm; al_fwd_layer_tail's pre-norm branch. tmp [rows, D], wide [rows, 2I]. */
void al_modernbert_layer_tail(const al_model *m, int l, al_threadpool *pool, const float *ctx, float *x, int rows,
                              float *tmp, float *wide);

#endif
