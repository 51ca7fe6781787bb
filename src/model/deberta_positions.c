/* deberta_positions.c: DeBERTa-v2/v3's positions: the log-bucketed relative distances, the relative
 * embeddings' LayerNorm, and the embedding stage (no absolute positions unless position_biased_input).
 * docs/families.md, "DeBERTa", states the rules. */
#include <math.h>
#include <string.h>

#include "../kernels/kernels.h"
#include "deberta.h"
#include "family_params.h"

/* float32 throughout, as Hugging Face's make_log_bucket_position: the bucket is an integer, so only the
 * ceil's side of an integer matters; each log is libm's double log rounded to float (the correctly rounded
 * float32 log), which native and WASM builds share. */
int al_deberta_bucket(const al_config *c, int rel) {
    const int buckets = al_deberta(c)->position_buckets, max_pos = al_deberta(c)->max_relative_positions;
    if (buckets <= 0 || max_pos <= 0) return rel;
    const int mid = buckets / 2;
    const int a = rel < mid && rel > -mid ? mid - 1 : (rel < 0 ? -rel : rel);
    if (a <= mid) return rel;
    const float num = (float)log((double)((float)a / (float)mid));
    const float den = (float)log((double)(float)((double)(max_pos - 1) / (double)mid));
    const float log_pos = ceilf(num / den * (float)(mid - 1)) + (float)mid;
    return rel < 0 ? -(int)log_pos : (int)log_pos;
}

int al_deberta_rel_row(const al_config *c, int rel) {
    const int span = al_deberta(c)->rel_span;
    long long r = (long long)al_deberta_bucket(c, rel) + span;
    return r < 0 ? 0 : r > 2 * span - 1 ? 2 * span - 1 : (int)r;
}

float al_deberta_scale(const al_config *c) {
    const int terms = 1 + ((al_deberta(c)->pos_att & 1) != 0) + ((al_deberta(c)->pos_att & 2) != 0);
    return sqrtf((float)c->head_dim * (float)terms);
}

void al_deberta_prepare(const al_model *m, int L_out, float *rel, int32_t *rel_row) {
    const al_config *c = &m->config;
    const int R = 2 * al_deberta(c)->rel_span, D = c->hidden_size;
    if (m->w.rel_ln_g) al_layernorm(m->w.rel_emb, rel, R, D, m->w.rel_ln_g, m->w.rel_ln_b, c->layer_norm_eps);
    else memcpy(rel, m->w.rel_emb, sizeof(float) * (size_t)R * D);
    for (int d = -(L_out - 1); d <= L_out - 1; d++) rel_row[d + L_out - 1] = al_deberta_rel_row(c, d);
}

void al_deberta_embed(const al_model *m, const al_batch *batch, const int32_t *pos, int b0, int n_seqs, float *sum,
                      float *x) {
    const al_config *c = &m->config;
    const al_weights *w = &m->w;
    const int L = batch->seq_len, E = c->embedding_size, D = c->hidden_size, rows = n_seqs * L;
    float *out = w->emb_proj_w ? sum : x;
    for (int r = 0; r < rows; r++) {
        const size_t t = (size_t)b0 * L + r;
        const float *word = w->word_emb + (size_t)batch->input_ids[t] * E;
        const float *posv = w->pos_emb ? w->pos_emb + (size_t)pos[t] * E : NULL;
        const float *type = w->type_emb ? w->type_emb + (size_t)(batch->type_ids ? batch->type_ids[t] : 0) * E : NULL;
        float *o = out + (size_t)r * E;
        /* Hugging Face's order: (word + position) + type */
        for (int e = 0; e < E; e++) {
            float v = word[e];
            if (posv) v += posv[e];
            if (type) v += type[e];
            o[e] = v;
        }
    }
    if (w->emb_proj_w) al_linear(rows, D, E, sum, w->emb_proj_w, NULL, x);
    al_layernorm(x, x, rows, D, w->emb_ln_g, w->emb_ln_b, c->layer_norm_eps);
    for (int r = 0; batch->attention_mask && r < rows; r++)
        if (!batch->attention_mask[(size_t)b0 * L + r]) memset(x + (size_t)r * D, 0, sizeof(float) * (size_t)D);
}
