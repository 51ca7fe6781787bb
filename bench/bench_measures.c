/* bench_measures.c: the cost of the measures beside PAPA (docs/measures.md) next to the forward pass they
 * follow, one thread, bert-base shape (12 x 768, 12 heads), one example of 128 real tokens.
 *
 *   bench_measures [--quick]
 *
 * Prints seconds per call and the ratio to the forward pass (attentions, values and hidden states) of
 *   norm      norm-based attention per head, every layer
 *   norm+res  per head, per layer and with residual and LayerNorm, every layer
 *   rollout   rollout of the raw attention (after the forward)
 *   stats     the head statistics of the example against a constant (the same attention) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "core/clock.h"
#include "core/rng.h"
#include "methods/measures/measures.h"

int main(int argc, char **argv) {
    const int quick = argc > 1 && !strcmp(argv[1], "--quick");
    const int L = quick ? 32 : 128, reps = quick ? 1 : 3;
    al_config cfg = al_config_bert(30522, 768, 12, 12, 3072);
    al_model *model = NULL;
    al_error err = {0};
    if (al_model_new_random(&cfg, 42, 0, &model, &err) != AL_OK) {
        fprintf(stderr, "bench_measures: %s\n", err.message);
        return 1;
    }
    const int NL = cfg.n_layers, H = cfg.n_heads, D = cfg.hidden_size, dh = cfg.head_dim;
    const size_t LL = (size_t)L * L;
    float *attn = malloc(sizeof(float) * NL * H * LL), *values = malloc(sizeof(float) * (size_t)NL * H * L * dh);
    float *hidden = malloc(sizeof(float) * (size_t)(NL + 1) * L * D), *heads = malloc(sizeof(float) * H * LL);
    float *layer = malloc(sizeof(float) * LL), *res = malloc(sizeof(float) * LL), *roll = malloc(sizeof(float) * NL * LL);
    float *scratch = malloc(sizeof(float) * LL);
    int32_t *ids = malloc(sizeof(int32_t) * L), *mask = malloc(sizeof(int32_t) * L);
    uint8_t *classes = calloc((size_t)L, 1);
    double *stats = malloc(sizeof(double) * NL * H * AL_HS_N);
    al_rng r;
    al_rng_seed(&r, 1);
    for (int i = 0; i < L; i++) ids[i] = 1000 + (int)al_rng_below(&r, 20000), mask[i] = 1;
    classes[0] = AL_KEY_CLS, classes[L - 1] = AL_KEY_SEP;
    al_batch batch = {1, L, ids, mask, NULL, NULL};
    al_forward_outputs out = {0};
    out.attentions = attn, out.values = values, out.hidden_states = hidden;
    al_forward_params fp = al_forward_default_params();
    double t[5] = {0};
    const float *maps[12];
    for (int l = 0; l < NL; l++) maps[l] = attn + (size_t)l * H * LL;
    for (int rep = 0; rep < reps; rep++) {
        double t0 = al_now_seconds();
        if (al_forward(model, &batch, &fp, &out, &err) != AL_OK) {
            fprintf(stderr, "bench_measures: %s\n", err.message);
            return 1;
        }
        double t1 = al_now_seconds();
        for (int l = 0; l < NL; l++) {
            al_norm_outputs o = {heads, NULL, NULL, NULL};
            al_norm_attention_layer(model, l, hidden + (size_t)l * L * D, attn + (size_t)l * H * LL,
                                    values + (size_t)l * H * L * dh, mask, L, &o, &err);
        }
        double t2 = al_now_seconds();
        for (int l = 0; l < NL; l++) {
            al_norm_outputs o = {heads, layer, res, NULL};
            al_norm_attention_layer(model, l, hidden + (size_t)l * L * D, attn + (size_t)l * H * LL,
                                    values + (size_t)l * H * L * dh, mask, L, &o, &err);
        }
        double t3 = al_now_seconds();
        al_rollout(maps, NL, H, L, mask, 0, roll, &err);
        double t4 = al_now_seconds();
        al_head_stats_example(maps, NL, H, L, mask, classes, attn, scratch, stats);
        double t5 = al_now_seconds();
        t[0] += t1 - t0, t[1] += t2 - t1, t[2] += t3 - t2, t[3] += t4 - t3, t[4] += t5 - t4;
    }
    static const char *const names[5] = {"forward", "norm", "norm+res", "rollout", "stats"};
    printf("bert-base shape, 1 example x %d tokens, one thread, %d repetitions\n", L, reps);
    for (int k = 0; k < 5; k++) printf("  %-9s %8.4f s   %6.2fx forward\n", names[k], t[k] / reps, t[k] / t[0]);
    free(attn), free(values), free(hidden), free(heads), free(layer), free(res), free(roll), free(scratch);
    free(ids), free(mask), free(classes), free(stats);
    al_model_free(model);
    return 0;
}
