/* papa_causal.c: a causal head's constant matrix, averaged over the windows of a text (papa_lm.h, docs/papa.md
 * "Causal language models"). The average is the encoder's masked mean (papa_constants.c's al_papa_sums): with
 * right padding a real query row i sees real keys 0 .. i, so the shared count N[i, j] is the number of windows
 * reaching i for every j <= i, each row is a mean of distributions over the same keys and sums to 1 without
 * renormalising. Only the rule for rows too few windows reach is this file's own. */
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "papa_lm.h"

/* Row i of every head's matrix: the uniform prefix 1 / (i + 1) on keys 0 .. i. */
static void fill_uniform_prefix(float *C, int n_heads_total, int W, int i) {
    for (int lh = 0; lh < n_heads_total; lh++) {
        float *row = C + ((size_t)lh * W + i) * W;
        for (int j = 0; j < W; j++) row[j] = j <= i ? 1.0f / (float)(i + 1) : 0.0f;
    }
}

al_status al_papa_causal_constants(const al_model *model, const al_lm_corpus *c, int min_windows, int batch_size,
                                   const al_forward_params *params, float *C, int *rows_filled, al_error *err) {
    const al_config *cfg = al_model_config(model);
    const int W = c->window, NL = cfg->n_layers, H = cfg->n_heads;
    *rows_filled = 0;
    if (c->n_windows < 1) return al_err(err, AL_ERR_INVALID, "constants: the text has no window of 2 tokens or more");
    if (batch_size < 1) batch_size = 8;
    if (batch_size > c->n_windows) batch_size = c->n_windows;
    al_papa_sums sums;
    al_status st = al_papa_sums_init(&sums, NL, H, W, err);
    if (st) return st;
    const size_t per_batch = (size_t)NL * batch_size * H * W * W;
    float *attn = malloc(per_batch * sizeof *attn);
    int32_t *mask = malloc(sizeof(int32_t) * (size_t)batch_size * W);
    if (!attn || !mask) st = al_err(err, AL_ERR_OOM, "constants: out of memory for %zu MB of attention (lower L)",
                                    per_batch * sizeof *attn >> 20);
    al_forward_params fp = al_forward_default_params(); /* every head standard: the model's own attention */
    if (params) {
        fp.cancel = params->cancel;
        fp.pool = params->pool;
    }
    for (int w0 = 0; !st && w0 < c->n_windows; w0 += batch_size) {
        const int nb = c->n_windows - w0 < batch_size ? c->n_windows - w0 : batch_size;
        for (int b = 0; b < nb; b++)
            for (int i = 0; i < W; i++) mask[(size_t)b * W + i] = i < c->len[w0 + b];
        al_batch batch = {nb, W, c->ids + (size_t)w0 * W, mask, NULL, NULL};
        al_forward_outputs out = {0};
        out.attentions = attn;
        st = al_forward(model, &batch, &fp, &out, err);
        if (!st) al_papa_sums_add(&sums, attn, mask, nb);
        if (!st && params && params->progress)
            params->progress(params->progress_user, "constants", (double)(w0 + nb) / c->n_windows);
    }
    if (!st) {
        al_papa_sums_average(&sums, C);
        for (int i = 0; i < W; i++)
            if (sums.N[(size_t)i * W + i] < (double)(min_windows < 1 ? 1 : min_windows)) {
                fill_uniform_prefix(C, NL * H, W, i);
                ++*rows_filled;
            }
    }
    free(attn);
    free(mask);
    al_papa_sums_free(&sums);
    return st;
}
