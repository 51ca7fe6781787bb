/* streaming.c: StreamingLLM's three runs over a corpus (streaming.h). */
#include "streaming.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../model/stream_cache.h"

static void copy_loss(const al_lm_corpus_loss *from, al_lm_corpus_loss *to) {
    memcpy(to->doc_nll, from->doc_nll, sizeof(double) * (size_t)from->n_docs);
    memcpy(to->doc_tokens, from->doc_tokens, sizeof(long long) * (size_t)from->n_docs);
    memcpy(to->pos_nll, from->pos_nll, sizeof(double) * (size_t)from->window);
    memcpy(to->pos_tokens, from->pos_tokens, sizeof(long long) * (size_t)from->window);
    to->summary = from->summary;
}

/* params' progress over the three runs: run r's fraction f as (r + f) / 3, stage the run's name. */
typedef struct runs_progress {
    const al_forward_params *params;
    int run;
} runs_progress;

static void on_progress(void *user, const char *stage, double fraction) {
    (void)stage;
    static const char *const names[AL_STREAM_N_RUNS] = {"full", "window", "window_sinks"};
    const runs_progress *rp = user;
    rp->params->progress(rp->params->progress_user, names[rp->run], (rp->run + fraction) / AL_STREAM_N_RUNS);
}

al_status al_streaming_score(const al_model *model, const al_lm_corpus *c, int recent, int sinks,
                             const al_forward_params *params, int batch_size, al_lm_corpus_loss *out, al_error *err) {
    if (recent < 1 || sinks < 0)
        return al_err(err, AL_ERR_INVALID, "streaming: a window of %d keys with %d sinks (window >= 1, sinks >= 0)",
                      recent, sinks);
    al_forward_params p = params ? *params : al_forward_default_params();
    runs_progress rp = {params, AL_STREAM_FULL};
    if (p.progress) p.progress = on_progress, p.progress_user = &rp;
    p.key_window = 0, p.key_sinks = 0;
    al_status st = al_lm_corpus_score(model, c, &p, batch_size, &out[AL_STREAM_FULL], err);
    p.key_window = recent, rp.run = AL_STREAM_WINDOW;
    if (!st) st = al_lm_corpus_score(model, c, &p, batch_size, &out[AL_STREAM_WINDOW], err);
    p.key_sinks = sinks, rp.run = AL_STREAM_SINKS;
    if (!st && sinks > 0) st = al_lm_corpus_score(model, c, &p, batch_size, &out[AL_STREAM_SINKS], err);
    if (!st && sinks == 0) copy_loss(&out[AL_STREAM_WINDOW], &out[AL_STREAM_SINKS]);
    return st;
}

/* One run over every text of c through a cache of sinks + recent slots, predicting from at most `reach` positions of
 * each text; progress reports tokens read out of total. */
static al_status cached_run(const al_model *model, const al_lm_corpus *c, int sinks, int recent, int reach,
                            const al_forward_params *p, runs_progress *rp, long long total, al_lm_corpus_loss *out,
                            al_error *err) {
    const int V = al_model_config(model)->vocab_size, W = c->window;
    memset(out->doc_nll, 0, sizeof(double) * (size_t)c->n_docs);
    memset(out->doc_tokens, 0, sizeof(long long) * (size_t)c->n_docs);
    memset(out->pos_nll, 0, sizeof(double) * (size_t)W);
    memset(out->pos_tokens, 0, sizeof(long long) * (size_t)W);
    al_stream_cache *cache = NULL;
    float *logits = malloc(sizeof(float) * (size_t)V);
    al_status st = logits ? al_stream_cache_new(model, sinks, recent, &cache, err)
                          : al_err(err, AL_ERR_OOM, "streaming: out of memory for the logits");
    long long done = 0;
    for (int w = 0; !st && w < c->n_windows; w++) {
        const int32_t *ids = c->ids + (size_t)w * W;
        const int n = c->len[w] - 1 < reach ? c->len[w] - 1 : reach, d = c->doc[w];
        al_stream_cache_reset(cache);
        for (int i = 0; !st && i < n; i++) {
            if (p->cancel && *p->cancel) st = al_err(err, AL_ERR_CANCELLED, "streaming: cancelled");
            if (!st) st = al_stream_cache_step(cache, ids[i], p->pool, logits, err);
            if (st) break;
            float nll, entropy;
            al_lm_score_row(logits, V, ids[i + 1], 0, &nll, &entropy, NULL, NULL);
            out->doc_nll[d] += (double)nll, out->doc_tokens[d]++;
            out->pos_nll[i] += (double)nll, out->pos_tokens[i]++;
        }
        done += c->len[w] - 1;
        if (!st && p->progress) p->progress(rp, "stream", total ? (double)done / (double)total : 1.0);
    }
    if (!st) al_lm_summarize(out->doc_nll, out->doc_tokens, c->n_docs, &out->summary);
    al_stream_cache_free(cache);
    free(logits);
    return st;
}

al_status al_streaming_cached(const al_model *model, const al_lm_corpus *c, int recent, int sinks,
                              const al_forward_params *params, al_lm_corpus_loss *out, al_error *err) {
    const int positions = al_model_config(model)->max_position_embeddings;
    if (recent < 1 || sinks < 0 || sinks > positions - recent)
        return al_err(err, AL_ERR_INVALID, "streaming: a window of %d keys with %d sinks (window >= 1, sinks >= 0, "
                      "together at most the model's %d positions)", recent, sinks, positions);
    al_forward_params p = params ? *params : al_forward_default_params();
    runs_progress rp = {params, AL_STREAM_FULL};
    if (p.progress) p.progress = on_progress;
    long long total = 0;
    for (int w = 0; w < c->n_windows; w++) total += c->len[w] - 1;
    al_status st = cached_run(model, c, 0, positions, positions, &p, &rp, total, &out[AL_STREAM_FULL], err);
    rp.run = AL_STREAM_WINDOW;
    if (!st) st = cached_run(model, c, 0, recent, c->window, &p, &rp, total, &out[AL_STREAM_WINDOW], err);
    rp.run = AL_STREAM_SINKS;
    if (!st && sinks > 0) st = cached_run(model, c, sinks, recent, c->window, &p, &rp, total, &out[AL_STREAM_SINKS], err);
    if (!st && sinks == 0) copy_loss(&out[AL_STREAM_WINDOW], &out[AL_STREAM_SINKS]);
    return st;
}

void al_streaming_past_window(const al_lm_corpus_loss *loss, int recent, double *nats, long long *tokens) {
    double sum = 0.0;
    long long n = 0;
    for (int i = recent; i < loss->window; i++) sum += loss->pos_nll[i], n += loss->pos_tokens[i];
    *nats = n ? sum / (double)n : NAN;
    *tokens = n;
}
