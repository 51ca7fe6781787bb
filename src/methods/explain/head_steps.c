/* head_steps.c: one head for one query token, step by step (head_steps.h, docs/head_steps.md). The
 * projections are the forward's (nn.Linear rows of q_w, k_w, v_w, or of the fused qkv_w); the scores, mask and
 * softmax are the family's score rule's steps (src/model/score_rule.h: BERT's scaled dot product, DeBERTa's
 * three terms, ModernBERT's rotary, windowed scores), with the forward's kernel on the same pre-softmax row, so
 * the weights match src/model/attention.c to float rounding. */
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../kernels/kernels.h"
#include "../../model/layer_rule.h"
#include "../../model/family_params.h"
#include "../../model/model_internal.h"
#include "../../model/score_rule.h"
#include "head_steps.h"

al_status al_head_steps(const al_model *model, int layer, int head, int query, const float *x,
                        const int32_t *mask, int L, al_head_steps_out *out, al_error *err) {
    const al_config *c = &model->config;
    const int D = c->hidden_size, dh = c->head_dim;
    if (layer < 0 || layer >= c->n_layers)
        return al_err(err, AL_ERR_INVALID, "head_steps: field 'layer': %d is outside 0..%d", layer,
                      c->n_layers - 1);
    if (head < 0 || head >= c->n_heads)
        return al_err(err, AL_ERR_INVALID, "head_steps: field 'head': %d is outside 0..%d", head,
                      c->n_heads - 1);
    int n = 0;
    while (n < L && mask[n]) n++;
    if (query < 0 || query >= n)
        return al_err(err, AL_ERR_INVALID, "head_steps: field 'query': %d is outside the %d real tokens 0..%d",
                      query, n, n - 1);
    const al_layer_weights *lw = &model->w.layers[layer];
    /* A: the heads' width (D but in a decoder whose head_dim says otherwise); a query head reads the key/value head
     * it shares under grouped-query attention (family_params.h) */
    const int A = al_attn_width(c), KVW = al_kv_width(c), col = head * dh;
    const int kv_col = head / (c->n_heads / al_kv_heads(c)) * dh;
    const float *q_w = lw->q_w, *k_w = lw->k_w, *v_w = lw->v_w;
    if (lw->qkv_w) q_w = lw->qkv_w, k_w = q_w + (size_t)A * D, v_w = k_w + (size_t)KVW * D; /* fused [A + 2 KVW, D] */
    float *scratch = malloc(sizeof(float) * ((size_t)L * D + D + dh));
    int32_t *pos = malloc(sizeof(int32_t) * (size_t)L);
    if (!scratch || !pos) {
        free(scratch), free(pos);
        return al_err(err, AL_ERR_OOM, "head_steps: out of memory for %d tokens", L);
    }
    for (int j = 0; j < L; j++) pos[j] = j;
    const float *in = x;
    if (al_model_is_causal(model)) { /* a decoder's attention reads its norm of x (rules/layer_decoder.c) */
        al_dec_attn_input(model, layer, x, scratch, L);
        in = scratch;
    } else if (al_layer_rule_of(c)->pre_norm && lw->ln_attn_g) { /* pre-norm: the attention reads attn_norm(x) */
        al_layernorm(x, scratch, L, D, lw->ln_attn_g, NULL, c->layer_norm_eps);
        in = scratch;
    }
    /* the score rule's steps (src/model/rules/): projections, turn, scores, mask and softmax */
    al_score_steps steps = {model, layer, col, query, L, kv_col, in, mask, pos, q_w, k_w, v_w, scratch + (size_t)L * D,
                         out->query, out->keys, out->values, out->scores, out->scaled, out->mask_add, out->weights,
                         out->c2c, out->c2p, out->p2c, out->rel_bucket, out->excluded, 0.0f, -1, 0.0};
    al_score_rule_of(c)->steps(&steps);
    out->scale = steps.scale;
    out->window = steps.window;
    out->rotary_base = steps.rotary_base;
    free(scratch), free(pos);
    for (int i = 0; i < dh; i++) {
        double acc = 0.0;
        for (int j = 0; j < L; j++) acc += (double)out->weights[j] * out->values[(size_t)j * dh + i];
        out->context[i] = (float)acc;
    }
    /* The head's columns of W_O [D, A]: output[r] = sum_i o_w[r, col + i] context[i]. */
    for (int r = 0; r < D; r++) {
        const float *w = lw->o_w + (size_t)r * A + col;
        double acc = 0.0;
        for (int i = 0; i < dh; i++) acc += (double)w[i] * out->context[i];
        out->output[r] = (float)acc;
    }
    /* Effective attention over the real tokens (exact mode, attnlab.h); pads are 0 in both parts. */
    memset(out->effective, 0, sizeof(float) * (size_t)L);
    memset(out->invisible, 0, sizeof(float) * (size_t)L);
    /* a causal query reads only the values of tokens <= it (docs/effective.md, "Causal heads") */
    const int n_eff = al_model_is_causal(model) ? query + 1 : n;
    al_status st = al_effective_head(out->weights, 1, L, out->values, n_eff, dh, dh, out->effective, L,
                                     &out->rank, err);
    if (st) return st;
    for (int j = 0; j < n_eff; j++) out->invisible[j] = out->weights[j] - out->effective[j];
    return AL_OK;
}
