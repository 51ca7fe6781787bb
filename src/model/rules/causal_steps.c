/* causal_steps.c: "explain one head" for the causal rules (score_rule.h's steps, docs/head_steps.md): the
 * forward's kernels for the projections and products, the rule's turn for one head (none for GPT-2), and the
 * causal keys (causal_rows.c) excluded as the forward excludes them. With grouped-query attention the keys and
 * values are those of the key/value head the query head shares (kv_col). */
#include <float.h>
#include <math.h>

#include "../../kernels/kernels.h"
#include "../family_params.h"
#include "../model_internal.h"
#include "../rotary.h"
#include "../score_rule.h"
#include "causal_steps.h"

/* A pad key, a later key, or one outside the window (rule: the al_causal_keys) is excluded, as causal_rows.c
 * excludes it. */
static int excluded(const al_score_steps *st, int j, const void *rule) {
    return !st->mask[j] || !al_causal_key_allowed((const al_causal_keys *)rule, st->token, j);
}

void al_causal_steps(al_score_steps *st, int window, int rot, double base) {
    const al_config *c = &st->model->config;
    const al_layer_weights *lw = &st->model->w.layers[st->layer];
    const float *q_b = lw->qkv_b ? lw->qkv_b : lw->q_b;
    const float *k_b = lw->qkv_b ? lw->qkv_b + al_attn_width(c) : lw->k_b;
    const float *v_b = lw->qkv_b ? lw->qkv_b + al_attn_width(c) + al_kv_width(c) : lw->v_b;
    const int D = c->hidden_size, dh = c->head_dim, L = st->L, query = st->token;
    const int32_t *pos = st->pos;
    al_steps_linear_fwd(st->in + (size_t)query * D, 1, st->q_w, q_b, D, st->col, dh, st->query);
    al_steps_linear_fwd(st->in, L, st->k_w, k_b, D, st->kv_col, dh, st->keys);
    al_steps_linear_fwd(st->in, L, st->v_w, v_b, D, st->kv_col, dh, st->values);
    st->window = window > 0 ? window : -1;
    st->rotary_base = rot > 0 ? base : 0.0;
    if (rot > 0) {
        al_rotary_apply_part(st->query, dh, pos + query, 1, 1, dh, rot, base);
        al_rotary_apply_part(st->keys, dh, pos, L, 1, dh, rot, base);
    }
    const float inv_sqrt = 1.0f / sqrtf((float)dh); /* the forward's factor */
    st->scale = inv_sqrt;
    const al_causal_keys keys = {NULL, pos, window, 0, 0};
    al_steps_plain_scores(st, inv_sqrt, excluded, &keys);
}
