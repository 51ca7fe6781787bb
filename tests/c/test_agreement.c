/* test_agreement.c: the head_agreement op (src/api/op_agreement.c) and its arithmetic
 * (src/methods/measures/head_agreement.c). Ranks and Spearman's rho against hand-worked cases with ties; then the op
 * on attnlab-mini-bert: every grid is the number the single op gives for the same request (papa's lambdas,
 * head_importance's importance, head_stats' means, norm_attention's norm_mass over the same examples), each
 * in a session of its own so nothing is reused; the matrix is symmetric with a unit diagonal; the overlap's
 * diagonal is k; the digest is the same on 1 and 3 threads; bad fields are refused by name. The op part
 * skips when build/data/tasks is absent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "read_file.h"
#include "train/pretrain.h"
#include "session_request.h"
#include "methods/measures/head_agreement.h"
#include "methods/papa/papa.h"
#include "methods/tasks/task.h"

static void test_arithmetic(void) {
    const double a[4] = {1, 2, 2, 3}, b[4] = {10, 30, 20, 40};
    double r[4];
    al_average_ranks(a, 4, r);
    CHECK(r[0] == 1.0 && r[1] == 2.5 && r[2] == 2.5 && r[3] == 4.0);
    const double t[6] = {5, 5, 5, 1, 9, 1}; /* ranks: 1 and 1 share 1.5; the three 5s share 4; 9 is 6 */
    double rt[6];
    al_average_ranks(t, 6, rt);
    CHECK(rt[0] == 4.0 && rt[1] == 4.0 && rt[2] == 4.0 && rt[3] == 1.5 && rt[4] == 6.0 && rt[5] == 1.5);
    /* by hand: ranks (1, 2.5, 2.5, 4) and (1, 3, 2, 4): sxy 4.5, sxx 4.5, syy 5 -> 4.5 / sqrt(22.5) */
    CHECK_NEAR(al_spearman(a, b, 4), 4.5 / sqrt(22.5), 1e-15);
    CHECK_NEAR(al_spearman(b, a, 4), 4.5 / sqrt(22.5), 1e-15);
    CHECK_NEAR(al_spearman(a, a, 4), 1.0, 1e-15);
    const double rev[4] = {4, 3, 2, 1}, up[4] = {-7, 0, 0.5, 100};
    CHECK_NEAR(al_spearman(rev, up, 4), -1.0, 1e-15);
    const double flat[4] = {2, 2, 2, 2};
    CHECK(isnan(al_spearman(flat, b, 4)) && isnan(al_spearman(flat, flat, 4)));
    /* NAN entries drop out of both: the rest is (1, 2, 4) against (10, 20, 40) */
    const double an[4] = {1, NAN, 2, 4}, bn[4] = {10, 30, 20, 40};
    CHECK_NEAR(al_spearman(an, bn, 4), 1.0, 1e-15);
    /* least important: ascending (ties in index order, NAN last) or descending */
    const double v[6] = {0.3, NAN, 0.1, 0.3, 0.9, 0.1};
    int low[6], high[6];
    CHECK(al_least_k(v, 6, 1, 4, low) == 4 && low[0] == 2 && low[1] == 5 && low[2] == 0 && low[3] == 3);
    CHECK(al_least_k(v, 6, 0, 3, high) == 3 && high[0] == 4 && high[1] == 0 && high[2] == 3);
    CHECK(al_least_k(v, 6, 1, 6, low) == 6 && low[5] == 1);
    const int x[3] = {4, 0, 3}, y[3] = {3, 9, 4};
    CHECK(al_overlap(x, y, 3) == 2 && al_overlap(x, x, 3) == 3);
    /* the sentence and its verdicts are agreement_finding.c's: tests/c/test_findings.c */
}

static cJSON *run_once(al_session *s, const char *request) {
    al_reply reply;
    cJSON *r = run(s, request, AL_OK, &reply);
    al_reply_free(&reply);
    return r;
}

static al_session *session_with_model(int threads) {
    al_session_params p = al_session_default_params();
    p.n_threads = threads;
    al_session *s = al_session_new_params(&p);
    cJSON_Delete(run_once(s, "{\"op\":\"load_model\",\"model\":\"m\",\"path\":\"models/attnlab-mini-bert\"}"));
    return s;
}

/* Whether two JSON values print the same (numbers as cJSON prints them: the same doubles). */
static int same_json(const cJSON *a, const cJSON *b, const char *what) {
    char *x = cJSON_PrintUnformatted(a), *y = cJSON_PrintUnformatted(b);
    const int same = x && y && !strcmp(x, y);
    if (!same) fprintf(stderr, "%s differs:\n  %.400s\n  %.400s\n", what, x ? x : "(none)", y ? y : "(none)");
    cJSON_free(x), cJSON_free(y);
    return same;
}

static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static void test_op(void) {
    al_task *task = NULL;
    al_error err;
    if (al_task_load_builtin("build/data/tasks", "pos", &task, &err) != AL_OK) {
        printf("skip the op: %s\n", err.message);
        return;
    }
    /* small enough for a test: the right_pad layout so the validation rows are plain texts for norm_attention */
    const char *common = "\"model\":\"m\",\"task\":\"pos\",\"L\":32,\"layout\":\"right_pad\",\"max_train\":40,"
                         "\"max_validation\":12,\"probe\":{\"epochs\":1},\"ranking\":{\"epochs\":1,\"max_examples\":24}";
    char req[1024];
    snprintf(req, sizeof req, "{\"op\":\"head_agreement\",%s,\"max_examples\":12,\"least_k\":5}", common);
    al_session *s1 = session_with_model(1), *s3 = session_with_model(3);
    cJSON *r = run_once(s1, req), *r3 = run_once(s3, req);
    const int NL = 4, H = 4, NH = NL * H, M = 7;
    static const char *const ids[7] = {"lambda", "gradient", "input_dependence", "confidence", "entropy", "sink_mass",
                                       "norm_mass"};
    const cJSON *measures = item(r, "measures"), *grids = item(r, "grids"), *sp = item(r, "spearman");
    CHECK(cJSON_GetArraySize(measures) == M && cJSON_GetArraySize(sp) == M);
    for (int x = 0; x < M; x++) {
        const cJSON *mx = cJSON_GetArrayItem(measures, x);
        CHECK_MSG(!strcmp(cJSON_GetStringValue(item(mx, "id")), ids[x]), "measure %d is %s", x, ids[x]);
        CHECK(cJSON_IsString(item(mx, "label")) && cJSON_IsString(item(mx, "higher")));
        const cJSON *g = item(grids, ids[x]);
        CHECK(cJSON_GetArraySize(g) == NL && cJSON_GetArraySize(cJSON_GetArrayItem(g, 0)) == H);
    }
    /* the matrix: symmetric bit for bit, unit diagonal (no measure is constant here), within [-1, 1] */
    for (int x = 0; x < M; x++)
        for (int y = 0; y < M; y++) {
            const cJSON *v = cJSON_GetArrayItem(cJSON_GetArrayItem(sp, x), y), *w = cJSON_GetArrayItem(cJSON_GetArrayItem(sp, y), x);
            CHECK_MSG(cJSON_IsNumber(v) && cJSON_IsNumber(w) && v->valuedouble == w->valuedouble &&
                      fabs(v->valuedouble) <= 1.0, "rho[%d][%d]", x, y);
            if (x == y) CHECK_MSG(cJSON_IsNumber(v) && v->valuedouble == 1.0, "rho[%d][%d] = 1", x, x);
        }
    /* the least-important sets: k heads each, overlap symmetric with k on the diagonal */
    const cJSON *least = item(r, "least"), *ov = item(least, "overlap");
    CHECK(item(least, "k") && item(least, "k")->valuedouble == 5);
    for (int x = 0; x < M; x++) {
        CHECK(cJSON_GetArraySize(item(item(least, "heads"), ids[x])) == 5);
        for (int y = 0; y < M; y++) {
            const double o = cJSON_GetArrayItem(cJSON_GetArrayItem(ov, x), y)->valuedouble;
            CHECK(o == cJSON_GetArrayItem(cJSON_GetArrayItem(ov, y), x)->valuedouble && o >= 0 && o <= 5);
            if (x == y) CHECK(o == 5);
        }
    }
    /* gradient's least set is head_importance's pruning order's first five */
    const char *finding = cJSON_GetStringValue(item(r, "finding"));
    CHECK_MSG(finding && strstr(finding, "PAPA's λ") && finding[strlen(finding) - 1] == '.', "%s", finding ? finding : "");
    /* the rule's codes beside it: 21 pairs (6 against λ first), 6 overlaps, p-values from seeded permutations */
    const cJSON *fi = item(r, "findings");
    CHECK(cJSON_GetArraySize(item(fi, "pairs")) == 21 && cJSON_GetArraySize(item(fi, "overlaps")) == 6);
    CHECK(!strcmp(cJSON_GetStringValue(item(fi, "p_method")), "permutation") && item(fi, "n_heads")->valuedouble == 16);
    CHECK(same_json(fi, item(r3, "findings"), "findings on 1 and 3 threads"));
    /* the matrix in the direction of importance: entropy's row against confidence's sign-flipped */
    const cJSON *spi = item(r, "spearman_importance");
    CHECK(cJSON_GetArrayItem(cJSON_GetArrayItem(spi, 3), 4)->valuedouble ==
          -cJSON_GetArrayItem(cJSON_GetArrayItem(sp, 3), 4)->valuedouble);
    /* threads change no bit; a repeat gives the same digest */
    const char *d1 = cJSON_GetStringValue(item(r, "digest")), *d3 = cJSON_GetStringValue(item(r3, "digest"));
    CHECK_MSG(d1 && d3 && !strncmp(d1, "sha256:", 7) && !strcmp(d1, d3), "1 and 3 threads: %s %s", d1 ? d1 : "", d3 ? d3 : "");
    CHECK(same_json(grids, item(r3, "grids"), "grids on 1 and 3 threads"));
    cJSON *again = run_once(s1, req); /* the session's constants and lambdas reused: the same numbers */
    CHECK(cJSON_IsTrue(item(item(again, "reused"), "ranking")) && !cJSON_IsTrue(item(item(r, "reused"), "ranking")));
    CHECK(!strcmp(cJSON_GetStringValue(item(again, "digest")), d1));
    cJSON_Delete(again);

    /* each grid is the single op's number for the same request, each op in a fresh session */
    al_session *sp1 = session_with_model(1);
    snprintf(req, sizeof req, "{\"op\":\"papa\",%s,\"orders\":[\"lambda\"],\"fractions\":[1,0.5],\"seeds\":[1],"
             "\"baselines\":false,\"mlm\":false}", common);
    cJSON *papa = run_once(sp1, req);
    CHECK(same_json(item(papa, "lambdas"), item(grids, "lambda"), "lambda vs papa's lambdas"));
    al_session_free(sp1);
    al_session *si = session_with_model(1);
    snprintf(req, sizeof req, "{\"op\":\"head_importance\",%s,\"max_examples\":12}", common);
    cJSON *imp = run_once(si, req);
    CHECK(same_json(item(imp, "importance"), item(grids, "gradient"), "gradient vs head_importance"));
    CHECK(item(imp, "n_examples")->valuedouble == item(r, "n_examples")->valuedouble);
    const cJSON *order = item(imp, "order"), *gl = item(item(least, "heads"), "gradient");
    for (int i = 0; i < 5; i++) CHECK(same_json(cJSON_GetArrayItem(order, i), cJSON_GetArrayItem(gl, i), "gradient's least"));
    al_session_free(si);
    al_session *sh = session_with_model(1);
    snprintf(req, sizeof req, "{\"op\":\"head_stats\",%s}", common);
    cJSON *hs = run_once(sh, req);
    const cJSON *stats = item(hs, "stats");
    CHECK(same_json(item(stats, "js"), item(grids, "input_dependence"), "input_dependence vs head_stats js"));
    CHECK(same_json(item(stats, "confidence"), item(grids, "confidence"), "confidence vs head_stats"));
    CHECK(same_json(item(stats, "entropy"), item(grids, "entropy"), "entropy vs head_stats"));
    CHECK(same_json(item(stats, "sink"), item(grids, "sink_mass"), "sink_mass vs head_stats sink"));
    CHECK(item(hs, "n_examples")->valuedouble == item(r, "n_validation")->valuedouble);
    al_session_free(sh);
    /* norm_mass: the norm_attention op over the same validation rows (their real tokens, padded to L) */
    al_model *model = NULL;
    al_papa_inputs val = {0};
    CHECK(al_model_load_dir("models/attnlab-mini-bert", &model, &err) == AL_OK);
    CHECK(model && al_papa_inputs_build(al_model_tokenizer(model), task, AL_TASK_VALIDATION, 12, AL_LAYOUT_RIGHT_PAD, 32, &val,
                                        &err) == AL_OK);
    cJSON *nreq = cJSON_CreateObject(), *rows = cJSON_CreateArray();
    cJSON_AddStringToObject(nreq, "op", "norm_attention");
    cJSON_AddStringToObject(nreq, "model", "m");
    for (int x = 0; x < val.n; x++) {
        cJSON *row = cJSON_CreateArray();
        for (int t = 0; t < 32; t++)
            if (val.mask[x * 32 + t]) cJSON_AddItemToArray(row, cJSON_CreateNumber(val.ids[x * 32 + t]));
        cJSON_AddItemToArray(rows, row);
    }
    cJSON_AddItemToObject(nreq, "input_ids", rows);
    cJSON_AddNumberToObject(nreq, "pad_to", 32);
    cJSON_AddNumberToObject(nreq, "batch_size", 16);
    char *ntext = cJSON_PrintUnformatted(nreq);
    al_session *sn = session_with_model(1);
    cJSON *norm = run_once(sn, ntext);
    CHECK(same_json(item(norm, "norm_mass"), item(grids, "norm_mass"), "norm_mass vs norm_attention"));
    al_session_free(sn);
    cJSON_free(ntext), cJSON_Delete(nreq), cJSON_Delete(norm);
    al_papa_inputs_free(&val);
    al_model_free(model);
    cJSON_Delete(papa), cJSON_Delete(imp), cJSON_Delete(hs);

    /* bad fields are refused by name */
    expect_error(s1, "{\"op\":\"head_agreement\",\"model\":\"m\",\"task\":\"pos\",\"least_k\":0}", "least_k");
    expect_error(s1, "{\"op\":\"head_agreement\",\"model\":\"m\",\"task\":\"pos\",\"least_k\":17}", "least_k");
    expect_error(s1, "{\"op\":\"head_agreement\",\"model\":\"m\",\"task\":\"pos\",\"max_examples\":-1}", "max_examples");
    expect_error(s1, "{\"op\":\"head_agreement\",\"model\":\"m\",\"task\":5}", "'task'");
    expect_error(s1, "{\"op\":\"head_agreement\",\"model\":\"m\",\"task\":\"pos\",\"L\":100000}", "'L'");
    expect_error(s1, "{\"op\":\"head_agreement\",\"model\":\"zz\",\"task\":\"pos\"}", "zz");
    (void)NH;
    cJSON_Delete(r), cJSON_Delete(r3);
    al_session_free(s1), al_session_free(s3);
    al_task_free(task);
}

/* What the sentence may say, through the op (the rule itself: tests/c/test_findings.c): a 2-head model (one layer
 * of tests/fixtures/bert_st_f32 with a 32-word vocabulary written to build/) is too few heads to tell, where
 * every rho is +-1; a ranking whose learning rate is 1e-8 did not learn, and the sentence says what to raise. */
static void test_op_findings(void) {
    al_task *task = NULL;
    al_error err;
    if (al_task_load_builtin("build/data/tasks", "pos", &task, &err) != AL_OK) {
        printf("skip the op's findings: %s\n", err.message);
        return;
    }
    al_task_free(task);
    const char *dir = "build/agreement_two_heads";
    size_t size = 0;
    char *cfg_text = (char *)read_file("tests/fixtures/bert_st_f32/config.json", &size);
    cJSON *cfg = cfg_text ? cJSON_Parse(cfg_text) : NULL;
    free(cfg_text);
    CHECK(cfg && al_make_dirs(dir) == 0);
    cJSON_ReplaceItemInObject(cfg, "num_hidden_layers", cJSON_CreateNumber(1));
    char *out = cJSON_Print(cfg), path[256];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f && out && fputs(out, f) >= 0);
    if (f) fclose(f);
    cJSON_free(out), cJSON_Delete(cfg);
    static const char *const words[32] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "a", "of", "and", "to", "in",
                                          "is", "was", "he", "it", "that", "for", "on", "with", "as", "his", "at", "by",
                                          "i", "be", "had", "not", "are", "but", "from", "or", "."};
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    f = fopen(path, "w");
    for (int i = 0; f && i < 32; i++) fprintf(f, "%s\n", words[i]);
    if (f) fclose(f);
    uint8_t *weights = read_file("tests/fixtures/bert_st_f32/model.safetensors", &size);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    f = fopen(path, "wb");
    CHECK(weights && f && fwrite(weights, 1, size, f) == size);
    if (f) fclose(f);
    free(weights);

    al_session *s = al_session_new();
    char req[512];
    snprintf(req, sizeof req, "{\"op\":\"load_model\",\"model\":\"two\",\"path\":\"%s\"}", dir);
    cJSON_Delete(run_once(s, req));
    cJSON *r = run_once(s, "{\"op\":\"head_agreement\",\"model\":\"two\",\"task\":\"pos\",\"L\":16,\"max_train\":20,"
                           "\"max_validation\":10,\"max_examples\":10,\"probe\":{\"epochs\":1},\"ranking\":{\"epochs\":1}}");
    const char *finding = cJSON_GetStringValue(item(r, "finding"));
    CHECK_MSG(finding && strstr(finding, "With 2 heads no rank correlation could be significant") && !strstr(finding, "agrees with"),
              "%s", finding ? finding : "(none)");
    CHECK(!strcmp(cJSON_GetStringValue(item(item(r, "findings"), "verdict")), "too_few_heads"));
    /* The session keeps a model's content hash after its first request (al_api_model_hash); a model loaded again
     * under the same id is hashed anew, so the reply names the model it came from. */
    char direct[65], hash_two[72], hash_mini[72];
    al_model *direct_model = NULL;
    al_error direct_err;
    CHECK(al_model_load_dir(dir, &direct_model, &direct_err) == AL_OK);
    al_model_content_hash(direct_model, direct);
    al_model_free(direct_model);
    snprintf(hash_two, sizeof hash_two, "sha256:%s", direct);
    CHECK_MSG(!strcmp(cJSON_GetStringValue(item(item(r, "hashes"), "model")), hash_two), "%s",
              cJSON_GetStringValue(item(item(r, "hashes"), "model")));
    cJSON_Delete(r);
    const char *again_req = "{\"op\":\"head_agreement\",\"model\":\"two\",\"task\":\"pos\",\"L\":16,\"max_train\":20,"
                            "\"max_validation\":10,\"max_examples\":10,\"probe\":{\"epochs\":1},\"ranking\":{\"epochs\":1}}";
    r = run_once(s, again_req);
    CHECK(!strcmp(cJSON_GetStringValue(item(item(r, "hashes"), "model")), hash_two));
    cJSON_Delete(r);
    cJSON_Delete(run_once(s, "{\"op\":\"load_model\",\"model\":\"two\",\"path\":\"models/attnlab-mini-bert\"}"));
    CHECK(al_model_load_dir("models/attnlab-mini-bert", &direct_model, &direct_err) == AL_OK);
    al_model_content_hash(direct_model, direct);
    al_model_free(direct_model);
    snprintf(hash_mini, sizeof hash_mini, "sha256:%s", direct);
    r = run_once(s, again_req);
    CHECK_MSG(!strcmp(cJSON_GetStringValue(item(item(r, "hashes"), "model")), hash_mini) && strcmp(hash_mini, hash_two),
              "%s after reloading 'two'", cJSON_GetStringValue(item(item(r, "hashes"), "model")));
    cJSON_Delete(r);
    al_session_free(s);

    s = session_with_model(1);
    r = run_once(s, "{\"op\":\"head_agreement\",\"model\":\"m\",\"task\":\"pos\",\"L\":32,\"layout\":\"right_pad\","
                    "\"max_train\":24,\"max_validation\":12,\"max_examples\":8,\"probe\":{\"epochs\":1},"
                    "\"ranking\":{\"epochs\":1,\"max_examples\":16,\"lr\":1e-8}}");
    finding = cJSON_GetStringValue(item(r, "finding"));
    CHECK_MSG(finding && strstr(finding, "PAPA's λ did not learn a ranking") && strstr(finding, "raise ranking.lr (now 1e-08)"),
              "%s", finding ? finding : "(none)");
    const cJSON *lam = item(item(r, "findings"), "lambda");
    CHECK(cJSON_IsFalse(item(lam, "learned")) && item(lam, "range")->valuedouble < 1e-6);
    cJSON_Delete(r);
    al_session_free(s);
}

int main(void) {
    test_arithmetic();
    al_session *s = session_with_model(1);
    cJSON *v = run_once(s, "{\"op\":\"version\"}");
    int listed = 0;
    const cJSON *op;
    cJSON_ArrayForEach(op, item(v, "ops")) {
        const char *name = cJSON_GetStringValue(item(op, "name"));
        if (name && !strcmp(name, "head_agreement")) listed += cJSON_IsTrue(item(op, "worker"));
    }
    CHECK_MSG(listed == 1, "head_agreement is in the version list, passed through by the worker");
    cJSON_Delete(v);
    al_session_free(s);
    test_op();
    test_op_findings();
    return check_summary("agreement");
}
