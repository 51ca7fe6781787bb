/* test_deberta.c: DeBERTa-v2/v3 (docs/families.md, "DeBERTa") beyond test_golden.c's plain forward:
 *   - the real configs of microsoft/deberta-v3-base and -large (../shared/families, or AL_FAMILIES) parse with
 *     their disentangled-attention fields, through al_config_parse and the check_config op;
 *   - what is not built is refused naming the field: DeBERTa v1, conv_kernel_size, share_att_key false,
 *     pos_att_type p2p, norm_rel_ebd other than layer_norm, a single position bucket;
 *   - per-head policies (CONSTANT, MIX, ZERO) against tests/golden/deberta_v3/hooks.safetensors (the float64
 *     oracle of tests/golden/make_deberta_golden.py);
 *   - the newer MLM head names (lm_predictions.lm_head) load and give the legacy head's bits;
 *   - 1, 2 and 3 threads give the same bits;
 *   - the lambda ranking's training pass (a frozen encoder): its forward equals al_forward's and its lambda
 *     gradients match finite differences; weight gradients are refused by name;
 *   - a random deberta-v3-shaped model written to build/ with the real spm.model beside it loads with that
 *     tokenizer, and the info, tokenize and attention ops run on it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "fnv_digest.h"
#include "core/rng.h"
#include "core/threadpool.h"
#include "golden_file.h"
#include "model/family_params.h"
#include "lambda_fd.h"
#include "read_file.h"
#include "train/pretrain.h"
#include "train/train.h"

#define DEBERTA_ARCH ((al_arch)4) /* deberta-v2's registry index (src/model/families.c) */

static char families[512];

static const char *fam(const char *rel) {
    static char buf[4][768];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", families, rel);
    return buf[k];
}

/* tests/golden/deberta_v3/config.json with one field set to a JSON value; architectures names a DeBERTa v1
 * class when model_type is "deberta", as v1's config.json does. */
static char *config_with(const char *field, const char *json_value) {
    size_t size = 0;
    char *text = (char *)read_file("tests/golden/deberta_v3/config.json", &size);
    cJSON *cfg = cJSON_ParseWithLength(text, size);
    free(text);
    if (!cfg) return NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(cfg, field);
    cJSON_AddItemToObject(cfg, field, cJSON_Parse(json_value));
    if (strcmp(json_value, "\"deberta\"") == 0)
        cJSON_ReplaceItemInObject(cfg, "architectures", cJSON_Parse("[\"DebertaForMaskedLM\"]"));
    char *out = cJSON_PrintUnformatted(cfg);
    cJSON_Delete(cfg);
    return out;
}

static void expect_refused(const char *field, const char *value, const char *needle) {
    char *text = config_with(field, value);
    al_config c;
    al_error err = {0};
    al_status st = al_config_parse(text, strlen(text), "config.json", &c, &err);
    CHECK_MSG(st == AL_ERR_UNSUPPORTED || st == AL_ERR_FORMAT, "%s = %s was accepted", field, value);
    CHECK_MSG(strstr(err.message, needle) != NULL, "%s = %s: '%s' lacks '%s'", field, value, err.message, needle);
    printf("refused %s = %s: %s\n", field, value, err.message);
    free(text);
}

static void test_config_fields(void) {
    char *text = config_with("pos_att_type", "[\"c2p\", \"p2c\"]");
    al_config c;
    al_error err = {0};
    CHECK_MSG(al_config_parse(text, strlen(text), "config.json", &c, &err) == AL_OK, "%s", err.message);
    CHECK(c.arch == DEBERTA_ARCH && al_deberta(&c)->pos_att == 3 && al_deberta(&c)->rel_span == 8 && al_deberta(&c)->position_buckets == 8);
    CHECK(al_deberta(&c)->max_relative_positions == 32 && !al_deberta(&c)->position_biased_input && al_deberta(&c)->norm_rel_ebd && c.type_vocab_size == 0);
    free(text);
    text = config_with("pos_att_type", "\"c2p\"");
    CHECK(al_config_parse(text, strlen(text), "config.json", &c, &err) == AL_OK && al_deberta(&c)->pos_att == 1);
    free(text);

    expect_refused("model_type", "\"deberta\"", "model_type 'deberta' is not supported");
    expect_refused("conv_kernel_size", "3", "'conv_kernel_size'");
    expect_refused("share_att_key", "false", "'share_att_key'");
    expect_refused("pos_att_type", "\"p2c|p2p\"", "'pos_att_type' value 'p2p'");
    expect_refused("pos_att_type", "[\"c2p\", 3]", "'pos_att_type'");
    expect_refused("norm_rel_ebd", "\"batch_norm\"", "'norm_rel_ebd'");
    expect_refused("position_buckets", "1", "'position_buckets'");
}

/* The published configs: fields as attnlab reads them, and the check_config op's reply. */
static void test_real_configs(void) {
    static const struct { const char *file; int hidden, layers; } cases[] = {
        {"deberta-v3/config.json", 768, 6}, {"deberta-v3-large/config.json", 1024, 24}};
    al_session *s = al_session_new();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t size = 0;
        char *text = (char *)read_file(fam(cases[i].file), &size);
        if (!text) {
            printf("skipped %s: not found (set AL_FAMILIES to the families' folder)\n", fam(cases[i].file));
            continue;
        }
        al_config c;
        al_error err = {0};
        CHECK_MSG(al_config_parse(text, size, cases[i].file, &c, &err) == AL_OK, "%s", err.message);
        CHECK(c.arch == DEBERTA_ARCH && c.hidden_size == cases[i].hidden && c.n_layers == cases[i].layers);
        CHECK(al_deberta(&c)->rel_span == 256 && al_deberta(&c)->position_buckets == 256 && al_deberta(&c)->max_relative_positions == 512 && al_deberta(&c)->pos_att == 3);
        CHECK(!al_deberta(&c)->position_biased_input && al_deberta(&c)->norm_rel_ebd && c.type_vocab_size == 0 && c.vocab_size == 128100);
        CHECK(c.layer_norm_eps == 1e-7f && c.act == AL_ACT_GELU);
        cJSON *req = cJSON_CreateObject();
        cJSON_AddStringToObject(req, "op", "check_config");
        cJSON_AddStringToObject(req, "config", text);
        char *req_text = cJSON_PrintUnformatted(req);
        al_reply reply;
        CHECK(al_session_run(s, req_text, NULL, &reply) == AL_OK);
        cJSON *r = cJSON_Parse(reply.json);
        const char *arch = cJSON_GetStringValue(cJSON_GetObjectItem(r, "arch"));
        CHECK_MSG(arch && strcmp(arch, "deberta-v2") == 0, "%s", reply.json);
        printf("%s: check_config arch %s\n", cases[i].file, arch ? arch : "?");
        cJSON_Delete(r);
        al_reply_free(&reply);
        free(req_text);
        cJSON_Delete(req);
        free(text);
    }
    al_session_free(s);
    /* microsoft's deberta-v2-xlarge config (no model_type in the original repository's file) */
    size_t size = 0;
    char *text = (char *)read_file(fam("deberta-v2-microsoft/deberta_xlarge.json"), &size);
    if (text) {
        cJSON *cfg = cJSON_ParseWithLength(text, size);
        cJSON_AddStringToObject(cfg, "model_type", "deberta-v2");
        char *out = cJSON_PrintUnformatted(cfg);
        al_config c;
        al_error err = {0};
        CHECK(al_config_parse(out, strlen(out), "deberta_xlarge.json", &c, &err) == AL_ERR_UNSUPPORTED);
        CHECK_MSG(strstr(err.message, "'conv_kernel_size' = 3"), "%s", err.message);
        cJSON_free(out);
        cJSON_Delete(cfg);
        free(text);
    }
}

static float *forward_all(const al_model *m, const al_batch *batch, const al_head_policy *pol, al_threadpool *pool,
                          size_t *n_out, float **attn, size_t *n_attn) {
    const al_config *c = al_model_config(m);
    const size_t B = (size_t)batch->n_seqs, L = (size_t)batch->seq_len;
    const size_t nh = (size_t)(c->n_layers + 1) * B * L * c->hidden_size;
    const size_t na = (size_t)c->n_layers * B * c->n_heads * L * L, nl = B * L * (size_t)c->vocab_size;
    float *all = calloc(nh + na + nl, sizeof(float));
    al_forward_outputs out = {0};
    out.hidden_states = all;
    out.attentions = all + nh;
    out.mlm_logits = al_model_has_mlm_head(m) ? all + nh + na : NULL;
    al_forward_params p = al_forward_default_params();
    p.policies = pol;
    p.pool = pool;
    al_error err = {0};
    CHECK_MSG(al_forward(m, batch, &p, &out, &err) == AL_OK, "%s", err.message);
    *n_out = nh + na + nl;
    if (attn) *attn = all + nh, *n_attn = na;
    return all;
}

static void test_hooks_threads_lmhead(void) {
    al_model *m = NULL, *lm = NULL;
    al_error err = {0};
    CHECK_MSG(al_model_load_dir("tests/golden/deberta_v3", &m, &err) == AL_OK, "%s", err.message);
    CHECK_MSG(al_model_load_dir("tests/golden/deberta_v3_lmhead", &lm, &err) == AL_OK, "%s", err.message);
    golden_file g;
    if (!m || !lm || !golden_open(&g, "tests/golden/deberta_v3/hooks.safetensors")) goto done;
    CHECK(al_model_has_mlm_head(lm) && al_model_has_mlm_head(m));
    const al_config *c = al_model_config(m);
    int64_t shape[8] = {0};
    free(golden_f32(&g, "input_ids", NULL, shape));
    const int B = (int)shape[0], L = (int)shape[1], NL = c->n_layers, H = c->n_heads;
    int32_t *ids = golden_i32(&g, "input_ids"), *mask = golden_i32(&g, "attention_mask");
    float *modes = golden_f32(&g, "modes", NULL, NULL), *lambdas = golden_f32(&g, "lambdas", NULL, NULL);
    float *consts = golden_f32(&g, "constants", NULL, NULL);
    size_t n_hidden = 0, n_attn = 0, n_logits = 0;
    float *want_hidden = golden_f32(&g, "hidden_states", &n_hidden, NULL);
    float *want_attn = golden_f32(&g, "attentions", &n_attn, NULL);
    float *want_logits = golden_f32(&g, "mlm_logits", &n_logits, NULL);
    CHECK(ids && mask && modes && lambdas && consts && want_hidden && want_attn && want_logits);
    al_head_policy *pol = calloc((size_t)NL * H, sizeof *pol);
    for (int i = 0; i < NL * H; i++) {
        pol[i].mode = (al_head_mode)(int)modes[i];
        pol[i].lambda = lambdas[i];
        pol[i].constant = consts + (size_t)i * L * L;
    }
    al_batch batch = {B, L, ids, mask, NULL, NULL};
    size_t n = 0, na = 0;
    float *attn = NULL;
    float *got = forward_all(m, &batch, pol, NULL, &n, &attn, &na);
    const double e_hidden = max_abs_diff(got, want_hidden, n_hidden), e_attn = max_abs_diff(attn, want_attn, n_attn);
    const double e_logits = max_abs_diff(attn + na, want_logits, n_logits);
    printf("deberta_v3 hooks (constant, mix, zero heads): max abs error hidden %.2e attentions %.2e mlm_logits %.2e\n",
           e_hidden, e_attn, e_logits);
    CHECK(e_hidden <= 1e-4 && e_attn <= 1e-5 && e_logits <= 1e-4);

    /* the same bits on 2 and 3 threads, with and without policies */
    for (int with_pol = 0; with_pol < 2; with_pol++) {
        size_t n1 = 0;
        float *one = forward_all(m, &batch, with_pol ? pol : NULL, NULL, &n1, NULL, NULL);
        for (int threads = 2; threads <= 3; threads++) {
            al_threadpool *pool = NULL;
            CHECK(al_threadpool_new(threads, &pool, &err) == AL_OK);
            al_threadpool_split_all(pool, 1);
            size_t nt = 0;
            float *t = forward_all(m, &batch, with_pol ? pol : NULL, pool, &nt, NULL, NULL);
            CHECK_MSG(nt == n1 && memcmp(t, one, n1 * sizeof(float)) == 0, "%d threads differ from one", threads);
            free(t);
            al_threadpool_free(pool);
        }
        /* printed so the native and WASM builds' bits can be compared */
        /* started one digit short of FNV's offset basis (1469598103934665603): kept, so the digest printed
         * here stays the one earlier logs of both builds show */
        const uint64_t h = fnv_digest(1469598103934665603ull, one, n1);
        printf("deberta_v3 forward outputs (%s): FNV-1a %016llx\n", with_pol ? "with policies" : "standard",
               (unsigned long long)h);
        /* lm_predictions.lm_head names: the same weights, the same bits */
        size_t nl = 0;
        float *l2 = forward_all(lm, &batch, with_pol ? pol : NULL, NULL, &nl, NULL, NULL);
        CHECK_MSG(nl == n1 && memcmp(l2, one, n1 * sizeof(float)) == 0, "%s", "lm_predictions head differs");
        free(l2);
        free(one);
    }
    free(got);
    free(pol);
    free(ids), free(mask), free(modes), free(lambdas), free(consts);
    free(want_hidden), free(want_attn), free(want_logits);
    golden_close(&g);
done:
    al_model_free(m);
    al_model_free(lm);
}

/* The lambda ranking's training pass (a frozen encoder): its forward equals al_forward's, and the MIX heads'
 * lambda-logit gradients (through both position terms, the static layer's renormalisation and the MLM loss)
 * match central finite differences. Weight gradients are refused by name. */
static void test_train(void) {
    al_model *m = NULL;
    al_error err = {0};
    CHECK(al_model_load_dir("tests/golden/deberta_v3", &m, &err) == AL_OK);
    if (!m) return;
    al_train_options opt = al_train_default_options();
    al_train_ctx *ctx = NULL;
    CHECK(al_train_ctx_new(m, 3, 24, &opt, &ctx, &err) == AL_ERR_UNSUPPORTED && !ctx);
    CHECK_MSG(strstr(err.message, "weight gradients") && strstr(err.message, "deberta-v2"), "%s", err.message);
    printf("weight gradients refused: %s\n", err.message);

    opt.weight_grads = 0;
    opt.training = 0; /* no dropout: the forward is al_forward's, and finite differences see the same function */
    CHECK_MSG(al_train_ctx_new(m, 3, 24, &opt, &ctx, &err) == AL_OK, "%s", err.message);
    golden_file g;
    if (!ctx || !golden_open(&g, "tests/golden/deberta_v3/golden.safetensors")) goto done;
    const al_config *c = al_model_config(m);
    const int B = 3, L = 24, NL = c->n_layers, H = c->n_heads, NH = NL * H;
    int32_t *ids = golden_i32(&g, "input_ids"), *mask = golden_i32(&g, "attention_mask");
    int32_t labels[3 * 24];
    for (int t = 0; t < B * L; t++) labels[t] = mask[t] && t % 3 == 1 ? (t * 7 + 5) % c->vocab_size : AL_IGNORE_INDEX;
    float *C = malloc(sizeof(float) * L * L);
    al_rng r;
    al_rng_seed(&r, 3);
    for (int i = 0; i < L * L; i++) C[i] = 0.05f + al_rng_uniform(&r);
    al_head_policy pol[8];
    static const int modes[8] = {AL_HEAD_MIX, AL_HEAD_CONSTANT, AL_HEAD_MIX, AL_HEAD_STANDARD,
                                 AL_HEAD_MIX, AL_HEAD_STANDARD, AL_HEAD_MIX, AL_HEAD_STANDARD};
    static const float lambdas[8] = {0.3f, 0, 0.6f, 0, 0.5f, 0, 0.2f, 0};
    for (int i = 0; i < NH && i < 8; i++)
        pol[i] = (al_head_policy){(al_head_mode)modes[i], lambdas[i], modes[i] == AL_HEAD_STANDARD ? NULL : C};
    CHECK(NH == 8 && al_train_set_policies(ctx, pol, &err) == AL_OK);
    al_batch batch = {B, L, ids, mask, NULL, NULL};

    /* the training forward against the inference forward, lambda = sigmoid(theta) */
    al_head_policy inf[8];
    for (int i = 0; i < NH; i++) {
        inf[i] = pol[i];
        if (pol[i].mode == AL_HEAD_MIX) inf[i].lambda = 1.0f / (1.0f + expf(-al_train_lambda_logits(ctx)[i]));
    }
    size_t n_all = 0;
    float *all = forward_all(m, &batch, inf, NULL, &n_all, NULL, NULL);
    lambda_fd_loss(ctx, &batch, labels);
    const size_t n_layer = (size_t)B * L * c->hidden_size;
    const double e_fwd = max_abs_diff(al_train_hidden(ctx, NL), all + (size_t)NL * n_layer, n_layer);
    CHECK_MSG(e_fwd < 1e-5, "training forward differs from al_forward by %.3g", e_fwd);
    free(all);

    const lambda_fd_result fd = lambda_fd_check(ctx, &batch, labels, pol, NH, 5e-2f);
    printf("training forward vs al_forward %.2e; %d lambda logits against finite differences: rel err %.2e "
           "(max |dtheta| %.2e, loss %.4f)\n",
           e_fwd, fd.n_checked, fd.worst, fd.scale, (double)fd.loss);
    free(C), free(ids), free(mask);
    golden_close(&g);
done:
    al_train_ctx_free(ctx);
    al_model_free(m);
}

static int copy_file(const char *from, const char *to) {
    size_t size = 0;
    uint8_t *data = read_file(from, &size);
    if (!data) return 0;
    FILE *f = fopen(to, "wb");
    int ok = f && fwrite(data, 1, size, f) == size;
    if (f) ok &= fclose(f) == 0;
    free(data);
    return ok;
}

static cJSON *run_op(al_session *s, const char *req, al_reply *reply) {
    al_status st = al_session_run(s, req, NULL, reply);
    CHECK_MSG(st == AL_OK, "%s: %s", req, reply->json);
    return cJSON_Parse(reply->json);
}

/* A random model of deberta-v3-base's config (sizes shrunk, the real vocabulary) in build/, with the real
 * tokenizer files beside it. */
static void test_spm_model_dir(void) {
    size_t size = 0;
    char *text = (char *)read_file(fam("deberta-v3/config.json"), &size);
    uint8_t *spm = read_file(fam("deberta-v3/spm.model"), &size);
    if (!text || !spm) {
        printf("skipped the spm.model directory: no %s\n", fam("deberta-v3"));
        free(text), free(spm);
        return;
    }
    free(spm);
    cJSON *cfg = cJSON_Parse(text);
    free(text);
    static const struct { const char *field; int value; } shrink[] = {
        {"hidden_size", 32}, {"num_attention_heads", 4}, {"num_hidden_layers", 2}, {"intermediate_size", 64}};
    for (int i = 0; i < 4; i++) cJSON_ReplaceItemInObject(cfg, shrink[i].field, cJSON_CreateNumber(shrink[i].value));
    char *cfg_text = cJSON_Print(cfg);
    cJSON_Delete(cfg);
    al_config c;
    al_error err = {0};
    al_model *m = NULL;
    const char *dir = "build/deberta_v3_random";
    CHECK(al_make_dirs(dir) == 0);
    CHECK_MSG(al_config_parse(cfg_text, strlen(cfg_text), "config.json", &c, &err) == AL_OK, "%s", err.message);
    CHECK_MSG(al_model_new_random(&c, 5, 1, &m, &err) == AL_OK, "%s", err.message);
    CHECK_MSG(m && al_export_weights(dir, m, "F32", 0, &err) == AL_OK, "%s", err.message);
    al_model_free(m);
    char path[256];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(cfg_text, f) >= 0);
    if (f) fclose(f);
    free(cfg_text);
    static const char *const tok_files[] = {"spm.model", "tokenizer_config.json", "special_tokens_map.json",
                                            "added_tokens.json"};
    for (int i = 0; i < 4; i++) {
        char from[64];
        snprintf(from, sizeof from, "deberta-v3/%s", tok_files[i]);
        snprintf(path, sizeof path, "%s/%s", dir, tok_files[i]);
        CHECK_MSG(copy_file(fam(from), path), "%s", tok_files[i]);
    }

    al_session *s = al_session_new();
    al_reply reply;
    char req[512];
    snprintf(req, sizeof req, "{\"op\":\"load_model\",\"model\":\"d\",\"path\":\"%s\"}", dir);
    cJSON *r = run_op(s, req, &reply);
    const char *arch = cJSON_GetStringValue(cJSON_GetObjectItem(r, "arch"));
    CHECK_MSG(arch && strcmp(arch, "deberta-v2") == 0, "%s", reply.json);
    cJSON_Delete(r);
    al_reply_free(&reply);
    r = run_op(s, "{\"op\":\"info\",\"model\":\"d\"}", &reply);
    /* the SentencePiece Unigram of spm.model, and no file left unused */
    const cJSON *tok = cJSON_GetObjectItem(r, "tokenizer");
    const char *kind = cJSON_GetStringValue(cJSON_GetObjectItem(tok, "kind"));
    CHECK_MSG(kind && strcmp(kind, "unigram") == 0 && cJSON_GetArraySize(cJSON_GetObjectItem(r, "unused_files")) == 0,
              "info: %s", reply.json);
    const cJSON *cfg_reply = cJSON_GetObjectItem(r, "config");
    CHECK_MSG(cJSON_GetObjectItem(cfg_reply, "position_buckets")->valueint == 256 &&
                  cJSON_GetArraySize(cJSON_GetObjectItem(cfg_reply, "pos_att_type")) == 2 &&
                  cJSON_IsFalse(cJSON_GetObjectItem(cfg_reply, "position_biased_input")),
              "info: %s", reply.json);
    cJSON_Delete(r);
    al_reply_free(&reply);
    /* the ids Hugging Face's tokenizer gives (../shared/families/testvectors, deberta-v3-base) */
    r = run_op(s, "{\"op\":\"tokenize\",\"model\":\"d\",\"text\":\"hello world\"}", &reply);
    const cJSON *ids = cJSON_GetObjectItem(r, "ids");
    static const int want[] = {1, 12018, 447, 2};
    int same = cJSON_GetArraySize(ids) == 4;
    for (int i = 0; same && i < 4; i++) same = cJSON_GetArrayItem(ids, i)->valueint == want[i];
    CHECK_MSG(same, "tokenize: %s", reply.json);
    cJSON_Delete(r);
    al_reply_free(&reply);
    r = run_op(s, "{\"op\":\"attention\",\"model\":\"d\",\"texts\":[\"hello world\",\"The quick brown fox jumps.\"],"
                  "\"outputs\":[\"attentions\",\"mlm_logits\"]}",
               &reply);
    const al_tensor_out *att = NULL;
    for (int i = 0; i < reply.n_tensors; i++)
        if (strcmp(reply.tensors[i].name, "attentions") == 0) att = &reply.tensors[i];
    CHECK(att && att->ndim == 5 && att->shape[0] == 2 && att->shape[2] == 4);
    if (att) {
        /* every real query's row sums to 1, pad queries' rows are 0 */
        const int Bn = (int)att->shape[1], L = (int)att->shape[3];
        const float *p = att->data;
        int bad = 0;
        for (size_t row = 0; row < (size_t)2 * Bn * 4 * L; row++) {
            double sum = 0;
            for (int k = 0; k < L; k++) sum += p[row * L + k];
            bad += !(fabs(sum - 1.0) < 1e-5 || sum == 0.0);
        }
        CHECK_MSG(bad == 0, "%d attention rows sum to neither 1 nor 0", bad);
        printf("spm.model directory: arch deberta-v2, 'hello world' -> 1 12018 447 2, attention [%d, %d, 4, %d, %d]\n",
               (int)att->shape[0], Bn, L, L);
    }
    cJSON_Delete(r);
    al_reply_free(&reply);
    al_session_free(s);
}

/* A copy of a golden DeBERTa directory in build/ with config.json's fields changed: set (a JSON value) or removed
 * (value NULL). Returns the directory. */
static const char *config_variant(const char *from, const char *dir, const char *const *fields, const char *const *values,
                                  int n) {
    char path[256], src[256];
    snprintf(src, sizeof src, "%s/config.json", from);
    size_t size = 0;
    char *text = (char *)read_file(src, &size);
    cJSON *cfg = text ? cJSON_Parse(text) : NULL;
    free(text);
    CHECK(cfg && al_make_dirs(dir) == 0);
    for (int i = 0; cfg && i < n; i++) {
        cJSON_DeleteItemFromObject(cfg, fields[i]);
        if (values[i]) cJSON_AddItemToObject(cfg, fields[i], cJSON_Parse(values[i]));
    }
    char *out = cJSON_Print(cfg);
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f && out && fputs(out, f) >= 0);
    if (f) fclose(f);
    cJSON_free(out), cJSON_Delete(cfg);
    snprintf(src, sizeof src, "%s/model.safetensors", from);
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    CHECK(copy_file(src, path));
    return dir;
}

/* relative_attention false (Hugging Face's default) or absent: no position terms, the content scores alone
 * divided by sqrt(head_dim * (1 + the pos_att_type terms)), as DisentangledSelfAttention scales them whatever
 * relative_attention says. Layer 0's attention against a float64 computation from the embeddings' output and
 * the layer's query and key weights. */
static void test_no_relative(void) {
    static const char *const fields[2] = {"relative_attention", "max_position_embeddings"};
    for (int absent = 0; absent < 2; absent++) {
        const char *values[2] = {absent ? NULL : "false", "32"};
        const char *dir = config_variant("tests/golden/deberta_v3", absent ? "build/deberta_no_relative_absent" : "build/deberta_no_relative",
                                         fields, values, 1);
        al_model *m = NULL;
        al_error err = {0};
        CHECK_MSG(al_model_load_dir(dir, &m, &err) == AL_OK, "%s", err.message);
        if (!m) continue;
        const al_config *c = al_model_config(m);
        CHECK(al_deberta(c)->rel_span == 0);
        enum { L = 6 };
        int32_t ids[L] = {1, 17, 5, 42, 9, 2}, mask[L] = {1, 1, 1, 1, 1, 0};
        al_batch batch = {1, L, ids, mask, NULL, NULL};
        size_t n = 0, na = 0;
        float *attn = NULL;
        float *all = forward_all(m, &batch, NULL, NULL, &n, &attn, &na);
        golden_file g;
        CHECK(golden_open(&g, "tests/golden/deberta_v3/model.safetensors"));
        float *qw = golden_f32(&g, "deberta.encoder.layer.0.attention.self.query_proj.weight", NULL, NULL);
        float *qb = golden_f32(&g, "deberta.encoder.layer.0.attention.self.query_proj.bias", NULL, NULL);
        float *kw = golden_f32(&g, "deberta.encoder.layer.0.attention.self.key_proj.weight", NULL, NULL);
        float *kb = golden_f32(&g, "deberta.encoder.layer.0.attention.self.key_proj.bias", NULL, NULL);
        CHECK_MSG(qw && qb && kw && kb, "%s", "layer 0's query and key weights");
        const int D = c->hidden_size, H = c->n_heads, dh = D / H;
        double worst = 0.0;
        for (int h = 0; qw && qb && kw && kb && h < H; h++)
            for (int i = 0; i < L - 1; i++) {
                double score[L], mx = -1e300, sum = 0.0;
                for (int j = 0; j < L - 1; j++) {
                    double dot = 0.0;
                    for (int e = h * dh; e < (h + 1) * dh; e++) {
                        double q = qb[e], k = kb[e];
                        for (int x = 0; x < D; x++) q += (double)all[(size_t)i * D + x] * qw[(size_t)e * D + x];
                        for (int x = 0; x < D; x++) k += (double)all[(size_t)j * D + x] * kw[(size_t)e * D + x];
                        dot += q * k;
                    }
                    score[j] = dot / sqrt(dh * 3.0); /* c2p and p2c named: 1 + 2 terms in the scale */
                    mx = score[j] > mx ? score[j] : mx;
                }
                for (int j = 0; j < L - 1; j++) sum += exp(score[j] - mx);
                for (int j = 0; j < L; j++) {
                    const double want = j < L - 1 ? exp(score[j] - mx) / sum : 0.0;
                    const double d = fabs(want - attn[((size_t)h * L + i) * L + j]);
                    worst = d > worst ? d : worst;
                }
            }
        printf("deberta relative_attention %s: layer 0 attention within %.2e of the float64 content-only scores\n",
               absent ? "absent" : "false", worst);
        CHECK(worst <= 1e-5);
        int finite = 1;
        for (size_t i = 0; i < n; i++) finite &= isfinite(all[i]) != 0;
        CHECK(finite);
        free(qw), free(qb), free(kw), free(kb), free(all);
        golden_close(&g);
        al_model_free(m);
    }
}

/* legacy false (lm_predictions.lm_head) with tie_word_embeddings false: that head has no decoder of its own and
 * Hugging Face multiplies by the word embeddings whatever the tie says, so it loads and gives the tied bits. */
static void test_lmhead_untied(void) {
    static const char *const fields[2] = {"tie_word_embeddings", "legacy"};
    static const char *const values[2] = {"false", "false"};
    const char *dir = config_variant("tests/golden/deberta_v3_lmhead", "build/deberta_lmhead_untied", fields, values, 2);
    al_model *tied = NULL, *untied = NULL;
    al_error err = {0};
    CHECK_MSG(al_model_load_dir("tests/golden/deberta_v3_lmhead", &tied, &err) == AL_OK, "%s", err.message);
    CHECK_MSG(al_model_load_dir(dir, &untied, &err) == AL_OK, "untied lm_predictions head: %s", err.message);
    if (tied && untied) {
        CHECK(al_model_has_mlm_head(untied));
        int32_t ids[5] = {1, 17, 5, 42, 2}, mask[5] = {1, 1, 1, 1, 1};
        al_batch batch = {1, 5, ids, mask, NULL, NULL};
        size_t n1 = 0, n2 = 0;
        float *a = forward_all(tied, &batch, NULL, NULL, &n1, NULL, NULL), *b = forward_all(untied, &batch, NULL, NULL, &n2, NULL, NULL);
        CHECK_MSG(n1 == n2 && memcmp(a, b, n1 * sizeof(float)) == 0, "%s", "untied lm_predictions head differs from the tied one");
        free(a), free(b);
    }
    al_model_free(tied), al_model_free(untied);
}

int main(void) {
    const char *env = getenv("AL_FAMILIES");
    snprintf(families, sizeof families, "%s", env && env[0] ? env : "../shared/families");
    test_config_fields();
    test_real_configs();
    test_hooks_threads_lmhead();
    test_train();
    test_spm_model_dir();
    test_no_relative();
    test_lmhead_untied();
    return check_summary("deberta");
}
