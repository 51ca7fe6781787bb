/* test_value_zeroing.c: value zeroing (src/methods/measures/value_zeroing.c) against the float64 PyTorch reference
 * of tests/golden/make_value_zeroing.py on the golden BERT model's padded batch (distances and row-normalised
 * maps within 1e-5), padding rows and columns exactly 0, normalised rows summing to 1, the same bits on 1 and
 * 3 threads, and head policies refused. */
#include <stdio.h>
#include <math.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "core/threadpool.h"
#include "cJSON.h"
#include "golden_file.h"
#include "read_file.h"
#include "methods/measures/value_zeroing.h"

#define TOL 1e-5

/* The other families' golden models against tests/golden/FAMILY/measures.safetensors (make_family_measures.py:
 * the reference reruns each layer's tail in float64 from the golden pass's layer inputs; here the whole
 * computation runs on this core's float32 forward). */
static void check_family(const char *family) {
    char path[256];
    golden_file g, ref;
    al_model *m = NULL;
    al_error err;
    snprintf(path, sizeof path, "tests/golden/%s", family);
    CHECK_MSG(al_model_load_dir(path, &m, &err) == AL_OK, "%s: %s", family, err.message);
    snprintf(path, sizeof path, "tests/golden/%s/golden.safetensors", family);
    const int has_g = golden_open(&g, path);
    snprintf(path, sizeof path, "tests/golden/%s/measures.safetensors", family);
    const int has_ref = golden_open(&ref, path);
    CHECK(m && has_g && has_ref);
    if (m && has_g && has_ref) {
        int64_t shape[4] = {0};
        free(golden_f32(&g, "input_ids", NULL, shape));
        const int B = (int)shape[0], L = (int)shape[1], NL = al_model_config(m)->n_layers;
        int32_t *ids = golden_i32(&g, "input_ids"), *mask = golden_i32(&g, "attention_mask"), *types = golden_i32(&g, "token_type_ids");
        al_batch batch = {B, L, ids, mask, types, NULL};
        const size_t n = (size_t)B * NL * L * L;
        float *dist = malloc(n * sizeof(float)), *norm = malloc(n * sizeof(float));
        CHECK_MSG(al_value_zeroing(m, &batch, NULL, dist, norm, &err) == AL_OK, "%s: %s", family, err.message);
        size_t n_ref = 0;
        float *want = golden_f32(&ref, "vz_distances", &n_ref, NULL), *want_norm = golden_f32(&ref, "vz_normalized", NULL, NULL);
        CHECK(want && want_norm && n_ref == n);
        if (want && want_norm && n_ref == n) {
            const double e = max_abs_diff(dist, want, n), en = max_abs_diff(norm, want_norm, n);
            double biggest = 0.0;
            for (size_t i = 0; i < n; i++) biggest = want[i] > biggest ? want[i] : biggest;
            printf("%s: value zeroing vs float64 reference: distances max abs err %.2e (largest %.3f), normalised %.2e\n",
                   family, e, biggest, en);
            CHECK_MSG(e <= TOL, "%s: distances err %.3g", family, e);
            CHECK_MSG(en <= TOL, "%s: normalised err %.3g", family, en);
        }
        free(want), free(want_norm), free(dist), free(norm), free(ids), free(mask), free(types);
    }
    if (has_g) golden_close(&g);
    if (has_ref) golden_close(&ref);
    al_model_free(m);
}

/* A float32 tensor's data inside a safetensors buffer (NULL when absent or not F32). */
static float *tensor_in(uint8_t *buf, size_t size, const char *name) {
    uint64_t n = 0;
    memcpy(&n, buf, 8);
    if (n + 8 > size) return NULL;
    cJSON *h = cJSON_ParseWithLength((const char *)buf + 8, (size_t)n);
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(h, name);
    const cJSON *dt = cJSON_GetObjectItemCaseSensitive(t, "dtype"), *off = cJSON_GetObjectItemCaseSensitive(t, "data_offsets");
    float *at = NULL;
    if (cJSON_IsString(dt) && !strcmp(dt->valuestring, "F32") && cJSON_GetArraySize(off) == 2)
        at = (float *)(buf + 8 + n + (size_t)cJSON_GetArrayItem(off, 0)->valuedouble);
    cJSON_Delete(h);
    return at;
}

/* Zeroing a token that no query attends to changes nothing. The golden BERT's weights are altered so that
 * in layer 0 every query's attention to one token is exactly 0 (its key pushed 1e3 times a LayerNorm-ed
 * spike away from every other key: the softmax underflows to 0): that token's column of layer 0's distances
 * is 0 up to the rounding of the cosine of two equal vectors, while the other columns are not. */
static void check_unattended_token(void) {
    size_t size = 0, csize = 0;
    uint8_t *buf = read_file("tests/golden/bert/model.safetensors", &size);
    uint8_t *cfg = read_file("tests/golden/bert/config.json", &csize);
    golden_file g;
    CHECK(buf && cfg && golden_open(&g, "tests/golden/bert/golden.safetensors"));
    if (!buf || !cfg || !g.buf) return;
    int64_t shape[4] = {0};
    free(golden_f32(&g, "input_ids", NULL, shape));
    const int L = (int)shape[1], D = 32, j = 2;
    int32_t *ids = golden_i32(&g, "input_ids"), *types = golden_i32(&g, "token_type_ids");
    float *emb = tensor_in(buf, size, "bert.embeddings.word_embeddings.weight");
    float *gamma = tensor_in(buf, size, "bert.embeddings.LayerNorm.weight");
    float *qw = tensor_in(buf, size, "bert.encoder.layer.0.attention.self.query.weight");
    float *qb = tensor_in(buf, size, "bert.encoder.layer.0.attention.self.query.bias");
    float *kw = tensor_in(buf, size, "bert.encoder.layer.0.attention.self.key.weight");
    float *kb = tensor_in(buf, size, "bert.encoder.layer.0.attention.self.key.bias");
    CHECK(emb && gamma && qw && qb && kw && kb && ids);
    if (emb && gamma && qw && qb && kw && kb && ids) {
        int f = 0; /* the feature the LayerNorm scales most, so the spike survives it */
        for (int d = 1; d < D; d++) f = fabsf(gamma[d]) > fabsf(gamma[f]) ? d : f;
        const int token = ids[j]; /* example 0, position j: a real token */
        for (int d = 0; d < D; d++) emb[(size_t)token * D + d] = d == f ? 1000.0f : 0.0f;
        /* queries all ones; every key row reads feature f, signed so the spiked token scores lowest */
        const float sgn = gamma[f] > 0 ? -1.0f : 1.0f;
        for (int r = 0; r < D; r++) {
            qb[r] = 1.0f, kb[r] = 0.0f;
            for (int c = 0; c < D; c++) qw[(size_t)r * D + c] = 0.0f, kw[(size_t)r * D + c] = c == f ? 1000.0f * sgn : 0.0f;
        }
        al_fileset *fs = al_fileset_new();
        al_model *m = NULL;
        al_error err;
        CHECK(fs && al_fileset_add(fs, "model.safetensors", buf, size, 1, &err) == AL_OK &&
              al_fileset_add(fs, "config.json", cfg, csize, 1, &err) == AL_OK && al_model_load(fs, &m, &err) == AL_OK);
        int32_t *mask = golden_i32(&g, "attention_mask");
        int n = 0; /* example 0 alone, its real tokens */
        while (mask && n < L && mask[n]) n++;
        al_batch b = {1, n, ids, NULL, types, NULL};
        const int NL = m ? al_model_config(m)->n_layers : 0, H = 4;
        float *att = malloc(sizeof(float) * (size_t)NL * H * n * n), *dist = malloc(sizeof(float) * (size_t)NL * n * n);
        al_forward_outputs out = {0};
        out.attentions = att;
        al_forward_params fp = al_forward_default_params();
        CHECK(m && al_forward(m, &b, &fp, &out, &err) == AL_OK);
        CHECK(m && al_value_zeroing(m, &b, NULL, dist, NULL, &err) == AL_OK);
        if (m) {
            int unattended = 1;
            double col = 0.0, other = 0.0;
            for (int h = 0; h < H; h++) /* layer 0: no query attends to a position holding the token */
                for (int i = 0; i < n; i++)
                    for (int t = 0; t < n; t++)
                        if (ids[t] == token && att[((size_t)h * n + i) * n + t] != 0.0f) unattended = 0;
            for (int i = 0; i < n; i++)
                for (int t = 0; t < n; t++) {
                    const double d = fabs(dist[(size_t)i * n + t]);
                    if (ids[t] == token) col = fmax(col, d);
                    else other = fmax(other, d);
                }
            printf("unattended token (id %d): layer 0 attention to it exactly 0: %s; its distances at most %.2g "
                   "(the others' up to %.2g)\n", token, unattended ? "yes" : "no", col, other);
            CHECK(unattended);
            CHECK_MSG(col <= 2.4e-7, "zeroing an unattended token moved the outputs by %.3g", col);
            CHECK(other > 1e-4);
        }
        free(att), free(dist), free(mask);
        al_model_free(m);
        al_fileset_free(fs);
    }
    free(ids), free(types), free(buf), free(cfg);
    golden_close(&g);
}

int main(void) {
    check_unattended_token();
    static const char *const families[] = {"roberta", "distilbert", "electra", "deberta_v3", "modernbert"};
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) check_family(families[i]);
    golden_file g, ref;
    al_model *m = NULL;
    al_error err;
    CHECK_MSG(al_model_load_dir("tests/golden/bert", &m, &err) == AL_OK, "%s", err.message);
    CHECK(golden_open(&g, "tests/golden/bert/golden.safetensors"));
    CHECK(golden_open(&ref, "tests/golden/bert_value_zeroing.safetensors"));
    if (!m || !g.buf || !ref.buf) return check_summary("value_zeroing");
    int64_t shape[4] = {0};
    size_t n_ids = 0;
    float *ids_f = golden_f32(&g, "input_ids", &n_ids, shape);
    free(ids_f);
    const int B = (int)shape[0], L = (int)shape[1], NL = al_model_config(m)->n_layers;
    int32_t *ids = golden_i32(&g, "input_ids"), *mask = golden_i32(&g, "attention_mask"), *types = golden_i32(&g, "token_type_ids");
    al_batch batch = {B, L, ids, mask, types, NULL};
    const size_t n = (size_t)B * NL * L * L;
    float *dist = malloc(n * sizeof(float)), *norm = malloc(n * sizeof(float));
    float *dist3 = malloc(n * sizeof(float)), *norm3 = malloc(n * sizeof(float));
    CHECK_MSG(al_value_zeroing(m, &batch, NULL, dist, norm, &err) == AL_OK, "%s", err.message);
    size_t n_ref = 0;
    float *want = golden_f32(&ref, "distances", &n_ref, NULL), *want_norm = golden_f32(&ref, "normalized", NULL, NULL);
    CHECK(want && want_norm && n_ref == n);
    if (want && want_norm && n_ref == n) {
        const double e = max_abs_diff(dist, want, n), en = max_abs_diff(norm, want_norm, n);
        double biggest = 0.0;
        for (size_t i = 0; i < n; i++) biggest = want[i] > biggest ? want[i] : biggest;
        printf("value zeroing vs float64 reference: distances max abs err %.2e (largest distance %.3f), "
               "normalised max abs err %.2e\n", e, biggest, en);
        CHECK_MSG(e <= TOL, "distances err %.3g", e);
        CHECK_MSG(en <= TOL, "normalised err %.3g", en);
    }
    /* padding rows and columns are 0; real rows of the normalised map sum to 1 */
    int pad_zero = 1, sums_one = 1;
    for (int b = 0; b < B; b++)
        for (int l = 0; l < NL; l++)
            for (int i = 0; i < L; i++) {
                double s = 0.0;
                for (int j = 0; j < L; j++) {
                    const size_t at = (((size_t)b * NL + l) * L + i) * L + j;
                    if ((!mask[b * L + i] || !mask[b * L + j]) && (dist[at] != 0.0f || norm[at] != 0.0f)) pad_zero = 0;
                    s += norm[at];
                }
                if (mask[b * L + i] && fabs(s - 1.0) > 1e-6) sums_one = 0;
            }
    CHECK(pad_zero);
    CHECK(sums_one);
    /* the same bits on 3 threads */
    al_threadpool *pool = NULL;
    CHECK(al_threadpool_new(3, &pool, &err) == AL_OK);
    al_threadpool_split_all(pool, 1);
    al_forward_params fp = al_forward_default_params();
    fp.pool = pool;
    CHECK(al_value_zeroing(m, &batch, &fp, dist3, norm3, &err) == AL_OK);
    CHECK(memcmp(dist, dist3, n * sizeof(float)) == 0 && memcmp(norm, norm3, n * sizeof(float)) == 0);
    printf("1 and %d threads: %s\n", al_threadpool_size(pool), memcmp(dist, dist3, n * sizeof(float)) ? "differ" : "same bits");
    al_threadpool_free(pool);
    /* a cancel flag stops it with CANCELLED */
    volatile int cancel = 1;
    fp = al_forward_default_params();
    fp.cancel = &cancel;
    CHECK(al_value_zeroing(m, &batch, &fp, dist3, NULL, &err) == AL_ERR_CANCELLED);
    /* head policies are refused: the measure is of the model as it is */
    al_head_policy pol[64];
    memset(pol, 0, sizeof pol);
    fp = al_forward_default_params();
    fp.policies = pol;
    CHECK(al_value_zeroing(m, &batch, &fp, dist3, NULL, &err) == AL_ERR_INVALID && strstr(err.message, "policies"));
    free(want), free(want_norm), free(dist), free(norm), free(dist3), free(norm3), free(ids), free(mask), free(types);
    golden_close(&g);
    golden_close(&ref);
    al_model_free(m);
    return check_summary("value_zeroing");
}
