/* test_modernbert.c: ModernBERT (docs/families.md) against the float64 goldens of
 * tests/golden/make_modernbert_golden.py (hidden states 1e-4, attention 1e-5, MLM logits 2e-4; the measured
 * errors are printed), and its rules: zero rows for pads whose window holds only pads, real tokens
 * independent of padding, the local window, the same bits on any thread count and with skipped pads, head
 * policies, sequences longer than 512 tokens, the real ModernBERT-large config.json, refusals by name, and the
 * measures that rerun part of a layer (value zeroing, norm-based attention). */
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "fnv_digest.h"
#include "golden_file.h"
#include "lambda_fd.h"
#include "core/rng.h"
#include "methods/papa/papa_sweep.h"
#include "methods/measures/value_zeroing.h"
#include "model/forward_internal.h"
#include "model/family_params.h"
#include "model/modernbert.h"
#include "kernels/kernels.h"
#include "model/model_internal.h"
#include "model/rotary.h"
#include "model/weights.h"
#include "train/train.h"

#define TOL_HIDDEN 1e-4
#define TOL_ATTN 1e-5
#define TOL_LOGITS 2e-4 /* logits reach 19 here: 1e-5 of their size */
/* The lambda gradients' digests test_train prints, one pair per build (every kernel path of a build gives its
 * bits): the C library's exp and log differ in the last bit between native and WebAssembly (see test_train).
 * LAMBDA_GRADS_DIGEST after the finite-difference check (MLM loss), LAMBDA_GRADS_FIXED_DIGEST from fixed
 * hidden-state gradients. */
#ifdef __EMSCRIPTEN__
#define LAMBDA_GRADS_DIGEST 0xf1ebae6e58448390ull
#define LAMBDA_GRADS_FIXED_DIGEST 0x05b4cb5bc977a8d3ull
#else
#define LAMBDA_GRADS_DIGEST 0x22ab9cc3d93d006full
#define LAMBDA_GRADS_FIXED_DIGEST 0x6c472d25860cff25ull
#endif

typedef struct run {
    float *hidden, *attn, *values, *logits;
} run;

static al_status forward(const al_model *m, int B, int L, const int32_t *ids, const int32_t *mask,
                         const al_head_policy *pol, al_threadpool *pool, int skip_pads, run *r, al_error *err) {
    const al_config *c = al_model_config(m);
    const size_t NL = (size_t)c->n_layers, H = (size_t)c->n_heads;
    memset(r, 0, sizeof *r);
    r->hidden = calloc((NL + 1) * B * L * c->hidden_size, sizeof(float));
    r->attn = calloc(NL * B * H * L * L, sizeof(float));
    r->values = calloc(NL * B * H * L * c->head_dim, sizeof(float));
    r->logits = al_model_has_mlm_head(m) ? calloc((size_t)B * L * c->vocab_size, sizeof(float)) : NULL;
    al_forward_outputs out = {0};
    out.hidden_states = r->hidden, out.attentions = r->attn, out.values = r->values, out.mlm_logits = r->logits;
    al_batch batch = {B, L, ids, mask, NULL, NULL};
    al_forward_params p = al_forward_default_params();
    p.policies = pol;
    p.pool = pool;
    p.skip_pads = skip_pads;
    return al_forward(m, &batch, &p, &out, err);
}

static void run_free(run *r) {
    free(r->hidden), free(r->attn), free(r->values), free(r->logits);
}

static int all_finite(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

static void test_golden(void) {
    al_model *m = NULL;
    al_error err = {0};
    CHECK_MSG(al_model_load_dir("tests/golden/modernbert", &m, &err) == AL_OK, "%s", err.message);
    if (!m) return;
    const al_config *c = al_model_config(m);
    CHECK(strcmp(al_arch_name(c->arch), "modernbert") == 0 && al_model_has_mlm_head(m));
    CHECK(al_modernbert(c)->global_attn_every_n_layers == 3 && al_modernbert(c)->local_attention == 4 && al_modernbert(c)->local_rope_theta == 10000.0 &&
          al_modernbert(c)->global_rope_theta == 160000.0 && c->type_vocab_size == 0);
    CHECK(m->w.layers[0].ln_attn_g == NULL && m->w.layers[1].ln_attn_g != NULL && m->w.final_ln_g != NULL);
    CHECK(m->w.mlm_decoder_w == m->w.word_emb); /* tied */
    golden_file g;
    if (!golden_open(&g, "tests/golden/modernbert/golden.safetensors")) {
        CHECK_MSG(0, "tests/golden/modernbert/golden.safetensors");
        al_model_free(m);
        return;
    }
    int64_t shape[8] = {0};
    size_t n = 0, n_hidden = 0, n_attn = 0, n_values = 0, n_logits = 0;
    free(golden_f32(&g, "input_ids", &n, shape));
    const int B = (int)shape[0], L = (int)shape[1];
    int32_t *ids = golden_i32(&g, "input_ids"), *mask = golden_i32(&g, "attention_mask");
    float *want_hidden = golden_f32(&g, "hidden_states", &n_hidden, NULL);
    float *want_attn = golden_f32(&g, "attentions", &n_attn, NULL);
    float *want_values = golden_f32(&g, "values", &n_values, NULL);
    float *want_logits = golden_f32(&g, "mlm_logits", &n_logits, NULL);
    const size_t NL = (size_t)c->n_layers, H = (size_t)c->n_heads, D = (size_t)c->hidden_size;
    CHECK(ids && mask && want_hidden && want_attn && want_values && want_logits);
    CHECK(n_hidden == (NL + 1) * B * L * D && n_attn == NL * B * H * L * L && n_logits == (size_t)B * L * c->vocab_size);
    run r;
    CHECK_MSG(forward(m, B, L, ids, mask, NULL, NULL, 0, &r, &err) == AL_OK, "%s", err.message);
    if (want_hidden && want_attn && want_values && want_logits) {
        const double eh = max_abs_diff(r.hidden, want_hidden, n_hidden), ea = max_abs_diff(r.attn, want_attn, n_attn);
        const double ev = max_abs_diff(r.values, want_values, n_values), el = max_abs_diff(r.logits, want_logits, n_logits);
        printf("modernbert golden max abs error: hidden %.2e  attentions %.2e  values %.2e  mlm_logits %.2e\n", eh, ea,
               ev, el);
        CHECK_MSG(eh <= TOL_HIDDEN, "hidden %.3g", eh);
        CHECK_MSG(ea <= TOL_ATTN, "attentions %.3g", ea);
        CHECK_MSG(ev <= TOL_HIDDEN, "values %.3g", ev);
        CHECK_MSG(el <= TOL_LOGITS, "mlm_logits %.3g", el);
    }
    CHECK(all_finite(r.hidden, n_hidden) && all_finite(r.attn, n_attn) && all_finite(r.logits, n_logits));
    uint64_t dg = fnv_digest(FNV_DIGEST_START, r.hidden, n_hidden);
    dg = fnv_digest(dg, r.attn, n_attn);
    dg = fnv_digest(dg, r.logits, n_logits);
    printf("modernbert golden outputs digest %016llx\n", (unsigned long long)dg);
    /* the same bits natively and in WebAssembly (the value both builds printed), on every kernel path */
    CHECK(dg == 0xa44aa6c56fa66ad7ull);
    const char *paths[8];
    const int n_paths = al_kernels_paths(paths, 8);
    const char *was = al_kernels_path();
    for (int i = 0; i < n_paths; i++) {
        CHECK(al_kernels_set_path(paths[i]) == 0);
        run o;
        CHECK(forward(m, B, L, ids, mask, NULL, NULL, 0, &o, &err) == AL_OK);
        uint64_t d2 = fnv_digest(FNV_DIGEST_START, o.hidden, n_hidden);
        d2 = fnv_digest(d2, o.attn, n_attn);
        d2 = fnv_digest(d2, o.logits, n_logits);
        CHECK_MSG(d2 == dg, "kernel path %s: digest %016llx", paths[i], (unsigned long long)d2);
        run_free(&o);
    }
    al_kernels_set_path(was);

    /* Row 2 holds 3 real tokens: the pads at positions 5.. see only pads in the local layers (1 and 2, window
     * 2 each side): their rows are zeros; in a global layer (0) they read the real tokens. */
    int zero_rows = 0, nonzero_global = 1;
    for (size_t l = 0; l < NL; l++)
        for (size_t h = 0; h < H; h++)
            for (int i = 5; i < L; i++) {
                const float *row = r.attn + (((l * B + 2) * H + h) * L + i) * L;
                double sum = 0.0;
                for (int k = 0; k < L; k++) sum += row[k];
                if (l == 1 || l == 2) zero_rows += sum == 0.0;
                if (l == 0) nonzero_global &= fabs(sum - 1.0) < 1e-5;
            }
    CHECK_MSG(zero_rows == 2 * (int)H * (L - 5), "%d zero rows", zero_rows);
    CHECK(nonzero_global);
    /* the window: in a local layer, row 0's query 0 reads nothing beyond position 2 */
    int outside = 0;
    for (size_t h = 0; h < H; h++)
        for (int k = 3; k < L; k++) outside += r.attn[(((1 * B + 0) * H + h) * L + 0) * L + k] != 0.0f;
    CHECK(outside == 0);

    /* Real tokens never read pads: row 2 alone at its length gives the same bits at its real tokens. */
    run alone;
    CHECK(forward(m, 1, 3, ids + 2 * L, mask + 2 * L, NULL, NULL, 0, &alone, &err) == AL_OK);
    int same = 1;
    for (size_t l = 0; l <= NL; l++)
        same &= memcmp(alone.hidden + l * 3 * D, r.hidden + ((l * B + 2) * L) * D, 3 * D * sizeof(float)) == 0;
    CHECK_MSG(same, "real tokens depend on padding");
    run_free(&alone);

    /* Threads and skipped pads: the same bits at every real token. */
    for (int t = 1; t <= 3; t++) {
        al_threadpool *pool = NULL;
        CHECK(al_threadpool_new(t, &pool, &err) == AL_OK);
        for (int skip = 0; skip <= 1; skip++) {
            run o;
            CHECK(forward(m, B, L, ids, mask, NULL, pool, skip, &o, &err) == AL_OK);
            int diff = 0;
            for (size_t l = 0; l <= NL; l++)
                for (int b = 0; b < B; b++)
                    for (int i = 0; i < L; i++)
                        if (mask[b * L + i] || !skip) {
                            const size_t at = ((l * B + b) * L + i) * D;
                            diff += memcmp(o.hidden + at, r.hidden + at, D * sizeof(float)) != 0;
                        }
            CHECK_MSG(diff == 0, "threads %d skip_pads %d: %d rows differ", t, skip, diff);
            run_free(&o);
        }
        al_threadpool_free(pool);
    }

    /* Head policies: a constant head's probabilities are its masked, renormalised constant; a zero head's are
     * zeros; the other heads of a layer with a static head are renormalised over the real tokens. */
    al_head_policy *pol = calloc(NL * H, sizeof *pol);
    float *C = malloc(sizeof(float) * L * L);
    for (int i = 0; i < L * L; i++) C[i] = 1.0f;
    pol[1 * H + 0].mode = AL_HEAD_CONSTANT, pol[1 * H + 0].constant = C;
    pol[3 * H + 1].mode = AL_HEAD_ZERO;
    run pr;
    CHECK_MSG(forward(m, B, L, ids, mask, pol, NULL, 0, &pr, &err) == AL_OK, "%s", err.message);
    const float *row = pr.attn + (((1 * B + 1) * H + 0) * L + 0) * L; /* layer 1, seq 1 (7 real), head 0, query 0 */
    int ok = 1;
    for (int k = 0; k < L; k++) ok &= fabsf(row[k] - (k < 7 ? 1.0f / 7.0f : 0.0f)) < 1e-6f;
    CHECK(ok);
    int zeros = 1;
    for (size_t e = 0; e < (size_t)L * L; e++) zeros &= pr.attn[((3 * B + 0) * H + 1) * L * L + e] == 0.0f;
    CHECK(zeros);
    CHECK(all_finite(pr.hidden, n_hidden) && memcmp(pr.hidden, r.hidden, (2 * B * L * D) * sizeof(float)) == 0);
    CHECK(memcmp(pr.hidden + 2 * B * L * D, r.hidden + 2 * B * L * D, B * L * D * sizeof(float)) != 0);
    run_free(&pr);
    free(pol), free(C);

    run_free(&r);
    free(ids), free(mask), free(want_hidden), free(want_attn), free(want_values), free(want_logits);
    golden_close(&g);
    al_model_free(m);
}

/* A random ModernBERT from a config.json text. */
static al_model *random_model(const char *json, al_error *err) {
    al_config c;
    if (al_config_parse(json, strlen(json), "config.json", &c, err) != AL_OK) return NULL;
    al_model *m = NULL;
    return al_model_new_random(&c, 7, 1, &m, err) == AL_OK ? m : NULL;
}

/* 600 tokens (more than 512) with a 128-token window: runs, finite, no key beyond the window read. */
static void test_long(void) {
    const char *json = "{\"model_type\": \"modernbert\", \"vocab_size\": 64, \"hidden_size\": 16, \"num_hidden_layers\": 2,"
                       " \"num_attention_heads\": 2, \"intermediate_size\": 24, \"max_position_embeddings\": 1024,"
                       " \"global_attn_every_n_layers\": 2, \"local_attention\": 128, \"pad_token_id\": 0}";
    al_error err = {0};
    al_model *m = random_model(json, &err);
    CHECK_MSG(m != NULL, "%s", err.message);
    if (!m) return;
    const int L = 600, H = 2;
    int32_t *ids = malloc(sizeof(int32_t) * L);
    for (int i = 0; i < L; i++) ids[i] = 1 + (i * 7) % 63;
    run r;
    CHECK_MSG(forward(m, 1, L, ids, NULL, NULL, NULL, 0, &r, &err) == AL_OK, "%s", err.message);
    CHECK(all_finite(r.hidden, (size_t)3 * L * 16) && all_finite(r.logits, (size_t)L * 64));
    int outside = 0, inside = 0;
    for (int h = 0; h < H; h++)
        for (int i = 0; i < L; i++)
            for (int k = 0; k < L; k++) {
                const float p = r.attn[(((size_t)1 * H + h) * L + i) * L + k]; /* layer 1: local */
                if (abs(i - k) > 64) outside += p != 0.0f;
                else inside += p > 0.0f;
            }
    CHECK(outside == 0 && inside > 0);
    printf("modernbert: %d tokens ran; layer 1 reads only within 64 positions\n", L);
    /* a config built in code without the family's fields is refused, not divided by zero */
    al_config bad = *al_model_config(m);
    al_modernbert_mut(&bad)->global_attn_every_n_layers = 0;
    al_model *none = NULL;
    CHECK(al_model_new_random(&bad, 1, 1, &none, &err) == AL_ERR_INVALID && none == NULL &&
          strstr(err.message, "global_attn_every_n_layers"));
    run_free(&r);
    free(ids);
    al_model_free(m);
}

static void refused(const char *extra, const char *field) {
    char json[512];
    snprintf(json, sizeof json, "{\"model_type\": \"modernbert\", \"vocab_size\": 64, \"hidden_size\": %d, "
             "\"num_hidden_layers\": 2, \"num_attention_heads\": 2, \"intermediate_size\": 24%s}",
             strcmp(field, "odd head size") == 0 ? 18 : 16, extra);
    al_config c;
    al_error err = {0};
    CHECK_MSG(al_config_parse(json, strlen(json), "config.json", &c, &err) != AL_OK && strstr(err.message, field),
              "%s: %s", extra, err.message);
}

static void test_config(void) {
    refused(", \"norm_bias\": true", "'norm_bias'");
    refused(", \"attention_bias\": true", "'attention_bias'");
    refused(", \"mlp_bias\": true", "'mlp_bias'");
    refused(", \"classifier_bias\": true", "'classifier_bias'");
    refused(", \"decoder_bias\": false", "'decoder_bias'");
    refused(", \"hidden_activation\": \"silu\"", "'hidden_activation'");
    refused(", \"classifier_activation\": \"relu\"", "'classifier_activation'");
    refused(", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2}", "'rope_scaling'");
    refused(", \"global_rope_theta\": -1", "'global_rope_theta'");
    refused(", \"global_attn_every_n_layers\": 0", "'global_attn_every_n_layers'");
    refused("", "odd head size");
    /* rotary bases as ModernBertConfig: local 10000 when absent, the global base when null */
    const char *absent = "{\"model_type\": \"modernbert\", \"vocab_size\": 64, \"hidden_size\": 16, "
                         "\"num_hidden_layers\": 2, \"num_attention_heads\": 2, \"intermediate_size\": 24, "
                         "\"global_rope_theta\": 50000}";
    const char *null = "{\"model_type\": \"modernbert\", \"vocab_size\": 64, \"hidden_size\": 16, "
                       "\"num_hidden_layers\": 2, \"num_attention_heads\": 2, \"intermediate_size\": 24, "
                       "\"global_rope_theta\": 50000, \"local_rope_theta\": null}";
    al_config ca, cn;
    al_error e2 = {0};
    CHECK(al_config_parse(absent, strlen(absent), "config.json", &ca, &e2) == AL_OK && al_modernbert(&ca)->local_rope_theta == 10000.0 &&
          ca.max_position_embeddings == 8192);
    CHECK(al_config_parse(null, strlen(null), "config.json", &cn, &e2) == AL_OK && al_modernbert(&cn)->local_rope_theta == 50000.0);

    /* The real ModernBERT-large config.json (not committed: ../shared/families or AL_FAMILIES). */
    const char *env = getenv("AL_FAMILIES");
    char path[512];
    snprintf(path, sizeof path, "%s/modernbert/config.json", env && env[0] ? env : "../shared/families");
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("skipped the real config.json: %s is absent\n", path);
        return;
    }
    char buf[8192];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    al_config c;
    al_error err = {0};
    CHECK_MSG(al_config_parse(buf, n, path, &c, &err) == AL_OK, "%s", err.message);
    CHECK(strcmp(al_arch_name(c.arch), "modernbert") == 0 && c.hidden_size == 1024 && c.n_layers == 28 &&
          c.n_heads == 16 && c.intermediate_size == 2624 && c.vocab_size == 50368 && c.pad_token_id == 50283 &&
          al_modernbert(&c)->global_attn_every_n_layers == 3 && al_modernbert(&c)->local_attention == 128 && al_modernbert(&c)->global_rope_theta == 160000.0 &&
          al_modernbert(&c)->local_rope_theta == 10000.0 && c.max_position_embeddings == 8192 && c.act == AL_ACT_GELU &&
          fabsf(c.layer_norm_eps - 1e-5f) == 0.0f && c.tie_word_embeddings);
    /* check_config sizes it before any download */
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "op", "check_config");
    cJSON_AddStringToObject(req, "config", buf);
    char *text = cJSON_PrintUnformatted(req);
    al_session *s = al_session_new();
    al_reply reply;
    CHECK_MSG(al_session_run(s, text, NULL, &reply) == AL_OK, "%s", reply.json);
    printf("check_config ModernBERT-large: %s\n", reply.json);
    CHECK(strstr(reply.json, "\"arch\":\"modernbert\"") != NULL);
    al_reply_free(&reply);
    al_session_free(s);
    free(text);
    cJSON_Delete(req);
}

/* What is not built refuses a ModernBERT by name: weight gradients (pretraining). Explaining one head is built:
 * tests/c/test_head_steps.c. */
static void test_not_built(void) {
    al_model *m = NULL;
    al_error err = {0};
    CHECK(al_model_load_dir("tests/golden/modernbert", &m, &err) == AL_OK);
    if (!m) return;
    al_train_options opt = al_train_default_options();
    al_train_ctx *ctx = NULL;
    CHECK(al_train_ctx_new(m, 1, 8, &opt, &ctx, &err) == AL_ERR_UNSUPPORTED && ctx == NULL);
    CHECK_MSG(strstr(err.message, "weight gradients") && strstr(err.message, "modernbert"), "%s", err.message);
    al_model_free(m);
}

/* The lambda ranking's training pass (a frozen encoder, src/train/train_decoder.c): every hidden state of
 * its forward gives al_forward's bits (layer NL after the final norm), and the MIX heads' lambda-logit gradients
 * (through rotary global and windowed local layers, a static layer's renormalisation, GeGLU, the norms and the
 * MLM loss) match central finite differences. The second sequence ends in 5 pads: with a window of 2 each side
 * its last 3 rows in the local layers read no key (zeros), and no gradient may turn NaN there. */
static void test_train(void) {
    al_model *m = NULL;
    al_error err = {0};
    CHECK(al_model_load_dir("tests/golden/modernbert", &m, &err) == AL_OK);
    if (!m) return;
    const al_config *c = al_model_config(m);
    const int NL = c->n_layers, H = c->n_heads, NH = NL * H, D = c->hidden_size;
    golden_file g;
    if (!golden_open(&g, "tests/golden/modernbert/golden.safetensors")) {
        CHECK_MSG(0, "tests/golden/modernbert/golden.safetensors");
        al_model_free(m);
        return;
    }
    int64_t shape[8] = {0};
    size_t n = 0;
    free(golden_f32(&g, "input_ids", &n, shape));
    int32_t *gids = golden_i32(&g, "input_ids");
    const int L = (int)shape[1], B = 2;
    int32_t *ids = malloc(sizeof(int32_t) * B * L), *mask = malloc(sizeof(int32_t) * B * L), *labels = malloc(sizeof(int32_t) * B * L);
    for (int t = 0; t < B * L; t++) {
        mask[t] = t < L || t % L < L - 5;
        ids[t] = mask[t] ? gids[t % (int)n] : c->pad_token_id;
        labels[t] = mask[t] && t % 3 == 1 ? (t * 7 + 5) % c->vocab_size : AL_IGNORE_INDEX;
    }
    al_train_options opt = al_train_default_options();
    opt.weight_grads = 0;
    opt.training = 0; /* no dropout: the forward is al_forward's, and finite differences see the same function */
    al_train_ctx *ctx = NULL;
    CHECK_MSG(al_train_ctx_new(m, B, L, &opt, &ctx, &err) == AL_OK, "%s", err.message);
    float *C = malloc(sizeof(float) * L * L);
    al_rng r;
    al_rng_seed(&r, 3);
    for (int i = 0; i < L * L; i++) C[i] = 0.05f + al_rng_uniform(&r);
    /* layer 0 (global): MIX and STANDARD; layer 1 (local) static: a CONSTANT beside MIX heads; layer 2 (local)
     * with a ZERO head; layer 3 (global) all MIX */
    static const int modes[16] = {AL_HEAD_MIX, AL_HEAD_STANDARD, AL_HEAD_MIX, AL_HEAD_STANDARD,
                                  AL_HEAD_MIX, AL_HEAD_CONSTANT, AL_HEAD_MIX, AL_HEAD_STANDARD,
                                  AL_HEAD_STANDARD, AL_HEAD_MIX, AL_HEAD_ZERO, AL_HEAD_MIX,
                                  AL_HEAD_MIX, AL_HEAD_MIX, AL_HEAD_MIX, AL_HEAD_MIX};
    al_head_policy pol[16], inf[16];
    for (int i = 0; i < 16; i++)
        pol[i] = (al_head_policy){(al_head_mode)modes[i], 0.15f + 0.05f * (float)i,
                                  modes[i] == AL_HEAD_STANDARD || modes[i] == AL_HEAD_ZERO ? NULL : C};
    CHECK(NH == 16 && ctx && al_train_set_policies(ctx, pol, &err) == AL_OK);
    if (NH != 16 || !ctx) goto done;
    al_batch batch = {B, L, ids, mask, NULL, NULL};

    for (int i = 0; i < NH; i++) {
        inf[i] = pol[i];
        /* lambda = sigmoid(theta) by the training path's own rule (al_tr_sigmoid: the kernels' al_expf) */
        if (pol[i].mode == AL_HEAD_MIX) inf[i].lambda = 1.0f / (1.0f + al_expf(-al_train_lambda_logits(ctx)[i]));
    }
    run want;
    CHECK_MSG(forward(m, B, L, ids, mask, inf, NULL, 0, &want, &err) == AL_OK, "%s", err.message);
    lambda_fd_loss(ctx, &batch, labels);
    const size_t n_layer = (size_t)B * L * D;
    double e_fwd = 0.0;
    int same_bits = 1;
    for (int l = 0; l <= NL; l++) {
        const float *got = al_train_hidden(ctx, l), *ref = want.hidden + (size_t)l * n_layer;
        e_fwd = fmax(e_fwd, max_abs_diff(got, ref, n_layer));
        same_bits &= memcmp(got, ref, sizeof(float) * n_layer) == 0;
    }
    CHECK_MSG(same_bits, "training forward differs from al_forward by %.3g", e_fwd);
    run_free(&want);

    const lambda_fd_result fd = lambda_fd_check(ctx, &batch, labels, pol, NH, 1e-2f);
    const float *dth = al_train_lambda_grads(ctx);
    CHECK(all_finite(dth, (size_t)NH));
    const uint64_t dg_fd = fnv_digest(FNV_DIGEST_START, dth, (size_t)NH);
    printf("modernbert training forward vs al_forward %.2e (%s); %d lambda logits against finite differences: "
           "rel err %.2e (max |dtheta| %.2e, loss %.4f); lambda gradients digest %016llx\n",
           e_fwd, same_bits ? "the same bits" : "not bit-identical", fd.n_checked, fd.worst, fd.scale, (double)fd.loss,
           (unsigned long long)dg_fd);
    CHECK_MSG(dg_fd == LAMBDA_GRADS_DIGEST, "lambda gradients digest %016llx", (unsigned long long)dg_fd);

    /* the encoder's backward alone (no MLM loss, whose cross-entropy uses the C library's exp and log): a fixed
     * gradient on every hidden state, as the ranking's probe gives. Its digest is pinned per build:
     * these policies' lambdas become theta = log(lambda / (1 - lambda)) through the C library's log (train_ctx.c,
     * al_train_set_policies), whose last bit differs between native and WebAssembly, so the two builds print
     * different digests here; at lambda = 0.5 (theta = 0, where the ranking starts) they print the same */
    float *dh = malloc(sizeof(float) * (size_t)(NL + 1) * n_layer);
    for (size_t i = 0; dh && i < (size_t)(NL + 1) * n_layer; i++) dh[i] = (float)((int)(i * 7919 % 201) - 100) / 1024.0f;
    al_train_zero_grads(ctx);
    CHECK(dh && al_train_forward(ctx, &batch, &err) == AL_OK && al_train_backward(ctx, dh, &err) == AL_OK);
    CHECK(all_finite(al_train_lambda_grads(ctx), (size_t)NH));
    const uint64_t dg_fixed = fnv_digest(FNV_DIGEST_START, al_train_lambda_grads(ctx), (size_t)NH);
    printf("modernbert lambda gradients from fixed hidden-state gradients: digest %016llx\n",
           (unsigned long long)dg_fixed);
    CHECK_MSG(dg_fixed == LAMBDA_GRADS_FIXED_DIGEST, "digest %016llx", (unsigned long long)dg_fixed);
    free(dh);
done:
    free(C), free(ids), free(mask), free(labels), free(gids);
    golden_close(&g);
    al_train_ctx_free(ctx);
    al_model_free(m);
}

/* rotary.c's own double-precision angles against libm's: pair (i, i + dh/2) of (1, 0) vectors turned by
 * pos * base^(-2i/dh) at positions up to 8191 (ModernBERT's 8192) gives (cos, sin) to float rounding. */
static void test_rotary(void) {
    const int dh = 64, half = 32, rows = 6;
    const int32_t pos[6] = {0, 1, 2, 127, 4000, 8191};
    const double bases[2] = {10000.0, 160000.0};
    double worst = 0.0;
    float *x = malloc(sizeof(float) * rows * dh);
    for (int b = 0; b < 2; b++) {
        for (int r = 0; r < rows; r++)
            for (int i = 0; i < dh; i++) x[r * dh + i] = i < half ? 1.0f : 0.0f;
        al_rotary_apply(x, dh, pos, rows, 1, dh, bases[b]);
        for (int r = 0; r < rows; r++)
            for (int i = 0; i < half; i++) {
                const double a = pos[r] * pow(bases[b], -2.0 * i / dh);
                const double e = fmax(fabs(x[r * dh + i] - cos(a)), fabs(x[r * dh + half + i] - sin(a)));
                worst = fmax(worst, e);
            }
    }
    printf("rotary: largest difference from libm's cos and sin %.2e\n", worst);
    CHECK(worst <= 6e-8); /* half a float ulp at 1, plus libm's own last bit */
    /* the inverse turn (the training backward's) brings the vectors back, to float rounding */
    double back = 0.0;
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < dh; i++) x[r * dh + i] = (float)((r * dh + i) % 7) - 3.0f;
    al_rotary_apply(x, dh, pos, rows, 1, dh, 10000.0);
    al_rotary_apply_inverse(x, dh, pos, rows, 1, dh, 10000.0);
    for (int r = 0; r < rows; r++)
        for (int i = 0; i < dh; i++) back = fmax(back, fabs(x[r * dh + i] - ((float)((r * dh + i) % 7) - 3.0f)));
    printf("rotary: turned and turned back, largest difference %.2e\n", back);
    CHECK(back <= 2e-6);
    free(x);
}

/* A file saved from the bare encoder class (ModernBertModel): no "model." prefix and no MLM head. It is found
 * by its first layer name, loads and gives the same hidden states. */
static void test_bare_encoder(void) {
    al_model *m = NULL, *bare = NULL;
    al_error err = {0};
    CHECK(al_model_load_dir("tests/golden/modernbert", &m, &err) == AL_OK);
    if (!m) return;
    al_tensor_out t[64];
    const int n = al_weights_tensors(m, t, 64);
    int kept = 0;
    for (int i = 0; i < n; i++) {
        if (strncmp(t[i].name, "model.", 6) != 0) continue; /* the MLM head */
        t[kept] = t[i];
        memmove(t[kept].name, t[kept].name + 6, strlen(t[kept].name + 6) + 1);
        kept++;
    }
    uint8_t *st = NULL;
    size_t size = 0;
    CHECK(al_safetensors_serialize(t, kept, NULL, 0, &st, &size, &err) == AL_OK);
    static const char cfg[] = "{\"vocab_size\": 100, \"hidden_size\": 32, \"num_hidden_layers\": 4, "
                              "\"num_attention_heads\": 4, \"intermediate_size\": 48, \"max_position_embeddings\": 64, "
                              "\"global_attn_every_n_layers\": 3, \"local_attention\": 4, \"pad_token_id\": 3}";
    al_fileset *fs = al_fileset_new();
    CHECK(al_fileset_add(fs, "config.json", cfg, sizeof cfg - 1, 1, &err) == AL_OK);
    CHECK(al_fileset_add(fs, "model.safetensors", st, size, 1, &err) == AL_OK);
    CHECK_MSG(al_model_load(fs, &bare, &err) == AL_OK, "%s", err.message);
    if (bare) {
        CHECK(strcmp(al_arch_name(al_model_config(bare)->arch), "modernbert") == 0 && !al_model_has_mlm_head(bare));
        CHECK_MSG(strcmp(al_model_family_rule(bare), "tensor names (\"layers.0.attn.Wqkv.weight\")") == 0, "%s",
                  al_model_family_rule(bare));
        const int32_t ids[5] = {5, 17, 42, 9, 3}, mask[5] = {1, 1, 1, 1, 0};
        run a, b;
        CHECK(forward(m, 1, 5, ids, mask, NULL, NULL, 0, &a, &err) == AL_OK);
        CHECK(forward(bare, 1, 5, ids, mask, NULL, NULL, 0, &b, &err) == AL_OK);
        CHECK(memcmp(a.hidden, b.hidden, sizeof(float) * 5 * 5 * 32) == 0);
        run_free(&a), run_free(&b);
    }
    al_model_free(bare);
    al_fileset_free(fs);
    free(st);
    al_model_free(m);
}

/* Value zeroing reruns a layer's tail (al_fwd_layer_tail) from the forward's attention and values: from the
 * unaltered values it must give the forward's next hidden state (the pre-norm tail, not BERT's), and in a
 * local layer zeroing token j can move token i only when j is inside i's window (everything after the
 * attention is per token). Norm-based attention leaves out its post-LayerNorm variant by default and refuses
 * it by name when asked. */
static void test_measures(void) {
    al_model *m = NULL;
    al_error err = {0};
    CHECK(al_model_load_dir("tests/golden/modernbert", &m, &err) == AL_OK);
    if (!m) return;
    const al_config *c = al_model_config(m);
    enum { L = 10 };
    const int NL = c->n_layers, H = c->n_heads, D = c->hidden_size, dh = c->head_dim;
    const int32_t ids[L] = {5, 17, 42, 9, 3, 11, 23, 8, 30, 2}, mask[L] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    run r;
    CHECK(forward(m, 1, L, ids, mask, NULL, NULL, 0, &r, &err) == AL_OK);
    float *ctx = calloc((size_t)L * D, sizeof(float)), *y = malloc(sizeof(float) * L * D);
    float *tmp = malloc(sizeof(float) * L * D), *wide = malloc(sizeof(float) * L * al_fwd_ffn_width(c));
    double worst = 0.0;
    for (int l = 0; l < NL; l++) {
        const float *A = r.attn + (size_t)l * H * L * L, *V = r.values + (size_t)l * H * L * dh;
        for (int h = 0; h < H; h++)
            for (int i = 0; i < L; i++)
                for (int k = 0; k < dh; k++) {
                    double acc = 0.0;
                    for (int j = 0; j < L; j++) acc += (double)A[((size_t)h * L + i) * L + j] * V[((size_t)h * L + j) * dh + k];
                    ctx[(size_t)i * D + h * dh + k] = (float)acc;
                }
        memcpy(y, r.hidden + (size_t)l * L * D, sizeof(float) * L * D);
        al_fwd_layer_tail(m, l, NULL, ctx, y, L, tmp, wide);
        const float *next = r.hidden + (size_t)(l + 1) * L * D;
        for (int i = 0; i < L * D; i++) {
            const double e = fabs((double)y[i] - next[i]);
            if (e > worst) worst = e;
        }
    }
    printf("layer tail rerun against the forward's next hidden state: max error %.2e\n", worst);
    CHECK(worst < 1e-4);

    float *dist = calloc((size_t)NL * L * L, sizeof(float));
    al_batch b = {1, L, ids, mask, NULL, NULL};
    CHECK_MSG(al_value_zeroing(m, &b, NULL, dist, NULL, &err) == AL_OK, "%s", err.message);
    int outside = 0, inside = 0;
    for (int l = 0; l < NL; l++) {
        const int w = al_modernbert_window(c, l);
        for (int i = 0; i < L; i++)
            for (int j = 0; j < L; j++) {
                const float d = dist[((size_t)l * L + i) * L + j];
                CHECK_MSG(isfinite(d) && d >= 0.0f && d <= 2.0f, "layer %d (%d, %d): %g", l, i, j, (double)d);
                if (w >= 0 && abs(i - j) > w) outside += d != 0.0f;
                if (w >= 0 && abs(i - j) <= w && i != j) inside += d != 0.0f;
            }
    }
    CHECK_MSG(outside == 0 && inside > 0, "outside %d inside %d", outside, inside);

    al_session *s = al_session_new();
    al_reply reply;
    const char *load = "{\"op\": \"load_model\", \"model\": \"mb\", \"path\": \"tests/golden/modernbert\"}";
    CHECK_MSG(al_session_run(s, load, NULL, &reply) == AL_OK, "%s", reply.json);
    al_reply_free(&reply);
    CHECK_MSG(al_session_run(s, "{\"op\": \"norm_attention\", \"model\": \"mb\", \"input_ids\": [[5, 17, 42, 9]]}", NULL,
                             &reply) == AL_OK, "%s", reply.json);
    CHECK(strstr(reply.json, "\"norm_attentions\"") && !strstr(reply.json, "\"res_ln_norms\""));
    al_reply_free(&reply);
    CHECK(al_session_run(s, "{\"op\": \"norm_attention\", \"model\": \"mb\", \"input_ids\": [[5, 17, 42, 9]], "
                            "\"outputs\": [\"res_ln\"]}", NULL, &reply) != AL_OK);
    CHECK_MSG(strstr(reply.json, "field 'outputs'") && strstr(reply.json, "pre-norm"), "%s", reply.json);
    al_reply_free(&reply);
    al_session_free(s);
    free(ctx), free(y), free(tmp), free(wide), free(dist);
    run_free(&r);
    al_model_free(m);
}

int main(void) {
    test_rotary();
    test_bare_encoder();
    test_golden();
    test_not_built();
    test_train();
    test_long();
    test_config();
    test_measures();
    return check_summary("modernbert");
}
