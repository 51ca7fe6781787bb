/* torch_legacy.c: the legacy (pre-zip) torch.save format, which older checkpoints on the Hub still are.
 * The file is a stream: five pickles (the magic number, the protocol version 1001, a sys_info dict, the
 * state_dict whose storages are persistent ids, the list of storage keys), then each storage in that
 * list's order as an 8-byte little-endian element count and its raw bytes (docs/checkpoints.md). The
 * pickles go through the same restricted unpickler as the zip format (torch_pickle.h), and the tensors
 * through the same al_torch_state_dict_add. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "torch_pickle.h"

/* torch.serialization.MAGIC_NUMBER, 0x1950a86a20f9469cfc6c, as the 10 little-endian bytes of LONG1 */
static const uint8_t k_magic[10] = {0x6c, 0xfc, 0x9c, 0x46, 0xf9, 0x20, 0x6a, 0xa8, 0x50, 0x19};
#define LEGACY_PROTOCOL_VERSION 1001

/* Length of the magic number's pickle at buf (PROTO 2..5, an optional FRAME, LONG1 of the 10 bytes, STOP),
 * or 0 when buf does not start with it. Compared byte for byte: the unpickler keeps 64-bit ints only. */
static size_t magic_length(const uint8_t *buf, size_t size) {
    size_t at = 2;
    if (size < 2 || buf[0] != 0x80 || buf[1] < 2 || buf[1] > 5) return 0;
    if (size > at && buf[at] == 0x95) at += 9; /* FRAME + 8-byte length (protocol 4+) */
    if (size < at + 13 || buf[at] != 0x8a || buf[at + 1] != 10 || memcmp(buf + at + 2, k_magic, 10) != 0 ||
        buf[at + 12] != '.')
        return 0;
    return at + 13;
}

int al_torch_legacy_is(const uint8_t *buf, size_t size) { return magic_length(buf, size) > 0; }

/* A value of a dict with string keys, or NULL. */
static const al_pv *dict_get(const al_pv *d, const char *key) {
    for (int i = 0; d->kind == V_DICT && i + 1 < d->n; i += 2)
        if (d->items[i]->kind == V_STR && strcmp(d->items[i]->s, key) == 0) return d->items[i + 1];
    return NULL;
}

/* One storage of the tail: its key, type (from the state_dict's persistent ids) and bytes. */
typedef struct legacy_storage {
    const char *key;
    al_dtype dtype;
    int64_t numel;
    const uint8_t *data;
    uint64_t size;
} legacy_storage;

typedef struct legacy_storages {
    legacy_storage *items;
    int n;
    const char *file;
} legacy_storages;

static legacy_storage *find_storage(const legacy_storages *t, const char *key) {
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->items[i].key, key) == 0) return &t->items[i];
    return NULL;
}

static al_status legacy_lookup(void *ctx, const char *tensor, const char *key, const uint8_t **data,
                               uint64_t *size, al_error *err) {
    const legacy_storages *t = ctx;
    const legacy_storage *s = find_storage(t, key);
    if (!s)
        return al_err(err, AL_ERR_FORMAT, "%s: tensor '%s': storage '%s' is not in the storage list", t->file,
                      tensor, key);
    *data = s->data;
    *size = s->size;
    return AL_OK;
}

/* The storages named in the keys list, each typed by a persistent id of the state_dict (every storage value
 * the unpickler made; one key seen with two types or sizes is refused). */
static al_status match_keys(const al_pv *const *storages, int n_storages, const al_pv *keys, legacy_storages *t,
                            al_error *err) {
    for (int i = 0; i < keys->n; i++) {
        const al_pv *k = keys->items[i];
        if (k->kind != V_STR) return al_err(err, AL_ERR_FORMAT, "%s: storage key %d is not a string", t->file, i);
        if (find_storage(t, k->s))
            return al_err(err, AL_ERR_FORMAT, "%s: storage '%s' is listed twice", t->file, k->s);
        legacy_storage *s = &t->items[t->n];
        s->key = k->s;
        s->numel = -1;
        for (int j = 0; j < n_storages; j++) {
            const al_pv *v = storages[j];
            if (strcmp(v->s, k->s) != 0) continue;
            if (s->numel >= 0 && (v->dtype != s->dtype || v->numel != s->numel))
                return al_err(err, AL_ERR_FORMAT, "%s: storage '%s' is named with two types or sizes", t->file,
                              k->s);
            s->dtype = v->dtype;
            s->numel = v->numel;
        }
        if (s->numel < 0)
            return al_err(err, AL_ERR_FORMAT, "%s: storage '%s' is listed but no tensor uses it", t->file, k->s);
        t->n++;
    }
    return AL_OK;
}

static al_status type_storages(const al_unpickler *u, const al_pv *keys, legacy_storages *t, al_error *err) {
    if (keys->kind != V_LIST && keys->kind != V_TUPLE)
        return al_err(err, AL_ERR_FORMAT, "%s: the storage key list is not a list", t->file);
    t->items = calloc((size_t)keys->n + 1, sizeof *t->items);
    const al_pv **storages = calloc((size_t)u->n_all + 1, sizeof *storages);
    int n_storages = 0;
    al_status st = AL_OK;
    if (!t->items || !storages) st = al_err(err, AL_ERR_OOM, "%s: out of memory", t->file);
    for (int j = 0; st == AL_OK && j < u->n_all; j++)
        if (u->all[j]->kind == V_STORAGE) storages[n_storages++] = u->all[j];
    if (st == AL_OK) st = match_keys(storages, n_storages, keys, t, err);
    free(storages);
    return st;
}

/* The tail: per listed storage, an int64 element count equal to the persistent id's, then its bytes. */
static al_status read_tail(const uint8_t *buf, size_t size, size_t at, legacy_storages *t, al_error *err) {
    for (int i = 0; i < t->n; i++) {
        legacy_storage *s = &t->items[i];
        if (size - at < 8)
            return al_err(err, AL_ERR_FORMAT, "%s: storage '%s': truncated before its size (byte %zu)", t->file,
                          s->key, at);
        uint64_t count = 0;
        for (int b = 7; b >= 0; b--) count = (count << 8) | buf[at + (size_t)b];
        at += 8;
        if (count != (uint64_t)s->numel)
            return al_err(err, AL_ERR_FORMAT, "%s: storage '%s' holds %llu elements, its tensors say %lld",
                          t->file, s->key, (unsigned long long)count, (long long)s->numel);
        uint64_t elem = al_dtype_size(s->dtype);
        if (count > (uint64_t)(size - at) / elem)
            return al_err(err, AL_ERR_FORMAT, "%s: storage '%s': truncated (%llu elements of %llu bytes, %zu left)",
                          t->file, s->key, (unsigned long long)count, (unsigned long long)elem, size - at);
        s->data = buf + at;
        s->size = count * elem;
        at += (size_t)s->size;
    }
    if (at != size)
        return al_err(err, AL_ERR_FORMAT, "%s: %zu unexpected bytes after the last storage", t->file, size - at);
    return AL_OK;
}

al_status al_torch_legacy_read(const uint8_t *buf, size_t size, const char *file, al_tensor_list *list,
                               al_error *err) {
    size_t at = magic_length(buf, size);
    if (at == 0) return al_err(err, AL_ERR_FORMAT, "%s: not a legacy torch.save file (no magic number)", file);
    al_unpickler u;
    memset(&u, 0, sizeof u);
    u.start = buf;
    u.p = buf + at;
    u.end = buf + size;
    u.file = file;
    u.err = err;
    legacy_storages t = {NULL, 0, file};
    al_pv *version = NULL, *sys_info = NULL, *state = NULL, *keys = NULL;
    al_status st = al_unpickle(&u, &version);
    if (st == AL_OK && (version->kind != V_INT || version->i != LEGACY_PROTOCOL_VERSION))
        st = al_err(err, AL_ERR_UNSUPPORTED, "%s: legacy torch.save protocol version is not %d", file,
                    LEGACY_PROTOCOL_VERSION);
    if (st == AL_OK) st = al_unpickle(&u, &sys_info);
    if (st == AL_OK) {
        /* the storages are in the writer's byte order; only little-endian is read */
        const al_pv *little = dict_get(sys_info, "little_endian");
        if (sys_info->kind != V_DICT)
            st = al_err(err, AL_ERR_FORMAT, "%s: legacy torch.save sys_info is not a dict", file);
        else if (little && little->kind == V_BOOL && !little->i)
            st = al_err(err, AL_ERR_UNSUPPORTED, "%s: written on a big-endian machine (sys_info little_endian "
                        "is False); only little-endian tensors are supported", file);
    }
    if (st == AL_OK) st = al_unpickle(&u, &state);
    if (st == AL_OK) st = al_unpickle(&u, &keys);
    if (st == AL_OK) st = type_storages(&u, keys, &t, err);
    if (st == AL_OK) st = read_tail(buf, size, (size_t)(u.p - buf), &t, err);
    if (st == AL_OK) st = al_torch_state_dict_add(state, file, legacy_lookup, &t, size, list, err);
    free(t.items);
    al_unpickler_free(&u);
    return st;
}
