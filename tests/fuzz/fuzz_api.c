/* fuzz_api.c: any bytes as a JSON API request (al_session_run) on a session holding two tiny random BERT models
 * with a WordPiece tokenizer ("m" and "m2", handed over as files: config.json, model.safetensors, vocab.txt) and
 * two attached constant tensors ("C" [8, 8], "C4" [2, 2, 8, 8]). The ops that change the session (load_model
 * reads a directory, unload_model removes a model) are skipped, so every input sees the same session.
 * Promises: the reply is a JSON object; a failure says {"error": {"code": al_status_name(status), "message":
 * non-empty}}; a success has no "error", lists in "tensors" exactly the binary tensors returned (name, dtype,
 * shape), each holding product(shape) x 4 bytes; float tensors are finite. */
#include <math.h>

#include "cJSON.h"
#include "fuzz_tokenizer_options.h"
#include "model/weights.h"
#include "train/pretrain.h"

static al_session *session;

static void add_model(const char *id, uint64_t seed) {
    al_error err;
    al_fileset *fs = al_fileset_new();
    /* the vocabulary of fuzz_tokenizer_options.h: count its lines */
    int V = 0;
    for (const char *p = fuzz_wordpiece_vocab; *p; p++) V += *p == '\n';
    al_config c = al_config_bert(V, 8, 2, 2, 16);
    c.max_position_embeddings = 24;
    al_model *m = NULL;
    FUZZ_REQUIRE(al_model_new_random(&c, seed, 1, &m, &err) == AL_OK, "%s", err.message);
    al_tensor_out t[64];
    int n = al_weights_tensors(m, t, 64);
    uint8_t *st = NULL;
    size_t st_size = 0;
    FUZZ_REQUIRE(al_safetensors_serialize(t, n, NULL, 0, &st, &st_size, &err) == AL_OK, "%s", err.message);
    char *cfg = al_bert_config_json(&c, 0.1f, 0.1f);
    FUZZ_REQUIRE(cfg != NULL, "config.json");
    FUZZ_REQUIRE(al_fileset_add(fs, "config.json", cfg, strlen(cfg), 1, &err) == AL_OK &&
                     al_fileset_add(fs, "model.safetensors", st, st_size, 1, &err) == AL_OK &&
                     al_fileset_add(fs, "vocab.txt", fuzz_wordpiece_vocab, sizeof fuzz_wordpiece_vocab - 1, 1, &err) ==
                         AL_OK,
                 "%s", err.message);
    FUZZ_REQUIRE(al_session_add_model(session, id, fs, &err) == AL_OK, "%s", err.message);
    free(cfg);
    free(st);
    al_model_free(m);
}

static void make_session(void) {
    al_error err;
    session = al_session_new();
    add_model("m", 1);
    add_model("m2", 2);
    float c8[8 * 8], c4[2 * 2 * 8 * 8];
    for (int i = 0; i < 64; i++) c8[i] = (float)((i * 7) % 5) / 4.0f;
    for (int i = 0; i < 256; i++) c4[i] = (float)((i * 3) % 7) / 6.0f;
    FUZZ_REQUIRE(al_session_set_tensor(session, "C", 2, (const int64_t[]){8, 8}, c8, &err) == AL_OK, "%s", err.message);
    FUZZ_REQUIRE(al_session_set_tensor(session, "C4", 4, (const int64_t[]){2, 2, 8, 8}, c4, &err) == AL_OK, "%s",
                 err.message);
}

static void check_reply(al_status st, const al_reply *r) {
    FUZZ_REQUIRE(r->json != NULL, "no reply JSON");
    cJSON *root = cJSON_Parse(r->json);
    FUZZ_REQUIRE(cJSON_IsObject(root), "reply is not a JSON object: %.200s", r->json);
    const cJSON *error = cJSON_GetObjectItemCaseSensitive(root, "error");
    if (st != AL_OK) {
        const cJSON *code = cJSON_GetObjectItemCaseSensitive(error, "code");
        const cJSON *msg = cJSON_GetObjectItemCaseSensitive(error, "message");
        FUZZ_REQUIRE(cJSON_IsString(code) && !strcmp(code->valuestring, al_status_name(st)), "error code for %s: %.200s",
                     al_status_name(st), r->json);
        FUZZ_REQUIRE(cJSON_IsString(msg) && msg->valuestring[0], "error without a message: %.200s", r->json);
        FUZZ_REQUIRE(r->n_tensors == 0, "tensors with an error");
        cJSON_Delete(root);
        return;
    }
    FUZZ_REQUIRE(error == NULL, "AL_OK with an error: %.200s", r->json);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "tensors");
    FUZZ_REQUIRE(r->n_tensors == 0 || cJSON_IsArray(list), "tensors not listed");
    FUZZ_REQUIRE(cJSON_GetArraySize(list) == r->n_tensors, "%d listed, %d returned", cJSON_GetArraySize(list),
                 r->n_tensors);
    for (int i = 0; i < r->n_tensors; i++) {
        const al_tensor_out *t = &r->tensors[i];
        const cJSON *item = cJSON_GetArrayItem(list, i);
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(item, "name");
        const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(item, "dtype");
        const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
        FUZZ_REQUIRE(cJSON_IsString(name) && !strcmp(name->valuestring, t->name), "tensor %d name", i);
        FUZZ_REQUIRE(cJSON_IsString(dtype) && !strcmp(dtype->valuestring, t->dtype), "tensor '%s' dtype", t->name);
        FUZZ_REQUIRE(!strcmp(t->dtype, "F32") || !strcmp(t->dtype, "I32"), "tensor '%s' dtype %s", t->name, t->dtype);
        FUZZ_REQUIRE(t->ndim >= 0 && t->ndim <= 6 && cJSON_GetArraySize(shape) == t->ndim, "tensor '%s' ndim", t->name);
        uint64_t numel = 1;
        for (int d = 0; d < t->ndim; d++) {
            const cJSON *dim = cJSON_GetArrayItem(shape, d);
            FUZZ_REQUIRE(t->shape[d] >= 0 && cJSON_IsNumber(dim) && dim->valuedouble == (double)t->shape[d],
                         "tensor '%s' shape[%d]", t->name, d);
            numel *= (uint64_t)t->shape[d];
        }
        FUZZ_REQUIRE(t->nbytes == numel * 4 && (t->data || !t->nbytes), "tensor '%s': %zu bytes for %llu elements",
                     t->name, t->nbytes, (unsigned long long)numel);
        if (!strcmp(t->dtype, "F32"))
            for (uint64_t k = 0; k < numel; k++)
                FUZZ_REQUIRE(isfinite(((const float *)t->data)[k]), "tensor '%s'[%llu] = %g", t->name,
                             (unsigned long long)k, (double)((const float *)t->data)[k]);
    }
    cJSON_Delete(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!session) make_session();
    char *req = fuzz_cstr(data, size);
    cJSON *probe = cJSON_Parse(req);
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(probe, "op");
    int skip = cJSON_IsString(op) && (!strcmp(op->valuestring, "load_model") || !strcmp(op->valuestring, "unload_model"));
    cJSON_Delete(probe);
    if (!skip) {
        al_reply r;
        al_status st = al_session_run(session, req, NULL, &r);
        check_reply(st, &r);
        al_reply_free(&r);
    }
    free(req);
    return 0;
}
