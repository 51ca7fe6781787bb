/* model.c: al_model from a fileset (config.json + weights + optional tokenizer), or with fresh random
 * weights; the getters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "cJSON.h"
#include "family.h"
#include "model_internal.h"
#include "tensor_list.h"
#include "weights.h"

typedef al_status (*reader_fn)(const uint8_t *, size_t, const char *, al_tensor_list *, al_error *);

/* A sharded checkpoint: {"weight_map": {"tensor name": "shard file name", ...}}; every shard named
 * there is read once. */
static al_status read_sharded(const al_fileset *fs, const char *index_name, reader_fn read,
                              al_tensor_list *list, al_error *err) {
    size_t size = 0;
    const uint8_t *text = al_fileset_get(fs, index_name, &size);
    cJSON *root = cJSON_ParseWithLength((const char *)text, size);
    if (!root) return al_err(err, AL_ERR_FORMAT, "%s: malformed JSON", index_name);
    al_status st = AL_OK;
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    if (!cJSON_IsObject(map)) {
        st = al_err(err, AL_ERR_FORMAT, "%s: field 'weight_map' is missing or not an object",
                    index_name);
    }
    const cJSON *item;
    int n_read = 0;
    for (item = map ? map->child : NULL; item && st == AL_OK; item = item->next) {
        if (!cJSON_IsString(item)) {
            st = al_err(err, AL_ERR_FORMAT, "%s: weight_map entry '%s' is not a file name", index_name,
                        item->string ? item->string : "?");
            break;
        }
        const char *shard = item->valuestring;
        int seen = 0; /* read each shard once: was it named by an earlier entry? */
        for (const cJSON *prev = map->child; prev != item; prev = prev->next)
            if (cJSON_IsString(prev) && strcmp(prev->valuestring, shard) == 0) {
                seen = 1;
                break;
            }
        if (seen) continue;
        size_t shard_size = 0;
        const uint8_t *bytes = al_fileset_get(fs, shard, &shard_size);
        if (!bytes) {
            st = al_err(err, AL_ERR_IO, "%s: shard '%s' is missing from the model files", index_name,
                        shard);
            break;
        }
        st = read(bytes, shard_size, shard, list, err);
        n_read++;
    }
    if (st == AL_OK && n_read == 0)
        st = al_err(err, AL_ERR_FORMAT, "%s: field 'weight_map' names no shard", index_name);
    cJSON_Delete(root);
    return st;
}

/* Finds the weights among the files and lists their tensors; *file_out names the source. */
static al_status read_weights(const al_fileset *fs, al_tensor_list *list, const char **file_out,
                              al_error *err) {
    static const struct { const char *name; int sharded; reader_fn read; } sources[] = {
        {"model.safetensors", 0, al_safetensors_read},
        {"model.safetensors.index.json", 1, al_safetensors_read},
        {"pytorch_model.bin", 0, al_torch_bin_read},
        {"pytorch_model.bin.index.json", 1, al_torch_bin_read},
    };
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++) {
        size_t size = 0;
        const uint8_t *bytes = al_fileset_get(fs, sources[i].name, &size);
        if (!bytes) continue;
        *file_out = sources[i].name;
        if (sources[i].sharded) return read_sharded(fs, sources[i].name, sources[i].read, list, err);
        return sources[i].read(bytes, size, sources[i].name, list, err);
    }
    return al_err(err, AL_ERR_IO,
                  "model files: no weights (model.safetensors, model.safetensors.index.json or "
                  "pytorch_model.bin)");
}

static int has_tokenizer_files(const al_fileset *fs) {
    return al_fileset_get(fs, "tokenizer.json", NULL) || al_fileset_get(fs, "vocab.txt", NULL) ||
           (al_fileset_get(fs, "vocab.json", NULL) && al_fileset_get(fs, "merges.txt", NULL));
}

al_status al_model_load(const al_fileset *files, al_model **out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "model: no output pointer");
    *out = NULL;
    if (!files) return al_err(err, AL_ERR_INVALID, "model: no files given");
    size_t cfg_size = 0;
    const uint8_t *cfg = al_fileset_get(files, "config.json", &cfg_size);
    if (!cfg) return al_err(err, AL_ERR_IO, "config.json: missing from the model files");
    al_model *m = calloc(1, sizeof *m);
    if (!m) return al_err(err, AL_ERR_OOM, "model: out of memory");
    al_status st = al_config_parse((const char *)cfg, cfg_size, "config.json", &m->config, err);
    al_tensor_list list = {0};
    const char *weights_file = "";
    if (st == AL_OK) st = read_weights(files, &list, &weights_file, err);
    if (st == AL_OK) st = al_weights_load(m, &list, weights_file, err);
    al_tensor_list_free(&list);
    snprintf(m->weights_file, sizeof m->weights_file, "%s", weights_file);
    if (st == AL_OK && has_tokenizer_files(files)) st = al_tokenizer_load(files, &m->tokenizer, err);
    if (st != AL_OK) {
        al_model_free(m);
        return st;
    }
    *out = m;
    return AL_OK;
}

al_status al_model_load_dir(const char *dir, al_model **out, al_error *err) {
    if (out) *out = NULL;
    al_fileset *fs = al_fileset_new();
    if (!fs) return al_err(err, AL_ERR_OOM, "model: out of memory");
    al_status st = al_fileset_add_dir(fs, dir, err);
    if (st == AL_OK) st = al_model_load(fs, out, err); /* the model keeps no pointer into fs */
    al_fileset_free(fs);
    return st;
}

void al_model_free(al_model *model) {
    if (!model) return;
    al_tokenizer_free(model->tokenizer);
    free(model->storage);
    free(model->layer_storage);
    free(model);
}

/* Checks a caller's config before sizing weights from it. */
static al_status check_config(al_config *c, al_error *err) {
    const int max = 1 << 24;
    const struct { const char *name; int value, min; } f[] = {
        {"vocab_size", c->vocab_size, 1},
        {"hidden_size", c->hidden_size, 1},
        {"n_layers", c->n_layers, 1},
        {"n_heads", c->n_heads, 1},
        {"intermediate_size", c->intermediate_size, 1},
        {"max_position_embeddings", c->max_position_embeddings, 1},
        {"type_vocab_size", c->type_vocab_size, 0},
        {"pad_token_id", c->pad_token_id, 0},
        {"embedding_size", c->embedding_size, 0},
        {"position_offset", c->position_offset, 0},
    };
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].value < f[i].min || f[i].value > max)
            return al_err(err, AL_ERR_INVALID, "config: field '%s' = %d is out of range", f[i].name,
                          f[i].value);
    const al_family *fam = al_family_of(c);
    if (!fam) return al_err(err, AL_ERR_INVALID, "config: field 'arch' = %d is unknown", (int)c->arch);
    if (c->hidden_size % c->n_heads)
        return al_err(err, AL_ERR_INVALID, "config: hidden_size %d is not a multiple of n_heads %d",
                      c->hidden_size, c->n_heads);
    if (c->embedding_size == 0) c->embedding_size = c->hidden_size;
    if (!fam->projection && c->embedding_size != c->hidden_size)
        return al_err(err, AL_ERR_INVALID, "config: embedding_size differs from hidden_size (ELECTRA only)");
    if (!fam->token_types) c->type_vocab_size = 0;
    c->head_dim = c->hidden_size / c->n_heads;
    if (!c->model_type[0]) snprintf(c->model_type, sizeof c->model_type, "%s", al_arch_name(c->arch));
    if (!(c->layer_norm_eps > 0.0f)) c->layer_norm_eps = 1e-12f;
    return AL_OK;
}

al_status al_model_new_random(const al_config *config, uint64_t seed, int mlm_head, al_model **out,
                              al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "model: no output pointer");
    *out = NULL;
    if (!config) return al_err(err, AL_ERR_INVALID, "model: no config given");
    al_model *m = calloc(1, sizeof *m);
    if (!m) return al_err(err, AL_ERR_OOM, "model: out of memory");
    m->config = *config;
    al_status st = check_config(&m->config, err);
    if (st == AL_OK) st = al_weights_random(m, seed, mlm_head, err);
    if (st != AL_OK) {
        al_model_free(m);
        return st;
    }
    snprintf(m->weights_file, sizeof m->weights_file, "random");
    *out = m;
    return AL_OK;
}

const al_config *al_model_config(const al_model *model) { return model ? &model->config : NULL; }
const al_tokenizer *al_model_tokenizer(const al_model *model) { return model ? model->tokenizer : NULL; }
int al_model_has_mlm_head(const al_model *model) { return model && model->w.mlm_dense_w != NULL; }
size_t al_model_n_params(const al_model *model) { return model ? model->n_floats : 0; }
const char *al_model_weights_file(const al_model *model) { return model ? model->weights_file : ""; }
const char *al_model_weights_dtype(const al_model *model) { return model ? model->weights_dtype : ""; }
