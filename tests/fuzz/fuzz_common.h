/* fuzz_common.h: what every libFuzzer harness of tests/fuzz shares: the promise checks of the public API
 * (docs/fuzzing.md lists them per harness). A broken promise prints what broke and aborts, which libFuzzer
 * reports as a crash and saves the input. Harnesses run from the repository's root (scripts/fuzz.sh). */
#ifndef AL_FUZZ_COMMON_H
#define AL_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"

#define FUZZ_REQUIRE(cond, ...)                                                          \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "\nfuzz: promise broken at %s:%d: %s\n  ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                                \
            fputc('\n', stderr);                                                         \
            abort();                                                                     \
        }                                                                                \
    } while (0)

/* The input as a NUL-terminated string (malloc'd; the caller frees). Bytes after an inner NUL are kept
 * but C-string APIs stop there. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size) {
    char *s = malloc(size + 1);
    FUZZ_REQUIRE(s != NULL, "out of memory copying %zu bytes", size);
    if (size) memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

/* A failed call: a known status, the same code in the error, a non-empty message that names `part` (a file
 * name, a field) when it is not NULL. */
static inline void fuzz_check_error(al_status st, const al_error *err, const char *part) {
    FUZZ_REQUIRE(st >= AL_ERR_IO && st <= AL_ERR_CANCELLED, "status %d is unknown", (int)st);
    FUZZ_REQUIRE(err->code == st, "status %s but error code %s", al_status_name(st), al_status_name(err->code));
    FUZZ_REQUIRE(memchr(err->message, '\0', sizeof err->message) != NULL, "message is not terminated");
    FUZZ_REQUIRE(err->message[0] != '\0', "status %s with an empty message", al_status_name(st));
    FUZZ_REQUIRE(!part || strstr(err->message, part), "message '%s' does not name '%s'", err->message, part);
}

/* Strict UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF): the oracle for the encoder's
 * "invalid UTF-8" errors. */
static inline int fuzz_utf8_valid(const char *s, size_t len) {
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < len) {
        unsigned c = p[i];
        size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (!n || i + n > len) return 0;
        uint32_t cp = n == 1 ? c : c & (0x7F >> n);
        for (size_t k = 1; k < n; k++) {
            if ((p[i + k] & 0xC0) != 0x80) return 0;
            cp = (cp << 6) | (p[i + k] & 0x3F);
        }
        static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
        i += n;
    }
    return 1;
}

/* An encoding keeps every promise of al_encoding (attnlab.h) for the texts it came from (text_b may be NULL;
 * for encode_words pass the words' lengths in word_len and n_words, else NULL / 0). */
static inline void fuzz_check_encoding(const al_tokenizer *tok, const al_encoding *e, const al_encode_options *o,
                                       const char *text_a, const char *text_b, const size_t *word_len,
                                       int n_words) {
    const int V = al_tokenizer_vocab_size(tok);
    FUZZ_REQUIRE(e->n_tokens >= 0 && e->n_tokens <= e->length, "n_tokens %d, length %d", e->n_tokens, e->length);
    if (o->pad_to > 0) FUZZ_REQUIRE(e->length == o->pad_to, "length %d, pad_to %d", e->length, o->pad_to);
    else FUZZ_REQUIRE(e->length == e->n_tokens, "unpadded length %d, %d tokens", e->length, e->n_tokens);
    if (o->truncation && o->max_length > 0)
        FUZZ_REQUIRE(e->n_tokens <= o->max_length, "%d tokens, max_length %d", e->n_tokens, o->max_length);
    FUZZ_REQUIRE(e->truncated == 0 || e->truncated == 1, "truncated %d", e->truncated);
    if (!o->truncation) FUZZ_REQUIRE(!e->truncated, "truncated without truncation");
    const size_t len[2] = {text_a ? strlen(text_a) : 0, text_b ? strlen(text_b) : 0};
    for (int i = 0; i < e->length; i++) {
        const int32_t id = e->ids[i], seq = e->sequence_ids[i], s = e->offsets[2 * i], t = e->offsets[2 * i + 1];
        FUZZ_REQUIRE(id >= 0 && id < V && al_tokenizer_id_to_token(tok, id), "token %d: id %d outside the vocabulary of %d",
                     i, id, V);
        FUZZ_REQUIRE(e->attention_mask[i] == (i < e->n_tokens), "token %d: attention_mask %d", i, e->attention_mask[i]);
        FUZZ_REQUIRE(e->type_ids[i] >= 0, "token %d: type id %d", i, e->type_ids[i]);
        FUZZ_REQUIRE(e->special_mask[i] == 0 || e->special_mask[i] == 1, "token %d: special mask %d", i,
                     e->special_mask[i]);
        if (i >= e->n_tokens) { /* padding */
            FUZZ_REQUIRE(e->special_mask[i] == 1 && e->word_ids[i] == -1 && seq == -1 && s == 0 && t == 0 &&
                             e->type_ids[i] == 0,
                         "pad token %d is not plain padding", i);
            continue;
        }
        if (seq == -1) { /* a special token of the template */
            FUZZ_REQUIRE(o->add_special_tokens, "token %d: a template token without add_special_tokens", i);
            FUZZ_REQUIRE(e->special_mask[i] == 1 && e->word_ids[i] == -1 && s == 0 && t == 0,
                         "template token %d: special %d word %d offsets %d..%d", i, e->special_mask[i], e->word_ids[i],
                         s, t);
            continue;
        }
        FUZZ_REQUIRE(seq == 0 || (seq == 1 && text_b), "token %d: sequence id %d", i, seq);
        FUZZ_REQUIRE(e->word_ids[i] >= 0, "token %d of sequence %d: word id %d", i, seq, e->word_ids[i]);
        if (word_len) { /* pre-split words: offsets inside the word they came from */
            FUZZ_REQUIRE(e->word_ids[i] < n_words, "token %d: word %d of %d", i, e->word_ids[i], n_words);
            FUZZ_REQUIRE(s >= 0 && s <= t && (size_t)t <= word_len[e->word_ids[i]],
                         "token %d: offsets %d..%d outside word %d of %zu bytes", i, s, t, e->word_ids[i],
                         word_len[e->word_ids[i]]);
        } else {
            FUZZ_REQUIRE(s >= 0 && s <= t && (size_t)t <= len[seq], "token %d: offsets %d..%d outside text %d of %zu bytes",
                         i, s, t, seq, len[seq]);
        }
    }
}

/* Two encodings are the same, entry by entry. */
static inline int fuzz_same_encoding(const al_encoding *a, const al_encoding *b) {
    if (a->n_tokens != b->n_tokens || a->length != b->length || a->truncated != b->truncated) return 0;
    size_t n = (size_t)a->length * sizeof(int32_t);
    return !memcmp(a->ids, b->ids, n) && !memcmp(a->type_ids, b->type_ids, n) &&
           !memcmp(a->attention_mask, b->attention_mask, n) && !memcmp(a->special_mask, b->special_mask, n) &&
           !memcmp(a->word_ids, b->word_ids, n) && !memcmp(a->sequence_ids, b->sequence_ids, n) &&
           !memcmp(a->offsets, b->offsets, 2 * n);
}

/* Fixed texts a loaded tokenizer must encode (or refuse clearly), in every option set that matters. */
static inline void fuzz_encode_probe(const al_tokenizer *tok) {
    static const char *const texts[][2] = {
        {"Hello, world! naïve café 你好 [CLS] <s> x", NULL},
        {"the cat sat", "on the mat."},
        {"", NULL},
        {"a", ""},
    };
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++)
        for (int variant = 0; variant < 4; variant++) {
            al_encode_options o = al_encode_default_options();
            o.add_special_tokens = variant != 1;
            o.truncation = variant >= 2;
            o.max_length = variant == 2 ? 4 : variant == 3 ? 9 : 0;
            o.pad_to = variant == 3 ? 12 : 0;
            al_encoding e;
            al_error err;
            memset(&err, 0, sizeof err);
            al_status st = al_tokenizer_encode(tok, texts[k][0], texts[k][1], &o, &e, &err);
            if (st == AL_OK) {
                fuzz_check_encoding(tok, &e, &o, texts[k][0], texts[k][1], NULL, 0);
                al_encoding_free(&e);
            } else {
                fuzz_check_error(st, &err, NULL);
            }
        }
    al_special_ids sp = al_tokenizer_special_ids(tok);
    const int V = al_tokenizer_vocab_size(tok), ids[5] = {sp.cls, sp.sep, sp.pad, sp.mask, sp.unk};
    FUZZ_REQUIRE(V >= 1, "vocabulary of %d tokens", V);
    for (int i = 0; i < 5; i++)
        FUZZ_REQUIRE(ids[i] >= -1 && ids[i] < V && (ids[i] < 0 || al_tokenizer_id_to_token(tok, ids[i])),
                     "special id %d is %d with %d tokens", i, ids[i], V);
}

/* Loads a tokenizer from named buffers; on failure checks the error names must_name, or one of the files
 * when must_name is NULL. */
static inline al_tokenizer *fuzz_load_tokenizer(const char *const *names, const uint8_t *const *data,
                                                const size_t *sizes, int n, const char *must_name) {
    al_fileset *fs = al_fileset_new();
    al_error err;
    memset(&err, 0, sizeof err);
    for (int i = 0; i < n; i++)
        FUZZ_REQUIRE(al_fileset_add(fs, names[i], data[i], sizes[i], 0, &err) == AL_OK, "%s", err.message);
    al_tokenizer *tok = NULL;
    al_status st = al_tokenizer_load(fs, &tok, &err);
    al_fileset_free(fs);
    if (st == AL_OK) {
        FUZZ_REQUIRE(tok != NULL, "AL_OK without a tokenizer");
        return tok;
    }
    FUZZ_REQUIRE(tok == NULL, "a tokenizer despite %s", err.message);
    fuzz_check_error(st, &err, must_name);
    int named = 0;
    for (int i = 0; i < n; i++) named |= strstr(err.message, names[i]) != NULL;
    named |= strstr(err.message, "tokenizer:") != NULL; /* "tokenizer: out of memory", "no tokenizer files" */
    FUZZ_REQUIRE(named, "message '%s' names none of the tokenizer files", err.message);
    return NULL;
}

/* Reads a file of the repository (harnesses run from its root), or aborts saying which. */
static inline uint8_t *fuzz_read_repo_file(const char *path, size_t *size) {
    char *text = NULL;
    al_error err;
    if (al_read_file(path, &text, size, &err) != AL_OK) {
        fprintf(stderr, "fuzz: %s (run the harness from the repository's root)\n", err.message);
        abort();
    }
    return (uint8_t *)text;
}

#endif
