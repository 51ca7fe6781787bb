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
 *   and the parts of the head_agreement op (docs/agreement.md), per example:
 *   constants    al_papa_average_constants (PAPA's averaged attention: one forward pass)
 *   ranking      al_papa_rank, one epoch (every head mixed with its constant, lambda and probe trained)
 *   statistics   a forward pass with hidden states and values, then al_head_stats_example and the
 *                norm-based maps of every head (al_norm_attention_layer), the op's validation pass
 * and their ratios to the forward pass, measured side by side in this run (best of the repetitions). The
 * agreement op costs, per training example, the constants, the ranking's epochs (quick preset: 2), the
 * probe's features (one forward) and the gradient; per validation example, the statistics. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "core/clock.h"
#include "core/rng.h"
#include "methods/measures/head_importance.h"
#include "methods/measures/measures.h"
#include "methods/papa/papa.h"
#include "methods/papa/papa_sweep.h"
#include "methods/measures/value_zeroing.h"

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
    double t_fwd = 1e30, t_imp = 1e30, t_vz = 1e30, t_const = 1e30, t_rank = 1e30, t_stats = 1e30;
    float *C = malloc(sizeof(float) * (size_t)NL * H * L * L), *theta = malloc(sizeof(float) * (size_t)NL * H);
    float *hidden = malloc(sizeof(float) * (size_t)(NL + 1) * L * cfg.hidden_size);
    float *head_norms = malloc(sizeof(float) * (size_t)H * L * L), *vnorms = malloc(sizeof(float) * (size_t)H * L);
    float *scratch = malloc(sizeof(float) * (size_t)L * L);
    double *stats = malloc(sizeof(double) * (size_t)NL * H * AL_HS_N), *mass = calloc((size_t)NL * H, sizeof(double));
    uint8_t classes[128];
    if (!C || !theta || !hidden || !head_norms || !vnorms || !scratch || !stats || !mass) return 1;
    al_papa_rank_settings rs = {1, 1, 0, 5e-3f, 1, 0, 0.1f, 0, 1, 0};
    for (int rep = 0; rep < reps; rep++) {
        al_forward_outputs out = {0};
        out.attentions = attn, out.values = values;
        double t0 = al_now_seconds();
        if (al_forward(model, &batch, NULL, &out, &err) != AL_OK) break;
        double t = al_now_seconds() - t0;
        t_fwd = t < t_fwd ? t : t_fwd;
        al_head_importance hi;
        t0 = al_now_seconds();
        if (al_head_importance_measure(model, &in, AL_IMPORTANCE_PROBE, probe, NULL, &hi, &err) != AL_OK) break;
        t = al_now_seconds() - t0;
        t_imp = t < t_imp ? t : t_imp;
        al_head_importance_free(&hi);
        t0 = al_now_seconds();
        if (al_value_zeroing(model, &batch, NULL, dist, norm, &err) != AL_OK) break;
        t = al_now_seconds() - t0;
        t_vz = t < t_vz ? t : t_vz;
        t0 = al_now_seconds();
        if (al_papa_average_constants(model, ids, mask, types, 1, L, 1, NULL, C, &err) != AL_OK) break;
        t = al_now_seconds() - t0;
        t_const = t < t_const ? t : t_const;
        double loss = 0.0;
        t0 = al_now_seconds();
        if (al_papa_rank(model, &in, C, &rs, NULL, theta, &loss, &err) != AL_OK) break;
        t = al_now_seconds() - t0;
        t_rank = t < t_rank ? t : t_rank;
        t0 = al_now_seconds();
        out.hidden_states = hidden;
        if (al_forward(model, &batch, NULL, &out, &err) != AL_OK) break;
        const float *maps[64];
        for (int l = 0; l < NL; l++) maps[l] = attn + (size_t)l * H * L * L;
        al_key_classes(NULL, NULL, mask, L, classes);
        al_head_stats_example(maps, NL, H, L, mask, classes, C, scratch, stats);
        for (int l = 0; l < NL; l++) {
            al_norm_outputs no = {head_norms, NULL, NULL, vnorms};
            if (al_norm_attention_layer(model, l, hidden + (size_t)l * L * cfg.hidden_size, maps[l],
                                        values + (size_t)l * H * L * cfg.head_dim, mask, L, &no, &err) != AL_OK) break;
            al_norm_head_mass(head_norms, vnorms, mask, L, H, mass + (size_t)l * H, NULL);
        }
        t = al_now_seconds() - t0;
        t_stats = t < t_stats ? t : t_stats;
    }
    if (err.message[0]) fprintf(stderr, "%s\n", err.message);
    printf("%s shape (%d layers, %d hidden, %d heads), %d tokens, one thread, best of %d:\n", quick ? "bert-small" : "bert-base",
           NL, cfg.hidden_size, H, L, reps);
    printf("  forward     %8.3f s\n", t_fwd);
    printf("  importance  %8.3f s  %6.1fx the forward pass (one example)\n", t_imp, t_imp / t_fwd);
    printf("  zeroing     %8.3f s  %6.1fx the forward pass\n", t_vz, t_vz / t_fwd);
    printf("  constants   %8.3f s  %6.1fx the forward pass (one example averaged)\n", t_const, t_const / t_fwd);
    printf("  ranking     %8.3f s  %6.1fx the forward pass (one example, one epoch)\n", t_rank, t_rank / t_fwd);
    printf("  statistics  %8.3f s  %6.1fx the forward pass (forward, head statistics, norm-based maps)\n", t_stats,
           t_stats / t_fwd);
    const double per_train = t_const + 2.0 * t_rank + t_fwd + t_imp;
    printf("  agreement   %8.3f s  %6.1fx the forward pass per training example (constants, 2 ranking epochs, "
           "features, gradient) + %.1fx per validation example\n", per_train, per_train / t_fwd, t_stats / t_fwd);
    free(C), free(theta), free(hidden), free(head_norms), free(vnorms), free(scratch), free(stats), free(mass);
    al_probe_free(probe);
    free(attn), free(values), free(dist), free(norm);
    al_model_free(model);
    return 0;
}
