/* embeddings.c: position ids and the embedding stage of the forward pass (word + token type + position,
 * LayerNorm, ELECTRA's E -> D projection), with each family's rules as Hugging Face applies them. */
#include <string.h>

#include "../core/error.h"
#include "../kernels/kernels.h"
#include "deberta.h"
#include "family.h"
#include "forward_internal.h"

al_status al_fwd_positions(const al_config *c, const al_batch *batch, int32_t *pos, al_error *err) {
    const int B = batch->n_seqs, L = batch->seq_len, P = c->max_position_embeddings;
    if (batch->position_ids) {
        for (int b = 0; b < B; b++)
            for (int i = 0; i < L; i++) {
                int32_t p = batch->position_ids[(size_t)b * L + i];
                if (p < 0 || p >= P)
                    return al_err(err, AL_ERR_INVALID,
                                  "forward: position_ids[%d][%d] = %d is outside [0, %d) "
                                  "(max_position_embeddings)", b, i, (int)p, P);
                pos[(size_t)b * L + i] = p;
            }
        return AL_OK;
    }
    /* Default positions reach L - 1 + position_offset, so L may not exceed P - position_offset. */
    if (L > P - c->position_offset) {
        if (c->position_offset)
            return al_err(err, AL_ERR_INVALID,
                          "forward: seq_len %d exceeds the model's %d positions (max_position_embeddings "
                          "%d minus the %s position offset %d)", L, P - c->position_offset, P,
                          al_arch_name(c->arch), c->position_offset);
        return al_err(err, AL_ERR_INVALID,
                      "forward: seq_len %d exceeds the model's %d positions (max_position_embeddings)",
                      L, P);
    }
    for (int b = 0; b < B; b++) {
        const int32_t *ids = batch->input_ids + (size_t)b * L;
        int32_t *row = pos + (size_t)b * L;
        if (c->position_offset) {
            /* HF create_position_ids_from_input_ids: padding_idx + cumsum(ids != pad) on real tokens,
             * padding_idx on pads (position_offset = padding_idx + 1). */
            int32_t count = 0, pad_pos = c->position_offset - 1;
            for (int i = 0; i < L; i++) {
                int real = ids[i] != c->pad_token_id;
                count += real;
                row[i] = real ? pad_pos + count : pad_pos;
            }
        } else {
            for (int i = 0; i < L; i++) row[i] = i;
        }
    }
    return AL_OK;
}

void al_fwd_embed(const al_model *m, const al_batch *batch, const int32_t *pos, int b0, int n_seqs,
                  float *wide, float *x) {
    const al_config *c = &m->config;
    const al_weights *w = &m->w;
    const int L = batch->seq_len, E = c->embedding_size, D = c->hidden_size;
    const int rows = n_seqs * L;
    if (al_family_of(c)->positions == AL_POS_RELATIVE) { /* DeBERTa's own order, projection and mask */
        al_deberta_embed(m, batch, pos, b0, n_seqs, wide, x);
        return;
    }
    const int project = w->emb_proj_w != NULL;
    float *sum = project ? wide : x; /* [rows, E] */
    for (int r = 0; r < rows; r++) {
        size_t t = (size_t)b0 * L + r; /* token index in the batch */
        const float *word = w->word_emb + (size_t)batch->input_ids[t] * E;
        const float *posv = w->pos_emb ? w->pos_emb + (size_t)pos[t] * E : NULL; /* NULL: rotary (ModernBERT) */
        const float *type = NULL;
        if (w->type_emb) type = w->type_emb + (size_t)(batch->type_ids ? batch->type_ids[t] : 0) * E;
        float *out = sum + (size_t)r * E;
        /* HF order: (word + type) + position. */
        for (int e = 0; e < E; e++) {
            float v = word[e];
            if (type) v += type[e];
            out[e] = posv ? v + posv[e] : v;
        }
    }
    if (w->emb_ln_g) al_layernorm(sum, sum, rows, E, w->emb_ln_g, w->emb_ln_b, c->layer_norm_eps); /* decoders: none */
    if (project) al_linear(rows, D, E, sum, w->emb_proj_w, w->emb_proj_b, x);
}
