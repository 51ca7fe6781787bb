/* lm_corpus.c: a corpus's documents, their windows and their loss under a forward's options (lm_corpus.h). */
#include "lm_corpus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "cJSON.h"

static int is_blank(const char *s, const char *e) {
    for (; s < e; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r') return 0;
    return 1;
}

static al_status push_doc(char ***docs, int *n, const char *s, size_t len, al_error *err) {
    char **grown = realloc(*docs, sizeof(char *) * (size_t)(*n + 1));
    char *d = malloc(len + 1);
    if (grown) *docs = grown;
    if (!grown || !d) return free(d), al_err(err, AL_ERR_OOM, "lm: out of memory for the corpus");
    memcpy(d, s, len);
    d[len] = 0;
    (*docs)[(*n)++] = d;
    return AL_OK;
}

void al_lm_documents_free(char **docs, int n_docs) {
    for (int d = 0; d < n_docs; d++) free(docs[d]);
    free(docs);
}

/* JSONL: every non-blank line an object with a string "text". */
static al_status split_jsonl(const char *text, const char *name, char ***docs, int *n_docs, al_error *err) {
    al_status st = AL_OK;
    int line = 0;
    for (const char *s = text; *s && !st;) {
        const char *e = strchr(s, '\n');
        if (!e) e = s + strlen(s);
        line++;
        if (!is_blank(s, e)) {
            cJSON *obj = cJSON_ParseWithLength(s, (size_t)(e - s));
            const cJSON *t = obj ? cJSON_GetObjectItemCaseSensitive(obj, "text") : NULL;
            if (!cJSON_IsString(t))
                st = al_err(err, AL_ERR_FORMAT, "%s: line %d: %s", name, line,
                            obj ? "no string field \"text\"" : "not a JSON object");
            else
                st = push_doc(docs, n_docs, t->valuestring, strlen(t->valuestring), err);
            cJSON_Delete(obj);
        }
        s = *e ? e + 1 : e;
    }
    return st;
}

/* Paragraphs: runs of non-blank lines. */
static al_status split_paragraphs(const char *text, char ***docs, int *n_docs, al_error *err) {
    const char *start = NULL, *end = NULL;
    for (const char *s = text;;) {
        const char *e = strchr(s, '\n');
        if (!e) e = s + strlen(s);
        if (is_blank(s, e)) {
            al_status st;
            if (start && (st = push_doc(docs, n_docs, start, (size_t)(end - start), err))) return st;
            start = NULL;
        } else {
            if (!start) start = s;
            end = e;
        }
        if (!*e) return start ? push_doc(docs, n_docs, start, (size_t)(end - start), err) : AL_OK;
        s = e + 1;
    }
}

al_status al_lm_split_documents(const char *text, const char *name, char ***docs, int *n_docs, al_error *err) {
    *docs = NULL;
    *n_docs = 0;
    const char *p = text;
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    al_status st = *p == '{' ? split_jsonl(text, name, docs, n_docs, err) : split_paragraphs(text, docs, n_docs, err);
    if (!st && *n_docs == 0) st = al_err(err, AL_ERR_INVALID, "%s: no document (no text between blank lines)", name);
    if (st) {
        al_lm_documents_free(*docs, *n_docs);
        *docs = NULL, *n_docs = 0;
    }
    return st;
}

void al_lm_corpus_free(al_lm_corpus *c) {
    free(c->doc), free(c->len), free(c->ids);
    memset(c, 0, sizeof *c);
}

/* Appends the windows of one encoded document (each of at least 2 tokens). */
static al_status add_windows(al_lm_corpus *c, int d, const int32_t *ids, int n, int pad, int *cap, al_error *err) {
    const int W = c->window;
    for (int at = 0; at + 1 < n; at += W) {
        const int len = n - at < W ? n - at : W;
        if (len < 2) break;
        if (c->n_windows == *cap) {
            const int grown = *cap ? 2 * *cap : 16;
            int *doc = realloc(c->doc, sizeof(int) * (size_t)grown);
            if (doc) c->doc = doc;
            int *lens = realloc(c->len, sizeof(int) * (size_t)grown);
            if (lens) c->len = lens;
            int32_t *all = realloc(c->ids, sizeof(int32_t) * (size_t)grown * W);
            if (all) c->ids = all;
            if (!doc || !lens || !all) return al_err(err, AL_ERR_OOM, "lm: out of memory for the corpus's windows");
            *cap = grown;
        }
        const int w = c->n_windows++;
        c->doc[w] = d;
        c->len[w] = len;
        int32_t *row = c->ids + (size_t)w * W;
        for (int i = 0; i < W; i++) row[i] = i < len ? ids[at + i] : pad;
    }
    return AL_OK;
}

al_status al_lm_corpus_build(const al_model *model, const char *text, const char *name, int window,
                             al_lm_corpus *out, al_error *err) {
    memset(out, 0, sizeof *out);
    const al_tokenizer *tok = al_model_tokenizer(model);
    if (window < 2) return al_err(err, AL_ERR_INVALID, "%s: a window of %d tokens predicts nothing", name, window);
    if (!tok) return al_err(err, AL_ERR_INVALID, "%s: the model has no tokenizer files", name);
    char **docs = NULL;
    int n_docs = 0;
    al_status st = al_lm_split_documents(text, name, &docs, &n_docs, err);
    if (st) return st;
    out->window = window;
    out->n_docs = n_docs;
    const int pad = al_model_config(model)->pad_token_id;
    int cap = 0;
    for (int d = 0; !st && d < n_docs; d++) {
        al_encoding enc = {0};
        al_encode_options opt = al_encode_default_options();
        if ((st = al_tokenizer_encode(tok, docs[d], NULL, &opt, &enc, err))) {
            char where[96];
            snprintf(where, sizeof where, "%s: document %d", name, d + 1);
            st = al_err_prefix(err, where);
        } else {
            st = add_windows(out, d, enc.ids, enc.n_tokens, pad < 0 ? 0 : pad, &cap, err);
        }
        al_encoding_free(&enc);
    }
    al_lm_documents_free(docs, n_docs);
    if (st) al_lm_corpus_free(out);
    return st;
}

void al_lm_corpus_loss_free(al_lm_corpus_loss *l) {
    free(l->doc_nll), free(l->doc_tokens), free(l->pos_nll), free(l->pos_tokens);
    memset(l, 0, sizeof *l);
}

al_status al_lm_corpus_loss_new(const al_lm_corpus *c, al_lm_corpus_loss *out, al_error *err) {
    memset(out, 0, sizeof *out);
    out->n_docs = c->n_docs;
    out->window = c->window;
    out->doc_nll = calloc((size_t)c->n_docs + 1, sizeof(double));
    out->doc_tokens = calloc((size_t)c->n_docs + 1, sizeof(long long));
    out->pos_nll = calloc((size_t)c->window + 1, sizeof(double));
    out->pos_tokens = calloc((size_t)c->window + 1, sizeof(long long));
    if (!out->doc_nll || !out->doc_tokens || !out->pos_nll || !out->pos_tokens) {
        al_lm_corpus_loss_free(out);
        return al_err(err, AL_ERR_OOM, "lm: out of memory for the corpus's loss");
    }
    return AL_OK;
}

al_status al_lm_corpus_score(const al_model *model, const al_lm_corpus *c, const al_forward_params *params,
                             int batch_size, al_lm_corpus_loss *out, al_error *err) {
    const int W = c->window, B = batch_size < 1 ? 1 : batch_size;
    memset(out->doc_nll, 0, sizeof(double) * (size_t)c->n_docs);
    memset(out->doc_tokens, 0, sizeof(long long) * (size_t)c->n_docs);
    memset(out->pos_nll, 0, sizeof(double) * (size_t)W);
    memset(out->pos_tokens, 0, sizeof(long long) * (size_t)W);
    al_forward_params p = params ? *params : al_forward_default_params();
    const al_progress_fn progress = p.progress;
    void *progress_user = p.progress_user;
    p.progress = NULL;
    int32_t *mask = malloc(sizeof(int32_t) * (size_t)B * W);
    al_lm_rows rows = {0};
    al_status st = mask ? al_lm_rows_new(B, W, 0, &rows, err) : al_err(err, AL_ERR_OOM, "lm: out of memory");
    for (int w0 = 0; !st && w0 < c->n_windows; w0 += B) {
        const int nb = c->n_windows - w0 < B ? c->n_windows - w0 : B;
        int L = 1; /* the batch's longest window; with head policies W, the size of their constant matrices */
        for (int b = 0; b < nb; b++)
            if (c->len[w0 + b] > L) L = c->len[w0 + b];
        if (p.policies) L = W;
        int32_t *ids = malloc(sizeof(int32_t) * (size_t)nb * L);
        if (!ids) {
            st = al_err(err, AL_ERR_OOM, "lm: out of memory for a batch of %d windows", nb);
            break;
        }
        for (int b = 0; b < nb; b++)
            for (int i = 0; i < L; i++) {
                ids[(size_t)b * L + i] = c->ids[(size_t)(w0 + b) * W + i];
                mask[(size_t)b * L + i] = i < c->len[w0 + b];
            }
        al_batch fb = {nb, L, ids, mask, NULL, NULL};
        st = al_lm_score(model, &fb, &p, &rows, err);
        for (int b = 0; !st && b < nb; b++) {
            const int d = c->doc[w0 + b];
            for (int i = 0; i + 1 < c->len[w0 + b]; i++) {
                const double nll = rows.nll[(size_t)b * L + i];
                out->doc_nll[d] += nll, out->doc_tokens[d]++;
                out->pos_nll[i] += nll, out->pos_tokens[i]++;
            }
        }
        free(ids);
        if (!st && progress) progress(progress_user, "lm", (double)(w0 + nb) / c->n_windows);
    }
    if (!st) al_lm_summarize(out->doc_nll, out->doc_tokens, c->n_docs, &out->summary);
    al_lm_rows_free(&rows);
    free(mask);
    return st;
}
