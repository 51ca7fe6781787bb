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

int main(void) {
    const char *env = getenv("AL_FAMILIES");
    snprintf(families, sizeof families, "%s", env && env[0] ? env : "../shared/families");
    const char *spm = fam("deberta-v3/spm.model");
    size_t size;
    uint8_t *probe = read_file(spm, &size);
    if (!probe) {
        printf("skipped: no %s (the DeBERTa-v3 tokenizer's real files; set AL_FAMILIES to their folder)\n", spm);
        return 0;
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
    return check_summary("spm");
}
