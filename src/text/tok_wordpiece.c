/* tok_wordpiece.c: BERT tokenization of one plain section, as the Hugging Face JS library does it:
 * BertNormalizer (clean text, CJK spacing, lower-case then NFD and drop Mn), BertPreTokenizer
 * (split on whitespace, each punctuation character a word), then greedy longest-match-first
 * WordPiece with the "##" continuation prefix. Every code point keeps the byte span it came from.
 *
 * Where the JS library (our oracle) and Python's BertTokenizer differ, we follow JS:
 *  - control characters are Cc/Cf/Co/Cs; Python also drops unassigned (Cn) code points;
 *  - CJK spacing walks UTF-16 code units, so ideographs outside the BMP (U+20000...) stay unspaced;
 *  - whitespace is JavaScript's \s (adds U+2028/U+2029 to Python's space/tab/newline/Zs);
 *  - lower-casing is String.prototype.toLowerCase: full mappings (U+0130 -> i + U+0307) and
 *    Final_Sigma (Rust's tokenizers lower-case char by char, without Final_Sigma). */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "tok_internal.h"

static al_status oom(al_error *err) { return al_err(err, AL_ERR_OOM, "tokenizer: out of memory"); }

static al_status normalize(const al_tokenizer *tok, const al_ntext *in, al_ntext *out, al_error *err) {
    al_ntext a = {0}, b = {0};
    /* clean text + CJK spacing */
    for (int i = 0; i < in->n; i++) {
        uint32_t cp = in->cp[i];
        int32_t s = in->start[i], e = in->end[i];
        if (tok->clean_text) {
            if (cp == 0 || cp == 0xFFFD || al_bert_is_control(cp)) continue;
            if (al_uc_is_js_space(cp)) cp = ' ';
        }
        /* The JS library walks UTF-16 code units here, so ideographs outside the BMP stay unspaced. */
        if (tok->handle_chinese_chars && cp < 0x10000 && al_bert_is_chinese_char(cp)) {
            if (al_ntext_push(&a, ' ', s, e) || al_ntext_push(&a, cp, s, e) || al_ntext_push(&a, ' ', s, e)) goto fail;
        } else if (al_ntext_push(&a, cp, s, e)) {
            goto fail;
        }
    }
    if (tok->lowercase) {
        for (int i = 0; i < a.n; i++) {
            uint32_t m[3];
            int n = al_uc_lower_in_context(a.cp, a.n, i, m);
            for (int k = 0; k < n; k++)
                if (al_ntext_push(&b, m[k], a.start[i], a.end[i])) goto fail;
        }
        al_ntext_free(&a);
        a = b;
        b = (al_ntext){0};
    }
    if (tok->strip_accents) { /* NFD (decompose, then canonical order), then drop Mn */
        for (int i = 0; i < a.n; i++) {
            uint32_t d[4];
            int n = a.cp[i] < 0xC0 ? (d[0] = a.cp[i], 1) : al_uc_decompose(a.cp[i], d);
            for (int k = 0; k < n; k++) {
                if (al_ntext_push(&b, d[k], a.start[i], a.end[i])) goto fail;
                int ccc = al_uc_ccc(d[k]);
                for (int j = b.n - 1; ccc && j > 0 && al_uc_ccc(b.cp[j - 1]) > ccc; j--) {
                    uint32_t t = b.cp[j]; b.cp[j] = b.cp[j - 1]; b.cp[j - 1] = t;
                    int32_t ts = b.start[j]; b.start[j] = b.start[j - 1]; b.start[j - 1] = ts;
                    int32_t te = b.end[j]; b.end[j] = b.end[j - 1]; b.end[j - 1] = te;
                }
            }
        }
        al_ntext_free(&a);
        for (int i = 0; i < b.n; i++)
            if (al_uc_category(b.cp[i]) != AL_UC_MN && al_ntext_push(out, b.cp[i], b.start[i], b.end[i])) goto fail;
        al_ntext_free(&b);
        return AL_OK;
    }
    *out = a;
    return AL_OK;
fail:
    al_ntext_free(&a);
    al_ntext_free(&b);
    return oom(err);
}

/* Greedy longest-match-first over the code points [from, to) of one word. */
static al_status wordpiece_word(const al_tokenizer *tok, const al_ntext *t, int from, int to, al_pieces *out,
                                al_error *err) {
    int word = out->n_words++;
    int n = to - from;
    if (n > tok->max_input_chars_per_word) {
        if (al_pieces_push(out, tok->unk_id, t->start[from], t->end[to - 1], word, 0)) return oom(err);
        return AL_OK;
    }
    size_t plen = strlen(tok->continuing_prefix);
    /* UTF-8 of the word, the byte position of each code point, and a scratch key buffer */
    char *utf8 = malloc((size_t)n * 4 + 1), *key = malloc(plen + (size_t)n * 4 + 1);
    int *pos = malloc(sizeof(int) * (size_t)(n + 1));
    al_status st = AL_OK;
    if (!utf8 || !key || !pos) {
        st = oom(err);
        goto done;
    }
    int len = 0;
    for (int i = 0; i < n; i++) {
        pos[i] = len;
        len += al_utf8_encode(t->cp[from + i], utf8 + len);
    }
    pos[n] = len;
    memcpy(key, tok->continuing_prefix, plen);
    int mark = out->n, start = 0;
    while (start < n) {
        int end = n, id = -1;
        for (; end > start; end--) {
            size_t piece = (size_t)(pos[end] - pos[start]);
            if (start) {
                memcpy(key + plen, utf8 + pos[start], piece);
                id = al_strmap_get(&tok->token_ids, key, plen + piece);
            } else {
                id = al_strmap_get(&tok->token_ids, utf8, piece);
            }
            if (id >= 0) break;
        }
        if (id < 0) { /* a piece matches nothing: the whole word is [UNK] */
            out->n = mark;
            if (al_pieces_push(out, tok->unk_id, t->start[from], t->end[to - 1], word, 0)) st = oom(err);
            goto done;
        }
        if (al_pieces_push(out, id, t->start[from + start], t->end[from + end - 1], word, 0)) {
            st = oom(err);
            goto done;
        }
        start = end;
    }
done:
    free(utf8);
    free(key);
    free(pos);
    return st;
}

al_status al_wordpiece_section(const al_tokenizer *tok, const al_ntext *text, al_pieces *out, al_error *err) {
    al_ntext norm = {0};
    al_status st = normalize(tok, text, &norm, err);
    if (st) return st;
    /* BertPreTokenizer: runs of non-space non-punctuation, and single punctuation characters */
    int i = 0;
    while (i < norm.n && st == AL_OK) {
        uint32_t cp = norm.cp[i];
        if (al_uc_is_js_space(cp)) {
            i++;
        } else if (al_bert_is_punct(cp)) {
            st = wordpiece_word(tok, &norm, i, i + 1, out, err);
            i++;
        } else {
            int j = i;
            while (j < norm.n && !al_uc_is_js_space(norm.cp[j]) && !al_bert_is_punct(norm.cp[j])) j++;
            st = wordpiece_word(tok, &norm, i, j, out, err);
            i = j;
        }
    }
    al_ntext_free(&norm);
    return st;
}
