/* rule_scaled_dot.c: BERT's attention scores (score_rule.h, docs/families.md), which RoBERTa, DistilBERT and ELECTRA
 * share:
 *
 *   S = softmax(Q K^T / sqrt(dh) + mask_add)      mask_add = -10000 on pad keys, as Hugging Face
 *
 * No position terms (the positions are in the embeddings) and no turn of Q and K. */
#include <math.h>

#include "../../kernels/kernels.h"
#include "../head_policy.h"
#include "../score_rule.h"

/* probs [L, L] for one sequence and head: q, k point at the head's first column of the sequence's first row (row
 * stride ld); mask [L] 1/0. */
static void head_softmax(const float *q, const float *k, int ld, const float *mask, int L, int dh, float *probs) {
    al_gemm_nt(L, L, dh, 1.0f / sqrtf((float)dh), q, ld, k, ld, probs, L, 0);
    /* the additive mask touches only pad columns: from the first one on, and not at all without
     * padding (the same bits as adding it everywhere it applies) */
    int j0 = 0;
    while (j0 < L && mask[j0] != 0.0f) j0++;
    for (int i = 0; j0 < L && i < L; i++) {
        float *row = probs + (size_t)i * L;
        for (int j = j0; j < L; j++)
            if (mask[j] == 0.0f) row[j] += AL_MASK_ADD;
    }
    al_softmax_rows(probs, L, L, L);
}

static void probs(const al_score_layer *ly, const al_score_head *hd, float *out) {
    head_softmax(hd->q, hd->k, ly->c->hidden_size, hd->mask, hd->L, ly->c->head_dim, out);
}

static float divisor(const al_config *c) { return sqrtf((float)c->head_dim); }

/* head_steps: the projections and the dot products in double (the forward's kernel rounds differently only in
 * the last bits), the additive mask, the softmax over the whole row. */
static void steps(al_score_steps *st) {
    const al_config *c = &st->model->config;
    const al_layer_weights *lw = &st->model->w.layers[st->layer];
    const int D = c->hidden_size, dh = c->head_dim, L = st->L, query = st->token;
    al_steps_linear_exact(st->in + (size_t)query * D, st->q_w, lw->q_b, D, st->col, dh, st->query);
    for (int j = 0; j < L; j++) {
        al_steps_linear_exact(st->in + (size_t)j * D, st->k_w, lw->k_b, D, st->col, dh, st->keys + (size_t)j * dh);
        al_steps_linear_exact(st->in + (size_t)j * D, st->v_w, lw->v_b, D, st->col, dh, st->values + (size_t)j * dh);
    }
    const float scale = sqrtf((float)dh);
    const float inv_sqrt = 1.0f / sqrtf((float)dh); /* the forward's factor (head_softmax) */
    st->scale = 1.0f / scale;
    for (int j = 0; j < L; j++) {
        const float *k = st->keys + (size_t)j * dh;
        double dot = 0.0;
        for (int i = 0; i < dh; i++) dot += (double)st->query[i] * k[i];
        st->scores[j] = (float)dot;
        st->scaled[j] = (float)dot * inv_sqrt;
        al_steps_put(st->c2c, j, 0.0f), al_steps_put(st->c2p, j, 0.0f), al_steps_put(st->p2c, j, 0.0f);
        al_steps_put(st->rel_bucket, j, (float)(query - j));
        al_steps_put(st->excluded, j, 0.0f);
        st->mask_add[j] = st->mask[j] ? 0.0f : AL_MASK_ADD;
        st->weights[j] = st->scaled[j] + st->mask_add[j];
    }
    al_softmax_rows(st->weights, 1, L, L);
}

const al_score_rule al_rule_scaled_dot = {
    .name = "scaled_dot",
    .probs = probs,
    .divisor = divisor,
    .steps = steps,
};
