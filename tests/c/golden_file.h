/* golden_file.h: reading the F32 tensors of a golden .safetensors file written by
 * tests/golden/make_goldens.py (through the core's own safetensors reader), and comparing outputs. */
#ifndef AL_GOLDEN_FILE_H
#define AL_GOLDEN_FILE_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "model/tensor_list.h"
#include "read_file.h"

typedef struct golden_file {
    uint8_t *buf;
    size_t size;
    al_tensor_list list;
} golden_file;

static inline int golden_open(golden_file *g, const char *path) {
    memset(g, 0, sizeof *g);
    g->buf = read_file(path, &g->size);
    if (!g->buf) {
        fprintf(stderr, "cannot open %s\n", path);
        return 0;
    }
    al_error err;
    if (!g->size || al_safetensors_read(g->buf, g->size, path, &g->list, &err) != AL_OK) {
        fprintf(stderr, "cannot read %s: %s\n", path, g->size ? err.message : "short read");
        return 0;
    }
    return 1;
}

static inline void golden_close(golden_file *g) {
    al_tensor_list_free(&g->list);
    free(g->buf);
    memset(g, 0, sizeof *g);
}

/* A malloc'd float32 copy of a tensor (NULL when absent); numel and shape are filled when not NULL. */
static inline float *golden_f32(const golden_file *g, const char *name, size_t *numel, int64_t *shape) {
    const al_tensor_entry *t = al_tensor_list_find(&g->list, name);
    if (!t) return NULL;
    size_t n = (size_t)al_tensor_numel(t);
    float *data = malloc(n * sizeof(float) + 1);
    al_error err;
    if (!data || al_tensor_to_f32(t, data, &err) != AL_OK) {
        free(data);
        return NULL;
    }
    if (numel) *numel = n;
    if (shape)
        for (int d = 0; d < t->ndim; d++) shape[d] = t->shape[d];
    return data;
}

/* A float64 tensor of numel values in place (the references make_decoder_*.py write as F64), NULL when absent or
 * of another type or size. */
static inline const double *golden_f64_in(const golden_file *g, const char *name, size_t numel) {
    const al_tensor_entry *t = al_tensor_list_find(&g->list, name);
    return t && t->dtype == AL_DT_F64 && t->nbytes == numel * sizeof(double) ? (const double *)t->data : NULL;
}

/* Integer inputs are stored as exactly representable floats. */
static inline int32_t *golden_i32(const golden_file *g, const char *name) {
    size_t n = 0;
    float *f = golden_f32(g, name, &n, NULL);
    if (!f) return NULL;
    int32_t *out = malloc(n * sizeof(int32_t) + 1);
    for (size_t i = 0; i < n; i++) out[i] = (int32_t)f[i];
    free(f);
    return out;
}

static inline double max_abs_diff(const float *a, const float *b, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        if (d != d) return d; /* NaN fails every bound */
        if (d > m) m = d;
    }
    return m;
}

#endif
