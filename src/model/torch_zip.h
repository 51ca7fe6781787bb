/* torch_zip.h: the zip container of torch.save files. torch writes STORED entries, so only those
 * are read; every entry's bytes are checked to lie inside the buffer. Not public. */
#ifndef AL_MODEL_TORCH_ZIP_H
#define AL_MODEL_TORCH_ZIP_H

#include "../attnlab.h"

typedef struct al_zip_entry {
    char *name;           /* owned, NUL-terminated */
    const uint8_t *data;  /* borrowed from the zip buffer; NULL when compressed */
    uint64_t size;
    int method;           /* 0 stored, 8 deflate, ... */
} al_zip_entry;

typedef struct al_zip {
    al_zip_entry *entries;
    int n;
} al_zip;

/* Reads the central directory. `file` names the zip in messages. */
al_status al_zip_read(const uint8_t *buf, size_t size, const char *file, al_zip *zip, al_error *err);
/* The entry of that exact name, or NULL. */
const al_zip_entry *al_zip_find(const al_zip *zip, const char *name);
/* The entry's bytes; an error naming it when it is compressed. */
al_status al_zip_data(const al_zip_entry *e, const char *file, const uint8_t **data, uint64_t *size,
                      al_error *err);
void al_zip_free(al_zip *zip);

#endif
