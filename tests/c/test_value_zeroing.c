/* test_value_zeroing.c: value zeroing (src/methods/value_zeroing.c) against the float64 PyTorch reference
 * of tests/golden/make_value_zeroing.py on the golden BERT model's padded batch (distances and row-normalised
 * maps within 1e-5), padding rows and columns exactly 0, normalised rows summing to 1, the same bits on 1 and
 * 3 threads, and head policies refused. */
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "core/threadpool.h"
#include "golden_file.h"
#include "methods/value_zeroing.h"

#define TOL 1e-5

int main(void) {
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
