/* test_tokenizer_fuzz.c: deterministic fuzzing. Random byte strings (raw bytes, valid UTF-8 built
 * from awkward code points, fragments of special tokens) go through the WordPiece and byte-level BPE
 * encoders with random options: each call must either succeed with consistent output or fail with
 * a clear error. Truncated and corrupted tokenizer files must load or fail cleanly. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "core/rng.h"

static const char *VOCAB =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\na\n##a\nb\n##b\nab\n##ab\ne\n##e\n.\n,\n!\n你\nthe\n##s\n";

static const uint32_t AWKWARD[] = {'a', 'b', 'e', ' ', '\t', '\n', '\r', '.', '\'', 's', 0x01, 0x7F, 0x85, 0xA0, 0xAD,
                                   0xE9, 0x301, 0x308, 0x3A3, 0x130, 0x4F60, 0x20000, 0x1F600, 0x200D, 0xFE0F,
                                   0x200B, 0xFEFF, 0x2028, 0xFFFD, 0xE000, 0x10FFFF, 0x0E01, 0x0915, 0x094D, 0xAC00};
static const char *FRAGMENTS[] = {"[CLS]", "[SEP]", "[MASK]", "<s>", "</s>", "<mask>", "[", "]", "<", "##", "'s"};

static size_t put_utf8(uint32_t cp, char *b) {
    if (cp < 0x80) { b[0] = (char)cp; return 1; }
    if (cp < 0x800) { b[0] = (char)(0xC0 | (cp >> 6)); b[1] = (char)(0x80 | (cp & 0x3F)); return 2; }
    if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12)); b[1] = (char)(0x80 | ((cp >> 6) & 0x3F)); b[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    b[0] = (char)(0xF0 | (cp >> 18)); b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    b[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); b[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A random NUL-terminated string of up to max bytes (buffer holds max + 8). */
static void random_text(al_rng *r, char *buf, size_t max) {
    size_t n = 0, target = al_rng_below(r, (uint32_t)max);
    int mode = (int)al_rng_below(r, 3);
    while (n < target) {
        uint32_t k = al_rng_below(r, 10);
        if (mode == 0 || al_rng_below(r, 400) == 0) { /* a raw byte (often invalid UTF-8) */
            buf[n++] = (char)(1 + al_rng_below(r, 255));
        } else if (k < 3) {
            const char *f = FRAGMENTS[al_rng_below(r, sizeof FRAGMENTS / sizeof *FRAGMENTS)];
            size_t l = strlen(f);
            if (n + l > max) break;
            memcpy(buf + n, f, l);
            n += l;
        } else {
            n += put_utf8(AWKWARD[al_rng_below(r, sizeof AWKWARD / sizeof *AWKWARD)], buf + n);
        }
    }
    buf[n] = '\0';
}

static int consistent(const al_tokenizer *tok, const al_encoding *e, const al_encode_options *o) {
    if (e->n_tokens > e->length || (o->pad_to && e->length != o->pad_to)) return 0;
    if (o->truncation && o->max_length && e->n_tokens > o->max_length) return 0;
    for (int i = 0; i < e->length; i++) {
        if (e->ids[i] < 0 || e->ids[i] >= al_tokenizer_vocab_size(tok)) return 0;
        if (e->attention_mask[i] != (i < e->n_tokens)) return 0;
        if (e->offsets[2 * i] > e->offsets[2 * i + 1]) return 0;
        if (e->word_ids[i] < -1) return 0;
    }
    return 1;
}

static void fuzz_encoder(const al_tokenizer *tok, uint64_t seed, int rounds, const char *name) {
    al_rng r;
    al_rng_seed(&r, seed);
    char a[520], b[520];
    int ok = 0, bad_utf8 = 0, other = 0;
    for (int i = 0; i < rounds; i++) {
        random_text(&r, a, 512);
        random_text(&r, b, 512);
        al_encode_options o = al_encode_default_options();
        o.add_special_tokens = (int)al_rng_below(&r, 2);
        o.truncation = (int)al_rng_below(&r, 2);
        o.max_length = o.truncation ? 6 + (int)al_rng_below(&r, 60) : 0;
        al_encoding e;
        al_error err = {0};
        int pair = (int)al_rng_below(&r, 2);
        al_status st = al_tokenizer_encode(tok, a, pair ? b : NULL, &o, &e, &err);
        if (st == AL_OK) {
            ok++;
            if (!consistent(tok, &e, &o)) {
                CHECK_MSG(0, "%s: inconsistent encoding in round %d", name, i);
                other++;
            }
            al_encoding_free(&e);
        } else if (st == AL_ERR_FORMAT && strstr(err.message, "invalid UTF-8 at byte")) {
            bad_utf8++;
        } else {
            CHECK_MSG(0, "%s: round %d: unexpected %s", name, i, err.message);
            other++;
        }
        /* the same text as pre-split words, with padding */
        const char *words[2] = {a, b};
        o.pad_to = 600;
        o.truncation = 1;
        o.max_length = 600;
        st = al_tokenizer_encode_words(tok, words, 2, &o, &e, &err);
        if (st == AL_OK) {
            CHECK(consistent(tok, &e, &o));
            al_encoding_free(&e);
        } else {
            CHECK_MSG(st == AL_ERR_FORMAT && strstr(err.message, "invalid UTF-8 at byte"), "%s", err.message);
        }
    }
    printf("%s: %d rounds: %d encoded, %d invalid UTF-8, %d unexpected\n", name, rounds, ok, bad_utf8, other);
    CHECK(ok > rounds / 4 && bad_utf8 > rounds / 10 && other == 0);
}

static al_status load_files(const char *const *names, const char *const *data, const size_t *sizes, int n,
                            al_tokenizer **tok, al_error *err) {
    al_fileset *fs = al_fileset_new();
    for (int i = 0; i < n; i++) al_fileset_add(fs, names[i], data[i], sizes[i], 1, err);
    al_status st = al_tokenizer_load(fs, tok, err);
    al_fileset_free(fs);
    return st;
}

/* Truncated and byte-flipped tokenizer.json / vocab.txt: load or fail with a message. */
static void fuzz_loader(uint64_t seed) {
    const char *json =
        "{\"added_tokens\":[{\"id\":0,\"content\":\"[PAD]\",\"special\":true},{\"id\":1,\"content\":\"[UNK]\",\"special\":true}],"
        "\"normalizer\":{\"type\":\"BertNormalizer\",\"lowercase\":true,\"strip_accents\":null},"
        "\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},"
        "\"post_processor\":{\"type\":\"BertProcessing\",\"cls\":[\"[CLS]\",2],\"sep\":[\"[SEP]\",3]},"
        "\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\",\"continuing_subword_prefix\":\"##\","
        "\"vocab\":{\"[PAD]\":0,\"[UNK]\":1,\"[CLS]\":2,\"[SEP]\":3,\"a\":4,\"##a\":5}}}";
    al_rng r;
    al_rng_seed(&r, seed);
    char *buf = malloc(strlen(json) + strlen(VOCAB) + 1);
    int loaded = 0, failed = 0;
    for (int i = 0; i < 400; i++) {
        const char *base = i % 4 < 2 ? json : VOCAB;
        size_t len = strlen(base);
        memcpy(buf, base, len + 1);
        size_t n = len;
        if (i % 2) n = al_rng_below(&r, (uint32_t)len);
        else
            for (int k = 0; k < 3; k++) buf[al_rng_below(&r, (uint32_t)len)] = (char)al_rng_below(&r, 256);
        const char *names[1] = {i % 4 < 2 ? "tokenizer.json" : "vocab.txt"};
        const char *data[1] = {buf};
        size_t sizes[1] = {n};
        al_tokenizer *tok = NULL;
        al_error err = {0};
        al_status st = load_files(names, data, sizes, 1, &tok, &err);
        if (st == AL_OK) {
            loaded++;
            al_encoding e;
            if (al_tokenizer_encode(tok, "a aa [PAD]", "a", NULL, &e, &err) == AL_OK) al_encoding_free(&e);
            al_tokenizer_free(tok);
        } else {
            failed++;
            CHECK_MSG(err.message[0] && strchr(err.message, ':') != NULL, "round %d: no message", i);
        }
    }
    free(buf);
    printf("loader fuzz: %d loaded, %d rejected\n", loaded, failed);
    CHECK(loaded + failed == 400 && failed > 0 && loaded > 0);
}

int main(void) {
    al_fileset *fs = al_fileset_new();
    al_error err = {0};
    al_fileset_add(fs, "vocab.txt", VOCAB, strlen(VOCAB), 0, &err);
    al_tokenizer *wp = NULL, *bpe = NULL;
    CHECK(al_tokenizer_load(fs, &wp, &err) == AL_OK);
    al_fileset_free(fs);
    fs = al_fileset_new();
    CHECK(al_fileset_add_dir(fs, "tests/fixtures/tokenizers/bpe_small", &err) == AL_OK);
    CHECK_MSG(al_tokenizer_load(fs, &bpe, &err) == AL_OK, "%s", err.message);
    al_fileset_free(fs);
    if (wp) fuzz_encoder(wp, 1234, 1500, "wordpiece fuzz");
    if (bpe) fuzz_encoder(bpe, 5678, 1500, "bpe fuzz");
    fuzz_loader(42);
    al_tokenizer_free(wp);
    al_tokenizer_free(bpe);
    return check_summary("tokenizer_fuzz");
}
