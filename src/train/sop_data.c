/* sop_data.c: the sentence-order pairs of pretraining (docs/pretraining.md, "Sentence order"): documents
 * of consecutive sentences cut into runs that fit one sequence, and the pair of a run as
 * [CLS] A [SEP] B [SEP], A and B its two consecutive parts, swapped with probability 1/2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "pretrain.h"

static al_status oom(al_error *err) { return al_err(err, AL_ERR_OOM, "sop_data: out of memory"); }

void al_sop_docs_free(al_sop_docs *d) {
    if (!d) return;
    free(d->ids);
    free(d->sent_start);
    free(d->sent_len);
    free(d->run_first);
    free(d->run_count);
    memset(d, 0, sizeof *d);
}

/* Appends n ids as one sentence; -1 on failure. */
static int push_sentence(al_sop_docs *d, const int32_t *ids, int n, int64_t *ids_cap, int *sents_cap) {
    if (d->n_ids + n > *ids_cap) {
        int64_t cap = (*ids_cap ? *ids_cap : 1 << 16);
        while (cap < d->n_ids + n) cap *= 2;
        int32_t *p = realloc(d->ids, sizeof *p * (size_t)cap);
        if (!p) return -1;
        d->ids = p, *ids_cap = cap;
    }
    if (d->n_sents == *sents_cap) {
        int cap = *sents_cap ? *sents_cap * 2 : 1024;
        int64_t *s = realloc(d->sent_start, sizeof *s * (size_t)cap);
        if (!s) return -1;
        d->sent_start = s;
        int32_t *l = realloc(d->sent_len, sizeof *l * (size_t)cap);
        if (!l) return -1;
        d->sent_len = l, *sents_cap = cap;
    }
    memcpy(d->ids + d->n_ids, ids, sizeof *ids * (size_t)n);
    d->sent_start[d->n_sents] = d->n_ids;
    d->sent_len[d->n_sents] = n;
    d->n_ids += n;
    d->n_sents++;
    return 0;
}

/* Cuts the sentences [first, end) of one document into runs: consecutive sentences while they fit the
 * budget together; a sentence that alone exceeds it ends the run and is left out (its neighbours are not
 * consecutive around it). Runs of one sentence give no pair. */
static int cut_runs(al_sop_docs *d, int first, int end, int budget, int *runs_cap) {
    int i = first;
    while (i < end) {
        int j = i, tokens = 0;
        while (j < end && tokens + d->sent_len[j] <= budget) tokens += d->sent_len[j++];
        if (j - i >= 2) {
            if (d->n_runs == *runs_cap) {
                int cap = *runs_cap ? *runs_cap * 2 : 1024;
                int *a = realloc(d->run_first, sizeof *a * (size_t)cap);
                if (!a) return -1;
                d->run_first = a;
                int *b = realloc(d->run_count, sizeof *b * (size_t)cap);
                if (!b) return -1;
                d->run_count = b, *runs_cap = cap;
            }
            d->run_first[d->n_runs] = i;
            d->run_count[d->n_runs] = j - i;
            d->n_runs++;
        }
        i = j > i ? j : i + 1; /* j == i: sentence i alone exceeds the budget */
    }
    return 0;
}

typedef struct docs_ctx {
    al_sop_docs *out;
    int budget;      /* tokens of A and B together */
    int64_t ids_cap;
    int sents_cap, runs_cap;
    int doc_first;   /* the open document's first sentence */
    int in_doc;      /* 1: a document is open */
} docs_ctx;

static al_status end_document(docs_ctx *c, al_error *err) {
    if (c->in_doc && cut_runs(c->out, c->doc_first, c->out->n_sents, c->budget, &c->runs_cap)) return oom(err);
    c->out->n_docs += c->in_doc;
    c->in_doc = 0;
    c->doc_first = c->out->n_sents;
    return AL_OK;
}

/* A blank line (empty or only spaces, tabs and carriage returns) ends the document; any other line with
 * tokens is its next sentence. */
static al_status docs_line(void *user, const char *line, size_t n, const al_encoding *enc, int *stop, al_error *err) {
    (void)stop;
    docs_ctx *c = user;
    int blank = 1;
    for (size_t i = 0; i < n && blank; i++) blank = line[i] == ' ' || line[i] == '\t' || line[i] == '\r';
    if (blank) return end_document(c, err);
    if (enc->n_tokens > 0) {
        if (push_sentence(c->out, enc->ids, enc->n_tokens, &c->ids_cap, &c->sents_cap)) return oom(err);
        c->in_doc = 1;
    }
    return AL_OK;
}

al_status al_sop_docs_build(const al_tokenizer *tok, const char *text, size_t len, int max_len, al_sop_docs *out,
                            al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "sop_data: no output");
    memset(out, 0, sizeof *out);
    if (!tok || (!text && len)) return al_err(err, AL_ERR_INVALID, "sop_data: tokenizer or text is NULL");
    if (max_len < 5) return al_err(err, AL_ERR_INVALID, "sop_data: max_len %d must be >= 5", max_len);
    al_special_ids sp = al_tokenizer_special_ids(tok);
    if (sp.cls < 0 || sp.sep < 0) return al_err(err, AL_ERR_INVALID, "sop_data: the vocabulary needs [CLS] and [SEP]");
    out->max_len = max_len;
    out->cls = sp.cls;
    out->sep = sp.sep;
    docs_ctx c = {out, max_len - 3 /* [CLS] A [SEP] B [SEP] */, 0, 0, 0, 0, 0};
    al_status st = al_text_lines_encode(tok, text, len, docs_line, &c, err);
    if (!st) st = end_document(&c, err); /* the text's end ends the last document */
    if (st) al_sop_docs_free(out);
    return st;
}

int al_sop_make_pair(const al_sop_docs *d, int run, al_rng *rng, int32_t *ids, int32_t *types, int *label) {
    const int cls = d->cls, sep = d->sep;
    const int first = d->run_first[run], n = d->run_count[run];
    const int split = 1 + (int)al_rng_below(rng, (uint32_t)(n - 1)); /* A: sentences [0, split) of the run */
    const int swapped = (int)al_rng_below(rng, 2);
    int seg[2][2] = {{first, first + split}, {first + split, first + n}}; /* [sentence from, to) */
    if (swapped) {
        int t0 = seg[0][0], t1 = seg[0][1];
        seg[0][0] = seg[1][0], seg[0][1] = seg[1][1];
        seg[1][0] = t0, seg[1][1] = t1;
    }
    int len = 0;
    ids[len] = cls, types[len++] = 0;
    for (int s = 0; s < 2; s++) {
        for (int k = seg[s][0]; k < seg[s][1]; k++)
            for (int t = 0; t < d->sent_len[k]; t++) ids[len] = d->ids[d->sent_start[k] + t], types[len++] = s;
        ids[len] = sep, types[len++] = s;
    }
    *label = swapped;
    return len;
}
