/* test_pretrain_sop.c: sentence order (ALBERT's SOP) in pretraining (docs/pretraining.md; src/train/sop_data.c,
 * train_sop.c, pretrain_shards.c, pretrain.c, checkpoint.c):
 * - documents and runs: a blank line ends a document, runs fit max_len - 3, a pair is [CLS] A [SEP] B [SEP] with
 *   types 0 / 1, label 1 exactly when swapped, the segments whole sentences of the run in order;
 * - gradients of MLM + sentence order by central finite differences (head and encoder weights);
 * - 1, 2 and 3 shards give the same loss and gradients up to float rounding (dropout off);
 * - runs: the steps before the long phase are bit for bit those of the same config without sentence order; a run
 *   repeats and resumes bit for bit inside the long phase; a checkpoint written without sentence order before the
 *   long phase resumes with it into exactly the run that had it from the start; a resume that changes a field
 *   of steps already done is refused naming the field; the output is a BertForPreTraining directory the loader
 *   reads; bad config values are refused naming the field. (The PyTorch golden is in test_grad_golden.c.) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "model/model_internal.h"
#include "model/tensor_list.h"
#include "pretrain_fixture.h"
#include "train/train.h"

#define DIR "build/test_pretrain_sop"
#define STEPS 14
#define LONG_START 6

static char *g_text;
static size_t g_len;

static int has(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

/* The fixture's lines grouped into documents of 2 to 7 lines (a blank line between), written to DIR/docs.txt. */
static int write_docs(void) {
    char *t = malloc(g_len * 2 + 16);
    size_t n = 0;
    int in_doc = 0, doc = 0;
    for (size_t i = 0; i < g_len; i++) {
        t[n++] = g_text[i];
        if (g_text[i] == '\n' && ++in_doc == 2 + doc % 6) t[n++] = '\n', in_doc = 0, doc++;
    }
    int ok = fixture_write_file(DIR "/docs.txt", t, n);
    free(t);
    return ok;
}

static al_pretrain_config sop_config(const char *out, int sop, int shards) {
    al_pretrain_config c = fixture_config(DIR, out);
    c.max_len = 24;
    c.short_len = 12;
    c.short_steps = LONG_START;
    c.steps = STEPS;
    c.batch_size = 5;
    c.warmup_steps = 2;
    c.eval_interval = 0;
    c.eval_sequences = 8;
    c.shards = shards;
    if (sop) {
        snprintf(c.sop_docs, sizeof c.sop_docs, DIR "/docs.txt");
        c.sop_share = 0.4f; /* 2 pairs and 3 packed sequences per batch */
    }
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

/* ---------------------------------------------------------------- data */

static void test_docs(const al_tokenizer *tok) {
    static const char text[] = "the cat sat.\nthe dog ran.\n\n \na big red fox ran under the tree.\nthe cat sat on a mat.\n"
                               "a dog.\n\nthe house.\n";
    al_sop_docs d;
    al_error err;
    CHECK_MSG(al_sop_docs_build(tok, text, sizeof text - 1, 24, &d, &err) == AL_OK, "%s", err.message);
    /* the fixture's 60-token vocabulary spells these sentences in 7, 8 | 19, 12, 5 | 5 tokens; the budget is
     * 24 - 3 = 21: document 1 is one run; document 2's first sentence fits alone but not beside the next (a run
     * of one: no pair), its other two form a run; document 3 has one sentence */
    static const int lens[6] = {7, 8, 19, 12, 5, 5};
    CHECK(d.n_docs == 3 && d.n_sents == 6);
    for (int i = 0; i < 6 && i < d.n_sents; i++) CHECK(d.sent_len[i] == lens[i]);
    CHECK(d.n_runs == 2 && d.run_first[0] == 0 && d.run_count[0] == 2 && d.run_first[1] == 3 && d.run_count[1] == 2);
    al_special_ids sp = al_tokenizer_special_ids(tok);
    al_rng rng;
    al_rng_seed(&rng, 3);
    int32_t ids[24], types[24];
    int swapped = 0;
    for (int t = 0; t < 200; t++) {
        int label = -1, len = al_sop_make_pair(&d, 0, &rng, ids, types, &label);
        const int a = d.sent_len[0], b = d.sent_len[1];
        CHECK(len == a + b + 3 && ids[0] == sp.cls && ids[len - 1] == sp.sep);
        const int first = label ? b : a; /* the first segment: sentence 1 when swapped */
        CHECK(ids[first + 1] == sp.sep && types[first + 1] == 0 && types[first + 2] == 1 && types[len - 1] == 1);
        const int32_t *s0 = d.ids + d.sent_start[label ? 1 : 0];
        CHECK(memcmp(ids + 1, s0, sizeof *ids * (size_t)first) == 0);
        swapped += label;
    }
    CHECK(swapped > 70 && swapped < 130);
    al_sop_docs_free(&d);
    CHECK(al_sop_docs_build(tok, text, sizeof text - 1, 4, &d, &err) == AL_ERR_INVALID && has(err.message, "max_len"));
}

/* ---------------------------------------------------------------- gradients */

typedef struct fd_case {
    al_model *m;
    al_train_ctx *ctx;
    al_batch batch;
    int32_t *labels;
    float *head, *hgrad;
    int rows[2];
    int32_t sop_labels[2];
} fd_case;

static double total_loss(fd_case *f, int backward) {
    al_error err;
    float mlm = 0, sop = 0;
    if (backward) al_train_zero_grads(f->ctx), memset(f->hgrad, 0, sizeof(float) * al_sop_head_size(f->m->config.hidden_size));
    CHECK(al_train_forward(f->ctx, &f->batch, &err) == AL_OK);
    CHECK(al_train_mlm_loss(f->ctx, f->labels, &mlm, NULL, &err) == AL_OK);
    CHECK(al_train_sop_loss(f->ctx, f->head, f->rows, f->sop_labels, 2, 1.0f, f->hgrad, &sop, NULL, &err) == AL_OK);
    if (backward) CHECK(al_train_backward(f->ctx, NULL, &err) == AL_OK);
    return (double)mlm + sop;
}

static double fd_check(fd_case *f, float *p, float g, const char *what) {
    const float eps = 3e-3f, keep = *p;
    *p = keep + eps;
    double up = total_loss(f, 0);
    *p = keep - eps;
    double down = total_loss(f, 0);
    *p = keep;
    double fd = (up - down) / (2.0 * eps), e = fabs(fd - g);
    CHECK_MSG(e <= 2e-3 + 2e-2 * fabs(fd), "%s: analytic %.6g, finite differences %.6g", what, (double)g, fd);
    return e;
}

static void test_finite_differences(void) {
    al_config mc = al_config_bert(40, 16, 2, 2, 32);
    mc.max_position_embeddings = 16;
    fd_case f;
    memset(&f, 0, sizeof f);
    al_error err;
    CHECK(al_model_new_random(&mc, 11, 1, &f.m, &err) == AL_OK);
    if (!f.m) return;
    al_train_options o = al_train_default_options();
    o.training = 0;
    CHECK(al_train_ctx_new(f.m, 3, 8, &o, &f.ctx, &err) == AL_OK);
    int32_t ids[24], mask[24], types[24], labels[24];
    al_rng rng;
    al_rng_seed(&rng, 5);
    for (int i = 0; i < 24; i++) {
        ids[i] = 5 + (int32_t)al_rng_below(&rng, 35);
        mask[i] = i % 8 < 8 - (i / 8) * 2; /* lengths 8, 6, 4 */
        types[i] = i % 8 >= 3;
        labels[i] = i % 3 == 1 && mask[i] ? ids[i] : AL_IGNORE_INDEX;
    }
    f.batch = (al_batch){3, 8, ids, mask, types, NULL};
    f.labels = labels;
    const int D = 16;
    const size_t nh = al_sop_head_size(D);
    f.head = malloc(sizeof(float) * nh);
    f.hgrad = calloc(nh, sizeof(float));
    for (size_t i = 0; i < nh; i++) f.head[i] = 0.3f * al_rng_normal(&rng);
    f.rows[0] = 0, f.rows[1] = 2;
    f.sop_labels[0] = 1, f.sop_labels[1] = 0;
    total_loss(&f, 1);
    float *hg = malloc(sizeof(float) * nh), *eg = malloc(sizeof(float) * f.m->n_floats);
    memcpy(hg, f.hgrad, sizeof(float) * nh);
    memcpy(eg, al_train_grads(f.ctx), sizeof(float) * f.m->n_floats);
    double worst = 0;
    for (int k = 0; k < 24; k++) { /* head: spread over the four tensors */
        size_t i = (size_t)(k * 97 + 5) % nh;
        worst = fmax(worst, fd_check(&f, f.head + i, hg[i], "head"));
    }
    const float *enc[] = {f.m->w.layers[1].q_w, f.m->w.layers[0].ff_in_w, f.m->w.emb_ln_g, f.m->w.type_emb};
    for (int t = 0; t < 4; t++)
        for (int k = 0; k < 5; k++) {
            float *p = (float *)enc[t] + k * 7;
            worst = fmax(worst, fd_check(&f, p, eg[p - f.m->storage], "encoder"));
        }
    printf("finite differences of MLM + sentence order: 44 weights, worst |analytic - fd| %.2e\n", worst);
    /* the sentence-order gradient reaches the encoder: without the pairs the encoder's gradient differs */
    float mlm = 0;
    al_train_zero_grads(f.ctx);
    CHECK(al_train_forward(f.ctx, &f.batch, &err) == AL_OK);
    CHECK(al_train_mlm_loss(f.ctx, f.labels, &mlm, NULL, &err) == AL_OK);
    CHECK(al_train_backward(f.ctx, NULL, &err) == AL_OK);
    CHECK(memcmp(eg, al_train_grads(f.ctx), sizeof(float) * f.m->n_floats) != 0);
    /* bad pairs are refused naming the argument */
    int bad_rows[2] = {0, 3};
    int32_t bad_labels[2] = {0, 2};
    CHECK(al_train_forward(f.ctx, &f.batch, &err) == AL_OK);
    CHECK(al_train_sop_loss(f.ctx, f.head, bad_rows, f.sop_labels, 2, 1.0f, f.hgrad, NULL, NULL, &err) == AL_ERR_INVALID &&
          has(err.message, "rows[1]"));
    CHECK(al_train_sop_loss(f.ctx, f.head, f.rows, bad_labels, 2, 1.0f, f.hgrad, NULL, NULL, &err) == AL_ERR_INVALID &&
          has(err.message, "labels[1]"));
    free(hg), free(eg), free(f.head), free(f.hgrad);
    al_train_ctx_free(f.ctx);
    al_model_free(f.m);
}

/* ---------------------------------------------------------------- shards */

static int sop_step(al_model *model, const al_mlm_corpus *corpus, const al_sop_docs *docs, int n, const float *head,
                    float *loss, float *grads, float *hgrads) {
    al_train_options to = al_train_default_options();
    to.training = 0;
    al_shard_set *set = NULL;
    al_error err;
    const size_t nh = al_sop_head_size(model->config.hidden_size);
    int slot = -1;
    al_status st = al_shards_new(model, n, 5, 24, &to, &set, &err);
    if (!st) st = al_shards_add_grads(set, nh, &slot, &err);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    int idx[3] = {3, 0, 7}, runs[2] = {1, 0};
    al_mlm_masking mk = al_mlm_default_masking(al_model_tokenizer(model));
    al_rng mrng, prng;
    al_rng_seed(&mrng, 99);
    al_rng_seed(&prng, 7);
    al_sop_step ss;
    if (!st) st = al_shards_step_sop(set, corpus, idx, 3, docs, runs, 2, &prng, &mk, &mrng, 17, head, slot, &ss, &err);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    if (!st) {
        *loss = ss.mlm.loss;
        CHECK(fabsf(ss.mlm.loss - (ss.mlm_loss + ss.sop_loss)) <= 1e-5f * ss.mlm.loss && ss.n_pairs == 2);
        memcpy(grads, ss.mlm.grads, sizeof *grads * al_model_n_params(model));
        memcpy(hgrads, ss.head_grads, sizeof *hgrads * nh);
    }
    al_shards_free(set);
    return st == AL_OK;
}

static void test_shards(al_model *model) {
    al_error err;
    al_mlm_corpus corpus;
    al_sop_docs docs;
    char *dtext = NULL;
    size_t dlen = 0;
    CHECK(al_read_file(DIR "/docs.txt", &dtext, &dlen, &err) == AL_OK);
    CHECK(al_mlm_corpus_build(al_model_tokenizer(model), g_text, g_len, 24, 0, &corpus, &err) == AL_OK);
    CHECK(al_sop_docs_build(al_model_tokenizer(model), dtext, dlen, 24, &docs, &err) == AL_OK && docs.n_runs >= 2);
    const size_t P = al_model_n_params(model), nh = al_sop_head_size(model->config.hidden_size);
    float *head = malloc(sizeof *head * nh);
    al_rng rng;
    al_rng_seed(&rng, 8);
    for (size_t i = 0; i < nh; i++) head[i] = 0.2f * al_rng_normal(&rng);
    float *g1 = malloc(sizeof *g1 * P), *gn = malloc(sizeof *gn * P), *h1 = malloc(sizeof *h1 * nh),
          *hn = malloc(sizeof *hn * nh);
    float l1 = 0, ln = 0;
    if (sop_step(model, &corpus, &docs, 1, head, &l1, g1, h1)) {
        double gmax = 0, hmax = 0;
        for (size_t p = 0; p < P; p++) gmax = fmax(gmax, fabs(g1[p]));
        for (size_t p = 0; p < nh; p++) hmax = fmax(hmax, fabs(h1[p]));
        CHECK(gmax > 0 && hmax > 0);
        for (int n = 2; n <= 3; n++) {
            if (!sop_step(model, &corpus, &docs, n, head, &ln, gn, hn)) continue;
            double dmax = 0, hd = 0;
            for (size_t p = 0; p < P; p++) dmax = fmax(dmax, fabs((double)gn[p] - g1[p]));
            for (size_t p = 0; p < nh; p++) hd = fmax(hd, fabs((double)hn[p] - h1[p]));
            printf("sentence order, %d shards vs 1: loss %.9g vs %.9g, max |grad diff| %.3g (max %.3g), head %.3g (max "
                   "%.3g)\n", n, (double)ln, (double)l1, dmax, gmax, hd, hmax);
            CHECK(fabs((double)ln - l1) <= 1e-5 * fabs((double)l1));
            CHECK(dmax <= 1e-5 * gmax && hd <= 1e-5 * hmax);
        }
    }
    free(g1), free(gn), free(h1), free(hn), free(head), free(dtext);
    al_sop_docs_free(&docs);
    al_mlm_corpus_free(&corpus);
}

/* ---------------------------------------------------------------- runs */

static void test_runs(void) {
    al_error err;
    float mlm[STEPS], a[STEPS], b[STEPS], c[STEPS], sw[STEPS];
    al_pretrain_config cm = sop_config(DIR "/mlm", 0, 1), cs = sop_config(DIR "/sop_a", 1, 1);
    CHECK_MSG(run(&cm, NULL, 0, mlm, &err) == AL_OK, "%s", err.message);
    CHECK_MSG(run(&cs, NULL, 0, a, &err) == AL_OK, "%s", err.message);
    /* before the long phase: the MLM-only run's bits; from it on: another loss */
    CHECK(memcmp(mlm, a, sizeof(float) * LONG_START) == 0);
    CHECK(memcmp(mlm + LONG_START, a + LONG_START, sizeof(float) * (STEPS - LONG_START)) != 0);
    /* repeats; resumes inside the long phase (the head and its optimizer in the checkpoint) */
    cs = sop_config(DIR "/sop_b", 1, 1);
    CHECK_MSG(run(&cs, NULL, 0, b, &err) == AL_OK, "%s", err.message);
    CHECK(memcmp(a, b, sizeof a) == 0);
    cs = sop_config(DIR "/sop_c", 1, 1);
    CHECK_MSG(run(&cs, NULL, 10, c, &err) == AL_OK, "%s", err.message);
    CHECK_MSG(run(&cs, DIR "/sop_c/checkpoint", 0, c, &err) == AL_OK, "%s", err.message);
    CHECK(memcmp(a, c, sizeof a) == 0);
    /* the switch: a checkpoint without sentence order, before or at the long phase's start, resumed with it */
    for (int stop = LONG_START - 2; stop <= LONG_START; stop += 2) {
        al_pretrain_config off = sop_config(DIR "/switch", 0, 1), on = sop_config(DIR "/switch", 1, 1);
        memset(sw, 0, sizeof sw);
        CHECK_MSG(run(&off, NULL, stop, sw, &err) == AL_OK, "%s", err.message);
        CHECK_MSG(run(&on, DIR "/switch/checkpoint", 0, sw, &err) == AL_OK, "%s", err.message);
        CHECK_MSG(memcmp(a, sw, sizeof a) == 0, "switch at step %d", stop);
    }
    /* too late: the long phase ran without sentence order */
    al_pretrain_config off = sop_config(DIR "/late", 0, 1), on = sop_config(DIR "/late", 1, 1);
    CHECK_MSG(run(&off, NULL, LONG_START + 2, NULL, &err) == AL_OK, "%s", err.message);
    CHECK(run(&on, DIR "/late/checkpoint", 0, NULL, &err) == AL_ERR_INVALID);
    CHECK_MSG(has(err.message, "'sop_docs'") && has(err.message, "steps 7..8"), "%s", err.message);
    /* a field of the steps done changed: refused naming it; one that shapes none: accepted */
    al_pretrain_config early = sop_config(DIR "/early", 0, 1);
    CHECK_MSG(run(&early, NULL, 3, NULL, &err) == AL_OK, "%s", err.message);
    al_pretrain_config lr = early;
    lr.lr *= 2;
    CHECK(run(&lr, DIR "/early/checkpoint", 0, NULL, &err) == AL_ERR_INVALID);
    CHECK_MSG(has(err.message, "'lr'") && has(err.message, "steps 1..3"), "%s", err.message);
    al_pretrain_config sh = early;
    sh.shards = 2;
    CHECK(run(&sh, DIR "/early/checkpoint", 0, NULL, &err) == AL_ERR_INVALID && has(err.message, "'shards'"));
    al_pretrain_config ev = sop_config(DIR "/early", 1, 1);
    ev.log_interval = 3;
    ev.eval_sequences = 4;
    CHECK_MSG(run(&ev, DIR "/early/checkpoint", 0, sw, &err) == AL_OK, "%s", err.message);
    CHECK(memcmp(a, sw, sizeof a) == 0);

    /* the output: BertForPreTraining with the head under Hugging Face's names; the loader reads the encoder */
    char *cfg = NULL, *w = NULL;
    size_t cl = 0, wl = 0;
    CHECK(al_read_file(DIR "/sop_a/config.json", &cfg, &cl, &err) == AL_OK && has(cfg, "BertForPreTraining"));
    CHECK(al_read_file(DIR "/sop_a/model.safetensors", &w, &wl, &err) == AL_OK);
    al_tensor_list tl = {0};
    CHECK(w && al_safetensors_read((const uint8_t *)w, wl, "model.safetensors", &tl, &err) == AL_OK);
    const char *names[] = {"bert.pooler.dense.weight", "bert.pooler.dense.bias", "cls.seq_relationship.weight",
                           "cls.seq_relationship.bias"};
    const int64_t counts[] = {32 * 32, 32, 2 * 32, 2};
    for (int i = 0; i < 4; i++) {
        const al_tensor_entry *t = al_tensor_list_find(&tl, names[i]);
        CHECK_MSG(t && al_tensor_numel(t) == counts[i], "%s", names[i]);
    }
    al_tensor_list_free(&tl);
    free(cfg), free(w);
    al_model *m = NULL;
    CHECK_MSG(al_model_load_dir(DIR "/sop_a", &m, &err) == AL_OK, "%s", err.message);
    CHECK(m && al_model_has_mlm_head(m));
    al_model_free(m);
    CHECK(al_read_file(DIR "/mlm/config.json", &cfg, &cl, &err) == AL_OK && has(cfg, "BertForMaskedLM"));
    free(cfg);

    /* two shards with sentence order: repeats and resumes bit for bit */
    float s2a[STEPS], s2b[STEPS];
    al_pretrain_config c2 = sop_config(DIR "/two_a", 1, 2);
    CHECK_MSG(run(&c2, NULL, 0, s2a, &err) == AL_OK, "%s", err.message);
    c2 = sop_config(DIR "/two_b", 1, 2);
    CHECK_MSG(run(&c2, NULL, 9, s2b, &err) == AL_OK, "%s", err.message);
    CHECK_MSG(run(&c2, DIR "/two_b/checkpoint", 0, s2b, &err) == AL_OK, "%s", err.message);
    CHECK(memcmp(s2a, s2b, sizeof s2a) == 0);
    CHECK(fabsf(s2a[STEPS - 1] - a[STEPS - 1]) < 0.1f * a[STEPS - 1]);
}

static void test_config(void) {
    al_error err;
    al_pretrain_config c = sop_config(DIR "/bad", 0, 1);
    c.sop_share = 0.5f;
    CHECK(run(&c, NULL, 0, NULL, &err) == AL_ERR_INVALID);
    CHECK_MSG(has(err.message, "sop_docs") && has(err.message, "sop_share"), "%s", err.message);
    c = sop_config(DIR "/bad", 1, 1);
    c.sop_share = 0;
    CHECK(run(&c, NULL, 0, NULL, &err) == AL_ERR_INVALID && has(err.message, "sop_share"));
    c = sop_config(DIR "/bad", 1, 1);
    snprintf(c.sop_docs, sizeof c.sop_docs, DIR "/missing.txt");
    CHECK(run(&c, NULL, 0, NULL, &err) != AL_OK && has(err.message, "missing.txt"));
    static const char json[] = "{\"sop_share\": 1.5}";
    al_pretrain_config p = al_pretrain_default_config();
    CHECK(al_pretrain_config_parse(json, sizeof json - 1, "train_config.json", &p, &err) != AL_OK);
    CHECK_MSG(has(err.message, "'sop_share'") && has(err.message, "train_config.json"), "%s", err.message);
    static const char ok[] = "{\"sop_docs\": \"build/data/train_docs.txt\", \"sop_share\": 0.5}";
    CHECK(al_pretrain_config_parse(ok, sizeof ok - 1, "train_config.json", &p, &err) == AL_OK && p.sop_share == 0.5f);
}

int main(void) {
    if (!fixture_make_data(DIR, 5, 200, 2, 12, &g_text, &g_len) || !write_docs()) {
        CHECK(0);
        return check_summary("pretrain_sop");
    }
    al_error err;
    /* a trained model (not at initialisation) for the data and shard checks */
    al_pretrain_config base = sop_config(DIR "/base", 0, 1);
    base.steps = 4;
    base.short_len = 0;
    CHECK_MSG(run(&base, NULL, 0, NULL, &err) == AL_OK, "%s", err.message);
    al_model *model = NULL;
    CHECK_MSG(al_model_load_dir(DIR "/base", &model, &err) == AL_OK, "%s", err.message);
    if (model) {
        test_docs(al_model_tokenizer(model));
        test_shards(model);
        al_model_free(model);
    }
    test_finite_differences();
    test_runs();
    test_config();
    free(g_text);
    return check_summary("pretrain_sop");
}
