/* wordpiece_json.c: a vocab.txt as a tokenizer.json without special tokens (wordpiece_json.h). */
#include "wordpiece_json.h"

#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "cJSON.h"

static const char *const SPECIALS[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};

static cJSON *added_token(const char *content, int id) {
    cJSON *a = cJSON_CreateObject();
    if (!a) return NULL;
    cJSON_AddNumberToObject(a, "id", id);
    cJSON_AddStringToObject(a, "content", content);
    cJSON_AddBoolToObject(a, "single_word", 0);
    cJSON_AddBoolToObject(a, "lstrip", 0);
    cJSON_AddBoolToObject(a, "rstrip", 0);
    cJSON_AddBoolToObject(a, "normalized", 0);
    cJSON_AddBoolToObject(a, "special", 1);
    return a;
}

/* The vocabulary object {token: line index} and the added tokens, from the lines of vocab. */
static al_status read_vocab(const char *vocab, size_t len, const char *name, cJSON *map, cJSON *added, int *has_unk,
                            al_error *err) {
    int id = 0;
    for (size_t at = 0; at < len; id++) {
        size_t end = at;
        while (end < len && vocab[end] != '\n') end++;
        size_t n = end;
        if (n > at && vocab[n - 1] == '\r') n--;
        if (n == at) return al_err(err, AL_ERR_FORMAT, "%s: line %d is empty", name, id + 1);
        char *token = malloc(n - at + 1);
        if (!token) return al_err(err, AL_ERR_OOM, "%s: out of memory", name);
        memcpy(token, vocab + at, n - at);
        token[n - at] = 0;
        al_status st = AL_OK;
        if (cJSON_GetObjectItemCaseSensitive(map, token))
            st = al_err(err, AL_ERR_FORMAT, "%s: line %d: token '%.40s' is listed twice", name, id + 1, token);
        else if (!cJSON_AddNumberToObject(map, token, id))
            st = al_err(err, AL_ERR_OOM, "%s: out of memory", name);
        for (size_t s = 0; !st && s < sizeof SPECIALS / sizeof SPECIALS[0]; s++)
            if (strcmp(token, SPECIALS[s]) == 0) {
                if (!cJSON_AddItemToArray(added, added_token(token, id)))
                    st = al_err(err, AL_ERR_OOM, "%s: out of memory", name);
                if (s == 1) *has_unk = 1;
            }
        free(token);
        if (st) return st;
        at = end < len ? end + 1 : end;
    }
    if (id == 0) return al_err(err, AL_ERR_FORMAT, "%s: no tokens", name);
    return AL_OK;
}

al_status al_wordpiece_tokenizer_json(const char *vocab, size_t len, const char *name, char **out, al_error *err) {
    *out = NULL;
    cJSON *root = cJSON_CreateObject(), *map = cJSON_CreateObject(), *added = cJSON_CreateArray();
    if (!root || !map || !added) {
        cJSON_Delete(root), cJSON_Delete(map), cJSON_Delete(added);
        return al_err(err, AL_ERR_OOM, "%s: out of memory", name);
    }
    int has_unk = 0;
    al_status st = read_vocab(vocab, len, name, map, added, &has_unk, err);
    if (!st && !has_unk) st = al_err(err, AL_ERR_FORMAT, "%s: no [UNK] token", name);
    if (st) {
        cJSON_Delete(root), cJSON_Delete(map), cJSON_Delete(added);
        return st;
    }
    cJSON_AddStringToObject(root, "version", "1.0");
    cJSON_AddNullToObject(root, "truncation");
    cJSON_AddNullToObject(root, "padding");
    cJSON_AddItemToObject(root, "added_tokens", added);
    cJSON *norm = cJSON_AddObjectToObject(root, "normalizer");
    cJSON_AddStringToObject(norm, "type", "BertNormalizer");
    cJSON_AddBoolToObject(norm, "clean_text", 1);
    cJSON_AddBoolToObject(norm, "handle_chinese_chars", 1);
    cJSON_AddNullToObject(norm, "strip_accents");
    cJSON_AddBoolToObject(norm, "lowercase", 1);
    cJSON_AddStringToObject(cJSON_AddObjectToObject(root, "pre_tokenizer"), "type", "BertPreTokenizer");
    cJSON_AddNullToObject(root, "post_processor"); /* the point of this file: nothing added around a text */
    cJSON *dec = cJSON_AddObjectToObject(root, "decoder");
    cJSON_AddStringToObject(dec, "type", "WordPiece");
    cJSON_AddStringToObject(dec, "prefix", "##");
    cJSON_AddBoolToObject(dec, "cleanup", 1);
    cJSON *model = cJSON_AddObjectToObject(root, "model");
    cJSON_AddStringToObject(model, "type", "WordPiece");
    cJSON_AddStringToObject(model, "unk_token", "[UNK]");
    cJSON_AddStringToObject(model, "continuing_subword_prefix", "##");
    cJSON_AddNumberToObject(model, "max_input_chars_per_word", 100);
    cJSON_AddItemToObject(model, "vocab", map);
    *out = cJSON_Print(root);
    cJSON_Delete(root);
    return *out ? AL_OK : al_err(err, AL_ERR_OOM, "%s: out of memory", name);
}
