/* tok_encode.c: text -> al_encoding. Added tokens are split out first (longest match, never
 * normalised, lstrip/rstrip as the JS library does), the rest goes through the model's section
 * tokenizer; then truncation (longest_first for pairs), the post-processing template, padding. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "tok_internal.h"

al_encode_options al_encode_default_options(void) {
    al_encode_options o = {1, 0, 0, 0};
    return o;
}

static al_status oom(al_error *err) { return al_err(err, AL_ERR_OOM, "tokenizer: out of memory"); }

/* Longest added token matching the source bytes at code point i, or -1. */
static int added_at(const al_tokenizer *tok, const char *src, size_t len, const al_ntext *t, int i) {
    int best = -1;
    size_t best_len = 0;
    size_t at = (size_t)t->start[i];
    for (int k = 0; k < tok->n_added; k++) {
        const char *c = tok->added[k].content;
        if ((unsigned char)c[0] != (unsigned char)src[at]) continue;
        size_t cl = strlen(c);
        if (cl > best_len && cl <= len - at && memcmp(src + at, c, cl) == 0) {
            best = k;
            best_len = cl;
        }
    }
    return best;
}

/* Tokens of one plain section [from, to) of the decoded text. */
static al_status plain_section(const al_tokenizer *tok, const al_ntext *t, int from, int to, int prefix_space,
                               al_pieces *out, al_error *err) {
    if (to <= from) return AL_OK; /* empty sections produce nothing (and get no prefix space) */
    al_ntext view = {t->cp + from, t->start + from, t->end + from, to - from, to - from};
    if (tok->kind == AL_TOK_UNIGRAM) return al_unigram_section(tok, &view, out, err);
    if (tok->spm_bpe) return al_spm_bpe_section(tok, &view, out, err);
    return tok->kind == AL_TOK_WORDPIECE ? al_wordpiece_section(tok, &view, out, err)
                                         : al_bpe_section(tok, &view, prefix_space, out, err);
}

/* One sequence: decode, split out added tokens, tokenize the sections in between. */
static al_status encode_sequence(const al_tokenizer *tok, const char *src, const char *label, int prefix_space,
                                 al_pieces *out, al_error *err) {
    size_t len = strlen(src);
    al_ntext t = {0};
    int32_t bad = 0;
    int rc = al_utf8_decode(src, len, &t, &bad);
    if (rc) {
        al_ntext_free(&t);
        return rc == -1 ? al_err(err, AL_ERR_FORMAT, "%s: invalid UTF-8 at byte %d", label, (int)bad) : oom(err);
    }
    al_status st = AL_OK;
    int from = 0, i = 0;
    while (i < t.n && st == AL_OK) {
        int k = tok->n_added ? added_at(tok, src, len, &t, i) : -1;
        if (k < 0) {
            i++;
            continue;
        }
        const al_added_token *a = &tok->added[k];
        int to = i;
        if (a->lstrip) /* JS trimEnd of the previous section */
            while (to > from && al_uc_is_js_space(t.cp[to - 1])) to--;
        st = plain_section(tok, &t, from, to, prefix_space, out, err);
        /* the token's code points: up to the end byte of its match */
        int j = i;
        int32_t end_byte = t.start[i] + (int32_t)strlen(a->content);
        while (j < t.n && t.start[j] < end_byte) j++;
        if (st == AL_OK && al_pieces_push(out, a->id, t.start[i], end_byte, out->n_words++, a->special)) st = oom(err);
        if (a->rstrip)
            while (j < t.n && al_uc_is_js_space(t.cp[j])) j++;
        from = i = j;
    }
    if (st == AL_OK) st = plain_section(tok, &t, from, t.n, prefix_space, out, err);
    al_ntext_free(&t);
    return st;
}

static const char *special_name(const al_tokenizer *tok, int which) {
    static const char *bert[] = {"[CLS]", "[SEP]", "[PAD]"}, *bpe[] = {"<s>", "</s>", "<pad>"};
    return tok->kind != AL_TOK_BPE ? bert[which] : bpe[which];
}

/* How often the template emits each sequence and how many special tokens it adds. A template may name a
 * sequence more than once (Hugging Face's TemplateProcessing then emits a copy each time), or not at all,
 * so sizes and the truncation budget come from these counts, never from "one copy of each" (docs/fuzzing.md,
 * finding F2). */
typedef struct tmpl_counts { int special, seq[2]; } tmpl_counts;

static tmpl_counts count_items(const al_template *t) {
    tmpl_counts c = {0, {0, 0}};
    for (int i = 0; i < t->n; i++) {
        if (t->items[i].seq < 0) c.special++;
        else c.seq[t->items[i].seq]++;
    }
    return c;
}

/* Tokens emitted for na tokens of A and nb of B (64-bit: the counts multiply). */
static int64_t emitted(const tmpl_counts *c, int na, int nb) {
    return (int64_t)c->seq[0] * na + (int64_t)c->seq[1] * nb + c->special;
}

/* Hugging Face's Rust tokenizers' longest_first for a pair (docs/tokenizers.md, "Pair truncation"), what every
 * fast tokenizer does: with n1 the shorter length (the first on ties) and n2 the longer, keep n1 and cut the
 * longer to max(n1, budget - n1); if that is still too long, the shorter gets budget / 2 and the longer the
 * rest, so an odd budget's extra token goes to the longer sequence (to the second on ties). */
static void longest_first_pair(int budget, int *na, int *nb) {
    const int swap = *na > *nb;
    int n1 = swap ? *nb : *na, n2 = swap ? *na : *nb;
    if (n1 > budget) n2 = n1;
    else n2 = n1 > budget - n1 ? n1 : budget - n1;
    if ((int64_t)n1 + n2 > budget) {
        n1 = budget / 2;
        n2 = n1 + budget % 2;
    }
    const int keep_a = swap ? n2 : n1, keep_b = swap ? n1 : n2;
    if (*na > keep_a) *na = keep_a;
    if (*nb > keep_b) *nb = keep_b;
}

/* Builds the encoding from the pieces of sequence A (and B when b != NULL). */
static al_status finish(const al_tokenizer *tok, al_pieces *a, al_pieces *b, const al_encode_options *opt,
                        al_encoding *out, al_error *err) {
    int add = opt->add_special_tokens && tok->has_template;
    const al_template *tmpl = b ? &tok->pair : &tok->single;
    if (add) {
        for (int i = 0; i < tmpl->n; i++) {
            int id = tmpl->items[i].special_id;
            if (tmpl->items[i].seq < 0 && id < 0) {
                int which = (i == 0) ? 0 : 1;
                return al_err(err, AL_ERR_FORMAT, "%s: missing special token %s", tok->source, special_name(tok, which));
            }
        }
    }
    /* without the template each given sequence appears once, and nothing is added */
    tmpl_counts cnt = {0, {1, b ? 1 : 0}};
    if (add) cnt = count_items(tmpl);
    int truncated = 0;
    if (opt->max_length < 0) return al_err(err, AL_ERR_INVALID, "encode: max_length %d is negative", opt->max_length);
    int na = a->n, nb = b ? b->n : 0;
    if (opt->truncation && opt->max_length > 0) {
        if (cnt.special > opt->max_length)
            return al_err(err, AL_ERR_INVALID, "encode: max_length %d leaves no room for the %d special tokens",
                          opt->max_length, cnt.special);
        if (b && cnt.seq[0] == 1 && cnt.seq[1] == 1 && emitted(&cnt, na, nb) > opt->max_length)
            longest_first_pair(opt->max_length - cnt.special, &na, &nb);
        /* any other template (a sequence emitted twice, or not at all) and single texts: drop one token at a
         * time from the longer sequence (the second on ties) among those emitted, until every copy fits */
        while (emitted(&cnt, na, nb) > opt->max_length) {
            int from_b = cnt.seq[1] && nb > 0 && (nb >= na || !cnt.seq[0]);
            if (from_b) nb--;
            else na--;
        }
        truncated = na < a->n || (b && cnt.seq[1] && nb < b->n);
        a->n = na;
        if (b) b->n = nb;
    }
    int64_t n64 = emitted(&cnt, na, nb);
    if (n64 > (int64_t)1 << 30)
        return al_err(err, AL_ERR_INVALID, "encode: %lld tokens are too many", (long long)n64);
    int n = (int)n64;
    int length = n;
    if (opt->pad_to > 0) {
        if (opt->pad_to < n)
            return al_err(err, AL_ERR_INVALID, "encode: pad_to %d is shorter than the %d tokens", opt->pad_to, n);
        if (tok->specials.pad < 0 && opt->pad_to > n)
            return al_err(err, AL_ERR_FORMAT, "%s: missing special token %s", tok->source, special_name(tok, 2));
        length = opt->pad_to;
    }
    memset(out, 0, sizeof *out);
    size_t L = (size_t)(length ? length : 1);
    out->ids = malloc(L * sizeof(int32_t));
    out->type_ids = malloc(L * sizeof(int32_t));
    out->attention_mask = malloc(L * sizeof(int32_t));
    out->special_mask = malloc(L * sizeof(int32_t));
    out->word_ids = malloc(L * sizeof(int32_t));
    out->sequence_ids = malloc(L * sizeof(int32_t));
    out->offsets = malloc(L * 2 * sizeof(int32_t));
    if (!out->ids || !out->type_ids || !out->attention_mask || !out->special_mask || !out->word_ids ||
        !out->sequence_ids || !out->offsets) {
        al_encoding_free(out);
        return oom(err);
    }
    int k = 0;
#define EMIT(id_, type_, special_, word_, seq_, s_, e_)                                            \
    do {                                                                                           \
        out->ids[k] = (id_); out->type_ids[k] = (type_); out->attention_mask[k] = 1;              \
        out->special_mask[k] = (special_); out->word_ids[k] = (word_); out->sequence_ids[k] = (seq_); \
        out->offsets[2 * k] = (s_); out->offsets[2 * k + 1] = (e_); k++;                          \
    } while (0)
    if (add) {
        for (int i = 0; i < tmpl->n; i++) {
            const al_tmpl_item *it = &tmpl->items[i];
            int type = tok->roberta_type_ids ? 0 : it->type_id;
            if (it->seq < 0) {
                EMIT(it->special_id, type, 1, -1, -1, 0, 0);
                continue;
            }
            const al_pieces *p = it->seq == 0 ? a : b;
            if (!p) continue;
            for (int j = 0; j < p->n; j++) EMIT(p->id[j], type, 0, p->word[j], it->seq, p->start[j], p->end[j]);
        }
    } else {
        int type_b = tok->kind != AL_TOK_BPE ? 1 : 0;
        for (int j = 0; j < a->n; j++) EMIT(a->id[j], 0, 0, a->word[j], 0, a->start[j], a->end[j]);
        for (int j = 0; b && j < b->n; j++) EMIT(b->id[j], type_b, 0, b->word[j], 1, b->start[j], b->end[j]);
    }
#undef EMIT
    out->n_tokens = k;
    for (; k < length; k++) {
        out->ids[k] = tok->specials.pad;
        out->type_ids[k] = 0;
        out->attention_mask[k] = 0;
        out->special_mask[k] = 1;
        out->word_ids[k] = -1;
        out->sequence_ids[k] = -1;
        out->offsets[2 * k] = out->offsets[2 * k + 1] = 0;
    }
    out->length = length;
    out->truncated = truncated;
    return AL_OK;
}

al_status al_tokenizer_encode(const al_tokenizer *tok, const char *text, const char *text_pair,
                              const al_encode_options *opt, al_encoding *out, al_error *err) {
    memset(out, 0, sizeof *out);
    if (!tok || !text) return al_err(err, AL_ERR_INVALID, "encode: tokenizer and text are required");
    al_encode_options defaults = al_encode_default_options();
    if (!opt) opt = &defaults;
    al_pieces a = {0}, b = {0};
    al_status st = encode_sequence(tok, text, "text", tok->add_prefix_space, &a, err);
    if (st == AL_OK && text_pair) st = encode_sequence(tok, text_pair, "text_pair", tok->add_prefix_space, &b, err);
    if (st == AL_OK) st = finish(tok, &a, text_pair ? &b : NULL, opt, out, err);
    al_pieces_free(&a);
    al_pieces_free(&b);
    return st;
}

al_status al_tokenizer_encode_words(const al_tokenizer *tok, const char *const *words, int n_words,
                                    const al_encode_options *opt, al_encoding *out, al_error *err) {
    memset(out, 0, sizeof *out);
    if (!tok || n_words < 0 || (n_words > 0 && !words))
        return al_err(err, AL_ERR_INVALID, "encode_words: tokenizer and words are required");
    al_encode_options defaults = al_encode_default_options();
    if (!opt) opt = &defaults;
    /* Byte-level BPE needs a space before every word, as HF requires add_prefix_space for
     * is_split_into_words. */
    al_pieces a = {0};
    al_status st = AL_OK;
    for (int w = 0; w < n_words && st == AL_OK; w++) {
        if (!words[w]) {
            st = al_err(err, AL_ERR_INVALID, "encode_words: word %d is NULL", w);
            break;
        }
        char label[32];
        snprintf(label, sizeof label, "words[%d]", w);
        int before = a.n;
        st = encode_sequence(tok, words[w], label, 1, &a, err);
        for (int j = before; j < a.n; j++) a.word[j] = w;
    }
    if (st == AL_OK) st = finish(tok, &a, NULL, opt, out, err);
    al_pieces_free(&a);
    return st;
}

void al_encoding_free(al_encoding *enc) {
    if (!enc) return;
    free(enc->ids);
    free(enc->type_ids);
    free(enc->attention_mask);
    free(enc->special_mask);
    free(enc->word_ids);
    free(enc->sequence_ids);
    free(enc->offsets);
    memset(enc, 0, sizeof *enc);
}
