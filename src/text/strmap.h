/* strmap.h: an open-addressing hash map from byte strings to int (token -> id, merge -> rank). */
#ifndef AL_TEXT_STRMAP_H
#define AL_TEXT_STRMAP_H

#include <stddef.h>

typedef struct al_strmap_slot { char *key; size_t len; int value; } al_strmap_slot;

typedef struct al_strmap {
    al_strmap_slot *slots; /* key NULL: empty */
    size_t cap, count;     /* cap is a power of two */
} al_strmap;

/* Sets key -> value (a copy of the key is kept). Returns 0, or -1 when out of memory. */
int al_strmap_put(al_strmap *m, const char *key, size_t len, int value);
/* Returns the value, or -1 when absent. */
int al_strmap_get(const al_strmap *m, const char *key, size_t len);
void al_strmap_free(al_strmap *m);

#endif
