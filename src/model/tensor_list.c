/* tensor_list.c: the list of raw tensors found in weight files, dtype facts and the conversion of
 * F32/F16/BF16 data to float32 (exact: F16 subnormals, infinities and NaNs keep their values). */
#include "tensor_list.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"

static const struct { const char *name; size_t size; } dtype_info[AL_DT_COUNT] = {
    [AL_DT_F32] = {"F32", 4},  [AL_DT_F16] = {"F16", 2},   [AL_DT_BF16] = {"BF16", 2},
    [AL_DT_F64] = {"F64", 8},  [AL_DT_I64] = {"I64", 8},   [AL_DT_I32] = {"I32", 4},
    [AL_DT_I16] = {"I16", 2},  [AL_DT_I8] = {"I8", 1},     [AL_DT_U8] = {"U8", 1},
    [AL_DT_BOOL] = {"BOOL", 1}, [AL_DT_U16] = {"U16", 2},  [AL_DT_U32] = {"U32", 4},
    [AL_DT_U64] = {"U64", 8},  [AL_DT_F8_E4M3] = {"F8_E4M3", 1}, [AL_DT_F8_E5M2] = {"F8_E5M2", 1},
};

const char *al_dtype_name(al_dtype dt) {
    return (unsigned)dt < AL_DT_COUNT ? dtype_info[dt].name : "?";
}

size_t al_dtype_size(al_dtype dt) { return (unsigned)dt < AL_DT_COUNT ? dtype_info[dt].size : 0; }

int al_dtype_from_name(const char *name) {
    for (int i = 0; i < AL_DT_COUNT; i++)
        if (strcmp(dtype_info[i].name, name) == 0) return i;
    return -1;
}

al_status al_tensor_list_add(al_tensor_list *list, const al_tensor_entry *entry, al_error *err) {
    if (list->n == list->cap) {
        int cap = list->cap ? list->cap * 2 : 64;
        al_tensor_entry *grown = realloc(list->items, (size_t)cap * sizeof *grown);
        if (!grown) return al_err(err, AL_ERR_OOM, "%s: out of memory", entry->file);
        list->items = grown;
        list->cap = cap;
    }
    al_tensor_entry *t = &list->items[list->n];
    *t = *entry;
    size_t len = strlen(entry->name);
    t->name = malloc(len + 1);
    if (!t->name) return al_err(err, AL_ERR_OOM, "%s: out of memory", entry->file);
    memcpy(t->name, entry->name, len + 1);
    list->n++;
    return AL_OK;
}

al_status al_tensor_list_own(al_tensor_list *list, void *buf, al_error *err) {
    void **grown = realloc(list->owned, sizeof *grown * (size_t)(list->n_owned + 1));
    if (!grown) {
        free(buf);
        return al_err(err, AL_ERR_OOM, "tensors: out of memory");
    }
    list->owned = grown;
    list->owned[list->n_owned++] = buf;
    return AL_OK;
}

const al_tensor_entry *al_tensor_list_find(const al_tensor_list *list, const char *name) {
    for (int i = 0; i < list->n; i++)
        if (strcmp(list->items[i].name, name) == 0) return &list->items[i];
    return NULL;
}

void al_tensor_list_free(al_tensor_list *list) {
    for (int i = 0; i < list->n; i++) free(list->items[i].name);
    free(list->items);
    for (int i = 0; i < 2 * list->n_meta; i++) free(list->meta[i]);
    free(list->meta);
    for (int i = 0; i < list->n_owned; i++) free(list->owned[i]);
    free(list->owned);
    memset(list, 0, sizeof *list);
}

static char *dup_text(const char *s) {
    size_t len = strlen(s);
    char *d = malloc(len + 1);
    if (d) memcpy(d, s, len + 1);
    return d;
}

al_status al_tensor_list_add_meta(al_tensor_list *list, const char *key, const char *value, al_error *err) {
    char **grown = realloc(list->meta, sizeof *grown * (size_t)(2 * list->n_meta + 2));
    if (!grown) return al_err(err, AL_ERR_OOM, "metadata: out of memory");
    list->meta = grown;
    char *k = dup_text(key), *v = dup_text(value);
    if (!k || !v) {
        free(k);
        free(v);
        return al_err(err, AL_ERR_OOM, "metadata: out of memory");
    }
    grown[2 * list->n_meta] = k;
    grown[2 * list->n_meta + 1] = v;
    list->n_meta++;
    return AL_OK;
}

const char *al_tensor_list_meta(const al_tensor_list *list, const char *key) {
    for (int i = 0; i < list->n_meta; i++)
        if (strcmp(list->meta[2 * i], key) == 0) return list->meta[2 * i + 1];
    return NULL;
}

int64_t al_tensor_numel(const al_tensor_entry *t) {
    int64_t n = 1;
    for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
    return n;
}

static float bits_to_float(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

float al_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
    if (exp == 0) {
        if (mant == 0) return bits_to_float(sign);
        /* Subnormal: shift the mantissa up to a leading 1 and lower the exponent to match. */
        uint32_t e = 113; /* 127 - 15 + 1 */
        while (!(mant & 0x400u)) {
            mant <<= 1;
            e--;
        }
        return bits_to_float(sign | (e << 23) | ((mant & 0x3ffu) << 13));
    }
    if (exp == 31) return bits_to_float(sign | 0x7f800000u | (mant << 13)); /* inf, NaN (payload kept) */
    return bits_to_float(sign | ((exp + 112) << 23) | (mant << 13));
}

float al_bf16_to_f32(uint16_t b) { return bits_to_float((uint32_t)b << 16); }

static uint32_t float_to_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* Round to nearest, ties to even, as numpy's and PyTorch's float16 casts: values past the largest half
 * (65504) round to infinity, small ones to subnormals or zero; NaN stays a (quiet) NaN. */
uint16_t al_f32_to_f16(float f) {
    const uint32_t x = float_to_bits(f);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t exp = (x >> 23) & 0xffu, mant = x & 0x7fffffu;
    if (exp == 0xffu) return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u : 0u));
    const int e = (int)exp - 127 + 15; /* the half exponent before rounding */
    if (e >= 31) return (uint16_t)(sign | 0x7c00u);
    if (e <= 0) {
        if (e < -10) return sign; /* below half the smallest subnormal: zero */
        /* subnormal: the full 24-bit significand shifted into 10 bits, rounded to nearest even */
        const uint32_t sig = mant | 0x800000u;
        const int shift = 14 - e;
        uint32_t half = sig >> shift;
        const uint32_t rest = sig & ((1u << shift) - 1u), mid = 1u << (shift - 1);
        if (rest > mid || (rest == mid && (half & 1u))) half++;
        return (uint16_t)(sign | half);
    }
    uint32_t h = ((uint32_t)e << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++; /* a carry into the exponent is correct rounding */
    return (uint16_t)(sign | h);
}

al_status al_tensor_to_f32(const al_tensor_entry *t, float *dst, al_error *err) {
    size_t n = (size_t)al_tensor_numel(t);
    const uint8_t *p = t->data;
    switch (t->dtype) {
    case AL_DT_F32:
        if (t->nbytes != n * 4) break;
        memcpy(dst, p, n * 4); /* the files are little-endian, as every target of this code */
        return AL_OK;
    case AL_DT_F16:
    case AL_DT_BF16:
        if (t->nbytes != n * 2) break;
        for (size_t i = 0; i < n; i++) {
            uint16_t h = (uint16_t)(p[2 * i] | (p[2 * i + 1] << 8));
            dst[i] = t->dtype == AL_DT_F16 ? al_f16_to_f32(h) : al_bf16_to_f32(h);
        }
        return AL_OK;
    default:
        return al_err(err, AL_ERR_UNSUPPORTED,
                      "%s: tensor '%s' has dtype %s; weights must be F32, F16 or BF16", t->file,
                      t->name, al_dtype_name(t->dtype));
    }
    return al_err(err, AL_ERR_FORMAT, "%s: tensor '%s' holds %zu bytes, its shape needs %zu", t->file,
                  t->name, t->nbytes, n * al_dtype_size(t->dtype));
}
