/* tok_util.c: growable buffers (normalised text, pieces) and UTF-8 decoding/encoding. */
#include <stdlib.h>

#include "tok_internal.h"

static int grow_to(void **p, size_t elem, int cap) {
    void *q = realloc(*p, (size_t)cap * elem);
    if (!q) return -1;
    *p = q;
    return 0;
}

int al_ntext_push(al_ntext *t, uint32_t cp, int32_t start, int32_t end) {
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 64;
        if (grow_to((void **)&t->cp, sizeof *t->cp, cap) || grow_to((void **)&t->start, sizeof *t->start, cap) ||
            grow_to((void **)&t->end, sizeof *t->end, cap))
            return -1;
        t->cap = cap;
    }
    t->cp[t->n] = cp;
    t->start[t->n] = start;
    t->end[t->n] = end;
    t->n++;
    return 0;
}

void al_ntext_free(al_ntext *t) {
    free(t->cp);
    free(t->start);
    free(t->end);
    t->cp = NULL;
    t->start = t->end = NULL;
    t->n = t->cap = 0;
}

int al_pieces_push(al_pieces *p, int id, int start, int end, int word, int special) {
    if (p->n == p->cap) {
        int cap = p->cap ? p->cap * 2 : 64;
        if (grow_to((void **)&p->id, sizeof *p->id, cap) || grow_to((void **)&p->start, sizeof *p->start, cap) ||
            grow_to((void **)&p->end, sizeof *p->end, cap) || grow_to((void **)&p->word, sizeof *p->word, cap) ||
            grow_to((void **)&p->special, sizeof *p->special, cap))
            return -1;
        p->cap = cap;
    }
    p->id[p->n] = id;
    p->start[p->n] = start;
    p->end[p->n] = end;
    p->word[p->n] = word;
    p->special[p->n] = (uint8_t)special;
    p->n++;
    return 0;
}

void al_pieces_free(al_pieces *p) {
    free(p->id);
    free(p->start);
    free(p->end);
    free(p->word);
    free(p->special);
    *p = (al_pieces){0};
}

/* Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing above U+10FFFF. */
int al_utf8_decode(const char *str, size_t len, al_ntext *out, int32_t *bad_byte) {
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        uint32_t cp;
        size_t n;
        if (c < 0x80) { cp = c; n = 1; }
        else if (c >= 0xC2 && c <= 0xDF) { cp = c & 0x1F; n = 2; }
        else if (c >= 0xE0 && c <= 0xEF) { cp = c & 0x0F; n = 3; }
        else if (c >= 0xF0 && c <= 0xF4) { cp = c & 0x07; n = 4; }
        else { *bad_byte = (int32_t)i; return -1; }
        if (i + n > len) { *bad_byte = (int32_t)i; return -1; }
        for (size_t k = 1; k < n; k++) {
            unsigned cc = s[i + k];
            if ((cc & 0xC0) != 0x80) { *bad_byte = (int32_t)(i + k); return -1; }
            cp = (cp << 6) | (cc & 0x3F);
        }
        if ((n == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF))) {
            *bad_byte = (int32_t)i;
            return -1;
        }
        if (al_ntext_push(out, cp, (int32_t)i, (int32_t)(i + n))) return -2;
        i += n;
    }
    return 0;
}

int al_utf8_encode(uint32_t cp, char *buf) {
    unsigned char *b = (unsigned char *)buf;
    if (cp < 0x80) { b[0] = (unsigned char)cp; return 1; }
    if (cp < 0x800) { b[0] = (unsigned char)(0xC0 | (cp >> 6)); b[1] = (unsigned char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        b[0] = (unsigned char)(0xE0 | (cp >> 12));
        b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    b[0] = (unsigned char)(0xF0 | (cp >> 18));
    b[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    b[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* ---------------------------------------------------------------- BERT character classes */

/* Python's and JS's _is_chinese_char: the CJK Unified Ideographs blocks (not all of Han). */
int al_bert_is_chinese_char(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
           (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

/* JS BertNormalizer._is_control: Cc, Cf, Co, Cs except tab, newline, carriage return.
 * (Python also counts unassigned Cn as control; the JS library, our oracle, does not.) */
int al_bert_is_control(uint32_t cp) {
    if (cp == '\t' || cp == '\n' || cp == '\r') return 0;
    al_uc_cat c = al_uc_category(cp);
    return c == AL_UC_CC || c == AL_UC_CF || c == AL_UC_CO || c == AL_UC_CS;
}

/* BERT punctuation: ASCII !-/ :-@ [-` {-~ and every Unicode P* category. */
int al_bert_is_punct(uint32_t cp) {
    if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126))
        return 1;
    return cp >= 128 && al_uc_is_punct(cp);
}
