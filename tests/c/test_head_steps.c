/* test_head_steps.c: one head step by step (src/methods/explain/head_steps.c, the "head_steps" op) against
 * PyTorch and against the forward. The committed golden BERT (tests/golden/bert: 3 layers, 4 heads of
 * dimension 8, three sequences of 12 positions, two of them padded) gives the layer inputs, so each
 * step is checked on PyTorch's own hidden states: softmax(q.k/sqrt(d) + mask) must be PyTorch's
 * attention row, the value vectors PyTorch's, and sum(weights x values) the context those give. The
 * op is checked against the "attention" op on the same ids, and every bad field is named. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/api_internal.h"
#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "reply_tensor.h"
#include "session_request.h"
#include "golden_file.h"
#include "methods/explain/head_steps.h"
#include "model/model_internal.h"
#include "model/family_params.h"

#define MODEL_DIR "tests/golden/bert"

typedef struct worst { double attn, values, softmax, scores, context, golden_context, output, split, invisible_v; } worst;

static void note(double *w, double e) {
    if (e > *w || e != e) *w = e;
}

static void check_golden(void) {
    al_model *model = NULL;
    al_error err = {0};
    CHECK(al_model_load_dir(MODEL_DIR, &model, &err) == AL_OK);
    golden_file g;
    if (!model || !golden_open(&g, MODEL_DIR "/golden.safetensors")) {
        CHECK(0);
        al_model_free(model);
        return;
    }
    int64_t shape[8] = {0};
    float *f = golden_f32(&g, "input_ids", NULL, shape);
    free(f);
    const int B = (int)shape[0], L = (int)shape[1];
    int32_t *mask = golden_i32(&g, "attention_mask");
    float *hidden = golden_f32(&g, "hidden_states", NULL, NULL);
    float *attn = golden_f32(&g, "attentions", NULL, NULL);
    float *values = golden_f32(&g, "values", NULL, NULL);
    const al_config *c = al_model_config(model);
    const int NL = c->n_layers, H = c->n_heads, dh = c->head_dim, D = c->hidden_size;
    CHECK(mask && hidden && attn && values && dh == 8 && L == 12);
    float *buf = malloc(sizeof(float) * (size_t)(dh + 2 * L * dh + 7 * L + dh + D));
    al_head_steps_out o = {0};
    float *p = buf;
    o.query = p, p += dh;
    o.keys = p, p += (size_t)L * dh;
    o.values = p, p += (size_t)L * dh;
    o.scores = p, p += L;
    o.scaled = p, p += L;
    o.mask_add = p, p += L;
    o.weights = p, p += L;
    o.effective = p, p += L;
    o.invisible = p, p += L;
    o.context = p, p += dh;
    o.output = p;
    worst w = {0};
    int runs = 0, nonzero_invisible = 0, low_rank = 0;
    for (int b = 0; mask && hidden && attn && values && b < B; b++) {
        int n = 0;
        while (n < L && mask[b * L + n]) n++;
        for (int l = 0; l < NL; l++)
            for (int h = 0; h < H; h++)
                for (int q = 0; q < n; q++) {
                    const float *x = hidden + ((size_t)l * B + b) * L * D;
                    al_status st = al_head_steps(model, l, h, q, x, mask + b * L, L, &o, &err);
                    CHECK_MSG(st == AL_OK, "%s", err.message);
                    if (st) continue;
                    runs++;
                    const float *want = attn + ((((size_t)l * B + b) * H + h) * L + q) * L;
                    const float *want_v = values + (((size_t)l * B + b) * H + h) * L * dh;
                    /* softmax of scaled + mask, in double, from the op's own intermediate numbers */
                    double mx = -1e30, sum = 0.0;
                    for (int j = 0; j < L; j++) mx = fmax(mx, (double)o.scaled[j] + o.mask_add[j]);
                    for (int j = 0; j < L; j++) sum += exp((double)o.scaled[j] + o.mask_add[j] - mx);
                    for (int j = 0; j < L; j++) {
                        note(&w.attn, fabs(o.weights[j] - want[j]));
                        note(&w.softmax, fabs(o.weights[j] - exp((double)o.scaled[j] + o.mask_add[j] - mx) / sum));
                        double dot = 0.0;
                        for (int i = 0; i < dh; i++) dot += (double)o.query[i] * o.keys[(size_t)j * dh + i];
                        note(&w.scores, fabs(o.scores[j] - dot) / (1.0 + fabs(dot)));
                        note(&w.scores, fabs(o.scaled[j] - dot / sqrt((double)dh)) / (1.0 + fabs(dot)));
                        CHECK(o.mask_add[j] == (j < n ? 0.0f : -10000.0f));
                        for (int i = 0; i < dh; i++)
                            note(&w.values, fabs(o.values[(size_t)j * dh + i] - want_v[(size_t)j * dh + i]));
                        note(&w.split, j < n ? fabs((double)o.effective[j] + o.invisible[j] - o.weights[j])
                                             : fabs(o.effective[j]) + fabs(o.invisible[j]));
                    }
                    for (int i = 0; i < dh; i++) {
                        double mine = 0.0, torch = 0.0, inv = 0.0;
                        for (int j = 0; j < L; j++) {
                            mine += (double)o.weights[j] * o.values[(size_t)j * dh + i];
                            torch += (double)want[j] * want_v[(size_t)j * dh + i];
                            inv += (double)o.invisible[j] * o.values[(size_t)j * dh + i];
                        }
                        note(&w.context, fabs(o.context[i] - mine));
                        note(&w.golden_context, fabs(o.context[i] - torch));
                        note(&w.invisible_v, fabs(inv));
                    }
                    /* output = the head's columns of W_O times the context */
                    const float *ow = model->w.layers[l].o_w;
                    for (int r = 0; r < D; r++) {
                        double acc = 0.0;
                        for (int i = 0; i < dh; i++) acc += (double)ow[(size_t)r * D + h * dh + i] * o.context[i];
                        note(&w.output, fabs(o.output[r] - acc));
                    }
                    double inv_l1 = 0.0;
                    for (int j = 0; j < n; j++) inv_l1 += fabs(o.invisible[j]);
                    if (inv_l1 > 1e-3) nonzero_invisible++;
                    if (o.rank < n) low_rank++;
                    CHECK(o.rank <= dh && o.rank <= n);
                }
    }
    printf("head_steps vs PyTorch over %d (example, layer, head, query): attention %.2e, values %.2e, "
           "context %.2e; softmax %.2e, scores %.2e, own context %.2e, output %.2e, split %.2e, "
           "invisible x V %.2e; %d rows with an invisible part, %d with rank < n\n",
           runs, w.attn, w.values, w.golden_context, w.softmax, w.scores, w.context, w.output, w.split,
           w.invisible_v, nonzero_invisible, low_rank);
    CHECK(runs == 3 * 4 * (12 + 9 + 5));
    CHECK_MSG(w.attn <= 1e-6, "attention %.3g", w.attn);
    CHECK_MSG(w.values <= 1e-5, "values %.3g", w.values);
    CHECK_MSG(w.golden_context <= 1e-5, "context vs PyTorch %.3g", w.golden_context);
    CHECK_MSG(w.softmax <= 1e-6, "softmax %.3g", w.softmax);
    CHECK_MSG(w.scores <= 1e-6, "scores %.3g", w.scores);
    CHECK_MSG(w.context <= 1e-6, "context %.3g", w.context);
    CHECK_MSG(w.output <= 1e-6, "output %.3g", w.output);
    CHECK_MSG(w.split <= 1e-6, "effective + invisible %.3g", w.split);
    CHECK_MSG(w.invisible_v <= 1e-5, "invisible x V %.3g", w.invisible_v);
    /* n = 12 and 9 tokens exceed dh = 8: those rows must have a part the values cannot see */
    CHECK(nonzero_invisible > 0 && low_rank > 0);

    /* out-of-range indices are named */
    CHECK(al_head_steps(model, NL, 0, 0, hidden, mask, L, &o, &err) == AL_ERR_INVALID && strstr(err.message, "'layer'"));
    CHECK(al_head_steps(model, 0, H, 0, hidden, mask, L, &o, &err) == AL_ERR_INVALID && strstr(err.message, "'head'"));
    CHECK(al_head_steps(model, 0, 0, 9, hidden, mask + 1 * L, L, &o, &err) == AL_ERR_INVALID &&
          strstr(err.message, "'query'"));
    free(buf), free(mask), free(hidden), free(attn), free(values);
    golden_close(&g);
    al_model_free(model);
}

/* DeBERTa-v3 and ModernBERT (tests/golden/deberta_v3, tests/golden/modernbert): every (example, layer, head,
 * query) of the golden inputs, on the layer inputs attnlab's forward computes. The row must be the forward's
 * attention row (1e-6) and the float64 reference's (1e-5, the families' attention bound); DeBERTa's three
 * terms must sum to the score and give the scaled score with the scale 1/sqrt(dh (1 + terms)); ModernBERT's
 * excluded keys (pads, and beyond the window of a local layer) must be exactly the forward's zeros. */
static void check_family(const char *dir, int disentangled) {
    char path[256];
    al_model *model = NULL;
    al_error err = {0};
    CHECK_MSG(al_model_load_dir(dir, &model, &err) == AL_OK, "%s", err.message);
    golden_file g;
    snprintf(path, sizeof path, "%s/golden.safetensors", dir);
    if (!model || !golden_open(&g, path)) {
        CHECK(0);
        al_model_free(model);
        return;
    }
    int64_t shape[8] = {0};
    int32_t *ids = golden_i32(&g, "input_ids");
    free(golden_f32(&g, "input_ids", NULL, shape));
    const int B = (int)shape[0], L = (int)shape[1];
    int32_t *mask = golden_i32(&g, "attention_mask");
    float *ref_attn = golden_f32(&g, "attentions", NULL, NULL);
    const al_config *c = al_model_config(model);
    const int NL = c->n_layers, H = c->n_heads, dh = c->head_dim, D = c->hidden_size;
    float *hidden = malloc(sizeof(float) * (size_t)(NL + 1) * B * L * D);
    float *attn = malloc(sizeof(float) * (size_t)NL * B * H * L * L);
    al_batch batch = {B, L, ids, mask, NULL, NULL};
    al_forward_outputs fo = {.hidden_states = hidden, .attentions = attn};
    al_forward_params fp = al_forward_default_params();
    CHECK_MSG(al_forward(model, &batch, &fp, &fo, &err) == AL_OK, "%s", err.message);
    float *buf = malloc(sizeof(float) * (size_t)(2 * dh + 2 * L * dh + 13 * L + D));
    al_head_steps_out o = {0};
    float *p = buf;
    o.query = p, p += dh;
    o.keys = p, p += (size_t)L * dh;
    o.values = p, p += (size_t)L * dh;
    o.scores = p, p += L;
    o.scaled = p, p += L;
    o.mask_add = p, p += L;
    o.weights = p, p += L;
    o.effective = p, p += L;
    o.invisible = p, p += L;
    o.excluded = p, p += L;
    o.c2c = p, p += L;
    o.c2p = p, p += L;
    o.p2c = p, p += L;
    o.rel_bucket = p, p += L;
    o.context = p, p += dh;
    o.output = p;
    const int terms = 1 + ((al_deberta(c)->pos_att & 1) != 0) + ((al_deberta(c)->pos_att & 2) != 0);
    const double scale = disentangled ? 1.0 / sqrt((double)dh * terms) : 1.0 / sqrt((double)dh);
    double e_fwd = 0, e_ref = 0, e_sum = 0, e_c2c = 0, e_scaled = 0, e_softmax = 0;
    int runs = 0, out_of_window = 0, bad_excluded = 0, pos_nonzero = 0;
    for (int b = 0; ids && mask && ref_attn && b < B; b++) {
        int n = 0;
        while (n < L && mask[b * L + n]) n++;
        for (int l = 0; l < NL; l++)
            for (int h = 0; h < H; h++)
                for (int q = 0; q < n; q++) {
                    const float *x = hidden + ((size_t)l * B + b) * L * D;
                    al_status st = al_head_steps(model, l, h, q, x, mask + b * L, L, &o, &err);
                    CHECK_MSG(st == AL_OK, "%s", err.message);
                    if (st) continue;
                    runs++;
                    const size_t at = ((((size_t)l * B + b) * H + h) * L + q) * L;
                    CHECK(fabs(o.scale - scale) <= 1e-7);
                    const int window = disentangled ? -1 : (l % 3 == 0 ? -1 : 2); /* config: every 3, local 4 */
                    if (!disentangled) {
                        CHECK(o.window == window);
                        CHECK(o.rotary_base == (window < 0 ? 160000.0 : 10000.0));
                    }
                    double mx = -1e30, sum = 0.0;
                    for (int j = 0; j < L; j++)
                        if (!o.excluded[j]) mx = fmax(mx, (double)o.scaled[j]);
                    for (int j = 0; j < L; j++)
                        if (!o.excluded[j]) sum += exp((double)o.scaled[j] - mx);
                    for (int j = 0; j < L; j++) {
                        e_fwd = fmax(e_fwd, fabs(o.weights[j] - attn[at + j]));
                        e_ref = fmax(e_ref, fabs(o.weights[j] - ref_attn[at + j]));
                        const int want_ex = j >= n || (window >= 0 && abs(q - j) > window);
                        if (j < n && want_ex) out_of_window++;
                        if (o.excluded[j] != (float)want_ex || (want_ex && (o.weights[j] != 0.0f || o.mask_add[j] != -FLT_MAX)) ||
                            (!want_ex && o.mask_add[j] != 0.0f))
                            bad_excluded++;
                        if (!want_ex) e_softmax = fmax(e_softmax, fabs(o.weights[j] - exp((double)o.scaled[j] - mx) / sum));
                        /* float sums against exact ones, in units of their float rounding bound: a sum of
                         * n products is within n eps sum|terms| of the exact one */
                        double dot = 0.0, abs_dot = 0.0;
                        for (int i = 0; i < dh; i++) {
                            dot += (double)o.query[i] * o.keys[(size_t)j * dh + i];
                            abs_dot += fabs((double)o.query[i] * o.keys[(size_t)j * dh + i]);
                        }
                        const double dot_bound = dh * FLT_EPSILON * abs_dot + 1e-30;
                        if (disentangled) {
                            const double total = (double)o.c2c[j] + o.c2p[j] + o.p2c[j];
                            const double abs_terms = fabs(o.c2c[j]) + fabs(o.c2p[j]) + fabs(o.p2c[j]) + 1e-30;
                            e_sum = fmax(e_sum, fabs(o.scores[j] - total) / (2 * FLT_EPSILON * abs_terms));
                            e_c2c = fmax(e_c2c, fabs(o.c2c[j] - dot) / dot_bound);
                            e_scaled = fmax(e_scaled, fabs(o.scaled[j] - total * scale) / (4 * FLT_EPSILON * abs_terms * scale));
                            if (o.c2p[j] != 0.0f && o.p2c[j] != 0.0f) pos_nonzero++;
                        } else {
                            e_c2c = fmax(e_c2c, fabs(o.scores[j] - dot) / dot_bound);
                            e_scaled = fmax(e_scaled, fabs(o.scaled[j] - dot * scale) / (2 * dot_bound * scale));
                        }
                    }
                }
    }
    printf("head_steps %s over %d (example, layer, head, query): vs forward %.2e, vs float64 reference %.2e, "
           "softmax %.2e; in units of their float rounding bounds: terms sum %.2f, q.k %.2f, scaled %.2f; %d real keys outside a window, %d rows with "
           "both position terms nonzero\n",
           dir, runs, e_fwd, e_ref, e_softmax, e_sum, e_c2c, e_scaled, out_of_window, pos_nonzero);
    CHECK(runs == NL * H * (disentangled ? 24 + 17 + 6 : 12 + 7 + 3));
    CHECK_MSG(e_fwd <= 1e-6, "vs forward %.3g", e_fwd);
    CHECK_MSG(e_ref <= 1e-5, "vs reference %.3g", e_ref);
    CHECK_MSG(e_softmax <= 1e-6, "softmax %.3g", e_softmax);
    CHECK_MSG(e_sum <= 1 && e_c2c <= 1 && e_scaled <= 1, "sum %.3g c2c %.3g scaled %.3g", e_sum, e_c2c, e_scaled);
    CHECK_MSG(bad_excluded == 0, "%d keys with a wrong exclusion", bad_excluded);
    if (disentangled) CHECK(pos_nonzero > 0 && al_deberta(c)->pos_att == 3);
    else CHECK(out_of_window > 0); /* the local window is shorter than the text */
    free(buf), free(hidden), free(attn), free(ids), free(mask), free(ref_attn);
    golden_close(&g);
    al_model_free(model);
}

static const float *tensor(const al_reply *r, const char *name, int64_t numel) {
    for (int i = 0; i < r->n_tensors; i++)
        if (strcmp(r->tensors[i].name, name) == 0) {
            int64_t n = 1;
            for (int d = 0; d < r->tensors[i].ndim; d++) n *= r->tensors[i].shape[d];
            CHECK_MSG(n == numel, "%s: %lld values, expected %lld", name, (long long)n, (long long)numel);
            return n == numel ? r->tensors[i].data : NULL;
        }
    CHECK_MSG(0, "no tensor %s", name);
    return NULL;
}

/* The op on ids padded to 12 against the attention op on the same request. */
static void check_op(al_session *s) {
    const char *ids = "[87,67,70,33,45,62,59,63,75]";
    char req[512];
    al_reply ra;
    snprintf(req, sizeof req, "{\"op\":\"attention\",\"model\":\"g\",\"input_ids\":[%s],\"pad_to\":12,"
             "\"outputs\":[\"attentions\",\"values\"]}", ids);
    cJSON *ja = run(s, req, AL_OK, &ra);
    const int L = 12, H = 4, dh = 8, l = 2, h = 3, q = 4;
    const float *att = tensor(&ra, "attentions", 3 * H * L * L);
    const float *val = tensor(&ra, "values", 3 * H * L * dh);
    snprintf(req, sizeof req, "{\"op\":\"head_steps\",\"model\":\"g\",\"input_ids\":[%s],\"pad_to\":12,"
             "\"layer\":%d,\"head\":%d,\"query\":%d}", ids, l, h, q);
    al_reply rs;
    cJSON *js = run(s, req, AL_OK, &rs);
    const float *weights = tensor(&rs, "weights", L), *row = tensor(&rs, "attention_row", L);
    const float *values = tensor(&rs, "values", L * dh), *mask_add = tensor(&rs, "mask_add", L);
    const float *context = tensor(&rs, "context", dh);
    /* BERT's reply keeps its fields and adds the rule's name, no DeBERTa terms, nothing excluded */
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(js, "score_rule")), "scaled_dot") == 0);
    CHECK(!find_tensor_data(&rs, "c2c") && !cJSON_GetObjectItem(js, "terms") && !cJSON_GetObjectItem(js, "window"));
    const float *excluded = tensor(&rs, "excluded", L);
    for (int j = 0; excluded && j < L; j++) CHECK(excluded[j] == 0.0f);
    CHECK(tensor(&rs, "output", 32) && tensor(&rs, "keys", L * dh) && tensor(&rs, "query", dh));
    CHECK(cJSON_GetObjectItem(js, "n_tokens")->valueint == 9 && cJSON_GetObjectItem(js, "seq_len")->valueint == 12);
    CHECK(fabs(cJSON_GetObjectItem(js, "scale")->valuedouble - 1.0 / sqrt(8.0)) < 1e-7);
    if (att && val && weights && row && values && mask_add && context) {
        const float *want = att + (((size_t)l * H + h) * L + q) * L;
        const float *want_v = val + ((size_t)l * H + h) * L * dh;
        double e_row = 0, e_w = 0, e_v = 0, e_ctx = 0;
        for (int j = 0; j < L; j++) {
            e_row = fmax(e_row, fabs(row[j] - want[j]));
            e_w = fmax(e_w, fabs(weights[j] - want[j]));
            for (int i = 0; i < dh; i++) e_v = fmax(e_v, fabs(values[j * dh + i] - want_v[j * dh + i]));
            CHECK(mask_add[j] == (j < 9 ? 0.0f : -10000.0f));
        }
        for (int i = 0; i < dh; i++) {
            double acc = 0;
            for (int j = 0; j < L; j++) acc += (double)want[j] * want_v[j * dh + i];
            e_ctx = fmax(e_ctx, fabs(context[i] - acc));
        }
        printf("head_steps op vs attention op: row %.2e, weights %.2e, values %.2e, context %.2e\n", e_row, e_w,
               e_v, e_ctx);
        CHECK(e_row == 0.0);
        CHECK(e_w <= 1e-6 && e_v <= 1e-6 && e_ctx <= 1e-6);
    }
    cJSON_Delete(ja), cJSON_Delete(js);
    al_reply_free(&ra), al_reply_free(&rs);

    expect_error(s, "{\"op\":\"head_steps\",\"model\":\"g\",\"input_ids\":[2,5,3],\"head\":0,\"query\":0}", "'layer'");
    expect_error(s, "{\"op\":\"head_steps\",\"model\":\"g\",\"input_ids\":[2,5,3],\"layer\":3,\"head\":0,\"query\":0}", "'layer'");
    expect_error(s, "{\"op\":\"head_steps\",\"model\":\"g\",\"input_ids\":[2,5,3],\"layer\":0,\"head\":4,\"query\":0}", "'head'");
    expect_error(s, "{\"op\":\"head_steps\",\"model\":\"g\",\"input_ids\":[2,5,3],\"layer\":0,\"head\":0,\"query\":3}", "'query'");
    expect_error(s, "{\"op\":\"head_steps\",\"model\":\"g\",\"input_ids\":[2,5,3],\"layer\":0,\"head\":0,\"query\":-1}", "'query'");
    expect_error(s, "{\"op\":\"head_steps\",\"model\":\"g\",\"input_ids\":[[2,5,3],[2,3]],\"layer\":0,\"head\":0,\"query\":0}", "one sequence");
    expect_error(s, "{\"op\":\"head_steps\",\"model\":\"g\",\"texts\":[\"a\"],\"layer\":0,\"head\":0,\"query\":0}", "'texts'");
    expect_error(s, "{\"op\":\"head_steps\",\"model\":\"g\",\"input_ids\":[2,5,3],\"layer\":\"x\",\"head\":0,\"query\":0}", "'layer'");
}

/* The op on a DeBERTa or ModernBERT model: its row is the attention op's, and the reply names the score rule
 * with its fields (DeBERTa: the terms and their tensors; ModernBERT: the rotary base and window). */
static void check_family_op(al_session *s, const char *id, int disentangled, int layer) {
    const char *ids = "[1,10,20,30,40,50,60,70,2]";
    const int L = 12, H = 4, q = 6;
    char req[512];
    al_reply ra, rs;
    snprintf(req, sizeof req, "{\"op\":\"attention\",\"model\":\"%s\",\"input_ids\":[%s],\"pad_to\":12,"
             "\"outputs\":[\"attentions\"]}", id, ids);
    cJSON *ja = run(s, req, AL_OK, &ra);
    snprintf(req, sizeof req, "{\"op\":\"head_steps\",\"model\":\"%s\",\"input_ids\":[%s],\"pad_to\":12,"
             "\"layer\":%d,\"head\":1,\"query\":%d}", id, ids, layer, q);
    cJSON *js = run(s, req, AL_OK, &rs);
    const float *att = find_tensor_data(&ra, "attentions"), *row = find_tensor_data(&rs, "attention_row");
    const float *weights = find_tensor_data(&rs, "weights"), *excluded = find_tensor_data(&rs, "excluded");
    const float *scores = find_tensor_data(&rs, "scores"), *c2c = find_tensor_data(&rs, "c2c");
    const float *c2p = find_tensor_data(&rs, "c2p"), *p2c = find_tensor_data(&rs, "p2c");
    CHECK(att && row && weights && excluded && scores && find_tensor_data(&rs, "rel_distance"));
    const char *rule = cJSON_GetStringValue(cJSON_GetObjectItem(js, "score_rule"));
    CHECK(rule && strcmp(rule, disentangled ? "disentangled" : "rotary_window") == 0);
    if (disentangled) {
        const cJSON *terms = cJSON_GetObjectItem(js, "terms");
        CHECK(c2c && c2p && p2c && cJSON_GetArraySize(terms) == 3);
        CHECK(fabs(cJSON_GetObjectItem(js, "scale")->valuedouble - 1.0 / sqrt(24.0)) < 1e-7);
    } else {
        CHECK(!c2c && !c2p && !p2c);
        CHECK(cJSON_GetObjectItem(js, "window")->valueint == 2);
        CHECK(cJSON_GetObjectItem(js, "rotary_base")->valuedouble == 10000.0);
    }
    if (att && row && weights && excluded && scores) {
        const float *want = att + (((size_t)layer * H + 1) * L + q) * L;
        double e_row = 0, e_w = 0, e_sum = 0;
        int n_excluded = 0;
        for (int j = 0; j < L; j++) {
            e_row = fmax(e_row, fabs(row[j] - want[j]));
            e_w = fmax(e_w, fabs(weights[j] - want[j]));
            if (c2c && c2p && p2c) e_sum = fmax(e_sum, fabs((double)c2c[j] + c2p[j] + p2c[j] - scores[j]));
            n_excluded += excluded[j] != 0.0f;
        }
        printf("head_steps op (%s) vs attention op: row %.2e, weights %.2e, terms sum %.2e, %d keys excluded\n",
               id, e_row, e_w, e_sum, n_excluded);
        CHECK(e_row == 0.0 && e_w <= 1e-6 && e_sum <= 1e-5);
        /* the 3 pads, and in ModernBERT's local layer 1 the real keys more than 2 from query 6: 0..3 */
        CHECK(n_excluded == (disentangled ? 3 : 3 + 4));
    }
    cJSON_Delete(ja), cJSON_Delete(js);
    al_reply_free(&ra), al_reply_free(&rs);
}

int main(void) {
    struct stat st;
    if (stat(MODEL_DIR "/model.safetensors", &st) != 0) SKIP_TEST(MODEL_DIR " is absent");
    check_golden();
    al_session *s = al_session_new();
    al_fileset *fs = al_fileset_new();
    al_error err = {0};
    CHECK(al_fileset_add_dir(fs, MODEL_DIR, &err) == AL_OK);
    CHECK(al_session_add_model(s, "g", fs, &err) == AL_OK);
    check_op(s);
    check_family("tests/golden/deberta_v3", 1);
    check_family("tests/golden/modernbert", 0);
    al_fileset *fs_d = al_fileset_new(), *fs_m = al_fileset_new();
    CHECK(al_fileset_add_dir(fs_d, "tests/golden/deberta_v3", &err) == AL_OK);
    CHECK(al_fileset_add_dir(fs_m, "tests/golden/modernbert", &err) == AL_OK);
    CHECK(al_session_add_model(s, "d", fs_d, &err) == AL_OK);
    CHECK(al_session_add_model(s, "m", fs_m, &err) == AL_OK);
    check_family_op(s, "d", 1, 1);
    check_family_op(s, "m", 0, 1);
    al_session_free(s);
    return check_summary("head_steps");
}
