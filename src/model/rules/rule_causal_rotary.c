/* rule_causal_rotary.c: the rotary decoders' attention scores (score_rule.h, docs/decoders.md: Llama, Qwen2,
 * GPT-NeoX):
 *
 *   S = softmax over the keys j <= i (and, in a windowed layer, pos_i - pos_j < window) of q_i k_j / sqrt(dh)
 *
 * with queries and keys turned by their positions (rotate-half pairs on the first rotary_dims columns of each head,
 * base rope_theta; rotary.c). Keys and values may be grouped (n_kv_heads < n_heads): the turn reaches the key heads
 * as projected, before the forward shares them out (attention.c). Future and pad keys are excluded
 * (causal_rows.c), so the key/value cache (decode.c) gives the same bits. */
#include <math.h>

#include "../../core/error.h"
#include "../../kernels/kernels.h"
#include "../family_params.h"
#include "../rotary.h"
#include "../score_rule.h"
#include "causal_steps.h"

static int window(const al_config *c, int layer) {
    const al_decoder_params *d = al_decoder(c);
    return d->window > 0 && layer >= d->window_from_layer ? d->window : -1;
}

/* Queries [rows, ld] (n_heads heads) and keys (n_kv_heads heads, the first columns of rows [rows, ld]). */
static void turn(const al_config *c, int layer, float *q, float *k, int ld, const int32_t *pos, int rows) {
    (void)layer;
    const al_decoder_params *d = al_decoder(c);
    al_rotary_apply_part(q, ld, pos, rows, c->n_heads, c->head_dim, d->rotary_dims, d->rope_theta);
    al_rotary_apply_part(k, ld, pos, rows, al_kv_heads(c), c->head_dim, d->rotary_dims, d->rope_theta);
}

static void turn_back(const al_config *c, int layer, float *dq, float *dk, int ld, const int32_t *pos, int rows) {
    (void)layer;
    const al_decoder_params *d = al_decoder(c);
    al_rotary_apply_part_inverse(dq, ld, pos, rows, c->n_heads, c->head_dim, d->rotary_dims, d->rope_theta);
    al_rotary_apply_part_inverse(dk, ld, pos, rows, al_kv_heads(c), c->head_dim, d->rotary_dims, d->rope_theta);
}

static void probs(const al_score_layer *ly, const al_score_head *hd, float *out) {
    const al_config *c = ly->c;
    const int L = hd->L, dh = c->head_dim, A = al_attn_width(c);
    const al_causal_keys keys = al_causal_keys_of(ly, hd);
    al_gemm_nt(L, L, dh, 1.0f / sqrtf((float)dh), hd->q, A, hd->k, A, out, L, 0);
    for (int i = 0; i < L; i++) al_causal_softmax_row(out + (size_t)i * L, L, i, &keys);
}

static float divisor(const al_config *c) { return sqrtf((float)c->head_dim); }

static al_status check(const al_config *c, const char *family, al_error *err) {
    const al_decoder_params *d = al_decoder(c);
    if (d->rotary_dims < 2 || d->rotary_dims % 2 != 0 || d->rotary_dims > c->head_dim || !(d->rope_theta > 1.0))
        return al_err(err, AL_ERR_INVALID,
                      "config: %s needs an even number of rotary columns in 2..head_dim (%d; got %d) and a rotary base "
                      "above 1", family, c->head_dim, d->rotary_dims);
    return AL_OK;
}

static void steps(al_score_steps *st) {
    const al_config *c = &st->model->config;
    al_causal_steps(st, window(c, st->layer), al_decoder(c)->rotary_dims, al_decoder(c)->rope_theta);
}

const al_score_rule al_rule_causal_rotary = {
    .name = "causal_rotary",
    .check = check,
    .window = window,
    .turn = turn,
    .turn_back = turn_back,
    .probs = probs,
    .divisor = divisor,
    .steps = steps,
};
