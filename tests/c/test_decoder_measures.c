/* test_decoder_measures.c: every measure on the causal decoders (docs/decoders.md, "Measures"), on each of the 8
 * random checkpoints of tests/golden/decoders (GPT-2, Llama with GQA and head_dim != D / H, Qwen2 with and
 * without its window, GPT-NeoX parallel and sequential), with the golden's three right-padded rows of 12, 9 and
 * 5 real tokens. The invariants a causal head must keep:
 *   - effective attention (docs/effective.md, "Causal heads"): nothing above the diagonal, A_eff V = A V row by
 *     row; the paper mode refused by name;
 *   - norm-based attention: value norms ||v_h(x_j) W_O^h|| recomputed here from o_w [D, n_heads * head_dim],
 *     nothing above the diagonal; the residual + LayerNorm variant refused by name (pre-norm layers);
 *   - rollout: lower triangular, rows sum to 1;
 *   - value zeroing: zeroing token j changes no row i < j (its distance is exactly 0);
 *   - head_steps: the query sees tokens <= it, the reply names the key/value head it shares.
 * (head_stats and head_importance: tests/c/test_decoder_heads.c.)
 * Against tests/golden/make_decoder_measures.py's float64 references (gpt2, llama_untied, pythia): effective,
 * norm-based (per head, per layer), rollout and value zeroing, from the golden's own layer inputs and through
 * attnlab's forward.
 * Then each op through the JSON API on sessions of 1 and 3 threads: the same digest (the same bits). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "fnv_digest.h"
#include "golden_file.h"
#include "reply_tensor.h"
#include "api/api_internal.h"
#include "session_request.h"
#include "methods/measures/measures.h"
#include "methods/measures/value_zeroing.h"
#include "model/family_params.h"
#include "model/model_internal.h"

static const char *const k_variants[] = {"gpt2",   "gpt2_prefixed", "llama_gqa", "llama_untied",
                                         "qwen2",  "qwen2_window",  "pythia",    "pythia_sequential"};
#define N_VARIANTS (int)(sizeof k_variants / sizeof k_variants[0])

typedef struct worst { double eff_av, vnorm, rollout_sum; } worst;
static worst g_worst;

static void note(double *w, double e) {
    if (e > *w || e != e) *w = e;
}

/* Two value vectors equal to rounding (a repeated token's). */
static int near(const float *a, const float *b, int n) {
    double d = 0.0, top = 0.0;
    for (int k = 0; k < n; k++) note(&d, fabs((double)a[k] - b[k])), note(&top, fabs((double)a[k]));
    return d <= 1e-4 * (top > 1.0 ? top : 1.0);
}

/* Effective attention: zero above the diagonal and on pads, and sum_j A_eff[i, j] V[j] = sum_j A[i, j] V[j]. */
static void check_effective(const char *dir, const al_config *c, const float *attn, const float *values,
                            const int32_t *mask, int B, int L) {
    const int NL = c->n_layers, H = c->n_heads, dh = c->head_dim;
    const size_t n_attn = (size_t)NL * B * H * L * L;
    float *eff = malloc(sizeof(float) * n_attn);
    al_error err = {0};
    CHECK_MSG(al_effective_attention(c, attn, values, mask, B, L, AL_EFFECTIVE_EXACT, eff, NULL, &err) == AL_OK, "%s: %s",
              dir, err.message);
    int above = 0, changed = 0;
    /* rows of at most head_dim keys whose prefix holds no value vector twice: their values are independent (random
     * weights) and span R^{i+1}, nothing is invisible. A repeated value vector (to rounding) is common: in layer 0 of a rotary
     * family a repeated token has the same values (positions turn only q and k), and a causal prefix of one token
     * repeated (qwen2's row 0 starts 57, 57) has the same hidden states in every layer; only the sum of the two
     * weights is then visible. */
    double short_rows = 0.0;
    for (int l = 0; l < NL; l++)
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++) {
                const size_t at = (((size_t)l * B + b) * H + h) * L * L;
                const float *a = attn + at, *e = eff + at, *v = values + (((size_t)l * B + b) * H + h) * L * dh;
                for (int i = 0; i < L; i++) {
                    if (!mask[(size_t)b * L + i]) continue;
                    for (int j = i + 1; j < L; j++) above += e[(size_t)i * L + j] != 0.0f;
                    double dev = 0.0;
                    for (int j = 0; j <= i; j++) note(&dev, fabs((double)e[(size_t)i * L + j] - a[(size_t)i * L + j]));
                    int repeated = 0;
                    for (int j = 0; j <= i && !repeated; j++)
                        for (int k = 0; k < j && !repeated; k++)
                            repeated = near(v + (size_t)j * dh, v + (size_t)k * dh, dh);
                    if (i + 1 <= dh) {
                        if (!repeated) note(&short_rows, dev);
                    } else {
                        changed += dev > 1e-3;
                    }
                    for (int k = 0; k < dh; k++) {
                        double want = 0.0, got = 0.0, top = 0.0;
                        for (int j = 0; j <= i; j++) {
                            want += (double)a[(size_t)i * L + j] * v[(size_t)j * dh + k];
                            got += (double)e[(size_t)i * L + j] * v[(size_t)j * dh + k];
                            if (fabs(v[(size_t)j * dh + k]) > top) top = fabs(v[(size_t)j * dh + k]);
                        }
                        note(&g_worst.eff_av, fabs(got - want) / (top > 1.0 ? top : 1.0));
                    }
                }
            }
    CHECK_MSG(above == 0, "%s: %d effective entries above the diagonal", dir, above);
    CHECK_MSG(short_rows <= 1e-5, "%s: rows of at most head_dim keys moved by %.3g", dir, short_rows);
    CHECK_MSG(dh >= L || changed > 0, "%s: no row longer than head_dim %d has an invisible part", dir, dh);
    CHECK_MSG(g_worst.eff_av <= 1e-5, "%s: A_eff V - A V up to %.3g", dir, g_worst.eff_av);
    err.message[0] = 0;
    CHECK(al_effective_attention(c, attn, values, mask, B, L, AL_EFFECTIVE_PAPER, eff, NULL, &err) == AL_ERR_UNSUPPORTED &&
          strstr(err.message, "'mode'") && strstr(err.message, "causal"));
    free(eff);
}

/* Norm-based attention of every layer of example b: the value norms against ||sum_k v[k] o_w[:, h dh + k]|| in
 * double from the model's o_w [D, A]; nothing above the diagonal; the residual + LayerNorm variant refused. */
static void check_norms(const char *dir, const al_model *m, const float *hidden, const float *attn, const float *values,
                        const int32_t *mask, int B, int L) {
    const al_config *c = al_model_config(m);
    const int NL = c->n_layers, H = c->n_heads, dh = c->head_dim, D = c->hidden_size, A = al_attn_width(c);
    float *hn = malloc(sizeof(float) * (size_t)H * L * L), *ln = malloc(sizeof(float) * (size_t)L * L);
    float *vn = malloc(sizeof(float) * (size_t)H * L), *res = malloc(sizeof(float) * (size_t)L * L);
    al_error err = {0};
    int above = 0;
    for (int l = 0; l < NL; l++)
        for (int b = 0; b < B; b++) {
            const int32_t *mk = mask + (size_t)b * L;
            const float *x = hidden + ((size_t)l * B + b) * L * D, *a = attn + ((size_t)l * B + b) * H * L * L;
            const float *v = values + ((size_t)l * B + b) * H * L * dh;
            al_norm_outputs o = {hn, ln, NULL, vn};
            CHECK_MSG(al_norm_attention_layer(m, l, x, a, v, mk, L, &o, &err) == AL_OK, "%s: %s", dir, err.message);
            const float *ow = m->w.layers[l].o_w;
            for (int h = 0; h < H; h++)
                for (int j = 0; j < L; j++) {
                    if (!mk[j]) continue;
                    double ss = 0.0;
                    for (int r = 0; r < D; r++) {
                        double f = 0.0;
                        for (int k = 0; k < dh; k++) f += (double)v[((size_t)h * L + j) * dh + k] * ow[(size_t)r * A + h * dh + k];
                        ss += f * f;
                    }
                    note(&g_worst.vnorm, fabs(vn[(size_t)h * L + j] - sqrt(ss)) / (sqrt(ss) > 1.0 ? sqrt(ss) : 1.0));
                }
            for (int i = 0; i < L; i++)
                for (int j = i + 1; j < L; j++) {
                    above += ln[(size_t)i * L + j] != 0.0f;
                    for (int h = 0; h < H; h++) above += hn[((size_t)h * L + i) * L + j] != 0.0f;
                }
            al_norm_outputs r = {NULL, NULL, res, NULL};
            CHECK(al_norm_attention_layer(m, l, x, a, v, mk, L, &r, &err) == AL_ERR_UNSUPPORTED && strstr(err.message, "pre-norm"));
        }
    CHECK_MSG(above == 0, "%s: %d norm-based entries above the diagonal", dir, above);
    CHECK_MSG(g_worst.vnorm <= 1e-6, "%s: value norms off by %.3g", dir, g_worst.vnorm);
    free(hn), free(ln), free(vn), free(res);
}

/* Rollout of the raw attention: lower triangular, every real row sums to 1. */
static void check_rollout(const char *dir, const al_config *c, const float *attn, const int32_t *mask, int B, int L) {
    const int NL = c->n_layers, H = c->n_heads;
    const float *maps[64];
    float *out = malloc(sizeof(float) * (size_t)NL * L * L);
    al_error err = {0};
    int above = 0;
    for (int b = 0; b < B && NL <= 64; b++) {
        for (int l = 0; l < NL; l++) maps[l] = attn + ((size_t)l * B + b) * H * L * L;
        CHECK(al_rollout(maps, NL, H, L, mask + (size_t)b * L, 0, out, &err) == AL_OK);
        for (int l = 0; l < NL; l++)
            for (int i = 0; i < L; i++) {
                if (!mask[(size_t)b * L + i]) continue;
                double s = 0.0;
                for (int j = 0; j < L; j++) {
                    s += out[((size_t)l * L + i) * L + j];
                    above += j > i && out[((size_t)l * L + i) * L + j] != 0.0f;
                }
                note(&g_worst.rollout_sum, fabs(s - 1.0));
            }
    }
    CHECK_MSG(above == 0 && g_worst.rollout_sum <= 1e-6, "%s: rollout %d above, rows off 1 by %.3g", dir, above,
              g_worst.rollout_sum);
    free(out);
}

/* The normalised entropy: in [0, 1]; a uniform causal head gives 1, a head that looks at one key gives 0. */
static void check_entropy(const char *dir, const al_config *c, const float *attn, const int32_t *mask, int B, int L) {
    const int NL = c->n_layers, H = c->n_heads;
    double e[64];
    int bad = 0;
    for (int l = 0; l < NL && H <= 64; l++)
        for (int b = 0; b < B; b++) {
            al_causal_entropy_example(attn + ((size_t)l * B + b) * H * L * L, H, L, mask + (size_t)b * L, e);
            for (int h = 0; h < H; h++) bad += !(e[h] >= 0.0 && e[h] <= 1.0 + 1e-12);
        }
    CHECK_MSG(bad == 0, "%s: %d normalised entropies outside [0, 1]", dir, bad);
    float uni[3 * 4 * 4] = {0}; /* heads: uniform over j <= i, one-hot on j = 0, one-hot on j = i */
    const int32_t m4[4] = {1, 1, 1, 0};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j <= i; j++) uni[i * 4 + j] = 1.0f / (float)(i + 1 - (i == 3)) * (j < 3);
    for (int i = 0; i < 4; i++) uni[16 + i * 4] = 1.0f, uni[32 + i * 4 + i] = 1.0f;
    al_causal_entropy_example(uni, 3, 4, m4, e);
    CHECK_MSG(fabs(e[0] - 1.0) < 1e-6 && e[1] == 0.0 && e[2] == 0.0, "%s: %g %g %g", dir, e[0], e[1], e[2]);
    const int32_t one[4] = {1, 0, 0, 0};
    al_causal_entropy_example(uni, 1, 4, one, e);
    CHECK(isnan(e[0])); /* no row of two keys */
}

/* Value zeroing: token j's zeroed values change no row i < j, bit for bit; and some row >= j. */
static void check_value_zeroing(const char *dir, const al_model *m, const int32_t *ids, const int32_t *mask, int B, int L) {
    const int NL = al_model_config(m)->n_layers;
    float *dist = malloc(sizeof(float) * (size_t)B * NL * L * L);
    al_batch batch = {B, L, ids, mask, NULL, NULL};
    al_error err = {0};
    CHECK_MSG(al_value_zeroing(m, &batch, NULL, dist, NULL, &err) == AL_OK, "%s: %s", dir, err.message);
    int earlier = 0, later = 0;
    for (int b = 0; b < B; b++)
        for (int l = 0; l < NL; l++)
            for (int i = 0; i < L; i++)
                for (int j = 0; j < L; j++) {
                    const float d = dist[(((size_t)b * NL + l) * L + i) * L + j];
                    if (j > i) earlier += d != 0.0f;
                    else later += d > 0.0f;
                }
    CHECK_MSG(earlier == 0 && later > 0, "%s: value zeroing changed %d earlier rows (%d later ones)", dir, earlier, later);
    free(dist);
}

/* ------------------------------------------------------------ against the float64 reference */

/* tests/golden/make_decoder_measures.py's references, for the variants it writes. */
static const char *const k_reference[] = {"gpt2", "llama_untied", "pythia"};
enum { COL_REFERENCE = 0, COL_FORWARD = 1 }; /* the golden's own layer inputs, or attnlab's forward */
static const char *const k_measures[] = {"effective", "norms", "layer_norms", "rollout", "vz_distances"};
#define N_MEASURES 5
static double g_ref_err[2][N_MEASURES], g_ref_top[N_MEASURES];

static double max_diff(const float *a, const float *b, size_t n, double *top) {
    double e = 0.0;
    for (size_t i = 0; i < n; i++) {
        note(&e, fabs((double)a[i] - b[i]));
        if (top) note(top, fabs((double)b[i]));
    }
    return e;
}

/* The measures from one set of layer inputs (hidden [NL+1,B,L,D], attn, values) against the reference ref[k]. */
static void compare_reference(const char *dir, const al_model *m, int col, const float *hidden, const float *attn,
                              const float *values, const int32_t *ids, const int32_t *mask, int B, int L,
                              float *const *ref) {
    const al_config *c = al_model_config(m);
    const int NL = c->n_layers, H = c->n_heads, D = c->hidden_size, dh = c->head_dim;
    const size_t LL = (size_t)L * L, n_attn = (size_t)NL * B * H * LL;
    float *got = malloc(sizeof(float) * n_attn), *lay = malloc(sizeof(float) * (size_t)NL * B * LL);
    al_error err = {0};
    CHECK(al_effective_attention(c, attn, values, mask, B, L, AL_EFFECTIVE_EXACT, got, NULL, &err) == AL_OK);
    note(&g_ref_err[col][0], max_diff(got, ref[0], n_attn, &g_ref_top[0]));
    for (int l = 0; l < NL; l++)
        for (int b = 0; b < B; b++) {
            const size_t eb = (size_t)l * B + b;
            al_norm_outputs o = {got + eb * H * LL, lay + eb * LL, NULL, NULL};
            CHECK(al_norm_attention_layer(m, l, hidden + eb * L * D, attn + eb * H * LL, values + eb * H * L * dh,
                                          mask + (size_t)b * L, L, &o, &err) == AL_OK);
        }
    note(&g_ref_err[col][1], max_diff(got, ref[1], n_attn, &g_ref_top[1]));
    note(&g_ref_err[col][2], max_diff(lay, ref[2], (size_t)NL * B * LL, &g_ref_top[2]));
    const float *maps[64];
    for (int b = 0; b < B && NL <= 64; b++) {
        for (int l = 0; l < NL; l++) maps[l] = attn + ((size_t)l * B + b) * H * LL;
        CHECK(al_rollout(maps, NL, H, L, mask + (size_t)b * L, 0, lay + (size_t)b * NL * LL, &err) == AL_OK);
    }
    note(&g_ref_err[col][3], max_diff(lay, ref[3], (size_t)B * NL * LL, &g_ref_top[3]));
    if (col == COL_FORWARD) { /* value zeroing reruns the model: through the forward only */
        al_batch batch = {B, L, ids, mask, NULL, NULL};
        CHECK(al_value_zeroing(m, &batch, NULL, lay, NULL, &err) == AL_OK);
        note(&g_ref_err[col][4], max_diff(lay, ref[4], (size_t)B * NL * LL, &g_ref_top[4]));
    }
    (void)dir;
    free(got), free(lay);
}

static void check_library(const char *dir) {
    char path[256];
    al_model *m = NULL;
    al_error err = {0};
    snprintf(path, sizeof path, "tests/golden/decoders/%s", dir);
    CHECK_MSG(al_model_load_dir(path, &m, &err) == AL_OK, "%s: %s", dir, err.message);
    if (!m) return;
    golden_file g;
    snprintf(path, sizeof path, "tests/golden/decoders/%s/golden.safetensors", dir);
    if (!golden_open(&g, path)) {
        CHECK_MSG(0, "%s", path);
        al_model_free(m);
        return;
    }
    int64_t shape[8] = {0};
    free(golden_f32(&g, "input_ids", NULL, shape));
    const int B = (int)shape[0], L = (int)shape[1];
    int32_t *ids = golden_i32(&g, "input_ids"), *mask = golden_i32(&g, "attention_mask");
    const al_config *c = al_model_config(m);
    const size_t NL = (size_t)c->n_layers, H = (size_t)c->n_heads, D = (size_t)c->hidden_size, dh = (size_t)c->head_dim;
    float *hidden = malloc(sizeof(float) * (NL + 1) * B * L * D), *attn = malloc(sizeof(float) * NL * B * H * L * L);
    float *values = malloc(sizeof(float) * NL * B * H * L * dh);
    al_batch batch = {B, L, ids, mask, NULL, NULL};
    al_forward_params fp = al_forward_default_params();
    al_forward_outputs o = {0};
    o.hidden_states = hidden, o.attentions = attn, o.values = values;
    CHECK_MSG(ids && mask && al_forward(m, &batch, &fp, &o, &err) == AL_OK, "%s: %s", dir, err.message);
    int with_reference = 0;
    for (size_t k = 0; k < sizeof k_reference / sizeof k_reference[0]; k++) with_reference |= !strcmp(dir, k_reference[k]);
    golden_file gm;
    snprintf(path, sizeof path, "tests/golden/decoders/%s/measures.safetensors", dir);
    if (with_reference && ids && mask && golden_open(&gm, path)) {
        float *ref[N_MEASURES];
        for (int k = 0; k < N_MEASURES; k++) ref[k] = golden_f32(&gm, k_measures[k], NULL, NULL);
        float *g_hidden = golden_f32(&g, "hidden_states", NULL, NULL), *g_attn = golden_f32(&g, "attentions", NULL, NULL);
        float *g_values = golden_f32(&g, "values", NULL, NULL);
        CHECK(ref[0] && ref[1] && ref[2] && ref[3] && ref[4] && g_hidden && g_attn && g_values);
        if (ref[0] && ref[1] && ref[2] && ref[3] && ref[4] && g_hidden && g_attn && g_values) {
            compare_reference(dir, m, COL_REFERENCE, g_hidden, g_attn, g_values, ids, mask, B, L, ref);
            compare_reference(dir, m, COL_FORWARD, hidden, attn, values, ids, mask, B, L, ref);
        }
        for (int k = 0; k < N_MEASURES; k++) free(ref[k]);
        free(g_hidden), free(g_attn), free(g_values);
        golden_close(&gm);
    } else {
        CHECK_MSG(!with_reference, "%s", path);
    }
    if (ids && mask) {
        check_effective(dir, c, attn, values, mask, B, L);
        check_norms(dir, m, hidden, attn, values, mask, B, L);
        check_rollout(dir, c, attn, mask, B, L);
        check_entropy(dir, c, attn, mask, B, L);
        check_value_zeroing(dir, m, ids, mask, B, L);
    }
    free(ids), free(mask), free(hidden), free(attn), free(values);
    golden_close(&g);
    al_model_free(m);
}

/* ------------------------------------------------------------ the ops, on 1 and 3 threads */

/* The reply's identity: its "digest" when it has one, else FNV over its tensors' bytes. */
static void reply_identity(const al_reply *reply, const cJSON *r, char *out, size_t size) {
    const char *d = cJSON_GetStringValue(cJSON_GetObjectItem(r, "digest"));
    if (d) {
        snprintf(out, size, "%s", d);
        return;
    }
    uint64_t h = FNV_DIGEST_START;
    for (int t = 0; t < reply->n_tensors; t++) h = fnv_digest(h, reply->tensors[t].data, reply->tensors[t].nbytes / sizeof(float));
    snprintf(out, size, "fnv %016llx", (unsigned long long)h);
}

#define IDS "\"input_ids\":[[5,17,42,9,33,8,71,2,64,11,90,3],[7,7,21,55,13,8,99,4,30],[12,6,88,40,1]]"
static const struct op_case {
    const char *request; /* after {"model":"m", */
    al_status expect;
    const char *needle;  /* in the refusal's message */
} k_ops[] = {
    {"\"op\":\"attention\"," IDS, AL_OK, NULL},
    {"\"op\":\"effective_attention\",\"mode\":\"exact\"," IDS, AL_OK, NULL},
    {"\"op\":\"effective_attention\",\"mode\":\"paper\"," IDS, AL_ERR_UNSUPPORTED, "'mode'"},
    {"\"op\":\"attention_diff\"," IDS, AL_OK, NULL},
    {"\"op\":\"attention_stats\"," IDS, AL_OK, NULL},
    {"\"op\":\"attention_patterns\"," IDS, AL_OK, NULL},
    {"\"op\":\"attention_similarity\",\"model_b\":\"m\"," IDS, AL_OK, NULL},
    {"\"op\":\"norm_attention\",\"outputs\":[\"norms\",\"layer_norms\",\"value_norms\"]," IDS, AL_OK, NULL},
    {"\"op\":\"norm_attention\"," IDS, AL_OK, NULL},
    {"\"op\":\"norm_attention\",\"outputs\":[\"res_ln\"]," IDS, AL_ERR_UNSUPPORTED, "'outputs'"},
    {"\"op\":\"attention_rollout\",\"source\":\"raw\"," IDS, AL_OK, NULL},
    {"\"op\":\"attention_rollout\",\"source\":\"effective\"," IDS, AL_OK, NULL},
    {"\"op\":\"attention_rollout\",\"source\":\"norm\"," IDS, AL_OK, NULL},
    {"\"op\":\"value_zeroing\"," IDS, AL_OK, NULL},
    {"\"op\":\"head_steps\",\"layer\":1,\"head\":1,\"query\":6,\"input_ids\":[5,17,42,9,33,8,71,2,64]", AL_OK, NULL},
};
#define N_OPS (int)(sizeof k_ops / sizeof k_ops[0])

static void check_head_steps_reply(const char *dir, const al_config *c, const al_reply *reply, const cJSON *r) {
    const int group = c->n_heads / al_kv_heads(c);
    CHECK_MSG(cJSON_IsTrue(cJSON_GetObjectItem(r, "causal")) &&
                  cJSON_GetObjectItem(r, "visible_keys")->valuedouble == 7 &&
                  cJSON_GetObjectItem(r, "kv_head")->valuedouble == 1 / group &&
                  cJSON_GetObjectItem(r, "n_kv_heads")->valuedouble == al_kv_heads(c) &&
                  cJSON_GetObjectItem(r, "rotary_dims")->valuedouble == al_decoder(c)->rotary_dims,
              "%s: head_steps reply %.300s", dir, reply->json);
    const al_tensor_out *w = find_tensor(reply, "weights");
    int later = 0;
    double sum = 0.0;
    for (int j = 0; w && j < (int)w->shape[0]; j++) {
        const float x = ((const float *)w->data)[j];
        if (j > 6) later += x != 0.0f;
        else sum += x;
    }
    CHECK_MSG(w && later == 0 && fabs(sum - 1.0) < 1e-6, "%s: head_steps weights after the query %d, sum %.9g", dir, later, sum);
}

static void check_stats_reply(const char *dir, const al_config *c, const cJSON *r) {
    const cJSON *e = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "standard"), "entropy_normalised");
    CHECK_MSG(cJSON_GetArraySize(e) == c->n_layers && cJSON_GetArraySize(cJSON_GetArrayItem(e, 0)) == c->n_heads,
              "%s: attention_stats has no entropy_normalised [NL][H]", dir);
}

static void check_ops(const char *dir) {
    static char first[N_OPS][80];
    static const int counts[2] = {1, 3};
    char request[1024];
    for (int t = 0; t < 2; t++) {
        al_session_params sp = al_session_default_params();
        sp.n_threads = counts[t];
        al_session *s = al_session_new_params(&sp);
        al_reply reply;
        snprintf(request, sizeof request, "{\"op\":\"load_model\",\"model\":\"m\",\"path\":\"tests/golden/decoders/%s\"}", dir);
        cJSON *r = run(s, request, AL_OK, &reply);
        cJSON_Delete(r);
        al_reply_free(&reply);
        const al_api_model *am = al_api_find_model(s, "m");
        const al_model *m = am ? am->model : NULL;
        for (int k = 0; m && k < N_OPS; k++) {
            snprintf(request, sizeof request, "{\"model\":\"m\",%s}", k_ops[k].request);
            r = run(s, request, k_ops[k].expect, &reply);
            char id[80];
            if (k_ops[k].expect == AL_OK) {
                reply_identity(&reply, r, id, sizeof id);
                if (t == 0) snprintf(first[k], sizeof first[k], "%s", id);
                CHECK_MSG(strcmp(first[k], id) == 0, "%s: %s differs on %d threads", dir, k_ops[k].request, counts[t]);
                if (t == 0 && strstr(k_ops[k].request, "head_steps")) check_head_steps_reply(dir, al_model_config(m), &reply, r);
                if (t == 0 && strstr(k_ops[k].request, "attention_stats")) check_stats_reply(dir, al_model_config(m), r);
            } else {
                const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(r, "error"), "message"));
                CHECK_MSG(msg && strstr(msg, k_ops[k].needle), "%s: %s: '%s' lacks '%s'", dir, k_ops[k].request,
                          msg ? msg : "(none)", k_ops[k].needle);
            }
            cJSON_Delete(r);
            al_reply_free(&reply);
        }
        al_session_free(s);
    }
}

/* Text through the fixture's byte-level BPE (tests/fixtures/decoder_tiny_gpt2): the ops that read tokens. */
static void check_text(void) {
    al_session *s = al_session_new();
    al_reply reply;
    cJSON *r = run(s, "{\"op\":\"load_model\",\"model\":\"m\",\"path\":\"tests/fixtures/decoder_tiny_gpt2\"}", AL_OK, &reply);
    cJSON_Delete(r);
    al_reply_free(&reply);
    static const char *const requests[] = {
        "{\"op\":\"attention_stats\",\"model\":\"m\",\"texts\":[\"The cat sat, then ran.\",\"A dog!\"]}",
        "{\"op\":\"norm_attention\",\"model\":\"m\",\"text\":\"The cat sat on the mat.\"}",
        "{\"op\":\"attention_rollout\",\"model\":\"m\",\"source\":\"effective\",\"text\":\"The cat sat on the mat.\"}",
        "{\"op\":\"value_zeroing\",\"model\":\"m\",\"text\":\"The cat sat on the mat.\"}",
        "{\"op\":\"head_steps\",\"model\":\"m\",\"layer\":0,\"head\":0,\"query\":2,\"text\":\"The cat sat on the mat.\"}",
    };
    for (size_t k = 0; k < sizeof requests / sizeof requests[0]; k++) {
        r = run(s, requests[k], AL_OK, &reply);
        CHECK_MSG(r && !cJSON_GetObjectItem(r, "error"), "%s", requests[k]);
        cJSON_Delete(r);
        al_reply_free(&reply);
    }
    al_session_free(s);
}

int main(void) {
    check_text();
    for (int v = 0; v < N_VARIANTS; v++) {
        check_library(k_variants[v]);
        check_ops(k_variants[v]);
    }
    printf("decoder measures: A_eff V - A V %.3g (relative to the largest value), value norms %.3g, rollout rows off 1 "
           "by %.3g\n",
           g_worst.eff_av, g_worst.vnorm, g_worst.rollout_sum);
    /* bounds: docs/measures.md "Exactness" (norm-based maps through the forward: 2e-6 of the largest value) */
    static const double bound_ref[N_MEASURES] = {1e-6, 1e-5, 1e-5, 1e-6, 0.0};
    static const double bound_fwd[N_MEASURES] = {1e-5, 2e-6, 2e-6, 1e-6, 1e-5};
    for (int k = 0; k < N_MEASURES; k++) {
        const double scale = k == 1 || k == 2 ? g_ref_top[k] : 1.0;
        CHECK_MSG(g_ref_err[COL_REFERENCE][k] <= bound_ref[k] && g_ref_err[COL_FORWARD][k] <= bound_fwd[k] * scale,
                  "%s: %.3g / %.3g", k_measures[k], g_ref_err[COL_REFERENCE][k], g_ref_err[COL_FORWARD][k]);
    }
    for (int k = 0; k < N_MEASURES; k++)
        printf("  %-13s against float64 (largest value %.3g): on its layer inputs %.3g, through the forward %.3g\n",
               k_measures[k], g_ref_top[k], g_ref_err[COL_REFERENCE][k], g_ref_err[COL_FORWARD][k]);
    return check_summary("decoder_measures");
}
