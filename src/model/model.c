/* model.c: al_model from a fileset (config.json + weights + optional tokenizer), or with fresh random
 * weights; the getters. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "cJSON.h"
#include "family.h"
#include "family_params.h"
#include "model_internal.h"
#include "score_rule.h"
#include "tensor_list.h"
#include "model_files.h"
#include "weights.h"

typedef al_status (*reader_fn)(const uint8_t *, size_t, const char *, al_tensor_list *, al_error *);

/* The names of the files the loader used (pointers into the fileset or a parsed index, alive while loading). */
typedef struct used_files {
    const char **names;
    int n, cap;
} used_files;

static int use_file(used_files *u, const char *name) {
    if (u->n == u->cap) {
        int cap = u->cap ? 2 * u->cap : 16;
        const char **grown = realloc(u->names, (size_t)cap * sizeof *grown);
        if (!grown) return -1;
        u->names = grown;
        u->cap = cap;
    }
    u->names[u->n++] = name;
    return 0;
}

/* A sharded checkpoint: {"weight_map": {"tensor name": "shard file name", ...}}; every shard named
 * there is read once. */
static al_status read_sharded(const al_fileset *fs, const char *index_name, reader_fn read,
                              al_tensor_list *list, used_files *used, al_error *err) {
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
        /* the fileset's own copy of the name outlives the parsed index */
        for (int i = 0; st == AL_OK && i < al_fileset_count(fs); i++)
            if (strcmp(al_fileset_name(fs, i), shard) == 0 && use_file(used, al_fileset_name(fs, i)))
                st = al_err(err, AL_ERR_OOM, "model: out of memory");
        n_read++;
    }
    if (st == AL_OK && n_read == 0)
        st = al_err(err, AL_ERR_FORMAT, "%s: field 'weight_map' names no shard", index_name);
    cJSON_Delete(root);
    return st;
}

/* Finds the weights among the files (model_files.c) and lists their tensors; *file_out names the source. */
static al_status read_weights(const al_fileset *fs, al_tensor_list *list, const char **file_out, used_files *used,
                              al_error *err) {
    const char *name = NULL;
    int sharded = 0, torch = 0;
    char several[256];
    const int found = al_files_pick_weights(fs, &name, &sharded, &torch, several, sizeof several);
    if (found < 0)
        return al_err(err, AL_ERR_IO,
                      "model files: no model.safetensors or pytorch_model.bin, and several other weights files "
                      "(%s): name the one to load model.safetensors or pytorch_model.bin", several);
    if (found == 0)
        return al_err(err, AL_ERR_IO,
                      "model files: no weights (model.safetensors, model.safetensors.index.json or "
                      "pytorch_model.bin)");
    *file_out = name;
    if (use_file(used, name)) return al_err(err, AL_ERR_OOM, "model: out of memory");
    reader_fn read = torch ? al_torch_bin_read : al_safetensors_read;
    if (sharded) return read_sharded(fs, name, read, list, used, err);
    size_t size = 0;
    const uint8_t *bytes = al_fileset_get(fs, name, &size);
    return read(bytes, size, name, list, err);
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
    used_files used = {0};
    int undecided = 0;
    al_status st = al_config_parse_family((const char *)cfg, cfg_size, "config.json", -1, NULL, &m->config,
                                          m->family_rule, sizeof m->family_rule, &undecided, err);
    al_tensor_list list = {0};
    const char *weights_file = "";
    if (st == AL_OK || undecided) {
        al_error config_err = err ? *err : (al_error){0};
        st = read_weights(files, &list, &weights_file, &used, err);
        /* config.json names no family: the weights' tensor names decide, as the family's own names */
        char rule[160];
        int arch = st == AL_OK && undecided ? al_family_from_tensors(&list, rule, sizeof rule) : -1;
        if (st == AL_OK && undecided && arch < 0) { /* the config's own refusal, with what the weights say */
            st = al_err(err, AL_ERR_FORMAT, "%.300s; nor do the tensor names of %.100s", config_err.message,
                        weights_file);
        } else if (st == AL_OK && undecided) {
            st = al_config_parse_family((const char *)cfg, cfg_size, "config.json", arch, rule, &m->config,
                                        m->family_rule, sizeof m->family_rule, NULL, err);
        }
    }
    if (st == AL_OK) st = al_weights_load(m, &list, weights_file, err);
    al_tensor_list_free(&list);
    snprintf(m->weights_file, sizeof m->weights_file, "%s", weights_file);
    if (st == AL_OK && al_tokenizer_files(files, NULL, 0) > 0) st = al_tokenizer_load(files, &m->tokenizer, err);
    if (st == AL_OK && use_file(&used, "config.json")) st = al_err(err, AL_ERR_OOM, "model: out of memory");
    if (st == AL_OK) st = al_files_note_unused(m, files, used.names, used.n, err);
    free(used.names);
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
    free(model->unused);
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
    if (fam->causal) { /* a decoder's head size is its own; its key/value heads divide its heads */
        const al_decoder_params *d = al_decoder(c);
        if (c->head_dim < 1 || c->head_dim > max || d->n_kv_heads < 1 || c->n_heads % d->n_kv_heads != 0)
            return al_err(err, AL_ERR_INVALID, "config: head_dim %d and n_kv_heads %d must be positive, n_kv_heads "
                          "dividing n_heads %d", c->head_dim, d->n_kv_heads, c->n_heads);
    } else if (c->hidden_size % c->n_heads) {
        return al_err(err, AL_ERR_INVALID, "config: hidden_size %d is not a multiple of n_heads %d",
                      c->hidden_size, c->n_heads);
    }
    if (c->embedding_size == 0) c->embedding_size = c->hidden_size;
    if (!fam->projection && c->embedding_size != c->hidden_size)
        return al_err(err, AL_ERR_INVALID, "config: embedding_size differs from hidden_size (ELECTRA only)");
    if (!fam->token_types) c->type_vocab_size = 0;
    if (!fam->causal) c->head_dim = c->hidden_size / c->n_heads;
    if (fam->scores->check) { /* the score rule's own fields (rotary_window's) */
        al_status st = fam->scores->check(c, fam->name, err);
        if (st) return st;
    }
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
int al_model_is_causal(const al_model *model) { return model && al_family_of(&model->config)->causal; }
size_t al_model_n_params(const al_model *model) { return model ? model->n_floats : 0; }
const char *al_model_weights_file(const al_model *model) { return model ? model->weights_file : ""; }
const char *al_model_weights_dtype(const al_model *model) { return model ? model->weights_dtype : ""; }
const char *al_model_family_rule(const al_model *model) { return model ? model->family_rule : ""; }
int al_model_n_unused_files(const al_model *model) { return model ? model->n_unused : 0; }
const char *al_model_unused_file(const al_model *model, int index, const char **reason) {
    if (!model || index < 0 || index >= model->n_unused) return NULL;
    if (reason) *reason = model->unused[index].reason;
    return model->unused[index].name;
}
