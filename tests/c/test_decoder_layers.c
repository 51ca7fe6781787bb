/* test_decoder_layers.c: attention blocks dropped (He et al. 2024) and StreamingLLM's window and sinks
 * (docs/decoders.md, "Dropped attention blocks" and "Window and sinks") against tests/golden/make_decoder_layers.py's
 * float64 references on the random decoder checkpoints of tests/golden/decoders (GPT-2, Llama with GQA, Qwen2 with and
 * without its window, GPT-NeoX parallel and sequential), the golden's three rows as a corpus of three documents:
 *   - each block's input-output similarity (within 1e-5) and the order it gives;
 *   - the corpus's loss by position and by document with the first k blocks of that order dropped, each block dropped
 *     alone, each layer's heads constant with all ones, and under windows with and without sinks (1e-5 relative);
 *   - dropping no block gives the model's loss bit for bit, a window as long as the text gives the full loss bit for
 *     bit, and the window's bits do not depend on the batch size or on skipping the pads;
 *   - the same bits on 1 and 3 threads, and a pinned digest (the same natively and in WebAssembly);
 *   - the layers and streaming ops on the tiny GPT-2 of tests/fixtures/decoder_tiny_gpt2 (a real tokenizer), and their
 *     refusals naming the field. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "fnv_digest.h"
#include "golden_file.h"
#include "session_request.h"
#include "methods/layers/layer_drop.h"
#include "methods/streaming/streaming.h"

static const char *const k_variants[] = {"gpt2", "llama_gqa", "llama_untied", "qwen2", "qwen2_window", "pythia",
                                         "pythia_sequential"};
#define N_VARIANTS (int)(sizeof k_variants / sizeof k_variants[0])
#define PINNED_DIGEST 0xb5ea2623a4eb18a6ull /* the similarities and every loss, every golden */
#define TINY "tests/fixtures/decoder_tiny_gpt2"

static double g_sim, g_loss;

static void worst(double *w, double e) {
    if (e > *w || e != e) *w = e;
}

static const double *golden_f64(const golden_file *g, const char *name, size_t numel) {
    const al_tensor_entry *t = al_tensor_list_find(&g->list, name);
    return t && t->dtype == AL_DT_F64 && t->nbytes == numel * sizeof(double) ? (const double *)t->data : NULL;
}

/* The loss against the reference's sums by position [W] and by document [n_docs], relative to each value. */
static void compare_loss(const char *what, const al_lm_corpus_loss *l, const double *pos, const double *doc) {
    double e = 0.0;
    for (int i = 0; i < l->window; i++) worst(&e, fabs(l->pos_nll[i] - pos[i]) / fmax(1.0, fabs(pos[i])));
    for (int d = 0; d < l->n_docs; d++) worst(&e, fabs(l->doc_nll[d] - doc[d]) / fmax(1.0, fabs(doc[d])));
    CHECK_MSG(e <= 1e-5, "%s: loss off the reference by %.3g relative", what, e);
    worst(&g_loss, e);
}

static uint64_t digest_loss(uint64_t h, const al_lm_corpus_loss *l) {
    h = fnv_digest(h, (const float *)l->pos_nll, 2 * (size_t)l->window);
    return fnv_digest(h, (const float *)l->doc_nll, 2 * (size_t)l->n_docs);
}

static int same_loss(const al_lm_corpus_loss *a, const al_lm_corpus_loss *b) {
    return !memcmp(a->pos_nll, b->pos_nll, sizeof(double) * (size_t)a->window) &&
           !memcmp(a->doc_nll, b->doc_nll, sizeof(double) * (size_t)a->n_docs);
}

/* One golden on a pool (NULL: one thread): every check, the numbers chained into the digest. */
static uint64_t check_variant(const char *name, al_threadpool *pool, uint64_t h) {
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "tests/golden/decoders/%s", name);
    al_model *m = NULL;
    al_error err;
    CHECK_MSG(al_model_load_dir(dir, &m, &err) == AL_OK, "%s: %s", dir, err.message);
    golden_file g, ref;
    snprintf(path, sizeof path, "%s/golden.safetensors", dir);
    CHECK(golden_open(&g, path));
    snprintf(path, sizeof path, "%s/layers.safetensors", dir);
    CHECK(golden_open(&ref, path));
    const al_config *cfg = al_model_config(m);
    const int NL = cfg->n_layers, H = cfg->n_heads, B = 3, W = 12, S = 4;

    /* the corpus: the golden's rows, each a window and a document */
    int32_t *ids = golden_i32(&g, "input_ids"), *mask = golden_i32(&g, "attention_mask");
    int doc[3] = {0, 1, 2}, len[3] = {0, 0, 0};
    for (int b = 0; b < B; b++)
        for (int i = 0; i < W; i++) len[b] += mask[b * W + i];
    al_lm_corpus c = {B, B, W, doc, len, ids};
    al_forward_params fp = al_forward_default_params();
    fp.pool = pool;

    double cos[8];
    long long tokens = 0;
    CHECK(al_layer_similarity(m, &c, 0, &fp, cos, &tokens, &err) == AL_OK);
    CHECK(tokens == len[0] + len[1] + len[2]);
    const double *sim = golden_f64(&ref, "similarity", (size_t)NL), *order_ref = golden_f64(&ref, "order", (size_t)NL);
    int order[8];
    al_layer_order(cos, NL, order);
    for (int l = 0; sim && order_ref && l < NL; l++) {
        worst(&g_sim, fabs(cos[l] - sim[l]));
        CHECK_MSG(order[l] == (int)order_ref[l], "%s: order[%d] = %d, reference %d", name, l, order[l], (int)order_ref[l]);
    }
    h = fnv_digest(h, (const float *)cos, 2 * (size_t)NL);

    al_lm_corpus_loss plain, loss, other;
    CHECK(al_lm_corpus_loss_new(&c, &plain, &err) == AL_OK && al_lm_corpus_loss_new(&c, &loss, &err) == AL_OK &&
          al_lm_corpus_loss_new(&c, &other, &err) == AL_OK);
    CHECK(al_lm_corpus_score(m, &c, &fp, 8, &plain, &err) == AL_OK);
    const double *drop_pos = golden_f64(&ref, "drop_pos", (size_t)(NL + 1) * W);
    const double *drop_doc = golden_f64(&ref, "drop_doc", (size_t)(NL + 1) * B);
    unsigned char dropped[8] = {0};
    for (int k = 0; drop_pos && drop_doc && k <= NL; k++) {
        if (k > 0) dropped[order[k - 1]] = 1;
        CHECK(al_layer_drop_score(m, &c, dropped, &fp, 8, &loss, &err) == AL_OK);
        compare_loss(name, &loss, drop_pos + (size_t)k * W, drop_doc + (size_t)k * B);
        if (k == 0) CHECK_MSG(same_loss(&loss, &plain), "%s: no block dropped is not the model's loss bit for bit", name);
        h = digest_loss(h, &loss);
    }
    const double *alone_pos = golden_f64(&ref, "alone_pos", (size_t)NL * W);
    const double *alone_doc = golden_f64(&ref, "alone_doc", (size_t)NL * B);
    const double *const_pos = golden_f64(&ref, "const_pos", (size_t)NL * W);
    const double *const_doc = golden_f64(&ref, "const_doc", (size_t)NL * B);
    float *ones = malloc(sizeof(float) * (size_t)H * W * W);
    for (size_t i = 0; i < (size_t)H * W * W; i++) ones[i] = 1.0f;
    for (int l = 0; alone_pos && alone_doc && const_pos && const_doc && l < NL; l++) {
        memset(dropped, 0, sizeof dropped);
        dropped[l] = 1;
        CHECK(al_layer_drop_score(m, &c, dropped, &fp, 8, &loss, &err) == AL_OK);
        compare_loss(name, &loss, alone_pos + (size_t)l * W, alone_doc + (size_t)l * B);
        h = digest_loss(h, &loss);
        CHECK(al_layer_constant_score(m, &c, l, ones, &fp, 8, &loss, &err) == AL_OK);
        compare_loss(name, &loss, const_pos + (size_t)l * W, const_doc + (size_t)l * B);
        h = digest_loss(h, &loss);
    }
    free(ones);

    const double *cfgs = golden_f64(&ref, "stream_cfg", (size_t)S * 2);
    const double *stream_pos = golden_f64(&ref, "stream_pos", (size_t)S * W);
    const double *stream_doc = golden_f64(&ref, "stream_doc", (size_t)S * B);
    al_lm_corpus_loss runs[AL_STREAM_N_RUNS];
    for (int r = 0; r < AL_STREAM_N_RUNS; r++) CHECK(al_lm_corpus_loss_new(&c, &runs[r], &err) == AL_OK);
    for (int s = 0; cfgs && stream_pos && stream_doc && s < S; s++) {
        const int recent = (int)cfgs[2 * s], sinks = (int)cfgs[2 * s + 1];
        CHECK(al_streaming_score(m, &c, recent, sinks, &fp, 8, runs, &err) == AL_OK);
        CHECK_MSG(same_loss(&runs[AL_STREAM_FULL], &plain), "%s: the streaming test's full run is not the model's", name);
        compare_loss(name, &runs[AL_STREAM_SINKS], stream_pos + (size_t)s * W, stream_doc + (size_t)s * B);
        if (sinks == 0) compare_loss(name, &runs[AL_STREAM_WINDOW], stream_pos + (size_t)s * W, stream_doc + (size_t)s * B);
        h = digest_loss(h, &runs[AL_STREAM_WINDOW]);
        h = digest_loss(h, &runs[AL_STREAM_SINKS]);
        /* the window's rule by position: one window per forward, and a padded batch with its pads skipped, give
         * the same bits as the batch of three */
        al_forward_params sp = fp;
        sp.key_window = recent, sp.key_sinks = sinks;
        CHECK(al_lm_corpus_score(m, &c, &sp, 1, &other, &err) == AL_OK);
        CHECK_MSG(same_loss(&other, &runs[AL_STREAM_SINKS]), "%s: window %d, %d sinks: batch size changes the bits",
                  name, recent, sinks);
        sp.skip_pads = 1;
        CHECK(al_lm_corpus_score(m, &c, &sp, 8, &other, &err) == AL_OK);
        CHECK_MSG(same_loss(&other, &runs[AL_STREAM_SINKS]), "%s: window %d, %d sinks: skipping pads changes the bits",
                  name, recent, sinks);
    }
    /* a window that covers every text reads every key: the full loss bit for bit */
    CHECK(al_streaming_score(m, &c, W, 0, &fp, 8, runs, &err) == AL_OK);
    CHECK_MSG(same_loss(&runs[AL_STREAM_WINDOW], &plain), "%s: a window of the whole text is not the full loss", name);
    for (int r = 0; r < AL_STREAM_N_RUNS; r++) al_lm_corpus_loss_free(&runs[r]);
    al_lm_corpus_loss_free(&plain), al_lm_corpus_loss_free(&loss), al_lm_corpus_loss_free(&other);
    free(ids), free(mask);
    golden_close(&g), golden_close(&ref);
    al_model_free(m);
    return h;
}

/* The forward's own refusals of the new options. */
static void check_forward_refusals(void) {
    al_model *m = NULL;
    al_error err;
    CHECK(al_model_load_dir("tests/golden/decoders/gpt2", &m, &err) == AL_OK);
    int32_t ids[4] = {1, 2, 3, 4};
    al_batch b = {1, 4, ids, NULL, NULL, NULL};
    al_forward_params p = al_forward_default_params();
    p.key_sinks = 2;
    CHECK(al_forward(m, &b, &p, NULL, &err) == AL_ERR_INVALID && strstr(err.message, "key_sinks"));
    p.key_sinks = 0, p.key_window = -1;
    CHECK(al_forward(m, &b, &p, NULL, &err) == AL_ERR_INVALID && strstr(err.message, "key_window"));
    al_model_free(m);
    CHECK(al_model_load_dir("tests/golden/bert", &m, &err) == AL_OK);
    unsigned char dropped[8] = {1};
    p = al_forward_default_params();
    p.attn_dropped = dropped;
    CHECK(al_forward(m, &b, &p, NULL, &err) == AL_ERR_INVALID && strstr(err.message, "attn_dropped"));
    p.attn_dropped = NULL, p.key_window = 2;
    CHECK(al_forward(m, &b, &p, NULL, &err) == AL_ERR_INVALID && strstr(err.message, "key_window"));
    al_model_free(m);
}

static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* one document of more than 40 tokens: read in texts of at most 40 through a cache of 2 + 8 slots */
#define LONG_TEXT "The cat sat on the mat and the dog sat on the log while the bird sat on the wire, and then the cat " \
                  "and the dog and the bird all went home to sleep, for the day had been a long one for all of them."
#define CORPUS "\"corpus\": \"The first document is here, and it runs on for a while so that the window matters a " \
               "little.\\n\\nA second one, shorter.\\n\\nThe third document says the cat sat on the mat, then the " \
               "dog sat on the log, and the bird sat on the wire.\""

static void check_ops(void) {
    al_session *s = al_session_new();
    al_reply r;
    cJSON *j = run(s, "{\"op\": \"load_model\", \"model\": \"tiny\", \"path\": \"" TINY "\"}", AL_OK, &r);
    cJSON_Delete(j), al_reply_free(&r);
    j = run(s, "{\"op\": \"load_model\", \"model\": \"bert\", \"path\": \"tests/golden/bert\"}", AL_OK, &r);
    cJSON_Delete(j), al_reply_free(&r);
    const int64_t shape[4] = {2, 4, 64, 64};
    float *ones = malloc(sizeof(float) * 2 * 4 * 64 * 64);
    for (int i = 0; i < 2 * 4 * 64 * 64; i++) ones[i] = 1.0f;
    al_error err;
    CHECK(al_session_set_tensor(s, "ones", 4, shape, ones, &err) == AL_OK);
    CHECK(al_session_set_tensor(s, "small", 4, (const int64_t[]){2, 4, 4, 4}, ones, &err) == AL_OK);
    free(ones);

    j = run(s, "{\"op\": \"layers\", \"model\": \"tiny\", \"constants\": \"ones\", " CORPUS "}", AL_OK, &r);
    CHECK(cJSON_GetArraySize(item(j, "similarity")) == 2 && cJSON_GetArraySize(item(j, "order")) == 2);
    CHECK(cJSON_GetArraySize(item(j, "dropped")) == 3 && cJSON_GetArraySize(item(j, "alone")) == 2 &&
          cJSON_GetArraySize(item(j, "constant")) == 2);
    const cJSON *d0 = cJSON_GetArrayItem(item(j, "dropped"), 0);
    CHECK(item(item(d0, "summary"), "perplexity_ci95") && cJSON_GetArraySize(item(d0, "bits_by_position")) > 10);
    CHECK(cJSON_GetNumberValue(item(item(j, "calibration"), "windows")) == 3);
    /* no block dropped is the lm op's corpus perplexity */
    al_reply r_lm;
    cJSON *lm = run(s, "{\"op\": \"lm\", \"model\": \"tiny\", " CORPUS "}", AL_OK, &r_lm);
    al_reply_free(&r_lm);
    CHECK(cJSON_GetNumberValue(item(item(lm, "summary"), "perplexity")) ==
          cJSON_GetNumberValue(item(item(d0, "summary"), "perplexity")));
    cJSON_Delete(lm);
    cJSON_Delete(j), al_reply_free(&r);
    j = run(s, "{\"op\": \"layers\", \"model\": \"tiny\", \"alone\": false, \"calibration\": \"Some other text to "
               "calibrate on.\", \"calibration_windows\": 1, " CORPUS "}", AL_OK, &r);
    CHECK(!item(j, "alone") && !strcmp(cJSON_GetStringValue(item(item(j, "calibration"), "source")), "calibration"));
    cJSON_Delete(j), al_reply_free(&r);

    j = run(s, "{\"op\": \"streaming\", \"model\": \"tiny\", \"window\": 4, \"sinks\": 2, " CORPUS "}", AL_OK, &r);
    const cJSON *runs = item(j, "runs");
    CHECK(item(runs, "full") && item(runs, "window") && item(runs, "window_sinks"));
    CHECK(item(item(item(runs, "window_sinks"), "past_window"), "bits_per_token"));
    CHECK(cJSON_GetNumberValue(item(j, "positions")) == 64);
    cJSON_Delete(j), al_reply_free(&r);

    /* positions in a rolling cache (docs/decoders.md, "Positions in the cache"): a cache that holds every token of a
     * text shorter than the model's positions is the full forward, to the bit; a smaller one reads a longer text */
    j = run(s, "{\"op\": \"streaming\", \"model\": \"tiny\", \"window\": 4, \"sinks\": 2, " CORPUS "}", AL_OK, &r);
    al_reply rc;
    cJSON *jc = run(s, "{\"op\": \"streaming\", \"model\": \"tiny\", \"window\": 60, \"sinks\": 4, \"positions\": "
                       "\"cache\", " CORPUS "}", AL_OK, &rc);
    const cJSON *full = item(item(item(j, "runs"), "full"), "bits_by_position");
    const cJSON *cached = item(item(item(jc, "runs"), "window_sinks"), "bits_by_position");
    CHECK(full && cached && cJSON_GetArraySize(cached) == cJSON_GetArraySize(full) && !strcmp(cJSON_GetStringValue(item(jc, "positions_mode")), "cache"));
    for (int i = 0; full && cached && i < cJSON_GetArraySize(full); i++) {
        const cJSON *a = cJSON_GetArrayItem(full, i), *b = cJSON_GetArrayItem(cached, i);
        CHECK_MSG(cJSON_IsNull(a) ? cJSON_IsNull(b) : cJSON_GetNumberValue(a) == cJSON_GetNumberValue(b),
                  "streaming: position %d of the full cache is not the full forward's", i);
    }
    CHECK(cJSON_GetNumberValue(item(item(item(item(j, "runs"), "full"), "summary"), "perplexity")) ==
          cJSON_GetNumberValue(item(item(item(item(jc, "runs"), "full"), "summary"), "perplexity")));
    cJSON_Delete(j), al_reply_free(&r);
    cJSON_Delete(jc), al_reply_free(&rc);
    j = run(s, "{\"op\": \"streaming\", \"model\": \"tiny\", \"window\": 8, \"sinks\": 2, \"positions\": \"cache\", "
               "\"tokens\": 40, \"corpus\": \"" LONG_TEXT "\"}", AL_OK, &r);
    CHECK(cJSON_GetNumberValue(item(j, "positions")) == 40 && cJSON_GetNumberValue(item(j, "model_positions")) == 64);
    CHECK(cJSON_GetNumberValue(item(j, "windows")) >= 2 && cJSON_GetArraySize(item(item(item(j, "runs"), "window"),
                                                                                      "bits_by_position")) == 39);
    CHECK(cJSON_GetNumberValue(item(item(item(item(j, "runs"), "window_sinks"), "summary"), "tokens_predicted")) > 39);
    cJSON_Delete(j), al_reply_free(&r);
    expect_error(s, "{\"op\": \"streaming\", \"model\": \"tiny\", \"window\": 62, \"sinks\": 4, \"positions\": "
                    "\"cache\", " CORPUS "}", "field 'sinks'");
    expect_error(s, "{\"op\": \"streaming\", \"model\": \"tiny\", \"window\": 8, \"positions\": \"slots\", " CORPUS "}",
                 "field 'positions'");
    expect_error(s, "{\"op\": \"streaming\", \"model\": \"tiny\", \"window\": 64, " CORPUS "}", "field 'window'");
    expect_error(s, "{\"op\": \"streaming\", \"model\": \"tiny\", \"window\": 0, " CORPUS "}", "field 'window'");
    expect_error(s, "{\"op\": \"streaming\", \"model\": \"tiny\", " CORPUS "}", "field 'window'");
    expect_error(s, "{\"op\": \"streaming\", \"model\": \"tiny\", \"window\": 4, \"sinks\": 64, " CORPUS "}",
                 "field 'sinks'");
    expect_error(s, "{\"op\": \"streaming\", \"model\": \"tiny\", \"window\": 4}", "field 'corpus'");
    expect_error(s, "{\"op\": \"streaming\", \"model\": \"bert\", \"window\": 4, " CORPUS "}", "field 'model'");
    expect_error(s, "{\"op\": \"layers\", \"model\": \"bert\", " CORPUS "}", "field 'model'");
    expect_error(s, "{\"op\": \"layers\", \"model\": \"tiny\", \"constants\": \"small\", " CORPUS "}",
                 "field 'constants'");
    expect_error(s, "{\"op\": \"layers\", \"model\": \"tiny\", \"constants\": \"none\", " CORPUS "}",
                 "field 'constants'");
    al_session_free(s);
}

int main(void) {
    uint64_t one = FNV_DIGEST_START, three = FNV_DIGEST_START;
    for (int v = 0; v < N_VARIANTS; v++) one = check_variant(k_variants[v], NULL, one);
    al_threadpool *pool = NULL;
    al_error err;
    CHECK(al_threadpool_new(3, &pool, &err) == AL_OK);
    for (int v = 0; v < N_VARIANTS; v++) three = check_variant(k_variants[v], pool, three);
    al_threadpool_free(pool);
    CHECK_MSG(one == three, "3 threads give other bits: %016llx, 1 thread %016llx", (unsigned long long)three,
              (unsigned long long)one);
    check_forward_refusals();
    check_ops();
    printf("similarity within %.3g of float64 (bound 1e-5); losses within %.3g relative (bound 1e-5)\n", g_sim, g_loss);
    CHECK(g_sim <= 1e-5 && g_loss <= 1e-5);
    printf("digest %016llx\n", (unsigned long long)one);
    CHECK_MSG(one == PINNED_DIGEST, "digest %016llx, pinned %016llx", (unsigned long long)one,
              (unsigned long long)PINNED_DIGEST);
    return check_summary("decoder_layers");
}
