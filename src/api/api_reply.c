/* api_reply.c: building a reply: a cJSON object plus binary tensors, moved into an al_reply. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/memory.h"
#include "api_internal.h"

al_status al_rb_init(al_reply_builder *rb, const char *op, al_error *err) {
    memset(rb, 0, sizeof *rb);
    rb->root = cJSON_CreateObject();
    if (!rb->root) return al_err(err, AL_ERR_OOM, "reply: out of memory");
    if (op) al_rb_str(rb, rb->root, "op", op);
    rb->warnings = al_rb_add(rb, rb->root, "warnings", cJSON_CreateArray());
    if (rb->oom) {
        al_rb_discard(rb);
        return al_err(err, AL_ERR_OOM, "reply: out of memory");
    }
    return AL_OK;
}

void al_rb_discard(al_reply_builder *rb) {
    cJSON_Delete(rb->root);
    for (int i = 0; i < rb->n_tensors; i++) free(rb->tensors[i].data);
    free(rb->tensors);
    memset(rb, 0, sizeof *rb);
}

al_status al_rb_finish(al_reply_builder *rb, al_reply *reply, al_error *err) {
    /* A tensor list in the JSON lets a client find names, dtypes and shapes without the C structs. */
    cJSON *list = al_rb_add(rb, rb->root, "tensors", cJSON_CreateArray());
    for (int i = 0; list && i < rb->n_tensors; i++) {
        const al_tensor_out *t = &rb->tensors[i];
        cJSON *desc = cJSON_CreateObject();
        if (!desc || !cJSON_AddItemToArray(list, desc)) {
            cJSON_Delete(desc);
            rb->oom = 1;
            break;
        }
        al_rb_str(rb, desc, "name", t->name);
        al_rb_str(rb, desc, "dtype", t->dtype);
        cJSON *shape = al_rb_add(rb, desc, "shape", cJSON_CreateArray());
        for (int d = 0; shape && d < t->ndim; d++)
            if (!cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->shape[d]))) rb->oom = 1;
    }
    char *text = rb->oom ? NULL : cJSON_PrintUnformatted(rb->root);
    if (!text) {
        al_rb_discard(rb);
        return al_err(err, AL_ERR_OOM, "reply: out of memory");
    }
    reply->json = text;
    reply->n_tensors = rb->n_tensors;
    reply->tensors = rb->tensors;
    rb->tensors = NULL;
    rb->n_tensors = 0;
    al_rb_discard(rb);
    return AL_OK;
}

al_status al_rb_tensor(al_reply_builder *rb, const char *name, const char *dtype, int ndim,
                       const int64_t *shape, void **data, al_error *err) {
    *data = NULL;
    if (ndim < 0 || ndim > 6) return al_err(err, AL_ERR_INVALID, "reply: tensor '%s' has %d dims", name, ndim);
    uint64_t count64 = 1;
    char what[160];
    int at = snprintf(what, sizeof what, "reply: tensor '%s' [", name);
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) return al_err(err, AL_ERR_INVALID, "reply: tensor '%s' dim %d is negative", name, d);
        if (shape[d] > 0 && count64 > UINT64_MAX / 4 / (uint64_t)shape[d]) count64 = UINT64_MAX / 4;
        else count64 *= (uint64_t)shape[d];
        if (at > 0 && (size_t)at < sizeof what)
            at += snprintf(what + at, sizeof what - (size_t)at, "%s%lld", d ? ", " : "", (long long)shape[d]);
    }
    if (at > 0 && (size_t)at < sizeof what) snprintf(what + at, sizeof what - (size_t)at, "]");
    al_status st = al_memory_check(count64 * 4, what, err);
    if (st != AL_OK) return st;
    const size_t count = (size_t)count64;
    if (rb->n_tensors == rb->cap_tensors) {
        int cap = rb->cap_tensors ? rb->cap_tensors * 2 : 8;
        al_tensor_out *grown = realloc(rb->tensors, (size_t)cap * sizeof *grown);
        if (!grown) return al_err(err, AL_ERR_OOM, "reply: out of memory for tensor '%s'", name);
        rb->tensors = grown;
        rb->cap_tensors = cap;
    }
    void *buf = calloc(count ? count : 1, 4);
    if (!buf)
        return al_err(err, AL_ERR_OOM, "reply: out of memory for tensor '%s' (%zu bytes)", name,
                      count * 4);
    al_tensor_out *t = &rb->tensors[rb->n_tensors++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->dtype, sizeof t->dtype, "%s", dtype);
    t->ndim = ndim;
    for (int d = 0; d < ndim; d++) t->shape[d] = shape[d];
    t->data = buf;
    t->nbytes = count * 4;
    *data = buf;
    return AL_OK;
}

cJSON *al_rb_add(al_reply_builder *rb, cJSON *obj, const char *key, cJSON *item) {
    if (!item || !obj) {
        cJSON_Delete(item);
        rb->oom = 1;
        return NULL;
    }
    int ok = cJSON_IsArray(obj) ? cJSON_AddItemToArray(obj, item) : cJSON_AddItemToObject(obj, key, item);
    if (!ok) {
        cJSON_Delete(item);
        rb->oom = 1;
        return NULL;
    }
    return item;
}

/* A value that is not finite (a mean over no tokens) is null: what cJSON prints for it anyway, and its number item
 * would cast NaN to int (undefined behaviour, which UBSan reports). */
void al_rb_num(al_reply_builder *rb, cJSON *obj, const char *key, double value) {
    al_rb_add(rb, obj, key, isfinite(value) ? cJSON_CreateNumber(value) : cJSON_CreateNull());
}

void al_rb_str(al_reply_builder *rb, cJSON *obj, const char *key, const char *value) {
    al_rb_add(rb, obj, key, value ? cJSON_CreateString(value) : cJSON_CreateNull());
}

void al_rb_bool(al_reply_builder *rb, cJSON *obj, const char *key, int value) {
    al_rb_add(rb, obj, key, cJSON_CreateBool(value != 0));
}

cJSON *al_rb_int_array(al_reply_builder *rb, cJSON *obj, const char *key, const int32_t *values,
                       int n) {
    cJSON *arr = al_rb_add(rb, obj, key, cJSON_CreateArray());
    for (int i = 0; arr && i < n; i++) al_rb_add(rb, arr, NULL, cJSON_CreateNumber(values[i]));
    return arr;
}

void al_rb_warn(al_reply_builder *rb, const char *fmt, ...) {
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    al_rb_add(rb, rb->warnings, NULL, cJSON_CreateString(text));
}

void al_reply_free(al_reply *reply) {
    if (!reply) return;
    free(reply->json);
    for (int i = 0; i < reply->n_tensors; i++) free(reply->tensors[i].data);
    free(reply->tensors);
    memset(reply, 0, sizeof *reply);
}
