/* bench_papa.c: what a constant head saves (PAPA's complexity argument, docs/papa.md): the forward pass
 * with every head standard against every head constant, on one thread, measured side by side.
 *
 *   bench_papa [--quick | --gpt2]
 *
 * Shapes: bert-base (12 x 768, 12 heads) and MiniLM-L6 (6 x 384, 12 heads) at batch 8 x 128 tokens and
 * MiniLM at 2 x 512, and GPT-2 small (12 x 768, 12 heads, causal: docs/papa.md "Causal language models") at
 * 8 x 128 and 1 x 1024 with its language-model head; the two conditions alternate over rounds and the best time
 * of each is kept. Prints seconds per call and the ratio standard / constant (above 1: constant heads are faster),
 * and the load average before the runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "core/clock.h"
#include "core/rng.h"
#include "methods/papa/papa.h"

typedef struct shape { const char *name; int layers, hidden, heads, ffn, B, L, causal; } shape;

/* GPT-2 small's config.json, the shape only (the weights are random) */
static const char k_gpt2[] = "{\"model_type\": \"gpt2\", \"vocab_size\": 50257, \"n_embd\": 768, \"n_layer\": 12, "
                             "\"n_head\": 12, \"n_positions\": 1024, \"activation_function\": \"gelu_new\", "
                             "\"layer_norm_epsilon\": 1e-05}";

static int bench(const shape *sh, int rounds) {
    al_config cfg = al_config_bert(30522, sh->hidden, sh->layers, sh->heads, sh->ffn);
    al_model *model = NULL;
    al_error err = {0};
    if (sh->causal && al_config_parse(k_gpt2, strlen(k_gpt2), "gpt2 config", &cfg, &err) != AL_OK) {
        fprintf(stderr, "%s: %s\n", sh->name, err.message);
        return 1;
    }
    if (al_model_new_random(&cfg, 42, 0, &model, &err) != AL_OK) {
        fprintf(stderr, "%s: %s\n", sh->name, err.message);
        return 1;
    }
    const int B = sh->B, L = sh->L, NH = cfg.n_layers * cfg.n_heads;
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)B * L), *mask = malloc(sizeof(int32_t) * (size_t)B * L);
    float *C = malloc(sizeof(float) * (size_t)L * L), *hidden = malloc(sizeof(float) * (size_t)B * L * cfg.hidden_size * (cfg.n_layers + 1));
    al_head_policy *pol = malloc(sizeof *pol * (size_t)NH);
    al_rng r;
    al_rng_seed(&r, 1);
    for (int i = 0; i < B * L; i++) ids[i] = 1000 + (int)al_rng_below(&r, 20000), mask[i] = 1;
    al_papa_data_free(sh->causal ? AL_CONST_FIRST_UNIFORM : AL_CONST_TOEPLITZ, L, C, &err);
    for (int i = 0; i < NH; i++) pol[i] = (al_head_policy){AL_HEAD_CONSTANT, 0.0f, C};
    al_batch batch = {B, L, ids, mask, NULL, NULL};
    al_forward_outputs out = {0};
    out.hidden_states = hidden;
    float *logits = NULL; /* a language model's work ends in its head: every position's next-token logits */
    if (sh->causal) {
        logits = malloc(sizeof(float) * (size_t)B * L * cfg.vocab_size);
        out.lm_logits = logits;
    }
    al_forward_params constant = al_forward_default_params();
    constant.policies = pol;
    double best[2] = {1e30, 1e30};
    for (int round = 0; round < rounds; round++)
        for (int which = 0; which < 2; which++) {
            double t0 = al_now_seconds();
            if (al_forward(model, &batch, which ? &constant : NULL, &out, &err) != AL_OK) {
                fprintf(stderr, "%s: %s\n", sh->name, err.message);
                return 1;
            }
            double t = al_now_seconds() - t0;
            if (t < best[which]) best[which] = t;
        }
    printf("%-10s %2d x %-4d  standard %.3f s  all constant %.3f s  standard / constant %.2fx\n", sh->name, B, L,
           best[0], best[1], best[0] / best[1]);
    free(ids), free(mask), free(C), free(hidden), free(pol), free(logits);
    al_model_free(model);
    return 0;
}

int main(int argc, char **argv) {
    const int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    const shape shapes[] = {
        {"bert-base", 12, 768, 12, 3072, 8, 128, 0},
        {"MiniLM-L6", 6, 384, 12, 1536, 8, 128, 0},
        {"MiniLM-L6", 6, 384, 12, 1536, 2, 512, 0},
        {"gpt2", 12, 768, 12, 3072, 8, 128, 1},
        {"gpt2", 12, 768, 12, 3072, 1, 1024, 1},
    };
    char load[64] = "?";
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (!fgets(load, sizeof load, f)) snprintf(load, sizeof load, "?");
        fclose(f);
    }
    printf("load average: %s", load);
    int bad = 0;
    const int only_gpt2 = argc > 1 && strcmp(argv[1], "--gpt2") == 0; /* the decoder's shapes alone */
    for (size_t i = quick ? 1 : 0; i < sizeof shapes / sizeof shapes[0]; i++)
        if (!only_gpt2 || shapes[i].causal) bad |= bench(&shapes[i], quick ? 1 : 3);
    return bad;
}
