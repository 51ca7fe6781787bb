/* mlm_data.c: masked-language-model data: lines tokenised and packed into [CLS] ... [SEP] sequences,
 * epoch orders and BERT's 80/10/10 masking, every draw from a seeded al_rng. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "pretrain.h"
#include "train.h"

static al_status oom(al_error *err) { return al_err(err, AL_ERR_OOM, "mlm_data: out of memory"); }

void al_mlm_corpus_free(al_mlm_corpus *c) {
    if (!c) return;
    free(c->ids);
    free(c->seq_start);
    free(c->seq_len);
    memset(c, 0, sizeof *c);
}

typedef struct packer {
    al_mlm_corpus *c;
    int64_t ids_cap;
    int seqs_cap;
    int cur_len;      /* tokens of the open sequence (0: none open) */
} packer;

static int push_id(packer *p, int32_t id) {
    al_mlm_corpus *c = p->c;
    if (c->n_ids == p->ids_cap) {
        int64_t cap = p->ids_cap ? p->ids_cap * 2 : 1 << 16;
        int32_t *n = realloc(c->ids, sizeof *n * (size_t)cap);
        if (!n) return -1;
        c->ids = n;
        p->ids_cap = cap;
    }
    c->ids[c->n_ids++] = id;
    p->cur_len++;
    return 0;
}

static int open_seq(packer *p, int cls) {
    al_mlm_corpus *c = p->c;
    if (c->n_seqs == p->seqs_cap) {
        int cap = p->seqs_cap ? p->seqs_cap * 2 : 1024;
        int64_t *s = realloc(c->seq_start, sizeof *s * (size_t)cap);
        if (!s) return -1;
        c->seq_start = s;
        int32_t *l = realloc(c->seq_len, sizeof *l * (size_t)cap);
        if (!l) return -1;
        c->seq_len = l;
        p->seqs_cap = cap;
    }
    c->seq_start[c->n_seqs] = c->n_ids;
    c->seq_len[c->n_seqs] = 0;
    c->n_seqs++;
    p->cur_len = 0;
    return push_id(p, cls);
}

static void close_seq(packer *p) {
    if (p->cur_len > 0) p->c->seq_len[p->c->n_seqs - 1] = p->cur_len;
    p->cur_len = 0;
}

typedef struct pack_ctx {
    packer *p;
    al_special_ids sp;
    int max_len;
    int64_t max_lines;
} pack_ctx;

/* One line into the open sequence, [CLS] first and [SEP] after the line; a line that does not fit closes
 * the sequence first, and a line longer than a sequence is cut to max_len - 2 tokens. */
static al_status pack_line(void *user, const char *line, size_t n, const al_encoding *enc, int *stop, al_error *err) {
    (void)line, (void)n;
    pack_ctx *c = user;
    packer *p = c->p;
    al_mlm_corpus *out = p->c;
    if (enc->n_tokens == 0) return AL_OK;
    out->n_lines++;
    out->n_line_tokens += enc->n_tokens;
    for (int i = 0; i < enc->n_tokens; i++) out->n_unk += enc->ids[i] == c->sp.unk;
    const int take = enc->n_tokens < c->max_len - 2 ? enc->n_tokens : c->max_len - 2;
    if (p->cur_len > 0 && p->cur_len + take + 1 > c->max_len) close_seq(p);
    int fail = p->cur_len == 0 && open_seq(p, c->sp.cls);
    for (int i = 0; !fail && i < take; i++) fail = push_id(p, enc->ids[i]);
    if (!fail) fail = push_id(p, c->sp.sep);
    if (fail) return oom(err);
    *stop = c->max_lines > 0 && out->n_lines >= c->max_lines;
    return AL_OK;
}

al_status al_mlm_corpus_build(const al_tokenizer *tok, const char *text, size_t len, int max_len,
                              int64_t max_lines, al_mlm_corpus *out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "mlm_data: no output corpus");
    memset(out, 0, sizeof *out);
    if (!tok || (!text && len)) return al_err(err, AL_ERR_INVALID, "mlm_data: tokenizer or text is NULL");
    if (max_len < 3) return al_err(err, AL_ERR_INVALID, "mlm_data: max_len %d must be >= 3", max_len);
    al_special_ids sp = al_tokenizer_special_ids(tok);
    if (sp.cls < 0 || sp.sep < 0 || sp.pad < 0 || sp.mask < 0)
        return al_err(err, AL_ERR_INVALID, "mlm_data: the vocabulary needs [CLS], [SEP], [PAD] and [MASK]");
    out->max_len = max_len;
    packer p = {out, 0, 0, 0};
    pack_ctx c = {&p, sp, max_len, max_lines};
    al_status st = al_text_lines_encode(tok, text, len, pack_line, &c, err);
    close_seq(&p);
    if (st) al_mlm_corpus_free(out);
    return st;
}

/* The vocabulary's leading block of bracketed tokens: the five specials of a vocab.txt written by
 * al_vocab_learn; [PAD], [unused0..98], [UNK], [CLS], [SEP], [MASK], [unused99..993] (999 ids) in
 * bert-base-uncased's; <s> <pad> </s> <unk> in RoBERTa's. None of them is ever masked or drawn as a random
 * replacement. */
int al_mlm_leading_specials(const al_tokenizer *tok) {
    const int V = al_tokenizer_vocab_size(tok);
    int n = 0;
    for (; n < V; n++) {
        const char *t = al_tokenizer_id_to_token(tok, n);
        size_t len = t ? strlen(t) : 0;
        int bracketed = len >= 3 && ((t[0] == '[' && t[len - 1] == ']') || (t[0] == '<' && t[len - 1] == '>'));
        if (!bracketed) break;
    }
    return n;
}

al_mlm_masking al_mlm_default_masking(const al_tokenizer *tok) {
    al_mlm_masking m;
    m.mask_prob = 0.15f;
    m.replace_mask = 0.8f;
    m.replace_random = 0.1f;
    al_special_ids sp = al_tokenizer_special_ids(tok);
    m.mask_id = sp.mask;
    m.vocab_size = al_tokenizer_vocab_size(tok);
    m.n_special = al_mlm_leading_specials(tok);
    return m;
}

void al_mlm_batch_free(al_mlm_batch *b) {
    if (!b) return;
    free(b->ids);
    free(b->mask);
    free(b->labels);
    memset(b, 0, sizeof *b);
}

al_status al_mlm_make_batch(const al_mlm_corpus *c, const int *seq_index, int n, const al_mlm_masking *m,
                            al_rng *rng, al_mlm_batch *out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "mlm_data: no output batch");
    memset(out, 0, sizeof *out);
    if (!c || !seq_index || !m || !rng || n < 1)
        return al_err(err, AL_ERR_INVALID, "mlm_data: batch needs a corpus, sequences, masking and rng");
    if (m->vocab_size <= m->n_special || m->mask_id < 0 || m->mask_id >= m->vocab_size)
        return al_err(err, AL_ERR_INVALID, "mlm_data: masking has vocab_size %d, n_special %d, mask_id %d",
                      m->vocab_size, m->n_special, m->mask_id);
    int L = 1;
    for (int b = 0; b < n; b++) {
        if (seq_index[b] < 0 || seq_index[b] >= c->n_seqs)
            return al_err(err, AL_ERR_INVALID, "mlm_data: sequence %d out of range [0, %d)", seq_index[b], c->n_seqs);
        if (c->seq_len[seq_index[b]] > L) L = c->seq_len[seq_index[b]];
    }
    size_t total = (size_t)n * (size_t)L;
    out->B = n;
    out->L = L;
    out->ids = calloc(total, sizeof *out->ids);
    out->mask = calloc(total, sizeof *out->mask);
    out->labels = malloc(total * sizeof *out->labels);
    int *cand = malloc(sizeof *cand * (size_t)L);
    if (!out->ids || !out->mask || !out->labels || !cand) {
        free(cand);
        al_mlm_batch_free(out);
        return oom(err);
    }
    for (size_t i = 0; i < total; i++) out->labels[i] = AL_IGNORE_INDEX;
    for (int b = 0; b < n; b++) {
        const int32_t *src = c->ids + c->seq_start[seq_index[b]];
        int len = c->seq_len[seq_index[b]];
        int32_t *ids = out->ids + (size_t)b * L, *lab = out->labels + (size_t)b * L;
        for (int i = 0; i < len; i++) {
            ids[i] = src[i];
            out->mask[(size_t)b * L + i] = 1;
        }
        out->n_tokens += len;
        out->n_chosen += al_mlm_mask_sequence(ids, lab, len, m, rng, cand);
    }
    free(cand);
    return AL_OK;
}

int al_mlm_mask_sequence(int32_t *ids, int32_t *labels, int len, const al_mlm_masking *m, al_rng *rng, int *cand) {
    int n_cand = 0;
    for (int i = 0; i < len; i++)
        if (ids[i] >= m->n_special) cand[n_cand++] = i;
    if (!n_cand) return 0;
    /* exactly round(p * n) positions (at least one): a partial Fisher-Yates shuffle of the candidates */
    int k = (int)(m->mask_prob * (float)n_cand + 0.5f);
    if (k < 1) k = 1;
    if (k > n_cand) k = n_cand;
    for (int j = 0; j < k; j++) {
        int r = j + (int)al_rng_below(rng, (uint32_t)(n_cand - j));
        int t = cand[j]; cand[j] = cand[r]; cand[r] = t;
    }
    for (int j = 0; j < k; j++) {
        int pos = cand[j];
        labels[pos] = ids[pos];
        float u = al_rng_uniform(rng);
        if (u < m->replace_mask) ids[pos] = m->mask_id;
        else if (u < m->replace_mask + m->replace_random)
            ids[pos] = m->n_special + (int32_t)al_rng_below(rng, (uint32_t)(m->vocab_size - m->n_special));
    }
    return k;
}

void al_mlm_epoch_order(int n_seqs, uint64_t seed, int64_t epoch, int *order) {
    al_rng rng;
    al_rng_seed(&rng, al_mlm_derive_seed(seed, AL_SEED_EPOCH_ORDER, (uint64_t)epoch));
    for (int i = 0; i < n_seqs; i++) order[i] = i;
    for (int i = n_seqs - 1; i > 0; i--) {
        int j = (int)al_rng_below(&rng, (uint32_t)(i + 1));
        int t = order[i]; order[i] = order[j]; order[j] = t;
    }
}
