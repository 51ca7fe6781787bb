/* test_decoder_agreement.c: the head_agreement op on a causal language model's corpus (src/api/op_agreement_lm.c,
 * docs/agreement.md "Causal language models"), as tests/c/test_agreement.c checks it on an encoder, on the tiny GPT-2
 * of tests/fixtures (lm_fixture.h's texts): every grid is the number the single op gives for the same request, each
 * op in a session of its own (the papa op's corpus sweep's lambdas and gradient importance, head_stats on the same
 * corpus, norm_attention over the scored windows, head_roles' repeat scores at its defaults); the constants and lambdas a papa sweep leaves are reused; the
 * matrix is symmetric with a unit diagonal; the digest is the same on 1 and 3 threads and pinned (natively and in
 * WebAssembly: the same bits); bad requests are refused by name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "lm_fixture.h"
#include "methods/lm/lm_corpus.h"
#include "session_request.h"

#define PINNED_DIGEST "sha256:8c7f8054ae0fdf046753878974808636f197bd8c0f251aa05c6462ab3c724483"

static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static cJSON *run_once(al_session *s, const char *request) {
    al_reply reply;
    cJSON *r = run(s, request, AL_OK, &reply);
    al_reply_free(&reply);
    return r;
}

/* A request of op on "tiny" scoring held with constants from avg, then `extra` fields ("" or ", ...") (malloc'd). */
static char *lm_request(const char *op, const char *held, const char *avg, const char *extra) {
    char *papa = papa_lm_request(held, avg, 0, extra);
    const char *rest = strstr(papa, "\"model\"");
    const size_t n = strlen(rest) + strlen(op) + 32;
    char *out = malloc(n);
    snprintf(out, n, "{\"op\":\"%s\",%s", op, rest);
    free(papa);
    return out;
}

/* Whether two JSON values print the same (numbers as cJSON prints them: the same doubles). */
static int same_json(const cJSON *a, const cJSON *b, const char *what) {
    char *x = cJSON_PrintUnformatted(a), *y = cJSON_PrintUnformatted(b);
    const int same = x && y && !strcmp(x, y);
    if (!same) fprintf(stderr, "%s differs:\n  %.400s\n  %.400s\n", what, x ? x : "(none)", y ? y : "(none)");
    cJSON_free(x), cJSON_free(y);
    return same;
}

/* A grid [NL][H] against a flat list [NL * H] of the same numbers. */
static int same_flat(const cJSON *grid, const cJSON *flat, const char *what) {
    cJSON *g = cJSON_CreateArray();
    const cJSON *row, *v;
    cJSON_ArrayForEach(row, grid) cJSON_ArrayForEach(v, row) cJSON_AddItemToArray(g, cJSON_Duplicate(v, 1));
    const int same = same_json(g, flat, what);
    cJSON_Delete(g);
    return same;
}

#define COMMON ", \"L\": 32, \"min_windows\": 2, \"ranking\": {\"epochs\": 2, \"batch_size\": 4, \"lr\": 0.05, \"max_examples\": 8}"

static void test_op(void) {
    char *held = make_text(24, 5, 11), *avg = make_text(12, 12, 5);
    const int NL = 2, H = 4, M = 10;
    static const char *const ids[10] = {"lambda", "gradient", "input_dependence", "confidence", "entropy", "sink_mass",
                                        "norm_mass", "previous_token", "induction", "duplicate_token"};
    char *req = lm_request("head_agreement", held, avg, COMMON ", \"least_k\": 3");
    al_session *s1 = session_with(1), *s3 = session_with(3);
    cJSON *r = run_once(s1, req), *r3 = run_once(s3, req);
    const cJSON *measures = item(r, "measures"), *grids = item(r, "grids"), *sp = item(r, "spearman");
    CHECK(cJSON_GetArraySize(measures) == M && cJSON_GetArraySize(sp) == M);
    for (int x = 0; x < M; x++) {
        const cJSON *mx = cJSON_GetArrayItem(measures, x);
        CHECK_MSG(!strcmp(cJSON_GetStringValue(item(mx, "id")), ids[x]), "measure %d is %s", x, ids[x]);
        const cJSON *g = item(grids, ids[x]);
        CHECK(cJSON_GetArraySize(g) == NL && cJSON_GetArraySize(cJSON_GetArrayItem(g, 0)) == H);
    }
    CHECK(!strcmp(cJSON_GetStringValue(item(cJSON_GetArrayItem(measures, 5), "higher")), "more attention on the first token"));
    /* the matrix: symmetric bit for bit, a unit diagonal where a measure ranks, null where it is constant */
    for (int x = 0; x < M; x++)
        for (int y = 0; y < M; y++) {
            const cJSON *v = cJSON_GetArrayItem(cJSON_GetArrayItem(sp, x), y), *w = cJSON_GetArrayItem(cJSON_GetArrayItem(sp, y), x);
            CHECK_MSG((cJSON_IsNull(v) && cJSON_IsNull(w)) || (cJSON_IsNumber(v) && cJSON_IsNumber(w) &&
                      v->valuedouble == w->valuedouble && fabs(v->valuedouble) <= 1.0), "rho[%d][%d]", x, y);
            if (x == y) CHECK_MSG(cJSON_IsNumber(v) && v->valuedouble == 1.0, "rho[%d][%d] = 1", x, x);
        }
    const cJSON *least = item(r, "least");
    CHECK(item(least, "k")->valuedouble == 3);
    const char *finding = cJSON_GetStringValue(item(r, "finding"));
    CHECK_MSG(finding && strstr(finding, "PAPA's λ") && finding[strlen(finding) - 1] == '.', "%s", finding ? finding : "");
    const cJSON *fi = item(r, "findings");
    CHECK(cJSON_GetArraySize(item(fi, "pairs")) == 45 && !strcmp(cJSON_GetStringValue(item(fi, "p_method")), "exact"));
    CHECK(item(r, "hashes") && item(item(r, "hashes"), "corpus") && item(item(r, "hashes"), "constants_corpus") &&
          !item(item(r, "hashes"), "task"));
    CHECK(item(r, "n_examples")->valuedouble == 8 && item(r, "n_validation")->valuedouble >= 24);
    CHECK(!cJSON_IsTrue(item(item(r, "reused"), "constants")) && !cJSON_IsTrue(item(item(r, "reused"), "ranking")));
    /* threads change no bit; the digest is pinned (the same in WebAssembly) */
    const char *d1 = cJSON_GetStringValue(item(r, "digest")), *d3 = cJSON_GetStringValue(item(r3, "digest"));
    CHECK_MSG(d1 && d3 && !strcmp(d1, d3), "1 and 3 threads: %s %s", d1 ? d1 : "", d3 ? d3 : "");
    CHECK(same_json(grids, item(r3, "grids"), "grids on 1 and 3 threads"));
    CHECK(same_json(fi, item(r3, "findings"), "findings on 1 and 3 threads"));
    printf("decoder_agreement: digest %s\n", d1 ? d1 : "(none)");
    CHECK_MSG(d1 && !strcmp(d1, PINNED_DIGEST), "digest %s, pinned %s", d1 ? d1 : "(none)", PINNED_DIGEST);
    cJSON *again = run_once(s1, req); /* the session's constants and lambdas: the same numbers */
    CHECK(cJSON_IsTrue(item(item(again, "reused"), "constants")) && cJSON_IsTrue(item(item(again, "reused"), "ranking")));
    CHECK(d1 && !strcmp(cJSON_GetStringValue(item(again, "digest")), d1));
    cJSON_Delete(again);
    free(req);

    /* lambda and the gradient: the papa op's corpus sweep with both orders; then the agreement reuses what it left */
    al_session *sp1 = session_with(1);
    req = lm_request("papa", held, avg, COMMON ", \"orders\": [\"lambda\", \"gradient\"], \"fractions\": [1, 0.5], "
                     "\"constants\": [\"average\"], \"baselines\": false");
    cJSON *papa = run_once(sp1, req);
    free(req);
    CHECK(same_json(item(papa, "lambdas"), item(grids, "lambda"), "lambda vs papa's lambdas"));
    CHECK(same_flat(item(grids, "gradient"), item(papa, "importance"), "gradient vs papa's importance"));
    req = lm_request("head_agreement", held, avg, COMMON ", \"least_k\": 3");
    cJSON *after = run_once(sp1, req);
    free(req);
    CHECK(cJSON_IsTrue(item(item(after, "reused"), "constants")) && cJSON_IsTrue(item(item(after, "reused"), "ranking")));
    CHECK(d1 && !strcmp(cJSON_GetStringValue(item(after, "digest")), d1));
    cJSON_Delete(after), cJSON_Delete(papa);
    al_session_free(sp1);
    /* the statistics: head_stats on the same corpus, the sink mass its mass on the first token */
    al_session *sh = session_with(1);
    req = lm_request("head_stats", held, avg, COMMON);
    cJSON *hs = run_once(sh, req);
    free(req);
    const cJSON *stats = item(hs, "stats");
    CHECK(same_json(item(stats, "js"), item(grids, "input_dependence"), "input_dependence vs head_stats js"));
    CHECK(same_json(item(stats, "confidence"), item(grids, "confidence"), "confidence vs head_stats"));
    CHECK(same_json(item(stats, "entropy"), item(grids, "entropy"), "entropy vs head_stats"));
    CHECK(same_json(item(stats, "first"), item(grids, "sink_mass"), "sink_mass vs head_stats first"));
    CHECK(item(hs, "n_examples")->valuedouble == item(r, "n_validation")->valuedouble);
    CHECK(item(hs, "row_rule") && !cJSON_IsTrue(item(item(hs, "reused"), "constants")));
    cJSON_Delete(hs);
    al_session_free(sh);
    /* norm_mass: norm_attention over the scored windows (their real tokens, padded to L) */
    al_model *model = NULL;
    al_error err;
    al_lm_corpus c = {0};
    CHECK(al_model_load_dir(TINY, &model, &err) == AL_OK);
    CHECK(model && al_lm_corpus_build(model, held, "corpus", 32, &c, &err) == AL_OK);
    cJSON *nreq = cJSON_CreateObject(), *rows = cJSON_CreateArray();
    cJSON_AddStringToObject(nreq, "op", "norm_attention");
    cJSON_AddStringToObject(nreq, "model", "tiny");
    for (int w = 0; w < c.n_windows; w++) {
        cJSON *row = cJSON_CreateArray();
        for (int t = 0; t < c.len[w]; t++) cJSON_AddItemToArray(row, cJSON_CreateNumber(c.ids[(size_t)w * 32 + t]));
        cJSON_AddItemToArray(rows, row);
    }
    cJSON_AddItemToObject(nreq, "input_ids", rows);
    cJSON_AddNumberToObject(nreq, "pad_to", 32);
    cJSON_AddNumberToObject(nreq, "batch_size", 16);
    char *ntext = cJSON_PrintUnformatted(nreq);
    al_session *sn = session_with(1);
    cJSON *norm = run_once(sn, ntext);
    CHECK(same_json(item(norm, "norm_mass"), item(grids, "norm_mass"), "norm_mass vs norm_attention"));
    al_session_free(sn);
    cJSON_free(ntext), cJSON_Delete(nreq), cJSON_Delete(norm);
    al_lm_corpus_free(&c);
    al_model_free(model);

    /* the head roles: head_roles' repeat scores at its defaults */
    al_session *sr = session_with(1);
    cJSON *roles = run_once(sr, "{\"op\":\"head_roles\",\"model\":\"tiny\"}");
    const cJSON *rep = item(roles, "repeat");
    CHECK(same_json(item(item(rep, "previous_token"), "score"), item(grids, "previous_token"), "previous_token vs head_roles"));
    CHECK(same_json(item(item(rep, "induction"), "score"), item(grids, "induction"), "induction vs head_roles"));
    CHECK(same_json(item(item(rep, "duplicate_token"), "score"), item(grids, "duplicate_token"), "duplicate_token vs head_roles"));
    cJSON_Delete(roles);
    al_session_free(sr);

    /* refused by name: no constants_corpus (lambda would train on the scored text), a task beside the corpus, L, k */
    cJSON *q = cJSON_CreateObject();
    cJSON_AddStringToObject(q, "op", "head_agreement");
    cJSON_AddStringToObject(q, "model", "tiny");
    cJSON_AddStringToObject(q, "corpus", held);
    char *alone = cJSON_PrintUnformatted(q);
    expect_error(s1, alone, "field 'constants_corpus'");
    cJSON_Delete(q), cJSON_free(alone);
    req = lm_request("head_agreement", held, avg, ", \"task\": \"pos\"");
    expect_error(s1, req, "not both");
    free(req);
    req = lm_request("head_agreement", held, avg, ", \"L\": 1000");
    expect_error(s1, req, "'L'");
    free(req);
    req = lm_request("head_agreement", held, avg, ", \"least_k\": 9");
    expect_error(s1, req, "least_k");
    free(req);
    al_reply reply; /* a task on a decoder: unsupported, naming the fields it reads instead */
    cJSON *e = run(s1, "{\"op\":\"head_agreement\",\"model\":\"tiny\",\"task\":\"pos\"}", AL_ERR_UNSUPPORTED, &reply);
    const char *why = cJSON_GetStringValue(item(item(e, "error"), "message"));
    CHECK_MSG(why && strstr(why, "field 'model'") && strstr(why, "'corpus' and 'constants_corpus'"), "%s", why ? why : "");
    cJSON_Delete(e);
    al_reply_free(&reply);
    cJSON_Delete(r), cJSON_Delete(r3);
    al_session_free(s1), al_session_free(s3);
    free(held), free(avg);
}

int main(void) {
    test_op();
    return check_summary("decoder_agreement");
}
