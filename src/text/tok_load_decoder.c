/* tok_load_decoder.c: what the decoder families' tokenizer files say beyond the vocabulary and merges
 * (docs/tokenizers.md, "Decoder tokenizers"): which family a vocab.json + merges.txt belongs to
 * (tokenizer_config.json's tokenizer_class, config.json's model_type), the added tokens of
 * tokenizer_config.json's added_tokens_decoder, and the BOS/EOS template of add_bos_token / add_eos_token. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "cJSON.h"
#include "tok_internal.h"

#define TC "tokenizer_config.json"

static cJSON *parse(const al_fileset *files, const char *name) {
    size_t size;
    const char *data = (const char *)al_fileset_get(files, name, &size);
    return data ? cJSON_ParseWithLength(data, size) : NULL;
}

static int starts_with(const char *s, const char *head) { return s && strncmp(s, head, strlen(head)) == 0; }

al_decoder_family al_tok_decoder_family(const al_fileset *files) {
    cJSON *tc = parse(files, TC), *cfg = parse(files, "config.json");
    const char *cls = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(tc, "tokenizer_class"));
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cfg, "model_type"));
    al_decoder_family f = AL_DEC_NONE;
    if (starts_with(cls, "Qwen2Tokenizer") || (type && (strcmp(type, "qwen2") == 0 || strcmp(type, "qwen2_moe") == 0)))
        f = AL_DEC_QWEN2;
    else if (starts_with(cls, "GPT2Tokenizer") || starts_with(cls, "GPTNeoXTokenizer") ||
             (type && (strcmp(type, "gpt2") == 0 || strcmp(type, "gpt_neox") == 0)))
        f = AL_DEC_GPT2;
    cJSON_Delete(tc);
    cJSON_Delete(cfg);
    return f;
}

static int flag(const cJSON *obj, const char *key, int dflt) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

al_status al_tok_read_added_tokens_decoder(al_tokenizer *tok, const al_fileset *files, al_error *err) {
    cJSON *root = parse(files, TC);
    const cJSON *dec = cJSON_GetObjectItemCaseSensitive(root, "added_tokens_decoder"), *item;
    if (!cJSON_IsObject(dec)) dec = NULL;
    al_status st = AL_OK;
    /* ids stay dense: below the vocabulary plus the entries (as tok_load_json.c's id_limit) */
    const int limit = tok->vocab_size + cJSON_GetArraySize(dec);
    cJSON_ArrayForEach(item, dec) {
        char *end = NULL;
        long id = strtol(item->string, &end, 10);
        const char *content = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(item, "content"));
        if (!item->string[0] || *end || id < 0 || id >= limit || !content) {
            st = al_err(err, AL_ERR_FORMAT, TC ": added_tokens_decoder['%.20s'] needs an integer id below %d and a content",
                        item->string, limit);
            break;
        }
        const char *old = al_tokenizer_id_to_token(tok, (int)id);
        if (old && strcmp(old, content) != 0 && tok->piece_type && id < tok->n_pieces) {
            st = al_err(err, AL_ERR_FORMAT, TC ": added_tokens_decoder['%.20s']: id %ld is the piece '%.60s'",
                        item->string, id, old);
            break;
        }
        if (al_tok_add_added(tok, content, (int)id, flag(item, "lstrip", 0), flag(item, "rstrip", 0),
                             flag(item, "special", 0))) {
            st = al_err(err, AL_ERR_OOM, TC ": out of memory");
            break;
        }
    }
    cJSON_Delete(root);
    return st;
}

void al_tok_bos_eos_template(al_tokenizer *tok, const al_fileset *files, int add_bos, int add_eos) {
    cJSON *tc = parse(files, TC);
    add_bos = flag(tc, "add_bos_token", add_bos) && tok->bos >= 0;
    add_eos = flag(tc, "add_eos_token", add_eos) && tok->eos >= 0;
    cJSON_Delete(tc);
    /* [BOS] A [EOS] and [BOS] A [EOS] [BOS] B [EOS], B's part of type 1 (Hugging Face's LlamaTokenizer) */
    al_template *t[2] = {&tok->single, &tok->pair};
    for (int k = 0; k < 2; k++) {
        t[k]->n = 0;
        for (int seq = 0; seq <= k; seq++) {
            if (add_bos) t[k]->items[t[k]->n++] = (al_tmpl_item){tok->bos, -1, seq};
            t[k]->items[t[k]->n++] = (al_tmpl_item){-1, seq, seq};
            if (add_eos) t[k]->items[t[k]->n++] = (al_tmpl_item){tok->eos, -1, seq};
        }
    }
    tok->has_template = 1;
}
