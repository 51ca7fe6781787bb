/* tok_load_unigram.c: a tokenizer.json whose model is Unigram (what Hugging Face's converters write from
 * an spm.model): model.vocab [[piece, score], ...], unk_id, byte_fallback; the normalizer Precompiled
 * (its precompiled_charsmap in base64), alone or in a Sequence with Strip and Replace(" {2,}" -> " "),
 * which together are SentencePiece's remove_extra_whitespaces; the pre_tokenizer Metaspace ("▁",
 * prepend_scheme always / first, or add_prefix_space), which is add_dummy_prefix and escape_whitespaces.
 * The same encoder then runs as for spm.model (tok_unigram.c). */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "cJSON.h"
#include "tok_internal.h"

#define F "tokenizer.json"

static const cJSON *get(const cJSON *obj, const char *key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

static const char *type_of(const cJSON *obj) {
    const cJSON *t = get(obj, "type");
    return cJSON_IsString(t) ? t->valuestring : "";
}

static int b64_value(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Standard base64 (padding optional); NULL on a character outside the alphabet. */
static uint8_t *b64_decode(const char *s, size_t *out_len) {
    size_t n = strlen(s);
    while (n && s[n - 1] == '=') n--;
    uint8_t *out = malloc(n * 3 / 4 + 1);
    if (!out) return NULL;
    size_t k = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64_value((unsigned char)s[i]);
        if (v < 0) return free(out), NULL;
        acc = (acc << 6) | (uint32_t)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[k++] = (uint8_t)(acc >> bits);
        }
    }
    *out_len = k;
    return out;
}

static al_status one_normalizer(al_tokenizer *tok, const cJSON *n, int index, int *strip, int *collapse,
                                al_error *err) {
    const char *type = type_of(n);
    if (strcmp(type, "Precompiled") == 0) {
        const cJSON *map = get(n, "precompiled_charsmap");
        if (cJSON_IsNull(map) || !map) return AL_OK;
        if (!cJSON_IsString(map)) return al_err(err, AL_ERR_FORMAT, F ": normalizer %d: precompiled_charsmap is not a string", index);
        size_t len = 0;
        uint8_t *bytes = b64_decode(map->valuestring, &len);
        if (!bytes) return al_err(err, AL_ERR_FORMAT, F ": normalizer %d: precompiled_charsmap is not base64", index);
        al_status st = len ? al_spm_set_charsmap(tok, bytes, len, F ": normalizer Precompiled", err) : AL_OK;
        free(bytes);
        return st;
    }
    if (strcmp(type, "Strip") == 0) {
        const cJSON *l = get(n, "strip_left"), *r = get(n, "strip_right");
        if (!cJSON_IsTrue(l) || !cJSON_IsTrue(r))
            return al_err(err, AL_ERR_UNSUPPORTED, F ": normalizer %d: Strip must strip both sides with model Unigram", index);
        *strip = 1;
        return AL_OK;
    }
    if (strcmp(type, "Replace") == 0) {
        const cJSON *re = get(get(n, "pattern"), "Regex"), *content = get(n, "content");
        if (cJSON_IsString(re) && strcmp(re->valuestring, " {2,}") == 0 && cJSON_IsString(content) &&
            strcmp(content->valuestring, " ") == 0) {
            *collapse = 1;
            return AL_OK;
        }
        return al_err(err, AL_ERR_UNSUPPORTED, F ": normalizer %d: only Replace(\" {2,}\", \" \") is supported with model Unigram",
                      index);
    }
    return al_err(err, AL_ERR_UNSUPPORTED, F ": normalizer.type '%.40s' is not supported with model Unigram", type);
}

static al_status load_normalizer(al_tokenizer *tok, const cJSON *norm, al_error *err) {
    int strip = 0, collapse = 0;
    al_status st = AL_OK;
    if (!norm || cJSON_IsNull(norm)) {
    } else if (strcmp(type_of(norm), "Sequence") == 0) {
        const cJSON *list = get(norm, "normalizers"), *n;
        if (!cJSON_IsArray(list)) return al_err(err, AL_ERR_FORMAT, F ": normalizer.normalizers is not an array");
        int i = 0;
        cJSON_ArrayForEach(n, list) if (st == AL_OK) st = one_normalizer(tok, n, i++, &strip, &collapse, err);
    } else {
        st = one_normalizer(tok, norm, 0, &strip, &collapse, err);
    }
    if (st) return st;
    if (strip != collapse)
        return al_err(err, AL_ERR_UNSUPPORTED, F ": normalizer: Strip without Replace(\" {2,}\", \" \") (or the reverse) is not "
                                               "supported with model Unigram");
    tok->remove_extra_whitespaces = strip;
    return AL_OK;
}

static al_status one_pre_tokenizer(al_tokenizer *tok, const cJSON *p, al_error *err) {
    const char *type = type_of(p);
    if (strcmp(type, "Metaspace") != 0)
        return al_err(err, AL_ERR_UNSUPPORTED, F ": pre_tokenizer.type '%.40s' is not supported with model Unigram", type);
    const cJSON *rep = get(p, "replacement"), *scheme = get(p, "prepend_scheme"), *aps = get(p, "add_prefix_space");
    if (cJSON_IsString(rep) && strcmp(rep->valuestring, "\xe2\x96\x81") != 0)
        return al_err(err, AL_ERR_UNSUPPORTED, F ": pre_tokenizer Metaspace: replacement must be \"\xe2\x96\x81\"");
    tok->escape_whitespaces = 1;
    if (cJSON_IsString(scheme)) tok->add_dummy_prefix = strcmp(scheme->valuestring, "never") != 0;
    else if (cJSON_IsBool(aps)) tok->add_dummy_prefix = cJSON_IsTrue(aps);
    else tok->add_dummy_prefix = 1;
    return AL_OK;
}

static al_status load_pre_tokenizer(al_tokenizer *tok, const cJSON *pre, al_error *err) {
    if (strcmp(type_of(pre), "Sequence") == 0) {
        const cJSON *list = get(pre, "pretokenizers"), *p;
        if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) != 1)
            return al_err(err, AL_ERR_UNSUPPORTED, F ": pre_tokenizer Sequence must hold one Metaspace with model Unigram");
        cJSON_ArrayForEach(p, list) return one_pre_tokenizer(tok, p, err);
    }
    if (!pre || cJSON_IsNull(pre)) return al_err(err, AL_ERR_UNSUPPORTED, F ": model Unigram needs the pre_tokenizer Metaspace");
    return one_pre_tokenizer(tok, pre, err);
}

al_status al_tok_json_unigram(al_tokenizer *tok, const cJSON *root, int limit, al_error *err) {
    const cJSON *model = get(root, "model"), *vocab = get(model, "vocab"), *item;
    tok->kind = AL_TOK_UNIGRAM;
    if (!cJSON_IsArray(vocab) || cJSON_GetArraySize(vocab) == 0)
        return al_err(err, AL_ERR_FORMAT, F ": model.vocab must be a non-empty array of [piece, score]");
    const int n = cJSON_GetArraySize(vocab);
    if (al_unigram_alloc(tok, n)) return al_err(err, AL_ERR_OOM, F ": out of memory");
    int i = 0;
    cJSON_ArrayForEach(item, vocab) {
        const cJSON *piece = cJSON_GetArrayItem(item, 0), *score = cJSON_GetArrayItem(item, 1);
        if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2 || !cJSON_IsString(piece) || !piece->valuestring[0] ||
            !cJSON_IsNumber(score) || !(score->valuedouble >= -1e30 && score->valuedouble <= 1e30))
            return al_err(err, AL_ERR_FORMAT, F ": model.vocab[%d] is not [piece, finite score]", i);
        if (al_tok_set_token(tok, piece->valuestring, strlen(piece->valuestring), i))
            return al_err(err, AL_ERR_OOM, F ": out of memory");
        tok->piece_score[i] = (float)score->valuedouble;
        tok->piece_type[i] = AL_SPM_NORMAL; /* Hugging Face's Unigram matches every piece of its vocabulary */
        i++;
    }
    const cJSON *unk = get(model, "unk_id");
    if (!cJSON_IsNumber(unk) || !(unk->valuedouble >= 0 && unk->valuedouble < n) || unk->valuedouble != (double)unk->valueint)
        return al_err(err, AL_ERR_FORMAT, F ": model.unk_id must be an index of model.vocab (one of %d)", n);
    tok->unk_id = unk->valueint;
    tok->piece_type[tok->unk_id] = AL_SPM_UNKNOWN;
    tok->byte_fallback = cJSON_IsTrue(get(model, "byte_fallback"));
    (void)limit;
    al_status st = load_normalizer(tok, get(root, "normalizer"), err);
    if (st == AL_OK) st = load_pre_tokenizer(tok, get(root, "pre_tokenizer"), err);
    if (st) return st;
    al_unigram_finish(tok);
    return AL_OK;
}
