/* test_decoders.c: the causal language models (docs/decoders.md) against the float64 goldens of
 * tests/golden/make_decoder_goldens.py, eight random checkpoints in Hugging Face layout (GPT-2 with and without
 * "transformer." and as pytorch_model.bin, Llama with grouped-query attention tied and untied in BF16 with a head
 * size not hidden / heads, Qwen2 sharded and with a sliding window, Pythia in F16 with partial rotary and parallel
 * residual, and sequential): hidden states 1e-4 and logits 1e-4 relative to their largest value, attention 1e-5,
 * on every real token of a right-padded batch; the same bits on 1, 2 and 3 threads, on every kernel path, and with
 * skipped pads; the reference's eight greedy tokens; future keys exactly 0. */
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "fnv_digest.h"
#include "golden_file.h"
#include "kernels/kernels.h"
#include "model/family_params.h"
#include "model/model_internal.h"
#include "read_file.h"

#define TOL_HIDDEN 1e-4 /* relative to max(1, the largest |value|), as the generator measures its float32 run */
#define TOL_ATTN 1e-5
#define TOL_LOGITS 1e-4

typedef struct run {
    float *hidden, *attn, *values, *logits;
} run;

static al_status forward(const al_model *m, int B, int L, const int32_t *ids, const int32_t *mask, al_threadpool *pool,
                         int skip_pads, run *r, al_error *err) {
    const al_config *c = al_model_config(m);
    const size_t NL = (size_t)c->n_layers, H = (size_t)c->n_heads;
    memset(r, 0, sizeof *r);
    r->hidden = calloc((NL + 1) * B * L * c->hidden_size, sizeof(float));
    r->attn = calloc(NL * B * H * L * L, sizeof(float));
    r->values = calloc(NL * B * H * L * c->head_dim, sizeof(float));
    r->logits = calloc((size_t)B * L * c->vocab_size, sizeof(float));
    al_forward_outputs out = {0};
    out.hidden_states = r->hidden, out.attentions = r->attn, out.values = r->values, out.lm_logits = r->logits;
    al_batch batch = {B, L, ids, mask, NULL, NULL};
    al_forward_params p = al_forward_default_params();
    p.pool = pool;
    p.skip_pads = skip_pads;
    return al_forward(m, &batch, &p, &out, err);
}

static void run_free(run *r) { free(r->hidden), free(r->attn), free(r->values), free(r->logits); }

static uint64_t digest(const run *r, size_t n_hidden, size_t n_attn, size_t n_values, size_t n_logits) {
    uint64_t d = fnv_digest(FNV_DIGEST_START, r->hidden, n_hidden);
    d = fnv_digest(d, r->attn, n_attn);
    d = fnv_digest(d, r->values, n_values);
    return fnv_digest(d, r->logits, n_logits);
}

/* The largest |got - want| over rows [rows, width] of a [groups, rows, width] tensor whose row i is real, over the
 * largest |want| there (at least 1: relative for large values, absolute for small ones). */
static double row_error(const float *got, const float *want, size_t groups, size_t rows, size_t width,
                        const int32_t *real, int relative) {
    double e = 0.0, top = 1.0;
    for (size_t g = 0; g < groups; g++)
        for (size_t i = 0; i < rows; i++) {
            if (!real[i]) continue;
            const size_t at = (g * rows + i) * width;
            for (size_t k = 0; k < width; k++) {
                const double d = fabs((double)got[at + k] - want[at + k]);
                if (d != d) return d;
                if (d > e) e = d;
                if (fabs(want[at + k]) > top) top = fabs(want[at + k]);
            }
        }
    return relative ? e / top : e;
}

static int argmax(const float *x, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

typedef struct variant {
    const char *dir, *family;
    uint64_t digest; /* the outputs' digest both builds print: the same bits natively and in WebAssembly */
} variant;

static void test_variant(const variant *v) {
    char path[256];
    al_model *m = NULL;
    al_error err = {0};
    snprintf(path, sizeof path, "tests/golden/decoders/%s", v->dir);
    CHECK_MSG(al_model_load_dir(path, &m, &err) == AL_OK, "%s: %s", v->dir, err.message);
    if (!m) return;
    const al_config *c = al_model_config(m);
    CHECK_MSG(strcmp(al_arch_name(c->arch), v->family) == 0, "%s is %s", v->dir, al_arch_name(c->arch));
    CHECK(al_model_is_causal(m) && !al_model_has_mlm_head(m) && m->w.lm_head_w != NULL);
    golden_file g;
    snprintf(path, sizeof path, "tests/golden/decoders/%s/golden.safetensors", v->dir);
    if (!golden_open(&g, path)) {
        CHECK_MSG(0, "%s", path);
        al_model_free(m);
        return;
    }
    int64_t shape[8] = {0};
    size_t n = 0, n_hidden = 0, n_attn = 0, n_values = 0, n_logits = 0, n_prompt = 0, n_new = 0;
    free(golden_f32(&g, "input_ids", &n, shape));
    const int B = (int)shape[0], L = (int)shape[1];
    int32_t *ids = golden_i32(&g, "input_ids"), *mask = golden_i32(&g, "attention_mask");
    float *want_hidden = golden_f32(&g, "hidden_states", &n_hidden, NULL);
    float *want_attn = golden_f32(&g, "attentions", &n_attn, NULL);
    float *want_values = golden_f32(&g, "values", &n_values, NULL);
    float *want_logits = golden_f32(&g, "logits", &n_logits, NULL);
    float *prompt = golden_f32(&g, "prompt_ids", &n_prompt, NULL), *generated = golden_f32(&g, "generated_ids", &n_new, NULL);
    const size_t NL = (size_t)c->n_layers, H = (size_t)c->n_heads, D = (size_t)c->hidden_size, V = (size_t)c->vocab_size;
    const size_t dh = (size_t)c->head_dim;
    CHECK(ids && mask && want_hidden && want_attn && want_values && want_logits && prompt && generated);
    CHECK(n_hidden == (NL + 1) * B * L * D && n_attn == NL * B * H * L * L && n_logits == (size_t)B * L * V &&
          n_values == NL * B * H * L * dh);
    run r;
    CHECK_MSG(forward(m, B, L, ids, mask, NULL, 0, &r, &err) == AL_OK, "%s: %s", v->dir, err.message);
    if (ids && mask && want_hidden && want_attn && want_values && want_logits) {
        double eh = 0, ea = 0, ev = 0, el = 0;
        for (int b = 0; b < B; b++) { /* the real query rows of sequence b, every layer */
            const int32_t *real = mask + (size_t)b * L;
            for (size_t l = 0; l <= NL; l++) {
                const size_t at = (l * B + b) * L * D;
                double e = row_error(r.hidden + at, want_hidden + at, 1, (size_t)L, D, real, 1);
                if (e > eh || e != e) eh = e;
            }
            for (size_t l = 0; l < NL; l++) {
                const size_t at = ((l * B + b) * H) * L * L, atv = ((l * B + b) * H) * L * dh;
                double e = row_error(r.attn + at, want_attn + at, H, (size_t)L, (size_t)L, real, 0);
                if (e > ea || e != e) ea = e;
                e = row_error(r.values + atv, want_values + atv, H, (size_t)L, dh, real, 1);
                if (e > ev || e != e) ev = e;
            }
            double e = row_error(r.logits + (size_t)b * L * V, want_logits + (size_t)b * L * V, 1, (size_t)L, V, real, 1);
            if (e > el || e != e) el = e;
        }
        printf("%-18s %-8s %-5s golden error: hidden %.2e (rel)  attention %.2e  values %.2e (rel)  logits %.2e (rel)\n",
               v->dir, v->family, al_model_weights_dtype(m), eh, ea, ev, el);
        CHECK_MSG(eh <= TOL_HIDDEN, "%s hidden %.3g", v->dir, eh);
        CHECK_MSG(ea <= TOL_ATTN, "%s attentions %.3g", v->dir, ea);
        CHECK_MSG(ev <= TOL_HIDDEN, "%s values %.3g", v->dir, ev);
        CHECK_MSG(el <= TOL_LOGITS, "%s logits %.3g", v->dir, el);
        /* every key after the query is exactly 0, in every row */
        int future = 0;
        for (size_t lbh = 0; lbh < NL * B * H; lbh++)
            for (int i = 0; i < L; i++)
                for (int j = i + 1; j < L; j++) future += r.attn[(lbh * L + i) * L + j] != 0.0f;
        CHECK_MSG(future == 0, "%s: %d future keys read", v->dir, future);
    }
    const uint64_t dg = digest(&r, n_hidden, n_attn, n_values, n_logits);
    printf("%-18s outputs digest %016llx\n", v->dir, (unsigned long long)dg);
    CHECK_MSG(dg == v->digest, "%s: digest %016llx, pinned %016llx", v->dir, (unsigned long long)dg,
              (unsigned long long)v->digest);
    /* the same bits on every thread count and kernel path */
    for (int threads = 2; threads <= 3; threads++) {
        al_threadpool *pool = NULL;
        CHECK(al_threadpool_new(threads, &pool, &err) == AL_OK);
        run o;
        CHECK(forward(m, B, L, ids, mask, pool, 0, &o, &err) == AL_OK);
        CHECK_MSG(digest(&o, n_hidden, n_attn, n_values, n_logits) == dg, "%s: %d threads", v->dir, threads);
        run_free(&o);
        al_threadpool_free(pool);
    }
    const char *paths[8];
    const int n_paths = al_kernels_paths(paths, 8);
    const char *was = al_kernels_path();
    for (int i = 0; i < n_paths; i++) {
        CHECK(al_kernels_set_path(paths[i]) == 0);
        run o;
        CHECK(forward(m, B, L, ids, mask, NULL, 0, &o, &err) == AL_OK);
        CHECK_MSG(digest(&o, n_hidden, n_attn, n_values, n_logits) == dg, "%s: kernel path %s", v->dir, paths[i]);
        run_free(&o);
    }
    al_kernels_set_path(was);
    /* skipped pads: the real tokens' numbers unchanged, bit for bit */
    {
        run o;
        CHECK(forward(m, B, L, ids, mask, NULL, 1, &o, &err) == AL_OK);
        size_t differ = 0;
        for (int b = 0; b < B; b++)
            for (int i = 0; i < L; i++) {
                if (!mask[(size_t)b * L + i]) continue;
                for (size_t l = 0; l <= NL; l++) {
                    const size_t at = ((l * B + b) * L + i) * D;
                    differ += memcmp(o.hidden + at, r.hidden + at, D * sizeof(float)) != 0;
                }
                differ += memcmp(o.logits + ((size_t)b * L + i) * V, r.logits + ((size_t)b * L + i) * V, V * sizeof(float)) != 0;
            }
        CHECK_MSG(differ == 0, "%s: %zu real rows differ with skipped pads", v->dir, differ);
        run_free(&o);
    }
    /* the reference's greedy tokens, each by a whole forward of the text so far and by the key/value cache (the
     * prompt at once, then one token a step): the cache's logits and attention rows are the forward's bits */
    if (prompt && generated) {
        int32_t seq[128];
        const int P = (int)n_prompt;
        int len = P, ok = 1;
        for (int i = 0; i < len; i++) seq[i] = (int32_t)prompt[i];
        const int T_max = P + (int)n_new;
        float *logits = malloc(sizeof(float) * T_max * V), *step = malloc(sizeof(float) * T_max * V);
        float *attn = malloc(sizeof(float) * NL * H * T_max * T_max), *cattn = malloc(sizeof(float) * NL * H * T_max * T_max);
        al_kv_cache *kc = NULL;
        CHECK(al_kv_cache_new(m, T_max, &kc, &err) == AL_OK);
        CHECK(al_decode(m, kc, seq, P, NULL, step, cattn, &err) == AL_OK);
        size_t cache_differs = 0;
        for (size_t s = 0; s < n_new && ok && kc; s++) {
            al_forward_outputs out = {0};
            out.lm_logits = logits;
            out.attentions = attn;
            al_batch batch = {1, len, seq, NULL, NULL, NULL};
            CHECK(al_forward(m, &batch, NULL, &out, &err) == AL_OK);
            /* the cache's rows for the tokens it ran last: the prompt's P rows, then one */
            const int n_rows = s == 0 ? P : 1, first = len - n_rows;
            cache_differs += memcmp(step, logits + (size_t)first * V, sizeof(float) * n_rows * V) != 0;
            for (size_t lh = 0; lh < NL * H; lh++)
                for (int q = 0; q < n_rows; q++)
                    cache_differs += memcmp(cattn + (lh * n_rows + q) * len, attn + (lh * len + first + q) * len,
                                            sizeof(float) * len) != 0;
            const int next = argmax(logits + (size_t)(len - 1) * V, (int)V);
            ok = next == (int)generated[s];
            CHECK_MSG(ok, "%s: greedy token %zu is %d, the reference's %d", v->dir, s, next, (int)generated[s]);
            seq[len++] = next;
            if (s + 1 < n_new) CHECK(al_decode(m, kc, seq + len - 1, 1, NULL, step, cattn, &err) == AL_OK);
        }
        CHECK_MSG(cache_differs == 0, "%s: %zu cached rows differ from the forward's", v->dir, cache_differs);
        CHECK(al_kv_cache_length(kc) == len - 1);
        /* bad calls are refused by name */
        int32_t bad = (int32_t)V;
        CHECK(al_decode(m, kc, &bad, 1, NULL, NULL, NULL, &err) == AL_ERR_INVALID && strstr(err.message, "vocabulary"));
        CHECK(al_decode(m, kc, seq, T_max, NULL, NULL, NULL, &err) == AL_ERR_INVALID && strstr(err.message, "cache"));
        al_kv_cache_free(kc);
        free(logits), free(step), free(attn), free(cattn);
    }
    run_free(&r);
    free(ids), free(mask), free(want_hidden), free(want_attn), free(want_values), free(want_logits);
    free(prompt), free(generated);
    golden_close(&g);
    al_model_free(m);
}

/* The real configs parse to the shapes their models have; a config's unbuilt fields are refused by name. */
static void expect_config(const char *json, al_status want, const char *part) {
    al_config c;
    al_error err = {0};
    const al_status st = al_config_parse(json, strlen(json), "config.json", &c, &err);
    CHECK_MSG(st == want && (!part || strstr(err.message, part)), "%.120s -> %s: %s (want '%s')", json, al_status_name(st),
              err.message, part ? part : "");
}

static void test_configs(void) {
    static const struct {
        const char *file;
        const char *family;
        int layers, hidden, heads, kv_heads, head_dim, inter, vocab, positions, tied;
    } real[] = {
        {"gpt2/config.json", "gpt2", 12, 768, 12, 12, 64, 3072, 50257, 1024, 1},
        {"distilgpt2/config.json", "gpt2", 6, 768, 12, 12, 64, 3072, 50257, 1024, 1},
        {"qwen2.5-0.5b/config.json", "qwen2", 24, 896, 14, 2, 64, 4864, 151936, 32768, 1},
        {"tinyllama-1.1b/config.json", "llama", 22, 2048, 32, 4, 64, 5632, 32000, 2048, 0},
        {"smollm2-135m/config_to_dict.json", "llama", 30, 576, 9, 3, 64, 1536, 49152, 8192, 1},
    };
    for (size_t i = 0; i < sizeof real / sizeof real[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "../shared/decoders/%s", real[i].file);
        size_t size = 0;
        char *text = (char *)read_file(path, &size);
        if (!text) {
            printf("skip %s: not found (../shared/decoders is outside the repository)\n", path);
            continue;
        }
        al_config c;
        al_error err = {0};
        CHECK_MSG(al_config_parse(text, size, path, &c, &err) == AL_OK, "%s: %s", path, err.message);
        CHECK_MSG(!strcmp(al_arch_name(c.arch), real[i].family) && c.n_layers == real[i].layers &&
                  c.hidden_size == real[i].hidden && c.n_heads == real[i].heads && al_kv_heads(&c) == real[i].kv_heads &&
                  c.head_dim == real[i].head_dim && c.intermediate_size == real[i].inter && c.vocab_size == real[i].vocab &&
                  c.max_position_embeddings == real[i].positions && c.tie_word_embeddings == real[i].tied,
                  "%s: parsed as %s %d layers, %d hidden, %d/%d heads of %d, %d inner, V %d, P %d, tied %d", path,
                  al_arch_name(c.arch), c.n_layers, c.hidden_size, c.n_heads, al_kv_heads(&c), c.head_dim,
                  c.intermediate_size, c.vocab_size, c.max_position_embeddings, c.tie_word_embeddings);
        if (!strcmp(real[i].family, "qwen2")) CHECK(al_decoder(&c)->window == 0); /* use_sliding_window false */
        free(text);
    }
#define LLAMA "\"model_type\": \"llama\", \"vocab_size\": 100, \"hidden_size\": 32, \"num_hidden_layers\": 2, " \
              "\"num_attention_heads\": 4, \"intermediate_size\": 64"
    expect_config("{\"model_type\": \"mistral\", \"vocab_size\": 100}", AL_ERR_UNSUPPORTED, "model_type 'mistral'");
    expect_config("{\"model_type\": \"gemma\", \"vocab_size\": 100}", AL_ERR_UNSUPPORTED, "model_type 'gemma'");
    expect_config("{\"architectures\": [\"PhiForCausalLM\"], \"vocab_size\": 100}", AL_ERR_UNSUPPORTED, "PhiForCausalLM");
    expect_config("{\"model_type\": \"mixtral\", \"vocab_size\": 100}", AL_ERR_UNSUPPORTED, "mixtral");
    expect_config("{" LLAMA ", \"rope_scaling\": {\"type\": \"linear\", \"factor\": 2}}", AL_ERR_UNSUPPORTED, "'rope_scaling'");
    expect_config("{" LLAMA ", \"attention_bias\": true}", AL_ERR_UNSUPPORTED, "'attention_bias'");
    expect_config("{" LLAMA ", \"mlp_bias\": true}", AL_ERR_UNSUPPORTED, "'mlp_bias'");
    expect_config("{" LLAMA ", \"partial_rotary_factor\": 0.5}", AL_ERR_UNSUPPORTED, "'partial_rotary_factor'");
    expect_config("{" LLAMA ", \"num_key_value_heads\": 3}", AL_ERR_FORMAT, "'num_key_value_heads'");
    expect_config("{" LLAMA ", \"head_dim\": 7}", AL_ERR_FORMAT, "odd");
    expect_config("{" LLAMA ", \"is_causal\": false}", AL_ERR_UNSUPPORTED, "'is_causal'");
    expect_config("{\"model_type\": \"qwen2\", \"vocab_size\": 100, \"hidden_size\": 32, \"num_hidden_layers\": 2, "
                  "\"num_attention_heads\": 4, \"intermediate_size\": 64, \"use_mrope\": true}", AL_ERR_UNSUPPORTED, "'use_mrope'");
    expect_config("{\"model_type\": \"gpt2\", \"vocab_size\": 100, \"n_embd\": 32, \"n_layer\": 2, \"n_head\": 4, "
                  "\"scale_attn_by_inverse_layer_idx\": true}", AL_ERR_UNSUPPORTED, "'scale_attn_by_inverse_layer_idx'");
    expect_config("{\"model_type\": \"gpt2\", \"vocab_size\": 100, \"n_embd\": 32, \"n_layer\": 2, \"n_head\": 4, "
                  "\"activation_function\": \"swiglu\"}", AL_ERR_UNSUPPORTED, "'activation_function'");
    expect_config("{\"model_type\": \"gpt_neox\", \"vocab_size\": 100, \"hidden_size\": 32, \"num_hidden_layers\": 2, "
                  "\"num_attention_heads\": 2, \"intermediate_size\": 64, \"rotary_pct\": 0.1}", AL_ERR_UNSUPPORTED, "'rotary_pct'");
    expect_config("{\"model_type\": \"gpt_neox\", \"vocab_size\": 100, \"hidden_size\": 32, \"num_hidden_layers\": 2, "
                  "\"num_attention_heads\": 2, \"intermediate_size\": 64, \"rope_theta\": 500}", AL_ERR_UNSUPPORTED, "'rope_theta'");
#undef LLAMA
}

/* A vocabulary that does not fit the weights, and a prompt longer than the positions, are refused by name. */
static void test_bad_input(void) {
    al_model *m = NULL;
    al_error err = {0};
    CHECK(al_model_load_dir("tests/golden/decoders/gpt2", &m, &err) == AL_OK);
    if (!m) return;
    int32_t ids[40] = {0};
    al_batch b = {1, 40, ids, NULL, NULL, NULL}; /* 32 positions */
    al_forward_outputs out = {0};
    float *logits = malloc(sizeof(float) * 40 * 160);
    out.lm_logits = logits;
    CHECK(al_forward(m, &b, NULL, &out, &err) == AL_ERR_INVALID && strstr(err.message, "max_position_embeddings"));
    ids[3] = 160;
    b.seq_len = 8;
    CHECK(al_forward(m, &b, NULL, &out, &err) == AL_ERR_INVALID && strstr(err.message, "vocabulary"));
    al_kv_cache *kc = NULL;
    CHECK(al_kv_cache_new(m, 33, &kc, &err) == AL_ERR_INVALID && strstr(err.message, "max_position_embeddings"));
    free(logits);
    al_model_free(m);
    /* mismatched sizes: the config's vocabulary against the weights' */
    al_fileset *fs = al_fileset_new();
    CHECK(al_fileset_add_dir(fs, "tests/golden/decoders/llama_gqa", &err) == AL_OK);
    size_t size;
    const uint8_t *cfg = al_fileset_get(fs, "config.json", &size);
    char *edited = malloc(size + 16);
    memcpy(edited, cfg, size);
    edited[size] = 0;
    char *at = strstr(edited, "\"vocab_size\": 192");
    if (at) memcpy(at, "\"vocab_size\": 191", 17);
    al_fileset_add(fs, "config.json", (const uint8_t *)edited, strlen(edited), 1, &err);
    CHECK(al_model_load(fs, &m, &err) == AL_ERR_FORMAT && strstr(err.message, "embed_tokens.weight") &&
          strstr(err.message, "does not match config"));
    free(edited);
    al_fileset_free(fs);
}

/* A constant head of a decoder reads no later token: an all-ones constant becomes uniform over the prefix. */
static void test_constant_head_is_causal(void) {
    al_model *m = NULL;
    al_error err = {0};
    CHECK(al_model_load_dir("tests/golden/decoders/llama_gqa", &m, &err) == AL_OK);
    if (!m) return;
    const al_config *c = al_model_config(m);
    enum { L = 6 };
    const int NL = c->n_layers, H = c->n_heads;
    int32_t ids[L] = {5, 9, 17, 33, 2, 8};
    float ones[L * L];
    for (int i = 0; i < L * L; i++) ones[i] = 1.0f;
    al_head_policy *pol = calloc((size_t)NL * H, sizeof *pol);
    pol[1].mode = AL_HEAD_CONSTANT, pol[1].constant = ones; /* layer 0, head 1 */
    pol[H + 2].mode = AL_HEAD_MIX, pol[H + 2].constant = ones, pol[H + 2].lambda = 0.5f; /* layer 1, head 2 */
    float *attn = malloc(sizeof(float) * (size_t)NL * H * L * L);
    al_forward_outputs out = {0};
    out.attentions = attn;
    al_batch b = {1, L, ids, NULL, NULL, NULL};
    al_forward_params p = al_forward_default_params();
    p.policies = pol;
    CHECK(al_forward(m, &b, &p, &out, &err) == AL_OK);
    double worst = 0.0;
    int future = 0;
    for (int i = 0; i < L; i++)
        for (int j = 0; j < L; j++) {
            const float a = attn[(size_t)1 * L * L + i * L + j], mix = attn[((size_t)(H + 2)) * L * L + i * L + j];
            if (j > i) future += a != 0.0f || mix != 0.0f;
            else worst = fmax(worst, fabs(a - 1.0 / (i + 1)));
        }
    CHECK_MSG(future == 0 && worst < 1e-6, "constant head: %d future entries, uniform within %.3g", future, worst);
    free(attn), free(pol);
    al_model_free(m);
}

int main(void) {
    test_configs();
    test_constant_head_is_causal();
    test_bad_input();
    static const variant variants[] = {
        {"gpt2", "gpt2", 0x6ef1c8cc6fe2cc26ull},
        {"gpt2_prefixed", "gpt2", 0x397ef58e11744fa8ull},
        {"llama_gqa", "llama", 0x6ac4d918c4011723ull},
        {"llama_untied", "llama", 0x1392654fba7665cdull},
        {"qwen2", "qwen2", 0xadd42b4ccc9e8bfeull},
        {"qwen2_window", "qwen2", 0xad32e32aee379420ull},
        {"pythia", "gpt_neox", 0x1d70690ecced32bfull},
        {"pythia_sequential", "gpt_neox", 0xdee87b5b34679016ull},
    };
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++) test_variant(&variants[i]);
    return check_summary("decoders");
}
