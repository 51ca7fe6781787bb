/* deberta_attention.c: DeBERTa-v2/v3's disentangled attention scores for one sequence and head
 * (docs/families.md, "DeBERTa"):
 *
 *   S[i][j] = (Q_i . K_j  +  Q_i . Kr[r(i, j)]  +  K_j . Qr[r(i, j)]) / sqrt(dh * (1 + terms))
 *             content->content  content->position   position->content
 *
 * with Kr, Qr the layer's key and query projections of the relative embeddings and r(i, j) the embedding row
 * of the bucketed distance i - j (deberta_positions.c). The masked softmax gives masked keys exactly 0 and a
 * pad query's whole row 0 (the original implementation's XSoftmax). The head's final probabilities, the
 * per-head policies and P V are attention.c's, as for every family. */
#include <float.h>
#include <string.h>

#include "../kernels/kernels.h"
#include "deberta.h"

void al_deberta_row_range(const int32_t *rel_row, int L_out, int *lo, int *n) {
    *lo = rel_row[0];
    *n = rel_row[2 * L_out - 2] - rel_row[0] + 1;
}

size_t al_deberta_head_scratch(const al_config *c, int L, int L_out) {
    if (!c->rel_span) return 0;
    size_t cols = 2 * (size_t)L_out - 1;
    if (cols > 2 * (size_t)c->rel_span) cols = 2 * (size_t)c->rel_span;
    return 2 * (size_t)L * cols;
}

void al_deberta_head_probs(const al_config *c, const float *q, const float *k, const float *pos_q, const float *pos_k,
                           const float *mask, const int32_t *map, const int32_t *rel_row, int L, int L_out, float *work,
                           float *probs) {
    const int D = c->hidden_size, dh = c->head_dim;
    const int c2p = c->rel_span && (c->pos_att & 1), p2c = c->rel_span && (c->pos_att & 2);
    const float scale = al_deberta_scale(c);
    int lo = 0, n = 0;
    if (c->rel_span) al_deberta_row_range(rel_row, L_out, &lo, &n);
    float *qr = work, *kr = work + (size_t)L * n; /* [L, n]: Q_i . Kr[lo + t] and K_j . Qr[lo + t] */
    al_gemm_nt(L, L, dh, 1.0f, q, D, k, D, probs, L, 0);
    if (c2p) al_gemm_nt(L, n, dh, 1.0f, q, D, pos_k + (size_t)lo * D, D, qr, n, 0);
    if (p2c) al_gemm_nt(L, n, dh, 1.0f, k, D, pos_q + (size_t)lo * D, D, kr, n, 0);
    for (int i = 0; i < L; i++) {
        float *row = probs + (size_t)i * L;
        if (mask[i] == 0.0f) { /* a pad query attends to nothing */
            memset(row, 0, sizeof(float) * (size_t)L);
            continue;
        }
        const int pi = map ? map[i] : i;
        for (int j = 0; j < L; j++) {
            if (mask[j] == 0.0f) {
                row[j] = -FLT_MAX; /* exp gives exactly 0 (Hugging Face fills finfo.min) */
                continue;
            }
            const int t = rel_row[pi - (map ? map[j] : j) + L_out - 1] - lo;
            float pos_terms = 0.0f;
            if (c2p) pos_terms = qr[(size_t)i * n + t] / scale;
            if (p2c) pos_terms += kr[(size_t)j * n + t] / scale;
            row[j] = row[j] / scale + pos_terms;
        }
        al_softmax_rows(row, 1, L, L);
    }
}
