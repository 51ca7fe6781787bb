/* fuzz_tensors.h: the promises of a tensor list read from a weights file (safetensors, pytorch_model.bin). */
#ifndef AL_FUZZ_TENSORS_H
#define AL_FUZZ_TENSORS_H

#include <stddef.h>

#include "fuzz_common.h"
#include "model/tensor_list.h"

/* Every tensor's bytes lie inside [data, data + size) (or in a gathered copy the list owns) and match its dtype and shape, names are distinct,
 * F32/F16/BF16 tensors convert to float32 and others are refused naming the tensor. may_share: tensors may
 * share bytes (torch storages are shared by views; safetensors forbids it). */
static inline void fuzz_check_tensor_list(const al_tensor_list *list, const uint8_t *data, size_t size,
                                          int may_share) {
    al_error err;
    memset(&err, 0, sizeof err);
    for (int i = 0; i < list->n; i++) {
        const al_tensor_entry *t = &list->items[i];
        FUZZ_REQUIRE(t->ndim >= 0 && t->ndim <= AL_MAX_DIMS, "tensor '%s': ndim %d", t->name, t->ndim);
        uint64_t numel = 1;
        for (int d = 0; d < t->ndim; d++) {
            FUZZ_REQUIRE(t->shape[d] >= 0, "tensor '%s': shape[%d] = %lld", t->name, d, (long long)t->shape[d]);
            numel *= (uint64_t)t->shape[d];
        }
        FUZZ_REQUIRE(numel * al_dtype_size(t->dtype) == t->nbytes, "tensor '%s': %zu bytes for %llu elements of %s",
                     t->name, t->nbytes, (unsigned long long)numel, al_dtype_name(t->dtype));
        FUZZ_REQUIRE((int64_t)numel == al_tensor_numel(t), "tensor '%s': numel", t->name);
        /* inside the file's buffer, or a copy the list owns (a strided view gathered; reading all its bytes
         * below lets ASan check its size) */
        int owned = 0;
        for (int k = 0; k < list->n_owned; k++) owned |= t->data == (const uint8_t *)list->owned[k];
        FUZZ_REQUIRE(owned || (t->data >= data && t->nbytes <= size && (size_t)(t->data - data) <= size - t->nbytes),
                     "tensor '%s' lies outside the buffer", t->name);
        FUZZ_REQUIRE(!owned || t->nbytes <= size, "tensor '%s': a copy of %zu bytes from a file of %zu", t->name,
                     t->nbytes, size);
        for (int j = 0; j < i; j++) {
            const al_tensor_entry *u = &list->items[j];
            FUZZ_REQUIRE(strcmp(t->name, u->name) != 0, "tensor '%s' listed twice", t->name);
            int disjoint = !t->nbytes || !u->nbytes || t->data + t->nbytes <= u->data || u->data + u->nbytes <= t->data;
            FUZZ_REQUIRE(may_share || disjoint, "tensors '%s' and '%s' overlap", t->name, u->name);
        }
        if (t->dtype == AL_DT_F32 || t->dtype == AL_DT_F16 || t->dtype == AL_DT_BF16) {
            float *f = malloc((size_t)numel * sizeof(float) + 1);
            FUZZ_REQUIRE(f != NULL, "out of memory");
            FUZZ_REQUIRE(al_tensor_to_f32(t, f, &err) == AL_OK, "tensor '%s': %s", t->name, err.message);
            free(f);
        } else {
            FUZZ_REQUIRE(al_tensor_to_f32(t, NULL, &err) != AL_OK, "tensor '%s' of %s converted", t->name,
                         al_dtype_name(t->dtype));
            fuzz_check_error(err.code, &err, t->name);
        }
    }
}

/* Reads one weights file with `read` and checks the outcome: an error names the file and leaves no tensor. */
static inline void fuzz_weights_file(al_status (*read)(const uint8_t *, size_t, const char *, al_tensor_list *,
                                                       al_error *),
                                     const uint8_t *data, size_t size, const char *file, int may_share) {
    al_tensor_list list = {0};
    al_error err;
    memset(&err, 0, sizeof err);
    al_status st = read(data, size, file, &list, &err);
    if (st == AL_OK) fuzz_check_tensor_list(&list, data, size, may_share);
    else {
        fuzz_check_error(st, &err, file);
        FUZZ_REQUIRE(list.n == 0, "%d tensors left after an error", list.n);
    }
    al_tensor_list_free(&list);
}

#endif
