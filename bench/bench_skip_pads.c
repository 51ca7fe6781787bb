/* bench_skip_pads.c: what packing PAPA's padded layout to its real tokens saves (al_forward_params.skip_pads,
 * docs/head_policies.md "Skipping padding"): the frozen features of a sweep's configuration, computed over
 * the padded rows and over the packed rows, side by side on one thread.
 *
 *   bench_skip_pads [MODEL_DIR ...]   (default: the embedded models present under models/)
 *
 * For each built-in task (build/data/tasks, L as in the quick preset) the first 256 training examples, with
 * every head standard and with every head constant (the task's own average attention), two rounds each
 * way, alternating; the best time of each is kept. Prints the share of real tokens in the layout, the
 * seconds per condition and the ratio padded / packed (above 1: packing is faster). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "core/clock.h"
#include "methods/papa/papa.h"
#include "methods/papa/papa_sweep.h"
#include "methods/tasks/task.h"

typedef struct task_shape { const char *id; int L; } task_shape;

/* Best seconds of al_papa_features over rounds, alternating padded (0) and packed (1). */
static int time_features(const al_model *m, const al_papa_inputs *in, const al_head_policy *pol, double best[2]) {
    best[0] = best[1] = 1e30;
    for (int round = 0; round < 2; round++)
        for (int packed = 0; packed < 2; packed++) {
            al_forward_params fp = al_forward_default_params();
            fp.skip_pads = packed;
            al_probe_data *data = NULL;
            al_error err = {0};
            const double t0 = al_now_seconds();
            if (al_papa_features(m, in, pol, 0, 16, 0, &fp, &data, &err) != AL_OK) {
                fprintf(stderr, "features: %s\n", err.message);
                return 1;
            }
            const double t = al_now_seconds() - t0;
            al_probe_data_free(data);
            if (t < best[packed]) best[packed] = t;
        }
    return 0;
}

static int bench_model(const char *dir) {
    al_model *m = NULL;
    al_error err = {0};
    if (al_model_load_dir(dir, &m, &err) != AL_OK) {
        fprintf(stderr, "%s: %s\n", dir, err.message);
        return 1;
    }
    const al_config *c = al_model_config(m);
    const int NH = c->n_layers * c->n_heads;
    static const task_shape tasks[] = {{"pos", 64}, {"agreement", 128}, {"definition", 64}, {"order", 128}};
    printf("%s (%d layers x %d heads, hidden %d)\n", dir, c->n_layers, c->n_heads, c->hidden_size);
    int bad = 0;
    for (size_t t = 0; t < sizeof tasks / sizeof tasks[0] && !bad; t++) {
        al_task *task = NULL;
        if (al_task_load_builtin("build/data/tasks", tasks[t].id, &task, &err) != AL_OK) {
            printf("  %-10s skipped: %s\n", tasks[t].id, err.message);
            continue;
        }
        const int L = tasks[t].L;
        al_papa_inputs in;
        memset(&in, 0, sizeof in);
        bad = al_papa_inputs_build(al_model_tokenizer(m), task, 0, 256, AL_LAYOUT_PAPA, L, &in, &err) != AL_OK;
        float *C = malloc(sizeof(float) * (size_t)NH * L * L);
        al_head_policy *pol = malloc(sizeof *pol * (size_t)NH);
        al_forward_params fp = al_forward_default_params();
        fp.skip_pads = 1;
        if (!bad) bad = al_papa_average_constants(m, in.ids, in.mask, in.type_ids, in.n, L, 16, &fp, C, &err) != AL_OK;
        if (bad) {
            fprintf(stderr, "%s: %s\n", tasks[t].id, err.message);
        } else {
            long real = 0;
            for (size_t i = 0; i < (size_t)in.n * L; i++) real += in.mask[i] != 0;
            for (int h = 0; h < NH; h++) pol[h] = (al_head_policy){AL_HEAD_CONSTANT, 0.0f, C + (size_t)h * L * L};
            double standard[2], constant[2];
            bad = time_features(m, &in, NULL, standard) || time_features(m, &in, pol, constant);
            if (!bad)
                printf("  %-10s L %3d, %4.1f%% real tokens  standard: padded %.2f s, packed %.2f s, %.2fx  "
                       "all constant: padded %.2f s, packed %.2f s, %.2fx\n",
                       tasks[t].id, L, 100.0 * (double)real / ((double)in.n * L), standard[0], standard[1],
                       standard[0] / standard[1], constant[0], constant[1], constant[0] / constant[1]);
        }
        free(C);
        free(pol);
        al_papa_inputs_free(&in);
        al_task_free(task);
    }
    al_model_free(m);
    return bad;
}

int main(int argc, char **argv) {
    static const char *const embedded[] = {"models/attnlab-mini-bert", "models/attnlab-small-bert"};
    int bad = 0;
    if (argc > 1) {
        for (int i = 1; i < argc; i++) bad |= bench_model(argv[i]);
        return bad;
    }
    for (size_t i = 0; i < sizeof embedded / sizeof embedded[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "%s/config.json", embedded[i]);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        fclose(f);
        bad |= bench_model(embedded[i]);
    }
    return bad;
}
