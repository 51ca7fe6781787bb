/* test_api.c: the JSON API end to end: every op, every error path with the field it names,
 * determinism, cancellation, progress, truncation warnings, policies with constant tensors, and the
 * safetensors writer. The model is the committed golden BERT (tests/golden/bert: 3 layers, 4 heads,
 * 40 positions, 100 ids) with a WordPiece vocab.txt made here, plus a random model for input_ids. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api_internal.h"
#include "methods/tasks/task.h"
#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "reply_tensor.h"

#define MODEL_DIR "tests/golden/bert"

static const char *const k_words[] = {"the", "cat", "sat", "on", "mat", "a", "dog", "ran", ".", ",",
                                      "hello", "world", "##s", "is", "and", "big", "red", "un",
                                      "##happy", "!", NULL};

/* vocab.txt with the special tokens at BERT's usual small ids and filler up to 100 entries. */
static char *make_vocab(size_t *size) {
    char *buf = malloc(4096);
    size_t n = 0;
    const char *specials[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    int count = 0;
    for (int i = 0; i < 5; i++, count++) n += (size_t)sprintf(buf + n, "%s\n", specials[i]);
    for (int i = 0; k_words[i]; i++, count++) n += (size_t)sprintf(buf + n, "%s\n", k_words[i]);
    for (; count < 100; count++) n += (size_t)sprintf(buf + n, "filler%d\n", count);
    *size = n;
    return buf;
}

static al_fileset *model_files(void) {
    al_fileset *fs = al_fileset_new();
    al_error err = {0};
    if (al_fileset_add_dir(fs, MODEL_DIR, &err) != AL_OK) {
        al_fileset_free(fs);
        return NULL;
    }
    size_t size;
    char *vocab = make_vocab(&size);
    al_fileset_add(fs, "vocab.txt", vocab, size, 1, &err);
    free(vocab);
    /* Only the files the loader needs: the golden outputs are not part of a model. */
    return fs;
}

/* Runs a request; returns the parsed reply (caller deletes) and keeps the raw reply in *reply. */
static cJSON *run(al_session *s, const char *request, al_status expect, al_reply *reply) {
    al_status st = al_session_run(s, request, NULL, reply);
    CHECK_MSG(st == expect, "%s -> status %s, expected %s: %s", request, al_status_name(st),
              al_status_name(expect), reply->json ? reply->json : "(null)");
    CHECK(reply->json != NULL);
    cJSON *r = reply->json ? cJSON_Parse(reply->json) : NULL;
    CHECK(r != NULL);
    return r;
}

/* Checks that a request fails with `code` and a message containing `needle`. */
static void expect_error(al_session *s, const char *request, al_status code, const char *needle) {
    al_reply reply;
    cJSON *r = run(s, request, code, &reply);
    const cJSON *e = cJSON_GetObjectItem(r, "error");
    const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(e, "message"));
    const char *code_name = cJSON_GetStringValue(cJSON_GetObjectItem(e, "code"));
    CHECK_MSG(msg && strstr(msg, needle), "%s: message '%s' lacks '%s'", request, msg ? msg : "(none)",
              needle);
    CHECK_MSG(code_name && strcmp(code_name, al_status_name(code)) == 0, "%s: code %s", request,
              code_name ? code_name : "(none)");
    CHECK(reply.n_tensors == 0);
    cJSON_Delete(r);
    al_reply_free(&reply);
}

static int json_int(const cJSON *obj, const char *key) {
    const cJSON *v = cJSON_GetObjectItem(obj, key);
    return cJSON_IsNumber(v) ? v->valueint : -999;
}

static int has_warning(const cJSON *r, const char *text) {
    const cJSON *w = cJSON_GetObjectItem(r, "warnings");
    for (const cJSON *item = w ? w->child : NULL; item; item = item->next)
        if (cJSON_IsString(item) && strcmp(item->valuestring, text) == 0) return 1;
    return 0;
}

static void test_info(al_session *s) {
    al_reply reply;
    cJSON *r = run(s, "{\"op\":\"info\",\"model\":\"tiny\"}", AL_OK, &reply);
    const cJSON *cfg = cJSON_GetObjectItem(r, "config");
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "arch")), "bert") == 0);
    CHECK(json_int(cfg, "num_hidden_layers") == 3);
    CHECK(json_int(cfg, "num_attention_heads") == 4);
    CHECK(json_int(cfg, "hidden_size") == 32);
    CHECK(json_int(cfg, "vocab_size") == 100);
    CHECK(json_int(r, "max_tokens") == 40);
    CHECK(json_int(r, "n_params") > 30000);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "weights_file")), "model.safetensors") == 0);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "weights_dtype")), "F32") == 0);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(r, "mlm_head")));
    const cJSON *tok = cJSON_GetObjectItem(r, "tokenizer");
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(tok, "kind")), "wordpiece") == 0);
    CHECK(json_int(tok, "vocab_size") == 100);
    const cJSON *ids = cJSON_GetObjectItem(tok, "special_ids");
    CHECK(json_int(ids, "cls") == 2 && json_int(ids, "sep") == 3 && json_int(ids, "pad") == 0);
    CHECK(json_int(ids, "mask") == 4 && json_int(ids, "unk") == 1);
    CHECK(reply.n_tensors == 0);
    cJSON_Delete(r);
    al_reply_free(&reply);

    r = run(s, "{\"op\":\"models\"}", AL_OK, &reply);
    const cJSON *models = cJSON_GetObjectItem(r, "models");
    CHECK(cJSON_GetArraySize(models) == 2);
    cJSON_Delete(r);
    al_reply_free(&reply);

    r = run(s, "{\"op\":\"version\",\"extra\":1}", AL_OK, &reply);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "version")), AL_VERSION) == 0);
    CHECK(has_warning(r, "request: unknown field 'extra' ignored"));
    cJSON_Delete(r);
    al_reply_free(&reply);
}

static void test_tokenize(al_session *s) {
    al_reply reply;
    cJSON *r = run(s, "{\"op\":\"tokenize\",\"model\":\"tiny\",\"text\":\"The cats sat!\"}", AL_OK, &reply);
    const cJSON *tokens = cJSON_GetObjectItem(r, "tokens");
    const char *expect[] = {"[CLS]", "the", "cat", "##s", "sat", "!", "[SEP]"};
    CHECK(cJSON_GetArraySize(tokens) == 7);
    for (int i = 0; i < 7 && i < cJSON_GetArraySize(tokens); i++)
        CHECK_MSG(strcmp(cJSON_GetArrayItem(tokens, i)->valuestring, expect[i]) == 0, "token %d: %s", i,
                  cJSON_GetArrayItem(tokens, i)->valuestring);
    const cJSON *ids = cJSON_GetObjectItem(r, "ids");
    CHECK(cJSON_GetArrayItem(ids, 0)->valueint == 2 && cJSON_GetArrayItem(ids, 6)->valueint == 3);
    CHECK(cJSON_GetArrayItem(ids, 1)->valueint == 5); /* "the" is the first word after 5 specials */
    const cJSON *words = cJSON_GetObjectItem(r, "word_ids");
    CHECK(cJSON_GetArrayItem(words, 0)->valueint == -1 && cJSON_GetArrayItem(words, 2)->valueint == 1 &&
          cJSON_GetArrayItem(words, 3)->valueint == 1 && cJSON_GetArrayItem(words, 6)->valueint == -1);
    const cJSON *offsets = cJSON_GetObjectItem(r, "offsets");
    const cJSON *cats = cJSON_GetArrayItem(offsets, 2);
    CHECK(cJSON_GetArrayItem(cats, 0)->valueint == 4 && cJSON_GetArrayItem(cats, 1)->valueint == 7);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r, "attention_mask")) == 7);
    CHECK(cJSON_IsFalse(cJSON_GetObjectItem(r, "truncated")));
    const cJSON *added = cJSON_GetObjectItem(r, "added"); /* the special tokens the template added */
    CHECK(cJSON_GetArraySize(added) == 2 && strcmp(cJSON_GetArrayItem(added, 0)->valuestring, "[CLS]") == 0 &&
          strcmp(cJSON_GetArrayItem(added, 1)->valuestring, "[SEP]") == 0);
    cJSON_Delete(r);
    al_reply_free(&reply);

    /* A pair with truncation: type ids switch at the second segment. */
    r = run(s,
            "{\"op\":\"tokenize\",\"model\":\"tiny\",\"text\":\"the cat sat on the mat\","
            "\"text_pair\":\"a dog ran\",\"max_length\":8}",
            AL_OK, &reply);
    CHECK(json_int(r, "n_tokens") == 8);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(r, "truncated")));
    const cJSON *types = cJSON_GetObjectItem(r, "type_ids");
    CHECK(cJSON_GetArrayItem(types, 0)->valueint == 0 && cJSON_GetArrayItem(types, 7)->valueint == 1);
    cJSON_Delete(r);
    al_reply_free(&reply);

    r = run(s, "{\"op\":\"tokenize\",\"model\":\"tiny\",\"text\":\"the cat\",\"add_special_tokens\":false}",
            AL_OK, &reply);
    CHECK(json_int(r, "n_tokens") == 2);
    CHECK(cJSON_IsArray(cJSON_GetObjectItem(r, "added")) && cJSON_GetArraySize(cJSON_GetObjectItem(r, "added")) == 0);
    cJSON_Delete(r);
    al_reply_free(&reply);
}

/* Row sums of attention over the real keys of real queries are 1; pad keys get ~0. */
static void check_attention_rows(const al_tensor_out *att, const int32_t *mask, int b, int *n_bad) {
    const int NL = (int)att->shape[0], B = (int)att->shape[1], H = (int)att->shape[2];
    const int L = (int)att->shape[3];
    const float *p = att->data;
    for (int l = 0; l < NL; l++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < L; i++) {
                if (!mask[b * L + i]) continue;
                const float *row = p + ((((size_t)l * B + b) * H + h) * L + i) * L;
                double sum = 0;
                for (int j = 0; j < L; j++) {
                    if (mask[b * L + j]) sum += row[j];
                    else if (row[j] > 1e-6f) (*n_bad)++;
                }
                if (sum < 1 - 1e-5 || sum > 1 + 1e-5) (*n_bad)++;
            }
}

static void test_attention(al_session *s) {
    al_reply reply, again;
    const char *req = "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"the cat sat on the mat\","
                      "\"outputs\":[\"attentions\",\"hidden_states\",\"values\",\"mlm_logits\"]}";
    cJSON *r = run(s, req, AL_OK, &reply);
    CHECK(json_int(r, "n_seqs") == 1 && json_int(r, "seq_len") == 8);
    CHECK(json_int(r, "n_layers") == 3 && json_int(r, "n_heads") == 4);
    const al_tensor_out *att = find_tensor(&reply, "attentions");
    const al_tensor_out *hid = find_tensor(&reply, "hidden_states");
    const al_tensor_out *val = find_tensor(&reply, "values");
    const al_tensor_out *mlm = find_tensor(&reply, "mlm_logits");
    const al_tensor_out *ids = find_tensor(&reply, "input_ids");
    const al_tensor_out *mask = find_tensor(&reply, "attention_mask");
    CHECK(att && hid && val && mlm && ids && mask);
    if (att && hid && val && mlm && ids && mask) {
        CHECK(att->ndim == 5 && att->shape[0] == 3 && att->shape[1] == 1 && att->shape[2] == 4 &&
              att->shape[3] == 8 && att->shape[4] == 8 && strcmp(att->dtype, "F32") == 0);
        CHECK(att->nbytes == 3 * 4 * 8 * 8 * sizeof(float));
        CHECK(hid->ndim == 4 && hid->shape[0] == 4 && hid->shape[3] == 32);
        CHECK(val->ndim == 5 && val->shape[4] == 8);
        CHECK(mlm->ndim == 3 && mlm->shape[2] == 100);
        CHECK(strcmp(ids->dtype, "I32") == 0 && ((int32_t *)ids->data)[0] == 2);
        int bad = 0;
        check_attention_rows(att, mask->data, 0, &bad);
        CHECK_MSG(bad == 0, "%d bad attention rows", bad);
    }
    const cJSON *seq = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "sequences"), 0);
    CHECK(json_int(seq, "n_tokens") == 8);
    CHECK(strcmp(cJSON_GetArrayItem(cJSON_GetObjectItem(seq, "tokens"), 7)->valuestring, "[SEP]") == 0);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r, "tensors")) == 7); /* + ids, mask, types */

    /* Determinism: the same request gives the same bytes. */
    cJSON *r2 = run(s, req, AL_OK, &again);
    CHECK(strcmp(reply.json, again.json) == 0);
    CHECK(again.n_tensors == reply.n_tensors);
    for (int i = 0; i < reply.n_tensors && i < again.n_tensors; i++)
        CHECK(reply.tensors[i].nbytes == again.tensors[i].nbytes &&
              memcmp(reply.tensors[i].data, again.tensors[i].data, reply.tensors[i].nbytes) == 0);
    cJSON_Delete(r2);
    al_reply_free(&again);

    /* "last_hidden_state" is hidden_states[NL] alone, the same bits. */
    r2 = run(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"the cat sat on the mat\","
                "\"outputs\":[\"last_hidden_state\"]}", AL_OK, &again);
    const al_tensor_out *last = find_tensor(&again, "last_hidden_state");
    CHECK(last && !find_tensor(&again, "hidden_states") && !find_tensor(&again, "attentions"));
    if (last && hid) {
        CHECK(last->ndim == 3 && last->shape[0] == 1 && last->shape[1] == 8 && last->shape[2] == 32);
        CHECK(last->nbytes == 8 * 32 * sizeof(float) &&
              memcmp(last->data, (const char *)hid->data + 3 * last->nbytes, last->nbytes) == 0);
    }
    cJSON_Delete(r2);
    al_reply_free(&again);

    /* "forward" is an alias; default outputs are attentions only. */
    r2 = run(s, "{\"op\":\"forward\",\"model\":\"tiny\",\"text\":\"the cat sat on the mat\"}", AL_OK, &again);
    const al_tensor_out *att2 = find_tensor(&again, "attentions");
    CHECK(att2 && !find_tensor(&again, "hidden_states") && again.n_tensors == 4);
    if (att && att2) CHECK(memcmp(att->data, att2->data, att->nbytes) == 0);
    cJSON_Delete(r2);
    al_reply_free(&again);
    cJSON_Delete(r);
    al_reply_free(&reply);
}

static void test_batch(al_session *s) {
    al_reply reply, single;
    cJSON *r = run(s,
                   "{\"op\":\"attention\",\"model\":\"tiny\",\"texts\":[\"the cat\",\"a big red dog ran\"],"
                   "\"text_pairs\":[null,\"the mat\"],\"pad_to\":12}",
                   AL_OK, &reply);
    CHECK(json_int(r, "n_seqs") == 2 && json_int(r, "seq_len") == 12);
    const al_tensor_out *mask = find_tensor(&reply, "attention_mask");
    const al_tensor_out *att = find_tensor(&reply, "attentions");
    const al_tensor_out *types = find_tensor(&reply, "type_ids");
    CHECK(mask && att && types);
    if (mask && att && types) {
        const int32_t *m = mask->data, *t = types->data;
        CHECK(m[3] == 1 && m[4] == 0 && m[11] == 0);           /* [CLS] the cat [SEP] + pads */
        CHECK(m[12 + 9] == 1 && m[12 + 10] == 0);              /* 10 tokens in the pair */
        CHECK(t[12 + 6] == 0 && t[12 + 7] == 1 && t[12 + 9] == 1);
        int bad = 0;
        check_attention_rows(att, m, 0, &bad);
        check_attention_rows(att, m, 1, &bad);
        CHECK_MSG(bad == 0, "%d bad rows in a padded batch", bad);
    }
    /* Padding does not change a real row much: the first sequence alone, unpadded. */
    cJSON *r2 = run(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"the cat\"}", AL_OK, &single);
    const al_tensor_out *att1 = find_tensor(&single, "attentions");
    if (att && att1) {
        double max_diff = 0;
        for (int l = 0; l < 3; l++)
            for (int h = 0; h < 4; h++)
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++) {
                        float a = ((float *)att->data)[((((size_t)l * 2 + 0) * 4 + h) * 12 + i) * 12 + j];
                        float b = ((float *)att1->data)[((((size_t)l * 1 + 0) * 4 + h) * 4 + i) * 4 + j];
                        double d = fabs((double)a - b);
                        if (d > max_diff) max_diff = d;
                    }
        CHECK_MSG(max_diff < 1e-5, "padded vs unpadded attention differ by %g", max_diff);
    }
    cJSON_Delete(r2);
    al_reply_free(&single);
    cJSON_Delete(r);
    al_reply_free(&reply);
}

static void test_truncation(al_session *s) {
    /* 45 words + [CLS] + [SEP] = 47 tokens; the model has 40 positions. */
    char req[1024] = "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"";
    for (int i = 0; i < 45; i++) strcat(req, i ? " cat" : "cat");
    strcat(req, "\"}");
    al_reply reply;
    cJSON *r = run(s, req, AL_OK, &reply);
    CHECK(json_int(r, "seq_len") == 40);
    CHECK_MSG(has_warning(r, "text truncated from 47 to 40 tokens (max_position_embeddings)"), "%s",
              reply.json);
    const cJSON *seq = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "sequences"), 0);
    CHECK(cJSON_IsTrue(cJSON_GetObjectItem(seq, "truncated")));
    const al_tensor_out *ids = find_tensor(&reply, "input_ids");
    CHECK(ids && ((int32_t *)ids->data)[39] == 3); /* [SEP] kept at the end */
    cJSON_Delete(r);
    al_reply_free(&reply);

    /* A batch names the text; the user's own max_length truncates silently. */
    r = run(s,
            "{\"op\":\"attention\",\"model\":\"tiny\",\"texts\":[\"cat\",\"cat cat cat cat cat cat cat cat "
            "cat cat cat cat cat cat cat cat cat cat cat cat cat cat cat cat cat cat cat cat cat cat cat "
            "cat cat cat cat cat cat cat cat cat\"]}",
            AL_OK, &reply);
    CHECK_MSG(has_warning(r, "texts[1]: text truncated from 42 to 40 tokens (max_position_embeddings)"),
              "%s", reply.json);
    cJSON_Delete(r);
    al_reply_free(&reply);
    r = run(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"cat cat cat cat cat cat\",\"max_length\":5}",
            AL_OK, &reply);
    CHECK(json_int(r, "seq_len") == 5);
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(r, "warnings")) == 0);
    cJSON_Delete(r);
    al_reply_free(&reply);
}

/* The attention of (layer, head) for sequence 0 of a [NL, 1, H, L, L] tensor. */
static const float *head_matrix(const al_tensor_out *att, int l, int h) {
    const int H = (int)att->shape[2], L = (int)att->shape[3];
    return (const float *)att->data + ((size_t)l * H + h) * L * L;
}

static void test_policies(al_session *s) {
    const int L = 8;
    float C[64];
    for (int i = 0; i < L; i++)
        for (int j = 0; j < L; j++) C[i * L + j] = (float)(1 + ((i * 7 + j * 3) % 5)); /* positive */
    int64_t shape[2] = {L, L};
    al_error err = {0};
    CHECK(al_session_set_tensor(s, "C", 2, shape, C, &err) == AL_OK);

    al_reply base, pol;
    const char *text = "\"text\":\"the cat sat on the mat\"";
    char req[1024];
    snprintf(req, sizeof req, "{\"op\":\"attention\",\"model\":\"tiny\",%s}", text);
    cJSON *r0 = run(s, req, AL_OK, &base);
    snprintf(req, sizeof req,
             "{\"op\":\"attention\",\"model\":\"tiny\",%s,\"policies\":["
             "{\"layer\":0,\"head\":1,\"mode\":\"constant\",\"constant\":\"C\"},"
             "{\"layer\":1,\"head\":2,\"mode\":\"mix\",\"lambda\":0.25,\"constant\":\"C\"},"
             "{\"layer\":2,\"mode\":\"zero\"},{\"layer\":2,\"head\":3,\"mode\":\"standard\"}]}",
             text);
    cJSON *r1 = run(s, req, AL_OK, &pol);
    const al_tensor_out *a0 = find_tensor(&base, "attentions"), *a1 = find_tensor(&pol, "attentions");
    CHECK(a0 && a1);
    if (a0 && a1) {
        /* Constant head: C row-normalised (no padding here). */
        const float *m = head_matrix(a1, 0, 1);
        double max_diff = 0;
        for (int i = 0; i < L; i++) {
            double row = 0;
            for (int j = 0; j < L; j++) row += C[i * L + j];
            for (int j = 0; j < L; j++) {
                double d = fabs(m[i * L + j] - C[i * L + j] / row);
                if (d > max_diff) max_diff = d;
            }
        }
        CHECK_MSG(max_diff < 1e-6, "constant head differs from C by %g", max_diff);
        /* Layer 0's other heads are unchanged (the policy is per head) up to PAPA's renormalisation
         * of every head in a layer with a constant head. */
        double head_diff = 0;
        for (int k = 0; k < L * L; k++) {
            double d = fabs(head_matrix(a1, 0, 0)[k] - head_matrix(a0, 0, 0)[k]);
            if (d > head_diff) head_diff = d;
        }
        CHECK_MSG(head_diff < 1e-6, "dynamic head changed by %g", head_diff);
        /* Zeroed layer 2 except head 3. */
        int nonzero = 0;
        for (int h = 0; h < 3; h++)
            for (int k = 0; k < L * L; k++) nonzero += head_matrix(a1, 2, h)[k] != 0.0f;
        CHECK(nonzero == 0);
        double sum = 0;
        for (int k = 0; k < L * L; k++) sum += head_matrix(a1, 2, 3)[k];
        CHECK_NEAR(sum, L, 1e-4);
        /* The mix head's rows sum to 1. */
        for (int i = 0; i < L; i++) {
            double row = 0;
            for (int j = 0; j < L; j++) row += head_matrix(a1, 1, 2)[i * L + j];
            CHECK_NEAR(row, 1.0, 1e-5);
        }
    }
    cJSON_Delete(r1);
    al_reply_free(&pol);

    /* Mix in layer 0 alone: lambda * softmax (the unmodified run's) + (1 - lambda) * normalised C. */
    snprintf(req, sizeof req,
             "{\"op\":\"attention\",\"model\":\"tiny\",%s,\"policies\":["
             "{\"layer\":0,\"head\":2,\"mode\":\"mix\",\"lambda\":0.25,\"constant\":\"C\"}]}",
             text);
    r1 = run(s, req, AL_OK, &pol);
    a1 = find_tensor(&pol, "attentions");
    if (a0 && a1) {
        double max_diff = 0;
        for (int i = 0; i < L; i++) {
            double row = 0;
            for (int j = 0; j < L; j++) row += C[i * L + j];
            for (int j = 0; j < L; j++) {
                double want = 0.25 * head_matrix(a0, 0, 2)[i * L + j] + 0.75 * C[i * L + j] / row;
                double d = fabs(head_matrix(a1, 0, 2)[i * L + j] - want);
                if (d > max_diff) max_diff = d;
            }
        }
        CHECK_MSG(max_diff < 1e-6, "mix head differs by %g", max_diff);
    }
    cJSON_Delete(r0);
    cJSON_Delete(r1);
    al_reply_free(&base);
    al_reply_free(&pol);

    /* A [NL, H, L, L] tensor, and the constant's L pads a shorter input (no pad_to given). */
    float *C4 = malloc(sizeof(float) * 3 * 4 * 10 * 10);
    for (int k = 0; k < 3 * 4 * 10 * 10; k++) C4[k] = 1.0f;
    int64_t shape4[4] = {3, 4, 10, 10};
    CHECK(al_session_set_tensor(s, "C4", 4, shape4, C4, &err) == AL_OK);
    free(C4);
    snprintf(req, sizeof req,
             "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"the cat\","
             "\"policies\":[{\"mode\":\"constant\",\"constant\":\"C4\"}]}");
    r1 = run(s, req, AL_OK, &pol);
    CHECK(json_int(r1, "seq_len") == 10);
    a1 = find_tensor(&pol, "attentions");
    if (a1) {
        /* Every head constant and uniform: each real row is 1/4 on the 4 real keys, pads 0. */
        const float *m = head_matrix(a1, 2, 3);
        CHECK_NEAR(m[0], 0.25, 1e-6);
        CHECK_NEAR(m[3], 0.25, 1e-6);
        CHECK(m[4] == 0.0f);
    }
    cJSON_Delete(r1);
    al_reply_free(&pol);

    /* Errors name the policy field. */
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"a\",\"policies\":[{\"mode\":\"odd\"}]}",
                 AL_ERR_INVALID, "field 'policies[0].mode'");
    expect_error(s,
                 "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"a\",\"policies\":[{\"mode\":\"zero\"},"
                 "{\"mode\":\"mix\",\"constant\":\"C\"}]}",
                 AL_ERR_INVALID, "missing field 'policies[1].lambda'");
    expect_error(s,
                 "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"a\",\"policies\":[{\"mode\":\"mix\","
                 "\"lambda\":1.5,\"constant\":\"C\"}]}",
                 AL_ERR_INVALID, "field 'policies[0].lambda' is 1.5");
    expect_error(s,
                 "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"a\",\"policies\":[{\"mode\":\"constant\","
                 "\"constant\":\"nope\"}]}",
                 AL_ERR_INVALID, "field 'policies[0].constant': no input tensor 'nope'");
    expect_error(s,
                 "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"a\",\"policies\":[{\"layer\":3,"
                 "\"mode\":\"zero\"}]}",
                 AL_ERR_INVALID, "field 'policies[0].layer' is 3, outside [-1, 2]");
    expect_error(s,
                 "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"a\",\"policies\":[{\"mode\":\"constant\","
                 "\"constant\":\"C\"}],\"pad_to\":9}",
                 AL_ERR_INVALID, "field 'pad_to' is 9 but constant tensor 'C' is 8x8");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"a\",\"policies\":{}}",
                 AL_ERR_INVALID, "field 'policies' must be an array");
    int64_t bad_shape[2] = {4, 5};
    CHECK(al_session_set_tensor(s, "R", 2, bad_shape, C, &err) == AL_OK);
    expect_error(s,
                 "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"a\",\"policies\":[{\"mode\":\"constant\","
                 "\"constant\":\"R\"}]}",
                 AL_ERR_INVALID, "tensor 'R' must be [L, L] or [3, 4, L, L]");
    CHECK(al_session_set_tensor(s, "", 2, shape, C, &err) == AL_ERR_INVALID);
    CHECK(al_session_set_tensor(s, "X", 7, shape, C, &err) == AL_ERR_INVALID);
    al_session_clear_tensors(s);
    expect_error(s,
                 "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"a\",\"policies\":[{\"mode\":\"constant\","
                 "\"constant\":\"C\"}]}",
                 AL_ERR_INVALID, "no input tensor 'C'");
}

/* The op table: "version" lists every op, each listed op is dispatched (its errors are its own, not
 * "unknown op"), and the "unknown op" error names exactly the listed ops in order. */
static void test_op_table(al_session *s) {
    al_reply reply;
    cJSON *r = run(s, "{\"op\":\"version\"}", AL_OK, &reply);
    const cJSON *ops = cJSON_GetObjectItem(r, "ops");
    CHECK(cJSON_IsArray(ops) && cJSON_GetArraySize(ops) >= 14);
    char expected[600] = "";
    int n_worker = 0, has_attention = 0, has_load_in_worker = 0;
    for (const cJSON *op = ops ? ops->child : NULL; op; op = op->next) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(op, "name"));
        const char *summary = cJSON_GetStringValue(cJSON_GetObjectItem(op, "summary"));
        const cJSON *worker = cJSON_GetObjectItem(op, "worker");
        CHECK(name && summary && summary[0] && cJSON_IsBool(worker));
        if (!name) continue;
        n_worker += cJSON_IsTrue(worker);
        has_attention |= strcmp(name, "attention") == 0 && cJSON_IsTrue(worker);
        has_load_in_worker |= strcmp(name, "load_model") == 0 && cJSON_IsTrue(worker);
        if (expected[0]) strcat(expected, ", ");
        strncat(expected, name, sizeof expected - strlen(expected) - 3);
        /* A request with only "op" reaches the op: it succeeds or fails on its own fields. */
        char req[96];
        snprintf(req, sizeof req, "{\"op\":\"%s\"}", name);
        al_reply one;
        al_status st = al_session_run(s, req, NULL, &one);
        CHECK_MSG(!(st && one.json && strstr(one.json, "unknown op")), "%s: %s", name, one.json);
        al_reply_free(&one);
    }
    CHECK(n_worker >= 9 && has_attention && !has_load_in_worker);
    cJSON_Delete(r);
    al_reply_free(&reply);
    char needle[700];
    snprintf(needle, sizeof needle, "unknown op 'explode' (ops: %s)", expected);
    expect_error(s, "{\"op\":\"explode\"}", AL_ERR_INVALID, needle);
}

/* The built-in tasks and the metrics: "version" publishes the core's tables (task.h), every row, in order. */
static void test_version_tables(al_session *s) {
    al_reply reply;
    cJSON *r = run(s, "{\"op\":\"version\"}", AL_OK, &reply);
    const cJSON *tasks = cJSON_GetObjectItem(r, "tasks");
    const cJSON *metrics = cJSON_GetObjectItem(r, "metrics");
    CHECK(cJSON_IsArray(tasks) && cJSON_IsArray(metrics));
    int k = 0;
    for (const cJSON *t = tasks ? tasks->child : NULL; t; t = t->next, k++) {
        const char *id = cJSON_GetStringValue(cJSON_GetObjectItem(t, "id"));
        const char *label = cJSON_GetStringValue(cJSON_GetObjectItem(t, "label"));
        CHECK(al_task_builtins[k].id && id && label && label[0] && strcmp(id, al_task_builtins[k].id) == 0);
    }
    CHECK(k == 4 && !al_task_builtins[k].id);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(tasks->child, "id")), "pos") == 0);
    int m = 0, mcc = 0;
    for (const cJSON *x = metrics ? metrics->child : NULL; x; x = x->next, m++) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(x, "name"));
        double lo = cJSON_GetNumberValue(cJSON_GetObjectItem(x, "min"));
        double hi = cJSON_GetNumberValue(cJSON_GetObjectItem(x, "max"));
        CHECK(name && al_task_metric_valid(name) && cJSON_GetStringValue(cJSON_GetObjectItem(x, "summary")));
        CHECK(lo < hi && hi == 1);
        if (name && strcmp(name, "mcc") == 0) mcc = lo == -1;
    }
    CHECK(m == 6 && !al_task_metrics[m].name && mcc);
    cJSON_Delete(r);
    al_reply_free(&reply);
}

/* A NUL character inside a text is refused, naming the field: cJSON would cut the string at it and the
 * request would silently run on "a" (docs/fuzzing.md, "No silent wrong answers"). */
static void test_nul(al_session *s) {
    expect_error(s, "{\"op\":\"tokenize\",\"model\":\"tiny\",\"text\":\"a\\u0000b\"}", AL_ERR_INVALID,
                 "request: field 'text' holds \\u0000 (a NUL character) at byte 41; texts cannot contain NUL");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"texts\":[\"a\", \"\\u0000\"]}", AL_ERR_INVALID,
                 "request: field 'texts' holds \\u0000");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"a\",\"text_pair\":\"b\\u0000\"}",
                 AL_ERR_INVALID, "field 'text_pair' holds");
    expect_error(s, "{\"op\":\"tokenize\",\"model\":\"tiny\",\"te\\u0000xt\":\"a\"}", AL_ERR_INVALID,
                 "request: a string holds \\u0000");
    /* an escaped backslash before u0000 is the text "\\u0000", not a NUL: it runs */
    al_reply reply = {0};
    cJSON *r = run(s, "{\"op\":\"tokenize\",\"model\":\"tiny\",\"text\":\"a\\\\u0000b\"}", AL_OK, &reply);
    cJSON_Delete(r);
    al_reply_free(&reply);
}

/* "words" as a token task gives them: the ordinary encoding's word_ids index the words; in the papa layout the
 * words fill the front, the final [SEP] sits at L - 1 and first_word marks each word's first sub-token. */
static void test_words(al_session *s) {
    al_reply a, b;
    cJSON *r = run(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"words\":[[\"the\",\"cat\"],[\"a\"]]}", AL_OK, &a);
    const cJSON *seq = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "sequences"), 0);
    const cJSON *wid = cJSON_GetObjectItemCaseSensitive(seq, "word_ids");
    CHECK(cJSON_GetArraySize(wid) >= 4 && cJSON_GetArrayItem(wid, 0)->valueint == -1 &&
          cJSON_GetArrayItem(wid, 1)->valueint == 0);
    cJSON *p = run(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"words\":[\"the\",\"cat\"],\"layout\":\"papa\","
                      "\"pad_to\":8}", AL_OK, &b);
    seq = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p, "sequences"), 0);
    const cJSON *first = cJSON_GetObjectItemCaseSensitive(seq, "first_word");
    const cJSON *mask = cJSON_GetObjectItemCaseSensitive(seq, "attention_mask");
    CHECK(cJSON_GetArraySize(first) == 8 && cJSON_GetArrayItem(first, 0)->valueint == -1 &&
          cJSON_GetArrayItem(first, 1)->valueint == 0 && cJSON_GetArrayItem(first, 7)->valueint == -1);
    CHECK(cJSON_GetArraySize(mask) == 8 && cJSON_GetArrayItem(mask, 7)->valueint == 1 &&
          cJSON_GetArrayItem(mask, 6)->valueint == 0);
    cJSON_Delete(r);
    cJSON_Delete(p);
    al_reply_free(&a);
    al_reply_free(&b);
}

static void test_errors(al_session *s) {
    test_nul(s);
    expect_error(s, "{\"op\":", AL_ERR_FORMAT, "request: malformed JSON");
    expect_error(s, "[1,2]", AL_ERR_INVALID, "request: must be a JSON object");
    expect_error(s, "{}", AL_ERR_INVALID, "missing field 'op'");
    expect_error(s, "{\"op\":5}", AL_ERR_INVALID, "field 'op' must be a string");
    expect_error(s, "{\"op\":\"explode\"}", AL_ERR_INVALID, "unknown op 'explode'");
    expect_error(s, "{\"op\":\"info\"}", AL_ERR_INVALID, "missing field 'model'");
    expect_error(s, "{\"op\":\"info\",\"model\":\"ghost\"}", AL_ERR_INVALID, "field 'model': no model 'ghost'");
    expect_error(s, "{\"op\":\"tokenize\",\"model\":\"tiny\"}", AL_ERR_INVALID, "missing field 'text'");
    expect_error(s, "{\"op\":\"tokenize\",\"model\":\"tiny\",\"text\":3}", AL_ERR_INVALID,
                 "request: field 'text' must be a string");
    expect_error(s, "{\"op\":\"tokenize\",\"model\":\"tiny\",\"text\":\"a\",\"max_length\":\"9\"}",
                 AL_ERR_INVALID, "field 'max_length' must be an integer");
    expect_error(s, "{\"op\":\"tokenize\",\"model\":\"tiny\",\"text\":\"a\",\"max_length\":2.5}",
                 AL_ERR_INVALID, "field 'max_length' must be an integer");
    expect_error(s, "{\"op\":\"tokenize\",\"model\":\"tiny\",\"text\":\"a\",\"add_special_tokens\":1}",
                 AL_ERR_INVALID, "field 'add_special_tokens' must be true or false");
    expect_error(s, "{\"op\":\"tokenize\",\"model\":\"rand\",\"text\":\"a\"}", AL_ERR_INVALID,
                 "model 'rand' has no tokenizer");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\"}", AL_ERR_INVALID,
                 "missing field 'text' (or 'texts', 'words' or 'input_ids')");
    /* "words": pre-split, one list or one per sequence (a token task's examples); the other ops take none */
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"words\":[[\"a\",7]]}", AL_ERR_INVALID,
                 "field 'words[0][1]' must be a string");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"words\":[\"a\",null]}", AL_ERR_INVALID,
                 "field 'words[1]' must be a string");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"words\":[[\"a\"],[]]}", AL_ERR_INVALID,
                 "field 'words[1]' must be a non-empty array of strings");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"words\":[\"a\"],\"text\":\"b\"}", AL_ERR_INVALID,
                 "field 'words' excludes 'text', 'texts', their pairs and 'input_ids'");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"words\":[\"a\"],\"text_pairs\":[\"b\"]}",
                 AL_ERR_INVALID, "field 'words' excludes");
    expect_error(s, "{\"op\":\"attention_stats\",\"model\":\"tiny\",\"words\":[\"a\"]}", AL_ERR_INVALID,
                 "missing field 'text' (or 'texts' or 'input_ids')");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"a\",\"texts\":[\"b\"]}",
                 AL_ERR_INVALID, "fields 'text' and 'texts' exclude each other");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"texts\":[\"b\",7]}", AL_ERR_INVALID,
                 "field 'texts[1]' must be a string");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"texts\":[]}", AL_ERR_INVALID,
                 "field 'texts' is empty");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"texts\":[\"a\"],\"text_pairs\":[\"b\",\"c\"]}",
                 AL_ERR_INVALID, "field 'text_pairs' must be an array as long as 'texts'");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"a\",\"outputs\":[\"attentions\",\"x\"]}",
                 AL_ERR_INVALID, "field 'outputs[1]' must be one of");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"a\",\"pad_to\":41}", AL_ERR_INVALID,
                 "field 'pad_to' is 41, more than the model's 40 positions");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"a\",\"pad_to\":0}", AL_ERR_INVALID,
                 "field 'pad_to' is 0, outside [1,");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"a\",\"input_ids\":[1]}",
                 AL_ERR_INVALID, "field 'input_ids' excludes 'text'");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"rand\",\"input_ids\":[[2,3],[2,500]]}", AL_ERR_INVALID,
                 "field 'input_ids[1][1]' must be an integer in [0, 64)");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"rand\",\"input_ids\":[[]]}", AL_ERR_INVALID,
                 "field 'input_ids[0]' is empty");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"rand\",\"input_ids\":[1,2],\"outputs\":[\"mlm_logits\"]}",
                 AL_ERR_INVALID, "needs an MLM head");
    expect_error(s, "{\"op\":\"load_model\",\"model\":\"x\",\"path\":\"/nonexistent/dir\"}", AL_ERR_IO,
                 "/nonexistent/dir");
    expect_error(s, "{\"op\":\"load_model\",\"model\":\"x\"}", AL_ERR_INVALID, "missing field 'path'");
    expect_error(s, "{\"op\":\"unload_model\",\"model\":\"x\"}", AL_ERR_INVALID, "no model 'x'");

    /* NULL arguments. */
    al_reply reply;
    CHECK(al_session_run(NULL, "{\"op\":\"models\"}", NULL, &reply) == AL_ERR_INVALID);
    CHECK(reply.json && strstr(reply.json, "\"error\""));
    al_reply_free(&reply);
    CHECK(al_session_run(s, NULL, NULL, &reply) == AL_ERR_INVALID);
    al_reply_free(&reply);
    CHECK(al_session_run(s, "{}", NULL, NULL) == AL_ERR_INVALID);
    al_reply_free(NULL);

    /* A bad model file: the fileset is taken and freed, the message names the file. */
    al_fileset *fs = al_fileset_new();
    al_error err = {0};
    al_fileset_add(fs, "config.json", "{\"model_type\":", 14, 1, &err);
    CHECK(al_session_add_model(s, "broken", fs, &err) != AL_OK);
    CHECK_MSG(strstr(err.message, "config.json") != NULL, "%s", err.message);
    CHECK(al_session_add_model(s, "", al_fileset_new(), &err) == AL_ERR_INVALID);
}

static void test_random_model_ids(al_session *s) {
    al_reply reply;
    cJSON *r = run(s, "{\"op\":\"attention\",\"model\":\"rand\",\"input_ids\":[[2,5,6,3],[2,7,3]]}", AL_OK,
                   &reply);
    CHECK(json_int(r, "seq_len") == 4 && json_int(r, "n_seqs") == 2);
    const cJSON *seq = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "sequences"), 1);
    CHECK(strcmp(cJSON_GetArrayItem(cJSON_GetObjectItem(seq, "tokens"), 1)->valuestring, "#7") == 0);
    const al_tensor_out *mask = find_tensor(&reply, "attention_mask");
    const al_tensor_out *att = find_tensor(&reply, "attentions");
    CHECK(mask && att && ((int32_t *)mask->data)[7] == 0);
    if (mask && att) {
        int bad = 0;
        check_attention_rows(att, mask->data, 1, &bad);
        CHECK(bad == 0);
    }
    cJSON_Delete(r);
    al_reply_free(&reply);
}

typedef struct progress_log {
    int calls, tokenize_calls, layer_calls;
    int cancel_at; /* raise the flag at this call (0: never) */
    volatile int *flag;
} progress_log;

static void on_progress(void *user, const char *stage, double fraction) {
    progress_log *log = user;
    log->calls++;
    if (strcmp(stage, "tokenize") == 0) log->tokenize_calls++;
    if (strncmp(stage, "layer", 5) == 0) log->layer_calls++;
    if (fraction < 0 || fraction > 1) log->calls += 1000; /* out of range: fails the check below */
    if (log->cancel_at && log->calls == log->cancel_at) *log->flag = 1;
}

static void test_progress_and_cancel(al_session *s) {
    volatile int flag = 0;
    progress_log log = {0, 0, 0, 0, &flag};
    al_run_params params = {on_progress, &log, &flag, NULL};
    al_reply reply;
    const char *req = "{\"op\":\"attention\",\"model\":\"tiny\",\"text\":\"the cat sat\"}";
    CHECK(al_session_run(s, req, &params, &reply) == AL_OK);
    CHECK(log.tokenize_calls >= 1 && log.calls < 1000);
    CHECK_MSG(log.layer_calls >= 1, "no 'layer' progress stage (%d calls)", log.calls);
    al_reply_free(&reply);

    flag = 1; /* raised before the run */
    CHECK(al_session_run(s, req, &params, &reply) == AL_ERR_CANCELLED);
    CHECK(reply.json && strstr(reply.json, "\"code\":\"cancelled\"") && reply.n_tensors == 0);
    al_reply_free(&reply);

    /* Raised during the forward pass, from the progress callback (as the worker would). */
    flag = 0;
    progress_log mid = {0, 0, 0, 3, &flag};
    params.progress_user = &mid;
    CHECK(al_session_run(s, req, &params, &reply) == AL_ERR_CANCELLED);
    al_reply_free(&reply);
    flag = 0;
}

static void test_load_model_op(al_session *s) {
    /* load_model reads a directory: copy the model files plus vocab.txt to a temporary one. */
    char dir[] = "/tmp/attnlab_api_XXXXXX";
    if (!mkdtemp(dir)) {
        printf("note: no temporary directory, load_model not tested\n");
        return;
    }
    al_fileset *fs = model_files();
    char path[256];
    for (int i = 0; fs && i < al_fileset_count(fs); i++) {
        const char *name = al_fileset_name(fs, i);
        if (strstr(name, "golden") || strstr(name, "hooks")) continue;
        size_t size;
        const uint8_t *data = al_fileset_get(fs, name, &size);
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL);
        if (f) {
            fwrite(data, 1, size, f);
            fclose(f);
        }
    }
    al_fileset_free(fs);
    char req[512];
    snprintf(req, sizeof req, "{\"op\":\"load_model\",\"model\":\"disk\",\"path\":\"%s\"}", dir);
    al_reply reply;
    cJSON *r = run(s, req, AL_OK, &reply);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "model")), "disk") == 0);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "arch")), "bert") == 0);
    cJSON_Delete(r);
    al_reply_free(&reply);
    r = run(s, "{\"op\":\"tokenize\",\"model\":\"disk\",\"text\":\"hello world\"}", AL_OK, &reply);
    CHECK(json_int(r, "n_tokens") == 4);
    cJSON_Delete(r);
    al_reply_free(&reply);
    r = run(s, "{\"op\":\"unload_model\",\"model\":\"disk\"}", AL_OK, &reply);
    cJSON_Delete(r);
    al_reply_free(&reply);
    expect_error(s, "{\"op\":\"info\",\"model\":\"disk\"}", AL_ERR_INVALID, "no model 'disk'");
    for (int i = 0; i < 8; i++) {
        static const char *const names[] = {"config.json", "model.safetensors", "vocab.txt",
                                            "golden.safetensors", "hooks.safetensors", "a", "b", "c"};
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        remove(path);
    }
    rmdir(dir);
}

static void test_safetensors_writer(void) {
    int32_t ids[6] = {1, 2, 3, 4, 5, 6};
    float x[2] = {0.5f, -2.0f};
    al_tensor_out t[2];
    memset(t, 0, sizeof t);
    strcpy(t[0].name, "ids");
    strcpy(t[0].dtype, "I32");
    t[0].ndim = 2;
    t[0].shape[0] = 2;
    t[0].shape[1] = 3;
    t[0].data = ids;
    t[0].nbytes = sizeof ids;
    strcpy(t[1].name, "x \"quoted\"");
    strcpy(t[1].dtype, "F32");
    t[1].ndim = 1;
    t[1].shape[0] = 2;
    t[1].data = x;
    t[1].nbytes = sizeof x;
    const char *meta[2] = {"note", "made by test_api"};
    uint8_t *buf;
    size_t size;
    al_error err = {0};
    CHECK(al_safetensors_serialize(t, 2, meta, 1, &buf, &size, &err) == AL_OK);
    uint64_t header = 0;
    for (int b = 0; b < 8; b++) header |= (uint64_t)buf[b] << (8 * b);
    CHECK(header % 8 == 0 && 8 + header + sizeof ids + sizeof x == size);
    cJSON *h = cJSON_ParseWithLength((const char *)buf + 8, (size_t)header);
    CHECK(h != NULL);
    const cJSON *e = cJSON_GetObjectItem(h, "x \"quoted\"");
    const cJSON *off = cJSON_GetObjectItem(e, "data_offsets");
    CHECK(cJSON_GetArrayItem(off, 0)->valueint == 24 && cJSON_GetArrayItem(off, 1)->valueint == 32);
    CHECK(strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(h, "__metadata__"), "note")),
                 "made by test_api") == 0);
    float back[2];
    memcpy(back, buf + 8 + header + 24, sizeof back);
    CHECK(back[0] == 0.5f && back[1] == -2.0f);
    cJSON_Delete(h);
    free(buf);
    t[1].nbytes = 4;
    CHECK(al_safetensors_serialize(t, 2, NULL, 0, &buf, &size, &err) == AL_ERR_INVALID);
    CHECK(strstr(err.message, "x \"quoted\"") != NULL);
    CHECK(al_safetensors_write("/nonexistent/dir/x.safetensors", t, 1, NULL, 0, &err) == AL_ERR_IO);
}

int main(void) {
    struct stat st;
    if (stat(MODEL_DIR "/model.safetensors", &st) != 0) SKIP_TEST(MODEL_DIR " is absent");
    al_session *s = al_session_new();
    al_error err = {0};
    al_fileset *fs = model_files();
    CHECK(fs != NULL);
    al_status status = al_session_add_model(s, "tiny", fs, &err);
    CHECK_MSG(status == AL_OK, "%s", err.message);
    if (status != AL_OK) {
        al_session_free(s);
        return check_summary("api");
    }
    /* A random model without a tokenizer, put in through the session's internal door. */
    al_config cfg = al_config_bert(64, 16, 2, 2, 32);
    al_model *random = NULL;
    CHECK(al_model_new_random(&cfg, 7, 0, &random, &err) == AL_OK);
    CHECK(al_api_put_model(s, "rand", random, &err) == AL_OK);

    test_info(s);
    test_tokenize(s);
    test_attention(s);
    test_batch(s);
    test_truncation(s);
    test_policies(s);
    test_words(s);
    test_errors(s);
    test_op_table(s);
    test_version_tables(s);
    test_random_model_ids(s);
    test_progress_and_cancel(s);
    test_load_model_op(s);
    test_safetensors_writer();
    al_session_free(s);
    return check_summary("api");
}
