/* real_rows.h: running the row-wise layers (the linear layers, LayerNorm, activations, residual adds) on the
 * real tokens of a padded layout only (docs/speed.md, "Linear layers on the real rows"). Attention keeps the
 * padded layout: a real token never reads a pad (a pad key's probability is exactly 0, docs/head_policies.md),
 * so every real row's numbers are the padded pass's bit for bit, provided the pad rows hold finite values;
 * expanding writes zeros there. Rows are moved whole, in place: row_of is ascending with row_of[i] >= i. */
#ifndef AL_MODEL_REAL_ROWS_H
#define AL_MODEL_REAL_ROWS_H

#include <stddef.h>
#include <stdint.h>

/* The rows whose mask is nonzero, in order, into row_of [rows]; returns their count. */
int al_real_rows(const float *mask, int rows, int32_t *row_of);
/* Rows row_of[0..n) of buf (row_bytes each) moved to rows 0..n, in place. */
void al_rows_compact(void *buf, size_t row_bytes, const int32_t *row_of, int n);
/* The inverse: rows 0..n of buf moved back to row_of[0..n), the other rows of [0, rows) zeroed. */
void al_rows_expand(void *buf, size_t row_bytes, const int32_t *row_of, int n, int rows);
/* dst row i = src row row_of[i], for i < n (dst and src distinct). */
void al_rows_gather(void *dst, const void *src, size_t row_bytes, const int32_t *row_of, int n);

#endif
