/* deberta.h: DeBERTa-v2/v3's embedding, relative positions and disentangled attention scores
 * (docs/families.md, "DeBERTa"). forward.c, embeddings.c and attention.c call these when the family's rules
 * say so (family.h: AL_POS_RELATIVE, AL_SCORES_DISENTANGLED). Not public. */
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

/* The relative embedding rows [lo, lo + n) that any distance of a sequence of L_out reads: rel_row is monotone
 * in the distance, so they are the rows between its first and last entries. */
void al_deberta_row_range(const int32_t *rel_row, int L_out, int *lo, int *n);

/* DeBERTa's embedding of sequences [b0, b0 + n_seqs): word (+ absolute position with position_biased_input)
 * (+ token type), the projection to the hidden size when E != D, LayerNorm, times the attention mask (pads are
 * zero). sum is scratch [rows, E]. */
void al_deberta_embed(const al_model *m, const al_batch *batch, const int32_t *pos, int b0, int n_seqs, float *sum,
                      float *x);

/* Floats of per-thread scratch one head's position terms need (c2p and p2c products). */
size_t al_deberta_head_scratch(const al_config *c, int L, int L_out);
/* One sequence and head: probs [L, L] = masked softmax((QK^T + c2p + p2c) / scale). q, k point at the head's
 * first column of the sequence's first row (row stride D); pos_q, pos_k at the head's first column of this
 * layer's position projections [2 rel_span, D]; map (NULL: rows are the caller's) gives each row's position
 * in the caller's sequence of L_out, which the relative distances are measured in. Masked keys get exactly 0;
 * a pad query's row is all 0. work: al_deberta_head_scratch floats. */
void al_deberta_head_probs(const al_config *c, const float *q, const float *k, const float *pos_q, const float *pos_k,
                           const float *mask, const int32_t *map, const int32_t *rel_row, int L, int L_out, float *work,
                           float *probs);

#endif
