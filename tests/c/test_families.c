/* test_families.c: which family a model is (docs/families.md, "Which family"): model_type, else architectures,
 * else the weights' tensor names, with the deciding rule in the model and in the "info" reply; the files the
 * loader did not use, named with the reason; a weights file under another name when it is the only one; and
 * the fastNLP-style tiny BERT of tests/fixtures/bert_fastnlp (classic config, legacy torch.save, bare encoder
 * names with LayerNorm gamma/beta) giving tests/fixtures/bert_st_f32's hidden states bit for bit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "model/family.h"
#include "read_file.h"

/* The files of dir with config.json rewritten: its top-level fields named in drop[] removed. */
static al_fileset *files_without(const char *dir, const char *const *drop) {
    al_fileset *fs = al_fileset_new();
    al_error err;
    CHECK_MSG(al_fileset_add_dir(fs, dir, &err) == AL_OK, "%s: %s", dir, err.message);
    size_t size = 0;
    const uint8_t *text = al_fileset_get(fs, "config.json", &size);
    cJSON *cfg = cJSON_ParseWithLength((const char *)text, size);
    for (int i = 0; drop[i]; i++) cJSON_DeleteItemFromObjectCaseSensitive(cfg, drop[i]);
    char *out = cJSON_PrintUnformatted(cfg);
    CHECK(al_fileset_add(fs, "config.json", out, strlen(out), 1, &err) == AL_OK);
    cJSON_free(out);
    cJSON_Delete(cfg);
    return fs;
}

static void expect_rule(const char *dir, const char *const *drop, al_arch arch, const char *rule) {
    al_fileset *fs = files_without(dir, drop);
    al_model *m = NULL;
    al_error err;
    CHECK_MSG(al_model_load(fs, &m, &err) == AL_OK, "%s: %s", dir, err.message);
    if (m) {
        CHECK_MSG(al_model_config(m)->arch == arch, "%s: arch %s", dir, al_arch_name(al_model_config(m)->arch));
        CHECK_MSG(strcmp(al_model_family_rule(m), rule) == 0, "%s: rule '%s', expected '%s'", dir,
                  al_model_family_rule(m), rule);
    }
    al_model_free(m);
    al_fileset_free(fs);
}

static void test_rules(void) {
    static const char *const none[] = {NULL};
    static const char *const type[] = {"model_type", NULL};
    static const char *const both[] = {"model_type", "architectures", NULL};
    expect_rule("tests/golden/bert", none, AL_ARCH_BERT, "model_type \"bert\"");
    expect_rule("tests/golden/bert", type, AL_ARCH_BERT, "architectures \"BertForMaskedLM\"");
    expect_rule("tests/golden/bert", both, AL_ARCH_BERT, "tensor names (\"bert.embeddings.word_embeddings.weight\")");
    expect_rule("tests/golden/roberta", both, AL_ARCH_ROBERTA,
                "tensor names (\"roberta.embeddings.word_embeddings.weight\")");
    expect_rule("tests/golden/distilbert", both, AL_ARCH_DISTILBERT,
                "tensor names (\"distilbert.embeddings.word_embeddings.weight\")");
    expect_rule("tests/golden/electra", both, AL_ARCH_ELECTRA,
                "tensor names (\"electra.embeddings.word_embeddings.weight\")");
    const al_arch deberta = (al_arch)al_family_from_model_type("deberta-v2");
    expect_rule("tests/golden/deberta_v3", type, deberta, "architectures \"DebertaV2ForMaskedLM\"");
    expect_rule("tests/golden/deberta_v3", both, deberta,
                "tensor names (\"deberta.embeddings.word_embeddings.weight\")");
    const al_arch modernbert = (al_arch)al_family_from_model_type("modernbert");
    expect_rule("tests/golden/modernbert", type, modernbert, "architectures \"ModernBertForMaskedLM\"");
    expect_rule("tests/golden/modernbert", both, modernbert,
                "tensor names (\"model.embeddings.tok_embeddings.weight\")");
    /* saved from the bare encoder class: DistilBERT's layer names, and BERT's for the BERT-like families */
    expect_rule("tests/fixtures/distilbert_bin_noprefix", both, AL_ARCH_DISTILBERT,
                "tensor names (\"transformer.layer.0.attention.q_lin.weight\")");
    expect_rule("tests/fixtures/bert_st_noprefix", both, AL_ARCH_BERT,
                "tensor names (\"encoder.layer.0.attention.self.query.weight\")");
    /* names that no family has (GPT-2's): refused, naming the config's silence and the weights file */
    al_fileset *fs = al_fileset_new();
    al_error err;
    al_model *m = NULL;
    static const char cfg[] = "{\"vocab_size\": 4, \"hidden_size\": 4, \"num_hidden_layers\": 1, "
                              "\"num_attention_heads\": 1, \"intermediate_size\": 4}";
    float w[4] = {0};
    al_tensor_out t = {"transformer.h.0.attn.c_attn.weight", "F32", 1, {4}, w, sizeof w};
    uint8_t *st = NULL;
    size_t size = 0;
    CHECK(al_safetensors_serialize(&t, 1, NULL, 0, &st, &size, &err) == AL_OK);
    CHECK(al_fileset_add(fs, "config.json", cfg, sizeof cfg - 1, 1, &err) == AL_OK);
    CHECK(al_fileset_add(fs, "model.safetensors", st, size, 1, &err) == AL_OK);
    CHECK(al_model_load(fs, &m, &err) == AL_ERR_FORMAT && !m);
    CHECK_MSG(strstr(err.message, "'model_type' is missing") && strstr(err.message, "nor do the tensor names of "
                                                                        "model.safetensors"), "%s", err.message);
    free(st);
    al_fileset_free(fs);
}

static void test_unused_files(void) {
    al_fileset *fs = al_fileset_new();
    al_error err;
    CHECK(al_fileset_add_dir(fs, "tests/golden/bert", &err) == AL_OK);
    static const char note[] = "notes";
    CHECK(al_fileset_add(fs, "extra.bin", note, sizeof note - 1, 1, &err) == AL_OK);
    CHECK(al_fileset_add(fs, "tf_model.h5", note, sizeof note - 1, 1, &err) == AL_OK);
    al_session *s = al_session_new();
    CHECK(al_session_add_model(s, "m", fs, &err) == AL_OK);
    al_reply reply;
    CHECK(al_session_run(s, "{\"op\":\"info\",\"model\":\"m\"}", NULL, &reply) == AL_OK);
    cJSON *r = cJSON_Parse(reply.json);
    const cJSON *unused = cJSON_GetObjectItem(r, "unused_files"), *u;
    char seen[1024] = "";
    cJSON_ArrayForEach(u, unused) {
        const char *file = cJSON_GetStringValue(cJSON_GetObjectItem(u, "file"));
        const char *reason = cJSON_GetStringValue(cJSON_GetObjectItem(u, "reason"));
        CHECK(file && reason);
        if (file && reason) snprintf(seen + strlen(seen), sizeof seen - strlen(seen), "%s: %s\n", file, reason);
    }
    printf("%s", seen);
    CHECK_MSG(strstr(seen, "extra.bin: another weights file: the weights come from model.safetensors"), "%s", seen);
    CHECK_MSG(strstr(seen, "tf_model.h5: TensorFlow"), "%s", seen);
    /* golden.safetensors and hooks.safetensors are the test's references, not the model's */
    CHECK_MSG(strstr(seen, "golden.safetensors: another weights file"), "%s", seen);
    CHECK(!strstr(seen, "config.json") && !strstr(seen, "model.safetensors:"));
    CHECK_MSG(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "family_rule")), "model_type \"bert\"") == 0,
              "%s", reply.json);
    cJSON_Delete(r);
    al_reply_free(&reply);
    al_session_free(s);
}

/* Two weights files under other names: none is guessed; the message names both. */
static void test_several_weights(void) {
    al_fileset *fs = al_fileset_new();
    al_error err;
    size_t size = 0;
    uint8_t *cfg = read_file("tests/fixtures/bert_fastnlp/config.json", &size);
    CHECK(cfg && al_fileset_add(fs, "config.json", cfg, size, 1, &err) == AL_OK);
    free(cfg);
    uint8_t *bin = read_file("tests/fixtures/bert_fastnlp/bert_model.bin", &size);
    CHECK(bin && al_fileset_add(fs, "a.bin", bin, size, 1, &err) == AL_OK);
    CHECK(al_fileset_add(fs, "b.bin", bin, size, 1, &err) == AL_OK);
    free(bin);
    al_model *m = NULL;
    CHECK(al_model_load(fs, &m, &err) == AL_ERR_IO);
    CHECK_MSG(strstr(err.message, "a.bin, b.bin"), "%s", err.message);
    al_model_free(m);
    al_fileset_free(fs);
}

static void test_fastnlp(void) {
    al_model *old = NULL, *ref = NULL;
    al_error err;
    CHECK_MSG(al_model_load_dir("tests/fixtures/bert_fastnlp", &old, &err) == AL_OK, "%s", err.message);
    CHECK_MSG(al_model_load_dir("tests/fixtures/bert_st_f32", &ref, &err) == AL_OK, "%s", err.message);
    if (!old || !ref) goto done;
    CHECK(strcmp(al_model_weights_file(old), "bert_model.bin") == 0);
    CHECK_MSG(strcmp(al_model_family_rule(old), "tensor names (\"encoder.layer.0.attention.self.query.weight\")") == 0,
              "%s", al_model_family_rule(old));
    CHECK(!al_model_has_mlm_head(old) && al_model_tokenizer(old) != NULL);
    CHECK(al_model_n_unused_files(old) == 0);
    const al_config *c = al_model_config(ref);
    int32_t ids[7] = {2, 9, 14, 21, 31, 3, 0}, mask[7] = {1, 1, 1, 1, 1, 1, 0}, types[7] = {0, 0, 0, 1, 1, 1, 0};
    al_batch batch = {1, 7, ids, mask, types, NULL};
    const size_t n = (size_t)(c->n_layers + 1) * 7 * c->hidden_size;
    float *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
    al_forward_outputs oa = {0}, ob = {0};
    oa.hidden_states = a;
    ob.hidden_states = b;
    CHECK(al_forward(old, &batch, NULL, &oa, &err) == AL_OK && al_forward(ref, &batch, NULL, &ob, &err) == AL_OK);
    CHECK_MSG(memcmp(a, b, n * sizeof *a) == 0, "%s", "the fastNLP-style BERT's hidden states differ");
    free(a);
    free(b);
done:
    al_model_free(old);
    al_model_free(ref);
}

/* check_config sees config.json alone: a config naming no family is sized by the first family whose fields it
 * has, and the reply says so. */
static void test_check_config(void) {
    static const struct { const char *config, *arch, *rule; } cases[] = {
        {"{\\\"vocab_size\\\": 32, \\\"hidden_size\\\": 8, \\\"num_hidden_layers\\\": 2, \\\"num_attention_heads\\\": 2, "
         "\\\"intermediate_size\\\": 16}",
         "bert", "config fields (bert's; the weights' tensor names decide on load)"},
        {"{\\\"vocab_size\\\": 32, \\\"dim\\\": 8, \\\"n_layers\\\": 2, \\\"n_heads\\\": 2, \\\"hidden_dim\\\": 16}",
         "distilbert", "config fields (distilbert's; the weights' tensor names decide on load)"},
        {"{\\\"architectures\\\": [\\\"RobertaForMaskedLM\\\"], \\\"vocab_size\\\": 32, \\\"hidden_size\\\": 8, "
         "\\\"num_hidden_layers\\\": 2, \\\"num_attention_heads\\\": 2, \\\"intermediate_size\\\": 16}",
         "roberta", "architectures \"RobertaForMaskedLM\""},
    };
    al_session *s = al_session_new();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char req[512];
        snprintf(req, sizeof req, "{\"op\":\"check_config\",\"config\":\"%s\"}", cases[i].config);
        al_reply reply;
        CHECK_MSG(al_session_run(s, req, NULL, &reply) == AL_OK, "%s", reply.json);
        cJSON *r = cJSON_Parse(reply.json);
        const char *arch = cJSON_GetStringValue(cJSON_GetObjectItem(r, "arch"));
        const char *rule = cJSON_GetStringValue(cJSON_GetObjectItem(r, "family_rule"));
        CHECK_MSG(arch && rule && strcmp(arch, cases[i].arch) == 0 && strcmp(rule, cases[i].rule) == 0, "%s",
                  reply.json);
        cJSON_Delete(r);
        al_reply_free(&reply);
    }
    al_session_free(s);
}

int main(void) {
    test_rules();
    test_check_config();
    test_unused_files();
    test_several_weights();
    test_fastnlp();
    return check_summary("families");
}
