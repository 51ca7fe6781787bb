/* probe_spread.c: where the seed-to-seed spread of a PAPA probe comes from (docs/probes.md, "Seed spread").
 * One model, one task, the full model's frozen features computed once; then probes trained as the sweep
 * trains them (al_probe_fit) with N seeds under variants that each change one thing: the initialisation
 * alone varies (shuffle seed fixed), the shuffle alone varies (initialisation fixed), a linear learning-
 * rate decay instead of the constant rate, no gradient clipping, a lower rate. Prints each variant's mean,
 * standard deviation and the ratio of its standard deviation to the engine's.
 *
 *   probe_spread MODEL_DIR TASKS_DIR TASK [max_train max_validation epochs L seeds]
 *   (default 2000 800 20 128 5: the README's agreement run) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "methods/probes/metrics.h"
#include "methods/papa/papa.h"
#include "methods/papa/papa_sweep.h"
#include "methods/probes/probe.h"
#include "methods/tasks/task.h"
#include "bench_args.h"

typedef struct variant {
    const char *name;
    int fixed_init, fixed_shuffle; /* 1: every seed uses seed 1 for it */
    al_lr_schedule schedule;
    float max_grad_norm, lr_scale;
} variant;

static int fail(const al_error *e) {
    fprintf(stderr, "probe_spread: %s\n", e->message);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: probe_spread MODEL_DIR TASKS_DIR TASK [max_train max_validation epochs L seeds]\n");
        return 2;
    }
    const char *me = "probe_spread";
    const int max_train = argc > 4 ? bench_int(me, "max_train", argv[4], 1, 1 << 24) : 2000;
    const int max_val = argc > 5 ? bench_int(me, "max_validation", argv[5], 1, 1 << 24) : 800;
    const int epochs = argc > 6 ? bench_int(me, "epochs", argv[6], 1, BENCH_ROUNDS_MAX) : 20;
    const int L = argc > 7 ? bench_int(me, "L", argv[7], 1, 1 << 20) : 128;
    const int n_seeds = argc > 8 ? bench_int(me, "seeds", argv[8], 1, 1000) : 5;
    al_error err = {0};
    al_model *model = NULL;
    al_task *task = NULL;
    if (al_model_load_dir(argv[1], &model, &err) || al_task_load_builtin(argv[2], argv[3], &task, &err)) return fail(&err);
    const al_tokenizer *tok = al_model_tokenizer(model);
    const al_config *cfg = al_model_config(model);
    al_papa_inputs tr, va;
    if (al_papa_inputs_build(tok, task, AL_TASK_TRAIN, max_train, AL_LAYOUT_PAPA, L, &tr, &err) ||
        al_papa_inputs_build(tok, task, AL_TASK_VALIDATION, max_val, AL_LAYOUT_PAPA, L, &va, &err))
        return fail(&err);
    al_forward_params fp = al_forward_default_params();
    fp.skip_pads = 1;
    al_probe_data *ftr = NULL, *fva = NULL;
    if (al_papa_features(model, &tr, NULL, 0, 32, (size_t)4 << 30, &fp, &ftr, &err) ||
        al_papa_features(model, &va, NULL, 0, 32, (size_t)4 << 30, &fp, &fva, &err))
        return fail(&err);
    const int token = task->kind == AL_TASK_TOKEN;
    al_probe_config pc = al_probe_default_config();
    pc.kind = token ? AL_PROBE_TOKEN : AL_PROBE_SEQUENCE;
    pc.n_states = cfg->n_layers + 1;
    pc.hidden = cfg->hidden_size;
    pc.max_len = L;
    pc.n_labels = task->n_labels;
    pc.dropout = token ? 0.0f : 0.1f;
    pc.max_batch = 64;
    const size_t n_pred = token ? (size_t)al_probe_data_n_rows(fva) : (size_t)al_probe_data_n_examples(fva);
    int32_t *pred = malloc(sizeof(int32_t) * n_pred);
    /* the quick preset's rate (docs/papa-op.md) */
    const float lr = token ? 5e-4f : 1e-3f;
    const variant vs[] = {
        {"engine (constant lr, clip 1.0)", 0, 0, AL_LR_CONSTANT, 1.0f, 1.0f},
        {"initialisation varies only", 0, 1, AL_LR_CONSTANT, 1.0f, 1.0f},
        {"shuffle varies only", 1, 0, AL_LR_CONSTANT, 1.0f, 1.0f},
        {"linear decay to 0", 0, 0, AL_LR_LINEAR, 1.0f, 1.0f},
        {"no clipping", 0, 0, AL_LR_CONSTANT, 0.0f, 1.0f},
        {"lr / 5", 0, 0, AL_LR_CONSTANT, 1.0f, 0.2f},
    };
    printf("%s on %s: %d train / %d validation, L %d, %d epochs, batch 16, lr %g, %d seeds\n", argv[1], argv[3],
           tr.n, va.n, L, epochs, lr, n_seeds);
    double engine_sd = NAN;
    for (size_t v = 0; v < sizeof vs / sizeof vs[0]; v++) {
        double score[64];
        for (int s = 0; s < n_seeds; s++) {
            al_probe *probe = NULL;
            al_probe_fit_options fo = al_probe_fit_default_options();
            fo.epochs = epochs;
            fo.batch_size = 16;
            fo.lr = lr * vs[v].lr_scale;
            fo.schedule = vs[v].schedule;
            fo.max_grad_norm = vs[v].max_grad_norm;
            fo.seed = vs[v].fixed_shuffle ? 1 : (uint64_t)(s + 1);
            if (al_probe_new(&pc, vs[v].fixed_init ? 1 : (uint64_t)(s + 1), &probe, &err) ||
                al_probe_fit(probe, ftr, &fo, NULL, &err) || al_probe_evaluate(probe, fva, pred, &err) ||
                al_metric_accuracy(pred, al_probe_data_labels(fva), n_pred, &score[s], &err))
                return fail(&err);
            al_probe_free(probe);
        }
        al_seed_summary ss;
        al_metric_summary(score, n_seeds, &ss, &err);
        if (v == 0) engine_sd = ss.sd;
        printf("%-32s mean %.4f  sd %.4f  sd / engine %.2f  (", vs[v].name, ss.mean, ss.sd, ss.sd / engine_sd);
        for (int s = 0; s < n_seeds; s++) printf("%s%.4f", s ? " " : "", score[s]);
        printf(")\n");
        fflush(stdout);
    }
    free(pred);
    al_probe_data_free(ftr);
    al_probe_data_free(fva);
    al_papa_inputs_free(&tr);
    al_papa_inputs_free(&va);
    al_task_free(task);
    al_model_free(model);
    return 0;
}
