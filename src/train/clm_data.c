/* clm_data.c: causal language-model data (docs/decoder_pretraining.md): lines tokenised without special tokens,
 * each followed by the end-of-line token ([SEP] of the WordPiece vocabulary, GPT-2's <|endoftext|>), as one
 * stream cut into consecutive sequences of max_len tokens (a line may span two); the batches of such sequences
 * with their next-token labels; and the two baselines of the held-out perplexity, an add-one unigram model and a
 * Witten-Bell bigram model of the training stream. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/rng.h"
#include "pretrain.h"
#include "train.h"

static al_status oom(al_error *err) { return al_err(err, AL_ERR_OOM, "clm_data: out of memory"); }

typedef struct stream {
    al_mlm_corpus *c;
    int64_t cap;
    int32_t eol;
    int64_t max_lines;
} stream;

static int push(stream *s, int32_t id) {
    al_mlm_corpus *c = s->c;
    if (c->n_ids == s->cap) {
        const int64_t cap = s->cap ? s->cap * 2 : 1 << 16;
        int32_t *n = realloc(c->ids, sizeof *n * (size_t)cap);
        if (!n) return -1;
        c->ids = n;
        s->cap = cap;
    }
    c->ids[c->n_ids++] = id;
    return 0;
}

static al_status add_line(void *user, const char *line, size_t n, const al_encoding *enc, int *stop, al_error *err) {
    (void)line, (void)n;
    stream *s = user;
    al_mlm_corpus *c = s->c;
    if (enc->n_tokens == 0) return AL_OK;
    c->n_lines++;
    c->n_line_tokens += enc->n_tokens;
    int fail = 0;
    for (int i = 0; i < enc->n_tokens && !fail; i++) fail = push(s, enc->ids[i]);
    if (fail || push(s, s->eol)) return oom(err);
    *stop = s->max_lines > 0 && c->n_lines >= s->max_lines;
    return AL_OK;
}

al_status al_clm_corpus_build(const al_tokenizer *tok, const char *text, size_t len, int max_len, int64_t max_lines,
                              al_mlm_corpus *out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "clm_data: no output corpus");
    memset(out, 0, sizeof *out);
    if (!tok || (!text && len)) return al_err(err, AL_ERR_INVALID, "clm_data: tokenizer or text is NULL");
    if (max_len < 2) return al_err(err, AL_ERR_INVALID, "clm_data: max_len %d must be >= 2", max_len);
    const al_special_ids sp = al_tokenizer_special_ids(tok);
    if (sp.sep < 0 || sp.pad < 0)
        return al_err(err, AL_ERR_INVALID, "clm_data: the vocabulary needs [SEP] (the end of a line) and [PAD]");
    out->max_len = max_len;
    stream s = {out, 0, sp.sep, max_lines};
    al_status st = al_text_lines_encode(tok, text, len, add_line, &s, err);
    if (st) goto fail;
    for (int64_t i = 0; i < out->n_ids; i++) out->n_unk += out->ids[i] == sp.unk;
    /* a last piece of one token has nothing to predict */
    const int64_t n_seqs = out->n_ids / max_len + (out->n_ids % max_len > 1);
    if (n_seqs > 0x7fffffff) {
        st = al_err(err, AL_ERR_INVALID, "clm_data: %lld sequences are more than an int holds", (long long)n_seqs);
        goto fail;
    }
    out->n_seqs = (int)n_seqs;
    out->seq_start = malloc(sizeof *out->seq_start * (size_t)(n_seqs ? n_seqs : 1));
    out->seq_len = malloc(sizeof *out->seq_len * (size_t)(n_seqs ? n_seqs : 1));
    if (!out->seq_start || !out->seq_len) {
        st = oom(err);
        goto fail;
    }
    for (int64_t q = 0; q < n_seqs; q++) {
        const int64_t start = q * max_len, left = out->n_ids - start;
        out->seq_start[q] = start;
        out->seq_len[q] = (int32_t)(left < max_len ? left : max_len);
    }
    return AL_OK;
fail:
    al_mlm_corpus_free(out);
    return st;
}

/* Sequence b of a batch of n gets a span when round(share * n) spans spread evenly reach it. */
static int gets_copy(int b, int n, int k) { return (int64_t)(b + 1) * k / n > (int64_t)b * k / n; }

void al_clm_plan_copies(const al_mlm_corpus *c, const int *seq_index, int n, float share, uint64_t seed,
                        al_clm_copy *copies) {
    const int k = (int)((double)share * n + 0.5);
    al_rng rng;
    al_rng_seed(&rng, seed);
    for (int b = 0; b < n; b++) {
        const int len = c->seq_len[seq_index[b]];
        al_clm_copy *cp = &copies[b];
        memset(cp, 0, sizeof *cp);
        if (!gets_copy(b, n, k) || len < 16) continue;
        /* the length in [8, len / 2], the copy's start in [len_c, len - len_c], the source ending before it */
        cp->len = 8 + (int)al_rng_below(&rng, (uint32_t)(len / 2 - 8 + 1));
        cp->dst = cp->len + (int)al_rng_below(&rng, (uint32_t)(len - 2 * cp->len + 1));
        cp->src = (int)al_rng_below(&rng, (uint32_t)(cp->dst - cp->len + 1));
    }
}

al_status al_clm_make_batch(const al_mlm_corpus *c, const int *seq_index, int n, int pad_id, const al_clm_copy *copies,
                            al_mlm_batch *out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "clm_data: no output batch");
    memset(out, 0, sizeof *out);
    if (!c || !seq_index || n < 1) return al_err(err, AL_ERR_INVALID, "clm_data: a batch needs a corpus and sequences");
    int L = 2;
    for (int b = 0; b < n; b++) {
        if (seq_index[b] < 0 || seq_index[b] >= c->n_seqs)
            return al_err(err, AL_ERR_INVALID, "clm_data: sequence %d out of range [0, %d)", seq_index[b], c->n_seqs);
        if (c->seq_len[seq_index[b]] > L) L = c->seq_len[seq_index[b]];
    }
    const size_t total = (size_t)n * (size_t)L;
    out->B = n;
    out->L = L;
    out->ids = malloc(total * sizeof *out->ids);
    out->mask = calloc(total, sizeof *out->mask);
    out->labels = malloc(total * sizeof *out->labels);
    if (!out->ids || !out->mask || !out->labels) {
        al_mlm_batch_free(out);
        return oom(err);
    }
    for (int b = 0; b < n; b++) {
        const int len = c->seq_len[seq_index[b]];
        const int32_t *src = c->ids + c->seq_start[seq_index[b]];
        for (int i = 0; i < L; i++) {
            out->ids[(size_t)b * L + i] = i < len ? src[i] : pad_id;
            out->mask[(size_t)b * L + i] = i < len;
        }
        const al_clm_copy *cp = copies ? &copies[b] : NULL;
        if (cp && cp->len > 0) {
            if (cp->src < 0 || cp->src + cp->len > cp->dst || cp->dst + cp->len > len) {
                al_mlm_batch_free(out);
                return al_err(err, AL_ERR_INVALID, "clm_data: sequence %d: span [%d, %d) -> %d does not fit its %d tokens",
                              b, cp->src, cp->src + cp->len, cp->dst, len);
            }
            memcpy(out->ids + (size_t)b * L + cp->dst, src + cp->src, sizeof *src * (size_t)cp->len);
        }
        out->n_tokens += len;
        out->n_chosen += len - 1;
    }
    al_clm_labels(out->ids, out->mask, n, L, out->labels);
    return AL_OK;
}

/* ---------------------------------------------------------------- baselines */

static int cmp_u64(const void *a, const void *b) {
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void al_clm_baselines_free(al_clm_baselines *b) {
    if (!b) return;
    free(b->unigram);
    free(b->follow_total);
    free(b->follow_types);
    free(b->pairs);
    free(b->pair_count);
    memset(b, 0, sizeof *b);
}

al_status al_clm_baselines_build(const al_mlm_corpus *train, int V, al_clm_baselines *out, al_error *err) {
    memset(out, 0, sizeof *out);
    out->V = V;
    out->unigram = calloc((size_t)V, sizeof *out->unigram);
    out->follow_total = calloc((size_t)V, sizeof *out->follow_total);
    out->follow_types = calloc((size_t)V, sizeof *out->follow_types);
    /* the bigrams the model is trained on: consecutive tokens within one sequence */
    uint64_t *keys = malloc(sizeof *keys * (size_t)(train->n_ids ? train->n_ids : 1));
    if (!out->unigram || !out->follow_total || !out->follow_types || !keys) {
        free(keys);
        al_clm_baselines_free(out);
        return oom(err);
    }
    int64_t nk = 0;
    for (int q = 0; q < train->n_seqs; q++) {
        const int32_t *s = train->ids + train->seq_start[q];
        for (int i = 0; i + 1 < train->seq_len[q]; i++) {
            keys[nk++] = (uint64_t)s[i] * (uint64_t)V + (uint64_t)s[i + 1];
            out->unigram[s[i + 1]]++;
            out->total++;
        }
    }
    qsort(keys, (size_t)nk, sizeof *keys, cmp_u64);
    int64_t n_pairs = 0;
    for (int64_t i = 0; i < nk; i++)
        if (i == 0 || keys[i] != keys[i - 1]) keys[n_pairs++] = keys[i];
    /* counts again over the sorted distinct pairs (a second pass keeps the first one's memory small) */
    out->pairs = realloc(keys, sizeof *keys * (size_t)(n_pairs ? n_pairs : 1));
    out->pair_count = calloc((size_t)(n_pairs ? n_pairs : 1), sizeof *out->pair_count);
    out->n_pairs = n_pairs;
    if (!out->pairs || !out->pair_count) {
        if (!out->pairs) free(keys);
        al_clm_baselines_free(out);
        return oom(err);
    }
    for (int q = 0; q < train->n_seqs; q++) {
        const int32_t *s = train->ids + train->seq_start[q];
        for (int i = 0; i + 1 < train->seq_len[q]; i++) {
            const uint64_t k = (uint64_t)s[i] * (uint64_t)V + (uint64_t)s[i + 1];
            const uint64_t *hit = bsearch(&k, out->pairs, (size_t)n_pairs, sizeof k, cmp_u64);
            out->pair_count[hit - out->pairs]++;
        }
    }
    for (int64_t p = 0; p < n_pairs; p++) {
        const int prev = (int)(out->pairs[p] / (uint64_t)V);
        out->follow_total[prev] += out->pair_count[p];
        out->follow_types[prev]++;
    }
    return AL_OK;
}

double al_clm_unigram_prob(const al_clm_baselines *b, int next) {
    return ((double)b->unigram[next] + 1.0) / ((double)b->total + (double)b->V);
}

double al_clm_bigram_prob(const al_clm_baselines *b, int prev, int next) {
    /* Witten-Bell: P(w | v) = (c(v, w) + T(v) P_uni(w)) / (c(v) + T(v)), T(v) the distinct followers of v */
    const double uni = al_clm_unigram_prob(b, next);
    const double types = (double)b->follow_types[prev], total = (double)b->follow_total[prev];
    if (total == 0.0) return uni;
    const uint64_t k = (uint64_t)prev * (uint64_t)b->V + (uint64_t)next;
    const uint64_t *hit = bsearch(&k, b->pairs, (size_t)b->n_pairs, sizeof k, cmp_u64);
    const double c = hit ? (double)b->pair_count[hit - b->pairs] : 0.0;
    return (c + types * uni) / (total + types);
}
