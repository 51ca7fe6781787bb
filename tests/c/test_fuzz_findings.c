/* test_fuzz_findings.c: the inputs a coverage-guided fuzzer found (tests/fixtures/fuzz/<harness>/, see
 * docs/fuzzing.md), each loaded the way a user hands it to attnlab: a clear error naming the file and the
 * field, or, for a tokenizer template that is legal in Hugging Face tokenizers, the right output. Also the
 * ranges of every pretraining config field. Runs under ASan + UBSan (scripts/test.sh) and in WASM. */
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "train/pretrain.h"

#define FUZZ_DIR "tests/fixtures/fuzz/"

static char *slurp(const char *path, size_t *len) {
    char *text = NULL;
    al_error err;
    if (al_read_file(path, &text, len, &err) != AL_OK) {
        CHECK_MSG(0, "%s", err.message);
        return NULL;
    }
    return text;
}

static int has(const char *message, const char *part) {
    if (strstr(message, part)) return 1;
    fprintf(stderr, "  message '%s' lacks '%s'\n", message, part);
    return 0;
}

/* F1: a pytorch_model.bin whose data.pkl is stored with an unsupported compression method. The lookup of its
 * bytes fails; the reader used to form a pointer from the missing bytes before it looked at the status. */
static void f1_compressed_pickle(void) {
    size_t cfg_len = 0, bin_len = 0;
    char *cfg = slurp("tests/fixtures/bert_bin/config.json", &cfg_len);
    char *bin = slurp(FUZZ_DIR "torch_bin/F1-pytorch_model.bin", &bin_len);
    if (!cfg || !bin) return;
    al_fileset *fs = al_fileset_new();
    al_error err;
    CHECK(al_fileset_add(fs, "config.json", cfg, cfg_len, 1, &err) == AL_OK);
    CHECK(al_fileset_add(fs, "pytorch_model.bin", bin, bin_len, 1, &err) == AL_OK);
    al_model *m = NULL;
    al_status st = al_model_load(fs, &m, &err);
    CHECK_MSG(st == AL_ERR_UNSUPPORTED, "F1: %s (%s)", al_status_name(st), err.message);
    CHECK(m == NULL);
    CHECK(has(err.message, "pytorch_model.bin") && has(err.message, "archive/data.pkl") &&
          has(err.message, "compressed"));
    al_model_free(m);
    al_fileset_free(fs);
    free(cfg);
    free(bin);
}

static al_tokenizer *load_tokenizer_json(const char *json, size_t len, al_error *err) {
    al_fileset *fs = al_fileset_new();
    al_tokenizer *tok = NULL;
    if (al_fileset_add(fs, "tokenizer.json", json, len, 1, err) == AL_OK) al_tokenizer_load(fs, &tok, err);
    al_fileset_free(fs);
    return tok;
}

static int same(const int32_t *got, const int32_t *want, int n) { return memcmp(got, want, (size_t)n * sizeof *got) == 0; }

/* F2: a TemplateProcessing whose single template names sequence A twice. Hugging Face tokenizers loads it and
 * emits a copy of A for each naming (its apply_template clones the encoding per Sequence piece; the pair
 * template [] emits nothing). The encoder used to size its arrays for one copy and wrote two. */
static void f2_template_repeats_a(void) {
    size_t len = 0;
    char *json = slurp(FUZZ_DIR "tokenizer_json/F2-tokenizer.json", &len);
    if (!json) return;
    al_error err;
    al_tokenizer *tok = load_tokenizer_json(json, len, &err);
    CHECK_MSG(tok != NULL, "F2: %s", err.message);
    free(json);
    if (!tok) return;
    al_encode_options o = al_encode_default_options();
    al_encoding e;
    CHECK_MSG(al_tokenizer_encode(tok, "a a", NULL, &o, &e, &err) == AL_OK, "%s", err.message);
    CHECK(e.n_tokens == 4 && e.length == 4);
    if (e.n_tokens == 4) {
        CHECK(same(e.ids, (const int32_t[]){0, 0, 0, 0}, 4));
        CHECK(same(e.offsets, (const int32_t[]){0, 1, 2, 3, 0, 1, 2, 3}, 8));
        CHECK(same(e.word_ids, (const int32_t[]){0, 1, 0, 1}, 4));
        CHECK(same(e.sequence_ids, (const int32_t[]){0, 0, 0, 0}, 4));
        CHECK(same(e.special_mask, (const int32_t[]){0, 0, 0, 0}, 4));
    }
    al_encoding_free(&e);
    /* truncation budgets both copies: 2 * 1 token fits max_length 3, 2 * 2 does not */
    o.truncation = 1;
    o.max_length = 3;
    CHECK_MSG(al_tokenizer_encode(tok, "a a", NULL, &o, &e, &err) == AL_OK, "%s", err.message);
    CHECK(e.n_tokens == 2 && e.truncated == 1);
    if (e.n_tokens == 2) CHECK(same(e.offsets, (const int32_t[]){0, 1, 0, 1}, 4));
    al_encoding_free(&e);
    /* the pair template is empty: nothing at all, as in Hugging Face */
    o = al_encode_default_options();
    CHECK_MSG(al_tokenizer_encode(tok, "a a", "a", &o, &e, &err) == AL_OK, "%s", err.message);
    CHECK(e.n_tokens == 0 && e.length == 0);
    al_encoding_free(&e);
    /* without special tokens the template is not applied */
    o.add_special_tokens = 0;
    CHECK_MSG(al_tokenizer_encode(tok, "a a", NULL, &o, &e, &err) == AL_OK, "%s", err.message);
    CHECK(e.n_tokens == 2);
    al_encoding_free(&e);
    al_tokenizer_free(tok);
}

/* The same rule with special tokens and type ids: [CLS] $A [SEP] $A:1 [SEP]:1. */
static void template_twice_with_specials(void) {
    static const char json[] =
        "{\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\",\"vocab\":{\"[UNK]\":0,\"[CLS]\":1,\"[SEP]\":2,"
        "\"hello\":3,\"world\":4,\"[PAD]\":5}},\"normalizer\":null,\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},"
        "\"post_processor\":{\"type\":\"TemplateProcessing\",\"single\":[{\"SpecialToken\":{\"id\":\"[CLS]\",\"type_id\":0}},"
        "{\"Sequence\":{\"id\":\"A\",\"type_id\":0}},{\"SpecialToken\":{\"id\":\"[SEP]\",\"type_id\":0}},"
        "{\"Sequence\":{\"id\":\"A\",\"type_id\":1}},{\"SpecialToken\":{\"id\":\"[SEP]\",\"type_id\":1}}],"
        "\"pair\":[{\"Sequence\":{\"id\":\"A\"}},{\"Sequence\":{\"id\":\"B\",\"type_id\":1}}],"
        "\"special_tokens\":{\"[CLS]\":{\"id\":\"[CLS]\",\"ids\":[1],\"tokens\":[\"[CLS]\"]},"
        "\"[SEP]\":{\"id\":\"[SEP]\",\"ids\":[2],\"tokens\":[\"[SEP]\"]}}}}";
    al_error err;
    al_tokenizer *tok = load_tokenizer_json(json, sizeof json - 1, &err);
    CHECK_MSG(tok != NULL, "%s", err.message);
    if (!tok) return;
    al_encode_options o = al_encode_default_options();
    al_encoding e;
    CHECK_MSG(al_tokenizer_encode(tok, "hello world", NULL, &o, &e, &err) == AL_OK, "%s", err.message);
    CHECK(e.n_tokens == 7);
    if (e.n_tokens == 7) {
        CHECK(same(e.ids, (const int32_t[]){1, 3, 4, 2, 3, 4, 2}, 7));
        CHECK(same(e.type_ids, (const int32_t[]){0, 0, 0, 0, 1, 1, 1}, 7));
        CHECK(same(e.special_mask, (const int32_t[]){1, 0, 0, 1, 0, 0, 1}, 7));
        CHECK(same(e.offsets, (const int32_t[]){0, 0, 0, 5, 6, 11, 0, 0, 0, 5, 6, 11, 0, 0}, 14));
    }
    al_encoding_free(&e);
    /* max_length 5: three special tokens leave room for one token in each of the two copies */
    o.truncation = 1;
    o.max_length = 5;
    o.pad_to = 6;
    CHECK_MSG(al_tokenizer_encode(tok, "hello world", NULL, &o, &e, &err) == AL_OK, "%s", err.message);
    CHECK(e.n_tokens == 5 && e.length == 6 && e.truncated);
    if (e.n_tokens == 5) CHECK(same(e.ids, (const int32_t[]){1, 3, 2, 3, 2}, 5));
    al_encoding_free(&e);
    /* pair: A then B, each once */
    o = al_encode_default_options();
    o.truncation = 1;
    o.max_length = 3;
    CHECK_MSG(al_tokenizer_encode(tok, "hello world", "world", &o, &e, &err) == AL_OK, "%s", err.message);
    CHECK(e.n_tokens == 3);
    if (e.n_tokens == 3) CHECK(same(e.ids, (const int32_t[]){3, 4, 4}, 3) && same(e.type_ids, (const int32_t[]){0, 0, 1}, 3));
    al_encoding_free(&e);
    al_tokenizer_free(tok);
}

/* Templates that cannot be honoured are refused at load time, naming the template and the item. */
static void bad_templates(void) {
    static const struct { const char *post, *part; } cases[] = {
        {"\"single\":[{\"Sequence\":{\"id\":\"B\"}}],\"pair\":[]", "post_processor.single: item 0 names sequence B"},
        {"\"single\":[{\"Sequence\":{\"id\":\"C\"}}],\"pair\":[]", "sequence 'C' is not A or B"},
        {"\"single\":[{\"Sequence\":{\"id\":\"A\",\"type_id\":-1}}],\"pair\":[]", "type_id must be an integer"},
        {"\"single\":[{\"SpecialToken\":{\"id\":\"X\"}}],\"pair\":[],\"special_tokens\":{\"X\":{\"ids\":[7]}}",
         "special token 'X' has no id in the vocabulary"},
        {"\"single\":[{\"SpecialToken\":{\"id\":\"X\"}}],\"pair\":[],\"special_tokens\":{\"X\":{\"ids\":[0,0]}}",
         "has 2 ids"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"a\",\"vocab\":{\"a\":0}},"
                 "\"post_processor\":{\"type\":\"TemplateProcessing\",%s}}",
                 cases[i].post);
        al_error err;
        al_tokenizer *tok = load_tokenizer_json(json, strlen(json), &err);
        CHECK_MSG(tok == NULL, "template %zu loaded", i);
        if (!tok) CHECK(has(err.message, "tokenizer.json") && has(err.message, cases[i].part));
        al_tokenizer_free(tok);
    }
    static const char bert_processing[] =
        "{\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"a\",\"vocab\":{\"a\":0}},"
        "\"post_processor\":{\"type\":\"BertProcessing\",\"cls\":[\"[CLS]\",5e9],\"sep\":[\"a\",0]}}";
    al_error err;
    al_tokenizer *tok = load_tokenizer_json(bert_processing, sizeof bert_processing - 1, &err);
    CHECK(tok == NULL);
    if (!tok) CHECK(has(err.message, "post_processor.cls") && has(err.message, "not a token of the vocabulary"));
    al_tokenizer_free(tok);
}

/* F3, F4: train configs given to `attnlab pretrain --config FILE`, which parses them with the file's path as
 * the name in messages. */
static void f3_f4_train_configs(void) {
    static const struct { const char *file, *field; } cases[] = {
        {FUZZ_DIR "pretrain_config/F3-train_config.json", "'num_hidden_layers'"},
        {FUZZ_DIR "pretrain_config/F4-train_config.json", "'hidden_dropout_prob'"},
    };
    for (int i = 0; i < 2; i++) {
        size_t len = 0;
        char *text = slurp(cases[i].file, &len);
        if (!text) continue;
        al_pretrain_config c = al_pretrain_default_config(), before = c;
        al_error err;
        al_status st = al_pretrain_config_parse(text, len, cases[i].file, &c, &err);
        CHECK_MSG(st != AL_OK, "%s was accepted", cases[i].file);
        CHECK(has(err.message, cases[i].file) && has(err.message, cases[i].field));
        CHECK(memcmp(&c, &before, sizeof c) == 0); /* the bad value never reached the config */
        free(text);
    }
}

/* Each numeric field against its own range: the type's and the meaning's. */
static void config_ranges(void) {
    static const struct { const char *json; int ok; const char *part; } cases[] = {
        {"{\"num_hidden_layers\": 1024}", 1, NULL},
        {"{\"num_hidden_layers\": 1025}", 0, "'num_hidden_layers' = 1025 must be an integer in [1, 1024]"},
        {"{\"steps\": 2147483647}", 1, NULL},
        {"{\"steps\": 2147483648}", 0, "'steps'"},
        {"{\"steps\": 0}", 0, "'steps'"},
        {"{\"steps\": 2.5}", 0, "'steps' = 2.5 must be an integer"},
        {"{\"warmup_steps\": -1}", 0, "'warmup_steps'"},
        {"{\"max_train_lines\": 9007199254740992}", 1, NULL},
        {"{\"max_train_lines\": 1e300}", 0, "'max_train_lines'"},
        {"{\"hidden_dropout_prob\": 0}", 1, NULL},
        {"{\"hidden_dropout_prob\": 0.999}", 1, NULL},
        {"{\"hidden_dropout_prob\": 1}", 0, "'hidden_dropout_prob' = 1 must be in [0, 1)"},
        {"{\"attention_probs_dropout_prob\": -0.1}", 0, "'attention_probs_dropout_prob'"},
        {"{\"mask_prob\": 0}", 0, "'mask_prob' = 0 must be in (0, 1)"},
        {"{\"lr\": 0}", 0, "'lr' = 0 must be in (0,"},
        {"{\"lr\": -0.001}", 0, "'lr'"},
        {"{\"lr\": 1e-50}", 0, "'lr' = 0 must be in (0,"}, /* 0 once a float */
        {"{\"lr\": 1e39}", 0, "'lr' = 1e+39 does not fit a float"},
        {"{\"lr\": 3.4e38}", 1, NULL},
        {"{\"weight_decay\": -0.01}", 0, "'weight_decay'"},
        {"{\"max_grad_norm\": 0}", 1, NULL},
        {"{\"max_grad_norm\": -1}", 0, "'max_grad_norm'"},
        {"{\"shards\": 65}", 0, "'shards' = 65 must be an integer in [1, 64]"},
        {"{\"seed\": \"18446744073709551615\"}", 1, NULL},
        {"{\"seed\": \"18446744073709551616\"}", 0, "'seed' must be a decimal integer"},
        {"{\"seed\": \"12abc\"}", 0, "'seed' must be a decimal integer"},
        {"{\"seed\": -1}", 0, "'seed'"},
        {"{\"eval_seed\": 9007199254740993}", 1, NULL}, /* read as 2^53, the nearest double */
        {"{\"eval_seed\": 1e300}", 0, "'eval_seed'"},
        {"{\"short_len\": -3}", 0, "'short_len'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        al_pretrain_config c = al_pretrain_default_config();
        al_error err;
        al_status st = al_pretrain_config_parse(cases[i].json, strlen(cases[i].json), "cfg.json", &c, &err);
        CHECK_MSG((st == AL_OK) == cases[i].ok, "%s: %s", cases[i].json, st ? err.message : "accepted");
        if (st && cases[i].part) CHECK(has(err.message, "cfg.json: ") && has(err.message, cases[i].part));
    }
    al_pretrain_config c = al_pretrain_default_config();
    al_error err;
    const char seed[] = "{\"seed\": \"18446744073709551615\"}";
    CHECK(al_pretrain_config_parse(seed, sizeof seed - 1, "cfg.json", &c, &err) == AL_OK && c.seed == UINT64_MAX);

    /* the same ranges hold for a config built in code, and the fields together: AdamW's decay factor
     * 1 - lr * weight_decay must stay positive */
    c = al_pretrain_default_config();
    c.lr = (float)INFINITY;
    CHECK(al_pretrain_run(&c, NULL, NULL, NULL, &err) == AL_ERR_INVALID && has(err.message, "train config: 'lr'"));
    c = al_pretrain_default_config();
    c.lr = 2.0f;
    c.weight_decay = 0.5f;
    CHECK(al_pretrain_run(&c, NULL, NULL, NULL, &err) == AL_ERR_INVALID && has(err.message, "weight_decay"));
    c = al_pretrain_default_config();
    c.attention_probs_dropout_prob = 1.0f;
    CHECK(al_pretrain_run(&c, NULL, NULL, NULL, &err) == AL_ERR_INVALID &&
          has(err.message, "'attention_probs_dropout_prob' = 1"));

    /* what is accepted is written back as JSON that reads back as the same config */
    c = al_pretrain_default_config();
    const char extreme[] = "{\"lr\": 3.4e38, \"weight_decay\": 0, \"hidden_dropout_prob\": 1.4e-45, "
                           "\"seed\": \"18446744073709551615\", \"max_train_lines\": 9007199254740992}";
    CHECK(al_pretrain_config_parse(extreme, sizeof extreme - 1, "cfg.json", &c, &err) == AL_OK);
    char *json = al_pretrain_config_json(&c);
    cJSON *parsed = json ? cJSON_Parse(json) : NULL;
    CHECK_MSG(parsed != NULL, "not JSON: %s", json ? json : "(null)");
    cJSON_Delete(parsed);
    al_pretrain_config back = al_pretrain_default_config();
    CHECK(json && al_pretrain_config_parse(json, strlen(json), "written.json", &back, &err) == AL_OK);
    CHECK(memcmp(&c, &back, sizeof c) == 0);
    free(json);
}

/* C1 (docs/fuzzing.md, "Findings and their fixes"): a string field set twice, the second time shorter ("position_init": "sinusoidale...",
 * then "sinusoidal"); bytes of the longer value stayed behind the terminator, so the config written back
 * read back as a different struct. String fields are now zero-filled before they are set. */
static void c1_string_set_twice(void) {
    const char *path = FUZZ_DIR "pretrain_config/C1-string-shortened.json";
    size_t len = 0;
    char *text = slurp(path, &len);
    if (!text) return;
    al_pretrain_config c = al_pretrain_default_config(), back = al_pretrain_default_config();
    al_error err;
    CHECK_MSG(al_pretrain_config_parse(text, len, path, &c, &err) == AL_OK, "%s", err.message);
    CHECK(strcmp(c.position_init, "sinusoidal") == 0 && strcmp(c.vocab, "mode\t") == 0);
    char *json = al_pretrain_config_json(&c);
    CHECK(json && al_pretrain_config_parse(json, strlen(json), "written.json", &back, &err) == AL_OK);
    CHECK(memcmp(&c, &back, sizeof c) == 0);
    free(json);
    free(text);
}

/* R1 (a review of the harness's inputs): a 70-byte tokenizer.json naming the id 99999999 made the loader allocate
 * 10^8 vocabulary slots (800 MB, 25 s under the sanitizers). Ids must now lie below the number of tokens the
 * file holds; the same rule for vocab.json. */
static void r1_sparse_ids(void) {
    size_t len = 0;
    char *json = slurp(FUZZ_DIR "tokenizer_json/R1-sparse-id-tokenizer.json", &len);
    if (!json) return;
    al_error err;
    al_tokenizer *tok = load_tokenizer_json(json, len, &err);
    CHECK(tok == NULL);
    if (!tok) CHECK(has(err.message, "tokenizer.json: model.vocab: token 'a' needs an integer id below 1"));
    al_tokenizer_free(tok);
    free(json);
    /* holes below the limit stay legal, and added tokens count towards it */
    static const char holes[] =
        "{\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"a\",\"vocab\":{\"a\":0,\"b\":0,\"c\":2}},"
        "\"added_tokens\":[{\"id\":3,\"content\":\"[X]\",\"special\":true}]}";
    tok = load_tokenizer_json(holes, sizeof holes - 1, &err);
    CHECK_MSG(tok && al_tokenizer_vocab_size(tok) == 4 && al_tokenizer_id_to_token(tok, 1) == NULL, "%s",
              tok ? "wrong vocabulary" : err.message);
    al_tokenizer_free(tok);
    al_fileset *fs = al_fileset_new();
    static const char vocab_json[] = "{\"a\": 0, \"b\": 4000000}";
    al_fileset_add(fs, "vocab.json", vocab_json, sizeof vocab_json - 1, 1, &err);
    al_fileset_add(fs, "merges.txt", "", 0, 1, &err);
    tok = NULL;
    CHECK(al_tokenizer_load(fs, &tok, &err) == AL_ERR_FORMAT && has(err.message, "vocab.json: token 'b' needs"));
    al_tokenizer_free(tok);
    al_fileset_free(fs);
}

/* C2 (docs/fuzzing.md, "Findings and their fixes"): a config.json whose model_type is NUL bytes (an empty C string) and whose architectures
 * name a BERT class. The family came from architectures but model_type stayed empty; it now names the family,
 * the rule al_model_new_random applies to a config built in code. */
static void c2_empty_model_type(void) {
    size_t len = 0;
    char *text = slurp(FUZZ_DIR "config/C2-empty-model-type-config.json", &len);
    if (!text) return;
    al_config c;
    al_error err;
    CHECK_MSG(al_config_parse(text, len, "config.json", &c, &err) == AL_OK, "%s", err.message);
    CHECK(c.arch == AL_ARCH_BERT && strcmp(c.model_type, "bert") == 0);
    static const char empty[] = "{\"model_type\": \"\", \"architectures\": [\"RobertaModel\"], \"vocab_size\": 10, "
                                "\"hidden_size\": 4, \"num_hidden_layers\": 1, \"num_attention_heads\": 1, "
                                "\"intermediate_size\": 4}";
    CHECK(al_config_parse(empty, sizeof empty - 1, "config.json", &c, &err) == AL_OK && c.arch == AL_ARCH_ROBERTA &&
          strcmp(c.model_type, "roberta") == 0);
    free(text);
}

/* C3 (docs/fuzzing.md, "Findings and their fixes"): an API request with input id 5.6e32. The id was cast to int32 before its range was
 * checked (undefined behaviour); now the range comes first and the error names the id's place. */
static void c3_huge_input_id(void) {
    size_t len = 0;
    char *request = slurp(FUZZ_DIR "api/C3-huge-input-id-request.json", &len);
    if (!request) return;
    al_session *s = al_session_new();
    al_config c = al_config_bert(32, 8, 1, 2, 16);
    al_model *m = NULL;
    al_error err;
    CHECK(al_model_new_random(&c, 7, 0, &m, &err) == AL_OK && al_api_put_model(s, "m", m, &err) == AL_OK);
    al_reply r;
    CHECK(al_session_run(s, request, NULL, &r) == AL_ERR_INVALID);
    CHECK(r.json && has(r.json, "field 'input_ids[0][3]' must be an integer in [0, 32)"));
    al_reply_free(&r);
    al_session_free(s);
    free(request);
}

/* C4 (docs/fuzzing.md, "Findings and their fixes"): a config.json with layer_norm_eps 1e-86 passed the (0, 1] check as a double and became 0
 * as the model's float32 (LayerNorm would then divide by a zero deviation); the value is checked again after the
 * conversion and refused naming the field. */
static void c4_tiny_layer_norm_eps(void) {
    size_t len = 0;
    char *text = slurp(FUZZ_DIR "config/C4-tiny-layer-norm-eps-config.json", &len);
    if (!text) return;
    al_config c;
    al_error err;
    CHECK(al_config_parse(text, len, "config.json", &c, &err) == AL_ERR_FORMAT);
    CHECK_MSG(has(err.message, "config.json: field 'layer_norm_eps' = 1e-86 is 0 as a float32"), "%s", err.message);
    static const char subnormal[] = "{\"model_type\": \"bert\", \"layer_norm_eps\": 1e-44, \"vocab_size\": 10, "
                                    "\"hidden_size\": 4, \"num_hidden_layers\": 1, \"num_attention_heads\": 1, "
                                    "\"intermediate_size\": 4}";
    CHECK(al_config_parse(subnormal, sizeof subnormal - 1, "config.json", &c, &err) == AL_OK && c.layer_norm_eps > 0.0f);
    free(text);
}

/* R2 (found by review while fixing C4, the class of C3): papa_merge cast the numbers of its parts (shape, run
 * indices, orders, theta) to int or float before any range check, and multiplied layers by heads unchecked
 * (undefined behaviour for 1e300 or 2^20 x 2^20). Each is now range-checked first; the request is refused
 * naming the field. */
static void r2_papa_merge_numbers(void) {
    static const char *const requests[][2] = {
        {"{\"op\":\"papa_merge\",\"parts\":[{\"op\":\"papa\",\"shape\":{\"n_layers\":1e300,\"n_heads\":2}}]}",
         "field 'parts[0].shape' is missing or out of range"},
        {"{\"op\":\"papa_merge\",\"parts\":[{\"op\":\"papa\",\"shape\":{\"n_layers\":1048576,\"n_heads\":1048576}}]}",
         "field 'parts[0].shape' is missing or out of range"},
        {"{\"op\":\"papa_merge\",\"parts\":[{\"op\":\"papa\",\"shape\":{\"n_layers\":1,\"n_heads\":2},\"configs\":[],\"config\":{},"
         "\"runs\":[{\"config\":-1e300}]}]}",
         "field 'parts[0].runs' names configuration -1"},
        {"{\"op\":\"papa_merge\",\"parts\":[{\"op\":\"papa\",\"shape\":{\"n_layers\":1,\"n_heads\":2},\"configs\":[],\"config\":{},"
         "\"runs\":[],\"theta\":[1e300, 0]}]}",
         "field 'parts[0].theta[0]' is not a float32 number"},
    };
    al_session *s = al_session_new();
    for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
        al_reply r;
        CHECK_MSG(al_session_run(s, requests[i][0], NULL, &r) == AL_ERR_INVALID, "request %zu", i);
        CHECK_MSG(r.json && has(r.json, requests[i][1]), "request %zu: %s", i, r.json ? r.json : "(null)");
        al_reply_free(&r);
    }
    al_session_free(s);
}

int main(void) {
    f1_compressed_pickle();
    f2_template_repeats_a();
    template_twice_with_specials();
    bad_templates();
    f3_f4_train_configs();
    config_ranges();
    c1_string_set_twice();
    r1_sparse_ids();
    c2_empty_model_type();
    c3_huge_input_id();
    c4_tiny_layer_norm_eps();
    r2_papa_merge_numbers();
    return check_summary("fuzz_findings");
}
