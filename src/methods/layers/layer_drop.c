/* layer_drop.c: attention blocks left out by similarity, and layers made constant (layer_drop.h). */
#include "layer_drop.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../model/forward_internal.h"

al_status al_layer_similarity(const al_model *model, const al_lm_corpus *c, int n_windows,
                              const al_forward_params *params, double *cos, long long *tokens, al_error *err) {
    const al_config *cfg = al_model_config(model);
    const int NL = cfg->n_layers, D = cfg->hidden_size, W = c->window;
    const int n_win = n_windows > 0 && n_windows < c->n_windows ? n_windows : c->n_windows;
    memset(cos, 0, sizeof(double) * (size_t)NL);
    *tokens = 0;
    const size_t layer = (size_t)W * D; /* one window at a time: [1, len, D] per layer */
    float *hidden = malloc(sizeof(float) * (size_t)(NL + 1) * layer);
    float *res = malloc(sizeof(float) * (size_t)NL * layer);
    long long *counted = calloc((size_t)NL, sizeof(long long));
    al_status st = hidden && res && counted ? AL_OK
                                            : al_err(err, AL_ERR_OOM, "layers: out of memory for a window's states");
    al_forward_params p = params ? *params : al_forward_default_params();
    p.progress = NULL;
    for (int w = 0; !st && w < n_win; w++) {
        const int n = c->len[w];
        al_batch b = {1, n, c->ids + (size_t)w * W, NULL, NULL, NULL};
        al_forward_outputs out = {0};
        out.hidden_states = hidden;
        st = al_forward_residual(model, &b, &p, &out, res, err);
        for (int l = 0; !st && l < NL; l++)
            for (int t = 0; t < n; t++) {
                const float *x = hidden + (size_t)l * n * D + (size_t)t * D, *y = res + (size_t)l * n * D + (size_t)t * D;
                double xy = 0.0, xx = 0.0, yy = 0.0;
                for (int d = 0; d < D; d++) xy += (double)x[d] * y[d], xx += (double)x[d] * x[d], yy += (double)y[d] * y[d];
                if (xx > 0.0 && yy > 0.0) cos[l] += xy / (sqrt(xx) * sqrt(yy)), counted[l]++;
            }
        if (!st && params && params->progress) params->progress(params->progress_user, "similarity", (double)(w + 1) / n_win);
    }
    for (int l = 0; !st && l < NL; l++) cos[l] = counted[l] ? cos[l] / (double)counted[l] : NAN;
    if (!st) *tokens = counted[0];
    free(hidden), free(res), free(counted);
    return st;
}

void al_layer_order(const double *cos, int n_layers, int *order) {
    for (int l = 0; l < n_layers; l++) order[l] = l;
    for (int i = 1; i < n_layers; i++) /* insertion sort: stable, so ties keep the lower layer first */
        for (int j = i; j > 0 && cos[order[j]] > cos[order[j - 1]]; j--) {
            const int t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
}

al_status al_layer_drop_score(const al_model *model, const al_lm_corpus *c, const unsigned char *dropped,
                              const al_forward_params *params, int batch_size, al_lm_corpus_loss *out,
                              al_error *err) {
    al_forward_params p = params ? *params : al_forward_default_params();
    p.attn_dropped = dropped;
    return al_lm_corpus_score(model, c, &p, batch_size, out, err);
}

al_status al_layer_constant_score(const al_model *model, const al_lm_corpus *c, int layer, const float *constants,
                                  const al_forward_params *params, int batch_size, al_lm_corpus_loss *out,
                                  al_error *err) {
    const al_config *cfg = al_model_config(model);
    const int NL = cfg->n_layers, H = cfg->n_heads, W = c->window;
    if (layer < 0 || layer >= NL)
        return al_err(err, AL_ERR_INVALID, "layers: layer %d is outside [0, %d)", layer, NL);
    al_head_policy *pol = calloc((size_t)NL * H, sizeof(al_head_policy));
    if (!pol) return al_err(err, AL_ERR_OOM, "layers: out of memory for the head policies");
    for (int h = 0; h < H; h++) {
        pol[layer * H + h].mode = AL_HEAD_CONSTANT;
        pol[layer * H + h].constant = constants + (size_t)h * W * W;
    }
    al_forward_params p = params ? *params : al_forward_default_params();
    p.policies = pol;
    al_status st = al_lm_corpus_score(model, c, &p, batch_size, out, err);
    free(pol);
    return st;
}
