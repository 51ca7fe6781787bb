/* op_streaming.c: the "streaming" op (docs/decoders.md, "Window and sinks"): StreamingLLM's test on a causal model
 * and a corpus. Each window of the corpus (the model's positions) is read with full causal attention, with every
 * query reading only its `window` most recent keys, and with those and the first `sinks` positions; the reply gives
 * each run's perplexity with its interval, its loss by position and its mean past the window (streaming.h). */
#include <string.h>

#include "../core/det_math.h"
#include "../core/error.h"
#include "../methods/streaming/streaming.h"
#include "corpus_reply.h"

#define LN2 0.69314718055994530942
/* Windows per forward (the bits do not depend on it: lm_corpus.h). */
#define STREAMING_BATCH 8

static const char *const k_positions[] = {"text", "cache", NULL};

const al_req_field al_fields_streaming_own[] = {
    AL_F_INT("window", 1, 1 << 24, NULL, "W: each query reads its W most recent keys, itself included; below the "
                                         "model's positions"),
    AL_F_INT("sinks", 0, 1 << 24, "4", "k: the first k positions every query keeps as attention sinks (0: the window "
                                       "alone)"),
    AL_F_ENUM("positions", k_positions, "\"text\"", "'text': one forward per window of the model's positions, each "
              "token at its place in the text; 'cache': a rolling key/value cache read a token at a time, each token at "
              "its slot in the cache (StreamingLLM), over texts longer than the model's positions"),
    AL_F_INT("tokens", 2, 1 << 16, NULL, "with positions 'cache': documents are read in texts of at most this many "
                                         "tokens, each from its start (default: 4 times the model's positions)"),
    AL_F_END,
};

al_status al_op_streaming(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    const char *label, *rule_name;
    int window, sinks, tokens;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (!st) st = al_api_require_causal(m, err);
    if (!st) st = al_req_int(ctx->req, "window", "window", 1, 0, 1, 1 << 24, &window, err);
    if (!st) st = al_req_int(ctx->req, "sinks", "sinks", 0, 4, 0, 1 << 24, &sinks, err);
    if (!st) st = al_req_string(ctx->req, "positions", "positions", 0, &rule_name, err);
    if (st) return st;
    const int cached = rule_name && !strcmp(rule_name, "cache");
    if (rule_name && !cached && strcmp(rule_name, "text"))
        return al_err(err, AL_ERR_INVALID, "request: field 'positions': '%s' is not 'text' or 'cache'", rule_name);
    const int positions = al_api_max_tokens(m->model);
    const int tokens_default = positions > (1 << 16) / 4 ? 1 << 16 : 4 * positions;
    if ((st = al_req_int(ctx->req, "tokens", "tokens", 0, tokens_default, 2, 1 << 16, &tokens, err))) return st;
    if (window >= positions)
        return al_err(err, AL_ERR_INVALID, "request: field 'window': %d must be below the model's %d positions (the "
                      "test reads texts longer than the window)", window, positions);
    if (sinks >= positions)
        return al_err(err, AL_ERR_INVALID, "request: field 'sinks': %d must be below the model's %d positions", sinks,
                      positions);
    if (cached && sinks > positions - window)
        return al_err(err, AL_ERR_INVALID, "request: field 'sinks': %d sinks and a window of %d make a cache longer "
                      "than the model's %d positions", sinks, window, positions);
    al_lm_corpus c;
    if ((st = al_api_read_corpus_window(ctx, m, cached ? tokens : positions, &c, &label, err))) return st;
    al_op_warn_unknown(ctx);
    al_lm_corpus_loss loss[AL_STREAM_N_RUNS] = {{0}};
    for (int r = 0; !st && r < AL_STREAM_N_RUNS; r++) st = al_lm_corpus_loss_new(&c, &loss[r], err);
    al_forward_params p = al_forward_default_params();
    p.pool = ctx->session->pool;
    p.cancel = ctx->params->cancel;
    p.progress = ctx->params->progress; /* stage "full", "window", "window_sinks" (streaming.c) */
    p.progress_user = ctx->params->progress_user;
    if (!st) st = cached ? al_streaming_cached(m->model, &c, window, sinks, &p, loss, err)
                         : al_streaming_score(m->model, &c, window, sinks, &p, STREAMING_BATCH, loss, err);
    al_reply_builder *rb = ctx->rb;
    if (!st) {
        al_rb_str(rb, rb->root, "model", m->id);
        al_rb_str(rb, rb->root, "corpus_name", label);
        al_rb_num(rb, rb->root, "positions", c.window);
        al_rb_num(rb, rb->root, "windows", c.n_windows);
        al_rb_num(rb, rb->root, "window", window);
        al_rb_num(rb, rb->root, "sinks", sinks);
        if (cached) { /* the new keys only with 'cache': a 'text' reply stays as it was (its digest too) */
            al_rb_str(rb, rb->root, "positions_mode", "cache");
            al_rb_num(rb, rb->root, "model_positions", positions);
            al_rb_str(rb, rb->root, "positions_rule", "each token at its slot in a rolling key/value cache (the sinks, "
                                                      "then the window's tokens oldest first), as StreamingLLM does; "
                                                      "'full' keeps every key, so it predicts from the model's "
                                                      "positions only");
        } else {
            al_rb_str(rb, rb->root, "positions_rule", "each token keeps its own position in the text (not its slot "
                                                      "in a rolling cache)");
        }
        cJSON *runs = al_rb_add(rb, rb->root, "runs", cJSON_CreateObject());
        static const char *const names[AL_STREAM_N_RUNS] = {"full", "window", "window_sinks"};
        for (int r = 0; runs && r < AL_STREAM_N_RUNS; r++) {
            cJSON *o = al_rb_add(rb, runs, names[r], cJSON_CreateObject());
            if (!o) break;
            al_api_put_corpus_loss(rb, o, &loss[r]);
            double nats;
            long long n;
            al_streaming_past_window(&loss[r], window, &nats, &n);
            cJSON *past = al_rb_add(rb, o, "past_window", cJSON_CreateObject());
            al_rb_num(rb, past, "tokens_predicted", (double)n);
            al_rb_num(rb, past, "bits_per_token", nats / LN2);
            al_rb_num(rb, past, "perplexity", al_det_exp(nats));
        }
    }
    for (int r = 0; r < AL_STREAM_N_RUNS; r++) al_lm_corpus_loss_free(&loss[r]);
    al_lm_corpus_free(&c);
    return st;
}
