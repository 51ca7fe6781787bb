/* json_nul.h: finds a NUL character in JSON text before cJSON parses it. cJSON turns "\u0000" into a NUL
 * byte inside a C string, which silently cuts the string there (a text "a\u0000b" would be encoded as "a").
 * attnlab's texts cannot hold NUL, so every JSON that carries texts (API requests, CLI request files,
 * JSONL task rows) is checked first and refused naming where the NUL is. */
#ifndef AL_CORE_JSON_NUL_H
#define AL_CORE_JSON_NUL_H

#include <stddef.h>

/* 1 when s[0, n) holds a \u0000 escape inside a string or a raw NUL byte: *at gets its byte offset and
 * key (key_len > 0) the object key of the value that holds it ("" at the top level or inside a key),
 * cut to key_len - 1 bytes. 0 otherwise. Malformed JSON is left to the parser. */
int al_json_find_nul(const char *s, size_t n, size_t *at, char *key, size_t key_len);

#endif
