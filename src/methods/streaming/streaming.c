/* streaming.c: StreamingLLM's three runs over a corpus (streaming.h). */
#include "streaming.h"

#include <math.h>
#include <string.h>

#include "../../core/error.h"

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

void al_streaming_past_window(const al_lm_corpus_loss *loss, int recent, double *nats, long long *tokens) {
    double sum = 0.0;
    long long n = 0;
    for (int i = recent; i < loss->window; i++) sum += loss->pos_nll[i], n += loss->pos_tokens[i];
    *nats = n ? sum / (double)n : NAN;
    *tokens = n;
}
