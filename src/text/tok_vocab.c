/* tok_vocab.c: the vocabulary (id <-> token), added tokens, default templates, special ids, and the
 * public getters and destructor. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tok_internal.h"
#include "tok_special.h"

int al_tok_set_token(al_tokenizer *tok, const char *token, size_t len, int id) {
    if (id < 0) return -1;
    if (id >= tok->vocab_cap) {
        int64_t want = tok->vocab_cap ? 2 * (int64_t)tok->vocab_cap : 1024;
        if (want < (int64_t)id + 1) want = (int64_t)id + 1;
        if (want > INT32_MAX) return -1;
        char **v = realloc(tok->vocab, (size_t)want * sizeof *v);
        if (!v) return -1;
        for (int64_t i = tok->vocab_cap; i < want; i++) v[i] = NULL;
        tok->vocab = v;
        tok->vocab_cap = (int)want;
    }
    if (id >= tok->vocab_size) tok->vocab_size = id + 1;
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, token, len);
    copy[len] = '\0';
    free(tok->vocab[id]);
    tok->vocab[id] = copy;
    return al_strmap_put(&tok->token_ids, copy, len, id);
}

int al_tok_add_added(al_tokenizer *tok, const char *content, int id, int lstrip, int rstrip,
                     int special) {
    if (!content[0]) return 0; /* an empty added token can never match */
    for (int i = 0; i < tok->n_added; i++) {
        if (strcmp(tok->added[i].content, content) == 0) {
            tok->added[i].id = id;
            return 0;
        }
    }
    al_added_token *a = realloc(tok->added, (size_t)(tok->n_added + 1) * sizeof *a);
    if (!a) return -1;
    tok->added = a;
    size_t len = strlen(content);
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, content, len + 1);
    a[tok->n_added++] = (al_added_token){copy, id, lstrip, rstrip, special};
    return al_tok_set_token(tok, content, len, id);
}

static int id_of(const al_tokenizer *tok, const char *s) {
    return al_strmap_get(&tok->token_ids, s, strlen(s));
}

void al_tok_find_specials(al_tokenizer *tok) {
    int bert = tok->kind != AL_TOK_BPE; /* Unigram (DeBERTa-v3) uses BERT's [CLS] [SEP] */
    al_special_ids *s = &tok->specials;
    if (s->cls < 0) s->cls = id_of(tok, bert ? "[CLS]" : "<s>");
    if (s->sep < 0) s->sep = id_of(tok, bert ? "[SEP]" : "</s>");
    if (s->pad < 0) s->pad = id_of(tok, bert ? "[PAD]" : "<pad>");
    if (s->mask < 0) s->mask = id_of(tok, bert ? "[MASK]" : "<mask>");
    if (s->unk < 0) s->unk = id_of(tok, bert ? "[UNK]" : "<unk>");
    /* the other style when the vocabulary lacks this one: ModernBERT's byte-level BPE tokenizer.json names
     * its padding and mask [PAD] and [MASK] (docs/tokenizers.md) */
    if (s->pad < 0) s->pad = id_of(tok, bert ? "<pad>" : "[PAD]");
    if (s->mask < 0) s->mask = id_of(tok, bert ? "<mask>" : "[MASK]");
    if (tok->bos < 0) tok->bos = s->cls;
    if (tok->eos < 0) tok->eos = s->sep;
}

/* [CLS] A [SEP] (B [SEP]) for BERT and DeBERTa-v3; <s> A </s> (</s> B </s>) for RoBERTa, all type 0. */
void al_tok_default_templates(al_tokenizer *tok) {
    int cls = tok->specials.cls, sep = tok->specials.sep;
    if (tok->kind != AL_TOK_BPE) {
        tok->single = (al_template){{{cls, -1, 0}, {-1, 0, 0}, {sep, -1, 0}}, 3};
        tok->pair = (al_template){{{cls, -1, 0}, {-1, 0, 0}, {sep, -1, 0}, {-1, 1, 1}, {sep, -1, 1}}, 5};
    } else {
        tok->single = (al_template){{{cls, -1, 0}, {-1, 0, 0}, {sep, -1, 0}}, 3};
        tok->pair = (al_template){{{cls, -1, 0}, {-1, 0, 0}, {sep, -1, 0}, {sep, -1, 0}, {-1, 1, 0}, {sep, -1, 0}}, 6};
        tok->roberta_type_ids = 1;
    }
    tok->has_template = 1;
}

void al_tokenizer_free(al_tokenizer *tok) {
    if (!tok) return;
    for (int i = 0; i < tok->vocab_size; i++) free(tok->vocab[i]);
    free(tok->vocab);
    for (int i = 0; i < tok->n_added; i++) free(tok->added[i].content);
    free(tok->added);
    al_strmap_free(&tok->token_ids);
    al_strmap_free(&tok->merge_ranks);
    free(tok->piece_score);
    free(tok->piece_type);
    free(tok->score_rank);
    free(tok->charsmap);
    free(tok);
}

al_tokenizer_kind al_tokenizer_get_kind(const al_tokenizer *tok) { return tok->kind; }
int al_tokenizer_vocab_size(const al_tokenizer *tok) { return tok->vocab_size; }

const char *al_tokenizer_id_to_token(const al_tokenizer *tok, int id) {
    if (!tok || id < 0 || id >= tok->vocab_size) return NULL;
    return tok->vocab[id];
}

int al_tokenizer_token_to_id(const al_tokenizer *tok, const char *token) {
    if (!tok || !token) return -1;
    return id_of(tok, token);
}

al_special_ids al_tokenizer_special_ids(const al_tokenizer *tok) { return tok->specials; }

int al_tokenizer_eos_id(const al_tokenizer *tok) { return tok ? tok->eos : -1; }

int al_tokenizer_is_special(const al_tokenizer *tok, int id) {
    if (!tok || id < 0 || id >= tok->vocab_size || !tok->vocab[id]) return 1; /* a hole is no token */
    const al_special_ids *s = &tok->specials;
    if (id == s->cls || id == s->sep || id == s->pad || id == s->mask || id == s->unk || id == tok->bos ||
        id == tok->eos)
        return 1;
    for (int i = 0; i < tok->n_added; i++)
        if (tok->added[i].id == id && tok->added[i].special) return 1;
    /* SentencePiece marks its own: <s>, </s> are control pieces, <unk> the unknown one */
    if (tok->piece_type && id < tok->n_pieces) {
        const int t = tok->piece_type[id];
        return t == AL_SPM_CONTROL || t == AL_SPM_UNKNOWN || t == AL_SPM_UNUSED;
    }
    return 0;
}
