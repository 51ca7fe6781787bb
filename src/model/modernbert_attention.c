/* modernbert_attention.c: ModernBERT's attention-score rule (AL_SCORES_ROTARY_WINDOW, docs/families.md),
 * which attention.c calls for the family; the head policies, outputs and threads stay attention.c's.
 *
 * Layer l is global when l % global_attn_every_n_layers == 0: its queries and keys turn with the global
 * rotary base and every real key is read. The other layers are local: the local base, and only keys whose
 * position is within local_attention / 2 of the query's (both sides, the query included). Pad keys are never
 * read (excluded, not given a large negative score), so a real token's row is exactly independent of the
 * padding; a row with no key left (a pad whose window holds only pads) is all zeros, never NaN. */
#include <math.h>
#include <string.h>

#include "../kernels/kernels.h"
#include "forward_internal.h"
#include "modernbert.h"
#include "rotary.h"

int al_modernbert_window(const al_config *c, int layer) {
    return layer % c->global_attn_every_n_layers == 0 ? -1 : c->local_attention / 2;
}

static double rope_base(const al_config *c, int layer) {
    return al_modernbert_window(c, layer) < 0 ? c->global_rope_theta : c->local_rope_theta;
}

void al_modernbert_rotate_qk(const al_config *c, int layer, float *q, float *k, int ld, const int32_t *pos, int rows) {
    al_rotary_apply(q, ld, pos, rows, c->n_heads, c->head_dim, rope_base(c, layer));
    al_rotary_apply(k, ld, pos, rows, c->n_heads, c->head_dim, rope_base(c, layer));
}

void al_modernbert_unrotate_qk(const al_config *c, int layer, float *dq, float *dk, int ld, const int32_t *pos,
                               int rows) {
    al_rotary_apply_inverse(dq, ld, pos, rows, c->n_heads, c->head_dim, rope_base(c, layer));
    al_rotary_apply_inverse(dk, ld, pos, rows, c->n_heads, c->head_dim, rope_base(c, layer));
}

static int key_allowed(const float *mask, const int32_t *pos, int window, int i, int j) {
    if (mask[j] == 0.0f) return 0;
    if (window < 0) return 1;
    const int32_t d = pos[i] > pos[j] ? pos[i] - pos[j] : pos[j] - pos[i];
    return d <= window;
}

void al_modernbert_softmax(const float *q, const float *k, int ld, const float *mask, const int32_t *pos,
                           int window, int L, int dh, float *probs) {
    al_gemm_nt(L, L, dh, 1.0f / sqrtf((float)dh), q, ld, k, ld, probs, L, 0);
    for (int i = 0; i < L; i++) {
        float *row = probs + (size_t)i * L;
        /* the allowed scores packed to the row's front (each moves left or stays), their softmax, then
         * spread back from the end with zeros elsewhere (each moves right or stays) */
        int n = 0;
        for (int j = 0; j < L; j++)
            if (key_allowed(mask, pos, window, i, j)) row[n++] = row[j];
        if (n > 0) al_softmax_rows(row, 1, n, n);
        for (int j = L - 1; j >= 0; j--) row[j] = key_allowed(mask, pos, window, i, j) ? row[--n] : 0.0f;
    }
}
