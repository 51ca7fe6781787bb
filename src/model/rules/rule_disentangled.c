/* rule_disentangled.c: DeBERTa-v2/v3's disentangled attention scores (score_rule.h; docs/families.md, "DeBERTa"):
 *
 *   S[i][j] = (Q_i . K_j  +  Q_i . Kr[r(i, j)]  +  K_j . Qr[r(i, j)]) / sqrt(dh * (1 + terms))
 *             content->content  content->position   position->content
 *
 * with Kr, Qr the layer's key and query projections of the relative embeddings and r(i, j) the embedding row
 * of the bucketed distance i - j (deberta_positions.c). The masked softmax gives masked keys exactly 0 and a
 * pad query's whole row 0 (the original implementation's XSoftmax). The head's final probabilities, the
 * per-head policies and P V are the callers', as for every rule. The relative embeddings after their LayerNorm
 * are the rule's table (deberta_positions.c prepares it); the callers project its rows with each layer's query
 * and key weights (share_att_key). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernels/kernels.h"
#include "../deberta.h"
#include "../family_params.h"
#include "../score_rule.h"

/* The relative embedding rows [lo, lo + n) that any distance of a sequence of L_out reads: rel_row is monotone
 * in the distance, so they are the rows between its first and last entries. */
static void row_range(const int32_t *rel_row, int L_out, int *lo, int *n) {
    *lo = rel_row[0];
    *n = rel_row[2 * L_out - 2] - rel_row[0] + 1;
}

static int table_rows(const al_config *c) { return 2 * al_deberta(c)->rel_span; }

/* Floats of per-thread scratch one head's position terms need (c2p and p2c products). */
static size_t head_scratch(const al_config *c, int L, int L_out) {
    if (!al_deberta(c)->rel_span) return 0;
    size_t cols = 2 * (size_t)L_out - 1;
    if (cols > 2 * (size_t)al_deberta(c)->rel_span) cols = 2 * (size_t)al_deberta(c)->rel_span;
    return 2 * (size_t)L * cols;
}

/* One sequence and head: probs [L, L] = masked softmax((QK^T + c2p + p2c) / scale). q, k point at the head's
 * first column of the sequence's first row (row stride D); pos_q, pos_k at the head's first column of this
 * layer's position projections [2 rel_span, D]; map (NULL: rows are the caller's) gives each row's position
 * in the caller's sequence of L_out, which the relative distances are measured in. Masked keys get exactly 0;
 * a pad query's row is all 0. work: head_scratch floats. */
static void head_probs(const al_config *c, const float *q, const float *k, const float *pos_q, const float *pos_k,
                           const float *mask, const int32_t *map, const int32_t *rel_row, int L, int L_out, float *work,
                           float *probs) {
    const int D = c->hidden_size, dh = c->head_dim;
    const int c2p = al_deberta(c)->rel_span && (al_deberta(c)->pos_att & 1), p2c = al_deberta(c)->rel_span && (al_deberta(c)->pos_att & 2);
    const float scale = al_deberta_scale(c);
    int lo = 0, n = 0;
    if (al_deberta(c)->rel_span) row_range(rel_row, L_out, &lo, &n);
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
            const int t = c2p || p2c ? rel_row[pi - (map ? map[j] : j) + L_out - 1] - lo : 0; /* no table: c2c */
            float pos_terms = 0.0f;
            if (c2p) pos_terms = qr[(size_t)i * n + t] / scale;
            if (p2c) pos_terms += kr[(size_t)j * n + t] / scale;
            row[j] = row[j] / scale + pos_terms;
        }
        al_softmax_rows(row, 1, L, L);
    }
}

static void probs(const al_score_layer *ly, const al_score_head *hd, float *out) {
    head_probs(ly->c, hd->q, hd->k, ly->pos_q ? ly->pos_q + hd->col : NULL, ly->pos_k ? ly->pos_k + hd->col : NULL,
               hd->mask, hd->map, ly->rel_row, hd->L, hd->L_out, hd->work, out);
}

static float divisor(const al_config *c) { return al_deberta_scale(c); }

/* The position terms' backward, dZ (one sequence and head, map NULL) -> dQ and dK: S_ij holds scale Q_i . Kr[r(i,j)]
 * (c2p) and scale K_j . Qr[r(i,j)] (p2c). The relative embeddings are frozen (src/train/train_ctx.c). */
static void extra_bwd(const al_score_layer *ly, const al_score_head *hd, const float *dZ, float scale, float *dq_h,
                      float *dk_h) {
    const al_config *c = ly->c;
    if (!ly->rel_row) return; /* no relative attention: c2c alone */
    const int L = hd->L, D = c->hidden_size, dh = c->head_dim;
    const int c2p = al_deberta(c)->pos_att & 1, p2c = al_deberta(c)->pos_att & 2;
    for (int i = 0; i < L; i++)
        for (int j = 0; j < L; j++) {
            const float g = dZ[(size_t)i * L + j] * scale;
            if (g == 0.0f) continue;
            const size_t t = (size_t)ly->rel_row[i - j + L - 1] * D + hd->col;
            for (int e = 0; c2p && e < dh; e++) dq_h[(size_t)i * D + e] += g * ly->pos_k[t + e];
            for (int e = 0; p2c && e < dh; e++) dk_h[(size_t)j * D + e] += g * ly->pos_q[t + e];
        }
}

/* head_steps: the three terms of key j for the query (positions are indices: no packing), as head_probs adds
 * them: (c2c / scale + c2p / scale) + p2c / scale. rel_in [D] and pos [dh] are scratch. */
static void terms(const al_model *m, const al_layer_weights *lw, int col, int query, int j, const float *q,
                  const float *k, float *rel_in, float *pos, float *c2c, float *c2p, float *p2c) {
    const al_config *c = &m->config;
    const int D = c->hidden_size, dh = c->head_dim;
    *c2c = al_steps_dot(q, k, dh), *c2p = 0.0f, *p2c = 0.0f;
    if (!al_deberta(c)->rel_span) return;
    const int r = al_deberta_rel_row(c, query - j);
    const float *rel = m->w.rel_emb + (size_t)r * D; /* the row's LayerNorm, as al_deberta_prepare */
    if (m->w.rel_ln_g) al_layernorm(rel, rel_in, 1, D, m->w.rel_ln_g, m->w.rel_ln_b, c->layer_norm_eps);
    else memcpy(rel_in, rel, sizeof(float) * (size_t)D);
    if (al_deberta(c)->pos_att & 1) { /* content to position: the query against the key projection of the distance */
        al_steps_linear_fwd(rel_in, 1, lw->k_w, lw->k_b, D, col, dh, pos);
        *c2p = al_steps_dot(q, pos, dh);
    }
    if (al_deberta(c)->pos_att & 2) { /* position to content: the key against the query projection of the distance */
        al_steps_linear_fwd(rel_in, 1, lw->q_w, lw->q_b, D, col, dh, pos);
        *p2c = al_steps_dot(k, pos, dh);
    }
}

/* head_steps: the forward's kernels for the projections and terms, pad keys excluded (-FLT_MAX). */
static void steps(al_score_steps *st) {
    const al_model *m = st->model;
    const al_config *c = &m->config;
    const al_layer_weights *lw = &m->w.layers[st->layer];
    const int D = c->hidden_size, dh = c->head_dim, L = st->L, query = st->token;
    al_steps_linear_fwd(st->in + (size_t)query * D, 1, st->q_w, lw->q_b, D, st->col, dh, st->query);
    al_steps_linear_fwd(st->in, L, st->k_w, lw->k_b, D, st->col, dh, st->keys);
    al_steps_linear_fwd(st->in, L, st->v_w, lw->v_b, D, st->col, dh, st->values);
    const float scale = al_deberta_scale(c);
    st->scale = 1.0f / scale;
    float *rel_in = st->scratch, *pos_proj = rel_in + D;
    int n_allowed = 0;
    for (int j = 0; j < L; j++) {
        const float *k = st->keys + (size_t)j * dh;
        float c2c, c2p, p2c;
        terms(m, lw, st->col, query, j, st->query, k, rel_in, pos_proj, &c2c, &c2p, &p2c);
        st->scores[j] = c2c + c2p + p2c;
        st->scaled[j] = c2c / scale + (c2p / scale + p2c / scale); /* head_probs' order */
        const int excluded = !st->mask[j];
        al_steps_put(st->c2c, j, c2c), al_steps_put(st->c2p, j, c2p), al_steps_put(st->p2c, j, p2c);
        al_steps_put(st->rel_bucket, j, (float)(al_deberta(c)->rel_span ? al_deberta_bucket(c, query - j) : query - j));
        al_steps_put(st->excluded, j, (float)excluded);
        st->mask_add[j] = excluded ? -FLT_MAX : 0.0f;
        if (!excluded) st->weights[n_allowed++] = st->scaled[j]; /* packed to the front, as the forward */
    }
    al_steps_softmax_excluding(st->weights, st->mask_add, n_allowed, L);
}

const al_score_rule al_rule_disentangled = {
    .name = "disentangled",
    .terms = 1,
    .frozen = 1,
    .table_rows = table_rows,
    .prepare = al_deberta_prepare,
    .range = row_range,
    .head_scratch = head_scratch,
    .probs = probs,
    .divisor = divisor,
    .extra_bwd = extra_bwd,
    .steps = steps,
};
