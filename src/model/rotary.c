/* rotary.c: rotary position embeddings (ModernBERT, docs/families.md; the decoders, docs/decoders.md). Pair i < dh/2 of a head's vector
 * (x[i], x[i + dh/2]) turns by the angle pos * base^(-2i/dh):
 *   x[i]        <- x[i] cos - x[i + dh/2] sin
 *   x[i + dh/2] <- x[i + dh/2] cos + x[i] sin
 * The angle, its cosine and sine are computed in double by plain arithmetic (src/core/det_math.h, no libm: its
 * last bit may differ between the native and the WebAssembly C library) and rounded to float once, so every
 * build and thread count turns the vectors by the same bits. */
#include <math.h>
#include <stddef.h>

#include "../core/det_math.h"
#include "rotary.h"

/* sign +1 turns by the angle, -1 by its opposite (the transposed rotation): negating sin is exact, so the
 * forward turn's bits do not depend on which caller asked. The first rot (even, <= dh) columns of each head turn
 * as pairs (i, i + rot/2) with the angle pos * base^(-2i/rot); the rest pass (GPT-NeoX's partial rotary). */
static void turn(float *x, int ld, const int32_t *pos, int rows, int n_heads, int dh, int rot, double base, float sign) {
    const int half = rot / 2;
    const double log_base = al_det_log(base);
    for (int i = 0; i < half; i++) {
        const double inv_freq = al_det_exp(-(double)(2 * i) / (double)rot * log_base);
        for (int r = 0; r < rows; r++) {
            double cd, sd;
            al_det_cos_sin((double)pos[r] * inv_freq, &cd, &sd);
            const float c = (float)cd, s = sign * (float)sd;
            float *row = x + (size_t)r * (size_t)ld;
            for (int h = 0; h < n_heads; h++) {
                float *v = row + (size_t)h * dh;
                const float a = v[i], b = v[i + half];
                v[i] = a * c - b * s;
                v[i + half] = b * c + a * s;
            }
        }
    }
}

void al_rotary_apply(float *x, int ld, const int32_t *pos, int rows, int n_heads, int dh, double base) {
    turn(x, ld, pos, rows, n_heads, dh, dh, base, 1.0f);
}

void al_rotary_apply_inverse(float *x, int ld, const int32_t *pos, int rows, int n_heads, int dh, double base) {
    turn(x, ld, pos, rows, n_heads, dh, dh, base, -1.0f);
}

void al_rotary_apply_part(float *x, int ld, const int32_t *pos, int rows, int n_heads, int dh, int rot, double base) {
    turn(x, ld, pos, rows, n_heads, dh, rot, base, 1.0f);
}

void al_rotary_apply_part_inverse(float *x, int ld, const int32_t *pos, int rows, int n_heads, int dh, int rot,
                                  double base) {
    turn(x, ld, pos, rows, n_heads, dh, rot, base, -1.0f);
}
