/* deberta.h: DeBERTa-v2/v3's embedding and relative positions (docs/families.md, "DeBERTa"), which embeddings.c
 * (AL_POS_RELATIVE) and the disentangled score rule (rules/rule_disentangled.c) call. Not public. */
#ifndef AL_MODEL_DEBERTA_H
#define AL_MODEL_DEBERTA_H

#include "forward_internal.h"

/* The bucket of relative position rel = i - j (query minus key), as Hugging Face's make_log_bucket_position
 * computes it in float32: within position_buckets / 2 of 0 the distance itself, beyond it a log-spaced
 * bucket reaching position_buckets / 2 - 1 more at max_relative_positions - 1; rel itself without buckets. */
int al_deberta_bucket(const al_config *c, int rel);
/* The row of the relative embeddings that distance rel reads: bucket + rel_span clamped to [0, 2 rel_span). */
int al_deberta_rel_row(const al_config *c, int rel);
/* The score scale sqrt(head_dim * (1 + number of pos_att terms)), in float32 as Hugging Face. */
float al_deberta_scale(const al_config *c);

/* Per forward call: rel [2 rel_span, D] the relative embeddings after their LayerNorm (norm_rel_ebd), and
 * rel_row [2 L_out - 1] the embedding row of each distance d = i - j at d + L_out - 1. */
void al_deberta_prepare(const al_model *m, int L_out, float *rel, int32_t *rel_row);

/* DeBERTa's embedding of sequences [b0, b0 + n_seqs): word (+ absolute position with position_biased_input)
 * (+ token type), the projection to the hidden size when E != D, LayerNorm, times the attention mask (pads are
 * zero). sum is scratch [rows, E]. */
void al_deberta_embed(const al_model *m, const al_batch *batch, const int32_t *pos, int b0, int n_seqs, float *sum,
                      float *x);

#endif
