/* strmap.c: FNV-1a hashed open addressing with linear probing; grows at 50% load. */
#include "strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const char *s, size_t len) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static size_t find_slot(const al_strmap_slot *slots, size_t cap, const char *key, size_t len) {
    size_t i = (size_t)hash_bytes(key, len) & (cap - 1);
    while (slots[i].key && !(slots[i].len == len && memcmp(slots[i].key, key, len) == 0))
        i = (i + 1) & (cap - 1);
    return i;
}

static int grow(al_strmap *m) {
    size_t cap = m->cap ? m->cap * 2 : 1024;
    al_strmap_slot *slots = calloc(cap, sizeof *slots);
    if (!slots) return -1;
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].key) continue;
        slots[find_slot(slots, cap, m->slots[i].key, m->slots[i].len)] = m->slots[i];
    }
    free(m->slots);
    m->slots = slots;
    m->cap = cap;
    return 0;
}

int al_strmap_put(al_strmap *m, const char *key, size_t len, int value) {
    if ((m->count + 1) * 2 > m->cap && grow(m)) return -1;
    size_t i = find_slot(m->slots, m->cap, key, len);
    if (m->slots[i].key) {
        m->slots[i].value = value;
        return 0;
    }
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, key, len);
    copy[len] = '\0';
    m->slots[i].key = copy;
    m->slots[i].len = len;
    m->slots[i].value = value;
    m->count++;
    return 0;
}

int al_strmap_get(const al_strmap *m, const char *key, size_t len) {
    if (!m->cap) return -1;
    size_t i = find_slot(m->slots, m->cap, key, len);
    return m->slots[i].key ? m->slots[i].value : -1;
}

void al_strmap_free(al_strmap *m) {
    for (size_t i = 0; i < m->cap; i++) free(m->slots[i].key);
    free(m->slots);
    m->slots = NULL;
    m->cap = m->count = 0;
}
