/* fileset.c: a set of named byte buffers. The model loader reads files only through a fileset, so the
 * same code serves a directory on disk (CLI) and buffers handed over by JavaScript (WASM). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../attnlab.h"
#include "error.h"

typedef struct al_file_entry {
    char *name;
    const uint8_t *data; /* never NULL, also for empty files */
    size_t size;
    uint8_t *owned;      /* the copy we free, or NULL when borrowed */
} al_file_entry;

struct al_fileset {
    al_file_entry *files;
    int n, cap;
};

static const uint8_t empty_file[1] = {0};

al_fileset *al_fileset_new(void) { return calloc(1, sizeof(al_fileset)); }

void al_fileset_free(al_fileset *fs) {
    if (!fs) return;
    for (int i = 0; i < fs->n; i++) {
        free(fs->files[i].name);
        free(fs->files[i].owned);
    }
    free(fs->files);
    free(fs);
}

static int find_index(const al_fileset *fs, const char *name) {
    for (int i = 0; i < fs->n; i++)
        if (strcmp(fs->files[i].name, name) == 0) return i;
    return -1;
}

al_status al_fileset_add(al_fileset *fs, const char *name, const void *data, size_t size, int copy,
                         al_error *err) {
    if (!fs || !name || !name[0]) return al_err(err, AL_ERR_INVALID, "fileset: a file needs a name");
    if (!data && size) return al_err(err, AL_ERR_INVALID, "%s: no data for %zu bytes", name, size);
    uint8_t *owned = NULL;
    const uint8_t *bytes = size ? (const uint8_t *)data : empty_file;
    if (copy && size) {
        owned = malloc(size);
        if (!owned) return al_err(err, AL_ERR_OOM, "%s: out of memory copying %zu bytes", name, size);
        memcpy(owned, data, size);
        bytes = owned;
    }
    int at = find_index(fs, name);
    if (at >= 0) { /* replace the earlier file of that name */
        free(fs->files[at].owned);
        fs->files[at].data = bytes;
        fs->files[at].size = size;
        fs->files[at].owned = owned;
        return AL_OK;
    }
    if (fs->n == fs->cap) {
        int cap = fs->cap ? fs->cap * 2 : 8;
        al_file_entry *grown = realloc(fs->files, (size_t)cap * sizeof *grown);
        if (!grown) {
            free(owned);
            return al_err(err, AL_ERR_OOM, "%s: out of memory", name);
        }
        fs->files = grown;
        fs->cap = cap;
    }
    char *name_copy = malloc(strlen(name) + 1);
    if (!name_copy) {
        free(owned);
        return al_err(err, AL_ERR_OOM, "%s: out of memory", name);
    }
    strcpy(name_copy, name);
    fs->files[fs->n++] = (al_file_entry){name_copy, bytes, size, owned};
    return AL_OK;
}

/* Reads a whole regular file; *out is malloc'd (at least 1 byte). size_hint (from stat) sizes the
 * buffer once, so a large checkpoint is not copied while growing; the loop still copes with a file
 * that changes size meanwhile. */
static al_status read_whole_file(const char *path, const char *name, size_t size_hint, uint8_t **out,
                                 size_t *size, al_error *err) {
    FILE *f = fopen(path, "rb");
    if (!f) return al_err(err, AL_ERR_IO, "%s: cannot open (%s)", name, strerror(errno));
    size_t cap = size_hint + 1, n = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return al_err(err, AL_ERR_OOM, "%s: out of memory", name);
    }
    for (;;) {
        if (n == cap) {
            uint8_t *grown = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
            if (!grown) {
                free(buf);
                fclose(f);
                return al_err(err, AL_ERR_OOM, "%s: out of memory reading the file", name);
            }
            buf = grown;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    int failed = ferror(f);
    fclose(f);
    if (failed) {
        free(buf);
        return al_err(err, AL_ERR_IO, "%s: read error", name);
    }
    *out = buf;
    *size = n;
    return AL_OK;
}

al_status al_read_file(const char *path, char **out, size_t *size, al_error *err) {
    uint8_t *buf = NULL;
    al_status st = read_whole_file(path, path, 0, &buf, size, err);
    if (st) return st;
    buf[*size] = 0; /* the read loop always ends with room for one more byte */
    *out = (char *)buf;
    return AL_OK;
}

al_status al_fileset_add_dir(al_fileset *fs, const char *dir, al_error *err) {
    if (!fs || !dir) return al_err(err, AL_ERR_INVALID, "fileset: no directory given");
    DIR *d = opendir(dir);
    if (!d) return al_err(err, AL_ERR_IO, "%s: cannot open directory (%s)", dir, strerror(errno));
    al_status st = AL_OK;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        const char *name = ent->d_name;
        if (name[0] == '.') continue; /* ".", ".." and hidden files */
        size_t len = strlen(dir) + strlen(name) + 2;
        char *path = malloc(len);
        if (!path) {
            st = al_err(err, AL_ERR_OOM, "%s: out of memory", dir);
            break;
        }
        snprintf(path, len, "%s/%s", dir, name);
        struct stat sb;
        if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) { /* sub-directories, broken links */
            free(path);
            continue;
        }
        uint8_t *data = NULL;
        size_t size = 0;
        size_t hint = sb.st_size > 0 && (uint64_t)sb.st_size < SIZE_MAX / 2 ? (size_t)sb.st_size : 0;
        st = read_whole_file(path, name, hint, &data, &size, err);
        free(path);
        if (st != AL_OK) break;
        /* Hand the buffer over without a second copy. */
        st = al_fileset_add(fs, name, data, size, 0, err);
        if (st != AL_OK) {
            free(data);
            break;
        }
        int at = find_index(fs, name);
        if (size) fs->files[at].owned = data;
        else free(data);
    }
    closedir(d);
    return st;
}

const uint8_t *al_fileset_get(const al_fileset *fs, const char *name, size_t *size) {
    if (size) *size = 0;
    if (!fs || !name) return NULL;
    int at = find_index(fs, name);
    if (at < 0) return NULL;
    if (size) *size = fs->files[at].size;
    return fs->files[at].data;
}

int al_fileset_count(const al_fileset *fs) { return fs ? fs->n : 0; }

const char *al_fileset_name(const al_fileset *fs, int index) {
    if (!fs || index < 0 || index >= fs->n) return NULL;
    return fs->files[index].name;
}
