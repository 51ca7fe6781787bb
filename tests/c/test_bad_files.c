/* test_bad_files.c: broken model files through al_model_load, each error naming the file and the
 * field or tensor; then a deterministic mutation fuzz of a valid safetensors, .bin and config.json:
 * no crash (the test also runs under ASan/UBSan and in WASM), and either AL_OK or a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "read_file.h"
#include "core/rng.h"

typedef struct blob { uint8_t *data; size_t size; } blob;

static blob read_blob(const char *path) {
    blob b = {NULL, 0};
    b.data = read_file(path, &b.size);
    CHECK_MSG(b.data != NULL, "cannot read %s", path);
    return b;
}

/* Loads {config.json, name: data} (+ an optional third file); returns the status, fills err. */
static al_status load3(const blob *config, const char *name, const void *data, size_t size,
                       const char *name2, const void *data2, size_t size2, al_error *err) {
    al_fileset *fs = al_fileset_new();
    if (config) al_fileset_add(fs, "config.json", config->data, config->size, 0, err);
    if (name) al_fileset_add(fs, name, data, size, 0, err);
    if (name2) al_fileset_add(fs, name2, data2, size2, 0, err);
    al_model *m = NULL;
    al_status st = al_model_load(fs, &m, err);
    al_model_free(m);
    al_fileset_free(fs);
    return st;
}

static void expect(const char *what, al_status st, const al_error *err, al_status code, const char *part) {
    CHECK_MSG(st == code, "%s: got %s (%s)", what, al_status_name(st), err->message);
    CHECK_MSG(strstr(err->message, part) != NULL, "%s: '%s' lacks '%s'", what, err->message, part);
}

/* The header of a safetensors file, edited by `edit`, in front of the same data. */
static blob edit_header(const blob *st, void (*edit)(cJSON *)) {
    uint64_t hl = 0;
    for (int i = 7; i >= 0; i--) hl = (hl << 8) | st->data[i];
    cJSON *h = cJSON_ParseWithLength((const char *)st->data + 8, (size_t)hl);
    edit(h);
    char *text = cJSON_PrintUnformatted(h);
    cJSON_Delete(h);
    size_t tl = strlen(text), data_size = st->size - 8 - (size_t)hl;
    blob out = {malloc(8 + tl + data_size), 8 + tl + data_size};
    for (int i = 0; i < 8; i++) out.data[i] = (uint8_t)((uint64_t)tl >> (8 * i));
    memcpy(out.data + 8, text, tl);
    memcpy(out.data + 8 + tl, st->data + 8 + hl, data_size);
    free(text);
    return out;
}

static void drop_output_dense(cJSON *h) { cJSON_DeleteItemFromObject(h, "bert.encoder.layer.1.output.dense.weight"); }
static void drop_mlm_bias(cJSON *h) { cJSON_DeleteItemFromObject(h, "cls.predictions.bias"); }
static void word_emb_i32(cJSON *h) {
    cJSON *e = cJSON_GetObjectItem(h, "bert.embeddings.word_embeddings.weight");
    cJSON_ReplaceItemInObject(e, "dtype", cJSON_CreateString("I32"));
}
static void word_emb_f64(cJSON *h) {
    cJSON *e = cJSON_GetObjectItem(h, "bert.embeddings.word_embeddings.weight");
    cJSON_ReplaceItemInObject(e, "dtype", cJSON_CreateString("F64"));
    cJSON_ReplaceItemInObject(e, "shape", cJSON_CreateIntArray((const int[]){16, 8}, 2));
}
static void word_emb_i8(cJSON *h) {
    cJSON *e = cJSON_GetObjectItem(h, "bert.embeddings.word_embeddings.weight");
    cJSON_ReplaceItemInObject(e, "dtype", cJSON_CreateString("I8"));
    cJSON_ReplaceItemInObject(e, "shape", cJSON_CreateIntArray((const int[]){32, 32}, 2));
}
static void overlap(cJSON *h) {
    cJSON *e = cJSON_GetObjectItem(h, "bert.embeddings.LayerNorm.bias");
    cJSON *g = cJSON_GetObjectItem(cJSON_GetObjectItem(h, "bert.embeddings.LayerNorm.weight"), "data_offsets");
    cJSON_ReplaceItemInObject(e, "data_offsets", cJSON_Duplicate(g, 1));
}

/* One mutation: flip a bit, overwrite a byte or a 4-byte word, or truncate; half of them aimed at the
 * first `hot` bytes (the header / the pickle and directory), where the parsing happens. */
static size_t mutate(al_rng *r, uint8_t *buf, size_t size, size_t hot, size_t hot_end) {
    if (size == 0) return 0;
    uint32_t kind = al_rng_below(r, 8);
    size_t at;
    if (al_rng_below(r, 2) && hot_end > hot) at = hot + al_rng_below(r, (uint32_t)(hot_end - hot));
    else at = al_rng_below(r, (uint32_t)size);
    if (at >= size) at = size - 1;
    switch (kind) {
    case 0: case 1: case 2: buf[at] ^= (uint8_t)(1u << al_rng_below(r, 8)); break;
    case 3: case 4: buf[at] = (uint8_t)al_rng_u32(r); break;
    case 5: { /* an extreme 32-bit value */
        static const uint32_t words[4] = {0xffffffffu, 0x7fffffffu, 0x80000000u, 0};
        uint32_t w = words[al_rng_below(r, 4)];
        for (int i = 0; i < 4 && at + (size_t)i < size; i++) buf[at + i] = (uint8_t)(w >> (8 * i));
        break;
    }
    case 6: return at; /* truncate */
    default: buf[at] = (uint8_t)"{}[]\",:0123456789e-"[al_rng_below(r, 19)]; break;
    }
    return size;
}

static void fuzz(const char *what, const blob *config, const char *name, const blob *file, size_t hot,
                 size_t hot_end, int iterations, int mutate_config, uint64_t seed) {
    al_rng r;
    al_rng_seed(&r, seed);
    uint8_t *buf = malloc(file->size + 1), *cbuf = malloc(config->size + 1);
    int n_ok = 0, n_err = 0, silent = 0;
    for (int it = 0; it < iterations; it++) {
        memcpy(buf, file->data, file->size);
        memcpy(cbuf, config->data, config->size);
        size_t size = file->size, csize = config->size;
        int n_mut = 1 + (int)al_rng_below(&r, 4);
        for (int k = 0; k < n_mut; k++) {
            if (mutate_config) csize = mutate(&r, cbuf, csize, 0, csize);
            else size = mutate(&r, buf, size, hot, hot_end < size ? hot_end : size);
        }
        blob cfg = {cbuf, csize};
        al_error err = {0};
        al_status st = load3(&cfg, name, buf, size, NULL, NULL, 0, &err);
        if (st == AL_OK) n_ok++;
        else if (err.message[0]) n_err++;
        else silent++;
    }
    CHECK_MSG(silent == 0, "%s: %d errors without a message", what, silent);
    CHECK(n_ok + n_err == iterations);
    CHECK(n_err > iterations / 10); /* the mutations do hit the parser */
    printf("fuzz %s: %d iterations, %d loaded, %d refused with a message\n", what, iterations, n_ok, n_err);
    free(buf);
    free(cbuf);
}

int main(void) {
    blob config = read_blob("tests/fixtures/bert_st_f32/config.json");
    blob st = read_blob("tests/fixtures/bert_st_f32/model.safetensors");
    blob bin = read_blob("tests/fixtures/bert_bin/pytorch_model.bin");
    blob shard1 = read_blob("tests/fixtures/bert_sharded/model-00001-of-00002.safetensors");
    blob index = read_blob("tests/fixtures/bert_sharded/model.safetensors.index.json");
    CHECK(config.data && st.data && bin.data && shard1.data && index.data);
    if (!config.data || !st.data || !bin.data || !shard1.data || !index.data) return check_summary("bad_files");
    al_error err = {0};
    al_status s;

    s = load3(NULL, "model.safetensors", st.data, st.size, NULL, NULL, 0, &err);
    expect("no config", s, &err, AL_ERR_IO, "config.json: missing");
    s = load3(&config, NULL, NULL, 0, NULL, NULL, 0, &err);
    expect("no weights", s, &err, AL_ERR_IO, "no weights");

    /* config.json problems name the field. */
    const char *bad_cfg = "{\"model_type\": \"bert\", \"vocab_size\": 32, \"hidden_size\": \"8\"}";
    blob c2 = {(uint8_t *)bad_cfg, strlen(bad_cfg)};
    s = load3(&c2, "model.safetensors", st.data, st.size, NULL, NULL, 0, &err);
    expect("config field", s, &err, AL_ERR_FORMAT, "config.json: field 'hidden_size' must be an integer");
    const char *gpt = "{\"model_type\": \"mistral\", \"vocab_size\": 32}";
    blob c3 = {(uint8_t *)gpt, strlen(gpt)};
    s = load3(&c3, "model.safetensors", st.data, st.size, NULL, NULL, 0, &err);
    expect("model_type", s, &err, AL_ERR_UNSUPPORTED, "config.json: model_type 'mistral' is not supported");
    blob c4 = {config.data, config.size / 2};
    s = load3(&c4, "model.safetensors", st.data, st.size, NULL, NULL, 0, &err);
    expect("config truncated", s, &err, AL_ERR_FORMAT, "config.json: malformed JSON");

    /* Shapes against the config. */
    char *wide = malloc(config.size + 16);
    memcpy(wide, config.data, config.size);
    wide[config.size] = '\0';
    char *at = strstr(wide, "\"intermediate_size\": 16");
    CHECK(at != NULL);
    if (at) at[21] = '3', at[22] = '2';
    blob c5 = {(uint8_t *)wide, config.size};
    s = load3(&c5, "model.safetensors", st.data, st.size, NULL, NULL, 0, &err);
    expect("shape", s, &err, AL_ERR_FORMAT,
           "model.safetensors: tensor 'bert.encoder.layer.0.intermediate.dense.weight' shape [16, 8] does not "
           "match config (expected [32, 8])");
    free(wide);

    /* Header edits. */
    struct { const char *what; void (*edit)(cJSON *); al_status code; const char *part; } edits[] = {
        {"missing tensor", drop_output_dense, AL_ERR_FORMAT,
         "model.safetensors: missing tensor 'bert.encoder.layer.1.output.dense.weight'"},
        {"missing head bias", drop_mlm_bias, AL_ERR_FORMAT, "missing tensor 'cls.predictions.bias'"},
        {"I32 weight", word_emb_i32, AL_ERR_UNSUPPORTED,
         "model.safetensors: tensor 'bert.embeddings.word_embeddings.weight' has dtype I32"},
        {"F64 weight", word_emb_f64, AL_ERR_UNSUPPORTED, "'bert.embeddings.word_embeddings.weight' has dtype F64"},
        {"I8 weight", word_emb_i8, AL_ERR_UNSUPPORTED, "has dtype I8; weights must be F32, F16 or BF16"},
        {"overlap", overlap, AL_ERR_FORMAT, "model.safetensors: tensors 'bert.embeddings.LayerNorm."},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        blob e = edit_header(&st, edits[i].edit);
        s = load3(&config, "model.safetensors", e.data, e.size, NULL, NULL, 0, &err);
        expect(edits[i].what, s, &err, edits[i].code, edits[i].part);
        free(e.data);
    }

    /* Truncations. */
    s = load3(&config, "model.safetensors", st.data, 5, NULL, NULL, 0, &err);
    expect("truncated 5", s, &err, AL_ERR_FORMAT, "model.safetensors: file is truncated");
    s = load3(&config, "model.safetensors", st.data, 100, NULL, NULL, 0, &err);
    expect("truncated header", s, &err, AL_ERR_FORMAT, "model.safetensors: header length");
    s = load3(&config, "model.safetensors", st.data, st.size - 4, NULL, NULL, 0, &err);
    expect("truncated data", s, &err, AL_ERR_FORMAT, "out of range");
    s = load3(&config, "pytorch_model.bin", bin.data, bin.size / 2, NULL, NULL, 0, &err);
    expect("truncated zip", s, &err, AL_ERR_FORMAT, "pytorch_model.bin: ");
    CHECK(strstr(err.message, "truncated") != NULL);

    /* Sharded: a shard missing; a malformed index. */
    s = load3(&config, "model.safetensors.index.json", index.data, index.size,
              "model-00001-of-00002.safetensors", shard1.data, shard1.size, &err);
    expect("missing shard", s, &err, AL_ERR_IO,
           "model.safetensors.index.json: shard 'model-00002-of-00002.safetensors' is missing");
    s = load3(&config, "model.safetensors.index.json", "{\"weight_map\": 3}", 17, NULL, NULL, 0, &err);
    expect("bad index", s, &err, AL_ERR_FORMAT, "model.safetensors.index.json: field 'weight_map'");

    /* Mutation fuzz. */
    uint64_t hl = 0;
    for (int i = 7; i >= 0; i--) hl = (hl << 8) | st.data[i];
    fuzz("safetensors", &config, "model.safetensors", &st, 0, 8 + (size_t)hl, 3000, 0, 1);
    /* In the .bin, the pickle sits after the first local header; the directory at the end. */
    fuzz("bin-pickle", &config, "pytorch_model.bin", &bin, 0, 2048, 2000, 0, 2);
    fuzz("bin-directory", &config, "pytorch_model.bin", &bin, bin.size > 1500 ? bin.size - 1500 : 0, bin.size,
         2000, 0, 3);
    fuzz("config", &config, "model.safetensors", &st, 0, 0, 1500, 1, 4);

    free(config.data);
    free(st.data);
    free(bin.data);
    free(shard1.data);
    free(index.data);
    return check_summary("bad_files");
}
