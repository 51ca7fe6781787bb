/* torch_zip.c: a zip reader for torch.save archives. Reads the end-of-central-directory record
 * (ZIP64 too, for archives past 4 GB), then each central directory entry and its local header.
 * Offsets and sizes are 64-bit and checked against the buffer before use. */
#include "torch_zip.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_EOCD64 0x06064b50u
#define SIG_EOCD64_LOC 0x07064b50u

static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) | ((uint64_t)rd32(p + 4) << 32); }

/* Is [off, off + len) inside a buffer of `size` bytes? */
static int in_bounds(uint64_t off, uint64_t len, size_t size) {
    return off <= (uint64_t)size && len <= (uint64_t)size - off;
}

/* Locates the end-of-central-directory record: scans back over at most a 64 KB comment. */
static al_status find_eocd(const uint8_t *buf, size_t size, const char *file, size_t *at,
                           al_error *err) {
    if (size < 22) return al_err(err, AL_ERR_FORMAT, "%s: truncated zip (%zu bytes)", file, size);
    size_t lowest = size - 22 > 65535 ? size - 22 - 65535 : 0;
    for (size_t i = size - 22 + 1; i-- > lowest;) {
        if (rd32(buf + i) == SIG_EOCD && i + 22 + rd16(buf + i + 20) == size) {
            *at = i;
            return AL_OK;
        }
    }
    if (size >= 2 && buf[0] == 0x80 && buf[1] <= 5)
        return al_err(err, AL_ERR_FORMAT,
                      "%s: a pickle without torch's magic number: neither a zip nor a legacy torch.save file",
                      file);
    return al_err(err, AL_ERR_FORMAT, "%s: not a zip archive or truncated (no end of central directory)",
                  file);
}

/* Reads the ZIP64 values that replaced 0xFFFF / 0xFFFFFFFF fields of the end record. */
static al_status read_eocd64(const uint8_t *buf, size_t size, const char *file, size_t eocd,
                             uint64_t *count, uint64_t *cd_size, uint64_t *cd_off, al_error *err) {
    if (eocd < 20 || rd32(buf + eocd - 20) != SIG_EOCD64_LOC)
        return al_err(err, AL_ERR_FORMAT, "%s: zip64 locator is missing", file);
    uint64_t rec = rd64(buf + eocd - 20 + 8);
    if (!in_bounds(rec, 56, size) || rd32(buf + rec) != SIG_EOCD64)
        return al_err(err, AL_ERR_FORMAT, "%s: zip64 end record is out of range", file);
    *count = rd64(buf + rec + 32);
    *cd_size = rd64(buf + rec + 40);
    *cd_off = rd64(buf + rec + 48);
    return AL_OK;
}

/* Replaces saturated sizes/offset with the values of the ZIP64 extra field (id 1). */
static al_status apply_zip64_extra(const uint8_t *extra, size_t len, const char *file,
                                   const char *name, uint64_t *usize, uint64_t *csize,
                                   uint64_t *offset, al_error *err) {
    size_t i = 0;
    while (i + 4 <= len) {
        uint16_t id = rd16(extra + i), n = rd16(extra + i + 2);
        if (i + 4 + n > len) break;
        if (id == 1) {
            const uint8_t *p = extra + i + 4, *end = p + n;
            uint64_t *fields[3] = {usize, csize, offset};
            for (int f = 0; f < 3; f++) {
                if (*fields[f] != 0xFFFFFFFFu) continue;
                if (p + 8 > end)
                    return al_err(err, AL_ERR_FORMAT, "%s: zip entry '%s' has a short zip64 field",
                                  file, name);
                *fields[f] = rd64(p);
                p += 8;
            }
            return AL_OK;
        }
        i += 4 + (size_t)n;
    }
    if (*usize == 0xFFFFFFFFu || *csize == 0xFFFFFFFFu || *offset == 0xFFFFFFFFu)
        return al_err(err, AL_ERR_FORMAT, "%s: zip entry '%s' lacks its zip64 field", file, name);
    return AL_OK;
}

al_status al_zip_read(const uint8_t *buf, size_t size, const char *file, al_zip *zip, al_error *err) {
    memset(zip, 0, sizeof *zip);
    size_t eocd = 0;
    al_status st = find_eocd(buf, size, file, &eocd, err);
    if (st != AL_OK) return st;
    uint64_t count = rd16(buf + eocd + 10), cd_size = rd32(buf + eocd + 12);
    uint64_t cd_off = rd32(buf + eocd + 16);
    if (count == 0xFFFF || cd_size == 0xFFFFFFFFu || cd_off == 0xFFFFFFFFu) {
        st = read_eocd64(buf, size, file, eocd, &count, &cd_size, &cd_off, err);
        if (st != AL_OK) return st;
    }
    if (!in_bounds(cd_off, cd_size, size))
        return al_err(err, AL_ERR_FORMAT, "%s: zip central directory lies outside the file (truncated?)",
                      file);
    if (count > cd_size / 46)
        return al_err(err, AL_ERR_FORMAT, "%s: zip central directory is too short for %llu entries",
                      file, (unsigned long long)count);
    zip->entries = calloc((size_t)(count ? count : 1), sizeof *zip->entries);
    if (!zip->entries) return al_err(err, AL_ERR_OOM, "%s: out of memory", file);
    uint64_t p = cd_off, cd_end = cd_off + cd_size;
    for (uint64_t k = 0; k < count; k++) {
        if (p + 46 > cd_end || rd32(buf + p) != SIG_CENTRAL) {
            st = al_err(err, AL_ERR_FORMAT, "%s: zip central directory entry %llu is malformed", file,
                        (unsigned long long)k);
            break;
        }
        const uint8_t *c = buf + p;
        uint16_t flags = rd16(c + 8), method = rd16(c + 10);
        uint64_t csize = rd32(c + 20), usize = rd32(c + 24), off = rd32(c + 42);
        size_t name_len = rd16(c + 28), extra_len = rd16(c + 30), comment_len = rd16(c + 32);
        if (p + 46 + name_len + extra_len + comment_len > cd_end) {
            st = al_err(err, AL_ERR_FORMAT, "%s: zip central directory entry %llu runs past its end",
                        file, (unsigned long long)k);
            break;
        }
        al_zip_entry *e = &zip->entries[zip->n];
        e->name = malloc(name_len + 1);
        if (!e->name) {
            st = al_err(err, AL_ERR_OOM, "%s: out of memory", file);
            break;
        }
        memcpy(e->name, c + 46, name_len);
        e->name[name_len] = '\0';
        zip->n++;
        st = apply_zip64_extra(c + 46 + name_len, extra_len, file, e->name, &usize, &csize, &off, err);
        if (st != AL_OK) break;
        if (flags & 1) {
            st = al_err(err, AL_ERR_UNSUPPORTED, "%s: zip entry '%s' is encrypted", file, e->name);
            break;
        }
        /* The local header repeats the name and has its own extra field: the data follows it. */
        if (!in_bounds(off, 30, size) || rd32(buf + off) != SIG_LOCAL) {
            st = al_err(err, AL_ERR_FORMAT, "%s: zip entry '%s' local header is out of range", file,
                        e->name);
            break;
        }
        uint64_t data_off = off + 30 + rd16(buf + off + 26) + rd16(buf + off + 28);
        if (!in_bounds(data_off, csize, size)) {
            st = al_err(err, AL_ERR_FORMAT, "%s: zip entry '%s' data runs past the end of the file "
                        "(truncated?)", file, e->name);
            break;
        }
        e->method = method;
        e->size = usize;
        if (method == 0) {
            if (csize != usize) {
                st = al_err(err, AL_ERR_FORMAT, "%s: stored zip entry '%s' has two sizes", file,
                            e->name);
                break;
            }
            e->data = buf + data_off;
        }
        p += 46 + name_len + extra_len + comment_len;
    }
    if (st != AL_OK) al_zip_free(zip);
    return st;
}

const al_zip_entry *al_zip_find(const al_zip *zip, const char *name) {
    for (int i = 0; i < zip->n; i++)
        if (strcmp(zip->entries[i].name, name) == 0) return &zip->entries[i];
    return NULL;
}

al_status al_zip_data(const al_zip_entry *e, const char *file, const uint8_t **data, uint64_t *size,
                      al_error *err) {
    if (e->method != 0 || !e->data)
        return al_err(err, AL_ERR_UNSUPPORTED,
                      "%s: zip entry '%s' is compressed (method %d); only stored entries are "
                      "supported (torch.save writes them stored)",
                      file, e->name, e->method);
    *data = e->data;
    *size = e->size;
    return AL_OK;
}

void al_zip_free(al_zip *zip) {
    for (int i = 0; i < zip->n; i++) free(zip->entries[i].name);
    free(zip->entries);
    zip->entries = NULL;
    zip->n = 0;
}
