/* torch_pickle.h: the restricted unpickler shared by both torch.save formats (the zip archive of
 * torch >= 1.6 and the legacy stream of pickles, docs/checkpoints.md), and the one place that turns a
 * state_dict's tensors into al_tensor_list entries. Not public. */
#ifndef AL_MODEL_TORCH_PICKLE_H
#define AL_MODEL_TORCH_PICKLE_H

#include "tensor_list.h"

typedef enum al_pv_kind {
    V_MARK, V_NONE, V_BOOL, V_INT, V_FLOAT, V_STR, V_TUPLE, V_LIST, V_DICT, V_GLOBAL, V_STORAGE,
    V_TENSOR
} al_pv_kind;

typedef enum al_pv_global { G_ORDERED_DICT, G_REBUILD_TENSOR, G_REBUILD_PARAMETER, G_STORAGE_TYPE } al_pv_global;

/* One value built by the unpickler. Only what a state_dict is made of exists. */
typedef struct al_pv al_pv;
struct al_pv {
    al_pv_kind kind;
    int64_t i;             /* V_INT, V_BOOL */
    char *s;               /* V_STR (owned), V_STORAGE key (owned) */
    al_pv **items;         /* V_TUPLE, V_LIST; V_DICT as key, value, key, value ... */
    int n, cap;
    al_pv_global global;   /* V_GLOBAL */
    al_dtype dtype;        /* V_GLOBAL storage type, V_STORAGE */
    int64_t numel;         /* V_STORAGE: elements */
    al_pv *storage;        /* V_TENSOR */
    int64_t offset;        /* V_TENSOR, in elements */
    int ndim;
    int64_t shape[AL_MAX_DIMS], stride[AL_MAX_DIMS];
};

/* The machine. Zero it, set start/p/end (positions in messages count from start), file and err, run one
 * or more pickles one after the other, then free it: every value lives until al_unpickler_free. */
typedef struct al_unpickler {
    const uint8_t *p, *end, *start;
    const char *file;
    al_error *err;
    al_pv **all; int n_all, cap_all;   /* every value, for freeing */
    al_pv **stack; int n_stack, cap_stack;
    al_pv **memo; int64_t cap_memo;
} al_unpickler;

/* Runs one pickle from u->p; on success *result is the value left by STOP and u->p the byte after it.
 * Each pickle starts with an empty stack and memo. */
al_status al_unpickle(al_unpickler *u, al_pv **result);
void al_unpickler_free(al_unpickler *u);

/* The bytes of the storage named `key` (a persistent id's key), or an error naming it. */
typedef al_status (*al_storage_lookup)(void *ctx, const char *tensor, const char *key, const uint8_t **data,
                                       uint64_t *size, al_error *err);

/* Appends every (string key, tensor) item of the state_dict `result` to `list`. A tensor is a view of its
 * storage (offset, sizes, strides): a contiguous one borrows the storage's bytes, any other is gathered
 * into a contiguous copy the list owns; a view reaching outside its storage, or holding more elements
 * than its storage, is refused naming the tensor; all copies together stay within copy_limit bytes (callers
 * pass the file's size). On error the list keeps none of them. */
al_status al_torch_state_dict_add(const al_pv *result, const char *file, al_storage_lookup lookup, void *ctx,
                                  size_t copy_limit, al_tensor_list *list, al_error *err);

/* torch_legacy.c: the legacy (pre-zip) torch.save stream; `is` tells whether buf starts like one. */
int al_torch_legacy_is(const uint8_t *buf, size_t size);
al_status al_torch_legacy_read(const uint8_t *buf, size_t size, const char *file, al_tensor_list *list,
                               al_error *err);

#endif
