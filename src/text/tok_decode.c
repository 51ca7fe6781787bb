/* tok_decode.c: token ids back to text (attnlab.h's al_tokenizer_decode, docs/tokenizers.md "Decoding"), as the
 * Hugging Face tokenizers' decoders do:
 *   byte-level BPE (GPT-2, Qwen2, GPT-NeoX, RoBERTa, ModernBERT): each character of a token stands for one byte
 *     (GPT-2's bytes_to_unicode, tok_bpe.c); the bytes are the text;
 *   SentencePiece (Llama's BPE, DeBERTa's Unigram): ▁ is a space and <0xNN> pieces are bytes; the text's first
 *     space, which the encoder's dummy prefix put there, is dropped;
 *   WordPiece: tokens joined by spaces, a "##" piece glued to the one before.
 * Added and special tokens are written as their content (skip_special leaves the special ones out). Bytes that do
 * not form UTF-8 become U+FFFD, one per bad byte. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "tok_internal.h"

typedef struct buf {
    char *s;
    size_t n, cap;
} buf;

static int put(buf *b, const char *s, size_t n) {
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 64;
        while (b->n + n + 1 > cap) cap *= 2;
        char *t = realloc(b->s, cap);
        if (!t) return -1;
        b->s = t, b->cap = cap;
    }
    memcpy(b->s + b->n, s, n);
    b->n += n;
    b->s[b->n] = 0;
    return 0;
}

/* The next code point of s[i..n) and its length; a bad byte gives U+FFFD with length 1. */
static uint32_t next_cp(const unsigned char *s, size_t n, size_t i, size_t *len) {
    const unsigned char c = s[i];
    *len = 1;
    if (c < 0x80) return c;
    const size_t need = (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : 0;
    if (!need) return 0xFFFD;
    uint32_t cp = c & (0x3Fu >> need);
    for (size_t k = 1; k <= need; k++) {
        if (i + k >= n || (s[i + k] & 0xC0) != 0x80) return 0xFFFD;
        cp = (cp << 6) | (s[i + k] & 0x3Fu);
    }
    static const uint32_t min_cp[4] = {0, 0x80, 0x800, 0x10000};
    if (cp < min_cp[need] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0xFFFD;
    *len = need + 1;
    return cp;
}

/* Raw bytes made valid UTF-8: each bad byte becomes U+FFFD. */
static int put_valid(buf *out, const char *raw, size_t n) {
    size_t i = 0;
    while (i < n) {
        size_t len;
        const uint32_t cp = next_cp((const unsigned char *)raw, n, i, &len);
        if (put(out, cp == 0xFFFD && len == 1 ? "\xEF\xBF\xBD" : raw + i, cp == 0xFFFD && len == 1 ? 3 : len)) return -1;
        i += len;
    }
    return 0;
}

static int is_added(const al_tokenizer *tok, int id, int *special) {
    for (int i = 0; i < tok->n_added; i++)
        if (tok->added[i].id == id) {
            *special = tok->added[i].special;
            return 1;
        }
    return 0;
}

/* One byte-level token's characters as bytes (a character outside the table is written as itself). */
static int put_byte_level(buf *raw, const char *t) {
    static uint32_t map[512];
    static int ready;
    if (!ready) { /* the inverse of bytes_to_unicode: character -> byte (its characters are below 512) */
        for (int i = 0; i < 512; i++) map[i] = 0xFFFFFFFFu;
        for (int b = 0; b < 256; b++) map[al_bpe_byte_char(b)] = (uint32_t)b;
        ready = 1;
    }
    const size_t n = strlen(t);
    size_t i = 0;
    while (i < n) {
        size_t len;
        const uint32_t cp = next_cp((const unsigned char *)t, n, i, &len);
        if (cp < 512 && map[cp] != 0xFFFFFFFFu) {
            const char byte = (char)map[cp];
            if (put(raw, &byte, 1)) return -1;
        } else if (put(raw, t + i, len)) {
            return -1;
        }
        i += len;
    }
    return 0;
}

/* One SentencePiece piece: ▁ -> space, <0xNN> -> the byte. */
static int put_spm(buf *raw, const char *t) {
    if (strlen(t) == 6 && t[0] == '<' && t[1] == '0' && t[2] == 'x' && t[5] == '>') {
        char byte = (char)strtol(t + 3, NULL, 16);
        return put(raw, &byte, 1);
    }
    for (const char *p = t; *p;) {
        if (!strncmp(p, "\xE2\x96\x81", 3)) {
            if (put(raw, " ", 1)) return -1;
            p += 3;
        } else {
            if (put(raw, p, 1)) return -1;
            p++;
        }
    }
    return 0;
}

al_status al_tokenizer_decode(const al_tokenizer *tok, const int32_t *ids, int n, int skip_special, char **out,
                              al_error *err) {
    *out = NULL;
    if (!tok) return al_err(err, AL_ERR_INVALID, "decode: no tokenizer");
    buf raw = {0};
    const int spm = tok->kind == AL_TOK_UNIGRAM || (tok->kind == AL_TOK_BPE && tok->spm_bpe);
    const int wordpiece = tok->kind == AL_TOK_WORDPIECE;
    int rc = put(&raw, "", 0), first = 1;
    for (int i = 0; i < n && !rc; i++) {
        const char *t = al_tokenizer_id_to_token(tok, ids[i]);
        if (!t) return free(raw.s), al_err(err, AL_ERR_INVALID, "decode: id %d is not in the vocabulary", (int)ids[i]);
        int special = 0;
        if (is_added(tok, ids[i], &special) || (tok->kind == AL_TOK_UNIGRAM && ids[i] < tok->n_pieces &&
                                                tok->piece_type[ids[i]] == AL_SPM_CONTROL && (special = 1))) {
            if (special && skip_special) continue;
            rc = put(&raw, t, strlen(t));
        } else if (wordpiece) {
            const size_t pl = strlen(tok->continuing_prefix);
            if (pl && !strncmp(t, tok->continuing_prefix, pl)) rc = put(&raw, t + pl, strlen(t) - pl);
            else rc = (first ? 0 : put(&raw, " ", 1)) || put(&raw, t, strlen(t));
        } else if (spm) {
            rc = put_spm(&raw, t);
        } else {
            rc = put_byte_level(&raw, t);
        }
        first = 0;
    }
    buf text = {0};
    const char *from = raw.s ? raw.s : "";
    size_t len = raw.n;
    if (!rc && spm && len > 0 && from[0] == ' ') from++, len--; /* the dummy prefix's space */
    if (!rc) rc = put(&text, "", 0) || put_valid(&text, from, len);
    free(raw.s);
    if (rc) {
        free(text.s);
        return al_err(err, AL_ERR_OOM, "decode: out of memory");
    }
    *out = text.s;
    return AL_OK;
}
