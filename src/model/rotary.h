/* rotary.h: rotary position embeddings (rotary.c). Not public. */
#ifndef AL_MODEL_ROTARY_H
#define AL_MODEL_ROTARY_H

#include <stdint.h>

/* Turns the first n_heads * dh columns of rows [rows, ld] of x in place, head by head (dh columns each),
 * row r by the angles of position pos[r] with the given base. dh is even. */
void al_rotary_apply(float *x, int ld, const int32_t *pos, int rows, int n_heads, int dh, double base);
/* The inverse turn (by the opposite angles). A rotation's inverse is its transpose, so this is also its
 * backward pass: the gradient wrt the unturned vectors from the gradient wrt the turned ones. */
void al_rotary_apply_inverse(float *x, int ld, const int32_t *pos, int rows, int n_heads, int dh, double base);

/* The same on the first rot (even, <= dh) columns of each head only; the others pass unturned (GPT-NeoX's
 * rotary_pct). rot = dh is al_rotary_apply, bit for bit. */
void al_rotary_apply_part(float *x, int ld, const int32_t *pos, int rows, int n_heads, int dh, int rot, double base);
void al_rotary_apply_part_inverse(float *x, int ld, const int32_t *pos, int rows, int n_heads, int dh, int rot,
                                  double base);

#endif
