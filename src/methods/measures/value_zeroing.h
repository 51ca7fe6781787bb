/* value_zeroing.h: value zeroing (Mohebbi et al. 2023; docs/importance.md#value-zeroing). For each layer
 * and each real token j, j's value vectors are set to zero in every head, the layer is run again from its
 * input (the layer's tail, src/model/forward_internal.h: post-LN, output projection, residual, LayerNorm,
 * feed-forward, residual, LayerNorm; pre-norm (ModernBERT), output projection and residual, then the normed
 * gated feed-forward and residual, and the final norm after the last layer), and token i's change is the cosine distance between its original and its altered
 * output. Attention weights are not recomputed: zeroing a value leaves the queries and keys alone. */
#ifndef AL_METHODS_VALUE_ZEROING_H
#define AL_METHODS_VALUE_ZEROING_H

#include "../../attnlab.h"

/* The batch's maps: distances and normalized [B, NL, L, L] (row i query, column j zeroed token), 0 where i
 * or j is padding. distances[i, j] = 1 - cos(y_i, y_i^(j)); normalized holds each row divided by its sum
 * (Mohebbi et al.'s contribution map; a row summing to 0 stays 0). normalized may be NULL. Eval mode, all
 * heads standard; params->pool's threads share the zeroed tokens (one token per task: the same bits at any
 * thread count); params->policies must be NULL. */
al_status al_value_zeroing(const al_model *model, const al_batch *batch, const al_forward_params *params,
                           float *distances, float *normalized, al_error *err);

#endif
