/* safetensors_write.c: tensors ("F32", "I32" or "F16") -> .safetensors bytes: 8-byte little-endian header
 * length, JSON header ({"__metadata__": {...}, "name": {"dtype", "shape", "data_offsets"}, ...})
 * padded with spaces so the data starts 8-byte aligned, then the raw little-endian data in order.
 * metadata_kv holds n_metadata (key, value) pairs flattened: k0, v0, k1, v1, ... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "cJSON.h"

static al_status check_tensor(const al_tensor_out *t, int index, uint64_t *nbytes, al_error *err) {
    if (!t->name[0] || memchr(t->name, '\0', sizeof t->name) == NULL)
        return al_err(err, AL_ERR_INVALID, "safetensors: tensor %d has no name", index);
    if (strcmp(t->name, "__metadata__") == 0)
        return al_err(err, AL_ERR_INVALID, "safetensors: '__metadata__' is not a tensor name");
    const int is_f16 = strcmp(t->dtype, "F16") == 0;
    if (strcmp(t->dtype, "F32") != 0 && strcmp(t->dtype, "I32") != 0 && !is_f16)
        return al_err(err, AL_ERR_UNSUPPORTED, "safetensors: tensor '%s' dtype '%.8s' (F32, I32 or F16 only)",
                      t->name, t->dtype);
    if (t->ndim < 0 || t->ndim > 6)
        return al_err(err, AL_ERR_INVALID, "safetensors: tensor '%s' has %d dimensions", t->name,
                      t->ndim);
    uint64_t n = is_f16 ? 2 : 4;
    for (int i = 0; i < t->ndim; i++) {
        if (t->shape[i] < 0 || (t->shape[i] && n > UINT64_MAX / 2 / (uint64_t)t->shape[i]))
            return al_err(err, AL_ERR_INVALID, "safetensors: tensor '%s' shape[%d] is invalid", t->name,
                          i);
        n *= (uint64_t)t->shape[i];
    }
    if (n != (uint64_t)t->nbytes)
        return al_err(err, AL_ERR_INVALID, "safetensors: tensor '%s' has %zu bytes, its shape needs %llu",
                      t->name, t->nbytes, (unsigned long long)n);
    if (n && !t->data)
        return al_err(err, AL_ERR_INVALID, "safetensors: tensor '%s' has no data", t->name);
    *nbytes = n;
    return AL_OK;
}

/* Builds the header JSON text (malloc'd by cJSON) and the total data size. */
static al_status build_header(const al_tensor_out *tensors, int n_tensors,
                              const char *const *metadata_kv, int n_metadata, char **text,
                              uint64_t *data_size, al_error *err) {
    cJSON *root = cJSON_CreateObject();
    al_status st = root ? AL_OK : al_err(err, AL_ERR_OOM, "safetensors: out of memory");
    if (st == AL_OK && n_metadata > 0) {
        cJSON *meta = cJSON_AddObjectToObject(root, "__metadata__");
        for (int i = 0; meta && i < n_metadata && st == AL_OK; i++) {
            const char *k = metadata_kv ? metadata_kv[2 * i] : NULL, *v = metadata_kv ? metadata_kv[2 * i + 1] : NULL;
            if (!k || !v) st = al_err(err, AL_ERR_INVALID, "safetensors: metadata pair %d is NULL", i);
            else if (!cJSON_AddStringToObject(meta, k, v)) st = al_err(err, AL_ERR_OOM, "safetensors: out of memory");
        }
        if (!meta && st == AL_OK) st = al_err(err, AL_ERR_OOM, "safetensors: out of memory");
    }
    uint64_t offset = 0;
    for (int i = 0; i < n_tensors && st == AL_OK; i++) {
        const al_tensor_out *t = &tensors[i];
        uint64_t nbytes = 0;
        if ((st = check_tensor(t, i, &nbytes, err)) != AL_OK) break;
        if (cJSON_GetObjectItemCaseSensitive(root, t->name)) {
            st = al_err(err, AL_ERR_INVALID, "safetensors: tensor name '%s' appears twice", t->name);
            break;
        }
        cJSON *e = cJSON_AddObjectToObject(root, t->name);
        cJSON *shape = e ? cJSON_AddArrayToObject(e, "shape") : NULL;
        cJSON *offs = e ? cJSON_AddArrayToObject(e, "data_offsets") : NULL;
        if (!e || !shape || !offs || !cJSON_AddStringToObject(e, "dtype", t->dtype)) {
            st = al_err(err, AL_ERR_OOM, "safetensors: out of memory");
            break;
        }
        for (int d = 0; d < t->ndim; d++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->shape[d]));
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)offset));
        cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(offset + nbytes)));
        offset += nbytes;
    }
    if (st == AL_OK) {
        *text = cJSON_PrintUnformatted(root);
        if (!*text) st = al_err(err, AL_ERR_OOM, "safetensors: out of memory");
    }
    *data_size = offset;
    cJSON_Delete(root);
    return st;
}

al_status al_safetensors_serialize(const al_tensor_out *tensors, int n_tensors,
                                   const char *const *metadata_kv, int n_metadata, uint8_t **out,
                                   size_t *out_size, al_error *err) {
    if (!out || !out_size || n_tensors < 0 || (n_tensors > 0 && !tensors))
        return al_err(err, AL_ERR_INVALID, "safetensors: bad arguments");
    *out = NULL;
    *out_size = 0;
    char *text = NULL;
    uint64_t data_size = 0;
    al_status st = build_header(tensors, n_tensors, metadata_kv, n_metadata, &text, &data_size, err);
    if (st != AL_OK) {
        free(text);
        return st;
    }
    size_t len = strlen(text), padded = (len + 7) / 8 * 8;
    uint64_t total = 8 + (uint64_t)padded + data_size;
    uint8_t *buf = total <= SIZE_MAX ? malloc((size_t)total) : NULL;
    if (!buf) {
        cJSON_free(text);
        return al_err(err, AL_ERR_OOM, "safetensors: out of memory for %llu bytes",
                      (unsigned long long)total);
    }
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)((uint64_t)padded >> (8 * i));
    memcpy(buf + 8, text, len);
    memset(buf + 8 + len, ' ', padded - len);
    cJSON_free(text);
    uint8_t *p = buf + 8 + padded;
    for (int i = 0; i < n_tensors; i++) {
        if (tensors[i].nbytes) memcpy(p, tensors[i].data, tensors[i].nbytes);
        p += tensors[i].nbytes;
    }
    *out = buf;
    *out_size = (size_t)total;
    return AL_OK;
}

al_status al_safetensors_write(const char *path, const al_tensor_out *tensors, int n_tensors,
                               const char *const *metadata_kv, int n_metadata, al_error *err) {
    if (!path) return al_err(err, AL_ERR_INVALID, "safetensors: no path");
    uint8_t *buf = NULL;
    size_t size = 0;
    al_status st = al_safetensors_serialize(tensors, n_tensors, metadata_kv, n_metadata, &buf, &size, err);
    if (st != AL_OK) return st;
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(buf);
        return al_err(err, AL_ERR_IO, "%s: cannot open for writing", path);
    }
    size_t wrote = fwrite(buf, 1, size, f);
    int closed = fclose(f);
    free(buf);
    if (wrote != size || closed != 0) return al_err(err, AL_ERR_IO, "%s: write failed", path);
    return AL_OK;
}
