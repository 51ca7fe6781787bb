/* decode_stream.c: the rolling key/value cache (stream_cache.h). A step is al_decode's for one token (decode.c):
 * the embeddings, per layer the norm before attention, the projections, the attention over the cache
 * (al_dec_attend) and the layer rule's tail, then the LM head. What differs is where keys sit: the cache keeps each
 * layer's keys unturned in slot order (the sinks, then the recent tokens oldest first), and before each step turns a
 * copy of them by slot 0 .. T - 1 and the query by T - 1, so the distance between a query and a key is never longer
 * than the cache (docs/decoders.md, "Positions in the cache"). Memory: [NL, slots, KVW] keys and values and one
 * token's scratch, carved from one allocation (src/core/carve.h). */
#include "stream_cache.h"

#include <stdlib.h>
#include <string.h>

#include "../core/carve.h"
#include "../core/error.h"
#include "../core/memory.h"
#include "family_params.h"
#include "forward_internal.h"
#include "layer_rule.h"
#include "model_internal.h"
#include "score_rule.h"

struct al_stream_cache {
    const al_model *model;
    int sinks, slots, length; /* slots = sinks + recent; length: the slots filled */
    float *mem;
    float *keys, *values;     /* [NL, slots, KVW] unturned keys, values, in slot order */
    float *turned, *turned_q; /* [slots, A] the keys turned by slot; [slots, A] what the rule turns beside them */
    float *x, *tmp, *wide;    /* [D] [D] [ffn width] one token's hidden state and scratch */
    float *q, *k, *v, *ctx;   /* [A] each */
    float *scores;            /* [slots] */
    int32_t *slot_pos;        /* [slots] 0, 1, ... */
};

static void layout(al_carver *cv, const al_config *c, int slots, al_stream_cache *s) {
    const size_t D = (size_t)c->hidden_size, A = (size_t)al_attn_width(c), KVW = (size_t)al_kv_width(c);
    size_t wide = (size_t)al_fwd_ffn_width(c);
    if ((size_t)c->embedding_size > wide) wide = (size_t)c->embedding_size;
    s->keys = al_carve_rows(cv, (size_t)c->n_layers * slots, KVW);
    s->values = al_carve_rows(cv, (size_t)c->n_layers * slots, KVW);
    s->turned = al_carve_rows(cv, (size_t)slots, A);
    s->turned_q = al_carve_rows(cv, (size_t)slots, A);
    s->x = al_carve_rows(cv, 1, D);
    s->tmp = al_carve_rows(cv, 1, D);
    s->wide = al_carve_rows(cv, 1, wide);
    s->q = al_carve_rows(cv, 1, A);
    s->k = al_carve_rows(cv, 1, A);
    s->v = al_carve_rows(cv, 1, A);
    s->ctx = al_carve_rows(cv, 1, A);
    s->scores = al_carve_rows(cv, 1, (size_t)slots);
}

al_status al_stream_cache_new(const al_model *model, int sinks, int recent, al_stream_cache **out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "stream_cache: no output pointer");
    *out = NULL;
    if (!model || !al_model_is_causal(model))
        return al_err(err, AL_ERR_INVALID, "stream_cache: the model is not a causal language model");
    const al_config *c = &model->config;
    if (recent < 1 || sinks < 0 || sinks > c->max_position_embeddings - recent)
        return al_err(err, AL_ERR_INVALID, "stream_cache: %d sinks and %d recent slots (recent >= 1, sinks >= 0, "
                      "together at most the model's %d positions)", sinks, recent, c->max_position_embeddings);
    const int slots = sinks + recent;
    al_stream_cache *s = calloc(1, sizeof *s);
    if (!s) return al_err(err, AL_ERR_OOM, "stream_cache: out of memory");
    al_carver cv = {NULL, 0};
    layout(&cv, c, slots, s);
    al_status st = al_memory_check(al_carve_bytes(&cv), "stream_cache: the rolling cache", err);
    if (!st) {
        s->mem = malloc((size_t)cv.used * sizeof(float) + 1);
        s->slot_pos = malloc(sizeof(int32_t) * (size_t)slots);
        if (!s->mem || !s->slot_pos) st = al_err(err, AL_ERR_OOM, "stream_cache: out of memory for %d slots", slots);
    }
    if (st) {
        al_stream_cache_free(s);
        return st;
    }
    cv = (al_carver){s->mem, 0};
    layout(&cv, c, slots, s);
    for (int i = 0; i < slots; i++) s->slot_pos[i] = i;
    s->model = model, s->sinks = sinks, s->slots = slots;
    *out = s;
    return AL_OK;
}

void al_stream_cache_free(al_stream_cache *cache) {
    if (!cache) return;
    free(cache->mem), free(cache->slot_pos);
    free(cache);
}

void al_stream_cache_reset(al_stream_cache *cache) {
    if (cache) cache->length = 0;
}

/* A full cache makes room for one more: the oldest recent slot leaves and the later ones move down by one. */
static void evict(al_stream_cache *s, int n_layers, int KVW) {
    const size_t row = (size_t)KVW, moved = (size_t)(s->slots - s->sinks - 1) * row;
    for (int l = 0; l < n_layers; l++) {
        float *k = s->keys + (size_t)l * s->slots * row + (size_t)s->sinks * row;
        float *v = s->values + (size_t)l * s->slots * row + (size_t)s->sinks * row;
        memmove(k, k + row, sizeof(float) * moved);
        memmove(v, v + row, sizeof(float) * moved);
    }
    s->length--;
}

al_status al_stream_cache_step(al_stream_cache *s, int32_t id, al_threadpool *pool, float *logits, al_error *err) {
    if (!s) return al_err(err, AL_ERR_INVALID, "stream_cache: no cache");
    const al_model *m = s->model;
    const al_config *c = &m->config;
    if (id < 0 || id >= c->vocab_size)
        return al_err(err, AL_ERR_INVALID, "stream_cache: token %d is outside the vocabulary [0, %d)", (int)id,
                      c->vocab_size);
    const int A = al_attn_width(c), KVW = al_kv_width(c);
    if (s->length == s->slots) evict(s, c->n_layers, KVW);
    const int T = s->length + 1, slot = T - 1;
    const al_score_rule *rule = al_score_rule_of(c);
    const al_batch batch = {1, 1, &id, NULL, NULL, &s->slot_pos[slot]};
    al_fwd_embed(m, &batch, &s->slot_pos[slot], 0, 1, s->wide, s->x);
    const al_layer_rule *lr = al_layer_rule_of(c);
    for (int l = 0; l < c->n_layers; l++) {
        float *K = s->keys + (size_t)l * s->slots * KVW, *V = s->values + (size_t)l * s->slots * KVW;
        al_dec_attn_input(m, l, s->x, s->tmp, 1);
        al_fwd_project_qkv_unturned(m, l, NULL, pool, s->tmp, 1, s->q, s->k, s->v);
        memcpy(K + (size_t)slot * KVW, s->k, sizeof(float) * (size_t)KVW);
        memcpy(V + (size_t)slot * KVW, s->v, sizeof(float) * (size_t)KVW);
        const float *keys = K;
        int ldk = KVW;
        if (rule->turn) {
            /* The rule turns queries and keys together, row by row and column by column (score_rule.h): the keys'
             * turn by slot here, beside a copy of them in the query's place, and the query's by its slot with the
             * new key, give each row the bits one forward over these slots gives it. */
            for (int t = 0; t < T; t++) {
                memcpy(s->turned + (size_t)t * A, K + (size_t)t * KVW, sizeof(float) * (size_t)KVW);
                memset(s->turned_q + (size_t)t * A, 0, sizeof(float) * (size_t)A);
            }
            rule->turn(c, l, s->turned_q, s->turned, A, s->slot_pos, T);
            rule->turn(c, l, s->q, s->k, A, &s->slot_pos[slot], 1);
            keys = s->turned, ldk = A;
        }
        const al_causal_keys allowed = {NULL, s->slot_pos, al_score_layer_begin(c, l, NULL, NULL, NULL).window, 0, 0};
        al_dec_attend(c, s->q, 1, slot, keys, ldk, V, KVW, T, &allowed, s->scores, s->ctx, NULL);
        lr->tail(m, l, pool, s->ctx, s->x, 1, s->tmp, s->wide);
    }
    s->length = T;
    if (logits) al_fwd_lm_rows(m, pool, s->x, 1, logits);
    return AL_OK;
}
