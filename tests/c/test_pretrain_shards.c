/* test_pretrain_shards.c: a pretraining step split over shards of the batch (src/train/pretrain_shards.c).
 * Without dropout, 1, 2 and 3 shards give the same loss and gradients up to float rounding (the shards'
 * mean losses reweighted by their labelled positions equal the batch's mean); a sharded run repeats bit
 * for bit, also when resumed from a checkpoint; bad shard counts are refused naming the field. Also the
 * default model's two other recipe options: the two-phase sequence length (short_len, short_steps: repeats,
 * resumes, bad values refused) and position_init "sinusoidal" (the table it writes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "pretrain_fixture.h"
#include "model/weights.h"
#include "train/train.h"

#define DIR "build/test_pretrain_shards"
#define STEPS 12

static char *g_text;
static size_t g_len;

static al_pretrain_config tiny_config(const char *out, int shards) {
    al_pretrain_config c = fixture_config(DIR, out);
    c.max_len = 24; /* short sequences: the shards' batches pad to different lengths */
    c.steps = STEPS;
    c.batch_size = 5;
    c.warmup_steps = 2;
    c.eval_interval = 0;
    c.eval_sequences = 8;
    c.shards = shards;
    return c;
}

static al_status run(const al_pretrain_config *c, const char *resume, int stop_after, float *losses, al_error *err) {
    al_pretrain_hooks h;
    memset(&h, 0, sizeof h);
    h.losses = losses;
    h.stop_after = stop_after;
    al_pretrain_result r;
    return al_pretrain_run(c, resume, &h, &r, err);
}

/* One step from the same weights and sequences with n shards, dropout off: loss and a gradient copy. */
static int sharded_step(al_model *model, const al_mlm_corpus *corpus, int n, float *loss, float *grads) {
    al_train_options to = al_train_default_options();
    to.training = 0;
    al_shard_set *set = NULL;
    al_error err;
    al_status st = al_shards_new(model, n, 5, 24, &to, &set, &err);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    if (st) return 0;
    int idx[5] = {3, 0, 7, 1, 4};
    al_mlm_masking mk = al_mlm_default_masking(al_model_tokenizer(model));
    al_rng rng;
    al_rng_seed(&rng, 99);
    al_shard_step ss;
    st = al_shards_step(set, corpus, idx, 5, &mk, &rng, 17, &ss, &err);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    if (!st) {
        *loss = ss.loss;
        memcpy(grads, ss.grads, sizeof *grads * al_model_n_params(model));
    }
    al_shards_free(set);
    return st == AL_OK;
}

int main(void) {
    if (!fixture_make_data(DIR, 5, 200, 2, 12, &g_text, &g_len)) {
        CHECK(0);
        return check_summary("pretrain_shards");
    }
    al_error err;

    /* gradients of 1, 2 and 3 shards agree (weights from a short run, so they are not at initialisation) */
    al_pretrain_config base = tiny_config(DIR "/base", 1);
    base.steps = 4;
    CHECK_MSG(run(&base, NULL, 0, NULL, &err) == AL_OK, "%s", err.message);
    al_model *model = NULL;
    CHECK_MSG(al_model_load_dir(DIR "/base", &model, &err) == AL_OK, "%s", err.message);
    if (model) {
        al_mlm_corpus corpus;
        CHECK_MSG(al_mlm_corpus_build(al_model_tokenizer(model), g_text, g_len, 24, 0, &corpus, &err) == AL_OK, "%s",
                  err.message);
        CHECK(corpus.n_seqs >= 8);
        size_t P = al_model_n_params(model);
        float *g1 = malloc(sizeof *g1 * P), *gn = malloc(sizeof *gn * P);
        float l1 = 0, ln = 0;
        if (corpus.n_seqs >= 8 && sharded_step(model, &corpus, 1, &l1, g1)) {
            double gmax = 0;
            for (size_t p = 0; p < P; p++) gmax = fmax(gmax, fabs(g1[p]));
            CHECK(gmax > 0);
            for (int n = 2; n <= 3; n++) {
                if (!sharded_step(model, &corpus, n, &ln, gn)) continue;
                double dmax = 0;
                for (size_t p = 0; p < P; p++) dmax = fmax(dmax, fabs((double)gn[p] - g1[p]));
                printf("%d shards vs 1: loss %.9g vs %.9g, max |grad diff| %.3g (max |grad| %.3g)\n", n, (double)ln,
                       (double)l1, dmax, gmax);
                CHECK(fabs((double)ln - l1) <= 1e-5 * fabs((double)l1));
                CHECK(dmax <= 1e-5 * gmax);
            }
        }
        free(g1), free(gn);
        al_mlm_corpus_free(&corpus);
        al_model_free(model);
    }

    /* a sharded run (dropout on) repeats bit for bit, and through a checkpoint */
    float a[STEPS], b[STEPS], c[STEPS], one[STEPS];
    al_pretrain_config c2 = tiny_config(DIR "/two_a", 2);
    CHECK_MSG(run(&c2, NULL, 0, a, &err) == AL_OK, "%s", err.message);
    snprintf(c2.out_dir, sizeof c2.out_dir, DIR "/two_b");
    CHECK_MSG(run(&c2, NULL, 0, b, &err) == AL_OK, "%s", err.message);
    CHECK(memcmp(a, b, sizeof a) == 0);
    snprintf(c2.out_dir, sizeof c2.out_dir, DIR "/two_c");
    CHECK_MSG(run(&c2, NULL, 6, c, &err) == AL_OK, "%s", err.message);
    CHECK_MSG(run(&c2, DIR "/two_c/checkpoint", 0, c, &err) == AL_OK, "%s", err.message);
    CHECK(memcmp(a, c, sizeof a) == 0);
    /* the shard count is part of the recipe: one shard draws other dropout masks for the later sequences */
    al_pretrain_config c1 = tiny_config(DIR "/one", 1);
    CHECK_MSG(run(&c1, NULL, 0, one, &err) == AL_OK, "%s", err.message);
    CHECK(memcmp(a, one, sizeof a) != 0);
    CHECK(fabsf(a[0] - one[0]) < 0.05f * one[0]);

    /* bad shard counts */
    const int bad[] = {0, -1, 6, 65};
    for (int i = 0; i < 4; i++) {
        al_pretrain_config cb = tiny_config(DIR "/bad", bad[i]);
        if (bad[i] == 65) cb.batch_size = 100;
        al_status st = run(&cb, NULL, 0, NULL, &err);
        CHECK(st != AL_OK);
        CHECK_MSG(strstr(err.message, "shards") != NULL, "%s", err.message);
    }
    const char json[] = "{\"shards\": 2.5}";
    al_pretrain_config cp = al_pretrain_default_config();
    CHECK(al_pretrain_config_parse(json, sizeof json - 1, "train_config.json", &cp, &err) != AL_OK);
    CHECK_MSG(strstr(err.message, "'shards'") && strstr(err.message, "train_config.json"), "%s", err.message);
    /* BERT's two-phase recipe: short sequences first, then max_len; repeats bit for bit, also when resumed
     * before the switch, and differs from the one-phase run */
    float p2a[STEPS], p2b[STEPS];
    al_pretrain_config ct = tiny_config(DIR "/phases_a", 2);
    ct.short_len = 8;
    ct.short_steps = 5;
    CHECK_MSG(run(&ct, NULL, 0, p2a, &err) == AL_OK, "%s", err.message);
    snprintf(ct.out_dir, sizeof ct.out_dir, DIR "/phases_b");
    CHECK_MSG(run(&ct, NULL, 3, p2b, &err) == AL_OK, "%s", err.message);
    CHECK_MSG(run(&ct, DIR "/phases_b/checkpoint", 0, p2b, &err) == AL_OK, "%s", err.message);
    CHECK(memcmp(p2a, p2b, sizeof p2a) == 0);
    CHECK(memcmp(p2a, a, sizeof a) != 0);
    const int bad_short[][3] = {{2, 5, 12}, {24, 5, 12}, {8, 0, 12}, {8, 12, 12}};
    for (int i = 0; i < 4; i++) {
        al_pretrain_config cb = tiny_config(DIR "/bad", 1);
        cb.short_len = bad_short[i][0], cb.short_steps = bad_short[i][1], cb.steps = bad_short[i][2];
        CHECK(run(&cb, NULL, 0, NULL, &err) != AL_OK);
        CHECK_MSG(strstr(err.message, "short_len") != NULL, "%s", err.message);
    }

    al_pretrain_config cpi = tiny_config(DIR "/bad", 1);
    snprintf(cpi.position_init, sizeof cpi.position_init, "cosine");
    CHECK(run(&cpi, NULL, 0, NULL, &err) != AL_OK);
    CHECK_MSG(strstr(err.message, "position_init") && strstr(err.message, "cosine"), "%s", err.message);

    /* position_init "sinusoidal": one step inside the warm-up (its learning rate is 0; a configured lr of 0 is
     * refused) leaves the saved table as the scaled sinusoids */
    al_pretrain_config cs = tiny_config(DIR "/sin", 1);
    snprintf(cs.position_init, sizeof cs.position_init, "sinusoidal");
    cs.steps = 1;
    cs.warmup_steps = 1;
    CHECK_MSG(run(&cs, NULL, 0, NULL, &err) == AL_OK, "%s", err.message);
    al_model *sm = NULL;
    CHECK_MSG(al_model_load_dir(DIR "/sin", &sm, &err) == AL_OK, "%s", err.message);
    if (sm) {
        al_tensor_out t[64];
        int nt = al_weights_tensors(sm, t, 64);
        const float *pe = NULL;
        for (int i = 0; i < nt; i++)
            if (!strcmp(t[i].name, "bert.embeddings.position_embeddings.weight")) pe = t[i].data;
        CHECK(pe != NULL);
        double worst = 0;
        for (int p = 0; pe && p < 32; p++)
            for (int e = 0; e < 32; e++) {
                double angle = p / pow(10000.0, (double)(e & ~1) / 32.0);
                double want = 0.02 * sqrt(2.0) * ((e & 1) ? cos(angle) : sin(angle));
                worst = fmax(worst, fabs(pe[p * 32 + e] - want));
            }
        printf("sinusoidal position table: max |diff| %.3g\n", worst);
        CHECK(worst < 1e-7);
        al_model_free(sm);
    }
    free(g_text);
    return check_summary("pretrain_shards");
}
