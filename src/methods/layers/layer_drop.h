/* layer_drop.h: whole attention blocks of a causal model left out (He et al. 2024; docs/decoders.md, "Dropped
 * attention blocks"): how alike each block's input and output are over a corpus, the order that drops the most alike
 * first, and the corpus's loss with blocks dropped or a layer's heads made constant (layer_drop.c). The loss is
 * lm_corpus.h's, so it agrees with the lm op. Not public. */
#ifndef AL_METHODS_LAYER_DROP_H
#define AL_METHODS_LAYER_DROP_H

#include "../../attnlab.h"
#include "../lm/lm_corpus.h"

/* cos[l] [NL]: the mean over the real tokens t of the first n_windows windows of c (0 or more than it has: all) of
 * cos(X_l[t], Y_l[t]), X_l the residual stream entering layer l and Y_l = X_l + its attention block's output (the
 * forward's al_forward_residual); in double, tokens in window order. A token whose X or Y is the zero vector counts
 * nowhere; *tokens the tokens counted. params as al_forward's (pool, cancel; its other options apply too). */
al_status al_layer_similarity(const al_model *model, const al_lm_corpus *c, int n_windows,
                              const al_forward_params *params, double *cos, long long *tokens, al_error *err);

/* order [NL]: the layers by decreasing cos (the most alike first, He et al.'s 1 - cos increasing); ties by layer. */
void al_layer_order(const double *cos, int n_layers, int *order);

/* The corpus's loss (lm_corpus.h) with the attention blocks dropped[l] != 0 left out (al_forward_params.
 * attn_dropped); NULL: none. params as al_lm_corpus_score's (its attn_dropped is replaced). */
al_status al_layer_drop_score(const al_model *model, const al_lm_corpus *c, const unsigned char *dropped,
                              const al_forward_params *params, int batch_size, al_lm_corpus_loss *out,
                              al_error *err);

/* The corpus's loss with every head of `layer` constant: head h attends with constants [H, W, W] (W = c->window; the
 * entries after the diagonal are dropped, then masked and normalised as any causal constant, docs/head_policies.md).
 * All ones gives each row the uniform distribution over its prefix; a corpus-averaged causal constant (docs/papa.md)
 * goes in here the same way. params' policies are replaced. */
al_status al_layer_constant_score(const al_model *model, const al_lm_corpus *c, int layer, const float *constants,
                                  const al_forward_params *params, int batch_size, al_lm_corpus_loss *out,
                                  al_error *err);

#endif
