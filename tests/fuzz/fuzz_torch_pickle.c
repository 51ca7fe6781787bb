/* fuzz_torch_pickle.c: any bytes as the pickle (data.pkl) of an otherwise well-formed torch.save archive, so
 * the fuzzer spends its time in the restricted unpickler (src/model/torch_unpickle.c) rather than on the zip
 * container. The archive also holds storages "0".."63" of 1 KB each and byteorder "little". Promises as
 * fuzz_torch_bin.c. */
#include "fuzz_tensors.h"

#define N_STORAGES 64
#define STORAGE_BYTES 1024

typedef struct zbuf { uint8_t *p; size_t n, cap; } zbuf;

static void put(zbuf *z, const void *src, size_t n) {
    if (z->n + n > z->cap) {
        size_t cap = (z->n + n) * 2;
        z->p = realloc(z->p, cap);
        FUZZ_REQUIRE(z->p != NULL, "out of memory");
        z->cap = cap;
    }
    if (n) memcpy(z->p + z->n, src, n);
    z->n += n;
}

static void put_le(zbuf *z, uint64_t v, int bytes) {
    uint8_t b[8];
    for (int i = 0; i < bytes; i++) b[i] = (uint8_t)(v >> (8 * i));
    put(z, b, (size_t)bytes);
}

/* A stored zip of (name, bytes) entries, no CRC (the reader does not check it). */
static void write_zip(zbuf *z, const char *const *names, const uint8_t *const *datas, const size_t *sizes, int n) {
    size_t *offsets = malloc((size_t)n * sizeof *offsets);
    for (int i = 0; i < n; i++) {
        offsets[i] = z->n;
        put_le(z, 0x04034b50u, 4);
        put_le(z, 20, 2), put_le(z, 0, 2), put_le(z, 0, 2), put_le(z, 0, 2), put_le(z, 0, 2); /* ver, flags, method, time, date */
        put_le(z, 0, 4), put_le(z, sizes[i], 4), put_le(z, sizes[i], 4);
        put_le(z, strlen(names[i]), 2), put_le(z, 0, 2);
        put(z, names[i], strlen(names[i]));
        put(z, datas[i], sizes[i]);
    }
    size_t cd = z->n;
    for (int i = 0; i < n; i++) {
        put_le(z, 0x02014b50u, 4);
        put_le(z, 20, 2), put_le(z, 20, 2), put_le(z, 0, 2), put_le(z, 0, 2), put_le(z, 0, 2), put_le(z, 0, 2);
        put_le(z, 0, 4), put_le(z, sizes[i], 4), put_le(z, sizes[i], 4);
        put_le(z, strlen(names[i]), 2), put_le(z, 0, 2), put_le(z, 0, 2), put_le(z, 0, 2), put_le(z, 0, 2);
        put_le(z, 0, 4), put_le(z, offsets[i], 4);
        put(z, names[i], strlen(names[i]));
    }
    size_t cd_size = z->n - cd;
    put_le(z, 0x06054b50u, 4);
    put_le(z, 0, 2), put_le(z, 0, 2), put_le(z, (uint64_t)n, 2), put_le(z, (uint64_t)n, 2);
    put_le(z, cd_size, 4), put_le(z, cd, 4), put_le(z, 0, 2);
    free(offsets);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static uint8_t storage[N_STORAGES][STORAGE_BYTES];
    static char names[N_STORAGES + 2][32];
    static int ready;
    if (!ready) { /* storages of recognisable floats 0, 1, 2, ... */
        for (int s = 0; s < N_STORAGES; s++) {
            for (int k = 0; k < STORAGE_BYTES / 4; k++) {
                float f = (float)k;
                memcpy(&storage[s][4 * k], &f, 4);
            }
            snprintf(names[s], sizeof names[s], "archive/data/%d", s);
        }
        snprintf(names[N_STORAGES], sizeof names[0], "archive/byteorder");
        snprintf(names[N_STORAGES + 1], sizeof names[0], "archive/data.pkl");
        ready = 1;
    }
    const char *entry_names[N_STORAGES + 2];
    const uint8_t *datas[N_STORAGES + 2];
    size_t sizes[N_STORAGES + 2];
    for (int s = 0; s < N_STORAGES; s++) entry_names[s] = names[s], datas[s] = storage[s], sizes[s] = STORAGE_BYTES;
    entry_names[N_STORAGES] = names[N_STORAGES], datas[N_STORAGES] = (const uint8_t *)"little", sizes[N_STORAGES] = 6;
    entry_names[N_STORAGES + 1] = names[N_STORAGES + 1], datas[N_STORAGES + 1] = data, sizes[N_STORAGES + 1] = size;
    zbuf z = {0};
    write_zip(&z, entry_names, datas, sizes, N_STORAGES + 2);
    fuzz_weights_file(al_torch_bin_read, z.p, z.n, "pytorch_model.bin", 1);
    free(z.p);
    return 0;
}
