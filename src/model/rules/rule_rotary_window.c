/* rule_rotary_window.c: ModernBERT's attention-score rule (score_rule.h, docs/families.md); the head policies,
 * outputs and threads stay the callers'.
 *
 * Layer l is global when l % global_attn_every_n_layers == 0: its queries and keys turn with the global
 * rotary base and every real key is read. The other layers are local: the local base, and only keys whose
 * position is within local_attention / 2 of the query's (both sides, the query included). Pad keys are never
 * read (excluded, not given a large negative score), so a real token's row is exactly independent of the
 * padding; a row with no key left (a pad whose window holds only pads) is all zeros, never NaN. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../kernels/kernels.h"
#include "../modernbert.h"
#include "../family_params.h"
#include "../rotary.h"
#include "../score_rule.h"

int al_modernbert_window(const al_config *c, int layer) {
    return layer % al_modernbert(c)->global_attn_every_n_layers == 0 ? -1 : al_modernbert(c)->local_attention / 2;
}

static double rope_base(const al_config *c, int layer) {
    return al_modernbert_window(c, layer) < 0 ? al_modernbert(c)->global_rope_theta : al_modernbert(c)->local_rope_theta;
}

/* Turns the queries and keys of rows [rows, ld] by their positions with the layer's rotary base. */
static void rotate_qk(const al_config *c, int layer, float *q, float *k, int ld, const int32_t *pos, int rows) {
    al_rotary_apply(q, ld, pos, rows, c->n_heads, c->head_dim, rope_base(c, layer));
    al_rotary_apply(k, ld, pos, rows, c->n_heads, c->head_dim, rope_base(c, layer));
}

/* Its backward (the training path): gradients wrt the turned queries and keys -> wrt the unturned ones. */
static void unrotate_qk(const al_config *c, int layer, float *dq, float *dk, int ld, const int32_t *pos, int rows) {
    al_rotary_apply_inverse(dq, ld, pos, rows, c->n_heads, c->head_dim, rope_base(c, layer));
    al_rotary_apply_inverse(dk, ld, pos, rows, c->n_heads, c->head_dim, rope_base(c, layer));
}

static int key_allowed(const float *mask, const int32_t *pos, int window, int i, int j) {
    if (mask[j] == 0.0f) return 0;
    if (window < 0) return 1;
    const int32_t d = pos[i] > pos[j] ? pos[i] - pos[j] : pos[j] - pos[i];
    return d <= window;
}

/* One head's probabilities [L, L]: softmax of q k^T / sqrt(dh) over the keys that are real (mask) and,
 * window >= 0, within window positions of the query; zeros in a row that has none. */
static void head_softmax(const float *q, const float *k, int ld, const float *mask, const int32_t *pos, int window,
                         int L, int dh, float *probs) {
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

static void probs(const al_score_layer *ly, const al_score_head *hd, float *out) {
    head_softmax(hd->q, hd->k, ly->c->hidden_size, hd->mask, hd->pos, ly->window, hd->L, ly->c->head_dim, out);
}

static float divisor(const al_config *c) { return sqrtf((float)c->head_dim); }

static al_status check(const al_config *c, const char *family, al_error *err) {
    if (al_modernbert(c)->global_attn_every_n_layers < 1 || al_modernbert(c)->local_attention < 0 || c->head_dim % 2 != 0 ||
        !(al_modernbert(c)->global_rope_theta > 1.0) || !(al_modernbert(c)->local_rope_theta > 1.0))
        return al_err(err, AL_ERR_INVALID,
                      "config: %s needs global_attn_every_n_layers >= 1, local_attention >= 0, an even head size "
                      "and rotary bases above 1", family);
    return AL_OK;
}

/* A pad key or one outside the window is excluded, as rotate_qk's mask excludes it. */
static int excluded(const al_score_steps *st, int j, const void *rule) {
    (void)rule;
    return !st->mask[j] || (st->window >= 0 && abs(st->pos[st->token] - st->pos[j]) > st->window);
}

/* head_steps: the forward's kernels for the projections and products, the same turn as rotate_qk for one head,
 * pad keys and keys outside the window excluded (-FLT_MAX). */
static void steps(al_score_steps *st) {
    const al_config *c = &st->model->config;
    const al_layer_weights *lw = &st->model->w.layers[st->layer];
    const int D = c->hidden_size, dh = c->head_dim, L = st->L, query = st->token;
    const int32_t *pos = st->pos;
    al_steps_linear_fwd(st->in + (size_t)query * D, 1, st->q_w, lw->q_b, D, st->col, dh, st->query);
    al_steps_linear_fwd(st->in, L, st->k_w, lw->k_b, D, st->col, dh, st->keys);
    al_steps_linear_fwd(st->in, L, st->v_w, lw->v_b, D, st->col, dh, st->values);
    st->window = al_modernbert_window(c, st->layer);
    st->rotary_base = rope_base(c, st->layer);
    al_rotary_apply(st->query, dh, pos + query, 1, 1, dh, st->rotary_base);
    al_rotary_apply(st->keys, dh, pos, L, 1, dh, st->rotary_base);
    const float scale = sqrtf((float)dh);
    const float inv_sqrt = 1.0f / sqrtf((float)dh); /* the forward's factor */
    st->scale = 1.0f / scale;
    al_steps_plain_scores(st, inv_sqrt, excluded, NULL);
}

const al_score_rule al_rule_rotary_window = {
    .name = "rotary_window",
    .check = check,
    .window = al_modernbert_window,
    .turn = rotate_qk,
    .turn_back = unrotate_qk,
    .probs = probs,
    .divisor = divisor,
    .steps = steps,
};
