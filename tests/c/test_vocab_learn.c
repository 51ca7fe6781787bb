/* test_vocab_learn.c: the WordPiece vocabulary learner (src/text/vocab_learn.c): known merges on the
 * classic low/lower/newest/widest corpus, normalisation, the alphabet limit, determinism, and the [UNK]
 * rate of a vocabulary learned on the pretraining text over the held-out text (when build/data exists). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"

/* Splits vocab.txt content into lines (in place); returns the count. */
static int lines(char *v, char **out, int max) {
    int n = 0;
    for (char *p = v; *p && n < max;) {
        char *nl = strchr(p, '\n');
        if (!nl) break;
        *nl = 0;
        out[n++] = p;
        p = nl + 1;
    }
    return n;
}

static char *learn(const char *text, int size, int alphabet, al_vocab_learn_stats *st) {
    al_vocab_learn_options o = al_vocab_learn_default_options();
    o.vocab_size = size;
    o.alphabet_limit = alphabet;
    char *v = NULL;
    size_t len = 0;
    al_error err;
    al_status s = al_vocab_learn(text, strlen(text), &o, &v, &len, st, &err);
    CHECK_MSG(s == AL_OK, "%s", err.message);
    CHECK(v == NULL || strlen(v) == len);
    return v;
}

static int has(char **tok, int n, const char *t) {
    for (int i = 0; i < n; i++)
        if (strcmp(tok[i], t) == 0) return 1;
    return 0;
}

static void test_known_merges(void) {
    const char *text = "low low low low low\nlower lower newest newest newest\nnewest newest newest\n"
                       "widest widest widest\n";
    al_vocab_learn_stats st;
    char *v = learn(text, 29, 1000, &st);
    char *tok[64];
    int n = lines(v, tok, 64);
    CHECK(n == 29);
    if (n == 29) {
        CHECK(strcmp(tok[0], "[PAD]") == 0 && strcmp(tok[1], "[UNK]") == 0 && strcmp(tok[2], "[CLS]") == 0);
        CHECK(strcmp(tok[3], "[SEP]") == 0 && strcmp(tok[4], "[MASK]") == 0);
        CHECK(strcmp(tok[5], "d") == 0 && strcmp(tok[14], "w") == 0);   /* 10 letters, code point order */
        CHECK(strcmp(tok[15], "##d") == 0 && strcmp(tok[24], "##w") == 0);
        /* (##e ##s) 9 ties (##s ##t) 9: lower ids first; then ##est 9; (l ##o) 7 ties (##o ##w) 7 */
        CHECK_MSG(strcmp(tok[25], "##es") == 0, "got %s", tok[25]);
        CHECK_MSG(strcmp(tok[26], "##est") == 0, "got %s", tok[26]);
        CHECK_MSG(strcmp(tok[27], "lo") == 0, "got %s", tok[27]);
        CHECK_MSG(strcmp(tok[28], "low") == 0, "got %s", tok[28]);
    }
    CHECK(st.n_words == 16 && st.n_word_types == 4 && st.n_alphabet == 10 && st.n_merges == 4);
    free(v);
    /* larger budget: merging goes on to whole words, and stops when no pair occurs twice */
    v = learn(text, 1000, 1000, &st);
    n = lines(v, tok, 64);
    CHECK(has(tok, n, "newest") && has(tok, n, "widest") && has(tok, n, "lower") && has(tok, n, "low"));
    CHECK(n < 1000);
    free(v);
}

static void test_normalisation(void) {
    al_vocab_learn_stats st;
    char *v = learn("Caf\xc3\xa9 CAF\xc3\x89 caf\xc3\xa9, cafe!\nCafe. caf\xc3\xa9\n", 200, 1000, &st);
    char *tok[256];
    int n = lines(v, tok, 256);
    CHECK(has(tok, n, "cafe"));                       /* lower-cased, accents stripped */
    CHECK(!has(tok, n, "\xc3\xa9") && !has(tok, n, "C"));
    CHECK(has(tok, n, ",") && has(tok, n, "!") && has(tok, n, "."));  /* punctuation split off */
    CHECK(st.n_words == 9 && st.n_word_types == 4);   /* cafe x6, ",", "!", "." */
    free(v);
    /* invalid UTF-8 lines are skipped, not fatal */
    v = learn("good line\n\xff\xfe bad\nanother good line\n", 100, 1000, &st);
    CHECK(st.n_lines_skipped == 1);
    free(v);
}

static void test_alphabet_limit_and_determinism(void) {
    const char *text = "aaa aaa bbb bbb bbb ccc zq\nabc abc cab\n";
    al_vocab_learn_stats st;
    char *v = learn(text, 100, 3, &st);
    char *w = learn(text, 100, 3, &st);
    CHECK(v && w && strcmp(v, w) == 0); /* same text, same vocabulary */
    char *tok[128];
    int n = lines(v, tok, 128);
    CHECK(st.n_alphabet == 3);
    CHECK(has(tok, n, "a") && has(tok, n, "b") && has(tok, n, "c") && !has(tok, n, "z") && !has(tok, n, "q"));
    free(v);
    free(w);
    al_error err;
    char *out = NULL;
    size_t len;
    al_vocab_learn_options o = al_vocab_learn_default_options();
    o.vocab_size = 3;
    CHECK(al_vocab_learn("x", 1, &o, &out, &len, NULL, &err) == AL_ERR_INVALID && out == NULL);
}

static char *read_prefix(const char *path, size_t max, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc(max + 1);
    *len = buf ? fread(buf, 1, max, f) : 0;
    fclose(f);
    if (buf) buf[*len] = 0;
    return buf;
}

/* A vocabulary learned on 4 MB of the training text tokenizes the held-out text with few [UNK]. */
static void test_heldout_unk_rate(void) {
    size_t tl, hl;
    char *train = read_prefix("build/data/train.txt", 4 << 20, &tl);
    char *held = read_prefix("build/data/heldout.txt", 1 << 20, &hl);
    if (!train || !held) {
        printf("build/data missing (scripts/setup.sh builds it): held-out [UNK] rate not measured\n");
        free(train);
        free(held);
        return;
    }
    while (tl && train[tl - 1] != '\n') tl--; /* whole lines only */
    al_vocab_learn_options o = al_vocab_learn_default_options();
    char *v = NULL;
    size_t vl = 0;
    al_error err;
    CHECK(al_vocab_learn(train, tl, &o, &v, &vl, NULL, &err) == AL_OK);
    al_fileset *fs = al_fileset_new();
    al_tokenizer *tok = NULL;
    CHECK(v && al_fileset_add(fs, "vocab.txt", v, vl, 1, &err) == AL_OK);
    CHECK(al_tokenizer_load(fs, &tok, &err) == AL_OK);
    if (tok) {
        CHECK(al_tokenizer_vocab_size(tok) == 8000);
        al_special_ids sp = al_tokenizer_special_ids(tok);
        CHECK(sp.pad == 0 && sp.unk == 1 && sp.cls == 2 && sp.sep == 3 && sp.mask == 4);
        long long n_tok = 0, n_unk = 0;
        al_encode_options eo = al_encode_default_options();
        eo.add_special_tokens = 0;
        for (char *line = strtok(held, "\n"); line; line = strtok(NULL, "\n")) {
            al_encoding enc;
            if (al_tokenizer_encode(tok, line, NULL, &eo, &enc, &err) != AL_OK) continue;
            n_tok += enc.n_tokens;
            for (int i = 0; i < enc.n_tokens; i++) n_unk += enc.ids[i] == sp.unk;
            al_encoding_free(&enc);
        }
        double rate = n_tok ? (double)n_unk / (double)n_tok : 1.0;
        printf("held-out [UNK] rate: %.5f%% (%lld of %lld tokens)\n", 100.0 * rate, n_unk, n_tok);
        CHECK(n_tok > 10000 && rate < 0.005);
    }
    al_tokenizer_free(tok);
    al_fileset_free(fs);
    free(v);
    free(train);
    free(held);
}

int main(void) {
    test_known_merges();
    test_normalisation();
    test_alphabet_limit_and_determinism();
    test_heldout_unk_rate();
    return check_summary("vocab_learn");
}
