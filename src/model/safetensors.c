/* safetensors.c: reads a .safetensors buffer: 8-byte little-endian header length, a JSON header
 * {"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then the data.
 * Every offset and size is checked against the buffer before any tensor points into it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "cJSON.h"
#include "tensor_list.h"

typedef struct span { uint64_t begin, end; int index; } span;

static int span_cmp(const void *a, const void *b) {
    const span *x = a, *y = b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

/* A non-negative integer held exactly by a double (JSON numbers are doubles in cJSON). */
static int json_uint(const cJSON *item, uint64_t *out) {
    if (!cJSON_IsNumber(item)) return 0;
    double v = item->valuedouble;
    if (!(v >= 0.0) || v > 9007199254740992.0 || v != (double)(uint64_t)v) return 0;
    *out = (uint64_t)v;
    return 1;
}

static al_status parse_entry(const cJSON *item, const char *file, const uint8_t *data,
                             uint64_t data_size, al_tensor_entry *t, uint64_t *begin_out,
                             al_error *err) {
    const char *name = item->string;
    if (!cJSON_IsObject(item))
        return al_err(err, AL_ERR_FORMAT, "%s: header entry '%s' is not an object", file, name);
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(item, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(item, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(item, "data_offsets");
    if (!cJSON_IsString(dtype))
        return al_err(err, AL_ERR_FORMAT, "%s: tensor '%s' has no 'dtype' string", file, name);
    int dt = al_dtype_from_name(dtype->valuestring);
    if (dt < 0)
        return al_err(err, AL_ERR_UNSUPPORTED, "%s: tensor '%s' has unknown dtype '%.16s'", file, name,
                      dtype->valuestring);
    if (!cJSON_IsArray(shape))
        return al_err(err, AL_ERR_FORMAT, "%s: tensor '%s' has no 'shape' array", file, name);
    int ndim = cJSON_GetArraySize(shape);
    if (ndim > AL_MAX_DIMS)
        return al_err(err, AL_ERR_UNSUPPORTED, "%s: tensor '%s' has %d dimensions (at most %d)", file,
                      name, ndim, AL_MAX_DIMS);
    memset(t, 0, sizeof *t);
    t->dtype = (al_dtype)dt;
    t->ndim = ndim;
    uint64_t elem = al_dtype_size(t->dtype), nbytes = elem;
    const cJSON *d;
    int i = 0;
    cJSON_ArrayForEach(d, shape) {
        uint64_t v;
        if (!json_uint(d, &v))
            return al_err(err, AL_ERR_FORMAT, "%s: tensor '%s' shape[%d] is not a non-negative integer",
                          file, name, i);
        if (v != 0 && nbytes > UINT64_MAX / v / 2)
            return al_err(err, AL_ERR_FORMAT, "%s: tensor '%s' shape is too large", file, name);
        t->shape[i++] = (int64_t)v;
        nbytes *= v;
    }
    uint64_t b, e;
    if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2 ||
        !json_uint(cJSON_GetArrayItem(offs, 0), &b) || !json_uint(cJSON_GetArrayItem(offs, 1), &e))
        return al_err(err, AL_ERR_FORMAT, "%s: tensor '%s' has no 'data_offsets' [begin, end]", file,
                      name);
    if (b > e || e > data_size)
        return al_err(err, AL_ERR_FORMAT,
                      "%s: tensor '%s' data_offsets [%llu, %llu] out of range (data is %llu bytes)",
                      file, name, (unsigned long long)b, (unsigned long long)e,
                      (unsigned long long)data_size);
    if (e - b != nbytes)
        return al_err(err, AL_ERR_FORMAT,
                      "%s: tensor '%s' data_offsets span %llu bytes, its dtype %s and shape need %llu",
                      file, name, (unsigned long long)(e - b), al_dtype_name(t->dtype),
                      (unsigned long long)nbytes);
    t->data = data + b;
    t->nbytes = (size_t)nbytes;
    *begin_out = b;
    return AL_OK;
}

static al_status parse_header(const cJSON *root, const char *file, const uint8_t *data,
                              uint64_t data_size, al_tensor_list *list, al_error *err) {
    if (!cJSON_IsObject(root))
        return al_err(err, AL_ERR_FORMAT, "%s: header is not a JSON object", file);
    int first = list->n, n_items = cJSON_GetArraySize(root);
    span *spans = malloc((size_t)(n_items > 0 ? n_items : 1) * sizeof *spans);
    if (!spans) return al_err(err, AL_ERR_OOM, "%s: out of memory", file);
    int n_spans = 0;
    al_status st = AL_OK;
    const cJSON *item;
    cJSON_ArrayForEach(item, root) {
        if (!item->string) continue;
        if (strcmp(item->string, "__metadata__") == 0) {
            if (!cJSON_IsObject(item)) {
                st = al_err(err, AL_ERR_FORMAT, "%s: '__metadata__' is not an object", file);
                break;
            }
            /* Its values are strings by the format's definition; anything else is ignored. */
            const cJSON *kv;
            cJSON_ArrayForEach(kv, item) {
                if (kv->string && cJSON_IsString(kv) && (st = al_tensor_list_add_meta(list, kv->string, kv->valuestring, err)))
                    break;
            }
            if (st) break;
            continue;
        }
        if (al_tensor_list_find(list, item->string)) {
            st = al_err(err, AL_ERR_FORMAT, "%s: tensor '%s' appears twice", file, item->string);
            break;
        }
        al_tensor_entry t;
        uint64_t begin = 0;
        st = parse_entry(item, file, data, data_size, &t, &begin, err);
        if (st != AL_OK) break;
        t.name = item->string; /* copied by al_tensor_list_add */
        snprintf(t.file, sizeof t.file, "%s", file);
        st = al_tensor_list_add(list, &t, err);
        if (st != AL_OK) break;
        if (t.nbytes) spans[n_spans++] = (span){begin, begin + t.nbytes, list->n - 1};
    }
    if (st == AL_OK) { /* two tensors must never share bytes */
        qsort(spans, (size_t)n_spans, sizeof *spans, span_cmp);
        for (int i = 1; i < n_spans; i++)
            if (spans[i].begin < spans[i - 1].end) {
                st = al_err(err, AL_ERR_FORMAT, "%s: tensors '%s' and '%s' overlap in the data", file,
                            list->items[spans[i - 1].index].name, list->items[spans[i].index].name);
                break;
            }
    }
    free(spans);
    if (st != AL_OK) { /* leave the list as it was */
        for (int i = first; i < list->n; i++) free(list->items[i].name);
        list->n = first;
    }
    return st;
}

al_status al_safetensors_read(const uint8_t *buf, size_t size, const char *file, al_tensor_list *list,
                              al_error *err) {
    if (size < 8)
        return al_err(err, AL_ERR_FORMAT, "%s: file is truncated (%zu bytes, a header needs 8)", file,
                      size);
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; i--) header_len = (header_len << 8) | buf[i];
    if (header_len > (uint64_t)(size - 8))
        return al_err(err, AL_ERR_FORMAT,
                      "%s: header length %llu goes beyond the end of the file (%zu bytes)", file,
                      (unsigned long long)header_len, size);
    if (header_len < 2 || buf[8] != '{')
        return al_err(err, AL_ERR_FORMAT, "%s: header is not a JSON object", file);
    const char *text = (const char *)buf + 8;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, (size_t)header_len, &end, 0);
    if (!root) {
        size_t at = end && end >= text ? (size_t)(end - text) : 0;
        return al_err(err, AL_ERR_FORMAT, "%s: malformed JSON header near byte %zu", file, at + 8);
    }
    const uint8_t *data = buf + 8 + header_len;
    al_status st = parse_header(root, file, data, (uint64_t)(size - 8 - header_len), list, err);
    cJSON_Delete(root);
    return st;
}
