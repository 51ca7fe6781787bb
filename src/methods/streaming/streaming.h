/* streaming.h: StreamingLLM's test (Xiao et al. 2023; docs/decoders.md, "Window and sinks") over a corpus
 * (lm_corpus.h): the loss by position with full causal attention, with each query reading only the `recent` most
 * recent keys, and with those and the first `sinks` positions (streaming.c). One forward per window with
 * al_forward_params' key_window and key_sinks: docs/decoders.md says why that equals a rolling key/value cache that
 * keeps the tokens' own positions. Not public. */
#ifndef AL_METHODS_STREAMING_H
#define AL_METHODS_STREAMING_H

#include "../../attnlab.h"
#include "../lm/lm_corpus.h"

typedef enum al_stream_run {
    AL_STREAM_FULL = 0,  /* every earlier key */
    AL_STREAM_WINDOW,    /* the recent keys only (key_sinks 0) */
    AL_STREAM_SINKS,     /* the recent keys and the first sinks positions; = WINDOW when sinks is 0 */
    AL_STREAM_N_RUNS
} al_stream_run;

/* out[AL_STREAM_N_RUNS], each from al_lm_corpus_loss_new(c). recent >= 1, sinks >= 0; params as
 * al_lm_corpus_score's (its key_window and key_sinks are replaced). */
al_status al_streaming_score(const al_model *model, const al_lm_corpus *c, int recent, int sinks,
                             const al_forward_params *params, int batch_size, al_lm_corpus_loss *out, al_error *err);

/* The same three runs read a token at a time through StreamingLLM's rolling cache with positions in the cache
 * (src/model/stream_cache.h; docs/decoders.md, "Positions in the cache"): each window of c is one text, which may
 * be longer than the model's positions (build c with the longest text to read). `window` keeps the recent keys,
 * `window_sinks` those and the first sinks tokens (recent + sinks at most the model's positions); `full` keeps every
 * key, so it predicts only from the model's positions (the tokens after them are not scored in that run). params:
 * pool, cancel (checked at every token) and progress (stage "full", "window", "window_sinks"). */
al_status al_streaming_cached(const al_model *model, const al_lm_corpus *c, int recent, int sinks,
                              const al_forward_params *params, al_lm_corpus_loss *out, al_error *err);

/* The mean loss (nats) over the predicted tokens at positions >= recent (those whose query no longer reads every
 * earlier key under the window) and their count; NAN and 0 when no window reaches that far. */
void al_streaming_past_window(const al_lm_corpus_loss *loss, int recent, double *nats, long long *tokens);

#endif
