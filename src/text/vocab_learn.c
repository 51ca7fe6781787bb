/* vocab_learn.c: learns a WordPiece vocabulary from plain text, the way the Hugging Face tokenizers
 * WordPieceTrainer does (it is its BPE trainer with a "##" continuing-subword prefix):
 *
 *  1. Every line is normalised and pre-tokenised as BERT does (tok_wordpiece.c): control characters
 *     dropped, lower-cased, accents stripped (canonical decomposition, combining marks Mn dropped), split
 *     on whitespace, each punctuation character and each CJK ideograph its own word. Words are counted.
 *  2. The alphabet is every character seen, cut to the alphabet_limit most frequent (ties: lower code
 *     point first). Words with a character outside it, or longer than 100 characters (the tokenizer's
 *     max_input_chars_per_word turns those into [UNK] anyway), take no part in the merges.
 *  3. Each word becomes its first character followed by "##"-prefixed characters. The vocabulary starts
 *     as [PAD] [UNK] [CLS] [SEP] [MASK], the characters, then the "##" characters (code point order).
 *  4. Repeatedly, the adjacent pair of symbols with the highest count (summed over words weighted by
 *     word frequency; ties: the pair of lower symbol ids) is merged everywhere, left to right without
 *     overlap; the new symbol is the left piece followed by the right piece without its "##". A merged
 *     string already in the vocabulary keeps its id. Until the vocabulary reaches vocab_size or no pair
 *     occurs min_frequency times.
 *
 * Pair counts are kept in a hash table and updated incrementally around each merge; the best pair comes
 * from a max-heap with lazy deletion (an entry whose count is no longer current is re-pushed with the
 * current count or dropped). Everything is integer arithmetic in a fixed order: deterministic. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "tok_internal.h"

#define MAX_WORD_CHARS 100

static const char *const k_specials[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};

al_vocab_learn_options al_vocab_learn_default_options(void) {
    al_vocab_learn_options o = {8000, 2, 1000};
    return o;
}

static al_status oom(al_error *err) { return al_err(err, AL_ERR_OOM, "vocab_learn: out of memory"); }

/* ---------------------------------------------------------------- word counting */

typedef struct word_counter {
    al_strmap ids;        /* word UTF-8 -> index */
    long long *counts;    /* [n] */
    int n, cap;
    long long n_words;
} word_counter;

static int count_word(word_counter *wc, const char *w, size_t len) {
    if (!len) return 0;
    wc->n_words++;
    int id = al_strmap_get(&wc->ids, w, len);
    if (id < 0) {
        if (wc->n == wc->cap) {
            int cap = wc->cap ? wc->cap * 2 : 4096;
            long long *c = realloc(wc->counts, sizeof *c * (size_t)cap);
            if (!c) return -1;
            wc->counts = c;
            wc->cap = cap;
        }
        id = wc->n++;
        wc->counts[id] = 0;
        if (al_strmap_put(&wc->ids, w, len, id)) return -1;
    }
    wc->counts[id]++;
    return 0;
}

/* Normalises and pre-tokenises one line, counting its words. -1: out of memory. */
static int count_line(word_counter *wc, const al_ntext *t, char *buf) {
    size_t len = 0;
    for (int i = 0; i < t->n; i++) {
        uint32_t cp = t->cp[i];
        if (cp == 0 || cp == 0xFFFD || al_bert_is_control(cp)) continue;
        uint32_t low[3], dec[4];
        int n_low = cp < 0x80 ? (low[0] = (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp, 1) : al_uc_lower(cp, low);
        for (int a = 0; a < n_low; a++) {
            int n_dec = low[a] < 0xC0 ? (dec[0] = low[a], 1) : al_uc_decompose(low[a], dec);
            for (int b = 0; b < n_dec; b++) {
                uint32_t c = dec[b];
                if (c >= 0x80 && al_uc_category(c) == AL_UC_MN) continue;
                if (al_uc_is_js_space(c)) {
                    if (count_word(wc, buf, len)) return -1;
                    len = 0;
                } else if (al_bert_is_punct(c) || al_bert_is_chinese_char(c)) {
                    char one[4];
                    if (count_word(wc, buf, len)) return -1;
                    len = 0;
                    if (count_word(wc, one, (size_t)al_utf8_encode(c, one))) return -1;
                } else {
                    len += (size_t)al_utf8_encode(c, buf + len);
                }
            }
        }
    }
    return count_word(wc, buf, len);
}

/* ---------------------------------------------------------------- pair counts and the heap */

typedef struct pair_table {
    uint64_t *keys;       /* (a + 1) << 32 | b; 0 marks an empty slot */
    long long *counts;
    size_t cap, used;
} pair_table;

static size_t pair_slot(const pair_table *p, uint64_t key) {
    uint64_t h = key * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 17) & (p->cap - 1);
    while (p->keys[i] && p->keys[i] != key) i = (i + 1) & (p->cap - 1);
    return i;
}

static int pair_grow(pair_table *p) {
    pair_table q = {0};
    q.cap = p->cap ? p->cap * 2 : 1 << 10; /* small first: most texts are short */
    q.keys = calloc(q.cap, sizeof *q.keys);
    q.counts = calloc(q.cap, sizeof *q.counts);
    if (!q.keys || !q.counts) {
        free(q.keys);
        free(q.counts);
        return -1;
    }
    for (size_t i = 0; i < p->cap; i++)
        if (p->keys[i]) {
            size_t j = pair_slot(&q, p->keys[i]);
            q.keys[j] = p->keys[i];
            q.counts[j] = p->counts[i];
        }
    q.used = p->used;
    free(p->keys);
    free(p->counts);
    *p = q;
    return 0;
}

static uint64_t pair_key(int a, int b) { return ((uint64_t)(uint32_t)(a + 1) << 32) | (uint32_t)b; }

static long long pair_get(const pair_table *p, int a, int b) {
    if (!p->cap) return 0;
    size_t i = pair_slot(p, pair_key(a, b));
    return p->keys[i] ? p->counts[i] : 0;
}

/* Adds delta; returns the new count, or -1 when out of memory. */
static long long pair_add(pair_table *p, int a, int b, long long delta) {
    if ((p->used + 1) * 2 > p->cap && pair_grow(p)) return -1;
    uint64_t key = pair_key(a, b);
    size_t i = pair_slot(p, key);
    if (!p->keys[i]) {
        p->keys[i] = key;
        p->counts[i] = 0;
        p->used++;
    }
    p->counts[i] += delta;
    return p->counts[i];
}

typedef struct heap_entry { long long count; int a, b; } heap_entry;
typedef struct pair_heap { heap_entry *e; size_t n, cap; } pair_heap;

/* x before y: higher count, then lower (a, b). */
static int heap_before(const heap_entry *x, const heap_entry *y) {
    if (x->count != y->count) return x->count > y->count;
    if (x->a != y->a) return x->a < y->a;
    return x->b < y->b;
}

static int heap_push(pair_heap *h, long long count, int a, int b) {
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 1 << 10;
        heap_entry *e = realloc(h->e, sizeof *e * cap);
        if (!e) return -1;
        h->e = e;
        h->cap = cap;
    }
    size_t i = h->n++;
    h->e[i] = (heap_entry){count, a, b};
    while (i > 0) {
        size_t up = (i - 1) / 2;
        if (!heap_before(&h->e[i], &h->e[up])) break;
        heap_entry t = h->e[i]; h->e[i] = h->e[up]; h->e[up] = t;
        i = up;
    }
    return 0;
}

static heap_entry heap_pop(pair_heap *h) {
    heap_entry top = h->e[0];
    h->e[0] = h->e[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, best = i;
        if (l < h->n && heap_before(&h->e[l], &h->e[best])) best = l;
        if (r < h->n && heap_before(&h->e[r], &h->e[best])) best = r;
        if (best == i) break;
        heap_entry t = h->e[i]; h->e[i] = h->e[best]; h->e[best] = t;
        i = best;
    }
    return top;
}

/* ---------------------------------------------------------------- the vocabulary under construction */

typedef struct token_table {
    char **str;
    int n, cap;
    al_strmap ids;
} token_table;

/* Returns the id of the string, adding it when new; -1 when out of memory. */
static int token_intern(token_table *t, const char *s, size_t len) {
    int id = al_strmap_get(&t->ids, s, len);
    if (id >= 0) return id;
    if (t->n == t->cap) {
        int cap = t->cap ? t->cap * 2 : 1024;
        char **p = realloc(t->str, sizeof *p * (size_t)cap);
        if (!p) return -1;
        t->str = p;
        t->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy) return -1;
    memcpy(copy, s, len);
    copy[len] = 0;
    if (al_strmap_put(&t->ids, s, len, t->n)) {
        free(copy);
        return -1;
    }
    t->str[t->n] = copy;
    return t->n++;
}

/* ---------------------------------------------------------------- the learner */

typedef struct learner {
    word_counter wc;
    char **word_str;       /* [wc.n] borrowed from wc.ids */
    uint32_t *alpha;       /* [n_alpha] the alphabet's code points, ascending (found by binary search) */
    int *first_id, *cont_id; /* [n_alpha] symbol of that character at a word start / inside */
    int n_alpha;
    token_table tokens;
    int32_t *sym;          /* symbols of all merging words back to back */
    size_t *word_start;    /* [n_merging] */
    int *word_len;         /* [n_merging] */
    long long *word_count; /* [n_merging] */
    int n_merging;
    int32_t *scratch;      /* [MAX_WORD_CHARS] */
    pair_table pairs;
    pair_heap heap;
} learner;

static void learner_free(learner *l) {
    al_strmap_free(&l->wc.ids);
    free(l->wc.counts);
    free(l->word_str);
    free(l->alpha);
    free(l->first_id);
    free(l->cont_id);
    for (int i = 0; i < l->tokens.n; i++) free(l->tokens.str[i]);
    free(l->tokens.str);
    al_strmap_free(&l->tokens.ids);
    free(l->sym);
    free(l->word_start);
    free(l->word_len);
    free(l->word_count);
    free(l->scratch);
    free(l->pairs.keys);
    free(l->pairs.counts);
    free(l->heap.e);
}

static al_status count_text(learner *l, const char *text, size_t len, al_vocab_learn_stats *st, al_error *err) {
    size_t longest = 0;
    for (size_t pos = 0, start = 0; pos <= len; pos++)
        if (pos == len || text[pos] == '\n') {
            if (pos - start > longest) longest = pos - start;
            start = pos + 1;
        }
    char *buf = malloc(longest * 12 + 16); /* one code point may grow to 3 lower-case x 4 decomposed */
    if (!buf) return oom(err);
    al_ntext t = {0};
    al_status status = AL_OK;
    size_t start = 0;
    while (start < len && status == AL_OK) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl ? (size_t)(nl - text) : len;
        int32_t bad = 0;
        t.n = 0;
        int rc = al_utf8_decode(text + start, end - start, &t, &bad);
        if (rc == -2) status = oom(err);
        else if (rc == -1) st->n_lines_skipped++;
        else if (count_line(&l->wc, &t, buf)) status = oom(err);
        start = end + 1;
    }
    al_ntext_free(&t);
    free(buf);
    return status;
}

typedef struct cp_rank { uint32_t cp; long long count; } cp_rank;

static int by_count_then_cp(const void *x, const void *y) {
    const cp_rank *a = x, *b = y;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    return a->cp < b->cp ? -1 : a->cp > b->cp;
}

static int by_cp(const void *x, const void *y) {
    const cp_rank *a = x, *b = y;
    return a->cp < b->cp ? -1 : a->cp > b->cp;
}

/* Decodes a (valid) word into code points; returns the count, or -1 when longer than MAX_WORD_CHARS. */
static int word_cps(const char *w, uint32_t *cps) {
    al_ntext t = {0};
    int32_t bad;
    int n = -1;
    if (al_utf8_decode(w, strlen(w), &t, &bad) == 0 && t.n <= MAX_WORD_CHARS) {
        memcpy(cps, t.cp, sizeof *cps * (size_t)t.n);
        n = t.n;
    }
    al_ntext_free(&t);
    return n;
}

/* Index of cp in the alphabet, or -1. */
static int alpha_index(const learner *l, uint32_t cp) {
    int lo = 0, hi = l->n_alpha - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (l->alpha[mid] == cp) return mid;
        if (l->alpha[mid] < cp) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* Counts every character of the words (weighted by word count) in a list sorted by code point: memory follows
 * the text, not the 0x110000 code points (a small text is learned in microseconds). */
static al_status build_alphabet(learner *l, const al_vocab_learn_options *opt, al_vocab_learn_stats *st,
                                al_error *err) {
    uint32_t cps[MAX_WORD_CHARS];
    l->word_str = calloc((size_t)(l->wc.n ? l->wc.n : 1), sizeof *l->word_str);
    if (!l->word_str) return oom(err);
    for (size_t i = 0; i < l->wc.ids.cap; i++)
        if (l->wc.ids.slots[i].key) l->word_str[l->wc.ids.slots[i].value] = l->wc.ids.slots[i].key;
    size_t n_chars = 0;
    for (int w = 0; w < l->wc.n; w++) {
        int n = word_cps(l->word_str[w], cps);
        if (n > 0) n_chars += (size_t)n;
    }
    cp_rank *rank = malloc(sizeof *rank * (n_chars ? n_chars : 1));
    if (!rank) return oom(err);
    size_t at = 0;
    for (int w = 0; w < l->wc.n; w++) {
        int n = word_cps(l->word_str[w], cps);
        for (int i = 0; i < n; i++) rank[at++] = (cp_rank){cps[i], l->wc.counts[w]};
    }
    qsort(rank, n_chars, sizeof *rank, by_cp);
    int k = 0; /* distinct characters with their summed counts */
    for (size_t i = 0; i < n_chars; i++) {
        if (k > 0 && rank[k - 1].cp == rank[i].cp) rank[k - 1].count += rank[i].count;
        else rank[k++] = rank[i];
    }
    qsort(rank, (size_t)k, sizeof *rank, by_count_then_cp);
    if (k > opt->alphabet_limit) k = opt->alphabet_limit;
    qsort(rank, (size_t)k, sizeof *rank, by_cp);
    st->n_alphabet = k;
    l->n_alpha = k;
    l->alpha = malloc(sizeof *l->alpha * (size_t)(k ? k : 1));
    l->first_id = malloc(sizeof *l->first_id * (size_t)(k ? k : 1));
    l->cont_id = malloc(sizeof *l->cont_id * (size_t)(k ? k : 1));
    if (!l->alpha || !l->first_id || !l->cont_id) {
        free(rank);
        return oom(err);
    }
    char buf[8] = "##";
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < k; i++) {
            int len = al_utf8_encode(rank[i].cp, buf + 2);
            int id = pass == 0 ? token_intern(&l->tokens, buf + 2, (size_t)len)
                               : token_intern(&l->tokens, buf, (size_t)len + 2);
            if (id < 0) {
                free(rank);
                return oom(err);
            }
            l->alpha[i] = rank[i].cp;
            (pass == 0 ? l->first_id : l->cont_id)[i] = id;
        }
    free(rank);
    return AL_OK;
}

static al_status build_words(learner *l, al_error *err) {
    uint32_t cps[MAX_WORD_CHARS];
    int idx[MAX_WORD_CHARS];
    size_t total = 0;
    int n_ok = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int w = 0; w < l->wc.n; w++) {
            int n = word_cps(l->word_str[w], cps);
            int ok = n > 0;
            for (int i = 0; ok && i < n; i++) ok = (idx[i] = alpha_index(l, cps[i])) >= 0;
            if (!ok) continue;
            if (pass == 0) {
                total += (size_t)n;
                n_ok++;
                continue;
            }
            int m = l->n_merging++;
            l->word_start[m] = total;
            l->word_len[m] = n;
            l->word_count[m] = l->wc.counts[w];
            for (int i = 0; i < n; i++) l->sym[total + (size_t)i] = i ? l->cont_id[idx[i]] : l->first_id[idx[i]];
            total += (size_t)n;
        }
        if (pass == 0) {
            l->sym = malloc(sizeof *l->sym * (total ? total : 1));
            l->word_start = malloc(sizeof *l->word_start * (size_t)(n_ok ? n_ok : 1));
            l->word_len = malloc(sizeof *l->word_len * (size_t)(n_ok ? n_ok : 1));
            l->word_count = malloc(sizeof *l->word_count * (size_t)(n_ok ? n_ok : 1));
            l->scratch = malloc(sizeof *l->scratch * MAX_WORD_CHARS);
            if (!l->sym || !l->word_start || !l->word_len || !l->word_count || !l->scratch) return oom(err);
            total = 0;
        }
    }
    /* initial pair counts */
    for (int m = 0; m < l->n_merging; m++) {
        const int32_t *s = l->sym + l->word_start[m];
        for (int i = 0; i + 1 < l->word_len[m]; i++)
            if (pair_add(&l->pairs, s[i], s[i + 1], l->word_count[m]) < 0) return oom(err);
    }
    for (size_t i = 0; i < l->pairs.cap; i++)
        if (l->pairs.keys[i]) {
            int a = (int)(l->pairs.keys[i] >> 32) - 1, b = (int)(uint32_t)l->pairs.keys[i];
            if (heap_push(&l->heap, l->pairs.counts[i], a, b)) return oom(err);
        }
    return AL_OK;
}

/* Adds delta to a pair and, when it grew, pushes its new count. -1: out of memory. */
static int update_pair(learner *l, int a, int b, long long delta) {
    long long c = pair_add(&l->pairs, a, b, delta);
    if (c < 0) return -1;
    return delta > 0 ? heap_push(&l->heap, c, a, b) : 0;
}

/* Replaces every (a, b) by c in every merging word and updates the pair counts around each place. */
static int apply_merge(learner *l, int a, int b, int c) {
    for (int m = 0; m < l->n_merging; m++) {
        int32_t *s = l->sym + l->word_start[m];
        int n = l->word_len[m], out = 0, found = 0;
        for (int i = 0; i + 1 < n; i++)
            if (s[i] == a && s[i + 1] == b) {
                found = 1;
                break;
            }
        if (!found) continue;
        long long cnt = l->word_count[m];
        int32_t *o = l->scratch;
        for (int i = 0; i < n;) {
            if (i + 1 < n && s[i] == a && s[i + 1] == b) {
                if (out > 0 && (update_pair(l, o[out - 1], a, -cnt) || update_pair(l, o[out - 1], c, cnt))) return -1;
                if (i + 2 < n && (update_pair(l, b, s[i + 2], -cnt) || update_pair(l, c, s[i + 2], cnt))) return -1;
                if (update_pair(l, a, b, -cnt)) return -1;
                o[out++] = c;
                i += 2;
            } else {
                o[out++] = s[i++];
            }
        }
        memcpy(s, o, sizeof *s * (size_t)out);
        l->word_len[m] = out;
    }
    return 0;
}

static al_status merge_loop(learner *l, const al_vocab_learn_options *opt, al_vocab_learn_stats *st, al_error *err) {
    char *buf = NULL;
    size_t cap = 0;
    while (l->tokens.n < opt->vocab_size && l->heap.n) {
        heap_entry top = heap_pop(&l->heap);
        long long cur = pair_get(&l->pairs, top.a, top.b);
        if (cur != top.count) { /* stale: re-queue with the current count if it still occurs */
            if (cur > 0 && cur < top.count && heap_push(&l->heap, cur, top.a, top.b)) goto fail;
            continue;
        }
        if (cur < opt->min_frequency || cur <= 0) break;
        const char *sa = l->tokens.str[top.a], *sb = l->tokens.str[top.b];
        size_t la = strlen(sa), lb = strlen(sb);
        if (lb >= 2 && sb[0] == '#' && sb[1] == '#') {
            sb += 2;
            lb -= 2;
        }
        if (la + lb + 1 > cap) {
            cap = (la + lb + 1) * 2;
            char *nb = realloc(buf, cap);
            if (!nb) goto fail;
            buf = nb;
        }
        memcpy(buf, sa, la);
        memcpy(buf + la, sb, lb);
        int c = token_intern(&l->tokens, buf, la + lb);
        if (c < 0 || apply_merge(l, top.a, top.b, c)) goto fail;
        st->n_merges++;
    }
    free(buf);
    return AL_OK;
fail:
    free(buf);
    return oom(err);
}

al_status al_vocab_learn(const char *text, size_t len, const al_vocab_learn_options *opt, char **out_vocab,
                         size_t *out_len, al_vocab_learn_stats *stats, al_error *err) {
    if (!out_vocab || !out_len) return al_err(err, AL_ERR_INVALID, "vocab_learn: no output pointer");
    *out_vocab = NULL;
    *out_len = 0;
    al_vocab_learn_options o = opt ? *opt : al_vocab_learn_default_options();
    if (!text && len) return al_err(err, AL_ERR_INVALID, "vocab_learn: text is NULL");
    if (o.vocab_size < 6 || o.vocab_size > 1 << 22)
        return al_err(err, AL_ERR_INVALID, "vocab_learn: vocab_size %d must be in [6, 4194304]", o.vocab_size);
    if (o.alphabet_limit < 1) return al_err(err, AL_ERR_INVALID, "vocab_learn: alphabet_limit must be >= 1");
    if (o.min_frequency < 1) o.min_frequency = 1;
    al_vocab_learn_stats st;
    memset(&st, 0, sizeof st);
    learner l;
    memset(&l, 0, sizeof l);
    al_status status = AL_OK;
    for (int i = 0; i < 5 && status == AL_OK; i++)
        if (token_intern(&l.tokens, k_specials[i], strlen(k_specials[i])) < 0) status = oom(err);
    if (!status) status = count_text(&l, text, len, &st, err);
    if (!status) status = build_alphabet(&l, &o, &st, err);
    if (!status) status = build_words(&l, err);
    if (!status) status = merge_loop(&l, &o, &st, err);
    if (!status) {
        size_t total = 0;
        for (int i = 0; i < l.tokens.n; i++) total += strlen(l.tokens.str[i]) + 1;
        char *v = malloc(total + 1);
        if (!v) {
            status = oom(err);
        } else {
            size_t pos = 0;
            for (int i = 0; i < l.tokens.n; i++) {
                size_t n = strlen(l.tokens.str[i]);
                memcpy(v + pos, l.tokens.str[i], n);
                pos += n;
                v[pos++] = '\n';
            }
            v[pos] = 0;
            *out_vocab = v;
            *out_len = pos;
        }
    }
    st.n_words = l.wc.n_words;
    st.n_word_types = l.wc.n;
    if (stats) *stats = st;
    learner_free(&l);
    return status;
}
