/* test_spm.c: the SentencePiece Unigram tokenizer (spm.model, DeBERTa-v3) against the ids Hugging Face's
 * transformers gives (the test-vector files of ../shared/families/testvectors, every string, the pair and
 * the padded batches), word ids, a tokenizer.json Unigram built here from spm.model's pieces and scores,
 * and spm.model files damaged on purpose. The real files are read from ../shared/families/ (relative to
 * the repository's root); without them the test says so and skips. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "read_file.h"

/* the folder of the families' real files: AL_FAMILIES when set (a worktree elsewhere), else ../shared/families */
static char families[512];
static const char *fam(const char *rel) {
    static char buf[8][768];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", families, rel);
    return buf[k];
}

static al_tokenizer *load_files(const char *const *names, const char *const *paths, int n, al_error *err,
                                al_status *st) {
    al_fileset *fs = al_fileset_new();
    for (int i = 0; i < n; i++) {
        size_t size;
        uint8_t *data = read_file(paths[i], &size);
        if (data) al_fileset_add(fs, names[i], data, size, 1, err);
        free(data);
    }
    al_tokenizer *tok = NULL;
    *st = al_tokenizer_load(fs, &tok, err);
    al_fileset_free(fs);
    return tok;
}

static int same_ids(const al_encoding *enc, const cJSON *want) {
    if (!cJSON_IsArray(want) || cJSON_GetArraySize(want) != enc->length) return 0;
    for (int i = 0; i < enc->length; i++)
        if (cJSON_GetArrayItem(want, i)->valueint != enc->ids[i]) return 0;
    return 1;
}

static int same_array(const int32_t *got, int n, const cJSON *want) {
    if (!cJSON_IsArray(want) || cJSON_GetArraySize(want) != n) return 0;
    for (int i = 0; i < n; i++)
        if (cJSON_GetArrayItem(want, i)->valueint != got[i]) return 0;
    return 1;
}

/* Every "datasets" string of one test-vector file, then its pair and padded batches. */
static void check_vectors(const al_tokenizer *tok, const char *path) {
    size_t size;
    char *text = (char *)read_file(path, &size);
    cJSON *root = text ? cJSON_ParseWithLength(text, size) : NULL;
    free(text);
    CHECK_MSG(root != NULL, "%s: unreadable", path);
    if (!root) return;
    const cJSON *sets = cJSON_GetObjectItem(root, "datasets"), *item;
    int n = 0, equal = 0;
    cJSON_ArrayForEach(item, sets) {
        const char *input = cJSON_GetStringValue(cJSON_GetObjectItem(item, "input"));
        al_encoding enc;
        al_error err = {0};
        al_status st = al_tokenizer_encode(tok, input, NULL, NULL, &enc, &err);
        n++;
        int ok = st == AL_OK && same_ids(&enc, cJSON_GetObjectItem(item, "ids"));
        equal += ok;
        CHECK_MSG(ok, "%s: input %d '%.40s' differs (%s)", path, n - 1, input, st ? err.message : "ids");
        if (st == AL_OK) al_encoding_free(&enc);
    }
    printf("%s: %d of %d equal\n", path, equal, n);
    CHECK(n == 37);
    /* the pair ("a a", "b b b b") and the batches the file was made with, padded to the longest (10) */
    al_encoding enc;
    al_error err = {0};
    const cJSON *pair = cJSON_GetObjectItem(root, "pair_encode");
    if (al_tokenizer_encode(tok, "a a", "b b b b", NULL, &enc, &err) == AL_OK) {
        CHECK(same_ids(&enc, cJSON_GetObjectItem(pair, "input_ids")));
        CHECK(same_array(enc.type_ids, enc.length, cJSON_GetObjectItem(pair, "token_type_ids")));
        al_encoding_free(&enc);
    } else CHECK_MSG(0, "pair: %s", err.message);
    al_encode_options opt = al_encode_default_options();
    opt.pad_to = 10;
    const char *batch[2][2] = {{"a a", NULL}, {"b b b b b b b b", NULL}};
    const char *batch_pair[2][2] = {{"a a", "b"}, {"a a", "b b b b b"}};
    for (int kind = 0; kind < 2; kind++) {
        const cJSON *want = cJSON_GetObjectItem(root, kind ? "batch_pair_encode" : "batch_encode");
        for (int r = 0; r < 2; r++) {
            const char *const *in = kind ? batch_pair[r] : batch[r];
            if (al_tokenizer_encode(tok, in[0], in[1], &opt, &enc, &err)) {
                CHECK_MSG(0, "batch: %s", err.message);
                continue;
            }
            CHECK_MSG(same_ids(&enc, cJSON_GetArrayItem(cJSON_GetObjectItem(want, "input_ids"), r)), "batch %d row %d",
                      kind, r);
            CHECK(same_array(enc.type_ids, enc.length, cJSON_GetArrayItem(cJSON_GetObjectItem(want, "token_type_ids"), r)));
            CHECK(same_array(enc.attention_mask, enc.length,
                             cJSON_GetArrayItem(cJSON_GetObjectItem(want, "attention_mask"), r)));
            al_encoding_free(&enc);
        }
    }
    cJSON_Delete(root);
}

static void test_known_ids_and_words(const al_tokenizer *tok) {
    CHECK(al_tokenizer_get_kind(tok) == AL_TOK_UNIGRAM);
    CHECK(al_tokenizer_token_to_id(tok, "[MASK]") == 128000);
    al_special_ids s = al_tokenizer_special_ids(tok);
    CHECK(s.pad == 0 && s.cls == 1 && s.sep == 2 && s.unk == 3 && s.mask == 128000);
    al_encoding enc;
    al_error err = {0};
    al_encode_options opt = al_encode_default_options();
    opt.add_special_tokens = 0;
    const int want[] = {279, 3185, 3208, 277, 262, 8358, 260};
    if (al_tokenizer_encode(tok, "The cat sat on the mat.", NULL, &opt, &enc, &err) == AL_OK) {
        CHECK(enc.length == 7 && memcmp(enc.ids, want, sizeof want) == 0);
        /* "mat" and "." are one word: only a piece starting with "▁" starts a new one */
        const int words[] = {0, 1, 2, 3, 4, 5, 5};
        CHECK(memcmp(enc.word_ids, words, sizeof words) == 0);
        al_encoding_free(&enc);
    } else CHECK_MSG(0, "%s", err.message);
    /* an emoji no piece covers: "▁" then its four bytes' <0xNN> pieces, one word; [MASK] is split out */
    if (al_tokenizer_encode(tok, "a [MASK] \xf0\x9f\xa6\x99", NULL, &opt, &enc, &err) == AL_OK) {
        CHECK(enc.length == 7 && enc.ids[1] == 128000);
        const char *bytes[4] = {"<0xF0>", "<0x9F>", "<0xA6>", "<0x99>"};
        for (int i = 0; i < 4 && enc.length == 7; i++) {
            CHECK(enc.ids[3 + i] == al_tokenizer_token_to_id(tok, bytes[i]));
            CHECK(enc.word_ids[3 + i] == enc.word_ids[2]);
        }
        al_encoding_free(&enc);
    } else CHECK_MSG(0, "%s", err.message);
    /* pre-split words: one word id per given word */
    const char *w[3] = {"unbelievable", "cats", "!"};
    if (al_tokenizer_encode_words(tok, w, 3, NULL, &enc, &err) == AL_OK) {
        CHECK(enc.word_ids[0] == -1 && enc.word_ids[1] == 0 && enc.word_ids[enc.length - 2] == 2);
        al_encoding_free(&enc);
    } else CHECK_MSG(0, "%s", err.message);
}

#define FIXTURE "tests/fixtures/tokenizers/spm_small/"

static void expect(const al_tokenizer *tok, const char *text, const int *want, int n) {
    al_encoding enc;
    al_error err = {0};
    if (al_tokenizer_encode(tok, text, NULL, NULL, &enc, &err)) {
        CHECK_MSG(0, "'%s': %s", text, err.message);
        return;
    }
    int same = enc.length == n;
    for (int i = 0; same && i < n; i++) same = enc.ids[i] == want[i];
    CHECK_MSG(same, "'%s': %d ids, first real %d", text, enc.length, enc.length > 1 ? enc.ids[1] : -1);
    al_encoding_free(&enc);
}

/* The small model scripts/spm_fixture.py writes: 4 specials, 256 byte pieces (ids 4..259), 23 words from 260,
 * and a charsmap of six rules (full-width A, fi ligature, ellipsis, zero-width space, no-break space, e + acute). */
static void test_fixture(void) {
    const char *names[2] = {"spm.model", "added_tokens.json"};
    const char *paths[2] = {FIXTURE "spm.model", FIXTURE "added_tokens.json"};
    al_error err = {0};
    al_status st;
    al_tokenizer *tok = load_files(names, paths, 2, &err, &st);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    if (!tok) return;
    enum { THE = 260, CAT, C, AT, SP, SAT, ON, MAT, DOT, A, T, CC, S, M, H, E, BIG_A, CA, CAFE, CAFE_ACUTE, E_ACUTE, F,
           DOTS, MASK };
    /* "T" has no piece: "▁" then its byte <0x54> (byte_fallback); "mat." is one word */
    const int cat[] = {1, SP, 4 + 'T', H, E, CAT, SAT, ON, THE, MAT, DOT, 2};
    expect(tok, "The cat sat on the mat.", cat, 12);
    /* the charsmap: full-width A -> A, ellipsis -> "...", no-break spaces -> spaces (then one), zero-width gone */
    const int rules[] = {1, BIG_A, CAT, DOTS, CAT, 2};
    expect(tok, "\xef\xbc\xa1 cat\xe2\x80\xa6 \xc2\xa0\xc2\xa0 ca\xe2\x80\x8bt", rules, 6);
    /* e + combining acute composed by its rule; [MASK] (added_tokens.json) split out before SentencePiece */
    const int cafe[] = {1, CAFE_ACUTE, CAFE_ACUTE, SP, 4 + 'x', MASK, 2};
    expect(tok, "cafe\xcc\x81 caf\xc3\xa9 x [MASK]", cafe, 7);
    /* only spaces: nothing between [CLS] and [SEP] */
    const int empty[] = {1, 2};
    expect(tok, "   ", empty, 2);
    al_tokenizer_free(tok);
}

/* Damaged copies of the fixture: each is refused with an error naming spm.model (and, where it is one, the
 * field), never read outside its bytes (the sanitized build checks that). */
static void test_damaged(void) {
    size_t size;
    uint8_t *data = read_file(FIXTURE "spm.model", &size);
    CHECK(data != NULL);
    if (!data) return;
    int refused = 0, tried = 0;
    for (size_t cut = 1; cut < size; cut += 97) { /* truncated anywhere */
        al_fileset *fs = al_fileset_new();
        al_error err = {0};
        al_tokenizer *tok = NULL;
        al_fileset_add(fs, "spm.model", data, cut, 1, &err);
        al_status st = al_tokenizer_load(fs, &tok, &err);
        tried++;
        if (st != AL_OK) {
            refused++;
            CHECK_MSG(strstr(err.message, "spm.model") != NULL, "cut %zu: '%s'", cut, err.message);
        }
        al_tokenizer_free(tok);
        al_fileset_free(fs);
    }
    CHECK(refused > tried / 2);
    struct { size_t at; uint8_t byte; const char *names; } edits[] = {
        {0, 0x0f, "wire type"},          /* first key: field 1 with wire type 7 */
        {5, 0xff, "pieces[0]"},          /* the first piece's piece string: invalid UTF-8 */
    };
    for (size_t k = 0; k < sizeof edits / sizeof edits[0]; k++) {
        uint8_t *copy = malloc(size);
        memcpy(copy, data, size);
        copy[edits[k].at] = edits[k].byte;
        al_fileset *fs = al_fileset_new();
        al_error err = {0};
        al_tokenizer *tok = NULL;
        al_fileset_add(fs, "spm.model", copy, size, 1, &err);
        al_status st = al_tokenizer_load(fs, &tok, &err);
        CHECK_MSG(st == AL_ERR_FORMAT && strstr(err.message, edits[k].names), "edit %zu: '%s'", k, err.message);
        al_tokenizer_free(tok);
        al_fileset_free(fs);
        free(copy);
    }
    free(data);
}

int main(void) {
    test_fixture();
    test_damaged();
    const char *env = getenv("AL_FAMILIES");
    snprintf(families, sizeof families, "%s", env && env[0] ? env : "../shared/families");
    const char *spm = fam("deberta-v3/spm.model");
    size_t size;
    uint8_t *probe = read_file(spm, &size);
    if (!probe) {
        printf("skipped the real files: no %s (DeBERTa-v3's; set AL_FAMILIES to their folder)\n", spm);
        return check_summary("spm");
    }
    free(probe);
    al_error err = {0};
    al_status st;
    const char *names[3] = {"spm.model", "added_tokens.json", "tokenizer_config.json"};
    const char *base[3] = {spm, fam("deberta-v3/added_tokens.json"), fam("deberta-v3/tokenizer_config.json")};
    al_tokenizer *tok = load_files(names, base, 3, &err, &st);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    if (tok) {
        test_known_ids_and_words(tok);
        check_vectors(tok, fam("testvectors/fib_models--microsoft--deberta-v3-base.json"));
        al_tokenizer_free(tok);
    }
    /* deberta-v3-large ships the same spm.model with its own two-key tokenizer_config.json */
    const char *large[3] = {spm, fam("deberta-v3/added_tokens.json"), fam("deberta-v3-large/tokenizer_config.json")};
    tok = load_files(names, large, 3, &err, &st);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    if (tok) {
        check_vectors(tok, fam("testvectors/fib_models--microsoft--deberta-v3-large.json"));
        al_tokenizer_free(tok);
    }
    /* deberta-v3-large as the Hub ships it: spm.model and that tokenizer_config.json, no added_tokens.json; the
     * published tokenizer still adds [MASK] after the pieces, as 128000 */
    const char *shipped[2] = {spm, fam("deberta-v3-large/tokenizer_config.json")};
    const char *shipped_names[2] = {"spm.model", "tokenizer_config.json"};
    tok = load_files(shipped_names, shipped, 2, &err, &st);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    if (tok) {
        CHECK(al_tokenizer_token_to_id(tok, "[MASK]") == 128000);
        check_vectors(tok, fam("testvectors/fib_models--microsoft--deberta-v3-large.json"));
        al_encoding e = {0};
        CHECK(al_tokenizer_encode(tok, "The [MASK] sat.", NULL, NULL, &e, &err) == AL_OK);
        int masks = 0;
        for (int i = 0; i < e.n_tokens; i++) masks += e.ids[i] == 128000;
        CHECK_MSG(masks == 1, "[MASK] is one token of 'The [MASK] sat.' (%d tokens)", e.n_tokens);
        al_encoding_free(&e);
        al_tokenizer_free(tok);
    }
    return check_summary("spm");
}
