/* test_measures.c: norm-based attention, attention rollout and head statistics (src/methods/measures/measures.h,
 * docs/measures.md) against the float64 PyTorch reference tests/golden/bert/measures.safetensors
 * (tests/golden/make_measures_golden.py), twice: on the reference's own layer inputs, attentions and values
 * (golden.safetensors, float64 rounded once), and on this core's forward pass. Then the invariants: rollout
 * rows sum to 1, norm-based attention with W_O the identity is alpha times the value norms, the residual
 * and LayerNorm variant differs from the plain one, JS in [0, ln 2], entropy in [0, ln n], confidence in
 * [1/n, 1]; and the ops: replies, digests repeatable, bad fields named. Prints the worst errors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "session_request.h"
#include "golden_file.h"
#include "methods/measures/measures.h"
#include "methods/papa/papa.h"
#include "model/layer_rule.h"

#define MODEL_DIR "tests/golden/bert"

/* Bounds of docs/measures.md: norm-based within 1e-5, rollout within 1e-6, statistics within 1e-6. */
#define TOL_NORM 1e-5
#define TOL_ROLLOUT 1e-6
#define TOL_STATS 1e-6

typedef struct inputs {
    int NL, B, H, L, D, dh;
    const int32_t *mask;
    const float *hidden, *attn, *values; /* [NL+1,B,L,D], [NL,B,H,L,L], [NL,B,H,L,dh] */
} inputs;

static double worst(const float *a, const float *b, size_t n) { return max_abs_diff(a, b, n); }

/* own_forward: the inputs come from this core's float32 forward, whose own rounding (up to ~1e-6 of the
 * largest value, docs/measures.md) then dominates: norm-based maps within 2e-6 of their largest value,
 * statistics within 5e-6; the rollout bound holds as it is. */
static void check_against(const char *label, const al_model *model, const inputs *in, const golden_file *ref,
                          int own_forward) {
    const int NL = in->NL, B = in->B, H = in->H, L = in->L, D = in->D, dh = in->dh;
    const size_t LL = (size_t)L * L;
    float *heads = calloc((size_t)NL * B * H * LL, sizeof(float)), *layer = calloc((size_t)NL * B * LL, sizeof(float));
    float *res = calloc((size_t)NL * B * LL, sizeof(float));
    float *eff = malloc(sizeof(float) * (size_t)NL * B * H * LL);
    float *roll[3] = {malloc(sizeof(float) * (size_t)NL * B * LL), malloc(sizeof(float) * (size_t)NL * B * LL),
                      malloc(sizeof(float) * (size_t)NL * B * LL)};
    float *one = malloc(sizeof(float) * (size_t)NL * LL);
    al_error err = {0};
    const int post_ln = al_layer_rule_of(al_model_config(model))->res_ln;
    for (int l = 0; l < NL; l++)
        for (int b = 0; b < B; b++) {
            const size_t eb = (size_t)l * B + b;
            /* the residual + LayerNorm variant is a post-LN layer's (ModernBERT's pre-norm layers refuse it) */
            al_norm_outputs o = {heads + eb * H * LL, layer + eb * LL, post_ln ? res + eb * LL : NULL, NULL};
            CHECK(al_norm_attention_layer(model, l, in->hidden + eb * L * D, in->attn + eb * H * LL,
                                          in->values + eb * H * L * dh, in->mask + (size_t)b * L, L, &o, &err) == AL_OK);
        }
    /* effective attention per layer (exact mode), as the rollout op gets it from the batch runner */
    CHECK(al_effective_attention(al_model_config(model), in->attn, in->values, in->mask, B, L, AL_EFFECTIVE_EXACT, eff,
                                 NULL, &err) == AL_OK);
    const float *srcs[3] = {in->attn, eff, heads};
    for (int s = 0; s < 3; s++)
        for (int b = 0; b < B; b++) {
            const float *maps[16];
            for (int l = 0; l < NL; l++) maps[l] = srcs[s] + ((size_t)l * B + b) * H * LL;
            CHECK(al_rollout(maps, NL, H, L, in->mask + (size_t)b * L, s == 2, one, &err) == AL_OK);
            for (int l = 0; l < NL; l++) memcpy(roll[s] + ((size_t)l * B + b) * LL, one + (size_t)l * LL, sizeof(float) * LL);
        }
    static const char *const names[6] = {"norm_attentions", "layer_norms", "res_ln_norms", "rollout_raw",
                                         "rollout_effective", "rollout_norm"};
    const float *mine[6] = {heads, layer, res, roll[0], roll[1], roll[2]};
    const size_t counts[6] = {(size_t)NL * B * H * LL, (size_t)NL * B * LL, (size_t)NL * B * LL, (size_t)NL * B * LL,
                              (size_t)NL * B * LL, (size_t)NL * B * LL};
    for (int k = 0; k < 6; k++) {
        if (k == 2 && !post_ln) continue;
        size_t n = 0;
        float *r = golden_f32(ref, names[k], &n, NULL);
        CHECK_MSG(r && n == counts[k], "%s: reference tensor %s", label, names[k]);
        if (!r || n != counts[k]) {
            free(r);
            continue;
        }
        double big = 0.0;
        for (size_t i = 0; i < n; i++) big = fmax(big, fabs(r[i]));
        const double e = worst(mine[k], r, n);
        /* through this core's own forward the inputs carry its error against float64 too: 2e-6 of the largest
         * value for the post-LN families, 1e-5 for ModernBERT, whose hidden states are 10 times further from the
         * reference (3.2e-5 against 3.6e-6 at most; README) */
        const double tol = k >= 3 ? TOL_ROLLOUT : own_forward ? (post_ln ? 2e-6 : 1e-5) * big : TOL_NORM;
        printf("%s: %-18s max |error| %.3g (largest value %.3g, bound %g)\n", label, names[k], e, big, tol);
        CHECK_MSG(e <= tol, "%s: %s max error %.3g > %g", label, names[k], e, tol);
        free(r);
    }
    /* head statistics: PAPA's masked average of these three examples as the constant */
    al_papa_sums sums;
    float *C = malloc(sizeof(float) * (size_t)NL * H * LL), *scratch = malloc(sizeof(float) * LL);
    CHECK(al_papa_sums_init(&sums, NL, H, L, &err) == AL_OK);
    al_papa_sums_add(&sums, in->attn, in->mask, B);
    al_papa_sums_average(&sums, C);
    al_papa_sums_free(&sums);
    size_t n = 0;
    float *rc = golden_f32(ref, "constants", &n, NULL);
    if (rc) printf("%s: %-18s max |error| %.3g\n", label, "constants", worst(C, rc, n));
    float *rs = golden_f32(ref, "head_stats", &n, NULL);
    CHECK(rs && n == (size_t)B * NL * H * AL_HS_N);
    double *st = malloc(sizeof(double) * (size_t)NL * H * AL_HS_N);
    uint8_t classes[64];
    double e_stats[AL_HS_N] = {0};
    for (int b = 0; rs && b < B; b++) {
        const float *maps[16];
        for (int l = 0; l < NL; l++) maps[l] = in->attn + ((size_t)l * B + b) * H * LL;
        al_key_classes(NULL, NULL, in->mask + (size_t)b * L, L, classes);
        al_head_stats_example(maps, NL, H, L, in->mask + (size_t)b * L, classes, C, scratch, st);
        for (int i = 0; i < NL * H * AL_HS_N; i++) {
            const double e = fabs(st[i] - rs[(size_t)b * NL * H * AL_HS_N + i]);
            if (e > e_stats[i % AL_HS_N] || e != e) e_stats[i % AL_HS_N] = e;
        }
    }
    const double tol_stats = own_forward ? 5e-6 : TOL_STATS;
    for (int k = 0; k < AL_HS_N; k++) {
        printf("%s: head stat %-10s max |error| %.3g (bound %g)\n", label, al_head_stat_names[k], e_stats[k], tol_stats);
        CHECK_MSG(e_stats[k] <= tol_stats, "%s: %s max error %.3g", label, al_head_stat_names[k], e_stats[k]);
    }
    /* invariants on these inputs */
    double row_err = 0.0, ident_err = 0.0, res_gap = 0.0;
    for (int s = 0; s < 3; s++)
        for (size_t lb = 0; lb < (size_t)NL * B; lb++) {
            const int b = (int)(lb % B);
            for (int i = 0; i < L; i++) {
                if (!in->mask[(size_t)b * L + i]) continue;
                double sum = 0.0;
                for (int j = 0; j < L; j++) sum += roll[s][lb * LL + (size_t)i * L + j];
                row_err = fmax(row_err, fabs(sum - 1.0));
            }
        }
    printf("%s: rollout rows sum to 1 within %.3g\n", label, row_err);
    CHECK(row_err < 1e-6);
    for (size_t i = 0; post_ln && i < (size_t)NL * B * LL; i++) res_gap = fmax(res_gap, fabs(res[i] - layer[i]));
    CHECK_MSG(!post_ln || res_gap > 1e-3, "the residual and LayerNorm change the map (gap %.3g)", res_gap);
    /* W_O = I: f_h(x_j) is v_j^h in the head's coordinates, so the map is alpha_ij ||v_j^h|| */
    float *eye = calloc((size_t)D * D, sizeof(float)), *zero = calloc((size_t)D, sizeof(float));
    for (int r = 0; r < D; r++) eye[(size_t)r * D + r] = 1.0f;
    float *hmap = malloc(sizeof(float) * H * LL);
    for (int b = 0; b < B; b++) {
        al_norm_outputs o = {hmap, NULL, NULL, NULL};
        const size_t eb = (size_t)b; /* layer 0 */
        CHECK(al_norm_attention_weights(eye, zero, NULL, 1e-12f, D, H, in->hidden + eb * L * D, in->attn + eb * H * LL,
                                        in->values + eb * H * L * dh, in->mask + (size_t)b * L, L, &o, &err) == AL_OK);
        for (int h = 0; h < H; h++)
            for (int i = 0; i < L; i++)
                for (int j = 0; j < L; j++) {
                    const int real = in->mask[(size_t)b * L + i] && in->mask[(size_t)b * L + j];
                    double vn = 0.0;
                    for (int k = 0; k < dh; k++) {
                        const double v = in->values[((eb * H + h) * L + j) * dh + k];
                        vn += v * v;
                    }
                    const double want = real ? in->attn[(eb * H + h) * LL + (size_t)i * L + j] * sqrt(vn) : 0.0;
                    ident_err = fmax(ident_err, fabs(hmap[(size_t)h * LL + (size_t)i * L + j] - want));
                }
    }
    printf("%s: W_O = I gives alpha * ||v|| within %.3g\n", label, ident_err);
    CHECK(ident_err < 1e-6);
    free(eye), free(zero), free(hmap);
    free(heads), free(layer), free(res), free(eff), free(one), free(C), free(scratch), free(rc), free(rs), free(st);
    for (int s = 0; s < 3; s++) free(roll[s]);
}

/* Bounds that hold for any attention: the statistics of a random row set. */
static void check_bounds(void) {
    const int NL = 1, H = 2, L = 7;
    float A[2 * 7 * 7], C[2 * 7 * 7], scratch[49];
    int32_t mask[7] = {1, 1, 1, 1, 1, 0, 0};
    uint64_t s = 12345;
    for (int i = 0; i < H * L * L; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        A[i] = (float)((s >> 40) % 1000 + 1);
        C[i] = (float)((s >> 20) % 1000);
    }
    for (int r = 0; r < H * L; r++) { /* rows over the real keys, as softmax with the mask gives them */
        double sum = 0.0;
        for (int j = 0; j < L; j++) sum += mask[j] ? A[r * L + j] : 0.0;
        for (int j = 0; j < L; j++) A[r * L + j] = mask[j] ? (float)(A[r * L + j] / sum) : 0.0f;
    }
    A[3 * L + 2] = 1.0f; /* one one-hot row: entropy 0, confidence 1 */
    for (int j = 0; j < L; j++) A[3 * L + j] = j == 2 ? 1.0f : 0.0f;
    uint8_t classes[7];
    al_key_classes(NULL, NULL, mask, L, classes);
    const float *maps[1] = {A};
    double out[2 * AL_HS_N];
    al_head_stats_example(maps, NL, H, L, mask, classes, C, scratch, out);
    for (int h = 0; h < H; h++) {
        const double *o = out + h * AL_HS_N;
        CHECK(o[AL_HS_ENTROPY] >= 0 && o[AL_HS_ENTROPY] <= log(5.0) + 1e-12);
        CHECK(o[AL_HS_CONFIDENCE] >= 0.2 - 1e-12 && o[AL_HS_CONFIDENCE] <= 1.0);
        CHECK(o[AL_HS_JS] >= 0 && o[AL_HS_JS] <= log(2.0) + 1e-12);
        for (int k = AL_HS_CLS; k <= AL_HS_PUNCT; k++) CHECK(o[k] >= 0 && o[k] <= 1.0 + 1e-9);
    }
    /* JS of a row with itself is 0; of disjoint rows ln 2 */
    float B1[1 * 2 * 2] = {1, 0, 0, 1}, C1[4] = {0, 1, 1, 0}, sc[4];
    int32_t m2[2] = {1, 1};
    uint8_t cl2[2] = {0, 0};
    const float *mp[1] = {B1};
    double o1[AL_HS_N];
    al_head_stats_example(mp, 1, 1, 2, m2, cl2, C1, sc, o1);
    CHECK_NEAR(o1[AL_HS_JS], log(2.0), 1e-12);
    al_head_stats_example(mp, 1, 1, 2, m2, cl2, B1, sc, o1);
    CHECK_NEAR(o1[AL_HS_JS], 0.0, 1e-12);
    CHECK_NEAR(o1[AL_HS_ENTROPY], 0.0, 1e-12);
    /* confidence by Voita et al. (2019) leaves out the [SEP] key: rows [CLS] a b [SEP] with most weight on
     * [SEP] give 0.6 and 0.7 by the largest weight, 0.2 and 0.2 without [SEP]; nothing else changes */
    float V[2 * 4] = {0.1f, 0.2f, 0.1f, 0.6f, 0.05f, 0.2f, 0.05f, 0.7f}, V1[4 * 4] = {0};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) V1[(i + 1) * 4 + j] = V[i * 4 + j]; /* queries a and b; the [CLS] and [SEP] rows uniform */
    int32_t m4[4] = {1, 1, 1, 1};
    uint8_t cl4[4] = {AL_KEY_CLS, 0, 0, AL_KEY_SEP};
    for (int j = 0; j < 4; j++) V1[j] = V1[12 + j] = 0.25f;
    const float *vp[1] = {V1};
    double om[AL_HS_N], ov[AL_HS_N];
    al_head_stats_example_kind(vp, 1, 1, 4, m4, cl4, NULL, AL_CONFIDENCE_MAX, sc, om);
    al_head_stats_example_kind(vp, 1, 1, 4, m4, cl4, NULL, AL_CONFIDENCE_VOITA, sc, ov);
    CHECK_NEAR(om[AL_HS_CONFIDENCE], (0.25 + 0.6 + 0.7 + 0.25) / 4, 1e-7);
    CHECK_NEAR(ov[AL_HS_CONFIDENCE], (0.25 + 0.2 + 0.2 + 0.25) / 4, 1e-7);
    for (int k = 0; k < AL_HS_N; k++)
        if (k != AL_HS_CONFIDENCE) CHECK(om[k] == ov[k] || (isnan(om[k]) && isnan(ov[k])));
}

static void check_ops(al_session *s) {
    const char *ids = "\"input_ids\": [[2, 17, 33, 5, 9, 3], [2, 40, 3]]";
    char req[512];
    const char *ops[4] = {"{\"op\": \"norm_attention\", \"model\": \"g\", %s, \"outputs\": [\"norms\", \"layer_norms\", \"res_ln\", \"value_norms\"]}",
                          "{\"op\": \"attention_rollout\", \"model\": \"g\", %s}",
                          "{\"op\": \"attention_rollout\", \"model\": \"g\", %s, \"source\": \"effective\"}",
                          "{\"op\": \"attention_rollout\", \"model\": \"g\", %s, \"source\": \"norm\", \"bogus\": 1}"};
    for (int k = 0; k < 4; k++) {
        snprintf(req, sizeof req, ops[k], ids);
        al_reply r1, r2;
        cJSON *a = run(s, req, AL_OK, &r1), *b = run(s, req, AL_OK, &r2);
        const char *d1 = cJSON_GetStringValue(cJSON_GetObjectItem(a, "digest"));
        const char *d2 = cJSON_GetStringValue(cJSON_GetObjectItem(b, "digest"));
        CHECK_MSG(d1 && d2 && !strcmp(d1, d2) && !strncmp(d1, "sha256:", 7), "%s: digest repeats", req);
        CHECK(r1.n_tensors >= 1);
        if (k == 0) {
            CHECK(r1.n_tensors == 4);
            cJSON *mass = cJSON_GetObjectItem(a, "norm_mass");
            CHECK(cJSON_GetArraySize(mass) == 3 && cJSON_GetArraySize(cJSON_GetArrayItem(mass, 0)) == 4);
        }
        if (k == 3) {
            char *w = cJSON_PrintUnformatted(cJSON_GetObjectItem(a, "warnings"));
            CHECK_MSG(w && strstr(w, "bogus"), "the unknown field is warned about: %s", w ? w : "");
            free(w);
        }
        cJSON_Delete(a), cJSON_Delete(b);
        al_reply_free(&r1), al_reply_free(&r2);
    }
    snprintf(req, sizeof req, "{\"op\": \"attention_rollout\", \"model\": \"g\", %s, \"source\": \"gradient\"}", ids);
    expect_error(s, req, "'source'");
    snprintf(req, sizeof req, "{\"op\": \"norm_attention\", \"model\": \"g\", %s, \"outputs\": [\"weights\"]}", ids);
    expect_error(s, req, "'outputs");
    expect_error(s, "{\"op\": \"head_stats\", \"model\": \"g\", \"task\": \"pos\"}", "tokenizer");
    expect_error(s, "{\"op\": \"head_stats\", \"model\": \"nope\", \"task\": \"pos\"}", "nope");
}

/* One golden model: the reference's own layer inputs, then this core's forward on the same ids. */
static void check_family(const char *dir) {
    char path[256], label[96];
    al_model *model = NULL;
    al_error err = {0};
    CHECK_MSG(al_model_load_dir(dir, &model, &err) == AL_OK, "%s: %s", dir, err.message);
    golden_file g, ref;
    snprintf(path, sizeof path, "%s/golden.safetensors", dir);
    const int has_g = golden_open(&g, path);
    snprintf(path, sizeof path, "%s/measures.safetensors", dir);
    const int has_ref = golden_open(&ref, path);
    CHECK_MSG(model && has_g && has_ref, "%s: model, golden and measures", dir);
    if (model && has_g && has_ref) {
        int64_t shape[8] = {0};
        free(golden_f32(&g, "input_ids", NULL, shape));
        const al_config *c = al_model_config(model);
        inputs in = {c->n_layers, (int)shape[0], c->n_heads, (int)shape[1], c->hidden_size, c->head_dim, NULL, NULL, NULL, NULL};
        int32_t *mask = golden_i32(&g, "attention_mask"), *ids = golden_i32(&g, "input_ids");
        int32_t *types = golden_i32(&g, "token_type_ids"); /* NULL where the family has none */
        float *hidden = golden_f32(&g, "hidden_states", NULL, NULL), *attn = golden_f32(&g, "attentions", NULL, NULL);
        float *values = golden_f32(&g, "values", NULL, NULL);
        CHECK(mask && ids && hidden && attn && values);
        in.mask = mask, in.hidden = hidden, in.attn = attn, in.values = values;
        const char *family = strrchr(dir, '/') + 1;
        snprintf(label, sizeof label, "%s reference inputs", family);
        check_against(label, model, &in, &ref, 0);
        /* this core's own forward pass on the same ids */
        const int NL = in.NL, B = in.B, H = in.H, L = in.L;
        float *h2 = malloc(sizeof(float) * (size_t)(NL + 1) * B * L * in.D), *a2 = malloc(sizeof(float) * (size_t)NL * B * H * L * L);
        float *v2 = malloc(sizeof(float) * (size_t)NL * B * H * L * in.dh);
        al_batch batch = {B, L, ids, mask, types, NULL};
        al_forward_outputs out = {0};
        out.hidden_states = h2, out.attentions = a2, out.values = v2;
        al_forward_params fp = al_forward_default_params();
        CHECK(al_forward(model, &batch, &fp, &out, &err) == AL_OK);
        inputs own = in;
        own.hidden = h2, own.attn = a2, own.values = v2;
        snprintf(label, sizeof label, "%s attnlab forward", family);
        check_against(label, model, &own, &ref, 1);
        free(h2), free(a2), free(v2);
        free(mask), free(ids), free(types), free(hidden), free(attn), free(values);
    }
    if (has_g) golden_close(&g);
    if (has_ref) golden_close(&ref);
    al_model_free(model);
}

int main(void) {
    struct stat sb;
    if (stat(MODEL_DIR "/model.safetensors", &sb) != 0) SKIP_TEST(MODEL_DIR " is absent");
    /* BERT's reference is a float64 forward of its own (make_measures_golden.py); the other families' start
     * from their golden pass's layer inputs (make_family_measures.py) */
    static const char *const dirs[] = {MODEL_DIR, "tests/golden/roberta", "tests/golden/distilbert",
                                       "tests/golden/electra", "tests/golden/deberta_v3", "tests/golden/modernbert"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) check_family(dirs[i]);
    check_bounds();
    al_error err = {0};
    al_session *s = al_session_new();
    al_fileset *fs = al_fileset_new(); /* the session takes it */
    CHECK(al_fileset_add_dir(fs, MODEL_DIR, &err) == AL_OK);
    CHECK(al_session_add_model(s, "g", fs, &err) == AL_OK);
    check_ops(s);
    al_session_free(s);
    return check_summary("measures");
}
