/* export.c: a model's weights written again in Hugging Face layout, as float32 or float16, in one file or
 * in shards with an index (model.safetensors.index.json), which the loader reads like any Hub checkpoint.
 * float16 halves the bytes of an embedded model (a quicker clone and first load in the page); shards keep
 * every file under a size limit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../model/model_internal.h"
#include "../model/tensor_list.h"
#include "../model/weights.h"
#include "cJSON.h"
#include "pretrain.h"

/* float16 copies of the tensors (data replaced by malloc'd buffers, freed by the caller). */
static al_status to_f16(al_tensor_out *t, int n, al_error *err) {
    for (int i = 0; i < n; i++) {
        const size_t count = t[i].nbytes / sizeof(float);
        uint16_t *h = malloc(count * sizeof *h + 1);
        if (!h) return al_err(err, AL_ERR_OOM, "export: out of memory converting '%s' to F16", t[i].name);
        const float *src = t[i].data;
        for (size_t e = 0; e < count; e++) h[e] = al_f32_to_f16(src[e]);
        t[i].data = h;
        t[i].nbytes = count * sizeof *h;
        snprintf(t[i].dtype, sizeof t[i].dtype, "F16");
    }
    return AL_OK;
}

/* Writes tensors [first, last) as one shard file. */
static al_status write_shard(const char *dir, const char *file, const al_tensor_out *t, int first, int last,
                             al_error *err) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    const char *meta[] = {"format", "pt"};
    return al_safetensors_write(path, t + first, last - first, meta, 1, err);
}

/* Shard boundaries: consecutive tensors while the shard stays within max_bytes (a tensor larger than the
 * limit gets a shard of its own). Returns the number of shards; starts[k] is shard k's first tensor. */
static int plan_shards(const al_tensor_out *t, int n, size_t max_bytes, int *starts) {
    int n_shards = 0;
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0 || (max_bytes && used + t[i].nbytes > max_bytes && used > 0)) {
            starts[n_shards++] = i;
            used = 0;
        }
        used += t[i].nbytes;
    }
    starts[n_shards] = n;
    return n_shards;
}

static al_status write_index(const char *dir, const al_tensor_out *t, const int *starts, int n_shards,
                             al_error *err) {
    cJSON *root = cJSON_CreateObject(), *meta = cJSON_AddObjectToObject(root, "metadata"),
          *map = cJSON_AddObjectToObject(root, "weight_map");
    size_t total = 0;
    char file[64];
    for (int k = 0; k < n_shards; k++) {
        snprintf(file, sizeof file, "model-%05d-of-%05d.safetensors", k + 1, n_shards);
        for (int i = starts[k]; i < starts[k + 1]; i++) {
            cJSON_AddStringToObject(map, t[i].name, file);
            total += t[i].nbytes;
        }
    }
    cJSON_AddNumberToObject(meta, "total_size", (double)total);
    char *text = cJSON_Print(root);
    cJSON_Delete(root);
    if (!text) return al_err(err, AL_ERR_OOM, "export: out of memory for the index");
    char path[1200];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    FILE *f = fopen(path, "wb");
    al_status st = AL_OK;
    if (!f || fputs(text, f) < 0 || fputc('\n', f) == EOF) st = al_err(err, AL_ERR_IO, "%s: cannot write", path);
    if (f && fclose(f) != 0 && !st) st = al_err(err, AL_ERR_IO, "%s: write failed", path);
    cJSON_free(text);
    return st;
}

al_status al_export_weights(const char *dir, const al_model *model, const char *dtype, size_t max_shard_bytes,
                            al_error *err) {
    const int f16 = dtype && strcmp(dtype, "F16") == 0;
    if (dtype && !f16 && strcmp(dtype, "F32") != 0)
        return al_err(err, AL_ERR_INVALID, "export: dtype '%s' must be F32 or F16", dtype);
    if (al_make_dirs(dir)) return al_err(err, AL_ERR_IO, "%s: cannot create directory", dir);
    const int max = al_weights_n_tensors(model);
    al_tensor_out *t = calloc((size_t)max, sizeof *t);
    int *starts = malloc(sizeof *starts * (size_t)(max + 1));
    if (!t || !starts) {
        free(t);
        free(starts);
        return al_err(err, AL_ERR_OOM, "export: out of memory");
    }
    /* the family's names and file layouts: the loader's own table (Conv1D weights turned back to [in, out]) */
    const int n = al_weights_file_tensors(model, t, max);
    al_tensor_out *as_file = n > 0 ? malloc(sizeof *as_file * (size_t)n) : NULL; /* the turned copies to free */
    if (n < 0 || (n > 0 && !as_file)) {
        if (n > 0) al_weights_file_tensors_free(t, n);
        free(t);
        free(starts);
        return al_err(err, AL_ERR_OOM, "export: out of memory");
    }
    if (n > 0) memcpy(as_file, t, sizeof *as_file * (size_t)n);
    al_status st = f16 ? to_f16(t, n, err) : AL_OK;
    const int n_shards = plan_shards(t, n, max_shard_bytes, starts);
    if (!st && n_shards == 1) st = write_shard(dir, "model.safetensors", t, 0, n, err);
    for (int k = 0; !st && n_shards > 1 && k < n_shards; k++) {
        char file[64];
        snprintf(file, sizeof file, "model-%05d-of-%05d.safetensors", k + 1, n_shards);
        st = write_shard(dir, file, t, starts[k], starts[k + 1], err);
    }
    if (!st && n_shards > 1) st = write_index(dir, t, starts, n_shards, err);
    if (f16)
        for (int i = 0; i < n; i++)
            if (strcmp(t[i].dtype, "F16") == 0) free(t[i].data);
    if (n > 0) al_weights_file_tensors_free(as_file, n);
    free(as_file);
    free(t);
    free(starts);
    return st;
}
