/* test_decoder_roles.c: the head_roles op (docs/measures.md "Head roles", docs/findings.md "Head roles") against
 * tests/golden/make_decoder_roles.py's float64 references on the random decoder checkpoints of tests/golden/decoders
 * (GPT-2, Llama, Qwen2 with and without its window, GPT-NeoX):
 *   - the repeated random sequences are the golden's (the script took them from the op: they pin the generator);
 *   - per role and head the score, its chance, p and p_holm over the repeats and over the golden's own rows given as
 *     input_ids; the repeat's loss on each copy;
 *   - the same reply digest on 1 and 3 threads;
 * the sign test by hand, the rule's verdicts on made-up units, the start token of a Llama tokenizer (kept first,
 * the positions shifted: /work/shared's tokenizer.model, skipped when absent), and the refusals naming the field.
 * The replies' digests are pinned: the same bits natively and in WebAssembly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "golden_file.h"
#include "session_request.h"
#include "methods/measures/finding_stats.h"
#include "methods/roles/head_roles.h"

static const char *const k_variants[] = {"gpt2",   "gpt2_prefixed", "llama_gqa", "llama_untied",
                                         "qwen2",  "qwen2_window",  "pythia",    "pythia_sequential"};
#define N_VARIANTS (int)(sizeof k_variants / sizeof k_variants[0])
#define R 4
#define N 8
#define SEED 7
#define PINNED_DIGEST 0xd69bfee4150d9d1cull /* FNV-1a over every variant's reply digest */

static uint64_t g_digest = 14695981039346656037ull;
static double g_score, g_chance, g_loss;
static int g_p_differ;

static void worst(double *w, double e) {
    if (e > *w || e != e) *w = e;
}

static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static double grid(const cJSON *role, const char *key, int l, int h) {
    const cJSON *v = cJSON_GetArrayItem(cJSON_GetArrayItem(item(role, key), l), h);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const double *golden_f64(const golden_file *g, const char *name, size_t numel) {
    const al_tensor_entry *t = al_tensor_list_find(&g->list, name);
    return t && t->dtype == AL_DT_F64 && t->nbytes == numel * sizeof(double) ? (const double *)t->data : NULL;
}

/* The mean over U units of the reference's [U, 4, NL, H] at (role, head k), NAN units left out. */
static double unit_mean(const double *v, int U, int role, int NH, int k) {
    double s = 0.0;
    int n = 0;
    for (int u = 0; u < U; u++) {
        const double x = v[((size_t)u * AL_ROLE_N + role) * NH + k];
        if (!isnan(x)) s += x, n++;
    }
    return n ? s / n : NAN;
}

/* One source's roles in the reply against the reference's units. */
static void check_roles(const char *dir, const cJSON *src, const double *score, const double *chance,
                        const double *p, const double *p_holm, int U, int first_role, int NL, int H) {
    const int NH = NL * H;
    for (int role = first_role; role < AL_ROLE_N; role++) {
        const cJSON *o = item(src, al_role_names[role]);
        CHECK_MSG(o, "%s: no role %s", dir, al_role_names[role]);
        for (int k = 0; o && k < NH; k++) {
            const int l = k / H, h = k % H;
            worst(&g_score, fabs(grid(o, "score", l, h) - unit_mean(score, U, role, NH, k)));
            worst(&g_chance, fabs(grid(o, "chance", l, h) - unit_mean(chance, U, role, NH, k)));
            const double pr = p[(size_t)role * NH + k], ph = p_holm[(size_t)role * NH + k];
            if (fabs(grid(o, "p", l, h) - pr) > 1e-12 || fabs(grid(o, "p_holm", l, h) - ph) > 1e-12) {
                g_p_differ++;
                printf("%s %s head %d.%d: p %.6g / %.6g, reference %.6g / %.6g\n", dir, al_role_names[role], l, h,
                       grid(o, "p", l, h), grid(o, "p_holm", l, h), pr, ph);
            }
        }
    }
}

static void fnv_string(const char *s) {
    for (; s && *s; s++) g_digest = (g_digest ^ (unsigned char)*s) * 1099511628211ull;
}

/* The variant's golden rows as input_ids: each row's real tokens. */
static char *rows_json(const golden_file *g) {
    int64_t shape[2] = {0};
    free(golden_f32(g, "input_ids", NULL, shape));
    int32_t *ids = golden_i32(g, "input_ids"), *mask = golden_i32(g, "attention_mask");
    cJSON *rows = cJSON_CreateArray();
    for (int b = 0; ids && mask && b < shape[0]; b++) {
        int n = 0;
        for (int t = 0; t < shape[1]; t++) n += mask[b * shape[1] + t];
        cJSON_AddItemToArray(rows, cJSON_CreateIntArray(ids + b * shape[1], n));
    }
    char *text = cJSON_PrintUnformatted(rows);
    cJSON_Delete(rows);
    free(ids), free(mask);
    return text;
}

static void check_variant(al_session *one, al_session *three, const char *dir) {
    char path[256], req[4096];
    golden_file ref, g;
    snprintf(path, sizeof path, "tests/golden/decoders/%s/roles.safetensors", dir);
    const int have_ref = golden_open(&ref, path);
    snprintf(path, sizeof path, "tests/golden/decoders/%s/golden.safetensors", dir);
    const int have_g = golden_open(&g, path);
    CHECK_MSG(have_ref && have_g, "%s: golden files missing", dir);
    if (!have_ref || !have_g) {
        if (have_ref) golden_close(&ref);
        if (have_g) golden_close(&g);
        return;
    }
    char *rows = rows_json(&g);
    snprintf(req, sizeof req, "{\"op\":\"load_model\",\"model\":\"%s\",\"path\":\"tests/golden/decoders/%s\"}", dir, dir);
    al_reply reply, reply3;
    cJSON_Delete(run(one, req, AL_OK, &reply));
    al_reply_free(&reply);
    cJSON_Delete(run(three, req, AL_OK, &reply));
    al_reply_free(&reply);
    snprintf(req, sizeof req, "{\"op\":\"head_roles\",\"model\":\"%s\",\"sequences\":%d,\"length\":%d,\"seed\":%d,"
             "\"input_ids\":%s}", dir, R, N, SEED, rows ? rows : "[]");
    cJSON *r = run(one, req, AL_OK, &reply), *r3 = run(three, req, AL_OK, &reply3);
    const int NL = (int)item(r, "n_layers")->valuedouble, H = (int)item(r, "n_heads")->valuedouble, NH = NL * H;
    const int T = (int)item(item(r, "inputs"), "texts")->valuedouble, L = 2 * N;
    const double *ids = golden_f64(&ref, "ids", (size_t)R * L);
    const double *score = golden_f64(&ref, "score", (size_t)R * AL_ROLE_N * NH);
    const double *chance = golden_f64(&ref, "chance", (size_t)R * AL_ROLE_N * NH);
    const double *first = golden_f64(&ref, "first", R), *second = golden_f64(&ref, "second", R);
    const double *t_score = golden_f64(&ref, "text_score", (size_t)T * AL_ROLE_N * NH);
    const double *t_chance = golden_f64(&ref, "text_chance", (size_t)T * AL_ROLE_N * NH);
    const double *p = golden_f64(&ref, "p", (size_t)AL_ROLE_N * NH), *ph = golden_f64(&ref, "p_holm", (size_t)AL_ROLE_N * NH);
    const double *tp = golden_f64(&ref, "text_p", (size_t)AL_ROLE_N * NH);
    const double *tph = golden_f64(&ref, "text_p_holm", (size_t)AL_ROLE_N * NH);
    CHECK_MSG(ids && score && chance && first && second && t_score && t_chance && p && ph && tp && tph,
              "%s: roles.safetensors lacks a tensor or has another shape", dir);
    if (ids && score && chance && first && second && t_score && t_chance && p && ph && tp && tph) {
        int same = cJSON_GetArraySize(item(r, "ids")) == R;
        for (int s = 0; same && s < R; s++)
            for (int t = 0; t < L; t++)
                same &= cJSON_GetArrayItem(cJSON_GetArrayItem(item(r, "ids"), s), t)->valuedouble == ids[s * L + t];
        CHECK_MSG(same, "%s: the op drew other sequences than the golden's", dir);
        check_roles(dir, item(r, "repeat"), score, chance, p, ph, R, AL_ROLE_INDUCTION, NL, H);
        check_roles(dir, item(r, "text"), t_score, t_chance, tp, tph, T, AL_ROLE_PREVIOUS, NL, H);
        double a = 0.0, b = 0.0;
        for (int s = 0; s < R; s++) a += first[s] / R / log(2.0), b += second[s] / R / log(2.0);
        const cJSON *loss = item(r, "repeat_loss");
        worst(&g_loss, fabs(item(loss, "first_bits")->valuedouble - a) / a);
        worst(&g_loss, fabs(item(loss, "second_bits")->valuedouble - b) / b);
    }
    const char *d1 = cJSON_GetStringValue(item(r, "digest")), *d3 = cJSON_GetStringValue(item(r3, "digest"));
    CHECK_MSG(d1 && d3 && !strcmp(d1, d3), "%s: 3 threads give another digest (%s, %s)", dir, d1 ? d1 : "-",
              d3 ? d3 : "-");
    printf("%-18s %s\n", dir, d1 ? d1 : "(no digest)");
    fnv_string(d1);
    cJSON_Delete(r), cJSON_Delete(r3);
    al_reply_free(&reply), al_reply_free(&reply3);
    free(rows);
    golden_close(&ref), golden_close(&g);
}

/* The sign test against exact fractions, and the rule on made-up units. */
static void check_rule(void) {
    CHECK_NEAR(al_sign_test_p(10, 10), 1.0 / 1024.0, 1e-16);
    CHECK_NEAR(al_sign_test_p(4, 2), 11.0 / 16.0, 1e-16);
    CHECK_NEAR(al_sign_test_p(20, 15), 21700.0 / 1048576.0, 1e-16); /* C(20,15..20) = 15504+4845+1140+190+20+1 */
    CHECK(al_sign_test_p(0, 0) == 1.0 && al_sign_test_p(5, 0) == 1.0);
    CHECK_NEAR(al_sign_test_p(400, 400), ldexp(1.0, -400), ldexp(1.0, -440));
    /* 12 units, 5 heads: head 0 at three times its chance in every unit, head 1 above in 9 of 12, head 2 tied
     * everywhere, head 3 below, head 4 just above in every unit (significant, below twice its chance: weak) */
    enum { U = 12, K = 5 };
    double score[U * K], chance[U * K];
    for (int u = 0; u < U; u++)
        for (int k = 0; k < K; k++) {
            const double c = chance[u * K + k] = 1.0 / (u + 2);
            score[u * K + k] = k == 0 ? 3.0 * c : k == 1 ? c + (u < 9 ? 0.05 : -0.05) : k == 2 ? c : k == 3 ? c - 0.02
                                                                                                           : c + 0.01;
        }
    al_role_finding f;
    al_error err = {0};
    CHECK(al_role_finding_make(score, chance, U, K, K, &f, &err) == AL_OK);
    CHECK_NEAR(f.p[0], 1.0 / 4096.0, 1e-16);
    CHECK_NEAR(f.p[1], 299.0 / 4096.0, 1e-16); /* C(12,9..12) = 220 + 66 + 12 + 1 */
    CHECK(f.p[2] == 1.0 && f.above[2] == 0 && f.below[2] == 0);
    CHECK_NEAR(f.p_holm[0], 5.0 / 4096.0, 1e-16);
    CHECK_NEAR(f.p_holm[4], 5.0 / 4096.0, 1e-16);
    CHECK_NEAR(f.ratio[0], 3.0, 1e-12);
    CHECK(f.has_role[0] && !f.has_role[1] && !f.has_role[2] && !f.has_role[3] && !f.has_role[4] && f.n_found == 1);
    CHECK(f.weak[4] && !f.weak[0] && !f.weak[1] && f.n_weak == 1);
    CHECK(!strcmp(f.verdict, "found") && f.min_units == 7); /* 5 x 2^-7 < 0.05 <= 5 x 2^-6 */
    al_role_finding_free(&f);
    /* head 0 alone is tied to its chance: head 4 is all the significance left */
    for (int u = 0; u < U; u++) score[u * K] = chance[u * K];
    CHECK(al_role_finding_make(score, chance, U, K, K, &f, &err) == AL_OK);
    CHECK_MSG(!strcmp(f.verdict, "weak_only") && f.n_found == 0 && f.n_weak == 1, "weak only: %s", f.verdict);
    al_role_finding_free(&f);
    CHECK(al_role_finding_make(score, chance, 6, K, K, &f, &err) == AL_OK);
    CHECK_MSG(!strcmp(f.verdict, "too_few_units") && f.n_found == 0, "6 units: %s", f.verdict);
    al_role_finding_free(&f);
}

/* A Llama tokenizer puts <s> first: each sequence keeps it and the second copy starts one position later. */
static void check_start_token(al_session *s) {
    const char *spm = "/work/shared/decoders/llama-spm/tokenizer.model";
    if (access(spm, R_OK) != 0) {
        printf("start token: skipped (%s absent)\n", spm);
        return;
    }
    char dir[] = "/tmp/attnlab_roles_XXXXXX", a[512], b[512];
    CHECK(mkdtemp(dir) != NULL);
    char *cwd = getcwd(NULL, 0);
    snprintf(a, sizeof a, "%s/tests/golden/decoders/llama_gqa/config.json", cwd), snprintf(b, sizeof b, "%s/config.json", dir);
    CHECK(symlink(a, b) == 0);
    snprintf(a, sizeof a, "%s/tests/golden/decoders/llama_gqa/model.safetensors", cwd);
    snprintf(b, sizeof b, "%s/model.safetensors", dir);
    CHECK(symlink(a, b) == 0);
    snprintf(b, sizeof b, "%s/tokenizer.model", dir);
    CHECK(symlink(spm, b) == 0);
    char req[700];
    snprintf(req, sizeof req, "{\"op\":\"load_model\",\"model\":\"spm\",\"path\":\"%s\"}", dir);
    al_reply reply;
    cJSON_Delete(run(s, req, AL_OK, &reply));
    al_reply_free(&reply);
    cJSON *r = run(s, "{\"op\":\"head_roles\",\"model\":\"spm\",\"sequences\":2,\"length\":5}", AL_OK, &reply);
    const cJSON *in = item(r, "inputs"), *seq = cJSON_GetArrayItem(item(r, "ids"), 1);
    CHECK_MSG(item(in, "offset")->valuedouble == 1 && item(in, "start_token")->valuedouble == 1 &&
                  item(in, "vocabulary")->valuedouble == 192 - 3 && cJSON_GetArraySize(seq) == 11 &&
                  cJSON_GetArrayItem(seq, 0)->valuedouble == 1,
              "start token: %.300s", reply.json);
    /* the induction score by hand: rows 6 .. 10 of sequence 0 and 1, target i - 5 + 1 */
    al_model *m = NULL;
    al_error err = {0};
    CHECK(al_model_load_dir(dir, &m, &err) == AL_OK);
    const al_config *c = al_model_config(m);
    const int H = c->n_heads, L = 11;
    float *attn = malloc(sizeof(float) * (size_t)c->n_layers * H * L * L);
    double want = 0.0;
    for (int q = 0; m && q < 2; q++) {
        int32_t ids[11];
        for (int t = 0; t < L; t++) ids[t] = (int32_t)cJSON_GetArrayItem(cJSON_GetArrayItem(item(r, "ids"), q), t)->valuedouble;
        al_batch batch = {1, L, ids, NULL, NULL, NULL};
        al_forward_outputs out = {0};
        out.attentions = attn;
        CHECK(al_forward(m, &batch, NULL, &out, &err) == AL_OK);
        for (int i = 6; i < L; i++) want += attn[((size_t)(1 * H + 2) * L + i) * L + i - 4] / 10.0; /* layer 1, head 2 */
    }
    CHECK_NEAR(grid(item(item(r, "repeat"), "induction"), "score", 1, 2), want, 1e-12);
    printf("start token: <s> kept first, layer 1 head 2's induction score %.6f by hand, %.6f by the op\n", want,
           grid(item(item(r, "repeat"), "induction"), "score", 1, 2));
    free(attn);
    al_model_free(m);
    cJSON_Delete(r);
    al_reply_free(&reply);
    snprintf(b, sizeof b, "%s/config.json", dir), unlink(b);
    snprintf(b, sizeof b, "%s/model.safetensors", dir), unlink(b);
    snprintf(b, sizeof b, "%s/tokenizer.model", dir), unlink(b);
    rmdir(dir);
    free(cwd);
}

static void check_refusals(al_session *s) {
    al_reply reply;
    cJSON_Delete(run(s, "{\"op\":\"load_model\",\"model\":\"bert\",\"path\":\"tests/golden/bert\"}", AL_OK, &reply));
    al_reply_free(&reply);
    expect_error(s, "{\"op\":\"head_roles\",\"model\":\"bert\"}", "field 'model'");
    expect_error(s, "{\"op\":\"head_roles\",\"model\":\"gpt2\",\"length\":17}", "field 'length'"); /* 32 positions */
    expect_error(s, "{\"op\":\"head_roles\",\"model\":\"gpt2\",\"length\":1}", "field 'length'");
    expect_error(s, "{\"op\":\"head_roles\",\"model\":\"gpt2\",\"sequences\":0}", "field 'sequences'");
    expect_error(s, "{\"op\":\"head_roles\",\"model\":\"gpt2\",\"sequences\":513}", "field 'sequences'");
    expect_error(s, "{\"op\":\"head_roles\",\"model\":\"gpt2\",\"seed\":-1}", "field 'seed'");
    expect_error(s, "{\"op\":\"head_roles\",\"model\":\"gpt2\",\"input_ids\":[[1,2,999]]}", "field 'input_ids");
    /* the longest repeat the 32 positions hold is the default's cap: 16 */
    cJSON *r = run(s, "{\"op\":\"head_roles\",\"model\":\"gpt2\",\"sequences\":1}", AL_OK, &reply);
    CHECK_MSG(item(item(r, "inputs"), "length")->valuedouble == 16 &&
                  !strcmp(cJSON_GetStringValue(item(item(item(r, "repeat"), "sink"), "verdict")), "too_few_units") &&
                  !item(r, "text") && !item(item(r, "repeat_loss"), "drop_bits_ci95"),
              "one sequence: %.300s", reply.json);
    cJSON_Delete(r);
    al_reply_free(&reply);
    /* a GPT-2 tokenizer puts nothing first; the config's pad id (580, from eos_token_id) is not drawn; texts through
     * the tokenizer are units of their own */
    cJSON_Delete(run(s, "{\"op\":\"load_model\",\"model\":\"tiny\",\"path\":\"tests/fixtures/decoder_tiny_gpt2\"}",
                     AL_OK, &reply));
    al_reply_free(&reply);
    r = run(s, "{\"op\":\"head_roles\",\"model\":\"tiny\",\"sequences\":2,\"texts\":[\"The cat sat on the mat.\","
               "\"A dog ran.\"]}", AL_OK, &reply);
    const cJSON *in = item(r, "inputs"), *sink = item(item(r, "text"), "sink");
    CHECK_MSG(item(in, "offset")->valuedouble == 0 && item(in, "vocabulary")->valuedouble == 580 &&
                  item(in, "texts")->valuedouble == 2 && item(sink, "units")->valuedouble == 2 &&
                  !item(item(r, "text"), "induction"),
              "tiny GPT-2: %.300s", reply.json);
    cJSON_Delete(r);
    al_reply_free(&reply);
}

int main(void) {
    al_session_params p1 = al_session_default_params(), p3 = p1;
    p1.n_threads = 1, p3.n_threads = 3;
    al_session *one = al_session_new_params(&p1), *three = al_session_new_params(&p3);
    CHECK(one && three);
    for (int v = 0; one && three && v < N_VARIANTS; v++) check_variant(one, three, k_variants[v]);
    check_rule();
    if (one) check_refusals(one);
    if (one) check_start_token(one);
    printf("against float64: scores %.3g (bound 1e-5), chance %.3g (bound 1e-12), repeat losses %.3g relative "
           "(bound 1e-4); p or p_holm differ on %d heads\n", g_score, g_chance, g_loss, g_p_differ);
    CHECK(g_score <= 1e-5 && g_chance <= 1e-12 && g_loss <= 1e-4 && g_p_differ == 0);
    printf("digest %016llx\n", (unsigned long long)g_digest);
    CHECK_MSG(g_digest == PINNED_DIGEST, "digest %016llx, pinned %016llx", (unsigned long long)g_digest,
              (unsigned long long)PINNED_DIGEST);
    al_session_free(one), al_session_free(three);
    return check_summary("decoder_roles");
}
