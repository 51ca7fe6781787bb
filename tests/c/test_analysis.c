/* test_analysis.c: the attention analyses on hand-made matrices with known answers (token
 * statistics, differences, attention by tag, cosine similarity, pattern labels, key classes) and
 * the JSON ops end to end on the golden BERT with a small vocab: replies, shapes, invariants and
 * error replies that name the field at fault. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "session_request.h"

/* ------------------------------------------------------------ hand-made cases */

static void test_token_stats(void) {
    /* one example, L = 5, last position padding; classes CLS . PUNCT SEP | pad */
    const int L = 5;
    const int32_t mask[5] = {1, 1, 1, 1, 0};
    const uint8_t classes[5] = {AL_KEY_CLS, 0, AL_KEY_PUNCT, AL_KEY_SEP, 0};
    float A[25];
    for (int i = 0; i < 4; i++) {
        const float row[5] = {0.5f, 0.1f, 0.1f, 0.3f, 0.0f};
        memcpy(A + i * 5, row, sizeof row);
    }
    for (int j = 0; j < 5; j++) A[20 + j] = 0.2f; /* the pad query row */
    double sums[3] = {0}, count = 0;
    al_error err = {0};
    CHECK(al_attention_token_stats(A, 1, 1, 1, L, mask, classes, AL_AVERAGE_EXACT, sums, &count,
                                   &err) == AL_OK);
    CHECK_NEAR(count, 1, 0);
    CHECK_NEAR(sums[0], 0.5, 1e-7);
    CHECK_NEAR(sums[1], 0.3, 1e-7);
    CHECK_NEAR(sums[2], 0.1, 1e-7);
    /* paper: means over all 5 rows, pad row included */
    double ps[3] = {0}, pc = 0;
    CHECK(al_attention_token_stats(A, 1, 1, 1, L, mask, classes, AL_AVERAGE_PAPER, ps, &pc, &err) ==
          AL_OK);
    CHECK_NEAR(pc, 1, 0);
    CHECK_NEAR(ps[0], (4 * 0.5 + 0.2) / 5, 1e-7);
    CHECK_NEAR(ps[1], (4 * 0.3 + 0.2) / 5, 1e-7);
    /* two [SEP]s (a pair): exact sums them, paper takes the larger column mean */
    const uint8_t pair[5] = {AL_KEY_CLS, 0, AL_KEY_SEP, 0, AL_KEY_SEP};
    const int32_t all[5] = {1, 1, 1, 1, 1};
    float P[25];
    for (int i = 0; i < 5; i++) {
        const float row[5] = {0.1f, 0.2f, 0.2f, 0.2f, 0.3f};
        memcpy(P + i * 5, row, sizeof row);
    }
    double es[3] = {0}, ec = 0, pps[3] = {0}, ppc = 0;
    CHECK(al_attention_token_stats(P, 1, 1, 1, 5, all, pair, AL_AVERAGE_EXACT, es, &ec, &err) == AL_OK);
    CHECK(al_attention_token_stats(P, 1, 1, 1, 5, all, pair, AL_AVERAGE_PAPER, pps, &ppc, &err) ==
          AL_OK);
    CHECK_NEAR(es[1], 0.5, 1e-7);
    CHECK_NEAR(pps[1], 0.3, 1e-7);
    CHECK_NEAR(es[0], 0.1, 1e-7);
    CHECK(al_attention_token_stats(P, 0, 1, 1, 5, all, pair, AL_AVERAGE_PAPER, pps, &ppc, &err) ==
          AL_ERR_INVALID);
}

static void test_diff(void) {
    const float S[4] = {0.5f, 0.5f, 1.0f, 0.0f}, E[4] = {0.5f, 0.8f, 0.6f, 0.0f};
    const int32_t mask[2] = {1, 1}, half[2] = {1, 0};
    float abs_out[4], fro;
    al_error err = {0};
    CHECK(al_attention_diff(S, E, 1, 1, 1, 2, mask, abs_out, &fro, &err) == AL_OK);
    CHECK_NEAR(abs_out[1], 0.3, 1e-6);
    CHECK_NEAR(abs_out[2], 0.4, 1e-6);
    CHECK_NEAR(fro, 0.5, 1e-6);
    CHECK(al_attention_diff(S, E, 1, 1, 1, 2, half, NULL, &fro, &err) == AL_OK);
    CHECK_NEAR(fro, 0.0, 1e-7); /* only the real 1 x 1 block */
}

static void test_by_tag(void) {
    /* B = 1, H = 2, L = 4; query row 0 */
    float A[2 * 16] = {0};
    const float q0[4] = {0.1f, 0.4f, 0.2f, 0.3f}, q1[4] = {0.7f, 0.1f, 0.1f, 0.1f};
    memcpy(A, q0, sizeof q0);
    memcpy(A + 16, q1, sizeof q1);
    const int32_t query[1] = {0}, tags[4] = {-1, 0, 1, 0};
    double sums[3 * 2] = {0}, counts[3] = {0};
    al_error err = {0};
    CHECK(al_attention_by_tag(A, 1, 2, 4, query, tags, 3, 0, sums, counts, &err) == AL_OK);
    CHECK_NEAR(sums[0], 0.4, 1e-7); /* tag 0, head 0: max(0.4, 0.3) */
    CHECK_NEAR(sums[1], 0.1, 1e-7);
    CHECK_NEAR(sums[2], 0.2, 1e-7); /* tag 1 */
    CHECK(counts[0] == 1 && counts[1] == 1 && counts[2] == 0);
    double means[6] = {0}, mc[3] = {0};
    CHECK(al_attention_by_tag(A, 1, 2, 4, query, tags, 3, 1, means, mc, &err) == AL_OK);
    CHECK_NEAR(means[0], 0.35, 1e-7);
    const int32_t bad[1] = {4};
    CHECK(al_attention_by_tag(A, 1, 2, 4, bad, tags, 3, 1, means, mc, &err) == AL_ERR_INVALID);
    CHECK(strstr(err.message, "query[0]") != NULL);
}

static void test_cosine(void) {
    /* NL 1, B 2, H 1, L 2: example 0 identical maps, example 1 orthogonal on the real 1 x 1 + pads */
    const float a[8] = {1, 0, 0, 1, /* */ 1, 0, 0, 0};
    const float b[8] = {2, 0, 0, 2, /* */ 0, 1, 0, 0};
    const int32_t mask[4] = {1, 1, 1, 1};
    double sums[1] = {0}, count = 0;
    al_error err = {0};
    CHECK(al_attention_cosine(a, b, 1, 2, 1, 2, mask, AL_AVERAGE_EXACT, sums, &count, &err) == AL_OK);
    CHECK_NEAR(count, 2, 0);
    CHECK_NEAR(sums[0] / count, 0.5, 1e-9); /* (1 + 0) / 2 */
    const float c[4] = {0.6f, 0.8f, 0.5f, 0.5f}, d[4] = {0.6f, 0.8f, 0.9f, 0.1f};
    const int32_t m1[2] = {1, 0};
    double s2[1] = {0}, c2 = 0;
    CHECK(al_attention_cosine(c, d, 1, 1, 1, 2, m1, AL_AVERAGE_EXACT, s2, &c2, &err) == AL_OK);
    CHECK_NEAR(s2[0], 1.0, 1e-9); /* only [0][0] is real */
    /* all-zero maps: eps keeps it finite (0) */
    const float z[4] = {0, 0, 0, 0};
    double s3[1] = {0}, c3 = 0;
    CHECK(al_attention_cosine(z, z, 1, 1, 1, 2, NULL, AL_AVERAGE_PAPER, s3, &c3, &err) == AL_OK);
    CHECK(s3[0] == 0 && c3 == 1);
}

static void test_patterns(void) {
    enum { L = 10 };
    float A[L * L];
    uint8_t classes[L] = {AL_KEY_CLS, 0, 0, 0, AL_KEY_SEP, 0, 0, 0, 0, AL_KEY_SEP};
    int32_t seg[L] = {-1, 0, 0, 0, -1, 1, 1, 1, 1, -1};
    al_pattern_scores sc;
    /* identity: diagonal */
    memset(A, 0, sizeof A);
    for (int i = 0; i < L; i++) A[i * L + i] = 1;
    CHECK(al_attention_pattern(A, L, NULL, classes, seg, &sc) == AL_PATTERN_DIAGONAL);
    CHECK_NEAR(sc.diagonal, 1.0, 1e-6);
    /* everything on [CLS]: vertical */
    memset(A, 0, sizeof A);
    for (int i = 0; i < L; i++) A[i * L] = 1;
    CHECK(al_attention_pattern(A, L, NULL, classes, seg, &sc) == AL_PATTERN_VERTICAL);
    CHECK_NEAR(sc.vertical, 0.8, 1e-6); /* rows 0 and 1 see [CLS] inside their diagonal band */
    /* half on the final [SEP], half on the previous token: vertical+diagonal */
    memset(A, 0, sizeof A);
    for (int i = 0; i < L; i++) {
        A[i * L + 9] += 0.5f;
        A[i * L + (i > 0 ? i - 1 : 0)] += 0.5f;
    }
    CHECK(al_attention_pattern(A, L, NULL, classes, seg, &sc) == AL_PATTERN_VERTICAL_DIAGONAL);
    /* a pair of 8-token segments, each query uniform over its own segment: block */
    {
        enum { N = 20 };
        float P[N * N];
        uint8_t pc[N] = {0};
        int32_t ps[N];
        pc[0] = AL_KEY_CLS, pc[9] = AL_KEY_SEP, pc[19] = AL_KEY_SEP;
        for (int t = 0; t < N; t++) ps[t] = pc[t] ? -1 : t < 9 ? 0 : 1;
        for (int i = 0; i < N; i++)
            for (int j = 0; j < N; j++)
                P[i * N + j] = ps[i] < 0 ? 0.05f : ps[j] == ps[i] ? 1.0f : 0.0f;
        CHECK(al_attention_pattern(P, N, NULL, pc, ps, &sc) == AL_PATTERN_BLOCK);
        CHECK_NEAR(sc.block, 1.0, 1e-6);
        CHECK(sc.diagonal < 0.5 && sc.vertical < 0.25);
        /* the same map read as a single sentence is not a block */
        CHECK(al_attention_pattern(P, N, NULL, pc, NULL, &sc) == AL_PATTERN_HETEROGENEOUS);
    }
    /* uniform: heterogeneous */
    for (int e = 0; e < L * L; e++) A[e] = 0.1f;
    CHECK(al_attention_pattern(A, L, NULL, classes, seg, &sc) == AL_PATTERN_HETEROGENEOUS);
    /* signs do not matter (effective attention): a negative identity is diagonal */
    memset(A, 0, sizeof A);
    for (int i = 0; i < L; i++) A[i * L + i] = -0.7f;
    CHECK(al_attention_pattern(A, L, NULL, classes, seg, &sc) == AL_PATTERN_DIAGONAL);
    /* padding is ignored: an identity on 6 real tokens with garbage in the pads */
    int32_t mask[L] = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0};
    for (int e = 0; e < L * L; e++) A[e] = 5.0f;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) A[i * L + j] = i == j;
    CHECK(al_attention_pattern(A, L, mask, NULL, NULL, &sc) == AL_PATTERN_DIAGONAL);
    CHECK(strcmp(al_pattern_name(AL_PATTERN_VERTICAL_DIAGONAL), "vertical+diagonal") == 0);
}

/* ------------------------------------------------------------ JSON ops */

static const char *const k_words[] = {"the", "cat", "sat", "on", "mat", "a", "dog", "ran", ".", ",",
                                      "hello", "world", "##s", "is", "and", "big", "red", "un",
                                      "##happy", "!", NULL};

static al_fileset *model_files(void) {
    al_fileset *fs = al_fileset_new();
    al_error err = {0};
    if (al_fileset_add_dir(fs, "tests/golden/bert", &err) != AL_OK) {
        al_fileset_free(fs);
        return NULL;
    }
    char buf[4096];
    size_t n = 0;
    const char *specials[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    int count = 0;
    for (int i = 0; i < 5; i++, count++) n += (size_t)sprintf(buf + n, "%s\n", specials[i]);
    for (int i = 0; k_words[i]; i++, count++) n += (size_t)sprintf(buf + n, "%s\n", k_words[i]);
    for (; count < 100; count++) n += (size_t)sprintf(buf + n, "filler%d\n", count);
    al_fileset_add(fs, "vocab.txt", buf, n, 1, &err);
    return fs;
}

static const al_tensor_out *tensor(const al_reply *reply, const char *name) {
    for (int i = 0; i < reply->n_tensors; i++)
        if (strcmp(reply->tensors[i].name, name) == 0) return &reply->tensors[i];
    return NULL;
}

/* NL x H matrix of numbers in [lo, hi]. */
static int matrix_ok(const cJSON *m, int NL, int H, double lo, double hi) {
    if (cJSON_GetArraySize(m) != NL) return 0;
    for (const cJSON *row = m->child; row; row = row->next) {
        if (cJSON_GetArraySize(row) != H) return 0;
        for (const cJSON *v = row->child; v; v = v->next)
            if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi) return 0;
    }
    return 1;
}

#define TEXTS "\"texts\": [\"the cat sat on the mat . the dog ran , hello world !\", \"a big red dog\"]"
#define PAIRS "\"text_pairs\": [\"the dog is big .\", \"hello\"]"

static void test_effective_op(al_session *s) {
    al_reply reply;
    cJSON *r = run(s, "{\"op\": \"effective_attention\", \"model\": \"m\", " TEXTS ", "
                      "\"outputs\": [\"effective\", \"attentions\", \"values\"]}", AL_OK, &reply);
    const al_tensor_out *E = tensor(&reply, "effective_attentions"), *A = tensor(&reply, "attentions");
    const al_tensor_out *V = tensor(&reply, "values"), *R = tensor(&reply, "ranks");
    const al_tensor_out *M = tensor(&reply, "attention_mask");
    CHECK(E && A && V && R && tensor(&reply, "diff_norms"));
    CHECK(M == NULL); /* not repeated: the sequences carry n_tokens */
    if (E && A && V && R) {
        const int NL = 3, B = 2, H = 4, dh = 8, L = (int)E->shape[3];
        CHECK(E->shape[0] == NL && E->shape[1] == B && E->shape[2] == H && E->shape[4] == L);
        const cJSON *seqs = cJSON_GetObjectItem(r, "sequences");
        const int n0 = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(seqs, 0), "n_tokens"));
        const int n1 = (int)cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetArrayItem(seqs, 1), "n_tokens"));
        CHECK(n0 == L && n1 < dh && n0 > dh);
        const float *e = E->data, *a = A->data, *v = V->data;
        const int32_t *rk = R->data;
        double worst = 0, ident = 0;
        for (int l = 0; l < NL; l++)
            for (int b = 0; b < B; b++)
                for (int h = 0; h < H; h++) {
                    const size_t bh = ((size_t)l * B + b) * H + h;
                    const int n = b ? n1 : n0;
                    CHECK(rk[bh] == (n < dh ? n : dh));
                    double scale = 0, diff = 0;
                    for (int i = 0; i < n; i++)
                        for (int k = 0; k < dh; k++) {
                            double x = 0, y = 0;
                            for (int j = 0; j < n; j++) {
                                x += (double)e[bh * L * L + (size_t)i * L + j] * v[(bh * L + j) * dh + k];
                                y += (double)a[bh * L * L + (size_t)i * L + j] * v[(bh * L + j) * dh + k];
                            }
                            diff = fmax(diff, fabs(x - y));
                            scale = fmax(scale, fabs(y));
                        }
                    worst = fmax(worst, diff / scale);
                    if (n <= dh)
                        for (int i = 0; i < n; i++)
                            for (int j = 0; j < n; j++)
                                ident = fmax(ident, fabs(e[bh * L * L + (size_t)i * L + j] -
                                                         a[bh * L * L + (size_t)i * L + j]));
                }
        CHECK_MSG(worst <= 1e-5, "op: A_eff V vs A V %g", worst);
        CHECK(ident == 0);
    }
    CHECK(matrix_ok(cJSON_GetObjectItem(r, "diff_norm_mean"), 3, 4, 0, 10));
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(r, "effective_min")) <
          cJSON_GetNumberValue(cJSON_GetObjectItem(r, "effective_max")));
    cJSON_Delete(r);
    al_reply_free(&reply);

    /* paper mode padded to 20 > head_dim 8: r* = 8 in every layer, tolerance eps * 4 */
    r = run(s, "{\"op\": \"effective_attention\", \"model\": \"m\", " TEXTS ", \"mode\": \"paper\", "
               "\"pad_to\": 20}", AL_OK, &reply);
    const cJSON *rs = cJSON_GetObjectItem(r, "r_star");
    CHECK(cJSON_GetArraySize(rs) == 3);
    for (const cJSON *x = rs ? rs->child : NULL; x; x = x->next) CHECK(x->valuedouble == 8);
    CHECK_NEAR(cJSON_GetNumberValue(cJSON_GetObjectItem(r, "tolerance")), 4 * 1.1920929e-7, 1e-12);
    E = tensor(&reply, "effective_attentions");
    CHECK(E && E->shape[3] == 20);
    if (E) { /* pad-key columns of the short example are zero in every row */
        const float *e = E->data;
        double pad = 0;
        for (int l = 0; l < 3; l++)
            for (int h = 0; h < 4; h++)
                for (int i = 0; i < 20; i++)
                    for (int j = 10; j < 20; j++)
                        pad = fmax(pad, fabs(e[((((size_t)l * 2 + 1) * 4 + h) * 20 + i) * 20 + j]));
        CHECK(pad == 0);
    }
    cJSON_Delete(r);
    al_reply_free(&reply);

    r = run(s, "{\"op\": \"attention_diff\", \"model\": \"m\", \"text\": \"the cat sat on the mat . "
               "the dog ran\"}", AL_OK, &reply);
    CHECK(tensor(&reply, "abs_diff") != NULL && tensor(&reply, "effective_attentions") == NULL);
    cJSON_Delete(r);
    al_reply_free(&reply);

    expect_error(s, "{\"op\": \"effective_attention\", \"model\": \"m\", \"text\": \"a\", \"mode\": \"svd\"}",
                 "'mode'");
    expect_error(s, "{\"op\": \"effective_attention\", \"model\": \"m\", \"text\": \"a\", \"outputs\": [\"x\"]}",
                 "'outputs[0]'");
    expect_error(s, "{\"op\": \"effective_attention\", \"model\": \"m\", \"text\": \"a\", \"pad_to\": 99}",
                 "'pad_to'");
    expect_error(s, "{\"op\": \"effective_attention\", \"model\": \"zz\", \"text\": \"a\"}", "'model'");
    expect_error(s, "{\"op\": \"attention_stats\", \"model\": \"m\", \"text\": \"a\", \"average\": 3}",
                 "'average'");
    expect_error(s, "{\"op\": \"attention_stats\", \"model\": \"m\", \"text\": \"a\", \"batch_size\": 0}",
                 "'batch_size'");
}

static void test_stats_ops(al_session *s) {
    al_reply reply;
    cJSON *r = run(s, "{\"op\": \"attention_stats\", \"model\": \"m\", " TEXTS ", " PAIRS ", "
                      "\"batch_size\": 1}", AL_OK, &reply);
    const cJSON *st = cJSON_GetObjectItem(r, "standard"), *ef = cJSON_GetObjectItem(r, "effective");
    CHECK(matrix_ok(cJSON_GetObjectItem(st, "cls"), 3, 4, 0, 1));
    CHECK(matrix_ok(cJSON_GetObjectItem(st, "sep"), 3, 4, 0, 1));
    CHECK(matrix_ok(cJSON_GetObjectItem(st, "punct"), 3, 4, 0, 1));
    CHECK(matrix_ok(cJSON_GetObjectItem(ef, "sep"), 3, 4, -10, 10));
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(r, "n_examples")) == 2);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(r, "n_units")) == 2);
    cJSON_Delete(r);
    al_reply_free(&reply);
    r = run(s, "{\"op\": \"attention_stats\", \"model\": \"m\", " TEXTS ", \"mode\": \"paper\", "
               "\"pad_to\": 24, \"batch_size\": 8}", AL_OK, &reply);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(r, "n_units")) == 1); /* one batch */
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "average")), "paper") == 0);
    cJSON_Delete(r);
    al_reply_free(&reply);

    r = run(s, "{\"op\": \"attention_patterns\", \"model\": \"m\", " TEXTS ", " PAIRS "}", AL_OK, &reply);
    const al_tensor_out *ps = tensor(&reply, "patterns_standard"), *pe = tensor(&reply, "patterns_effective");
    CHECK(ps && pe && ps->shape[0] == 3 && ps->shape[1] == 2 && ps->shape[2] == 4);
    CHECK(tensor(&reply, "scores_effective") != NULL);
    for (int k = 0; k < 2; k++) {
        const cJSON *shares = cJSON_GetObjectItem(r, k ? "effective" : "standard");
        double total = 0;
        for (const cJSON *x = shares ? shares->child : NULL; x; x = x->next) total += x->valuedouble;
        CHECK_NEAR(total, 100.0, 1e-9);
    }
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r, "patterns")) == AL_N_PATTERNS);
    cJSON_Delete(r);
    al_reply_free(&reply);
}

static void test_pos_op(al_session *s) {
    al_reply reply;
    cJSON *r = run(s, "{\"op\": \"attention_by_pos\", \"model\": \"m\", "
                      "\"words\": [[\"the\", \"cats\", \"sat\", \".\"], [\"a\", \"dog\", \"ran\"]], "
                      "\"tags\": [[\"DET\", \"NOUN\", \"VERB\", \"PUNCT\"], [\"DET\", \"NOUN\", \"VERB\"]]}",
                   AL_OK, &reply);
    const cJSON *tags = cJSON_GetObjectItem(r, "tags");
    CHECK(cJSON_GetArraySize(tags) == 6); /* DET NOUN VERB PUNCT [CLS] [SEP] */
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(r, "layer")) == 2);
    int found = 0;
    for (const cJSON *t = tags ? tags->child : NULL; t; t = t->next) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(t, "tag"));
        const double n = cJSON_GetNumberValue(cJSON_GetObjectItem(t, "n_examples"));
        const cJSON *std = cJSON_GetObjectItem(t, "standard");
        CHECK(cJSON_GetArraySize(std) == 4 && cJSON_GetArraySize(cJSON_GetObjectItem(t, "effective")) == 4);
        for (const cJSON *v = std ? std->child : NULL; v; v = v->next)
            CHECK(v->valuedouble >= 0 && v->valuedouble <= 1);
        if (strcmp(name, "PUNCT") == 0) {
            found++;
            CHECK(n == 1);
        }
        if (strcmp(name, "NOUN") == 0) {
            found++;
            CHECK(n == 2);
        }
    }
    CHECK(found == 2);
    cJSON_Delete(r);
    al_reply_free(&reply);
    r = run(s, "{\"op\": \"attention_by_pos\", \"model\": \"m\", \"words\": [[\"a\", \"dog\"]], "
               "\"tags\": [[\"DET\", \"NOUN\"]], \"layer\": 0, \"query\": 1, \"reduce\": \"mean\"}",
            AL_OK, &reply);
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItem(r, "query")) == 1);
    cJSON_Delete(r);
    al_reply_free(&reply);
    expect_error(s, "{\"op\": \"attention_by_pos\", \"model\": \"m\", \"words\": [[\"a\", \"dog\"]], "
                    "\"tags\": [[\"DET\"]]}", "'tags[0]'");
    expect_error(s, "{\"op\": \"attention_by_pos\", \"model\": \"m\", \"words\": [[\"a\", 3]], "
                    "\"tags\": [[\"DET\", \"X\"]]}", "'words[0][1]'");
    expect_error(s, "{\"op\": \"attention_by_pos\", \"model\": \"m\", \"words\": [[\"a\"]], "
                    "\"tags\": [[\"DET\"]], \"query\": 7}", "'query'");
    expect_error(s, "{\"op\": \"attention_by_pos\", \"model\": \"m\", \"words\": [[\"a\"]], "
                    "\"tags\": [[\"DET\"]], \"layer\": 3}", "'layer'");
    expect_error(s, "{\"op\": \"attention_by_pos\", \"model\": \"m\", \"words\": [[\"a\"]], "
                    "\"tags\": [[\"DET\"]], \"reduce\": \"sum\"}", "'reduce'");
    expect_error(s, "{\"op\": \"attention_by_pos\", \"model\": \"m\", \"texts\": [\"a\"]}", "'words'");
}

static void test_similarity_op(al_session *s) {
    al_reply reply;
    cJSON *r = run(s, "{\"op\": \"attention_similarity\", \"model\": \"m\", \"model_b\": \"m2\", "
                      TEXTS "}", AL_OK, &reply);
    CHECK(matrix_ok(cJSON_GetObjectItem(r, "standard"), 3, 4, 1 - 1e-6, 1 + 1e-6));
    CHECK(matrix_ok(cJSON_GetObjectItem(r, "effective"), 3, 4, 1 - 1e-6, 1 + 1e-6));
    cJSON_Delete(r);
    al_reply_free(&reply);
    /* against a differently initialised model of the same shape: below 1 */
    r = run(s, "{\"op\": \"attention_similarity\", \"model\": \"m\", \"model_b\": \"rand\", " TEXTS
               ", \"average\": \"paper\", \"pad_to\": 24}", AL_OK, &reply);
    CHECK(matrix_ok(cJSON_GetObjectItem(r, "standard"), 3, 4, 0, 1 - 1e-4));
    cJSON_Delete(r);
    al_reply_free(&reply);
    expect_error(s, "{\"op\": \"attention_similarity\", \"model\": \"m\", \"text\": \"a\"}", "'model_b'");
    expect_error(s, "{\"op\": \"attention_similarity\", \"model\": \"m\", \"model_b\": \"nope\", "
                    "\"text\": \"a\"}", "'model_b'");
    expect_error(s, "{\"op\": \"attention_similarity\", \"model\": \"m\", \"model_b\": \"other\", "
                    "\"text\": \"a\"}", "does not match");
}

static void test_key_classes(const al_model *model) {
    const al_tokenizer *tok = al_model_tokenizer(model);
    CHECK(tok != NULL);
    if (!tok) return;
    al_encoding enc;
    al_error err = {0};
    al_encode_options opt = al_encode_default_options();
    CHECK(al_tokenizer_encode(tok, "the cats , hello !", NULL, &opt, &enc, &err) == AL_OK);
    uint8_t cl[16];
    al_key_classes(tok, enc.ids, enc.attention_mask, enc.length, cl);
    /* [CLS] the cat ##s , hello ! [SEP] */
    CHECK(enc.length == 8);
    CHECK(cl[0] == AL_KEY_CLS && cl[7] == AL_KEY_SEP);
    CHECK(cl[1] == 0 && cl[3] == 0 && cl[4] == AL_KEY_PUNCT && cl[6] == AL_KEY_PUNCT);
    al_key_classes(NULL, enc.ids, NULL, enc.length, cl);
    CHECK(cl[0] == AL_KEY_CLS && cl[7] == AL_KEY_SEP && cl[4] == 0);
    al_encoding_free(&enc);
}

int main(void) {
    test_token_stats();
    test_diff();
    test_by_tag();
    test_cosine();
    test_patterns();

    al_session *s = al_session_new();
    al_error err = {0};
    al_fileset *fs = model_files(), *fs2 = model_files();
    CHECK(fs && fs2);
    if (fs && fs2) {
        CHECK(al_session_add_model(s, "m", fs, &err) == AL_OK);
        CHECK(al_session_add_model(s, "m2", fs2, &err) == AL_OK);
        al_config same = *al_model_config(al_api_find_model(s, "m")->model);
        al_model *rnd = NULL, *other = NULL;
        CHECK(al_model_new_random(&same, 99, 0, &rnd, &err) == AL_OK);
        CHECK(al_api_put_model(s, "rand", rnd, &err) == AL_OK);
        al_config diff = al_config_bert(100, 32, 3, 2, 64);
        CHECK(al_model_new_random(&diff, 5, 0, &other, &err) == AL_OK);
        CHECK(al_api_put_model(s, "other", other, &err) == AL_OK);
        test_key_classes(al_api_find_model(s, "m")->model);
        test_effective_op(s);
        test_stats_ops(s);
        test_pos_op(s);
        test_similarity_op(s);
    }
    al_session_free(s);
    return check_summary("analysis");
}
