/* test_decoder_papa.c: PAPA on a causal language model (docs/papa.md, "Causal language models"; papa_lm.h) on the
 * tiny GPT-2 of tests/fixtures/decoder_tiny_gpt2. The causal constants: every row reached by a window sums to 1
 * with nothing above the diagonal, rows too few windows reach are the uniform prefix, and a text used alone gives
 * its own attention and, with every head constant, the model's own loss. The data-free causal kinds hold their
 * rows. The papa op with a corpus: the same digest on 1 and 3 threads (pinned), the full model's bits equal the lm
 * op's, a verdict sentence in a loss's words, and refusals that name the field (an encoder, task and corpus
 * together; a lone shard to papa_merge; order lambda and merging run in test_decoder_lambda.c). Against tests/golden/make_decoder_papa.py's float64 reference on the two GPT-2 goldens: the
 * causal constants over the golden's examples (a row fewer than 2 windows reach the uniform prefix) within 1e-5, and
 * each example's loss with half the heads and with every head constant within 1e-5 relative. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "golden_file.h"
#include "methods/lm/lm_corpus.h"
#include "methods/papa/papa.h"
#include "methods/papa/papa_lm.h"
#include "lm_fixture.h"
#include "session_request.h"

#define ENCODER "tests/fixtures/bert_st_f32"

static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static void test_constants(const al_model *m) {
    const al_config *c = al_model_config(m);
    const int NL = c->n_layers, H = c->n_heads, W = 64;
    char *text = make_text(6, 9, 7); /* windows of 30 or so tokens: rows past them are reached by none */
    al_lm_corpus corpus;
    al_error err;
    CHECK(al_lm_corpus_build(m, text, "t", W, &corpus, &err) == AL_OK);
    int longest = 0;
    for (int w = 0; w < corpus.n_windows; w++) longest = corpus.len[w] > longest ? corpus.len[w] : longest;
    CHECK(longest < W);
    float *C = malloc(sizeof(float) * (size_t)NL * H * W * W);
    int filled = -1;
    CHECK(al_papa_causal_constants(m, &corpus, 1, 4, NULL, C, &filled, &err) == AL_OK);
    CHECK_MSG(filled == W - longest, "rows filled %d, expected %d", filled, W - longest);
    for (int lh = 0; lh < NL * H; lh++)
        for (int i = 0; i < W; i++) {
            double sum = 0.0;
            for (int j = 0; j < W; j++) {
                const float v = C[((size_t)lh * W + i) * W + j];
                if (j > i) CHECK(v == 0.0f);
                if (i >= longest) CHECK(fabsf(v - (j <= i ? 1.0f / (float)(i + 1) : 0.0f)) < 1e-7f);
                sum += v;
            }
            CHECK_MSG(fabs(sum - 1.0) < 1e-5, "head %d row %d sums to %.9f", lh, i, sum);
        }
    /* a minimum no row reaches: every row is the uniform prefix */
    CHECK(al_papa_causal_constants(m, &corpus, 1000, 4, NULL, C, &filled, &err) == AL_OK);
    CHECK(filled == W);
    CHECK(fabsf(C[(size_t)(W - 1) * W + 3] - 1.0f / (float)W) < 1e-7f);
    al_lm_corpus_free(&corpus);
    free(text);

    /* one text alone: C is its own attention, and every head constant gives the model's own loss */
    const char *one = "the cat sat on a mat.";
    CHECK(al_lm_corpus_build(m, one, "one", W, &corpus, &err) == AL_OK);
    CHECK(corpus.n_windows == 1 && corpus.len[0] <= W);
    CHECK(al_papa_causal_constants(m, &corpus, 1, 4, NULL, C, &filled, &err) == AL_OK);
    const int n = corpus.len[0];
    float *attn = malloc(sizeof(float) * (size_t)NL * H * n * n);
    al_forward_outputs out = {0};
    out.attentions = attn;
    al_batch b = {1, n, corpus.ids, NULL, NULL, NULL};
    CHECK(al_forward(m, &b, NULL, &out, &err) == AL_OK);
    double worst = 0.0;
    for (int lh = 0; lh < NL * H; lh++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                worst = fmax(worst, fabs(C[((size_t)lh * W + i) * W + j] - attn[((size_t)lh * n + i) * n + j]));
    CHECK_MSG(worst < 1e-6, "own attention differs by %g", worst);
    al_lm_corpus_loss base = {0}, constant = {0};
    CHECK(al_lm_corpus_loss_new(&corpus, &base, &err) == AL_OK);
    CHECK(al_lm_corpus_loss_new(&corpus, &constant, &err) == AL_OK);
    CHECK(al_lm_corpus_score(m, &corpus, NULL, 8, &base, &err) == AL_OK);
    al_head_policy *pol = malloc(sizeof(al_head_policy) * (size_t)NL * H);
    int *order = malloc(sizeof(int) * (size_t)NL * H);
    for (int i = 0; i < NL * H; i++) order[i] = i;
    al_papa_policies(order, NL * H, NL, H, C, W, 0, pol);
    al_forward_params p = al_forward_default_params();
    p.policies = pol;
    CHECK(al_lm_corpus_score(m, &corpus, &p, 8, &constant, &err) == AL_OK);
    const double rel = fabs(constant.summary.nats - base.summary.nats) / base.summary.nats;
    CHECK_MSG(rel < 1e-5, "every head on its own average: %.9f nats against the model's %.9f", constant.summary.nats,
              base.summary.nats);
    al_lm_corpus_loss_free(&base);
    al_lm_corpus_loss_free(&constant);
    al_lm_corpus_free(&corpus);
    free(pol), free(order), free(attn), free(C);
}

static void test_data_free(void) {
    const int L = 5;
    float C[25];
    al_error err;
    CHECK(al_papa_data_free(AL_CONST_PREVIOUS, L, C, &err) == AL_OK);
    CHECK(C[0] == 1.0f && C[1 * L + 0] == 1.0f && C[4 * L + 3] == 1.0f && C[4 * L + 4] == 0.0f);
    CHECK(al_papa_data_free(AL_CONST_FIRST, L, C, &err) == AL_OK);
    CHECK(C[3 * L + 0] == 1.0f && C[3 * L + 1] == 0.0f);
    CHECK(al_papa_data_free(AL_CONST_FIRST_PREVIOUS, L, C, &err) == AL_OK);
    CHECK(C[0] == 1.0f && C[3 * L + 0] == 0.5f && C[3 * L + 2] == 0.5f && C[1 * L + 0] == 1.0f);
    CHECK(al_papa_data_free(AL_CONST_FIRST_UNIFORM, L, C, &err) == AL_OK);
    CHECK(fabsf(C[3 * L + 0] - 0.625f) < 1e-7f && fabsf(C[3 * L + 3] - 0.125f) < 1e-7f && C[3 * L + 4] == 0.0f);
    CHECK(al_papa_constant_from_name("first_uniform") == AL_CONST_FIRST_UNIFORM);
}

/* The sweep's digest, pinned: it moves only when a number of the sweep does (every build and thread count). */
#define SWEEP_DIGEST "sha256:b5f55dfaae18b606eef6b52e05bfc142da0b13e25ace3e43350e89413f16bb01"

static void test_op(void) {
    char *held = make_text(24, 5, 11), *avg = make_text(12, 12, 5);
    const char *extra = ", \"fractions\": [1, 0.5, 0], \"orders\": [\"first_to_last\", \"random\", \"gradient\"], "
                        "\"constants\": [\"average\", \"previous\"], \"min_windows\": 2";
    char *req = papa_lm_request(held, avg, 32, extra);
    char digest[2][80];
    for (int t = 0; t < 2; t++) {
        al_session *s = session_with(t ? 3 : 1);
        al_reply r;
        cJSON *j = run(s, req, AL_OK, &r);
        snprintf(digest[t], sizeof digest[t], "%s", cJSON_GetStringValue(item(j, "digest")));
        if (t == 0) {
            CHECK(!strcmp(cJSON_GetStringValue(item(item(j, "score"), "direction")), "lower is better"));
            const cJSON *cfgs = item(j, "configs"), *sum = item(j, "summary");
            CHECK(cJSON_GetArraySize(cfgs) == cJSON_GetArraySize(sum));
            CHECK(!strcmp(cJSON_GetStringValue(item(cJSON_GetArrayItem(cfgs, 0), "label")), "full"));
            const cJSON *pos = item(cJSON_GetArrayItem(cfgs, 0), "bits_by_position");
            CHECK(cJSON_GetArraySize(pos) == 32);
            const char *text = cJSON_GetStringValue(item(item(j, "findings"), "text"));
            CHECK_MSG(text && strstr(text, "bits per token") && strstr(text, "documents"), "findings: %s", text ? text : "");
            CHECK(cJSON_IsArray(item(item(j, "orders"), "gradient")));
            /* the findings' pair and the summary's are the same number, in bits (full minus configuration) */
            const cJSON *fd = item(j, "findings");
            const int all = item(fd, "all_constant")->valueint;
            const cJSON *paired = item(cJSON_GetArrayItem(sum, all), "paired");
            CHECK(item(item(fd, "full_minus_constant"), "mean")->valuedouble == item(paired, "mean")->valuedouble);
            /* the full model's bits are the lm op's on the same text cut into the same windows */
            const double full = item(cJSON_GetArrayItem(sum, 0), "mean")->valuedouble;
            cJSON *q = cJSON_CreateObject();
            cJSON_AddStringToObject(q, "op", "lm");
            cJSON_AddStringToObject(q, "model", "tiny");
            cJSON_AddStringToObject(q, "corpus", held);
            char *lm_req = cJSON_PrintUnformatted(q);
            cJSON_Delete(q);
            al_reply r2;
            cJSON *j2 = run(s, lm_req, AL_OK, &r2);
            const double lm_bits = item(item(j2, "summary"), "bits_per_token")->valuedouble;
            /* the lm op's windows are the model's positions; the documents here fit in 32 tokens, one window each */
            CHECK_MSG(fabs(lm_bits - full) < 1e-9, "papa's full model %.12f bits, the lm op's %.12f", full, lm_bits);
            cJSON_Delete(j2);
            al_reply_free(&r2);
            free(lm_req);
            printf("decoder_papa: %s\n", text);
        }
        cJSON_Delete(j);
        al_reply_free(&r);
        al_session_free(s);
    }
    CHECK_MSG(!strcmp(digest[0], digest[1]), "1 thread %s, 3 threads %s", digest[0], digest[1]);
    CHECK_MSG(!strcmp(digest[0], SWEEP_DIGEST), "digest %s, pinned %s", digest[0], SWEEP_DIGEST);
    free(req);

    al_session *s = session_with(1);
    char *bad = papa_lm_request(held, avg, 32, ", \"task\": \"pos\"");
    expect_error(s, bad, "not both");
    free(bad);
    bad = papa_lm_request(held, avg, 32, ", \"fractions\": [1, 0], \"constants\": [\"first\"], \"shard\": \"0/2\"");
    al_reply part;
    cJSON *pj = run(s, bad, AL_OK, &part);
    cJSON_DeleteItemFromObject(pj, "tensors");
    cJSON *merge = cJSON_CreateObject();
    cJSON_AddStringToObject(merge, "op", "papa_merge");
    cJSON_AddItemToArray(cJSON_AddArrayToObject(merge, "parts"), pj);
    char *merge_req = cJSON_PrintUnformatted(merge);
    expect_error(s, merge_req, "shard 1/2 is missing"); /* merges, but only every shard (test_decoder_lambda.c) */
    cJSON_Delete(merge);
    free(merge_req);
    al_reply_free(&part);
    free(bad);
    bad = papa_lm_request(held, "", 32, ", \"constants\": [\"average\"]");
    expect_error(s, bad, "constants_corpus");
    free(bad);
    al_reply r;
    cJSON *j = run(s, "{\"op\": \"load_model\", \"model\": \"enc\", \"path\": \"" ENCODER "\"}", AL_OK, &r);
    cJSON_Delete(j);
    al_reply_free(&r);
    expect_error(s, "{\"op\": \"papa\", \"model\": \"enc\", \"corpus\": \"a b c\"}", "not a causal language model");
    al_session_free(s);
    free(held), free(avg);
}

/* The golden's examples as a corpus, one window (and one document) each. */
static double g_const_err, g_loss_err; /* the worst over the goldens, printed */

static void test_golden(const char *dir) {
    decoder_golden dg;
    const int opened = decoder_golden_open(dir, "papa.safetensors", &dg);
    al_model *m = dg.m;
    golden_file g = dg.g, ref = dg.ref;
    al_error err;
    if (opened) {
        const al_config *c = al_model_config(m);
        int64_t shape[4] = {0};
        free(golden_f32(&g, "input_ids", NULL, shape));
        const int B = (int)shape[0], L = (int)shape[1], NL = c->n_layers, H = c->n_heads, NH = NL * H;
        int32_t *ids = golden_i32(&g, "input_ids"), *mask = golden_i32(&g, "attention_mask");
        const double *want_c = golden_f64_in(&ref, "constants", (size_t)NH * L * L);
        const double *losses[3] = {golden_f64_in(&ref, "losses", (size_t)B), golden_f64_in(&ref, "losses_half", (size_t)B),
                                   golden_f64_in(&ref, "losses_all", (size_t)B)};
        CHECK_MSG(want_c && losses[0] && losses[1] && losses[2], "%s: papa.safetensors lacks a tensor", dir);
        al_lm_corpus corpus;
        golden_corpus(ids, mask, B, L, &corpus);
        float *C = malloc(sizeof(float) * (size_t)NH * L * L);
        int filled = 0;
        CHECK(al_papa_causal_constants(m, &corpus, 2, 2, NULL, C, &filled, &err) == AL_OK);
        double worst = 0.0;
        for (size_t e = 0; want_c && e < (size_t)NH * L * L; e++) worst = fmax(worst, fabs(C[e] - want_c[e]));
        CHECK_MSG(worst < 1e-5, "%s: constants differ from the reference by %g", dir, worst);
        g_const_err = fmax(g_const_err, worst);
        al_head_policy *pol = malloc(sizeof(al_head_policy) * (size_t)NH);
        int *order = malloc(sizeof(int) * (size_t)NH);
        al_lm_corpus_loss loss;
        CHECK(al_lm_corpus_loss_new(&corpus, &loss, &err) == AL_OK);
        for (int which = 0; which < 3 && losses[which]; which++) {
            int k = 0; /* half: the heads l * H + h even, as the reference */
            for (int lh = 0; lh < NH; lh++)
                if (which == 2 || (which == 1 && lh % 2 == 0)) order[k++] = lh;
            al_papa_policies(order, k, NL, H, C, L, 0, pol);
            al_forward_params p = al_forward_default_params();
            p.policies = which ? pol : NULL;
            CHECK(al_lm_corpus_score(m, &corpus, &p, 2, &loss, &err) == AL_OK);
            for (int b = 0; b < B; b++) {
                const double mine = loss.doc_nll[b] / (double)loss.doc_tokens[b], rel = fabs(mine - losses[which][b]) / losses[which][b];
                CHECK_MSG(rel < 1e-5, "%s: example %d, %s: loss %.9f, reference %.9f", dir, b,
                          which == 0 ? "no head constant" : which == 1 ? "half the heads constant" : "every head constant",
                          mine, losses[which][b]);
                g_loss_err = fmax(g_loss_err, rel);
            }
        }
        al_lm_corpus_loss_free(&loss);
        al_lm_corpus_free(&corpus);
        free(pol), free(order), free(C), free(ids), free(mask);
    }
    decoder_golden_close(&dg);
}

int main(void) {
    al_model *m = NULL;
    al_error err;
    CHECK(al_model_load_dir(TINY, &m, &err) == AL_OK);
    test_constants(m);
    test_data_free();
    al_model_free(m);
    test_op();
    test_golden("gpt2");
    test_golden("gpt2_prefixed");
    printf("decoder_papa: against the float64 reference: constants within %.2g, losses within %.2g relative\n",
           g_const_err, g_loss_err);
    return check_summary("decoder_papa");
}
