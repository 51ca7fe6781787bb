/* tok_bpe.c: BPE of one plain section. Byte-level BPE (GPT-2, RoBERTa, Qwen2, GPT-NeoX): the pre-tokenizer
 * pattern (tok_pretok.c), bytes mapped to printable characters, then merges by rank (lowest first, the
 * leftmost on ties, as the JS library's heap does). SentencePiece BPE (Llama): SentencePiece's normalisation,
 * no pre-tokenizer, characters merged the same way (by merges.txt rank, or by piece score from
 * tokenizer.model), a symbol outside the vocabulary written as its bytes' <0xNN> pieces (docs/tokenizers.md). */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "tok_internal.h"

static al_status oom(al_error *err) { return al_err(err, AL_ERR_OOM, "tokenizer: out of memory"); }

/* GPT-2's bytes_to_unicode: printable Latin-1 bytes map to themselves, the rest to 256 + n. tok_decode.c reads it
 * backwards (al_bpe_byte_char). */
static uint32_t byte_char(int b) {
    if ((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)) return (uint32_t)b;
    int n = 0;
    for (int i = 0; i < b; i++)
        if (!((i >= '!' && i <= '~') || (i >= 0xA1 && i <= 0xAC) || (i >= 0xAE && i <= 0xFF))) n++;
    return 256u + (uint32_t)n;
}

uint32_t al_bpe_byte_char(int b) { return byte_char(b); }

typedef struct heap_entry { int rank, left, right, vl, vr; } heap_entry;

typedef struct bpe_heap { heap_entry *e; int n, cap; } bpe_heap;

static int entry_less(const heap_entry *a, const heap_entry *b) {
    return a->rank < b->rank || (a->rank == b->rank && a->left < b->left);
}

static int heap_push(bpe_heap *h, heap_entry x) {
    if (h->n == h->cap) {
        int cap = h->cap ? h->cap * 2 : 64;
        heap_entry *p = realloc(h->e, (size_t)cap * sizeof *p);
        if (!p) return -1;
        h->e = p;
        h->cap = cap;
    }
    int i = h->n++;
    while (i > 0 && entry_less(&x, &h->e[(i - 1) / 2])) {
        h->e[i] = h->e[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h->e[i] = x;
    return 0;
}

static heap_entry heap_pop(bpe_heap *h) {
    heap_entry top = h->e[0], last = h->e[--h->n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && entry_less(&h->e[c + 1], &h->e[c])) c++;
        if (!entry_less(&h->e[c], &last)) break;
        h->e[i] = h->e[c];
        i = c;
    }
    if (h->n) h->e[i] = last;
    return top;
}

/* Symbols of one word: a linked list over the mapped string s. */
typedef struct bpe_word {
    char *s;                     /* byte-level characters, UTF-8 */
    int *sstart, *slen;          /* symbol's bytes in s */
    int *first, *last;           /* symbol's source code point indices */
    int *prev, *next, *version;
    int *src;                    /* per word byte: source code point index */
} bpe_word;

static int pair_rank(const al_tokenizer *tok, const bpe_word *w, int a, int b, char **key, size_t *keycap) {
    size_t need = (size_t)(w->slen[a] + w->slen[b] + 1);
    if (need > *keycap) {
        char *k = realloc(*key, need * 2);
        if (!k) return -2;
        *key = k;
        *keycap = need * 2;
    }
    if (tok->score_rank) { /* tokenizer.model: the pair's concatenation must be a mergeable piece */
        memcpy(*key, w->s + w->sstart[a], (size_t)w->slen[a]);
        memcpy(*key + w->slen[a], w->s + w->sstart[b], (size_t)w->slen[b]);
        int id = al_strmap_get(&tok->token_ids, *key, need - 1);
        return id >= 0 && id < tok->n_pieces ? tok->score_rank[id] : -1;
    }
    memcpy(*key, w->s + w->sstart[a], (size_t)w->slen[a]);
    (*key)[w->slen[a]] = '\xff';
    memcpy(*key + w->slen[a] + 1, w->s + w->sstart[b], (size_t)w->slen[b]);
    return al_strmap_get(&tok->merge_ranks, *key, need);
}

static int push_pair(const al_tokenizer *tok, bpe_word *w, bpe_heap *h, int a, char **key, size_t *keycap) {
    int b = w->next[a];
    if (a < 0 || b < 0) return 0;
    int r = pair_rank(tok, w, a, b, key, keycap);
    if (r == -2) return -1;
    if (r < 0) return 0;
    return heap_push(h, (heap_entry){r, a, b, w->version[a], w->version[b]});
}

/* BPE over the code points [from, to) of the section; appends the tokens. */
static al_status bpe_word_tokens(const al_tokenizer *tok, const al_ntext *t, int from, int to, al_pieces *out,
                                 al_error *err) {
    int word = tok->spm_bpe ? -1 : out->n_words++;
    int nb = 0;
    char tmp[4];
    for (int i = from; i < to; i++) nb += al_utf8_encode(t->cp[i], tmp);
    bpe_word w = {0};
    bpe_heap h = {0};
    char *key = NULL;
    size_t keycap = 0;
    al_status st = AL_OK;
    w.s = malloc((size_t)nb * 2 + 1);
    int **arrays[] = {&w.sstart, &w.slen, &w.first, &w.last, &w.prev, &w.next, &w.version, &w.src};
    for (int k = 0; k < 8; k++) *arrays[k] = malloc(sizeof(int) * (size_t)nb);
    for (int k = 0; k < 8; k++)
        if (!*arrays[k]) st = oom(err);
    if (!w.s || st) {
        st = oom(err);
        goto done;
    }
    int len = 0, ns = 0; /* symbols */
    for (int i = from; i < to; i++) {
        unsigned char bytes[4];
        int nbytes = al_utf8_encode(t->cp[i], (char *)bytes);
        /* byte-level: one symbol per byte, written as its printable character; SentencePiece BPE: one per
         * character */
        const int per = tok->spm_bpe ? nbytes : 1;
        for (int k = 0; k < nbytes; k += per, ns++) {
            w.sstart[ns] = len;
            if (tok->spm_bpe) {
                memcpy(w.s + len, bytes, (size_t)nbytes);
                w.slen[ns] = nbytes;
            } else {
                w.slen[ns] = al_utf8_encode(byte_char(bytes[k]), w.s + len);
            }
            len += w.slen[ns];
            w.first[ns] = w.last[ns] = i;
            w.prev[ns] = ns - 1;
            w.next[ns] = -1;
            if (ns > 0) w.next[ns - 1] = ns;
            w.version[ns] = 0;
        }
    }
    for (int a = 0; a < ns; a++)
        if (push_pair(tok, &w, &h, a, &key, &keycap)) {
            st = oom(err);
            goto done;
        }
    while (h.n) {
        heap_entry e = heap_pop(&h);
        if (w.version[e.left] != e.vl || w.version[e.right] != e.vr || w.next[e.left] != e.right) continue;
        int a = e.left, r = e.right;
        w.slen[a] += w.slen[r];
        w.last[a] = w.last[r];
        w.next[a] = w.next[r];
        if (w.next[r] >= 0) w.prev[w.next[r]] = a;
        w.version[a]++;
        w.version[r] = -1; /* dead */
        if ((w.prev[a] >= 0 && push_pair(tok, &w, &h, w.prev[a], &key, &keycap)) || push_pair(tok, &w, &h, a, &key, &keycap)) {
            st = oom(err);
            goto done;
        }
    }
    for (int a = 0; a >= 0 && a < ns; a = w.next[a]) {
        const char *sym = w.s + w.sstart[a];
        const int32_t from_byte = t->start[w.first[a]], to_byte = t->end[w.last[a]];
        int id = al_strmap_get(&tok->token_ids, sym, (size_t)w.slen[a]);
        if (tok->spm_bpe && (a == 0 || (w.slen[a] >= 3 && memcmp(sym, "\xe2\x96\x81", 3) == 0)))
            word = out->n_words++; /* SentencePiece: a piece starting with "▁" starts a word */
        if (id < 0 && tok->byte_fallback && tok->spm_bpe) { /* the symbol's bytes as <0xNN> pieces, when all exist */
            int all = 1;
            for (int k = 0; k < w.slen[a]; k++) all &= tok->byte_ids[(unsigned char)sym[k]] >= 0;
            for (int k = 0; all && k < w.slen[a]; k++)
                if (al_pieces_push(out, tok->byte_ids[(unsigned char)sym[k]], from_byte, to_byte, word, 0)) {
                    st = oom(err);
                    goto done;
                }
            if (all) continue;
        }
        if (id < 0) id = tok->unk_id;
        if (id < 0) continue; /* no unknown token: the piece is dropped (the JS library yields undefined) */
        if (al_pieces_push(out, id, from_byte, to_byte, word, 0)) {
            st = oom(err);
            goto done;
        }
    }
done:
    free(w.s);
    for (int k = 0; k < 8; k++) free(*arrays[k]);
    free(h.e);
    free(key);
    return st;
}

al_status al_bpe_section(const al_tokenizer *tok, const al_ntext *text, int prefix_space, al_pieces *out,
                         al_error *err) {
    const al_ntext *t = text;
    al_ntext with_space = {0}, composed = {0};
    if (tok->nfc) { /* ModernBERT's normalizer */
        if (al_ntext_nfc(text, &composed)) return oom(err);
        t = &composed;
    }
    if (tok->lowercase) { /* a Lowercase normaliser (rare with byte-level BPE) */
        for (int i = 0; i < t->n; i++) {
            uint32_t m[3];
            int n = al_uc_lower_in_context(t->cp, t->n, i, m);
            for (int k = 0; k < n; k++)
                if (al_ntext_push(&with_space, m[k], t->start[i], t->end[i])) goto fail;
        }
        t = &with_space;
    }
    if (prefix_space && (t->n == 0 || t->cp[0] != ' ')) {
        al_ntext p = {0};
        int32_t at = t->n ? t->start[0] : 0;
        if (al_ntext_push(&p, ' ', at, at)) goto fail;
        for (int i = 0; i < t->n; i++)
            if (al_ntext_push(&p, t->cp[i], t->start[i], t->end[i])) {
                al_ntext_free(&p);
                goto fail;
            }
        al_ntext_free(&with_space);
        with_space = p;
        t = &with_space;
    }
    al_status st = AL_OK;
    for (int i = 0; i < t->n && st == AL_OK;) {
        int m = al_pretok_match(tok->pretok, t->cp, t->n, i);
        st = bpe_word_tokens(tok, t, i, i + m, out, err);
        i += m;
    }
    al_ntext_free(&with_space);
    al_ntext_free(&composed);
    return st;
fail:
    al_ntext_free(&with_space);
    al_ntext_free(&composed);
    return oom(err);
}

al_status al_spm_bpe_section(const al_tokenizer *tok, const al_ntext *text, al_pieces *out, al_error *err) {
    al_ntext t = {0};
    if (al_spm_normalize(tok, text, &t)) {
        al_ntext_free(&t);
        return oom(err);
    }
    /* no pre-tokenizer: the whole normalised section is one sequence of symbols */
    al_status st = t.n ? bpe_word_tokens(tok, &t, 0, t.n, out, err) : AL_OK;
    al_ntext_free(&t);
    return st;
}
