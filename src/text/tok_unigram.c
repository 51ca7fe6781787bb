/* tok_unigram.c: the Unigram model of SentencePiece (spm.model) and of tokenizer.json, on one plain
 * section. Normalisation follows SentencePiece's Normalizer: the precompiled charsmap's longest rule at
 * each point, leading/trailing/repeated spaces removed (remove_extra_whitespaces), a "▁" in front
 * (add_dummy_prefix) and every space written "▁" (escape_whitespaces). The segmentation is the best path
 * of the lattice of matching pieces by summed log-probability (float sums; on equal scores the path
 * found first, i.e. the earliest start, stays), as SentencePiece's EncodeOptimized; a character no piece
 * covers is unknown (score min - 10), then becomes its bytes' <0xNN> pieces under byte_fallback, else
 * [UNK] (consecutive unknowns fused into one, as Hugging Face's fuse_unk). A piece starting with "▁"
 * starts a new word (docs/tokenizers.md). */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "tok_internal.h"

static al_status oom(al_error *err) { return al_err(err, AL_ERR_OOM, "tokenizer: out of memory"); }

static const char SPACE_SYMBOL[] = "\xe2\x96\x81"; /* U+2581 ▁ */

int al_unigram_alloc(al_tokenizer *tok, int n) {
    tok->piece_score = calloc((size_t)n, sizeof *tok->piece_score);
    tok->piece_type = calloc((size_t)n, sizeof *tok->piece_type);
    tok->n_pieces = n;
    return tok->piece_score && tok->piece_type ? 0 : -1;
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int matchable(int type) { return type == AL_SPM_NORMAL || type == AL_SPM_USER_DEFINED; }

void al_tok_find_byte_pieces(al_tokenizer *tok) {
    for (int b = 0; b < 256; b++) tok->byte_ids[b] = -1;
    /* a SentencePiece model's byte pieces are BYTE (or NORMAL) pieces; a tokenizer.json's any token */
    const int n = tok->piece_type ? tok->n_pieces : tok->vocab_size;
    for (int i = 0; i < n; i++) {
        const char *s = tok->vocab[i];
        int t = tok->piece_type ? tok->piece_type[i] : AL_SPM_NORMAL;
        if (s && (t == AL_SPM_BYTE || t == AL_SPM_NORMAL) && strlen(s) == 6 && memcmp(s, "<0x", 3) == 0 &&
            s[5] == '>' && hex_digit(s[3]) >= 0 && hex_digit(s[4]) >= 0) {
            int b = hex_digit(s[3]) * 16 + hex_digit(s[4]);
            if (tok->byte_ids[b] < 0) tok->byte_ids[b] = i;
        }
    }
}

void al_unigram_finish(al_tokenizer *tok) {
    al_tok_find_byte_pieces(tok);
    int have = 0;
    tok->max_piece_bytes = 1;
    for (int i = 0; i < tok->n_pieces; i++) {
        const char *s = tok->vocab[i];
        int t = tok->piece_type[i];
        if (!s) continue;
        if (!matchable(t)) continue;
        int len = (int)strlen(s);
        if (len > tok->max_piece_bytes) tok->max_piece_bytes = len;
        if (t != AL_SPM_NORMAL) continue;
        float sc = tok->piece_score[i];
        if (!have || sc < tok->min_score) tok->min_score = sc;
        if (!have || sc > tok->max_score) tok->max_score = sc;
        have = 1;
    }
}

/* Normalised bytes, each with the source byte span it came from. */
typedef struct norm_bytes { char *b; int32_t *start, *end; int n, cap; } norm_bytes;

static int nb_push(norm_bytes *o, char c, int32_t s, int32_t e) {
    if (o->n == o->cap) {
        int cap = o->cap ? 2 * o->cap : 64;
        char *b = realloc(o->b, (size_t)cap);
        if (b) o->b = b;
        int32_t *st = realloc(o->start, (size_t)cap * sizeof *st);
        if (st) o->start = st;
        int32_t *en = realloc(o->end, (size_t)cap * sizeof *en);
        if (en) o->end = en;
        if (!b || !st || !en) return -1;
        o->cap = cap;
    }
    o->b[o->n] = c;
    o->start[o->n] = s;
    o->end[o->n] = e;
    o->n++;
    return 0;
}

static void nb_free(norm_bytes *o) {
    free(o->b);
    free(o->start);
    free(o->end);
}

/* Bytes of the UTF-8 sequence led by c (1 for a stray continuation byte). */
static int utf8_len(unsigned char c) { return c < 0xc0 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4; }

/* SentencePiece's NormalizePrefix: the rule's replacement, or the character itself. */
static size_t norm_prefix(const al_tokenizer *tok, const uint8_t *in, size_t n, const char **repl, size_t *rlen) {
    size_t m = al_spm_charsmap_match(tok, in, n, repl);
    if (m) {
        *rlen = strlen(*repl);
        return m;
    }
    size_t c = (size_t)utf8_len(in[0]);
    if (c > n) c = n;
    *repl = (const char *)in;
    *rlen = c;
    return c;
}

static int normalize(const al_tokenizer *tok, const al_ntext *t, norm_bytes *out) {
    /* the section's UTF-8 bytes, each with its code point's source span */
    norm_bytes in = {0};
    for (int i = 0; i < t->n; i++) {
        char buf[4];
        int k = al_utf8_encode(t->cp[i], buf);
        for (int j = 0; j < k; j++)
            if (nb_push(&in, buf[j], t->start[i], t->end[i])) return nb_free(&in), -1;
    }
    const uint8_t *s = (const uint8_t *)in.b;
    size_t n = (size_t)in.n, pos = 0;
    const char *repl;
    size_t rlen;
    if (tok->remove_extra_whitespaces)
        while (pos < n) {
            size_t used = norm_prefix(tok, s + pos, n - pos, &repl, &rlen);
            if (!(rlen == 1 && repl[0] == ' ')) break;
            pos += used;
        }
    int rc = 0;
    if (pos < n && tok->add_dummy_prefix) {
        if (tok->escape_whitespaces)
            for (int k = 0; k < 3 && !rc; k++) rc = nb_push(out, SPACE_SYMBOL[k], in.start[pos], in.start[pos]);
        else rc = nb_push(out, ' ', in.start[pos], in.start[pos]);
    }
    int prev_space = tok->remove_extra_whitespaces;
    while (pos < n && !rc) {
        size_t used = norm_prefix(tok, s + pos, n - pos, &repl, &rlen);
        int32_t from = in.start[pos], to = in.end[pos + used - 1];
        if (prev_space)
            while (rlen && repl[0] == ' ') repl++, rlen--;
        if (rlen) {
            for (size_t k = 0; k < rlen && !rc; k++) {
                if (tok->escape_whitespaces && repl[k] == ' ')
                    for (int q = 0; q < 3 && !rc; q++) rc = nb_push(out, SPACE_SYMBOL[q], from, to);
                else rc = nb_push(out, repl[k], from, to);
            }
            prev_space = repl[rlen - 1] == ' ';
        }
        pos += used;
        if (!tok->remove_extra_whitespaces) prev_space = 0;
    }
    if (tok->remove_extra_whitespaces) {
        const char *sp = tok->escape_whitespaces ? SPACE_SYMBOL : " ";
        int sl = tok->escape_whitespaces ? 3 : 1;
        while (out->n >= sl && memcmp(out->b + out->n - sl, sp, (size_t)sl) == 0) out->n -= sl;
    }
    nb_free(&in);
    return rc;
}

int al_spm_normalize(const al_tokenizer *tok, const al_ntext *in, al_ntext *out) {
    norm_bytes t = {0};
    int rc = normalize(tok, in, &t);
    al_ntext chars = {0};
    int32_t bad = 0;
    /* the normalised bytes are whole UTF-8 characters (the input was valid, the charsmap's strings are checked) */
    if (!rc) rc = al_utf8_decode(t.b ? t.b : "", (size_t)t.n, &chars, &bad) ? -1 : 0;
    for (int i = 0, b = 0; !rc && i < chars.n; i++) {
        int first = b;
        b += chars.end[i] - chars.start[i];
        rc = al_ntext_push(out, chars.cp[i], t.start[first], t.end[b - 1]);
    }
    al_ntext_free(&chars);
    nb_free(&t);
    return rc;
}

/* The lattice's best path into each byte position. */
typedef struct best_node { float score; int id, from, reached; } best_node;

/* Character length at pos, clipped to the text. */
static int char_len(const norm_bytes *t, int pos) {
    int c = utf8_len((unsigned char)t->b[pos]);
    return c > t->n - pos ? t->n - pos : c;
}

static int count_chars(const char *s, int len) {
    int c = 0;
    for (int i = 0; i < len; i++) c += ((unsigned char)s[i] & 0xc0) != 0x80;
    return c;
}

static al_status viterbi(const al_tokenizer *tok, const norm_bytes *t, best_node *best) {
    const float unk_score = tok->min_score - 10.0f;
    best[0].reached = 1;
    for (int pos = 0; pos < t->n; pos += char_len(t, pos)) {
        if (!best[pos].reached) continue;
        const int first = char_len(t, pos);
        int has_single = 0;
        for (int len = first; len <= tok->max_piece_bytes && pos + len <= t->n;) {
            int id = al_strmap_get(&tok->token_ids, t->b + pos, (size_t)len);
            if (id >= 0 && id < tok->n_pieces && matchable(tok->piece_type[id])) {
                /* a user-defined piece always wins (SentencePiece) */
                float score = tok->piece_type[id] == AL_SPM_USER_DEFINED
                                  ? (float)count_chars(t->b + pos, len) * tok->max_score - 0.1f
                                  : tok->piece_score[id];
                float cand = best[pos].score + score;
                best_node *e = &best[pos + len];
                if (!e->reached || cand > e->score) *e = (best_node){cand, id, pos, 1};
                if (len == first) has_single = 1;
            }
            if (pos + len >= t->n) break;
            len += char_len(t, pos + len);
        }
        if (!has_single) {
            float cand = best[pos].score + unk_score;
            best_node *e = &best[pos + first];
            if (!e->reached || cand > e->score) *e = (best_node){cand, -1, pos, 1};
        }
    }
    return AL_OK;
}

al_status al_unigram_section(const al_tokenizer *tok, const al_ntext *text, al_pieces *out, al_error *err) {
    norm_bytes t = {0};
    if (normalize(tok, text, &t)) return nb_free(&t), oom(err);
    if (t.n == 0) return nb_free(&t), AL_OK;
    best_node *best = calloc((size_t)t.n + 1, sizeof *best);
    int *path = malloc(((size_t)t.n + 1) * sizeof *path);
    al_status st = AL_OK;
    if (!best || !path) {
        st = oom(err);
        goto done;
    }
    viterbi(tok, &t, best);
    int np = 0; /* the path's end positions, last first */
    for (int e = t.n; e > 0; e = best[e].from) path[np++] = e;
    int prev_unk = 0;
    for (int k = np - 1; k >= 0 && st == AL_OK; k--) {
        const int e = path[k], s = best[e].from, id = best[e].id;
        const int32_t src_start = t.start[s], src_end = t.end[e - 1];
        if (k == np - 1 || (e - s >= 3 && memcmp(t.b + s, SPACE_SYMBOL, 3) == 0)) out->n_words++;
        const int word = out->n_words - 1;
        if (id >= 0) {
            if (al_pieces_push(out, id, src_start, src_end, word, 0)) st = oom(err);
            prev_unk = 0;
        } else if (tok->byte_fallback) {
            for (int b = s; b < e && st == AL_OK; b++) {
                int bid = tok->byte_ids[(unsigned char)t.b[b]];
                if (al_pieces_push(out, bid >= 0 ? bid : tok->unk_id, src_start, src_end, word, 0)) st = oom(err);
            }
        } else if (prev_unk && out->n) {
            out->end[out->n - 1] = src_end;
        } else {
            if (al_pieces_push(out, tok->unk_id, src_start, src_end, word, 0)) st = oom(err);
            prev_unk = 1;
        }
    }
done:
    free(best);
    free(path);
    nb_free(&t);
    return st;
}
