/* modernbert.h: ModernBERT's layer and attention-score rule (modernbert_layer.c, modernbert_attention.c;
 * docs/families.md). Not public. */
#ifndef AL_MODEL_MODERNBERT_H
#define AL_MODEL_MODERNBERT_H

#include "forward_internal.h"

/* The window of layer: -1 for a global layer, else how far a key's position may be from the query's. */
int al_modernbert_window(const al_config *c, int layer);
/* Turns the queries and keys of rows [rows, ld] by their positions with the layer's rotary base. */
void al_modernbert_rotate_qk(const al_config *c, int layer, float *q, float *k, int ld, const int32_t *pos,
                             int rows);
/* Its backward (the training path): gradients wrt the turned queries and keys -> wrt the unturned ones. */
void al_modernbert_unrotate_qk(const al_config *c, int layer, float *dq, float *dk, int ld, const int32_t *pos,
                               int rows);
/* One head's probabilities [L, L]: softmax of q k^T / sqrt(dh) over the keys that are real (mask) and,
 * window >= 0, within window positions of the query; zeros in a row that has none. */
void al_modernbert_softmax(const float *q, const float *k, int ld, const float *mask, const int32_t *pos,
                           int window, int L, int dh, float *probs);
/* One pre-norm layer on one chunk (x [rows, D] updated in place), and after the last layer the final
 * norm. */
void al_modernbert_layer(const al_model *m, int l, const al_head_policy *policies, float *x, const float *mask,
                         int L, al_fwd_scratch *s, float *attn_out, float *values_out);
/* The layer after self-attention (ctx [rows, D]): x += ctx Wo, the gated feed-forward, and after the last
 * layer the final norm; al_fwd_layer_tail's pre-norm branch. tmp [rows, D], wide [rows, 2I]. */
void al_modernbert_layer_tail(const al_model *m, int l, al_threadpool *pool, const float *ctx, float *x, int rows,
                              float *tmp, float *wide);

#endif
