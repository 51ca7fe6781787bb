/* tok_load.c: al_tokenizer_load (picks tokenizer.json, spm.model or tokenizer.model, vocab.txt, or vocab.json +
 * merges.txt) and the loaders of the plain vocabulary files plus tokenizer_config.json options. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "cJSON.h"
#include "tok_internal.h"

static void set_defaults(al_tokenizer *tok) {
    tok->specials = (al_special_ids){-1, -1, -1, -1, -1};
    tok->bos = tok->eos = -1;
    tok->unk_id = -1;
    tok->clean_text = tok->handle_chinese_chars = tok->lowercase = tok->strip_accents = 1;
    strcpy(tok->continuing_prefix, "##");
    tok->max_input_chars_per_word = 100;
}

/* Reads a boolean option; absent or null leaves *out unchanged. */
static void read_bool(const cJSON *obj, const char *key, int *out) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsBool(v)) *out = cJSON_IsTrue(v) ? 1 : 0;
}

/* A special token in tokenizer_config.json is a string or {"content": ...}. */
static const char *token_string(const cJSON *obj, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (cJSON_IsObject(v)) v = cJSON_GetObjectItemCaseSensitive(v, "content");
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Options of tokenizer_config.json (and special token names of special_tokens_map.json). */
static al_status read_config(al_tokenizer *tok, const al_fileset *files, const char *name,
                             int options, al_error *err) {
    size_t size;
    const uint8_t *data = al_fileset_get(files, name, &size);
    if (!data) return AL_OK;
    cJSON *root = cJSON_ParseWithLength((const char *)data, size);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return al_err(err, AL_ERR_FORMAT, "%s: not a valid JSON object", name);
    }
    if (options) {
        read_bool(root, "do_lower_case", &tok->lowercase);
        const cJSON *sa = cJSON_GetObjectItemCaseSensitive(root, "strip_accents");
        /* null (the default) follows lower-casing, as BertTokenizer does */
        tok->strip_accents = cJSON_IsBool(sa) ? cJSON_IsTrue(sa) : tok->lowercase;
        read_bool(root, "tokenize_chinese_chars", &tok->handle_chinese_chars);
        read_bool(root, "add_prefix_space", &tok->add_prefix_space);
    }
    const char *keys[5] = {"cls_token", "sep_token", "pad_token", "mask_token", "unk_token"};
    int *slots[5] = {&tok->specials.cls, &tok->specials.sep, &tok->specials.pad, &tok->specials.mask,
                     &tok->specials.unk};
    for (int i = 0; i < 5; i++) {
        const char *s = token_string(root, keys[i]);
        int id = s ? al_tokenizer_token_to_id(tok, s) : -1;
        if (id >= 0) *slots[i] = id;
    }
    const char *bos = token_string(root, "bos_token"), *eos = token_string(root, "eos_token");
    if (bos && al_tokenizer_token_to_id(tok, bos) >= 0) tok->bos = al_tokenizer_token_to_id(tok, bos);
    if (eos && al_tokenizer_token_to_id(tok, eos) >= 0) tok->eos = al_tokenizer_token_to_id(tok, eos);
    cJSON_Delete(root);
    return AL_OK;
}

al_status al_tok_load_vocab_txt(al_tokenizer *tok, const al_fileset *files, al_error *err) {
    size_t size;
    const char *data = (const char *)al_fileset_get(files, "vocab.txt", &size);
    tok->kind = AL_TOK_WORDPIECE;
    snprintf(tok->source, sizeof tok->source, "vocab.txt");
    size_t pos = 0;
    int line = 0;
    while (pos < size) {
        size_t end = pos;
        while (end < size && data[end] != '\n') end++;
        size_t len = end - pos;
        if (len && data[pos + len - 1] == '\r') len--;
        line++;
        if (len == 0 && end >= size) break; /* nothing after the last newline */
        if (len == 0) return al_err(err, AL_ERR_FORMAT, "vocab.txt: line %d: empty token", line);
        al_ntext probe = {0};
        int32_t bad = 0;
        int rc = al_utf8_decode(data + pos, len, &probe, &bad);
        al_ntext_free(&probe);
        if (rc == -1) return al_err(err, AL_ERR_FORMAT, "vocab.txt: line %d: invalid UTF-8 at byte %d", line, (int)bad);
        if (rc || al_tok_set_token(tok, data + pos, len, line - 1))
            return al_err(err, AL_ERR_OOM, "vocab.txt: out of memory");
        pos = end + 1;
    }
    if (tok->vocab_size == 0) return al_err(err, AL_ERR_FORMAT, "vocab.txt: empty vocabulary");
    al_status st = read_config(tok, files, "tokenizer_config.json", 1, err);
    if (st == AL_OK) st = read_config(tok, files, "special_tokens_map.json", 0, err);
    if (st) return st;
    al_tok_find_specials(tok);
    const char *names[4] = {"[CLS]", "[SEP]", "[PAD]", "[UNK]"};
    int ids[4] = {tok->specials.cls, tok->specials.sep, tok->specials.pad, tok->specials.unk};
    for (int i = 0; i < 4; i++)
        if (ids[i] < 0) return al_err(err, AL_ERR_FORMAT, "vocab.txt: missing special token %s", names[i]);
    tok->unk_id = tok->specials.unk;
    /* The special tokens are split out of the text, never normalised (as the fast tokenizer does). */
    int all[5] = {tok->specials.pad, tok->specials.unk, tok->specials.cls, tok->specials.sep, tok->specials.mask};
    for (int i = 0; i < 5; i++)
        if (all[i] >= 0 && al_tok_add_added(tok, tok->vocab[all[i]], all[i], 0, 0, 1))
            return al_err(err, AL_ERR_OOM, "vocab.txt: out of memory");
    al_tok_default_templates(tok);
    return AL_OK;
}

al_status al_tok_load_bpe_files(al_tokenizer *tok, const al_fileset *files, al_error *err) {
    size_t vsize, msize;
    const char *vdata = (const char *)al_fileset_get(files, "vocab.json", &vsize);
    const char *mdata = (const char *)al_fileset_get(files, "merges.txt", &msize);
    tok->kind = AL_TOK_BPE;
    tok->lowercase = tok->strip_accents = tok->clean_text = tok->handle_chinese_chars = 0;
    snprintf(tok->source, sizeof tok->source, "vocab.json");
    if (!mdata) return al_err(err, AL_ERR_IO, "merges.txt: missing (vocab.json needs it)");
    cJSON *root = cJSON_ParseWithLength(vdata, vsize);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return al_err(err, AL_ERR_FORMAT, "vocab.json: not a valid JSON object");
    }
    const cJSON *item;
    const int limit = cJSON_GetArraySize(root); /* ids below the number of tokens (tok_load_json.c: id_limit) */
    cJSON_ArrayForEach(item, root) {
        if (!cJSON_IsNumber(item) || !(item->valuedouble >= 0 && item->valuedouble < limit) ||
            item->valuedouble != (double)item->valueint) {
            al_status st = al_err(err, AL_ERR_FORMAT,
                                  "vocab.json: token '%.60s' needs an integer id below %d (the number of tokens)",
                                  item->string, limit);
            cJSON_Delete(root);
            return st;
        }
        if (al_tok_set_token(tok, item->string, strlen(item->string), item->valueint)) {
            cJSON_Delete(root);
            return al_err(err, AL_ERR_OOM, "vocab.json: out of memory");
        }
    }
    cJSON_Delete(root);
    if (tok->vocab_size == 0) return al_err(err, AL_ERR_FORMAT, "vocab.json: empty vocabulary");
    size_t pos = 0;
    int line = 0, rank = 0;
    while (pos < msize) {
        size_t end = pos;
        while (end < msize && mdata[end] != '\n') end++;
        size_t len = end - pos;
        if (len && mdata[pos + len - 1] == '\r') len--;
        line++;
        const char *s = mdata + pos;
        pos = end + 1;
        if (len == 0 || (line == 1 && len >= 8 && memcmp(s, "#version", 8) == 0)) continue;
        const char *sp = memchr(s, ' ', len);
        if (!sp || sp == s || sp == s + len - 1 || memchr(sp + 1, ' ', (size_t)(s + len - sp - 1)))
            return al_err(err, AL_ERR_FORMAT, "merges.txt: line %d: expected two tokens separated by one space", line);
        char key[512];
        if (len >= sizeof key) return al_err(err, AL_ERR_FORMAT, "merges.txt: line %d: merge too long", line);
        memcpy(key, s, len);
        key[sp - s] = '\xff';
        if (al_strmap_put(&tok->merge_ranks, key, len, rank++))
            return al_err(err, AL_ERR_OOM, "merges.txt: out of memory");
    }
    /* tokenizer_config.json's added tokens first, so its special token names find them (Qwen2's <|endoftext|>
     * lies past vocab.json) */
    al_status st = al_tok_read_added_tokens_decoder(tok, files, err);
    if (st == AL_OK) st = read_config(tok, files, "tokenizer_config.json", 1, err);
    if (st == AL_OK) st = read_config(tok, files, "special_tokens_map.json", 0, err);
    if (st) return st;
    tok->lowercase = tok->strip_accents = 0; /* do_lower_case does not apply to byte-level BPE */
    /* the decoders (docs/tokenizers.md, "Decoder tokenizers"): Qwen2's pattern behind NFC, and GPT-2's
     * <|endoftext|> (GPT2Tokenizer's default BOS and EOS) split out; no special token is found by its name (Qwen2's
     * vocabulary holds <s> and </s> as plain tokens) and none is added around the text */
    const al_decoder_family family = al_tok_decoder_family(files);
    if (family == AL_DEC_QWEN2) tok->pretok = AL_PRETOK_QWEN2, tok->nfc = 1;
    const int endoftext = al_tokenizer_token_to_id(tok, "<|endoftext|>");
    if (family != AL_DEC_NONE || endoftext >= 0) {
        if (endoftext >= 0 && al_tok_add_added(tok, "<|endoftext|>", endoftext, 0, 0, 1))
            return al_err(err, AL_ERR_OOM, "vocab.json: out of memory");
        if (tok->bos < 0) tok->bos = endoftext;
        if (tok->eos < 0) tok->eos = endoftext;
        tok->unk_id = tok->specials.unk;
        return AL_OK;
    }
    al_tok_find_specials(tok);
    tok->unk_id = tok->specials.unk;
    int all[5] = {tok->specials.cls, tok->specials.pad, tok->specials.sep, tok->specials.unk, tok->specials.mask};
    for (int i = 0; i < 5; i++)
        if (all[i] >= 0 && al_tok_add_added(tok, tok->vocab[all[i]], all[i], all[i] == tok->specials.mask, 0, 1))
            return al_err(err, AL_ERR_OOM, "vocab.json: out of memory");
    al_tok_default_templates(tok); /* RoBERTa: <s> A </s> (</s> B </s>) */
    return AL_OK;
}

/* added_tokens.json: {"[MASK]": 128000}, tokens after the model's pieces (DeBERTa-v3's [MASK]). An id
 * below the pieces renames nothing: it must name the same piece. */
static al_status read_added_tokens_json(al_tokenizer *tok, const al_fileset *files, al_error *err) {
    size_t size;
    const char *data = (const char *)al_fileset_get(files, "added_tokens.json", &size);
    if (!data) return AL_OK;
    cJSON *root = cJSON_ParseWithLength(data, size);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return al_err(err, AL_ERR_FORMAT, "added_tokens.json: not a valid JSON object");
    }
    const int limit = tok->vocab_size + cJSON_GetArraySize(root); /* dense ids, as tok_load_json.c's id_limit */
    al_status st = AL_OK;
    const cJSON *item;
    cJSON_ArrayForEach(item, root) {
        if (!cJSON_IsNumber(item) || !(item->valuedouble >= 0 && item->valuedouble < limit) ||
            item->valuedouble != (double)item->valueint || !item->string[0]) {
            st = al_err(err, AL_ERR_FORMAT, "added_tokens.json: token '%.60s' needs an integer id below %d", item->string,
                        limit);
            break;
        }
        const char *old = al_tokenizer_id_to_token(tok, item->valueint);
        if (item->valueint < tok->n_pieces && (!old || strcmp(old, item->string) != 0)) {
            st = al_err(err, AL_ERR_FORMAT, "added_tokens.json: token '%.60s': id %d is the piece '%.60s' of spm.model",
                        item->string, item->valueint, old ? old : "");
            break;
        }
        if (al_tok_add_added(tok, item->string, item->valueint, 0, 0, 1)) {
            st = al_err(err, AL_ERR_OOM, "added_tokens.json: out of memory");
            break;
        }
    }
    cJSON_Delete(root);
    return st;
}

/* The name of the SentencePiece model in the set: spm.model (DeBERTa-v3) or tokenizer.model (Llama), or NULL. */
static const char *spm_name(const al_fileset *files) {
    return al_fileset_get(files, "spm.model", NULL)         ? "spm.model"
           : al_fileset_get(files, "tokenizer.model", NULL) ? "tokenizer.model"
                                                            : NULL;
}

/* SentencePiece BPE (Llama's tokenizer.model) as Hugging Face's LlamaTokenizer reads it: the control, unknown
 * and user-defined pieces and tokenizer_config.json's added tokens are split out of the text, each section
 * between them goes through SentencePiece, then <s> A (add_bos_token, true by default; add_eos_token false). */
static al_status finish_spm_bpe(al_tokenizer *tok, const al_fileset *files, al_error *err) {
    for (int i = 0; i < tok->n_pieces; i++) {
        int t = tok->piece_type[i];
        if ((t == AL_SPM_CONTROL || t == AL_SPM_UNKNOWN || t == AL_SPM_USER_DEFINED) &&
            al_tok_add_added(tok, tok->vocab[i], i, 0, 0, t != AL_SPM_USER_DEFINED))
            return al_err(err, AL_ERR_OOM, "%s: out of memory", tok->source);
    }
    al_status st = al_tok_read_added_tokens_decoder(tok, files, err);
    if (st) return st;
    al_tok_find_specials(tok);
    tok->specials.unk = tok->unk_id;
    al_tok_bos_eos_template(tok, files, 1, 0);
    return AL_OK;
}

/* spm.model (SentencePiece Unigram) as Hugging Face's DebertaV2Tokenizer reads it: the special tokens
 * are split out of the text first, each section between them goes through SentencePiece, then
 * [CLS] A [SEP] (B [SEP]) with token types 0 for A and 1 for B. A BPE model (tokenizer.model) goes on in
 * finish_spm_bpe. */
static al_status load_spm(al_tokenizer *tok, const al_fileset *files, al_error *err) {
    size_t size;
    const char *name = spm_name(files);
    const uint8_t *data = al_fileset_get(files, name, &size);
    al_status st = al_tok_load_spm_model(tok, name, data, size, err);
    if (st == AL_OK) st = read_added_tokens_json(tok, files, err);
    int lower = 0, split_by_punct = 0;
    size_t csize;
    const char *cdata = (const char *)al_fileset_get(files, "tokenizer_config.json", &csize);
    cJSON *conf = cdata ? cJSON_ParseWithLength(cdata, csize) : NULL;
    read_bool(conf, "do_lower_case", &lower);
    read_bool(conf, "split_by_punct", &split_by_punct);
    cJSON_Delete(conf);
    if (st == AL_OK && (lower || split_by_punct))
        st = al_err(err, AL_ERR_UNSUPPORTED, "tokenizer_config.json: %s true is not supported with %s",
                    lower ? "do_lower_case" : "split_by_punct", name);
    if (st == AL_OK) st = read_config(tok, files, "tokenizer_config.json", 0, err);
    if (st == AL_OK) st = read_config(tok, files, "special_tokens_map.json", 0, err);
    if (st) return st;
    if (tok->spm_bpe) return finish_spm_bpe(tok, files, err);
    al_tok_find_specials(tok);
    tok->specials.unk = tok->unk_id;
    /* DebertaV2Tokenizer adds its mask token "[MASK]" after the pieces when no file names it: deberta-v3-large
     * on the Hub ships no added_tokens.json, and its [MASK] is 128000, the pieces' count (docs/tokenizers.md) */
    if (tok->specials.mask < 0) {
        const int id = tok->vocab_size;
        if (al_tok_add_added(tok, "[MASK]", id, 0, 0, 1)) return al_err(err, AL_ERR_OOM, "%s: out of memory", name);
        tok->specials.mask = id;
    }
    int all[5] = {tok->specials.pad, tok->specials.cls, tok->specials.sep, tok->specials.unk, tok->specials.mask};
    for (int i = 0; i < 5; i++)
        if (all[i] >= 0 && al_tok_add_added(tok, tok->vocab[all[i]], all[i], 0, 0, 1))
            return al_err(err, AL_ERR_OOM, "%s: out of memory", name);
    al_tok_default_templates(tok);
    return AL_OK;
}

int al_tokenizer_files(const al_fileset *files, const char **names, int max) {
    /* the main file decides the loader (as al_tokenizer_load below chooses); the loaders of spm.model and
     * of the plain vocabularies also read the optional files after it */
    static const char *const json[] = {"tokenizer.json", NULL};
    static const char *const spm[] = {"spm.model", "added_tokens.json", "tokenizer_config.json",
                                      "special_tokens_map.json", NULL};
    static const char *const spm_bpe[] = {"tokenizer.model", "added_tokens.json", "tokenizer_config.json",
                                          "special_tokens_map.json", NULL};
    static const char *const wordpiece[] = {"vocab.txt", "tokenizer_config.json", "special_tokens_map.json", NULL};
    static const char *const bpe[] = {"vocab.json", "merges.txt", "tokenizer_config.json",
                                      "special_tokens_map.json", NULL};
    const char *const *rule = al_fileset_get(files, "tokenizer.json", NULL)  ? json
                              : al_fileset_get(files, "spm.model", NULL)     ? spm
                              : al_fileset_get(files, "tokenizer.model", NULL) ? spm_bpe
                              : al_fileset_get(files, "vocab.txt", NULL)     ? wordpiece
                              : al_fileset_get(files, "vocab.json", NULL) &&
                                        al_fileset_get(files, "merges.txt", NULL)
                                  ? bpe
                                  : NULL;
    int n = 0;
    for (int i = 0; rule && rule[i]; i++) {
        if (!al_fileset_get(files, rule[i], NULL)) continue;
        if (n < max) names[n] = rule[i];
        n++;
    }
    return n;
}

al_status al_tokenizer_load(const al_fileset *files, al_tokenizer **out, al_error *err) {
    *out = NULL;
    al_tokenizer *tok = calloc(1, sizeof *tok);
    if (!tok) return al_err(err, AL_ERR_OOM, "tokenizer: out of memory");
    set_defaults(tok);
    al_status st;
    if (al_fileset_get(files, "tokenizer.json", NULL)) {
        st = al_tok_load_tokenizer_json(tok, files, err);
    } else if (spm_name(files)) {
        st = load_spm(tok, files, err);
    } else if (al_fileset_get(files, "vocab.txt", NULL)) {
        st = al_tok_load_vocab_txt(tok, files, err);
    } else if (al_fileset_get(files, "vocab.json", NULL)) {
        st = al_tok_load_bpe_files(tok, files, err);
    } else {
        st = al_err(err, AL_ERR_IO,
                    "tokenizer: no tokenizer.json, spm.model, tokenizer.model, vocab.txt or vocab.json + merges.txt");
    }
    if (st) {
        al_tokenizer_free(tok);
        return st;
    }
    *out = tok;
    return AL_OK;
}
