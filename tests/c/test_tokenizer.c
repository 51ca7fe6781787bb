/* test_tokenizer.c: hand-checked WordPiece and byte-level BPE cases: each BERT normalisation rule,
 * added/special tokens, pairs, truncation, padding, word ids, offsets, pre-split words, and the
 * malformed-input errors. test_tokenizer_fuzz.c runs random bytes; the JS oracle compares ids with
 * the Hugging Face JS tokenizers on hundreds of hard strings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "read_file.h"

static const char *SMALL_VOCAB =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\nworld\n,\n!\nun\n##believ\n##able\ncafe\n你\n好\na\n##a\n.\n[\n]\n"
    "mask\nthe\nx\n##x\nσας\n";
enum { PAD, UNK, CLS, SEP, MASK, HELLO, WORLD, COMMA, BANG, UN, BELIEV, ABLE, CAFE, NI, HAO, A, AA, DOT, LBR, RBR,
       MASKW, THE, X, XX, SIGMA };

static al_tokenizer *load(const char *const *names, const char *const *texts, int n, al_error *err,
                          al_status *st) {
    al_fileset *fs = al_fileset_new();
    for (int i = 0; i < n; i++) al_fileset_add(fs, names[i], texts[i], strlen(texts[i]), 1, err);
    al_tokenizer *tok = NULL;
    *st = al_tokenizer_load(fs, &tok, err);
    al_fileset_free(fs);
    return tok;
}

static al_tokenizer *load_vocab(const char *vocab, const char *config) {
    const char *names[2] = {"vocab.txt", "tokenizer_config.json"};
    const char *texts[2] = {vocab, config};
    al_error err = {0};
    al_status st;
    al_tokenizer *tok = load(names, texts, config ? 2 : 1, &err, &st);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    return tok;
}

/* Encodes and compares ids with the expected list (terminated by -2). */
static void expect_ids(const al_tokenizer *tok, const char *text, const char *pair, const int *want) {
    al_encoding enc;
    al_error err = {0};
    al_encode_options opt = al_encode_default_options();
    al_status st = al_tokenizer_encode(tok, text, pair, &opt, &enc, &err);
    CHECK_MSG(st == AL_OK, "'%s': %s", text, err.message);
    if (st) return;
    int n = 0;
    while (want[n] != -2) n++;
    int same = enc.length == n;
    for (int i = 0; same && i < n; i++) same = enc.ids[i] == want[i];
    CHECK_MSG(same, "'%s': got %d ids (first %d)", text, enc.length, enc.length ? enc.ids[0] : -1);
    al_encoding_free(&enc);
}

static void test_wordpiece_rules(void) {
    al_tokenizer *tok = load_vocab(SMALL_VOCAB, NULL);
    if (!tok) return;
    CHECK(al_tokenizer_get_kind(tok) == AL_TOK_WORDPIECE);
    CHECK(al_tokenizer_vocab_size(tok) == 25);
    CHECK(al_tokenizer_token_to_id(tok, "##able") == ABLE);
    CHECK(strcmp(al_tokenizer_id_to_token(tok, CAFE), "cafe") == 0);
    CHECK(al_tokenizer_id_to_token(tok, 25) == NULL && al_tokenizer_id_to_token(tok, -1) == NULL);
    al_special_ids s = al_tokenizer_special_ids(tok);
    CHECK(s.cls == CLS && s.sep == SEP && s.pad == PAD && s.mask == MASK && s.unk == UNK);

    /* lower-casing, punctuation split */
    expect_ids(tok, "Hello, WORLD!", NULL, (int[]){CLS, HELLO, COMMA, WORLD, BANG, SEP, -2});
    /* longest-match-first with ## continuation */
    expect_ids(tok, "unbelievable", NULL, (int[]){CLS, UN, BELIEV, ABLE, SEP, -2});
    /* a piece matching nothing makes the whole word [UNK] */
    expect_ids(tok, "unbelievablez", NULL, (int[]){CLS, UNK, SEP, -2});
    /* accents stripped after lower-casing: precomposed and combining forms */
    expect_ids(tok, "Café CAFE\xcc\x81", NULL, (int[]){CLS, CAFE, CAFE, SEP, -2});
    /* CJK characters become words of their own */
    expect_ids(tok, "hello你好world", NULL, (int[]){CLS, HELLO, NI, HAO, WORLD, SEP, -2});
    /* clean text: control characters and U+FFFD dropped, tabs/newlines are spaces */
    expect_ids(tok, "hel\x01lo\tworld\n\xef\xbf\xbd!", NULL, (int[]){CLS, HELLO, WORLD, BANG, SEP, -2});
    /* zero-width space (Cf) is removed, joining the halves */
    expect_ids(tok, "hel\xe2\x80\x8blo", NULL, (int[]){CLS, HELLO, SEP, -2});
    /* literal special tokens are split out first and never lower-cased; [mask] is ordinary text */
    expect_ids(tok, "the [MASK]. [mask]", NULL, (int[]){CLS, THE, MASK, DOT, LBR, MASKW, RBR, SEP, -2});
    expect_ids(tok, "x[SEP]x", NULL, (int[]){CLS, X, SEP, X, SEP, -2});
    /* Final sigma: ΣΑΣ lower-cases to σας (JavaScript's toLowerCase) */
    expect_ids(tok, "ΣΑΣ", NULL, (int[]){CLS, SIGMA, SEP, -2});
    /* max_input_chars_per_word: 100 characters are tokenized, 101 are [UNK] */
    char word[128];
    memset(word, 'x', 100);
    word[100] = '\0';
    al_encoding enc;
    al_error err = {0};
    CHECK(al_tokenizer_encode(tok, word, NULL, NULL, &enc, &err) == AL_OK && enc.length == 102 && enc.ids[1] == X &&
          enc.ids[100] == XX);
    al_encoding_free(&enc);
    word[100] = 'x';
    word[101] = '\0';
    expect_ids(tok, word, NULL, (int[]){CLS, UNK, SEP, -2});
    /* empty and whitespace-only text */
    expect_ids(tok, "", NULL, (int[]){CLS, SEP, -2});
    expect_ids(tok, " \t\n ", NULL, (int[]){CLS, SEP, -2});
    al_tokenizer_free(tok);

    /* tokenizer_config.json: do_lower_case false keeps case (and accents) */
    tok = load_vocab(SMALL_VOCAB, "{\"do_lower_case\": false}");
    if (tok) {
        expect_ids(tok, "Hello hello café", NULL, (int[]){CLS, UNK, HELLO, UNK, SEP, -2});
        al_tokenizer_free(tok);
    }
    tok = load_vocab(SMALL_VOCAB, "{\"do_lower_case\": true, \"strip_accents\": false, \"tokenize_chinese_chars\": false}");
    if (tok) {
        expect_ids(tok, "CAFE café 你好", NULL, (int[]){CLS, CAFE, UNK, UNK, SEP, -2});
        al_tokenizer_free(tok);
    }
}

static void test_encoding_fields(void) {
    al_tokenizer *tok = load_vocab(SMALL_VOCAB, NULL);
    if (!tok) return;
    al_encoding enc;
    al_error err = {0};
    al_encode_options opt = al_encode_default_options();
    /* pair: [CLS] hello , [SEP] world ! [SEP] */
    CHECK(al_tokenizer_encode(tok, "hello,", "world!", &opt, &enc, &err) == AL_OK);
    int ids[] = {CLS, HELLO, COMMA, SEP, WORLD, BANG, SEP};
    int types[] = {0, 0, 0, 0, 1, 1, 1};
    int words[] = {-1, 0, 1, -1, 0, 1, -1};
    int seqs[] = {-1, 0, 0, -1, 1, 1, -1};
    int special[] = {1, 0, 0, 1, 0, 0, 1};
    int offsets[] = {0, 0, 0, 5, 5, 6, 0, 0, 0, 5, 5, 6, 0, 0};
    CHECK(enc.n_tokens == 7 && enc.length == 7 && !enc.truncated);
    for (int i = 0; i < 7 && enc.length == 7; i++) {
        CHECK_MSG(enc.ids[i] == ids[i] && enc.type_ids[i] == types[i] && enc.word_ids[i] == words[i] &&
                      enc.sequence_ids[i] == seqs[i] && enc.special_mask[i] == special[i] && enc.attention_mask[i] == 1,
                  "pair token %d", i);
        CHECK(enc.offsets[2 * i] == offsets[2 * i] && enc.offsets[2 * i + 1] == offsets[2 * i + 1]);
    }
    al_encoding_free(&enc);

    /* byte offsets point into the source text, through accents stripped and multi-byte characters */
    CHECK(al_tokenizer_encode(tok, " Café你", NULL, &opt, &enc, &err) == AL_OK && enc.length == 4);
    CHECK(enc.ids[1] == CAFE && enc.offsets[2] == 1 && enc.offsets[3] == 6);
    CHECK(enc.ids[2] == NI && enc.offsets[4] == 6 && enc.offsets[5] == 9);
    al_encoding_free(&enc);

    /* padding */
    opt.pad_to = 8;
    CHECK(al_tokenizer_encode(tok, "hello world", NULL, &opt, &enc, &err) == AL_OK);
    CHECK(enc.n_tokens == 4 && enc.length == 8);
    CHECK(enc.ids[4] == PAD && enc.ids[7] == PAD && enc.attention_mask[3] == 1 && enc.attention_mask[4] == 0);
    CHECK(enc.special_mask[5] == 1 && enc.word_ids[6] == -1 && enc.sequence_ids[7] == -1 && enc.type_ids[7] == 0);
    al_encoding_free(&enc);
    opt.pad_to = 3; /* shorter than the tokens */
    CHECK(al_tokenizer_encode(tok, "hello world", NULL, &opt, &enc, &err) == AL_ERR_INVALID);
    CHECK(strstr(err.message, "pad_to") != NULL);
    opt.pad_to = 0;

    /* truncation: single */
    opt.max_length = 4;
    opt.truncation = 1;
    CHECK(al_tokenizer_encode(tok, "hello world hello world", NULL, &opt, &enc, &err) == AL_OK);
    CHECK(enc.length == 4 && enc.truncated && enc.ids[0] == CLS && enc.ids[1] == HELLO && enc.ids[2] == WORLD &&
          enc.ids[3] == SEP);
    al_encoding_free(&enc);
    /* longest_first on a pair: 5 + 2 tokens, budget 7 - 3 = 4 -> 2 + 2 */
    opt.max_length = 7;
    CHECK(al_tokenizer_encode(tok, "hello world hello world hello", "the the", &opt, &enc, &err) == AL_OK);
    CHECK(enc.length == 7 && enc.truncated);
    if (enc.length == 7) {
        int want[] = {CLS, HELLO, WORLD, SEP, THE, THE, SEP};
        for (int i = 0; i < 7; i++) CHECK(enc.ids[i] == want[i]);
    }
    al_encoding_free(&enc);
    /* equal lengths and an odd budget: the Rust tokenizers give the extra token to the second sequence
     * (3 + 3 -> 1 + 2 with budget 3; the Python slow tokenizers' one-at-a-time loop gave 2 + 1) */
    opt.max_length = 6;
    CHECK(al_tokenizer_encode(tok, "a a a", "x x x", &opt, &enc, &err) == AL_OK);
    CHECK(enc.length == 6 && enc.ids[1] == A && enc.ids[2] == SEP && enc.ids[3] == X && enc.ids[4] == X &&
          enc.ids[5] == SEP);
    al_encoding_free(&enc);
    /* every pair of lengths up to 9 + 9 and every budget up to 20, against the Rust source's three cases
     * (tokenizers/src/utils/truncation.rs, LongestFirst; docs/tokenizers.md) */
    {
        int wrong = 0, cases = 0;
        char ta[64], tb[64];
        for (int la = 0; la <= 9; la++)
            for (int lb = 0; lb <= 9; lb++)
                for (int max_len = 3; max_len <= 23; max_len++) {
                    ta[0] = tb[0] = 0;
                    for (int i = 0; i < la; i++) strcat(ta, "a ");
                    for (int i = 0; i < lb; i++) strcat(tb, "x ");
                    opt.max_length = max_len;
                    if (al_tokenizer_encode(tok, ta, tb, &opt, &enc, &err) != AL_OK) {
                        wrong++;
                        continue;
                    }
                    int got_a = 0, got_b = 0;
                    for (int i = 0; i < enc.length; i++) got_a += enc.ids[i] == A, got_b += enc.ids[i] == X;
                    al_encoding_free(&enc);
                    /* the Rust rule, case by case */
                    int want_a = la, want_b = lb;
                    const int budget = max_len - 3;
                    if (la + lb > budget) {
                        int s = la <= lb ? la : lb, l = la <= lb ? lb : la; /* shorter (the first on ties), longer */
                        if (s + (budget - s > s ? budget - s : s) <= budget) l = budget - s > s ? budget - s : s; /* case 2 */
                        else s = budget / 2, l = s + budget % 2;                                             /* case 3 */
                        want_a = la <= lb ? s : l, want_b = la <= lb ? l : s;
                        if (want_a > la) want_a = la;
                        if (want_b > lb) want_b = lb;
                    }
                    cases++;
                    if (got_a != want_a || got_b != want_b) {
                        if (wrong < 5) printf("pair %d + %d, max_length %d: %d + %d, the Rust rule %d + %d\n", la, lb, max_len, got_a, got_b, want_a, want_b);
                        wrong++;
                    }
                }
        CHECK_MSG(wrong == 0, "%d of %d pair truncations differ from the Rust rule", wrong, cases);
        printf("pair truncation: %d length combinations, %d differ from the Rust rule\n", cases, wrong);
    }
    /* fits: not truncated */
    opt.max_length = 50;
    CHECK(al_tokenizer_encode(tok, "hello", NULL, &opt, &enc, &err) == AL_OK && !enc.truncated && enc.length == 3);
    al_encoding_free(&enc);
    opt.max_length = 1; /* no room for [CLS] [SEP] */
    CHECK(al_tokenizer_encode(tok, "hello", NULL, &opt, &enc, &err) == AL_ERR_INVALID);
    opt = al_encode_default_options();

    /* no special tokens */
    opt.add_special_tokens = 0;
    CHECK(al_tokenizer_encode(tok, "hello", "world", &opt, &enc, &err) == AL_OK);
    CHECK(enc.length == 2 && enc.ids[0] == HELLO && enc.ids[1] == WORLD && enc.type_ids[1] == 1);
    al_encoding_free(&enc);
    opt.add_special_tokens = 1;

    /* pre-split words: word ids index the words */
    const char *ws[] = {"unbelievable", "hello,", "你好"};
    CHECK(al_tokenizer_encode_words(tok, ws, 3, &opt, &enc, &err) == AL_OK);
    int wids[] = {-1, 0, 0, 0, 1, 1, 2, 2, -1};
    int wtok[] = {CLS, UN, BELIEV, ABLE, HELLO, COMMA, NI, HAO, SEP};
    CHECK(enc.length == 9);
    for (int i = 0; i < 9 && enc.length == 9; i++) CHECK(enc.word_ids[i] == wids[i] && enc.ids[i] == wtok[i]);
    al_encoding_free(&enc);

    /* invalid UTF-8 names the byte offset */
    CHECK(al_tokenizer_encode(tok, "hello \xc3\x28", NULL, &opt, &enc, &err) == AL_ERR_FORMAT);
    CHECK_MSG(strcmp(err.message, "text: invalid UTF-8 at byte 7") == 0, "%s", err.message);
    CHECK(al_tokenizer_encode(tok, "ok", "\xed\xa0\x80", &opt, &enc, &err) == AL_ERR_FORMAT); /* surrogate */
    CHECK_MSG(strcmp(err.message, "text_pair: invalid UTF-8 at byte 0") == 0, "%s", err.message);
    CHECK(al_tokenizer_encode(tok, "\xc0\xaf", NULL, &opt, &enc, &err) == AL_ERR_FORMAT); /* overlong */
    CHECK(al_tokenizer_encode(tok, "\xf4\x90\x80\x80", NULL, &opt, &enc, &err) == AL_ERR_FORMAT); /* > U+10FFFF */
    CHECK(al_tokenizer_encode(tok, "abc\xe4\xbd", NULL, &opt, &enc, &err) == AL_ERR_FORMAT); /* truncated */
    CHECK(strstr(err.message, "byte 3") != NULL);
    al_tokenizer_free(tok);
}

static void expect_load_error(const char *const *names, const char *const *texts, int n, al_status code,
                              const char *needle) {
    al_error err = {0};
    al_status st;
    al_tokenizer *tok = load(names, texts, n, &err, &st);
    CHECK_MSG(st == code && tok == NULL, "expected status %d, got %d (%s)", (int)code, (int)st, err.message);
    CHECK_MSG(strstr(err.message, needle) != NULL, "'%s' does not mention '%s'", err.message, needle);
    al_tokenizer_free(tok);
}

static void test_malformed(void) {
    const char *vt[] = {"vocab.txt"};
    expect_load_error(vt, (const char *[]){""}, 1, AL_ERR_FORMAT, "vocab.txt: empty vocabulary");
    expect_load_error(vt, (const char *[]){"[PAD]\n[UNK]\n[CLS]\nhello\n"}, 1, AL_ERR_FORMAT,
                      "vocab.txt: missing special token [SEP]");
    expect_load_error(vt, (const char *[]){"[PAD]\n[UNK]\n\n[CLS]\n"}, 1, AL_ERR_FORMAT, "vocab.txt: line 3: empty token");
    expect_load_error(vt, (const char *[]){"[PAD]\n\xff\n"}, 1, AL_ERR_FORMAT, "vocab.txt: line 2: invalid UTF-8");
    const char *vc[] = {"vocab.txt", "tokenizer_config.json"};
    expect_load_error(vc, (const char *[]){SMALL_VOCAB, "{not json"}, 2, AL_ERR_FORMAT, "tokenizer_config.json");
    const char *tj[] = {"tokenizer.json"};
    expect_load_error(tj, (const char *[]){"{\"model\": "}, 1, AL_ERR_FORMAT, "tokenizer.json: not a valid JSON");
    expect_load_error(tj, (const char *[]){"{\"model\": {\"type\": \"WordLevel\", \"vocab\": {}}}"}, 1, AL_ERR_UNSUPPORTED,
                      "tokenizer.json: model.type 'WordLevel'");
    expect_load_error(tj, (const char *[]){"{\"model\": {\"type\": \"Unigram\", \"vocab\": []}}"}, 1, AL_ERR_FORMAT,
                      "tokenizer.json: model.vocab must be a non-empty array");
    expect_load_error(tj, (const char *[]){"{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}"}, 1, AL_ERR_FORMAT,
                      "tokenizer.json: model.vocab is empty");
    expect_load_error(tj, (const char *[]){"{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"a\": 0}, \"unk_token\": \"[UNK]\"}}"},
                      1, AL_ERR_FORMAT, "model.unk_token '[UNK]' is not in model.vocab");
    expect_load_error(tj, (const char *[]){"{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0}, \"merges\": [5]}}"}, 1,
                      AL_ERR_FORMAT, "tokenizer.json: model.merges[0]");
    expect_load_error(tj, (const char *[]){"{\"model\": {\"type\": \"WordPiece\", \"vocab\": {\"a\": \"x\"}}}"}, 1,
                      AL_ERR_FORMAT, "token 'a' needs an integer id below 1");
    const char *bpe[] = {"vocab.json", "merges.txt"};
    expect_load_error(bpe, (const char *[]){"{\"a\": 0, \"b\": 1}", "#version: 0.2\na b\nab\n"}, 2, AL_ERR_FORMAT,
                      "merges.txt: line 3");
    expect_load_error(bpe, (const char *[]){"[1, 2]", ""}, 2, AL_ERR_FORMAT, "vocab.json: not a valid JSON object");
    expect_load_error(bpe, (const char *[]){"{\"a\": 0}"}, 1, AL_ERR_IO, "merges.txt: missing");
    expect_load_error((const char *[]){"config.json"}, (const char *[]){"{}"}, 1, AL_ERR_IO, "tokenizer: no tokenizer.json");

    /* a BPE vocabulary without <s> loads (GPT-2 has none) but cannot add special tokens */
    al_error err = {0};
    al_status st;
    al_tokenizer *tok = load(bpe, (const char *[]){"{\"a\": 0, \"b\": 1, \"ab\": 2}", "a b\n"}, 2, &err, &st);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    if (tok) {
        al_encoding enc;
        al_encode_options opt = al_encode_default_options();
        CHECK(al_tokenizer_encode(tok, "ab", NULL, &opt, &enc, &err) == AL_ERR_FORMAT);
        CHECK_MSG(strcmp(err.message, "vocab.json: missing special token <s>") == 0, "%s", err.message);
        opt.add_special_tokens = 0;
        CHECK(al_tokenizer_encode(tok, "ab", NULL, &opt, &enc, &err) == AL_OK && enc.length == 1 && enc.ids[0] == 2);
        al_encoding_free(&enc);
        opt.pad_to = 4; /* padding needs <pad> */
        CHECK(al_tokenizer_encode(tok, "ab", NULL, &opt, &enc, &err) == AL_ERR_FORMAT);
        CHECK(strstr(err.message, "<pad>") != NULL);
        al_tokenizer_free(tok);
    }
}

static al_tokenizer *load_bpe_fixture(void) {
    al_fileset *fs = al_fileset_new();
    al_error err = {0};
    al_tokenizer *tok = NULL;
    al_status st = al_fileset_add_dir(fs, "tests/fixtures/tokenizers/bpe_small", &err);
    if (st == AL_OK) st = al_tokenizer_load(fs, &tok, &err);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    al_fileset_free(fs);
    return tok;
}

static int id(const al_tokenizer *tok, const char *t) { return al_tokenizer_token_to_id(tok, t); }

static void test_bpe(void) {
    al_tokenizer *tok = load_bpe_fixture();
    if (!tok) return;
    CHECK(al_tokenizer_get_kind(tok) == AL_TOK_BPE);
    al_special_ids s = al_tokenizer_special_ids(tok);
    CHECK(s.cls == 0 && s.pad == 1 && s.sep == 2 && s.unk == 3 && s.mask == id(tok, "<mask>"));
    al_encoding enc;
    al_error err = {0};
    al_encode_options opt = al_encode_default_options();
    /* "Hello world": merges learned from the corpus give whole words; the space becomes Ġ */
    CHECK(al_tokenizer_encode(tok, "Hello world", NULL, &opt, &enc, &err) == AL_OK);
    CHECK(enc.length == 4 && enc.ids[0] == 0 && enc.ids[1] == id(tok, "Hello") && enc.ids[2] == id(tok, "\xc4\xa0world") &&
          enc.ids[3] == 2);
    CHECK(enc.offsets[2] == 0 && enc.offsets[3] == 5 && enc.offsets[4] == 5 && enc.offsets[5] == 11);
    CHECK(enc.word_ids[1] == 0 && enc.word_ids[2] == 1);
    al_encoding_free(&enc);
    /* contractions split as GPT-2 does; unknown bytes fall back to byte characters */
    CHECK(al_tokenizer_encode(tok, "it's", NULL, &opt, &enc, &err) == AL_OK);
    CHECK(enc.length == 5 && enc.ids[1] == id(tok, "i") && enc.ids[2] == id(tok, "t") && enc.ids[3] == id(tok, "'s"));
    al_encoding_free(&enc);
    /* U+00E9 (C3 A9) maps to the two byte characters Ã and © */
    opt.add_special_tokens = 0;
    CHECK(al_tokenizer_encode(tok, "\xc3\xa9", NULL, &opt, &enc, &err) == AL_OK);
    CHECK(enc.length == 1 ? enc.ids[0] == id(tok, "\xc3\x83\xc2\xa9")
                          : (enc.length == 2 && enc.ids[0] == id(tok, "\xc3\x83") && enc.ids[1] == id(tok, "\xc2\xa9")));
    al_encoding_free(&enc);
    /* whitespace runs: "a   b" -> words a | two spaces | space+b (the last space joins the word) */
    CHECK(al_tokenizer_encode(tok, "a   b", NULL, &opt, &enc, &err) == AL_OK);
    CHECK(enc.length == 5 && enc.ids[0] == id(tok, "a") && enc.ids[4] == id(tok, "b"));
    if (enc.length == 5) {
        int wid[] = {0, 1, 1, 2, 2};
        for (int i = 0; i < 5; i++) CHECK(enc.word_ids[i] == wid[i]);
    }
    al_encoding_free(&enc);
    opt.add_special_tokens = 1;
    /* pairs: <s> A </s></s> B </s>, all type ids 0 */
    CHECK(al_tokenizer_encode(tok, "Hello", "Hello", &opt, &enc, &err) == AL_OK);
    CHECK(enc.length == 6 && enc.ids[0] == 0 && enc.ids[2] == 2 && enc.ids[3] == 2 && enc.ids[4] == id(tok, "Hello") &&
          enc.ids[5] == 2);
    for (int i = 0; i < enc.length; i++) CHECK(enc.type_ids[i] == 0);
    CHECK(enc.sequence_ids[1] == 0 && enc.sequence_ids[4] == 1 && enc.special_mask[3] == 1);
    al_encoding_free(&enc);
    /* <mask> strips the space on its left (lstrip), as RoBERTa's does */
    CHECK(al_tokenizer_encode(tok, "Hello <mask>", NULL, &opt, &enc, &err) == AL_OK);
    CHECK(enc.length == 4 && enc.ids[1] == id(tok, "Hello") && enc.ids[2] == s.mask);
    al_encoding_free(&enc);
    /* pre-split words get a prefix space each */
    const char *ws[] = {"Hello", "world"};
    CHECK(al_tokenizer_encode_words(tok, ws, 2, &opt, &enc, &err) == AL_OK);
    CHECK(enc.length == 4 && enc.ids[1] == id(tok, "\xc4\xa0Hello") && enc.ids[2] == id(tok, "\xc4\xa0world") &&
          enc.word_ids[1] == 0 && enc.word_ids[2] == 1);
    al_encoding_free(&enc);
    /* a long word is merged in reasonable time (heap-based BPE) */
    size_t n = 200000;
    char *big = malloc(n + 1);
    for (size_t i = 0; i < n; i++) big[i] = "hello"[i % 5];
    big[n] = '\0';
    CHECK(al_tokenizer_encode(tok, big, NULL, &opt, &enc, &err) == AL_OK && enc.length > 2);
    al_encoding_free(&enc);
    free(big);
    al_tokenizer_free(tok);
}

/* bert-base-uncased's vocabulary, which the larger embedded model uses (models/attnlab-small-bert/README.md):
 * the ids of the models people know. */
static void test_bert_base_vocab(void) {
    size_t size = 0;
    char *data = (char *)read_file("models/attnlab-small-bert/vocab.txt", &size);
    CHECK_MSG(data && size > 0, "cannot read models/attnlab-small-bert/vocab.txt");
    if (!data) return;
    al_tokenizer *tok = load_vocab(data, NULL);
    free(data);
    if (!tok) return;
    CHECK(al_tokenizer_vocab_size(tok) == 30522);
    al_special_ids s = al_tokenizer_special_ids(tok);
    CHECK(s.pad == 0 && s.unk == 100 && s.cls == 101 && s.sep == 102 && s.mask == 103);
    expect_ids(tok, "Hello world", NULL, (int[]){101, 7592, 2088, 102, -2});
    expect_ids(tok, "unaffable", NULL, (int[]){101, 14477, 20961, 3468, 102, -2});
    expect_ids(tok, "The [MASK] sat.", NULL, (int[]){101, 1996, 103, 2938, 1012, 102, -2});
    al_tokenizer_free(tok);
}

int main(void) {
    test_wordpiece_rules();
    test_encoding_fields();
    test_malformed();
    test_bpe();
    test_bert_base_vocab();
    return check_summary("tokenizer");
}
