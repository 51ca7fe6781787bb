/* bench_effective.c: the cost of effective attention next to the forward pass it follows.
 *
 *   bench_effective [--quick]
 *
 * For each shape (bert-base: 12 x 768, 12 heads; bert-small: 4 x 512, 8 heads) at batch 8 x 128
 * tokens (every token real: the exact mode's worst case), prints the seconds per call of
 *   forward   al_forward with the attentions and values outputs
 *   +exact    forward, then al_effective_attention in the exact mode
 *   +paper    forward, then al_effective_attention in the paper mode (pad rows included)
 * and the ratios to the forward pass. Sun & Marasovic report about 2x for their implementation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "core/clock.h"
#include "core/rng.h"

typedef struct shape { const char *name; int layers, hidden, heads, ffn; } shape;

static int bench_shape(const shape *sh, int B, int L, int reps, int n_real) {
    al_config cfg = al_config_bert(30522, sh->hidden, sh->layers, sh->heads, sh->ffn);
    al_model *model = NULL;
    al_error err = {0};
    if (al_model_new_random(&cfg, 42, 0, &model, &err) != AL_OK) {
        fprintf(stderr, "%s: %s\n", sh->name, err.message);
        return 1;
    }
    const size_t na = (size_t)cfg.n_layers * B * cfg.n_heads * L * L;
    const size_t nv = (size_t)cfg.n_layers * B * cfg.n_heads * L * cfg.head_dim;
    float *attn = malloc(na * sizeof(float)), *values = malloc(nv * sizeof(float));
    float *eff = malloc(na * sizeof(float));
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)B * L), *mask = malloc(sizeof(int32_t) * (size_t)B * L);
    if (!attn || !values || !eff || !ids || !mask) {
        fprintf(stderr, "%s: out of memory\n", sh->name);
        free(attn), free(values), free(eff), free(ids), free(mask);
        al_model_free(model);
        return 1;
    }
    al_rng r;
    al_rng_seed(&r, 1);
    for (int i = 0; i < B * L; i++) {
        int real = i % L < n_real;
        ids[i] = real ? 1000 + (int)al_rng_below(&r, 20000) : 0;
        mask[i] = real;
    }
    al_batch batch = {B, L, ids, mask, NULL, NULL};
    al_forward_outputs out = {0};
    out.attentions = attn;
    out.values = values;
    double t_fwd = 1e30, t_exact = 1e30, t_paper = 1e30;
    int ok = 1;
    for (int rep = 0; rep < reps && ok; rep++) {
        double t0 = al_now_seconds();
        ok &= al_forward(model, &batch, NULL, &out, &err) == AL_OK;
        double t1 = al_now_seconds();
        ok &= al_effective_attention(&cfg, attn, values, mask, B, L, AL_EFFECTIVE_EXACT, eff, NULL,
                                     &err) == AL_OK;
        double t2 = al_now_seconds();
        ok &= al_effective_attention(&cfg, attn, values, mask, B, L, AL_EFFECTIVE_PAPER, eff, NULL,
                                     &err) == AL_OK;
        double t3 = al_now_seconds();
        /* best of the repetitions for each part */
        if (t1 - t0 < t_fwd) t_fwd = t1 - t0;
        if (t2 - t1 < t_exact) t_exact = t2 - t1;
        if (t3 - t2 < t_paper) t_paper = t3 - t2;
    }
    if (!ok) fprintf(stderr, "%s: %s\n", sh->name, err.message);
    else
        printf("%-10s B=%d L=%d real=%-3d  forward %7.3f s   +exact %7.3f s (x%.3f)   +paper %7.3f s "
               "(x%.3f)\n",
               sh->name, B, L, n_real, t_fwd, t_fwd + t_exact, (t_fwd + t_exact) / t_fwd,
               t_fwd + t_paper, (t_fwd + t_paper) / t_fwd);
    fflush(stdout);
    free(attn), free(values), free(eff), free(ids), free(mask);
    al_model_free(model);
    return !ok;
}

int main(int argc, char **argv) {
    int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
    const shape shapes[] = {{"bert-base", 12, 768, 12, 3072}, {"bert-small", 4, 512, 8, 2048}};
    int reps = quick ? 1 : 3, fail = 0;
    for (int i = 0; i < 2; i++) {
        fail |= bench_shape(&shapes[i], 8, 128, reps, 128);
        fail |= bench_shape(&shapes[i], 8, 128, reps, 40); /* short texts padded to the paper's 128 */
    }
    return fail;
}
