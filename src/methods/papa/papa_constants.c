/* papa_constants.c: the matrices a constant head uses instead of its attention (docs/papa.md#constant-matrices).
 *
 * The average is the reference's masked mean with ONE count matrix shared by every head:
 *   N[i, j] = number of examples where positions i and j are both real,
 *   C[l, h, i, j] = sum_x A_x[l, h, i, j] m_x[i] m_x[j] / N[i, j]   (0 where N = 0).
 * Rows of C are not stochastic (entries have different counts); the forward pass masks and row-normalises
 * C per example, like every data-free matrix here. */
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "papa.h"

/* the one list of the names (the JSON API's field tables publish it: src/api/request_fields.c) */
const char *const al_papa_constant_names[AL_N_CONST_KINDS + 1] = {"average", "identity", "toeplitz", "zeros", "uniform",
                                                                   "previous", "first", "first_previous",
                                                                   "first_uniform", NULL};

const char *al_papa_constant_name(al_papa_constant_kind kind) {
    return (unsigned)kind < AL_N_CONST_KINDS ? al_papa_constant_names[kind] : "?";
}

int al_papa_constant_from_name(const char *name) {
    for (int k = 0; name && k < AL_N_CONST_KINDS; k++)
        if (strcmp(name, al_papa_constant_names[k]) == 0) return k;
    return -1;
}

al_status al_papa_data_free(al_papa_constant_kind kind, int L, float *C, al_error *err) {
    if (L < 1) return al_err(err, AL_ERR_INVALID, "constants: L = %d must be >= 1", L);
    for (int i = 0; i < L; i++)
        for (int j = 0; j < L; j++) {
            float v;
            switch (kind) {
            case AL_CONST_IDENTITY: v = i == j ? 1.0f : 0.0f; break;
            case AL_CONST_TOEPLITZ: v = 1.0f / (float)(abs(i - j) + 1); break; /* harmonic decay with distance */
            case AL_CONST_ZEROS: v = 0.0f; break;
            case AL_CONST_UNIFORM: v = 1.0f; break;
            case AL_CONST_PREVIOUS: v = j == (i > 0 ? i - 1 : 0) ? 1.0f : 0.0f; break;
            case AL_CONST_FIRST: v = j == 0 ? 1.0f : 0.0f; break;
            /* the mixtures: the mean of two rows that each sum to 1 over keys 0 .. i, so this one does too */
            case AL_CONST_FIRST_PREVIOUS: v = 0.5f * (j == 0) + 0.5f * (j == (i > 0 ? i - 1 : 0)); break;
            case AL_CONST_FIRST_UNIFORM: v = j > i ? 0.0f : 0.5f * (j == 0) + 0.5f / (float)(i + 1); break;
            default:
                return al_err(err, AL_ERR_INVALID, "constants: '%s' is not a data-free matrix (identity, toeplitz, "
                              "zeros, uniform, previous, first, first_previous, first_uniform)",
                              al_papa_constant_name(kind));
            }
            C[(size_t)i * L + j] = v;
        }
    return AL_OK;
}

al_status al_papa_sums_init(al_papa_sums *s, int n_layers, int n_heads, int L, al_error *err) {
    memset(s, 0, sizeof *s);
    if (n_layers < 1 || n_heads < 1 || L < 1)
        return al_err(err, AL_ERR_INVALID, "constants: bad shape [%d, %d, %d, %d]", n_layers, n_heads, L, L);
    const size_t LL = (size_t)L * L;
    s->S = calloc((size_t)n_layers * n_heads * LL, sizeof *s->S);
    s->N = calloc(LL, sizeof *s->N);
    if (!s->S || !s->N) {
        al_papa_sums_free(s);
        return al_err(err, AL_ERR_OOM, "constants: out of memory for the sums of [%d, %d, %d, %d]", n_layers, n_heads,
                      L, L);
    }
    s->n_layers = n_layers;
    s->n_heads = n_heads;
    s->L = L;
    return AL_OK;
}

void al_papa_sums_free(al_papa_sums *s) {
    free(s->S);
    free(s->N);
    memset(s, 0, sizeof *s);
}

void al_papa_sums_add(al_papa_sums *s, const float *attentions, const int32_t *mask, int B) {
    const int L = s->L, H = s->n_heads;
    const size_t LL = (size_t)L * L;
    for (int b = 0; b < B; b++) {
        const int32_t *m = mask + (size_t)b * L;
        for (int i = 0; i < L; i++) {
            if (!m[i]) continue;
            for (int j = 0; j < L; j++)
                if (m[j]) s->N[(size_t)i * L + j] += 1.0;
        }
        for (int l = 0; l < s->n_layers; l++)
            for (int h = 0; h < H; h++) {
                const float *A = attentions + (((size_t)l * B + b) * H + h) * LL;
                double *S = s->S + ((size_t)l * H + h) * LL;
                for (int i = 0; i < L; i++) {
                    if (!m[i]) continue;
                    for (int j = 0; j < L; j++)
                        if (m[j]) S[(size_t)i * L + j] += (double)A[(size_t)i * L + j];
                }
            }
    }
    s->n_examples += B;
}

void al_papa_sums_average(const al_papa_sums *s, float *C) {
    const size_t LL = (size_t)s->L * s->L, n = (size_t)s->n_layers * s->n_heads;
    for (size_t lh = 0; lh < n; lh++)
        for (size_t e = 0; e < LL; e++) {
            double count = s->N[e];
            C[lh * LL + e] = count > 0.0 ? (float)(s->S[lh * LL + e] / count) : 0.0f;
        }
}

/* ---------------------------------------------------------------- the averaging pass */

al_status al_papa_average_constants(const al_model *model, const int32_t *ids, const int32_t *mask,
                                    const int32_t *type_ids, int n, int L, int batch_size,
                                    const al_forward_params *params, float *C, al_error *err) {
    const al_config *c = al_model_config(model);
    if (n < 1) return al_err(err, AL_ERR_INVALID, "constants: the corpus has no examples");
    if (batch_size < 1) batch_size = 8;
    if (batch_size > n) batch_size = n;
    al_papa_sums sums;
    al_status st = al_papa_sums_init(&sums, c->n_layers, c->n_heads, L, err);
    if (st) return st;
    const size_t per_batch = (size_t)c->n_layers * batch_size * c->n_heads * L * L;
    float *attn = malloc(per_batch * sizeof *attn);
    if (!attn) {
        al_papa_sums_free(&sums);
        return al_err(err, AL_ERR_OOM, "constants: out of memory for %zu MB of attention (lower batch_size)",
                      per_batch * sizeof *attn >> 20);
    }
    al_forward_params fp = al_forward_default_params(); /* every head standard: the model's own attention */
    if (params) {
        fp.cancel = params->cancel;
        fp.pool = params->pool;
        fp.skip_pads = params->skip_pads;
    }
    for (int b0 = 0; b0 < n && !st; b0 += batch_size) {
        int nb = n - b0 < batch_size ? n - b0 : batch_size;
        const size_t at = (size_t)b0 * L;
        al_batch batch = {nb, L, ids + at, mask + at, type_ids ? type_ids + at : NULL, NULL};
        al_forward_outputs out = {0};
        out.attentions = attn;
        st = al_forward(model, &batch, &fp, &out, err);
        if (!st) al_papa_sums_add(&sums, attn, mask + at, nb);
        if (!st && params && params->progress)
            params->progress(params->progress_user, "constants", (double)(b0 + nb) / n);
    }
    if (!st) al_papa_sums_average(&sums, C);
    free(attn);
    al_papa_sums_free(&sums);
    return st;
}
