/* test_lm_ops.c: the "lm" and "generate" ops (docs/decoders.md) on the tiny GPT-2 of tests/fixtures/
 * decoder_tiny_gpt2 (a real byte-level BPE) and a golden decoder: the surprisals are the forward's logits'
 * log-softmax (recomputed here in double with libm: within 1e-5 bits), a corpus's cross-entropy is the token-weighted
 * mean of its documents' with an interval around it, the greedy continuation is the argmax of a whole forward at
 * every step, a seeded sample repeats and is the same on 1 and 3 threads, progress streams every token, and bad
 * requests are refused naming the field. A corpus's loss (lm_corpus.c) has the same bits in batches of any size,
 * and its loss by position adds up to its documents' loss. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "session_request.h"
#include "methods/lm/lm_corpus.h"

#define TINY "tests/fixtures/decoder_tiny_gpt2"

static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

static al_session *session_with(int threads, const char *dir, const char *id) {
    al_session_params p = al_session_default_params();
    p.n_threads = threads;
    al_session *s = al_session_new_params(&p);
    char req[512];
    snprintf(req, sizeof req, "{\"op\": \"load_model\", \"model\": \"%s\", \"path\": \"%s\"}", id, dir);
    al_reply r;
    cJSON *j = run(s, req, AL_OK, &r);
    cJSON_Delete(j);
    al_reply_free(&r);
    return s;
}

/* The forward's logits for ids, then -log2 p(ids[i] | < i) from them in double. */
static void reference_bits(const al_model *m, const int32_t *ids, int n, double *bits) {
    const int V = al_model_config(m)->vocab_size;
    float *logits = malloc(sizeof(float) * (size_t)n * V);
    al_forward_outputs out = {0};
    out.lm_logits = logits;
    al_batch b = {1, n, ids, NULL, NULL, NULL};
    al_error err;
    CHECK(al_forward(m, &b, NULL, &out, &err) == AL_OK);
    for (int i = 1; i < n; i++) {
        const float *x = logits + (size_t)(i - 1) * V;
        double mx = x[0], z = 0.0;
        for (int v = 1; v < V; v++) mx = x[v] > mx ? x[v] : mx;
        for (int v = 0; v < V; v++) z += exp(x[v] - mx);
        bits[i] = (log(z) - (x[ids[i]] - mx)) / log(2.0);
    }
    free(logits);
}

static void test_lm(void) {
    al_session *s = session_with(1, TINY, "tiny");
    al_model *m = NULL;
    al_error err;
    CHECK(al_model_load_dir(TINY, &m, &err) == AL_OK);
    al_reply r;
    cJSON *j = run(s, "{\"op\": \"lm\", \"model\": \"tiny\", \"text\": \"The cat sat on the mat.\", \"top_k\": 3}", AL_OK, &r);
    const cJSON *seq = cJSON_GetArrayItem(item(j, "sequences"), 0);
    const cJSON *ids = item(seq, "ids"), *sur = item(seq, "surprisal_bits"), *top = item(seq, "top");
    const int n = cJSON_GetArraySize(ids);
    CHECK(n > 3 && cJSON_GetArraySize(sur) == n && cJSON_GetArraySize(top) == n && cJSON_IsNull(cJSON_GetArrayItem(sur, 0)));
    CHECK(cJSON_GetArraySize(item(j, "warnings")) == 0);
    int32_t *v = malloc(sizeof(int32_t) * (size_t)n);
    double *want = calloc((size_t)n, sizeof(double)), worst = 0.0, sum = 0.0;
    for (int i = 0; i < n; i++) v[i] = cJSON_GetArrayItem(ids, i)->valueint;
    reference_bits(m, v, n, want);
    for (int i = 1; i < n; i++) {
        const double got = cJSON_GetArrayItem(sur, i)->valuedouble;
        sum += got;
        if (fabs(got - want[i]) > worst) worst = fabs(got - want[i]);
    }
    printf("lm: %d tokens, surprisal vs the forward's log-softmax: max |diff| %.2e bits\n", n, worst);
    CHECK_MSG(worst < 1e-5, "surprisal differs by %.3g bits", worst);
    const cJSON *sm = item(seq, "summary");
    CHECK_NEAR(item(sm, "bits_per_token")->valuedouble, sum / (n - 1), 1e-9);
    /* top: 3 tokens each, probabilities falling, each in (0, 1] */
    const cJSON *t0 = cJSON_GetArrayItem(top, 0);
    CHECK(cJSON_GetArraySize(t0) == 3 && item(cJSON_GetArrayItem(t0, 0), "p")->valuedouble >=
                                             item(cJSON_GetArrayItem(t0, 1), "p")->valuedouble);
    cJSON_Delete(j);
    al_reply_free(&r);
    /* a corpus: three documents, the mean weighted by tokens, an interval around it */
    j = run(s, "{\"op\": \"lm\", \"model\": \"tiny\", \"corpus\": \"First document, short.\\n\\nThe second one\\nruns over "
               "two lines.\\n\\n\\nAnd a third.\", \"corpus_name\": \"three.txt\"}", AL_OK, &r);
    const cJSON *docs = item(j, "documents"), *su = item(j, "summary");
    CHECK(cJSON_GetArraySize(docs) == 3 && item(su, "documents")->valueint == 3);
    double tot = 0.0, bits_sum = 0.0;
    const cJSON *d;
    cJSON_ArrayForEach(d, docs) {
        tot += item(d, "tokens_predicted")->valuedouble;
        bits_sum += item(d, "tokens_predicted")->valuedouble * item(d, "bits_per_token")->valuedouble;
    }
    const double mean = item(su, "bits_per_token")->valuedouble;
    const cJSON *ci = item(su, "bits_per_token_ci95");
    CHECK_NEAR(mean, bits_sum / tot, 1e-9);
    CHECK(cJSON_GetArraySize(ci) == 2 && cJSON_GetArrayItem(ci, 0)->valuedouble < mean &&
          cJSON_GetArrayItem(ci, 1)->valuedouble > mean);
    cJSON_Delete(j);
    al_reply_free(&r);
    /* bad requests name the field */
    j = run(s, "{\"op\": \"lm\", \"model\": \"tiny\", \"corpus\": \"{\\\"text\\\": \\\"a\\\"}\\n{\\\"txt\\\": 1}\", "
               "\"corpus_name\": \"c.jsonl\"}", AL_ERR_FORMAT, &r);
    const char *msg = cJSON_GetStringValue(item(item(j, "error"), "message"));
    CHECK_MSG(msg && strstr(msg, "c.jsonl: line 2: no string field"), "%s", msg ? msg : "(none)");
    cJSON_Delete(j);
    al_reply_free(&r);
    expect_error(s, "{\"op\": \"lm\", \"model\": \"tiny\", \"corpus\": \"\\n\\n\"}", "no document");
    expect_error(s, "{\"op\": \"lm\", \"model\": \"tiny\", \"top_k\": 101, \"text\": \"a\"}", "top_k");
    free(v), free(want);
    al_model_free(m);
    al_session_free(s);
}

typedef struct stream {
    int tokens;
    char last[256];
} stream;

static void on_progress(void *user, const char *stage, double fraction) {
    (void)fraction;
    stream *st = user;
    if (!strncmp(stage, "token\t", 6)) {
        st->tokens++;
        snprintf(st->last, sizeof st->last, "%s", stage);
    }
}

static char *generated_text(al_session *s, const char *req, stream *st) {
    al_reply r;
    al_run_params p = {0};
    p.progress = on_progress;
    p.progress_user = st;
    CHECK(al_session_run(s, req, &p, &r) == AL_OK);
    cJSON *j = r.json ? cJSON_Parse(r.json) : NULL;
    const cJSON *ids = item(item(j, "generated"), "ids");
    char *text = ids ? cJSON_PrintUnformatted(ids) : NULL;
    cJSON_Delete(j);
    al_reply_free(&r);
    return text;
}

static void test_generate(void) {
    al_session *s1 = session_with(1, TINY, "tiny"), *s3 = session_with(3, TINY, "tiny");
    al_model *m = NULL;
    al_error err;
    CHECK(al_model_load_dir(TINY, &m, &err) == AL_OK);
    /* greedy: each token the argmax of a whole forward of the text so far */
    al_reply r;
    cJSON *j = run(s1, "{\"op\": \"generate\", \"model\": \"tiny\", \"text\": \"The cat\", \"max_new_tokens\": 12, "
                       "\"stop_at_eos\": false, \"attentions\": true}", AL_OK, &r);
    const cJSON *pids = item(item(j, "prompt"), "ids"), *gids = item(item(j, "generated"), "ids");
    const int P = cJSON_GetArraySize(pids), G = cJSON_GetArraySize(gids);
    CHECK(G == 12 && !strcmp(cJSON_GetStringValue(item(j, "stopped")), "max_new_tokens"));
    const int V = al_model_config(m)->vocab_size, NL = al_model_config(m)->n_layers, H = al_model_config(m)->n_heads;
    int32_t seq[64];
    for (int i = 0; i < P; i++) seq[i] = cJSON_GetArrayItem(pids, i)->valueint;
    float *logits = malloc(sizeof(float) * 64 * V), *attn = malloc(sizeof(float) * (size_t)NL * H * 64 * 64);
    int same = 1, attn_same = 1;
    const float *tensor = r.n_tensors == 1 ? r.tensors[0].data : NULL;
    CHECK(tensor && r.tensors[0].shape[0] == 12 && r.tensors[0].shape[3] == P + 12);
    for (int g = 0; g < G; g++) {
        const int len = P + g;
        al_forward_outputs out = {0};
        out.lm_logits = logits;
        out.attentions = attn;
        al_batch b = {1, len, seq, NULL, NULL, NULL};
        CHECK(al_forward(m, &b, NULL, &out, &err) == AL_OK);
        int best = 0;
        for (int v = 1; v < V; v++) best = logits[(size_t)(len - 1) * V + v] > logits[(size_t)(len - 1) * V + best] ? v : best;
        same &= best == cJSON_GetArrayItem(gids, g)->valueint;
        seq[len] = cJSON_GetArrayItem(gids, g)->valueint;
        /* step g's attention row (the token it read at position len - 1 predicted token g; the tensor holds the
         * attention of new token g - 1 as it ran): compare rows of tokens 1.. with the forward's last row */
        if (g >= 1 && tensor)
            for (int lh = 0; lh < NL * H; lh++)
                attn_same &= !memcmp(tensor + ((size_t)(g - 1) * NL * H + lh) * (P + 12), attn + ((size_t)lh * len + len - 1) * len,
                                     sizeof(float) * (size_t)len);
    }
    CHECK_MSG(same, "greedy tokens differ from the forward's argmax");
    CHECK_MSG(attn_same, "a generated token's attention differs from the forward's");
    /* timing: CPU seconds only where the system keeps a CPU clock (natively), never WebAssembly's wall-time clock() */
    const cJSON *timing = item(j, "timing"), *cpu = item(timing, "cpu_seconds");
    CHECK(cJSON_IsNumber(item(timing, "seconds")) && item(timing, "seconds")->valuedouble >= 0);
#ifdef __EMSCRIPTEN__
    CHECK_MSG(!cpu, "a WebAssembly reply claims CPU seconds");
#else
    CHECK_MSG(cJSON_IsNumber(cpu) && cpu->valuedouble >= 0, "no CPU seconds natively");
#endif
    cJSON_Delete(j);
    al_reply_free(&r);
    /* sampled: the same seed gives the same tokens, on 1 and 3 threads; progress streams each token */
    const char *req = "{\"op\": \"generate\", \"model\": \"tiny\", \"text\": \"Once upon\", \"max_new_tokens\": 20, "
                      "\"temperature\": 0.9, \"top_k\": 40, \"top_p\": 0.95, \"seed\": 7, \"stop_at_eos\": false}";
    stream a = {0}, b = {0}, c = {0};
    char *ta = generated_text(s1, req, &a), *tb = generated_text(s1, req, &b), *tc = generated_text(s3, req, &c);
    CHECK(ta && tb && tc && !strcmp(ta, tb) && !strcmp(ta, tc));
    /* and the same natively and in WebAssembly (the tokens both builds gave) */
    CHECK_MSG(ta && !strcmp(ta, "[523,57,402,12,164,415,295,545,545,545,452,160,342,407,407,391,164,151,414,530]"), "%s", ta);
    CHECK(a.tokens == 20 && c.tokens == 20);
    printf("generate: seed 7 gives %s on 1 and 3 threads; last progress stage '%.40s'\n", ta ? ta : "?", a.last);
    const char *req2 = "{\"op\": \"generate\", \"model\": \"tiny\", \"text\": \"Once upon\", \"max_new_tokens\": 20, "
                       "\"temperature\": 0.9, \"top_k\": 40, \"top_p\": 0.95, \"seed\": 8, \"stop_at_eos\": false}";
    stream d = {0};
    char *td = generated_text(s1, req2, &d);
    CHECK_MSG(td && ta && strcmp(ta, td) != 0, "seeds 7 and 8 gave the same 20 tokens");
    free(ta), free(tb), free(tc), free(td);
    /* bad requests name the field; nothing is cut silently */
    expect_error(s1, "{\"op\": \"generate\", \"model\": \"tiny\", \"text\": \"a b\", \"max_new_tokens\": 64}", "max_new_tokens");
    expect_error(s1, "{\"op\": \"generate\", \"model\": \"tiny\", \"text\": \"\"}", "'text'");
    expect_error(s1, "{\"op\": \"generate\", \"model\": \"tiny\", \"input_ids\": [1, 999]}", "input_ids[1]");
    expect_error(s1, "{\"op\": \"generate\", \"model\": \"tiny\", \"text\": \"a\", \"temperature\": -1}", "temperature");
    free(logits), free(attn);
    al_model_free(m);
    al_session_free(s1), al_session_free(s3);
}

/* An encoder is refused by name. */
static void test_encoder_refused(void) {
    al_session *s = session_with(1, "tests/golden/bert", "enc");
    expect_error(s, "{\"op\": \"lm\", \"model\": \"enc\", \"input_ids\": [1, 2, 3]}", "not a causal language model");
    expect_error(s, "{\"op\": \"generate\", \"model\": \"enc\", \"input_ids\": [1, 2, 3]}", "not a causal language model");
    al_session_free(s);
}

/* A corpus's windows scored one at a time and three at a time: the same bits, per document and per position; the
 * positions' sums are the documents' sums. One document is longer than the 64-token window. */
static void test_corpus_batches(void) {
    al_error err;
    al_model *m = NULL;
    CHECK(al_model_load_dir(TINY, &m, &err) == AL_OK);
    char text[4096] = "A short one.\n\nThe second document runs over\ntwo lines.\n\nx\n\n";
    for (int i = 0; i < 40; i++) strcat(text, "Words after words make a long document. ");
    al_lm_corpus c;
    CHECK_MSG(al_lm_corpus_build(m, text, "t.txt", 64, &c, &err) == AL_OK, "%s", err.message);
    CHECK(c.n_docs == 4 && c.n_windows >= 5 && c.window == 64);
    al_lm_corpus_loss one, three;
    CHECK(al_lm_corpus_loss_new(&c, &one, &err) == AL_OK && al_lm_corpus_loss_new(&c, &three, &err) == AL_OK);
    CHECK(al_lm_corpus_score(m, &c, NULL, 1, &one, &err) == AL_OK);
    CHECK(al_lm_corpus_score(m, &c, NULL, 3, &three, &err) == AL_OK);
    CHECK(memcmp(one.doc_nll, three.doc_nll, sizeof(double) * 4) == 0);
    CHECK(memcmp(one.pos_nll, three.pos_nll, sizeof(double) * 64) == 0);
    CHECK(one.doc_tokens[2] == 0); /* "x" is one token: a document that predicts nothing */
    double by_doc = 0.0, by_pos = 0.0;
    long long n_doc = 0, n_pos = 0;
    for (int d = 0; d < 4; d++) by_doc += one.doc_nll[d], n_doc += one.doc_tokens[d];
    for (int i = 0; i < 64; i++) by_pos += one.pos_nll[i], n_pos += one.pos_tokens[i];
    CHECK(n_doc == n_pos && n_doc == one.summary.tokens && one.pos_tokens[63] == 0);
    CHECK_NEAR(by_doc, by_pos, 1e-9 * by_doc);
    al_lm_corpus_free(&c);
    CHECK(al_lm_corpus_build(m, text, "t.txt", 1, &c, &err) == AL_ERR_INVALID); /* c is left empty */
    /* documents: paragraphs when a blank line separates two lines, else one a line (JSONL aside) */
    char **docs = NULL;
    int n_docs = 0;
    CHECK(al_lm_split_documents("one line\r\ntwo line\n\nthree\n", "d", &docs, &n_docs, &err) == AL_OK && n_docs == 2);
    al_lm_documents_free(docs, n_docs);
    CHECK(al_lm_split_documents("\n\none line\r\n  \ntwo\n\n", "d", &docs, &n_docs, &err) == AL_OK && n_docs == 2);
    al_lm_documents_free(docs, n_docs);
    CHECK(al_lm_split_documents("one line\r\ntwo line\nthree\n", "d", &docs, &n_docs, &err) == AL_OK && n_docs == 3 &&
          strcmp(docs[0], "one line") == 0 && strcmp(docs[2], "three") == 0);
    al_lm_documents_free(docs, n_docs);
    al_lm_corpus_loss_free(&one), al_lm_corpus_loss_free(&three);
    al_lm_corpus_free(&c);
    al_model_free(m);
}

int main(void) {
    test_corpus_batches();
    test_lm();
    test_generate();
    test_encoder_refused();
    return check_summary("lm_ops");
}
