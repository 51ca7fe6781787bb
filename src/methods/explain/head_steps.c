/* head_steps.c: one head for one query token, step by step (head_steps.h, docs/head_steps.md). The
 * projections are the forward's (nn.Linear rows of q_w, k_w, v_w, or of the fused qkv_w), the score rule is
 * the family's (BERT's scaled dot product; DeBERTa's three terms of deberta_attention.c; ModernBERT's
 * rotary, windowed scores of modernbert_attention.c) and the softmax is the forward's kernel on the same
 * pre-softmax row, so the weights match src/model/attention.c to float rounding. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../kernels/kernels.h"
#include "../../model/deberta.h"
#include "../../model/family.h"
#include "../../model/head_policy.h"
#include "../../model/model_internal.h"
#include "../../model/modernbert.h"
#include "../../model/rotary.h"
#include "head_steps.h"

/* y[c] = b[col + c] + sum_i x[i] W[(col + c) * D + i] for c < dh: one head's slice of a Linear (b may be
 * NULL: no bias). */
static void head_linear(const float *x, const float *W, const float *b, int D, int col, int dh, float *y) {
    for (int c = 0; c < dh; c++) {
        const float *w = W + (size_t)(col + c) * D;
        double acc = 0.0;
        for (int i = 0; i < D; i++) acc += (double)x[i] * w[i];
        y[c] = (float)(acc + (b ? b[col + c] : 0.0f));
    }
}

/* The same slice with the forward's kernel (al_gemm_nt, then the bias in float, as attention.c's
 * project_needed_heads) for rows [rows, D] of x: DeBERTa's and ModernBERT's steps use it, so their scores
 * are the forward's to the bit where the kernel allows. */
static void head_linear_fwd(const float *x, int rows, const float *W, const float *b, int D, int col, int dh,
                            float *y) {
    al_gemm_nt(rows, dh, D, 1.0f, x, D, W + (size_t)col * D, D, y, dh, 0);
    for (int r = 0; b && r < rows; r++)
        for (int c = 0; c < dh; c++) y[(size_t)r * dh + c] += b[col + c];
}

static float dot_f(const float *a, const float *b, int n) {
    float v;
    al_gemm_nt(1, 1, n, 1.0f, a, n, b, n, &v, 1, 0);
    return v;
}

static void put(float *dst, int j, float v) {
    if (dst) dst[j] = v;
}

/* DeBERTa: the three terms of key j for the query (positions are indices: no packing here), as
 * deberta_attention.c adds them: (c2c / scale + c2p / scale) + p2c / scale. rel_in [D] and pos [dh] are
 * scratch. */
static void deberta_terms(const al_model *m, const al_layer_weights *lw, int col, int query, int j,
                          const float *q, const float *k, float *rel_in, float *pos, float *c2c, float *c2p,
                          float *p2c) {
    const al_config *c = &m->config;
    const int D = c->hidden_size, dh = c->head_dim;
    *c2c = dot_f(q, k, dh), *c2p = 0.0f, *p2c = 0.0f;
    if (!c->rel_span) return;
    const int r = al_deberta_rel_row(c, query - j);
    const float *rel = m->w.rel_emb + (size_t)r * D; /* the row's LayerNorm, as al_deberta_prepare */
    if (m->w.rel_ln_g) al_layernorm(rel, rel_in, 1, D, m->w.rel_ln_g, m->w.rel_ln_b, c->layer_norm_eps);
    else memcpy(rel_in, rel, sizeof(float) * (size_t)D);
    if (c->pos_att & 1) { /* content to position: the query against the key projection of the distance */
        head_linear_fwd(rel_in, 1, lw->k_w, lw->k_b, D, col, dh, pos);
        *c2p = dot_f(q, pos, dh);
    }
    if (c->pos_att & 2) { /* position to content: the key against the query projection of the distance */
        head_linear_fwd(rel_in, 1, lw->q_w, lw->q_b, D, col, dh, pos);
        *p2c = dot_f(k, pos, dh);
    }
}

al_status al_head_steps(const al_model *model, int layer, int head, int query, const float *x,
                        const int32_t *mask, int L, al_head_steps_out *out, al_error *err) {
    const al_config *c = &model->config;
    const int D = c->hidden_size, dh = c->head_dim;
    const al_score_rule rule = al_family_of(c)->scores;
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
    const int col = head * dh;
    const float *q_w = lw->q_w, *k_w = lw->k_w, *v_w = lw->v_w;
    if (lw->qkv_w) q_w = lw->qkv_w, k_w = q_w + (size_t)D * D, v_w = k_w + (size_t)D * D; /* fused [3D, D] */
    float *scratch = malloc(sizeof(float) * ((size_t)L * D + D + dh));
    int32_t *pos = malloc(sizeof(int32_t) * (size_t)L);
    if (!scratch || !pos) {
        free(scratch), free(pos);
        return al_err(err, AL_ERR_OOM, "head_steps: out of memory for %d tokens", L);
    }
    float *rel_in = scratch + (size_t)L * D, *pos_proj = rel_in + D;
    for (int j = 0; j < L; j++) pos[j] = j;
    const float *in = x;
    if (rule == AL_SCORES_ROTARY_WINDOW && lw->ln_attn_g) { /* pre-norm: the layer reads attn_norm(x) */
        al_layernorm(x, scratch, L, D, lw->ln_attn_g, NULL, c->layer_norm_eps);
        in = scratch;
    }
    if (rule == AL_SCORES_SCALED_DOT) {
        head_linear(in + (size_t)query * D, q_w, lw->q_b, D, col, dh, out->query);
        for (int j = 0; j < L; j++) {
            head_linear(in + (size_t)j * D, k_w, lw->k_b, D, col, dh, out->keys + (size_t)j * dh);
            head_linear(in + (size_t)j * D, v_w, lw->v_b, D, col, dh, out->values + (size_t)j * dh);
        }
    } else {
        head_linear_fwd(in + (size_t)query * D, 1, q_w, lw->q_b, D, col, dh, out->query);
        head_linear_fwd(in, L, k_w, lw->k_b, D, col, dh, out->keys);
        head_linear_fwd(in, L, v_w, lw->v_b, D, col, dh, out->values);
    }
    out->window = -1;
    out->rotary_base = 0.0;
    if (rule == AL_SCORES_ROTARY_WINDOW) { /* the same turn as al_modernbert_rotate_qk, one head */
        out->window = al_modernbert_window(c, layer);
        out->rotary_base = out->window < 0 ? c->global_rope_theta : c->local_rope_theta;
        al_rotary_apply(out->query, dh, pos + query, 1, 1, dh, out->rotary_base);
        al_rotary_apply(out->keys, dh, pos, L, 1, dh, out->rotary_base);
    }
    const float scale = rule == AL_SCORES_DISENTANGLED ? al_deberta_scale(c) : sqrtf((float)dh);
    const float inv_sqrt = 1.0f / sqrtf((float)dh); /* the forward's factor (al_head_softmax) */
    out->scale = 1.0f / scale;
    int n_allowed = 0;
    for (int j = 0; j < L; j++) {
        const float *k = out->keys + (size_t)j * dh;
        float c2c = 0.0f, c2p = 0.0f, p2c = 0.0f;
        int excluded = 0;
        if (rule == AL_SCORES_DISENTANGLED) {
            deberta_terms(model, lw, col, query, j, out->query, k, rel_in, pos_proj, &c2c, &c2p, &p2c);
            out->scores[j] = c2c + c2p + p2c;
            out->scaled[j] = c2c / scale + (c2p / scale + p2c / scale); /* deberta_attention.c's order */
            excluded = !mask[j];
        } else if (rule == AL_SCORES_SCALED_DOT) {
            double dot = 0.0;
            for (int i = 0; i < dh; i++) dot += (double)out->query[i] * k[i];
            out->scores[j] = (float)dot;
            out->scaled[j] = (float)dot * inv_sqrt;
        } else {
            out->scores[j] = dot_f(out->query, k, dh);
            al_gemm_nt(1, 1, dh, inv_sqrt, out->query, dh, k, dh, &out->scaled[j], 1, 0); /* as the forward */
            if (rule == AL_SCORES_ROTARY_WINDOW)
                excluded = !mask[j] || (out->window >= 0 && abs(pos[query] - pos[j]) > out->window);
        }
        put(out->c2c, j, c2c), put(out->c2p, j, c2p), put(out->p2c, j, p2c);
        put(out->rel_bucket, j, (float)(rule == AL_SCORES_DISENTANGLED && c->rel_span ? al_deberta_bucket(c, query - j)
                                                                                      : query - j));
        put(out->excluded, j, (float)excluded);
        if (rule == AL_SCORES_SCALED_DOT) {
            out->mask_add[j] = mask[j] ? 0.0f : AL_MASK_ADD;
            out->weights[j] = out->scaled[j] + out->mask_add[j];
        } else {
            out->mask_add[j] = excluded ? -FLT_MAX : 0.0f;
            if (!excluded) out->weights[n_allowed++] = out->scaled[j]; /* packed to the front, as the forward */
        }
    }
    if (rule == AL_SCORES_SCALED_DOT) {
        al_softmax_rows(out->weights, 1, L, L);
    } else { /* the softmax over the keys read (at least the query itself), spread back with zeros */
        al_softmax_rows(out->weights, 1, n_allowed, n_allowed);
        for (int j = L - 1; j >= 0; j--) out->weights[j] = out->mask_add[j] == 0.0f ? out->weights[--n_allowed] : 0.0f;
    }
    free(scratch), free(pos);
    for (int i = 0; i < dh; i++) {
        double acc = 0.0;
        for (int j = 0; j < L; j++) acc += (double)out->weights[j] * out->values[(size_t)j * dh + i];
        out->context[i] = (float)acc;
    }
    /* The head's columns of W_O [D, D]: output[r] = sum_i o_w[r, col + i] context[i]. */
    for (int r = 0; r < D; r++) {
        const float *w = lw->o_w + (size_t)r * D + col;
        double acc = 0.0;
        for (int i = 0; i < dh; i++) acc += (double)w[i] * out->context[i];
        out->output[r] = (float)acc;
    }
    /* Effective attention over the real tokens (exact mode, attnlab.h); pads are 0 in both parts. */
    memset(out->effective, 0, sizeof(float) * (size_t)L);
    memset(out->invisible, 0, sizeof(float) * (size_t)L);
    al_status st = al_effective_head(out->weights, 1, L, out->values, n, dh, dh, out->effective, L,
                                     &out->rank, err);
    if (st) return st;
    for (int j = 0; j < n; j++) out->invisible[j] = out->weights[j] - out->effective[j];
    return AL_OK;
}
