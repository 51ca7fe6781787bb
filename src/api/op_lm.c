/* op_lm.c: the "lm" op (docs/decoders.md, "The language-model head"): a causal model's next-token predictions.
 * For texts (or ids): per position the surprisal in bits of the token that follows, the prediction's entropy and
 * its top-k tokens with their probabilities, and each text's cross-entropy and perplexity. For a corpus (a text
 * file's documents, separated by blank lines, or a JSONL file's "text" fields): each document cut into windows of
 * the model's positions, and the corpus's cross-entropy with a 95% interval over documents (lm_score.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/det_math.h"
#include "../core/error.h"
#include "../methods/lm/lm_corpus.h"
#include "../methods/lm/lm_score.h"
#include "attention_parts.h"
#include "corpus_reply.h"

#define LN2 0.69314718055994530942
/* Windows per forward when scoring a corpus (the bits do not depend on it: lm_corpus.h). */
#define LM_CORPUS_BATCH 8

const al_req_field al_fields_lm_own[] = {
    AL_F_INT("top_k", 0, 100, "5", "the most probable next tokens to list at each position"),
    AL_F_END,
};

/* A padded batch of sequences (ids [n]) and its mask. */
typedef struct lm_batch {
    int B, L;
    int32_t *ids, *mask;
} lm_batch;

static al_status batch_make(const al_model *model, int B, const int32_t *const *ids, const int *n, lm_batch *out,
                            al_error *err) {
    out->B = B;
    out->L = 1;
    for (int b = 0; b < B; b++)
        if (n[b] > out->L) out->L = n[b];
    const size_t BL = (size_t)B * out->L;
    out->ids = malloc(sizeof(int32_t) * BL);
    out->mask = malloc(sizeof(int32_t) * BL);
    if (!out->ids || !out->mask) {
        free(out->ids), free(out->mask);
        return al_err(err, AL_ERR_OOM, "lm: out of memory for a batch of %d", B);
    }
    const int pad = al_model_config(model)->pad_token_id;
    for (int b = 0; b < B; b++)
        for (int i = 0; i < out->L; i++) {
            const size_t t = (size_t)b * out->L + i;
            out->ids[t] = i < n[b] ? ids[b][i] : pad;
            out->mask[t] = i < n[b];
        }
    return AL_OK;
}

static void batch_free(lm_batch *b) { free(b->ids), free(b->mask); }

static double bits(double nats) { return nats / LN2; }

/* Texts or ids: every position's prediction in the reply. */
static al_status run_sequences(al_op_ctx *ctx, const al_api_model *m, int top_k, al_error *err) {
    const al_model *model = m->model;
    int max_length, add_special;
    al_status st = al_req_int(ctx->req, "max_length", "max_length", 0, 0, 1, 1 << 24, &max_length, err);
    if (!st) st = al_req_bool(ctx->req, "add_special_tokens", "add_special_tokens", 1, &add_special, err);
    if (st) return st;
    al_api_limits lim;
    if ((st = al_api_limits_make(model, 0, max_length, 0, NULL, &lim, err))) return st;
    al_api_inputs in;
    if ((st = al_api_read_inputs(ctx, model, add_special, &lim, &in, err))) return st;
    al_op_warn_unknown(ctx);
    const int B = in.n_seqs;
    const int32_t **ids = malloc(sizeof(*ids) * (size_t)B);
    int *n = malloc(sizeof(int) * (size_t)B);
    lm_batch batch = {0};
    al_lm_rows rows = {0};
    if (!ids || !n) st = al_err(err, AL_ERR_OOM, "lm: out of memory");
    for (int b = 0; !st && b < B; b++) ids[b] = in.examples[b].ids, n[b] = in.examples[b].n;
    if (!st) st = batch_make(model, B, ids, n, &batch, err);
    if (!st) st = al_lm_rows_new(B, batch.L, top_k, &rows, err);
    al_forward_params p = al_forward_default_params();
    p.pool = ctx->session->pool;
    p.cancel = ctx->params->cancel;
    al_api_progress(ctx->params, "lm", 0.0);
    al_batch fb = {B, batch.L, batch.ids, batch.mask, NULL, NULL};
    if (!st) st = al_lm_score(model, &fb, &p, &rows, err);
    al_reply_builder *rb = ctx->rb;
    const al_tokenizer *tok = al_model_tokenizer(model);
    al_rb_str(rb, rb->root, "model", m->id);
    cJSON *seqs = st ? NULL : al_rb_add(rb, rb->root, "sequences", cJSON_CreateArray());
    double *nll_sum = malloc(sizeof(double) * (size_t)(B ? B : 1));
    long long *count = malloc(sizeof(long long) * (size_t)(B ? B : 1));
    if (!st && (!nll_sum || !count)) st = al_err(err, AL_ERR_OOM, "lm: out of memory");
    for (int b = 0; !st && seqs && b < B; b++) {
        cJSON *obj = al_rb_add(rb, seqs, NULL, cJSON_CreateObject());
        if (!obj) break;
        const size_t row0 = (size_t)b * batch.L;
        al_rb_num(rb, obj, "n_tokens", n[b]);
        al_rb_bool(rb, obj, "truncated", in.seqs[b].truncated);
        al_rb_add(rb, obj, "tokens", al_api_token_strings(tok, ids[b], n[b]));
        al_rb_int_array(rb, obj, "ids", ids[b], n[b]);
        /* surprisal[i]: of token i given the ones before it (none for the first) */
        cJSON *sur = al_rb_add(rb, obj, "surprisal_bits", cJSON_CreateArray());
        cJSON *ent = al_rb_add(rb, obj, "entropy_bits", cJSON_CreateArray());
        cJSON *top = al_rb_add(rb, obj, "top", cJSON_CreateArray());
        double sum = 0.0;
        for (int i = 0; i < n[b]; i++) {
            const float nll_prev = i > 0 ? rows.nll[row0 + i - 1] : NAN;
            al_rb_add(rb, sur, NULL, i > 0 ? cJSON_CreateNumber(bits(nll_prev)) : cJSON_CreateNull());
            if (i > 0) sum += nll_prev;
            al_rb_add(rb, ent, NULL, cJSON_CreateNumber(bits(rows.entropy[row0 + i])));
            /* top[i]: the prediction after token i */
            cJSON *list = al_rb_add(rb, top, NULL, cJSON_CreateArray());
            for (int j = 0; list && j < top_k; j++) {
                const int32_t id = rows.top_ids[(row0 + i) * (size_t)top_k + j];
                if (id < 0) break;
                cJSON *item = al_rb_add(rb, list, NULL, cJSON_CreateObject());
                al_rb_num(rb, item, "id", id);
                const char *s = tok ? al_tokenizer_id_to_token(tok, id) : NULL;
                if (s) al_rb_str(rb, item, "token", s);
                al_rb_num(rb, item, "p", rows.top_p[(row0 + i) * (size_t)top_k + j]);
            }
        }
        nll_sum[b] = sum;
        count[b] = n[b] - 1;
        al_lm_summary one;
        al_lm_summarize(&nll_sum[b], &count[b], 1, &one);
        al_api_put_lm_summary(rb, al_rb_add(rb, obj, "summary", cJSON_CreateObject()), &one);
    }
    if (!st) {
        al_lm_summary all;
        al_lm_summarize(nll_sum, count, B, &all);
        al_api_put_lm_summary(rb, al_rb_add(rb, rb->root, "summary", cJSON_CreateObject()), &all);
    }
    al_api_progress(ctx->params, "lm", 1.0);
    free(nll_sum), free(count), free(ids), free(n);
    al_lm_rows_free(&rows);
    batch_free(&batch);
    al_api_inputs_free(&in);
    return st;
}

al_status al_op_lm(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    int top_k;
    const char *corpus;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (!st) st = al_req_int(ctx->req, "top_k", "top_k", 0, 5, 0, 100, &top_k, err);
    if (!st) st = al_req_string(ctx->req, "corpus", "corpus", 0, &corpus, err);
    if (st) return st;
    if ((st = al_api_require_causal(m, err))) return st;
    if (!corpus) return run_sequences(ctx, m, top_k, err);
    al_op_warn_unknown(ctx);
    const char *label;
    al_lm_corpus c;
    if ((st = al_api_read_corpus(ctx, m, &c, &label, err))) return st;
    al_lm_corpus_loss loss = {0};
    st = al_lm_corpus_loss_new(&c, &loss, err);
    al_forward_params p = al_forward_default_params();
    p.pool = ctx->session->pool;
    p.cancel = ctx->params->cancel;
    p.progress = ctx->params->progress;
    p.progress_user = ctx->params->progress_user;
    if (!st) st = al_lm_corpus_score(m->model, &c, &p, LM_CORPUS_BATCH, &loss, err);
    al_reply_builder *rb = ctx->rb;
    if (!st) {
        al_rb_str(rb, rb->root, "model", m->id);
        al_rb_str(rb, rb->root, "corpus_name", label);
        al_rb_num(rb, rb->root, "window", c.window);
        al_rb_num(rb, rb->root, "windows", c.n_windows);
        cJSON *per = al_rb_add(rb, rb->root, "documents", cJSON_CreateArray());
        for (int d = 0; per && d < c.n_docs; d++) {
            cJSON *o = al_rb_add(rb, per, NULL, cJSON_CreateObject());
            const long long n = loss.doc_tokens[d];
            al_rb_num(rb, o, "tokens_predicted", (double)n);
            al_rb_num(rb, o, "bits_per_token", n ? bits(loss.doc_nll[d] / (double)n) : NAN);
        }
        al_api_put_lm_summary(rb, al_rb_add(rb, rb->root, "summary", cJSON_CreateObject()), &loss.summary);
    }
    al_lm_corpus_loss_free(&loss);
    al_lm_corpus_free(&c);
    return st;
}
