/* test_decoder_heads.c: the head statistics and gradient head importance of causal language models (docs/measures.md
 * "Causal decoders", docs/importance.md "Causal language models") against tests/golden/make_decoder_heads.py's float64
 * references on the random decoder checkpoints of tests/golden/decoders:
 *   - al_causal_head_stats_example on all 8 (GPT-2, Llama, Qwen2, GPT-NeoX), from the golden's own attentions and
 *     through attnlab's forward, with the reference's key classes and an all-ones constant (which a causal head
 *     reads as the uniform row over the keys it sees);
 *   - al_head_importance_measure with the language-model loss on all 8: the mean |dL/dxi|, the signed mean and the
 *     mean loss, the same bits on 1 and 3 threads;
 *   - the ops on the tiny GPT-2 of tests/fixtures/decoder_tiny_gpt2 (a real tokenizer) over the pos task, and their
 *     refusals naming the field (a pair task, a loss other than 'lm', 'lm' on an encoder; head_agreement over a
 *     task, which on a decoder reads a corpus: tests/c/test_decoder_agreement.c).
 * The numbers' digest is pinned: the same bits natively and in WebAssembly. */
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
#include "methods/measures/head_importance.h"
#include "methods/measures/measures.h"
#include "methods/papa/papa.h"

static const char *const k_variants[] = {"gpt2",   "gpt2_prefixed", "llama_gqa", "llama_untied",
                                         "qwen2",  "qwen2_window",  "pythia",    "pythia_sequential"};
#define N_VARIANTS (int)(sizeof k_variants / sizeof k_variants[0])
#define PINNED_DIGEST 0x30b72efcb1884222ull /* the statistics through the forward and the importance, every golden */
/* the importance of Llama, Qwen2 and GPT-NeoX (their gradients run since the decoders' backward was built) */
#define PINNED_DIGEST_ROTARY 0x9d425d29140cea5cull

static uint64_t g_digest = FNV_DIGEST_START;
static uint64_t g_digest_rotary = FNV_DIGEST_START; /* the rotary decoders' importance */
static double g_stats_ref, g_stats_fwd, g_imp_raw, g_imp_signed, g_imp_loss;

static void worst(double *w, double e) {
    if (e > *w || e != e) *w = e;
}

/* A float64 tensor of the reference file (NULL when absent). */
/* The reference's key classes: [CLS] the first real token, [SEP] the last, punctuation the ids % 7 == 3. */
static void test_classes(const int32_t *ids, const int32_t *mask, int L, uint8_t *classes) {
    int n = 0;
    for (int t = 0; t < L; t++) n += mask[t] != 0;
    for (int t = 0; t < L; t++) classes[t] = t < n && ids[t] % 7 == 3 ? AL_KEY_PUNCT : 0;
    classes[0] |= AL_KEY_CLS;
    classes[n - 1] |= AL_KEY_SEP;
}

/* Every example's statistics from attentions [NL, B, H, L, L] into out [B, NL, H, AL_HS_N]. */
static void stats_of(const al_config *c, const float *attn, const int32_t *ids, const int32_t *mask, int B, int L,
                     const float *C, double *out) {
    const int NL = c->n_layers, H = c->n_heads;
    const float *maps[64];
    float *scratch = malloc(sizeof(float) * (size_t)L * L);
    uint8_t classes[64];
    for (int b = 0; b < B; b++) {
        for (int l = 0; l < NL; l++) maps[l] = attn + ((size_t)l * B + b) * H * L * L;
        test_classes(ids + (size_t)b * L, mask + (size_t)b * L, L, classes);
        al_causal_head_stats_example(maps, NL, H, L, mask + (size_t)b * L, classes, C, AL_CONFIDENCE_MAX, scratch,
                                     out + (size_t)b * NL * H * AL_HS_N);
    }
    free(scratch);
}

static double max_diff(const double *a, const double *b, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++) worst(&m, fabs(a[i] - b[i]));
    return m;
}

static void check_importance(const char *dir, al_model *m, const golden_file *ref, const int32_t *ids,
                             const int32_t *mask, int B, int L) {
    const al_config *c = al_model_config(m);
    const int NH = c->n_layers * c->n_heads;
    int32_t *types = calloc((size_t)B * L, sizeof(int32_t)), labels[8] = {0};
    al_papa_inputs in = {B, L, 0, (int32_t *)ids, (int32_t *)mask, types, labels, NULL, 0};
    al_head_importance one = {0}, three = {0};
    al_error err = {0};
    al_status st = al_head_importance_measure(m, &in, AL_IMPORTANCE_LM, NULL, NULL, &one, &err);
    const int gpt2 = strncmp(dir, "gpt2", 4) == 0;
    CHECK_MSG(st == AL_OK && one.n_examples == B, "%s: %s", dir, err.message);
    const double *grads = golden_f64_in(ref, "grads", (size_t)B * NH), *losses = golden_f64_in(ref, "losses", (size_t)B);
    CHECK_MSG(grads && losses, "%s: heads.safetensors lacks grads or losses", dir);
    if (st == AL_OK && grads && losses) {
        double top = 0.0, raw_err = 0.0, signed_err = 0.0, loss = 0.0;
        for (int h = 0; h < NH; h++) {
            double raw = 0.0, sgn = 0.0;
            for (int b = 0; b < B; b++) raw += fabs(grads[(size_t)b * NH + h]), sgn += grads[(size_t)b * NH + h];
            worst(&top, raw / B);
            worst(&raw_err, fabs(one.raw[h] - raw / B));
            worst(&signed_err, fabs(one.signed_sum[h] - sgn / B));
        }
        for (int b = 0; b < B; b++) loss += losses[b] / B;
        worst(&g_imp_raw, raw_err / top);
        worst(&g_imp_signed, signed_err / top);
        worst(&g_imp_loss, fabs(one.mean_loss - loss) / loss);
        al_threadpool *pool = NULL;
        CHECK(al_threadpool_new(3, &pool, &err) == AL_OK);
        al_forward_params fp = al_forward_default_params();
        fp.pool = pool;
        CHECK_MSG(al_head_importance_measure(m, &in, AL_IMPORTANCE_LM, NULL, &fp, &three, &err) == AL_OK &&
                      !memcmp(one.raw, three.raw, sizeof(double) * NH) &&
                      !memcmp(one.signed_sum, three.signed_sum, sizeof(double) * NH) && one.mean_loss == three.mean_loss,
                  "%s: 3 threads give other bits (%s)", dir, err.message);
        al_threadpool_free(pool);
        uint64_t *digest = gpt2 ? &g_digest : &g_digest_rotary;
        *digest = fnv_digest(*digest, (const float *)one.raw, 2 * (size_t)NH);
        *digest = fnv_digest(*digest, (const float *)one.signed_sum, 2 * (size_t)NH);
    }
    al_head_importance_free(&one);
    al_head_importance_free(&three);
    free(types);
}

static void check_variant(const char *dir) {
    char path[256];
    al_model *m = NULL;
    al_error err = {0};
    snprintf(path, sizeof path, "tests/golden/decoders/%s", dir);
    CHECK_MSG(al_model_load_dir(path, &m, &err) == AL_OK, "%s: %s", dir, err.message);
    golden_file g, ref;
    snprintf(path, sizeof path, "tests/golden/decoders/%s/golden.safetensors", dir);
    const int have_g = golden_open(&g, path);
    snprintf(path, sizeof path, "tests/golden/decoders/%s/heads.safetensors", dir);
    const int have_ref = golden_open(&ref, path);
    CHECK_MSG(m && have_g && have_ref, "%s: model or golden files missing", dir);
    if (!m || !have_g || !have_ref) {
        if (have_g) golden_close(&g);
        if (have_ref) golden_close(&ref);
        al_model_free(m);
        return;
    }
    const al_config *c = al_model_config(m);
    int64_t shape[4] = {0};
    free(golden_f32(&g, "input_ids", NULL, shape));
    const int B = (int)shape[0], L = (int)shape[1], NL = c->n_layers, H = c->n_heads;
    int32_t *ids = golden_i32(&g, "input_ids"), *mask = golden_i32(&g, "attention_mask");
    const size_t n_attn = (size_t)NL * B * H * L * L, n_stats = (size_t)B * NL * H * AL_HS_N;
    float *g_attn = golden_f32(&g, "attentions", NULL, NULL), *attn = malloc(sizeof(float) * n_attn);
    float *C = malloc(sizeof(float) * (size_t)NL * H * L * L);
    for (size_t i = 0; i < (size_t)NL * H * L * L; i++) C[i] = 1.0f;
    double *on_ref = malloc(sizeof(double) * n_stats), *on_fwd = malloc(sizeof(double) * n_stats);
    const double *want = golden_f64_in(&ref, "stats", n_stats);
    al_batch batch = {B, L, ids, mask, NULL, NULL};
    al_forward_outputs o = {0};
    o.attentions = attn;
    CHECK_MSG(want && g_attn && al_forward(m, &batch, NULL, &o, &err) == AL_OK, "%s: %s", dir, err.message);
    if (want && g_attn) {
        stats_of(c, g_attn, ids, mask, B, L, C, on_ref);
        stats_of(c, attn, ids, mask, B, L, C, on_fwd);
        const double e_ref = max_diff(on_ref, want, n_stats), e_fwd = max_diff(on_fwd, want, n_stats);
        worst(&g_stats_ref, e_ref);
        worst(&g_stats_fwd, e_fwd);
        printf("%-18s statistics against float64: %.3g on its attentions, %.3g through the forward\n", dir, e_ref, e_fwd);
        g_digest = fnv_digest(g_digest, (const float *)on_fwd, 2 * n_stats);
    }
    check_importance(dir, m, &ref, ids, mask, B, L);
    free(ids), free(mask), free(g_attn), free(attn), free(C), free(on_ref), free(on_fwd);
    golden_close(&g);
    golden_close(&ref);
    al_model_free(m);
}

static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* The ops through the JSON API, on the tiny GPT-2 with a real tokenizer, and their refusals. */
static void check_ops(void) {
    al_session *s = al_session_new();
    al_reply reply;
    cJSON *r = run(s, "{\"op\":\"load_model\",\"model\":\"m\",\"path\":\"tests/fixtures/decoder_tiny_gpt2\"}", AL_OK, &reply);
    cJSON_Delete(r);
    al_reply_free(&reply);
    r = run(s, "{\"op\":\"head_stats\",\"model\":\"m\",\"task\":\"pos\",\"max_train\":24,\"max_validation\":12}", AL_OK,
            &reply);
    const cJSON *entropy = item(item(r, "stats"), "entropy"), *js = item(item(r, "stats"), "js");
    int in_range = cJSON_GetArraySize(entropy) == 2;
    for (int l = 0; l < 2 && in_range; l++)
        for (int h = 0; h < 4; h++) {
            const double e = cJSON_GetArrayItem(cJSON_GetArrayItem(entropy, l), h)->valuedouble;
            const double d = cJSON_GetArrayItem(cJSON_GetArrayItem(js, l), h)->valuedouble;
            in_range &= e > 0.0 && e <= 1.0 && d >= 0.0 && d <= log(2.0);
        }
    CHECK_MSG(in_range && cJSON_GetStringValue(item(r, "row_rule")) &&
                  !strcmp(cJSON_GetStringValue(item(item(r, "config"), "layout")), "right_pad") &&
                  item(r, "n_examples")->valuedouble == 12,
              "head_stats on a decoder: %.400s", reply.json);
    cJSON_Delete(r);
    al_reply_free(&reply);
    r = run(s, "{\"op\":\"head_importance\",\"model\":\"m\",\"task\":\"pos\",\"max_train\":24,\"max_examples\":6}", AL_OK,
            &reply);
    CHECK_MSG(!strcmp(cJSON_GetStringValue(item(r, "loss")), "lm") && item(r, "n_examples")->valuedouble == 6 &&
                  cJSON_GetArraySize(item(r, "order")) == 8 && item(r, "mean_loss")->valuedouble > 0.0,
              "head_importance on a decoder: %.400s", reply.json);
    cJSON_Delete(r);
    al_reply_free(&reply);
    expect_error(s, "{\"op\":\"head_importance\",\"model\":\"m\",\"task\":\"order\",\"L\":32,\"max_train\":4}", "field 'task'");
    expect_error(s, "{\"op\":\"head_stats\",\"model\":\"m\",\"task\":\"order\",\"L\":32,\"max_train\":4}", "field 'task'");
    expect_error(s, "{\"op\":\"head_importance\",\"model\":\"m\",\"task\":\"pos\",\"loss\":\"probe\"}", "field 'loss'");
    expect_error(s, "{\"op\":\"head_importance\",\"model\":\"m\",\"task\":\"pos\",\"loss\":\"mlm\"}", "field 'loss'");
    r = run(s, "{\"op\":\"head_agreement\",\"model\":\"m\",\"task\":\"pos\"}", AL_ERR_UNSUPPORTED, &reply);
    const char *why = cJSON_GetStringValue(item(item(r, "error"), "message"));
    CHECK_MSG(why && strstr(why, "field 'model'"), "head_agreement on a decoder: %s", why ? why : "(none)");
    cJSON_Delete(r);
    al_reply_free(&reply);
    r = run(s, "{\"op\":\"load_model\",\"model\":\"bert\",\"path\":\"tests/golden/bert\"}", AL_OK, &reply);
    cJSON_Delete(r);
    al_reply_free(&reply);
    expect_error(s, "{\"op\":\"head_importance\",\"model\":\"bert\",\"task\":\"pos\",\"loss\":\"lm\"}", "field 'loss'");
    al_session_free(s);
}

int main(void) {
    for (int v = 0; v < N_VARIANTS; v++) check_variant(k_variants[v]);
    check_ops();
    printf("statistics: %.3g on the reference's attentions (bound 1e-6), %.3g through the forward (bound 5e-6)\n",
           g_stats_ref, g_stats_fwd);
    printf("LM importance against float64, relative to the largest score: mean |dL/dxi| %.3g, signed %.3g; mean loss "
           "%.3g (bound 1e-4)\n", g_imp_raw, g_imp_signed, g_imp_loss);
    CHECK(g_stats_ref <= 1e-6 && g_stats_fwd <= 5e-6);
    CHECK(g_imp_raw <= 1e-4 && g_imp_signed <= 1e-4 && g_imp_loss <= 1e-4);
    printf("digest %016llx\n", (unsigned long long)g_digest);
    CHECK_MSG(g_digest == PINNED_DIGEST, "digest %016llx, pinned %016llx", (unsigned long long)g_digest,
              (unsigned long long)PINNED_DIGEST);
    printf("rotary decoders' importance digest %016llx\n", (unsigned long long)g_digest_rotary);
    CHECK_MSG(g_digest_rotary == PINNED_DIGEST_ROTARY, "rotary decoders' digest %016llx, pinned %016llx",
              (unsigned long long)g_digest_rotary, (unsigned long long)PINNED_DIGEST_ROTARY);
    return check_summary("decoder_heads");
}
