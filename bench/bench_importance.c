/* bench_importance.c: the cost of gradient head importance and value zeroing next to a forward pass.
 *
 *   bench_importance [--quick]
 *
 * One thread, one sequence of 128 real tokens, a random model of bert-base shape (12 x 768, 12 heads, FFN
 * 3072; --quick: bert-small, 4 x 512, 8 heads). Prints the seconds of
 *   forward      al_forward with attentions and values (what the explorer's views ask for)
 *   importance   al_head_importance_measure on that one example with a token probe's loss (forward and
 *                backward through the frozen encoder to the head mask)
 *   zeroing      al_value_zeroing (every layer, every token zeroed in turn)
 * and their ratios to the forward pass, measured side by side in this run (best of the repetitions). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "attnlab.h"
#include "core/rng.h"
#include "methods/head_importance.h"
#include "methods/value_zeroing.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
    const int quick = argc > 1 && !strcmp(argv[1], "--quick");
    const int L = 128, reps = quick ? 3 : 2;
    al_config cfg = quick ? al_config_bert(30522, 512, 4, 8, 2048) : al_config_bert(30522, 768, 12, 12, 3072);
    al_model *model = NULL;
    al_error err = {0};
    if (al_model_new_random(&cfg, 42, 0, &model, &err) != AL_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    const int NL = cfg.n_layers, H = cfg.n_heads;
    int32_t ids[128], mask[128], types[128] = {0}, labels[128], group[1] = {-1};
    al_rng r;
    al_rng_seed(&r, 1);
    for (int i = 0; i < L; i++) ids[i] = 1000 + (int)al_rng_below(&r, 20000), mask[i] = 1, labels[i] = (int)al_rng_below(&r, 12);
    al_batch batch = {1, L, ids, mask, types, NULL};
    float *attn = malloc(sizeof(float) * (size_t)NL * H * L * L), *values = malloc(sizeof(float) * (size_t)NL * L * cfg.hidden_size);
    float *dist = malloc(sizeof(float) * (size_t)NL * L * L), *norm = malloc(sizeof(float) * (size_t)NL * L * L);
    al_probe_config pc = al_probe_default_config();
    pc.kind = AL_PROBE_TOKEN, pc.n_states = NL + 1, pc.hidden = cfg.hidden_size, pc.max_len = L, pc.n_labels = 12;
    pc.dropout = 0.0f, pc.max_batch = 1;
    al_probe *probe = NULL;
    if (!attn || !values || !dist || !norm || al_probe_new(&pc, 7, &probe, &err) != AL_OK) {
        fprintf(stderr, "setup failed: %s\n", err.message);
        return 1;
    }
    al_papa_inputs in = {1, L, 1, ids, mask, types, labels, group, 0};
    double t_fwd = 1e30, t_imp = 1e30, t_vz = 1e30;
    for (int rep = 0; rep < reps; rep++) {
        al_forward_outputs out = {0};
        out.attentions = attn, out.values = values;
        double t0 = now_s();
        if (al_forward(model, &batch, NULL, &out, &err) != AL_OK) break;
        double t = now_s() - t0;
        t_fwd = t < t_fwd ? t : t_fwd;
        al_head_importance hi;
        t0 = now_s();
        if (al_head_importance_measure(model, &in, AL_IMPORTANCE_PROBE, probe, NULL, &hi, &err) != AL_OK) break;
        t = now_s() - t0;
        t_imp = t < t_imp ? t : t_imp;
        al_head_importance_free(&hi);
        t0 = now_s();
        if (al_value_zeroing(model, &batch, NULL, dist, norm, &err) != AL_OK) break;
        t = now_s() - t0;
        t_vz = t < t_vz ? t : t_vz;
    }
    if (err.message[0]) fprintf(stderr, "%s\n", err.message);
    printf("%s shape (%d layers, %d hidden, %d heads), %d tokens, one thread, best of %d:\n", quick ? "bert-small" : "bert-base",
           NL, cfg.hidden_size, H, L, reps);
    printf("  forward     %8.3f s\n", t_fwd);
    printf("  importance  %8.3f s  %6.1fx the forward pass (one example)\n", t_imp, t_imp / t_fwd);
    printf("  zeroing     %8.3f s  %6.1fx the forward pass\n", t_vz, t_vz / t_fwd);
    al_probe_free(probe);
    free(attn), free(values), free(dist), free(norm);
    al_model_free(model);
    return 0;
}
