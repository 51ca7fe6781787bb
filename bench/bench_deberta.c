/* bench_deberta.c: the forward pass of a deberta-v3-base shape (12 x 768, 12 heads, 256 log buckets,
 * c2p + p2c; random weights) against bert-base in the same run, at 128 and 512 tokens (batch of one
 * sequence, one thread, no MLM head), and the cost of constant heads in DeBERTa: every head CONSTANT against
 * every head standard. Prints the times and their ratios; the passes alternate, so both see the same machine.
 *
 *   bench_deberta [--reps N]   (default 3: the median of N passes each) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "core/clock.h"
#include "bench_args.h"

static const char deberta_base[] =
    "{\"model_type\": \"deberta-v2\", \"hidden_act\": \"gelu\", \"hidden_size\": 768, \"intermediate_size\": 3072, "
    "\"max_position_embeddings\": 512, \"relative_attention\": true, \"position_buckets\": 256, "
    "\"norm_rel_ebd\": \"layer_norm\", \"share_att_key\": true, \"pos_att_type\": \"p2c|c2p\", "
    "\"layer_norm_eps\": 1e-7, \"max_relative_positions\": -1, \"position_biased_input\": false, "
    "\"num_attention_heads\": 12, \"num_hidden_layers\": 12, \"type_vocab_size\": 0, \"vocab_size\": 1000}";

static double one_pass(const al_model *m, int L, const al_head_policy *pol) {
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)L), *mask = malloc(sizeof(int32_t) * (size_t)L);
    for (int i = 0; i < L; i++) ids[i] = 5 + (i * 37) % 900, mask[i] = 1;
    al_batch batch = {1, L, ids, mask, NULL, NULL};
    al_forward_params p = al_forward_default_params();
    p.policies = pol;
    al_error err;
    double t0 = al_now_seconds();
    if (al_forward(m, &batch, &p, NULL, &err) != AL_OK) fprintf(stderr, "forward: %s\n", err.message);
    double t = al_now_seconds() - t0;
    free(ids);
    free(mask);
    return t;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int reps = 3;
    if (argc == 3 && strcmp(argv[1], "--reps") == 0) reps = bench_int("bench_deberta", "--reps", argv[2], 1, 100);
    else if (argc != 1) {
        fprintf(stderr, "usage: bench_deberta [--reps N]\n");
        return 2;
    }
    al_error err;
    al_config cb = al_config_bert(1000, 768, 12, 12, 3072), cd;
    al_model *bert = NULL, *deb = NULL;
    if (al_config_parse(deberta_base, sizeof deberta_base - 1, "deberta-v3-base", &cd, &err) ||
        al_model_new_random(&cb, 1, 0, &bert, &err) || al_model_new_random(&cd, 1, 0, &deb, &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    const int NH = 12 * 12;
    al_head_policy *constant = calloc((size_t)NH, sizeof *constant);
    float *C = malloc(sizeof(float) * 512 * 512);
    for (int i = 0; i < 512 * 512; i++) C[i] = 1.0f;
    static const int lens[] = {128, 512};
    printf("one thread, batch of 1, median of %d passes\n", reps);
    for (int k = 0; k < 2; k++) {
        const int L = lens[k];
        for (int h = 0; h < NH; h++) constant[h].mode = AL_HEAD_CONSTANT, constant[h].constant = C;
        /* the constant's stride is L: a [L, L] matrix at the start of C */
        double *tb = malloc(sizeof(double) * reps), *td = malloc(sizeof(double) * reps),
               *tc = malloc(sizeof(double) * reps);
        for (int r = 0; r < reps; r++) {
            tb[r] = one_pass(bert, L, NULL);
            td[r] = one_pass(deb, L, NULL);
            tc[r] = one_pass(deb, L, constant);
        }
        qsort(tb, (size_t)reps, sizeof(double), cmp);
        qsort(td, (size_t)reps, sizeof(double), cmp);
        qsort(tc, (size_t)reps, sizeof(double), cmp);
        const double b = tb[reps / 2], d = td[reps / 2], c = tc[reps / 2];
        printf("L=%3d  bert-base %.3f s  deberta-v3-base %.3f s (%.2fx bert-base)  deberta all heads constant %.3f s "
               "(%.2fx its standard pass)\n",
               L, b, d, d / b, c, c / d);
        free(tb), free(td), free(tc);
    }
    free(constant);
    free(C);
    al_model_free(bert);
    al_model_free(deb);
    return 0;
}
