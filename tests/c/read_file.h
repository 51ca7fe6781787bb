/* read_file.h: a whole file into memory for the C tests. */
#ifndef AL_TEST_READ_FILE_H
#define AL_TEST_READ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* malloc'd bytes of path plus a terminating NUL (so text files are C strings), *size the byte count;
 * NULL when the file cannot be read. */
static inline uint8_t *read_file(const char *path, size_t *size) {
    *size = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (buf) {
        *size = fread(buf, 1, (size_t)n, f);
        buf[*size] = 0;
    }
    fclose(f);
    return buf;
}

#endif
