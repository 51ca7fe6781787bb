/* stream_cache.h: StreamingLLM's rolling key/value cache (Xiao et al. 2023; docs/decoders.md, "Window and sinks",
 * "Positions in the cache"): a causal model reads a text one token at a time, keeping the keys and values of its
 * first `sinks` tokens and of its `recent` most recent ones (the token being read included) and nothing else, so a
 * text may be longer than the model's positions. Each token gets the position of its slot in the cache, not its
 * place in the text: rotary keys are kept unturned and turned by their slot at every step, as StreamingLLM does;
 * with learned positions (GPT-2) a token is embedded at the slot it enters, and its keys keep it. Not public. */
#ifndef AL_MODEL_STREAM_CACHE_H
#define AL_MODEL_STREAM_CACHE_H

#include "../attnlab.h"

typedef struct al_stream_cache al_stream_cache;

/* A cache of sinks + recent slots (recent >= 1, sinks >= 0, sinks + recent <= max_position_embeddings). */
al_status al_stream_cache_new(const al_model *model, int sinks, int recent, al_stream_cache **out, al_error *err);
void al_stream_cache_free(al_stream_cache *cache);
void al_stream_cache_reset(al_stream_cache *cache); /* empty again, for the next text */

/* Reads one token: its logits [V] over the next token. While fewer than sinks + recent tokens were read, nothing is
 * evicted and the token's slot is its place in the text: the bits of al_decode (and al_forward) on the same text;
 * after that the oldest token past the sinks leaves. pool may be NULL. */
al_status al_stream_cache_step(al_stream_cache *cache, int32_t id, al_threadpool *pool, float *logits, al_error *err);

#endif
