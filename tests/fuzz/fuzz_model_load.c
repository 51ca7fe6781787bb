/* fuzz_model_load.c: a whole model from a fileset (al_model_load), as the browser hands files over. The input is
 * a sequence of files, each [name length: 1 byte][name][size: 4 bytes little-endian][bytes] (a size past the end
 * takes what is left); scripts/fuzz_corpus.py packs the fixture directories this way. Promises: an error has a
 * message and no model; a loaded model has a sane config, parameters, a dtype, and runs al_forward on a short
 * batch of in-vocabulary ids (or refuses it with a message); its tokenizer, when present, keeps
 * fuzz_encode_probe's promises, and its ids either run or are refused naming input_ids. */
#include "fuzz_common.h"

static al_fileset *unpack(const uint8_t *data, size_t size) {
    al_fileset *fs = al_fileset_new();
    al_error err;
    size_t at = 0;
    while (at < size) {
        size_t name_len = data[at++];
        if (name_len == 0 || at + name_len + 4 > size) break;
        char name[256];
        memcpy(name, data + at, name_len);
        name[name_len] = '\0';
        at += name_len;
        uint32_t n = (uint32_t)data[at] | (uint32_t)data[at + 1] << 8 | (uint32_t)data[at + 2] << 16 |
                     (uint32_t)data[at + 3] << 24;
        at += 4;
        size_t len = n < size - at ? n : size - at;
        if (strlen(name) == name_len) al_fileset_add(fs, name, data + at, len, 0, &err); /* names with a NUL: skipped */
        at += len;
    }
    return fs;
}

static void run_forward(const al_model *m, const int32_t *ids, int n) {
    const al_config *c = al_model_config(m);
    al_batch batch = {1, n, ids, NULL, NULL, NULL};
    size_t per = (size_t)c->n_layers * c->n_heads * n * n;
    float *attn = malloc(per * sizeof(float) + 1);
    al_forward_outputs out = {.attentions = attn};
    al_forward_params p = al_forward_default_params();
    al_error err;
    memset(&err, 0, sizeof err);
    al_status st = al_forward(m, &batch, &p, &out, &err);
    int in_vocab = 1;
    for (int i = 0; i < n; i++) in_vocab &= ids[i] >= 0 && ids[i] < c->vocab_size;
    if (in_vocab && n <= c->max_position_embeddings - c->position_offset)
        FUZZ_REQUIRE(st == AL_OK, "forward on %d in-vocabulary ids failed: %s", n, err.message);
    if (st != AL_OK) fuzz_check_error(st, &err, NULL);
    if (!in_vocab) FUZZ_REQUIRE(st != AL_OK && strstr(err.message, "input_ids"), "out-of-vocabulary ids were run");
    free(attn);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    al_fileset *fs = unpack(data, size);
    al_model *m = NULL;
    al_error err;
    memset(&err, 0, sizeof err);
    al_status st = al_model_load(fs, &m, &err);
    al_fileset_free(fs);
    if (st != AL_OK) {
        fuzz_check_error(st, &err, NULL);
        FUZZ_REQUIRE(m == NULL, "a model despite an error");
        return 0;
    }
    const al_config *c = al_model_config(m);
    FUZZ_REQUIRE(c->vocab_size >= 1 && c->n_layers >= 1 && c->hidden_size % c->n_heads == 0, "config");
    FUZZ_REQUIRE(al_model_n_params(m) > 0, "no parameters");
    const char *dt = al_model_weights_dtype(m);
    FUZZ_REQUIRE(!strcmp(dt, "F32") || !strcmp(dt, "F16") || !strcmp(dt, "BF16"), "weights dtype '%s'", dt);
    int32_t ids[3] = {0, (c->vocab_size - 1) / 2, c->vocab_size - 1};
    int n = c->max_position_embeddings - c->position_offset < 3 ? c->max_position_embeddings - c->position_offset : 3;
    if (n > 0 && (double)c->n_layers * c->hidden_size * c->intermediate_size < 1e8) run_forward(m, ids, n);
    const al_tokenizer *tok = al_model_tokenizer(m);
    if (tok) {
        fuzz_encode_probe(tok);
        al_encoding e;
        al_encode_options o = al_encode_default_options();
        o.truncation = 1;
        o.max_length = 4;
        if (al_tokenizer_encode(tok, "the cat", NULL, &o, &e, &err) == AL_OK) {
            if (e.length > 0 && e.length <= c->max_position_embeddings - c->position_offset &&
                (double)c->n_layers * c->hidden_size * c->intermediate_size < 1e8)
                run_forward(m, e.ids, e.length);
            al_encoding_free(&e);
        }
    }
    al_model_free(m);
    return 0;
}
