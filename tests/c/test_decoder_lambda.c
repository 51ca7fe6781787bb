/* test_decoder_lambda.c: PAPA's lambda on a causal language model (docs/papa.md, "Causal language models";
 * papa_lm_rank.c). On the two GPT-2 goldens, every head mixed with the golden's causal constants: the batch's
 * next-token loss and its gradient with respect to theta against tests/golden/make_decoder_lambda.py's float64
 * reference (autograd on the definition), and the same gradient against central finite differences of the C
 * loss. On the tiny GPT-2 of tests/fixtures/decoder_tiny_gpt2: the ranking's bits equal on 1 and 3 threads, and the
 * papa op with orders lambda and random end to end: lambdas per head, the loss before and after, lambda moved, the
 * same digest on 1 and 3 threads (pinned); and the sweep in 3 shards merged by papa_merge into the unsharded reply
 * (configs, runs, summary, findings, lambdas, orders, importance, corpus, constants and digest), with the parts it
 * refuses named. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "golden_file.h"
#include "methods/lm/lm_corpus.h"
#include "methods/papa/papa_lm.h"
#include "train/shards.h"
#include "lm_fixture.h"
#include "session_request.h"
#include "train/train.h"


static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* The batch's mean next-token loss with every head mixed at lambda = sigmoid(theta); grads (may be NULL) gets
 * dloss/dtheta. */
static float mixed_loss(al_train_ctx *ctx, const al_batch *b, const int32_t *labels, const float *theta, int NH,
                        float *grads) {
    al_error err;
    memcpy(al_train_lambda_logits(ctx), theta, sizeof(float) * (size_t)NH);
    al_train_zero_grads(ctx);
    float loss = NAN;
    CHECK(al_train_forward(ctx, b, &err) == AL_OK);
    CHECK(al_train_lm_loss(ctx, labels, &loss, NULL, &err) == AL_OK);
    if (grads) {
        CHECK(al_train_backward(ctx, NULL, &err) == AL_OK);
        memcpy(grads, al_train_lambda_grads(ctx), sizeof(float) * (size_t)NH);
    }
    return loss;
}

static double g_loss_err, g_grad_err, g_fd_err; /* the worst over the goldens, printed */

static void test_golden(const char *dir) {
    decoder_golden dg;
    const int opened = decoder_golden_open(dir, "papa_lambda.safetensors", &dg);
    al_model *m = dg.m;
    golden_file g = dg.g, ref = dg.ref;
    al_error err;
    if (opened) {
        const al_config *c = al_model_config(m);
        int64_t shape[4] = {0};
        free(golden_f32(&g, "input_ids", NULL, shape));
        const int B = (int)shape[0], L = (int)shape[1], NH = c->n_layers * c->n_heads;
        int32_t *ids = golden_i32(&g, "input_ids"), *mask = golden_i32(&g, "attention_mask");
        const double *want_theta = golden_f64_in(&ref, "theta", (size_t)NH), *want_loss = golden_f64_in(&ref, "loss", 1);
        const double *want_grad = golden_f64_in(&ref, "dtheta", (size_t)NH), *want_loss0 = golden_f64_in(&ref, "loss0", 1);
        CHECK_MSG(want_theta && want_loss && want_grad && want_loss0, "%s: papa_lambda.safetensors lacks a tensor", dir);
        al_lm_corpus corpus;
        golden_corpus(ids, mask, B, L, &corpus);
        float *C = malloc(sizeof(float) * (size_t)NH * L * L);
        int filled = 0;
        CHECK(al_papa_causal_constants(m, &corpus, 2, 2, NULL, C, &filled, &err) == AL_OK); /* the reference's 2 */
        al_train_options opt = al_train_default_options();
        opt.weight_grads = 0;
        opt.mlm_head = 1;
        opt.training = 0;
        al_train_ctx *ctx = NULL;
        CHECK(al_train_ctx_new(m, B, L, &opt, &ctx, &err) == AL_OK);
        al_head_policy *pol = calloc((size_t)NH, sizeof *pol);
        for (int i = 0; i < NH; i++) pol[i] = (al_head_policy){AL_HEAD_MIX, 0.5f, C + (size_t)i * L * L};
        CHECK(al_train_set_policies(ctx, pol, &err) == AL_OK);
        int32_t *labels = malloc(sizeof(int32_t) * (size_t)B * L);
        al_clm_labels(ids, mask, B, L, labels);
        const al_batch b = {B, L, ids, mask, NULL, NULL};
        float *theta = malloc(sizeof(float) * (size_t)NH), *grad = malloc(sizeof(float) * (size_t)NH);
        float *zero = calloc((size_t)NH, sizeof(float));
        for (int i = 0; want_theta && i < NH; i++) theta[i] = (float)want_theta[i];
        const float loss = mixed_loss(ctx, &b, labels, theta, NH, grad);
        const float loss0 = mixed_loss(ctx, &b, labels, zero, NH, NULL);
        const double rel = fabs(loss - want_loss[0]) / want_loss[0], rel0 = fabs(loss0 - want_loss0[0]) / want_loss0[0];
        CHECK_MSG(rel < 1e-5 && rel0 < 1e-5, "%s: loss %.7f (reference %.7f), at lambda 0.5 %.7f (%.7f)", dir, loss,
                  want_loss[0], loss0, want_loss0[0]);
        g_loss_err = fmax(g_loss_err, fmax(rel, rel0));
        double gmax = 0.0, worst = 0.0;
        for (int i = 0; i < NH; i++) gmax = fmax(gmax, fabs(want_grad[i]));
        for (int i = 0; i < NH; i++) worst = fmax(worst, fabs(grad[i] - want_grad[i]));
        CHECK_MSG(worst < 1e-4 * gmax + 1e-7, "%s: dtheta differs from the reference by %g (largest %g)", dir, worst, gmax);
        g_grad_err = fmax(g_grad_err, worst / gmax);
        /* central differences of the C loss itself, every head */
        const float h = 0.05f;
        double fd_worst = 0.0;
        for (int i = 0; i < NH; i++) {
            const float t0 = theta[i];
            theta[i] = t0 + h;
            const double up = mixed_loss(ctx, &b, labels, theta, NH, NULL);
            theta[i] = t0 - h;
            const double down = mixed_loss(ctx, &b, labels, theta, NH, NULL);
            theta[i] = t0;
            fd_worst = fmax(fd_worst, fabs((up - down) / (2.0 * h) - grad[i]));
        }
        CHECK_MSG(fd_worst < 5e-3 * gmax, "%s: dtheta differs from central differences by %g (largest %g)", dir,
                  fd_worst, gmax);
        g_fd_err = fmax(g_fd_err, fd_worst / gmax);
        al_train_ctx_free(ctx);
        al_lm_corpus_free(&corpus);
        free(C), free(pol), free(labels), free(theta), free(grad), free(zero), free(ids), free(mask);
    }
    decoder_golden_close(&dg);
}

/* The ranking on 1 and 3 threads: the same bits (the shards' numbers do not depend on the threads). */
static void test_rank_threads(void) {
    al_model *m = NULL;
    al_error err;
    CHECK(al_model_load_dir(TINY, &m, &err) == AL_OK);
    if (!m) return;
    const al_config *c = al_model_config(m);
    const int NH = c->n_layers * c->n_heads, W = 32;
    char *text = make_text(12, 12, 5);
    al_lm_corpus corpus;
    CHECK(al_lm_corpus_build(m, text, "t", W, &corpus, &err) == AL_OK);
    float *C = malloc(sizeof(float) * (size_t)NH * W * W), *theta[2];
    int filled = 0;
    CHECK(al_papa_causal_constants(m, &corpus, 2, 4, NULL, C, &filled, &err) == AL_OK);
    al_papa_rank_settings s = al_papa_sweep_default_request().rank;
    s.epochs = 3, s.batch_size = 4, s.lr = 0.05f, s.shards = 2, s.seed = 7;
    double loss[2];
    for (int t = 0; t < 2; t++) {
        al_threadpool *pool = NULL;
        CHECK(al_threadpool_new(t ? 3 : 1, &pool, &err) == AL_OK);
        al_forward_params p = al_forward_default_params();
        p.pool = pool;
        theta[t] = malloc(sizeof(float) * (size_t)NH);
        CHECK_MSG(al_papa_lm_rank(m, &corpus, C, &s, &p, theta[t], &loss[t], NULL, &err) == AL_OK, "%s", err.message);
        al_threadpool_free(pool);
    }
    CHECK(!memcmp(theta[0], theta[1], sizeof(float) * (size_t)NH) && loss[0] == loss[1]);
    float lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < NH; i++) lo = fminf(lo, theta[0][i]), hi = fmaxf(hi, theta[0][i]);
    CHECK_MSG(hi - lo > 0.01f, "theta spans only %g", (double)(hi - lo));
    /* a memory limit that a batch of 4 passes and one of 2 fits: the batch is lowered to 2, and the numbers are
     * those of asking for 2 */
    {
        al_train_options o = al_train_default_options();
        o.weight_grads = 0, o.mlm_head = 1, o.seed = s.seed;
        al_train_size two, three;
        CHECK(al_shards_measure(m, 2, 2, W, &o, &two, &err) == AL_OK && al_shards_measure(m, 2, 3, W, &o, &three, &err) == AL_OK);
        al_papa_rank_settings lim = s, asked = s;
        lim.mem_limit = (two.total + three.total) / 2;
        asked.batch_size = 2;
        float *a = malloc(sizeof(float) * (size_t)NH), *b = malloc(sizeof(float) * (size_t)NH);
        double la, lb;
        int used = 0, used_b = 0;
        al_forward_params p = al_forward_default_params();
        CHECK_MSG(al_papa_lm_rank(m, &corpus, C, &lim, &p, a, &la, &used, &err) == AL_OK, "%s", err.message);
        CHECK(al_papa_lm_rank(m, &corpus, C, &asked, &p, b, &lb, &used_b, &err) == AL_OK);
        CHECK_MSG(used == 2 && used_b == 2, "batch %d under the limit, %d asked", used, used_b);
        CHECK(!memcmp(a, b, sizeof(float) * (size_t)NH) && la == lb);
        /* a limit no batch fits is refused, naming memory */
        lim.mem_limit = 1024;
        CHECK(al_papa_lm_rank(m, &corpus, C, &lim, &p, a, &la, &used, &err) == AL_ERR_OOM && strstr(err.message, "MB allowed"));
        free(a), free(b);
    }
    al_lm_corpus_free(&corpus);
    free(theta[0]), free(theta[1]), free(C), free(text);
    al_model_free(m);
}

/* The sweep's digest with order lambda, pinned: it moves only when a number of the sweep does. */
#define LAMBDA_DIGEST "sha256:ca4ee2c7863b6a484108dc45c8ecb5017250d9946c2fc0785739cc50467186ad"

static void test_op(void) {
    char *held = make_text(24, 5, 11), *avg = make_text(12, 12, 5);
    cJSON *q = cJSON_CreateObject();
    cJSON_AddStringToObject(q, "op", "papa");
    cJSON_AddStringToObject(q, "model", "tiny");
    cJSON_AddStringToObject(q, "corpus", held);
    cJSON_AddStringToObject(q, "constants_corpus", avg);
    cJSON_AddNumberToObject(q, "L", 32);
    cJSON_AddNumberToObject(q, "min_windows", 2);
    cJSON_AddItemToObject(q, "fractions", cJSON_Parse("[1, 0.5, 0]"));
    cJSON_AddItemToObject(q, "orders", cJSON_Parse("[\"lambda\", \"random\"]"));
    cJSON_AddItemToObject(q, "ranking", cJSON_Parse("{\"epochs\": 3, \"batch_size\": 4, \"lr\": 0.05, \"seed\": 7}"));
    char *req = cJSON_PrintUnformatted(q);
    cJSON_Delete(q);
    char digest[2][80];
    for (int t = 0; t < 2; t++) {
        al_session *s = session_with(t ? 3 : 1);
        al_reply r;
        cJSON *j = run(s, req, AL_OK, &r);
        snprintf(digest[t], sizeof digest[t], "%s", cJSON_GetStringValue(item(j, "digest")));
        if (t == 0) {
            const cJSON *lam = item(j, "lambdas"), *rk = item(j, "ranking");
            CHECK(cJSON_GetArraySize(lam) == 2 && cJSON_GetArraySize(cJSON_GetArrayItem(lam, 0)) == 4);
            CHECK(cJSON_IsArray(item(item(j, "orders"), "lambda")) && cJSON_IsArray(item(j, "theta")));
            const double before = item(rk, "bits_before")->valuedouble, after = item(rk, "bits_after")->valuedouble;
            CHECK_MSG(after < before, "the ranking's loss %.6f -> %.6f bits did not fall", before, after);
            CHECK(cJSON_IsTrue(item(item(rk, "lambda"), "learned")));
            printf("decoder_lambda: ranking on %d windows, %.6f -> %.6f bits per token, lambda range %.4f; lambdas",
                   item(rk, "windows")->valueint, before, after, item(item(rk, "lambda"), "range")->valuedouble);
            for (int l = 0; l < cJSON_GetArraySize(lam); l++)
                for (int h = 0; h < cJSON_GetArraySize(cJSON_GetArrayItem(lam, l)); h++)
                    printf(" %.4f", cJSON_GetArrayItem(cJSON_GetArrayItem(lam, l), h)->valuedouble);
            printf("\n");
            const cJSON *sum = item(j, "summary");
            for (int i = 0; i < cJSON_GetArraySize(sum); i++) {
                const cJSON *cf = cJSON_GetArrayItem(item(j, "configs"), item(cJSON_GetArrayItem(sum, i), "config")->valueint);
                printf("decoder_lambda: %-28s %.6f bits per token\n", cJSON_GetStringValue(item(cf, "label")),
                       item(cJSON_GetArrayItem(sum, i), "mean")->valuedouble);
            }
        }
        cJSON_Delete(j);
        al_reply_free(&r);
        al_session_free(s);
    }
    CHECK_MSG(!strcmp(digest[0], digest[1]), "1 thread %s, 3 threads %s", digest[0], digest[1]);
    CHECK_MSG(!strcmp(digest[0], LAMBDA_DIGEST), "digest %s, pinned %s", digest[0], LAMBDA_DIGEST);
    /* a learning rate too small to move lambda: said, by docs/findings.md's floor */
    al_session *s = session_with(1);
    char *flat = papa_lm_request(held, avg, 0, ", \"L\": 32, \"fractions\": [1, 0.5], \"orders\": [\"lambda\"], \"baselines\": false, "
                                       "\"ranking\": {\"epochs\": 1, \"lr\": 1e-8}");
    al_reply r;
    cJSON *j = run(s, flat, AL_OK, &r);
    CHECK(cJSON_IsFalse(item(item(item(j, "ranking"), "lambda"), "learned")));
    char *w = cJSON_PrintUnformatted(item(j, "warnings"));
    CHECK_MSG(w && strstr(w, "did not learn a ranking") && strstr(w, "ranking.lr (now 1e-08)"), "warnings: %s", w ? w : "");
    free(w), free(flat);
    cJSON_Delete(j);
    al_reply_free(&r);
    al_session_free(s);
    free(req), free(held), free(avg);
}

/* The papa request on the two texts with `extra` fields appended (", ..."). */
static char *merge_request(cJSON *const *parts, int n) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "op", "papa_merge");
    cJSON *list = cJSON_AddArrayToObject(m, "parts");
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(list, cJSON_Duplicate(parts[i], 1));
    char *t = cJSON_PrintUnformatted(m);
    cJSON_Delete(m);
    return t;
}

/* The same JSON text for key in both replies. */
static void same_item(const cJSON *a, const cJSON *b, const char *key) {
    char *x = cJSON_PrintUnformatted(item(a, key)), *y = cJSON_PrintUnformatted(item(b, key));
    CHECK_MSG(x && y && !strcmp(x, y), "'%s' differs after the merge:\n%.300s\n%.300s", key, x ? x : "(none)",
              y ? y : "(none)");
    free(x), free(y);
}

static void test_merge(void) {
    char *held = make_text(24, 5, 11), *avg = make_text(12, 12, 5);
    const char *common = ", \"L\": 32, \"min_windows\": 2, \"fractions\": [1, 0.5, 0.25, 0], \"orders\": [\"lambda\", "
                         "\"random\", \"gradient\"], \"constants\": [\"average\", \"previous\"], \"ranking\": {\"epochs\": 2, "
                         "\"batch_size\": 4, \"lr\": 0.05}";
    al_session *s = session_with(2);
    char *req = papa_lm_request(held, avg, 0, common);
    al_reply rw;
    cJSON *whole = run(s, req, AL_OK, &rw);
    free(req);
    cJSON *parts[3];
    al_reply rp[3];
    for (int i = 0; i < 3; i++) {
        char extra[600];
        snprintf(extra, sizeof extra, "%s, \"shard\": \"%d/3\"", common, i);
        req = papa_lm_request(held, avg, 0, extra);
        parts[i] = run(s, req, AL_OK, &rp[i]);
        free(req);
        CHECK(cJSON_GetArraySize(item(parts[i], "runs")) < cJSON_GetArraySize(item(whole, "runs")));
        cJSON_DeleteItemFromObject(parts[i], "tensors");
    }
    cJSON *scrambled[3] = {parts[2], parts[0], parts[1]};
    req = merge_request(scrambled, 3);
    al_reply rm;
    cJSON *merged = run(s, req, AL_OK, &rm);
    free(req);
    static const char *const keys[] = {"digest", "configs", "runs", "summary", "findings", "lambdas", "theta",
                                       "ranking_loss", "ranking", "orders", "importance", "corpus", "constants",
                                       "score", "hashes", "shape", NULL};
    for (int k = 0; keys[k]; k++) same_item(whole, merged, keys[k]);
    CHECK(item(merged, "merged_parts")->valueint == 3 && !item(item(merged, "config"), "shard"));
    printf("decoder_lambda: 3 shards merged: digest %s = unsharded (%d configurations)\n",
           cJSON_GetStringValue(item(merged, "digest")), cJSON_GetArraySize(item(whole, "configs")));
    /* refused, named: a shard missing, one given twice, a whole reply (no shard's numbers), another corpus, an
     * encoder's part beside a language model's */
    req = merge_request(parts, 2);
    expect_error(s, req, "shard 2/3 is missing");
    free(req);
    cJSON *twice[4] = {parts[0], parts[1], parts[2], parts[1]};
    req = merge_request(twice, 4);
    expect_error(s, req, "appears in two parts");
    free(req);
    req = merge_request(&whole, 1);
    expect_error(s, req, "lm_shard");
    free(req);
    cJSON *other = cJSON_Duplicate(parts[1], 1);
    cJSON_ReplaceItemInObject(cJSON_GetObjectItem(other, "hashes"), "corpus", cJSON_CreateString("sha256:0"));
    cJSON *with_other[3] = {parts[0], other, parts[2]};
    req = merge_request(with_other, 3);
    expect_error(s, req, "parts[1]' (shard 1/3) comes from another request: its corpus hash differs");
    free(req);
    cJSON_DeleteItemFromObject(other, "score");
    req = merge_request(with_other, 3);
    expect_error(s, req, "parts[1]' is an encoder's");
    free(req);
    cJSON_Delete(other);
    cJSON_Delete(merged);
    al_reply_free(&rm);
    for (int i = 0; i < 3; i++) cJSON_Delete(parts[i]), al_reply_free(&rp[i]);
    cJSON_Delete(whole);
    al_reply_free(&rw);
    al_session_free(s);
    free(held), free(avg);
}

int main(void) {
    test_golden("gpt2");
    test_golden("gpt2_prefixed");
    printf("decoder_lambda: against the float64 reference: loss within %.2g relative, dtheta within %.2g of its "
           "largest; central differences within %.2g\n", g_loss_err, g_grad_err, g_fd_err);
    test_rank_threads();
    test_op();
    test_merge();
    return check_summary("decoder_lambda");
}
