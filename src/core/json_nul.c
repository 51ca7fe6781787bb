/* json_nul.c: see json_nul.h. One pass over the text: strings are scanned for escapes, and a string
 * followed by ':' is remembered as the current key. */
#include "json_nul.h"

#include <string.h>

static void keep_key(const char *s, size_t from, size_t to, char *key, size_t key_len) {
    if (!key_len) return;
    size_t len = to - from < key_len - 1 ? to - from : key_len - 1;
    memcpy(key, s + from, len);
    key[len] = '\0';
}

int al_json_find_nul(const char *s, size_t n, size_t *at, char *key, size_t key_len) {
    size_t key_from = 0, key_to = 0; /* the last key, as bytes of s */
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\0') {
            *at = i;
            keep_key(s, key_from, key_to, key, key_len);
            return 1;
        }
        if (s[i] != '"') continue;
        size_t start = ++i;
        for (; i < n && s[i] != '"'; i++) {
            if (s[i] == '\0' || (s[i] == '\\' && i + 5 < n && s[i + 1] == 'u' && memcmp(s + i + 2, "0000", 4) == 0)) {
                /* the key when this string is one, else the key of the value it belongs to */
                size_t j = i;
                while (j < n && s[j] != '"') j++;
                size_t k = j + 1;
                while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r')) k++;
                *at = i;
                if (k < n && s[k] == ':') keep_key(s, 0, 0, key, key_len);
                else keep_key(s, key_from, key_to, key, key_len);
                return 1;
            }
            if (s[i] == '\\') i++; /* the escaped character */
        }
        size_t end = i < n ? i : n, k = end + 1;
        while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r')) k++;
        if (k < n && s[k] == ':') {
            key_from = start;
            key_to = end;
        }
    }
    return 0;
}
