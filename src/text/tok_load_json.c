/* tok_load_json.c: tokenizer.json (the Hugging Face tokenizers format): model WordPiece or BPE (with
 * byte_fallback; Unigram: tok_load_unigram.c), normalizer BertNormalizer, Lowercase, NFC, SentencePiece's
 * Sequence [Prepend("▁"), Replace(" ", "▁")] (or none), pre_tokenizer BertPreTokenizer / ByteLevel /
 * Sequence [Split(known pattern), ByteLevel] (none behind the SentencePiece normalizer), post_processor
 * TemplateProcessing / BertProcessing / RobertaProcessing / ByteLevel, added_tokens. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "cJSON.h"
#include "tok_internal.h"

#define F "tokenizer.json"

static const char SPACE_SYMBOL[] = "\xe2\x96\x81"; /* U+2581 ▁ */

static const cJSON *get(const cJSON *obj, const char *key) {
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static int get_bool(const cJSON *obj, const char *key, int dflt) {
    const cJSON *v = get(obj, key);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

static const char *type_of(const cJSON *obj) {
    const cJSON *t = get(obj, "type");
    return cJSON_IsString(t) ? t->valuestring : "";
}

/* Ids index an array of the vocabulary's size, so a file may leave holes but not name an id beyond the tokens it
 * holds (model.vocab plus added_tokens): memory then follows the file's size, and a 70-byte file cannot ask for
 * 10^8 slots. Every vocabulary Hugging Face writes is dense. */
static int id_limit(const cJSON *root) {
    const cJSON *vocab = get(get(root, "model"), "vocab"), *added = get(root, "added_tokens");
    return cJSON_GetArraySize(vocab) + (cJSON_IsArray(added) ? cJSON_GetArraySize(added) : 0);
}

static al_status load_vocab(al_tokenizer *tok, const cJSON *model, int limit, al_error *err) {
    const cJSON *vocab = get(model, "vocab");
    if (!cJSON_IsObject(vocab)) return al_err(err, AL_ERR_FORMAT, F ": model.vocab is not an object");
    const cJSON *item;
    cJSON_ArrayForEach(item, vocab) {
        if (!cJSON_IsNumber(item) || !(item->valuedouble >= 0 && item->valuedouble < limit) ||
            item->valuedouble != (double)item->valueint)
            return al_err(err, AL_ERR_FORMAT,
                          F ": model.vocab: token '%.60s' needs an integer id below %d (the number of tokens)",
                          item->string, limit);
        if (al_tok_set_token(tok, item->string, strlen(item->string), item->valueint))
            return al_err(err, AL_ERR_OOM, F ": out of memory");
    }
    if (tok->vocab_size == 0) return al_err(err, AL_ERR_FORMAT, F ": model.vocab is empty");
    return AL_OK;
}

/* A merge's key "left\xffright"; keys have no length limit (ModernBERT merges runs of 128 spaces). */
static int put_merge(al_tokenizer *tok, const char *a, size_t la, const char *b, size_t lb, int rank) {
    char *key = malloc(la + lb + 1);
    if (!key) return -1;
    memcpy(key, a, la);
    key[la] = '\xff';
    memcpy(key + la + 1, b, lb);
    int rc = al_strmap_put(&tok->merge_ranks, key, la + lb + 1, rank);
    free(key);
    return rc;
}

static al_status load_merges(al_tokenizer *tok, const cJSON *model, al_error *err) {
    const cJSON *merges = get(model, "merges");
    if (!cJSON_IsArray(merges)) return al_err(err, AL_ERR_FORMAT, F ": model.merges is not an array");
    int rank = 0;
    const cJSON *m;
    cJSON_ArrayForEach(m, merges) {
        const char *a, *b;
        size_t la, lb;
        if (cJSON_IsString(m)) { /* "left right" (tokenizers < 0.20) */
            const char *s = m->valuestring, *sp = strchr(s, ' ');
            if (!sp || sp == s || !sp[1])
                return al_err(err, AL_ERR_FORMAT, F ": model.merges[%d] is not 'left right'", rank);
            a = s;
            la = (size_t)(sp - s);
            b = sp + 1;
            lb = strlen(b);
        } else if (cJSON_IsArray(m) && cJSON_GetArraySize(m) == 2 && cJSON_IsString(cJSON_GetArrayItem(m, 0)) &&
                   cJSON_IsString(cJSON_GetArrayItem(m, 1))) { /* ["left", "right"] */
            a = cJSON_GetArrayItem(m, 0)->valuestring;
            b = cJSON_GetArrayItem(m, 1)->valuestring;
            la = strlen(a);
            lb = strlen(b);
        } else {
            return al_err(err, AL_ERR_FORMAT, F ": model.merges[%d] is neither a string nor a pair", rank);
        }
        if (put_merge(tok, a, la, b, lb, rank++)) return al_err(err, AL_ERR_OOM, F ": out of memory");
    }
    return AL_OK;
}

/* Sequence [Prepend("▁"), Replace(" ", "▁")]: what Hugging Face's converter writes for a SentencePiece BPE. */
static int is_spm_normalizer(const cJSON *norm) {
    const cJSON *items = get(norm, "normalizers");
    if (!cJSON_IsArray(items) || cJSON_GetArraySize(items) != 2) return 0;
    const cJSON *prepend = cJSON_GetArrayItem(items, 0), *replace = cJSON_GetArrayItem(items, 1);
    const char *p = cJSON_GetStringValue(get(prepend, "prepend"));
    const char *from = cJSON_GetStringValue(get(get(replace, "pattern"), "String"));
    const char *to = cJSON_GetStringValue(get(replace, "content"));
    return strcmp(type_of(prepend), "Prepend") == 0 && p && strcmp(p, SPACE_SYMBOL) == 0 &&
           strcmp(type_of(replace), "Replace") == 0 && from && strcmp(from, " ") == 0 && to &&
           strcmp(to, SPACE_SYMBOL) == 0;
}

static al_status load_normalizer(al_tokenizer *tok, const cJSON *norm, al_error *err) {
    tok->clean_text = tok->handle_chinese_chars = tok->lowercase = tok->strip_accents = 0;
    if (!norm || cJSON_IsNull(norm)) return AL_OK;
    const char *type = type_of(norm);
    if (strcmp(type, "BertNormalizer") == 0) {
        tok->clean_text = get_bool(norm, "clean_text", 1);
        tok->handle_chinese_chars = get_bool(norm, "handle_chinese_chars", 1);
        tok->lowercase = get_bool(norm, "lowercase", 1);
        const cJSON *sa = get(norm, "strip_accents");
        /* null follows lowercase (the JS library strips unless strip_accents is false) */
        tok->strip_accents = cJSON_IsBool(sa) ? cJSON_IsTrue(sa) : tok->lowercase;
        return AL_OK;
    }
    if (strcmp(type, "Lowercase") == 0) {
        tok->lowercase = 1;
        return AL_OK;
    }
    if (strcmp(type, "NFC") == 0 && tok->kind == AL_TOK_BPE) {
        tok->nfc = 1;
        return AL_OK;
    }
    if (strcmp(type, "Sequence") == 0 && tok->kind == AL_TOK_BPE && is_spm_normalizer(norm)) {
        /* Llama: SentencePiece's dummy prefix and escaped spaces, without its whitespace clean-up */
        tok->spm_bpe = tok->add_dummy_prefix = tok->escape_whitespaces = 1;
        tok->remove_extra_whitespaces = 0;
        return AL_OK;
    }
    return al_err(err, AL_ERR_UNSUPPORTED, F ": normalizer.type '%.40s' is not supported", type);
}

/* Split with one of the known patterns (tok_pretok.c), as its own matches (Isolated, not inverted). */
static al_status load_split(al_tokenizer *tok, const cJSON *split, const char *field, al_error *err) {
    const char *regex = cJSON_GetStringValue(get(get(split, "pattern"), "Regex"));
    const char *behavior = cJSON_GetStringValue(get(split, "behavior"));
    if (!regex || (tok->pretok = al_pretok_from_regex(regex)) < 0)
        return al_err(err, AL_ERR_UNSUPPORTED, F ": %s.pattern.Regex '%.80s' is not a known pattern (GPT-2's or Qwen2's)",
                      field, regex ? regex : "");
    if (!behavior || strcmp(behavior, "Isolated") != 0 || get_bool(split, "invert", 0))
        return al_err(err, AL_ERR_UNSUPPORTED, F ": %s: only behavior Isolated, not inverted, is supported", field);
    return AL_OK;
}

static al_status load_pre_tokenizer(al_tokenizer *tok, const cJSON *pre, al_error *err) {
    const char *type = cJSON_IsObject(pre) ? type_of(pre) : "";
    if (tok->kind == AL_TOK_WORDPIECE) {
        if (strcmp(type, "BertPreTokenizer") == 0 || strcmp(type, "") == 0) return AL_OK;
    } else if (strcmp(type, "ByteLevel") == 0 && !tok->spm_bpe) {
        tok->add_prefix_space = get_bool(pre, "add_prefix_space", 0);
        if (!get_bool(pre, "use_regex", 1))
            return al_err(err, AL_ERR_UNSUPPORTED, F ": pre_tokenizer ByteLevel with use_regex false is not supported");
        return AL_OK; /* GPT-2's pattern */
    } else if (strcmp(type, "Sequence") == 0 && !tok->spm_bpe) {
        /* Qwen2: Split(pattern) then ByteLevel(use_regex false) */
        const cJSON *items = get(pre, "pretokenizers");
        const cJSON *split = cJSON_GetArrayItem(items, 0), *level = cJSON_GetArrayItem(items, 1);
        if (cJSON_GetArraySize(items) != 2 || strcmp(type_of(split), "Split") != 0 ||
            strcmp(type_of(level), "ByteLevel") != 0 || get_bool(level, "use_regex", 1))
            return al_err(err, AL_ERR_UNSUPPORTED,
                          F ": pre_tokenizer Sequence is supported as [Split, ByteLevel with use_regex false] only");
        tok->add_prefix_space = get_bool(level, "add_prefix_space", 0);
        return load_split(tok, split, "pre_tokenizer.pretokenizers[0]", err);
    } else if (strcmp(type, "") == 0 && tok->spm_bpe) {
        return AL_OK; /* SentencePiece BPE: no pre-tokenizer */
    }
    return al_err(err, AL_ERR_UNSUPPORTED, F ": pre_tokenizer.type '%.40s' is not supported with model %s%s", type,
                  tok->kind == AL_TOK_WORDPIECE ? "WordPiece" : "BPE",
                  tok->spm_bpe ? " behind the SentencePiece normalizer" : "");
}

/* A special token id the encoder may emit: an integer inside the vocabulary loaded so far. */
static int vocab_id(const al_tokenizer *tok, const cJSON *v) {
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble < tok->vocab_size)) return -1;
    int id = (int)v->valuedouble;
    return id == v->valuedouble && tok->vocab[id] ? id : -1;
}

/* "cls": ["[CLS]", 101] */
static al_status special_pair(const al_tokenizer *tok, const cJSON *post, const char *key, int *out,
                              al_error *err) {
    const cJSON *v = get(post, key);
    const cJSON *id = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, 1) : NULL;
    if (!id) return al_err(err, AL_ERR_FORMAT, F ": post_processor.%s must be [token, id]", key);
    if ((*out = vocab_id(tok, id)) < 0)
        return al_err(err, AL_ERR_FORMAT, F ": post_processor.%s: id %g is not a token of the vocabulary", key,
                      cJSON_IsNumber(id) ? id->valuedouble : -1.0);
    return AL_OK;
}

/* A template item's type id: a small non-negative integer (Hugging Face: u32; the model checks it against its
 * type_vocab_size). */
static al_status template_type_id(const cJSON *type_id, const char *key, int index, int *out, al_error *err) {
    *out = 0;
    if (!type_id || cJSON_IsNull(type_id)) return AL_OK;
    if (!cJSON_IsNumber(type_id) || !(type_id->valuedouble >= 0 && type_id->valuedouble <= 65535) ||
        type_id->valuedouble != (double)(int)type_id->valuedouble)
        return al_err(err, AL_ERR_FORMAT, F ": post_processor.%s: item %d: type_id must be an integer in [0, 65535]",
                      key, index);
    *out = (int)type_id->valuedouble;
    return AL_OK;
}

/* One template (single or pair). As in Hugging Face tokenizers, a template may name a sequence more than once
 * (each naming emits a copy) or leave one out; the encoder sizes its output from the template itself
 * (tok_encode.c; docs/fuzzing.md, finding F2). The single template has only sequence A to give. */
static al_status load_template(al_tokenizer *tok, const cJSON *post, const char *key, al_template *t,
                               al_error *err) {
    const cJSON *items = get(post, key), *it;
    if (!cJSON_IsArray(items)) return al_err(err, AL_ERR_FORMAT, F ": post_processor.%s is not an array", key);
    const cJSON *special_tokens = get(post, "special_tokens");
    const int single = strcmp(key, "single") == 0;
    t->n = 0;
    cJSON_ArrayForEach(it, items) {
        const int index = t->n;
        if (t->n == (int)(sizeof t->items / sizeof t->items[0]))
            return al_err(err, AL_ERR_UNSUPPORTED, F ": post_processor.%s has more than %d items", key, t->n);
        al_tmpl_item *x = &t->items[t->n++];
        const cJSON *sp = get(it, "SpecialToken"), *seq = get(it, "Sequence");
        const cJSON *body = sp ? sp : seq;
        const cJSON *id = get(body, "id");
        if (!body || !cJSON_IsString(id))
            return al_err(err, AL_ERR_FORMAT, F ": post_processor.%s: item %d is not SpecialToken or Sequence", key, index);
        al_status st = template_type_id(get(body, "type_id"), key, index, &x->type_id, err);
        if (st) return st;
        if (!sp) {
            x->special_id = -1;
            if (strcmp(id->valuestring, "A") == 0) x->seq = 0;
            else if (strcmp(id->valuestring, "B") == 0) x->seq = 1;
            else
                return al_err(err, AL_ERR_FORMAT, F ": post_processor.%s: item %d: sequence '%.20s' is not A or B", key,
                              index, id->valuestring);
            if (single && x->seq == 1)
                return al_err(err, AL_ERR_FORMAT,
                              F ": post_processor.single: item %d names sequence B, but a single input has only A", index);
            continue;
        }
        x->seq = -1;
        /* special_tokens: {"[CLS]": {"id": "[CLS]", "ids": [101], "tokens": [...]}} */
        const cJSON *entry = get(special_tokens, id->valuestring);
        const cJSON *ids = get(entry, "ids");
        if (cJSON_IsArray(ids)) {
            if (cJSON_GetArraySize(ids) != 1)
                return al_err(err, AL_ERR_UNSUPPORTED,
                              F ": post_processor.special_tokens['%.40s'] has %d ids; only one id per special token is "
                                "supported",
                              id->valuestring, cJSON_GetArraySize(ids));
            x->special_id = vocab_id(tok, cJSON_GetArrayItem(ids, 0));
        } else {
            x->special_id = al_tokenizer_token_to_id(tok, id->valuestring);
        }
        if (x->special_id < 0)
            return al_err(err, AL_ERR_FORMAT, F ": post_processor.%s: special token '%.40s' has no id in the vocabulary",
                          key, id->valuestring);
    }
    return AL_OK;
}

static al_status load_post_processor(al_tokenizer *tok, const cJSON *post, al_error *err) {
    if (!post || cJSON_IsNull(post)) return AL_OK; /* no special tokens are added */
    const char *type = type_of(post);
    if (strcmp(type, "TemplateProcessing") == 0) {
        al_status st = load_template(tok, post, "single", &tok->single, err);
        if (st == AL_OK) st = load_template(tok, post, "pair", &tok->pair, err);
        if (st) return st;
        tok->has_template = 1;
        if (tok->single.n && tok->single.items[0].special_id >= 0 && tok->specials.cls < 0)
            tok->specials.cls = tok->single.items[0].special_id;
        if (tok->single.n && tok->single.items[tok->single.n - 1].special_id >= 0 && tok->specials.sep < 0)
            tok->specials.sep = tok->single.items[tok->single.n - 1].special_id;
        return AL_OK;
    }
    if (strcmp(type, "BertProcessing") == 0 || strcmp(type, "RobertaProcessing") == 0) {
        al_status st = special_pair(tok, post, "cls", &tok->specials.cls, err);
        if (st == AL_OK) st = special_pair(tok, post, "sep", &tok->specials.sep, err);
        if (st) return st;
        al_tokenizer_kind kind = tok->kind;
        tok->kind = type[0] == 'B' ? AL_TOK_WORDPIECE : AL_TOK_BPE; /* template shape only */
        al_tok_default_templates(tok);
        tok->kind = kind;
        return AL_OK;
    }
    if (strcmp(type, "ByteLevel") == 0) return AL_OK;
    return al_err(err, AL_ERR_UNSUPPORTED, F ": post_processor.type '%.40s' is not supported", type);
}

static al_status load_added(al_tokenizer *tok, const cJSON *added, int limit, al_error *err) {
    if (!added || cJSON_IsNull(added)) return AL_OK;
    if (!cJSON_IsArray(added)) return al_err(err, AL_ERR_FORMAT, F ": added_tokens is not an array");
    int i = 0;
    const cJSON *a;
    cJSON_ArrayForEach(a, added) {
        const cJSON *id = get(a, "id"), *content = get(a, "content");
        if (!cJSON_IsNumber(id) || !(id->valuedouble >= 0 && id->valuedouble < limit) ||
            id->valuedouble != (double)id->valueint || !cJSON_IsString(content))
            return al_err(err, AL_ERR_FORMAT,
                          F ": added_tokens[%d] needs a content and an integer id below %d (the number of tokens)", i,
                          limit);
        if (al_tok_add_added(tok, content->valuestring, id->valueint, get_bool(a, "lstrip", 0), get_bool(a, "rstrip", 0),
                             get_bool(a, "special", 0)))
            return al_err(err, AL_ERR_OOM, F ": out of memory");
        i++;
    }
    return AL_OK;
}

static al_status load_root(al_tokenizer *tok, const cJSON *root, al_error *err) {
    const cJSON *model = get(root, "model");
    if (!cJSON_IsObject(model)) return al_err(err, AL_ERR_FORMAT, F ": model is missing");
    const char *type = type_of(model);
    if (!type[0]) /* older files: infer as the JS library does */
        type = get(model, "merges") ? "BPE" : get(model, "continuing_subword_prefix") ? "WordPiece" : "";
    const int limit = id_limit(root);
    al_status st;
    if (strcmp(type, "WordPiece") == 0) tok->kind = AL_TOK_WORDPIECE;
    else if (strcmp(type, "BPE") == 0) tok->kind = AL_TOK_BPE;
    else if (strcmp(type, "Unigram") == 0) {
        tok->clean_text = tok->handle_chinese_chars = tok->lowercase = tok->strip_accents = 0;
        if ((st = al_tok_json_unigram(tok, root, limit, err))) return st;
        if ((st = load_added(tok, get(root, "added_tokens"), limit, err))) return st;
        return load_post_processor(tok, get(root, "post_processor"), err);
    } else return al_err(err, AL_ERR_UNSUPPORTED, F ": model.type '%.40s' is not supported (WordPiece, BPE or Unigram)", type);

    st = load_vocab(tok, model, limit, err);
    if (st) return st;
    const cJSON *unk = get(model, "unk_token");
    if (cJSON_IsString(unk)) {
        tok->unk_id = al_tokenizer_token_to_id(tok, unk->valuestring);
        if (tok->unk_id < 0 && tok->kind == AL_TOK_WORDPIECE)
            return al_err(err, AL_ERR_FORMAT, F ": model.unk_token '%.40s' is not in model.vocab", unk->valuestring);
    } else if (tok->kind == AL_TOK_WORDPIECE) {
        return al_err(err, AL_ERR_FORMAT, F ": model.unk_token is missing");
    }
    if (tok->kind == AL_TOK_WORDPIECE) {
        const cJSON *prefix = get(model, "continuing_subword_prefix");
        if (cJSON_IsString(prefix)) {
            if (strlen(prefix->valuestring) >= sizeof tok->continuing_prefix)
                return al_err(err, AL_ERR_UNSUPPORTED, F ": model.continuing_subword_prefix is too long");
            strcpy(tok->continuing_prefix, prefix->valuestring);
        }
        const cJSON *maxc = get(model, "max_input_chars_per_word");
        if (maxc && !cJSON_IsNull(maxc)) {
            if (!cJSON_IsNumber(maxc) || maxc->valuedouble < 0 || maxc->valuedouble > 1e9 ||
                maxc->valuedouble != (double)maxc->valueint)
                return al_err(err, AL_ERR_FORMAT, F ": model.max_input_chars_per_word must be an integer in [0, 1e9]");
            tok->max_input_chars_per_word = maxc->valueint;
        }
    } else {
        if ((st = load_merges(tok, model, err))) return st;
        const cJSON *suffix = get(model, "end_of_word_suffix"), *prefix = get(model, "continuing_subword_prefix");
        if ((cJSON_IsString(suffix) && suffix->valuestring[0]) || (cJSON_IsString(prefix) && prefix->valuestring[0]))
            return al_err(err, AL_ERR_UNSUPPORTED, F ": model BPE with subword prefix/suffix is not supported");
        if (get_bool(model, "byte_fallback", 0)) { /* a symbol outside the vocabulary becomes <0xNN> pieces */
            tok->byte_fallback = 1;
            al_tok_find_byte_pieces(tok);
        }
    }
    if ((st = load_normalizer(tok, get(root, "normalizer"), err))) return st;
    if ((st = load_pre_tokenizer(tok, get(root, "pre_tokenizer"), err))) return st;
    if ((st = load_added(tok, get(root, "added_tokens"), limit, err))) return st;
    if ((st = load_post_processor(tok, get(root, "post_processor"), err))) return st;
    return AL_OK;
}

/* A decoder's BPE (no template: GPT-2, GPT-NeoX, Qwen2) names its special tokens among its added tokens; a
 * vocabulary token that only looks like one (Qwen2's <s> and </s> are plain text) is none (docs/tokenizers.md). */
static void keep_added_specials(al_tokenizer *tok) {
    int *slots[] = {&tok->specials.cls, &tok->specials.sep, &tok->specials.pad, &tok->specials.mask, &tok->specials.unk,
                    &tok->bos, &tok->eos};
    for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++) {
        int added = 0;
        for (int k = 0; k < tok->n_added && *slots[i] >= 0; k++) added |= tok->added[k].id == *slots[i];
        if (!added) *slots[i] = -1;
    }
    const int endoftext = al_tokenizer_token_to_id(tok, "<|endoftext|>"); /* GPT-2's BOS and EOS, as in tok_load.c */
    if (tok->bos < 0) tok->bos = endoftext;
    if (tok->eos < 0) tok->eos = endoftext;
}

al_status al_tok_load_tokenizer_json(al_tokenizer *tok, const al_fileset *files, al_error *err) {
    size_t size;
    const char *data = (const char *)al_fileset_get(files, "tokenizer.json", &size);
    snprintf(tok->source, sizeof tok->source, F);
    cJSON *root = cJSON_ParseWithLength(data, size);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return al_err(err, AL_ERR_FORMAT, F ": not a valid JSON object");
    }
    al_status st = load_root(tok, root, err);
    cJSON_Delete(root);
    if (st) return st;
    al_tok_find_specials(tok);
    if (tok->kind == AL_TOK_BPE && !tok->has_template) keep_added_specials(tok);
    if (tok->unk_id >= 0) tok->specials.unk = tok->unk_id;
    return AL_OK;
}
