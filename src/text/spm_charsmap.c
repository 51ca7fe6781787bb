/* spm_charsmap.c: SentencePiece's precompiled_charsmap (nmt_nfkc and the like): a uint32 little-endian
 * byte count T, then T bytes of a double-array trie (darts-clone units) over UTF-8 input, then the
 * NUL-terminated replacement strings the trie's values point into. The longest rule matching a prefix
 * of the input wins, as SentencePiece's Normalizer::NormalizePrefix does. Every trie step is checked
 * against the unit count, so a damaged blob gives no match instead of a read outside it. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "tok_internal.h"

static uint32_t unit_at(const al_tokenizer *tok, uint32_t i) {
    const uint8_t *p = tok->trie + 4 * (size_t)i;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* darts-clone's unit fields */
static int unit_has_leaf(uint32_t u) { return (u >> 8) & 1; }
static uint32_t unit_value(uint32_t u) { return u & 0x7fffffffu; }
static uint32_t unit_label(uint32_t u) { return u & (0x80000000u | 0xffu); }
static uint32_t unit_offset(uint32_t u) { return (u >> 10) << ((u & (1u << 9)) >> 6); }

al_status al_spm_set_charsmap(al_tokenizer *tok, const uint8_t *data, size_t size, const char *what, al_error *err) {
    if (size < 4) return al_err(err, AL_ERR_FORMAT, "%s: %zu bytes, shorter than its 4-byte header", what, size);
    if (size > 0x7fffffffu) return al_err(err, AL_ERR_FORMAT, "%s: too large", what);
    uint32_t trie_size = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24;
    if (trie_size > size - 4 || trie_size % 4 || trie_size == 0)
        return al_err(err, AL_ERR_FORMAT, "%s: trie size %u does not fit the %zu bytes (or is not a multiple of 4)",
                      what, trie_size, size);
    uint8_t *copy = malloc(size);
    if (!copy) return al_err(err, AL_ERR_OOM, "%s: out of memory", what);
    memcpy(copy, data, size);
    free(tok->charsmap);
    tok->charsmap = copy;
    tok->charsmap_size = (uint32_t)size;
    tok->trie = copy + 4;
    tok->trie_units = trie_size / 4;
    tok->norm_strings = (const char *)copy + 4 + trie_size;
    tok->norm_size = (uint32_t)(size - 4 - trie_size);
    return AL_OK;
}

size_t al_spm_charsmap_match(const al_tokenizer *tok, const uint8_t *s, size_t n, const char **repl) {
    if (!tok->trie) return 0;
    size_t best_len = 0;
    uint32_t best_value = 0;
    uint32_t pos = unit_offset(unit_at(tok, 0));
    for (size_t i = 0; i < n; i++) {
        pos ^= s[i];
        if (pos >= tok->trie_units) break;
        uint32_t u = unit_at(tok, pos);
        if (unit_label(u) != s[i]) break;
        pos ^= unit_offset(u);
        if (pos >= tok->trie_units) break;
        if (unit_has_leaf(u)) {
            best_len = i + 1; /* results come shortest first: the last is the longest */
            best_value = unit_value(unit_at(tok, pos));
        }
    }
    if (!best_len) return 0;
    /* a value outside the strings, or a string without its NUL, is no rule */
    if (best_value >= tok->norm_size || !memchr(tok->norm_strings + best_value, 0, tok->norm_size - best_value)) return 0;
    *repl = tok->norm_strings + best_value;
    return best_len;
}
