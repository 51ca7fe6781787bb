/* tensor_list.h: named raw tensors found in weight files (safetensors, pytorch_model.bin), before
 * the family name map picks the ones a model needs and converts them to float32. Not public. */
#ifndef AL_MODEL_TENSOR_LIST_H
#define AL_MODEL_TENSOR_LIST_H

#include "../attnlab.h"

#define AL_MAX_DIMS 8

typedef enum al_dtype {
    AL_DT_F32, AL_DT_F16, AL_DT_BF16, /* the three a weight may have */
    AL_DT_F64, AL_DT_I64, AL_DT_I32, AL_DT_I16, AL_DT_I8, AL_DT_U8, AL_DT_BOOL,
    AL_DT_U16, AL_DT_U32, AL_DT_U64, AL_DT_F8_E4M3, AL_DT_F8_E5M2,
    AL_DT_COUNT
} al_dtype;

typedef struct al_tensor_entry {
    char *name;             /* owned */
    al_dtype dtype;
    int ndim;
    int64_t shape[AL_MAX_DIMS];
    const uint8_t *data;    /* borrowed from the file's buffer (the fileset keeps it alive), or a copy the
                               list owns (a strided view gathered into row-major order) */
    size_t nbytes;
    char file[128];         /* base name of the file it came from, for messages */
} al_tensor_entry;

typedef struct al_tensor_list {
    al_tensor_entry *items;
    int n, cap;
    char **meta;            /* [2 * n_meta] owned key, value strings of a safetensors "__metadata__" */
    int n_meta;
    void **owned;           /* buffers freed with the list */
    int n_owned;
} al_tensor_list;

const char *al_dtype_name(al_dtype dt);
size_t al_dtype_size(al_dtype dt);
/* -1 when the name is not a safetensors dtype. */
int al_dtype_from_name(const char *name);

/* Appends an entry (copies name and file); the data stays borrowed. */
al_status al_tensor_list_add(al_tensor_list *list, const al_tensor_entry *entry, al_error *err);
/* The list takes buf (malloc'd) and frees it with itself; on error buf is freed at once. */
al_status al_tensor_list_own(al_tensor_list *list, void *buf, al_error *err);
const al_tensor_entry *al_tensor_list_find(const al_tensor_list *list, const char *name);
void al_tensor_list_free(al_tensor_list *list);
/* Metadata strings (safetensors "__metadata__"): add copies a pair; get returns NULL when absent. */
al_status al_tensor_list_add_meta(al_tensor_list *list, const char *key, const char *value, al_error *err);
const char *al_tensor_list_meta(const al_tensor_list *list, const char *key);
int64_t al_tensor_numel(const al_tensor_entry *t);
/* Converts an F32/F16/BF16 tensor to float32 (dst holds numel floats). Other dtypes: error. */
al_status al_tensor_to_f32(const al_tensor_entry *t, float *dst, al_error *err);
float al_f16_to_f32(uint16_t h);
float al_bf16_to_f32(uint16_t b);
/* float32 -> float16 bits, round to nearest even (inf past 65504, subnormals kept). */
uint16_t al_f32_to_f16(float f);

/* safetensors.c: parses one .safetensors buffer and appends its tensors. */
al_status al_safetensors_read(const uint8_t *buf, size_t size, const char *file, al_tensor_list *list,
                              al_error *err);
/* torch_unpickle.c: parses a torch.save zip (pytorch_model.bin) and appends the state_dict tensors. */
al_status al_torch_bin_read(const uint8_t *buf, size_t size, const char *file, al_tensor_list *list,
                            al_error *err);

#endif
