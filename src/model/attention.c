/* attention.c: multi-head self-attention of one layer with the per-head hooks of METHODS.md sections 2-3.
 *
 *   STANDARD  P = softmax(Q K^T / sqrt(dh) + mask_add)           (mask_add = -10000 on pad keys, as HF)
 *   CONSTANT  P = C_hat = mask_and_normalize(C)                  (no Q, K, QK^T or softmax for the head)
 *   MIX       P = lambda * softmax(...) + (1 - lambda) * C_hat   (softmax raw, not renormalised)
 *   ZERO      P = 0                                              (no Q, K, QK^T, softmax or P V)
 *
 * A layer with at least one CONSTANT or ZERO head is "static" (PAPA's combine_static_and_dynamic_att):
 * every head's final P goes through mask_and_normalize, so pad-query rows are 0 for every head of that
 * layer (idempotent on C_hat and on 0; for MIX it only zeroes pad rows/columns, up to rounding).
 */
#include <math.h>
#include <string.h>

#include "../kernels/kernels.h"
#include "forward_internal.h"

static int head_needs_qk(const al_head_policy *policies, int h) {
    if (!policies) return 1;
    return policies[h].mode == AL_HEAD_STANDARD || policies[h].mode == AL_HEAD_MIX;
}

static int layer_is_static(const al_head_policy *policies, int H) {
    if (!policies) return 0;
    for (int h = 0; h < H; h++)
        if (policies[h].mode == AL_HEAD_CONSTANT || policies[h].mode == AL_HEAD_ZERO) return 1;
    return 0;
}

void al_fwd_mask_and_normalize(float *p, const float *mask, int L) {
    for (int i = 0; i < L; i++) {
        float *row = p + (size_t)i * L;
        if (mask[i] == 0.0f) {
            memset(row, 0, sizeof(float) * (size_t)L);
            continue;
        }
        double l1 = 0.0; /* double: the row sum must be 1 to ~1e-7 at any L */
        for (int j = 0; j < L; j++) {
            if (mask[j] == 0.0f) row[j] = 0.0f;
            l1 += fabs((double)row[j]);
        }
        double denom = l1 > AL_NORMALIZE_EPS ? l1 : AL_NORMALIZE_EPS;
        for (int j = 0; j < L; j++) row[j] = (float)((double)row[j] / denom);
    }
}

/* Q or K = x W^T + b for the heads that need them only: one GEMM per run of consecutive such heads,
 * written into the heads' columns of out [rows, D]. */
static void project_needed_heads(const al_head_policy *policies, int H, int dh, int rows, int D,
                                 const float *x, const float *W, const float *bias, float *out) {
    int h = 0;
    while (h < H) {
        if (!head_needs_qk(policies, h)) {
            h++;
            continue;
        }
        int h_end = h + 1;
        while (h_end < H && head_needs_qk(policies, h_end)) h_end++;
        int col = h * dh, n_cols = (h_end - h) * dh;
        al_gemm_nt(rows, n_cols, D, 1.0f, x, D, W + (size_t)col * D, D, out + col, D, 0);
        for (int r = 0; r < rows; r++) {
            float *o = out + (size_t)r * D + col;
            for (int c = 0; c < n_cols; c++) o[c] += bias[col + c];
        }
        h = h_end;
    }
}

/* probs [L, L] = softmax(scale * Q_h K_h^T + mask_add) for sequence rows starting at q, k (stride D). */
static void head_softmax(const float *q, const float *k, const float *mask, int L, int D, int dh,
                         float *probs) {
    al_gemm_nt(L, L, dh, 1.0f / sqrtf((float)dh), q, D, k, D, probs, L, 0);
    for (int i = 0; i < L; i++) {
        float *row = probs + (size_t)i * L;
        for (int j = 0; j < L; j++)
            if (mask[j] == 0.0f) row[j] += AL_MASK_ADD;
    }
    al_softmax_rows(probs, L, L, L);
}

void al_fwd_attention(const al_model *m, int layer, const al_head_policy *policies, const float *x,
                      const float *mask, int L, al_fwd_scratch *s, float *attn_out, float *values_out) {
    const al_config *c = &m->config;
    const al_layer_weights *lw = &m->w.layers[layer];
    const int D = c->hidden_size, H = c->n_heads, dh = c->head_dim;
    const int rows = s->n_seqs * L;
    const int is_static = layer_is_static(policies, H);

    project_needed_heads(policies, H, dh, rows, D, x, lw->q_w, lw->q_b, s->q);
    project_needed_heads(policies, H, dh, rows, D, x, lw->k_w, lw->k_b, s->k);
    al_linear(rows, D, D, x, lw->v_w, lw->v_b, s->v);

    for (int sq = 0; sq < s->n_seqs; sq++) {
        const size_t row0 = (size_t)sq * L * D; /* this sequence's first row in q, k, v, ctx */
        const float *m_seq = mask + (size_t)sq * L;
        for (int h = 0; h < H; h++) {
            const al_head_mode mode = policies ? policies[h].mode : AL_HEAD_STANDARD;
            const size_t col = (size_t)h * dh;
            float *P = s->probs;
            if (mode == AL_HEAD_STANDARD || mode == AL_HEAD_MIX)
                head_softmax(s->q + row0 + col, s->k + row0 + col, m_seq, L, D, dh, P);
            if (mode == AL_HEAD_CONSTANT) {
                memcpy(P, policies[h].constant, sizeof(float) * (size_t)L * L);
                al_fwd_mask_and_normalize(P, m_seq, L);
            } else if (mode == AL_HEAD_MIX) {
                const float lambda = policies[h].lambda;
                memcpy(s->chat, policies[h].constant, sizeof(float) * (size_t)L * L);
                al_fwd_mask_and_normalize(s->chat, m_seq, L);
                for (size_t e = 0; e < (size_t)L * L; e++)
                    P[e] = lambda * P[e] + (1.0f - lambda) * s->chat[e];
            } else if (mode == AL_HEAD_ZERO) {
                memset(P, 0, sizeof(float) * (size_t)L * L);
            }
            /* C_hat and 0 are already normalised; renormalise the heads that carry a softmax. */
            if (is_static && (mode == AL_HEAD_STANDARD || mode == AL_HEAD_MIX))
                al_fwd_mask_and_normalize(P, m_seq, L);

            float *ctx = s->ctx + row0 + col;
            if (mode == AL_HEAD_ZERO) {
                for (int i = 0; i < L; i++) memset(ctx + (size_t)i * D, 0, sizeof(float) * (size_t)dh);
            } else {
                al_gemm_nn(L, dh, L, 1.0f, P, L, s->v + row0 + col, D, ctx, D, 0);
            }
            if (attn_out)
                memcpy(attn_out + ((size_t)sq * H + h) * L * L, P, sizeof(float) * (size_t)L * L);
            if (values_out) {
                float *dst = values_out + ((size_t)sq * H + h) * L * dh;
                for (int i = 0; i < L; i++)
                    memcpy(dst + (size_t)i * dh, s->v + row0 + (size_t)i * D + col, sizeof(float) * (size_t)dh);
            }
        }
    }
}
