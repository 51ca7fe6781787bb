/* decode.c: the key/value cache of a causal model (attnlab.h, docs/decoders.md "The key/value cache"). A call runs
 * n new tokens through every layer: the forward's embeddings, its norm before attention and its projections and
 * turn (al_fwd_project_qkv), the new keys and values appended to the layer's cache, each head's scores against every
 * cached key with the forward's kernel and factor, the causal rows' softmax (causal_rows.c), P V, then the layer
 * rule's tail and the LM head. Each step is the computation the forward makes for those rows: a GEMM's entry does
 * not depend on the other rows or on trailing zero weights (src/kernels/gemm.c), and a causal row's softmax reads
 * its allowed keys only, so a generated token's numbers are al_forward's bits for the whole text.
 *
 * Memory: the cache holds [NL][max_tokens][KVW] keys and values as projected (key/value heads unshared); a call
 * measures and carves its scratch from one allocation (src/core/carve.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/carve.h"
#include "../core/error.h"
#include "../core/memory.h"
#include "../kernels/kernels.h"
#include "family.h"
#include "family_params.h"
#include "forward_internal.h"
#include "layer_rule.h"
#include "model_internal.h"
#include "score_rule.h"

struct al_kv_cache {
    const al_model *model;
    int max_tokens, length;
    float *keys, *values; /* [NL, max_tokens, KVW] */
    int32_t *pos;         /* [max_tokens] 0, 1, ... */
};

al_status al_kv_cache_new(const al_model *model, int max_tokens, al_kv_cache **out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "kv_cache: no output pointer");
    *out = NULL;
    if (!model || !al_model_is_causal(model))
        return al_err(err, AL_ERR_INVALID, "kv_cache: the model is not a causal language model");
    const al_config *c = &model->config;
    if (max_tokens < 1 || max_tokens > c->max_position_embeddings)
        return al_err(err, AL_ERR_INVALID, "kv_cache: max_tokens %d is outside 1..%d (max_position_embeddings)",
                      max_tokens, c->max_position_embeddings);
    const size_t n = (size_t)c->n_layers * (size_t)max_tokens * (size_t)al_kv_width(c);
    al_status st = al_memory_check(2 * n * sizeof(float), "kv_cache: the key/value cache", err);
    if (st) return st;
    al_kv_cache *kc = calloc(1, sizeof *kc);
    if (kc) {
        kc->keys = malloc(sizeof(float) * (n ? n : 1));
        kc->values = malloc(sizeof(float) * (n ? n : 1));
        kc->pos = malloc(sizeof(int32_t) * (size_t)max_tokens);
    }
    if (!kc || !kc->keys || !kc->values || !kc->pos) {
        al_kv_cache_free(kc);
        return al_err(err, AL_ERR_OOM, "kv_cache: out of memory for %d positions", max_tokens);
    }
    for (int i = 0; i < max_tokens; i++) kc->pos[i] = i;
    kc->model = model;
    kc->max_tokens = max_tokens;
    *out = kc;
    return AL_OK;
}

void al_kv_cache_free(al_kv_cache *cache) {
    if (!cache) return;
    free(cache->keys), free(cache->values), free(cache->pos);
    free(cache);
}

int al_kv_cache_length(const al_kv_cache *cache) { return cache ? cache->length : 0; }
void al_kv_cache_reset(al_kv_cache *cache) {
    if (cache) cache->length = 0;
}

typedef struct scratch {
    float *x, *tmp, *wide, *q, *k, *v, *ctx, *scores; /* [n, D] [n, D] [n, 2I] [n, A] x3 [n, A] [n, T] */
} scratch;

static void layout(al_carver *cv, const al_config *c, int n, int T, scratch *s) {
    const size_t D = (size_t)c->hidden_size, A = (size_t)al_attn_width(c);
    size_t wide = (size_t)al_fwd_ffn_width(c);
    if ((size_t)c->embedding_size > wide) wide = (size_t)c->embedding_size;
    s->x = al_carve_rows(cv, (size_t)n, D);
    s->tmp = al_carve_rows(cv, (size_t)n, D);
    s->wide = al_carve_rows(cv, (size_t)n, wide);
    s->q = al_carve_rows(cv, (size_t)n, A);
    s->k = al_carve_rows(cv, (size_t)n, A);
    s->v = al_carve_rows(cv, (size_t)n, A);
    s->ctx = al_carve_rows(cv, (size_t)n, A);
    s->scores = al_carve_rows(cv, (size_t)n, (size_t)T);
}

void al_dec_attend(const al_config *c, const float *q, int n, int p0, const float *K, int ldk, const float *V, int ldv,
                   int T, const al_causal_keys *keys, float *scores, float *ctx, float *attn) {
    const int H = c->n_heads, dh = c->head_dim, A = al_attn_width(c), group = H / al_kv_heads(c);
    for (int h = 0; h < H; h++) {
        const int kv = (h / group) * dh;
        al_gemm_nt(n, T, dh, 1.0f / sqrtf((float)dh), q + (size_t)h * dh, A, K + kv, ldk, scores, T, 0);
        for (int r = 0; r < n; r++) al_causal_softmax_row(scores + (size_t)r * T, T, p0 + r, keys);
        al_gemm_nn(n, dh, T, 1.0f, scores, T, V + kv, ldv, ctx + (size_t)h * dh, A, 0);
        if (attn) memcpy(attn + (size_t)h * n * T, scores, sizeof(float) * (size_t)n * T);
    }
}

/* Layer l's attention for the n new rows (their q, k, v in s) over the cache's p0 + n positions, into s->ctx. */
static void attend(const al_model *m, al_kv_cache *kc, int l, int p0, int n, scratch *s, float *attn) {
    const al_config *c = &m->config;
    const int A = al_attn_width(c), KVW = al_kv_width(c);
    const al_causal_keys keys = {NULL, kc->pos, al_score_layer_begin(c, l, NULL, NULL, NULL).window, 0, 0};
    float *K = kc->keys + (size_t)l * kc->max_tokens * KVW, *Vc = kc->values + (size_t)l * kc->max_tokens * KVW;
    for (int r = 0; r < n; r++) {
        memcpy(K + (size_t)(p0 + r) * KVW, s->k + (size_t)r * A, sizeof(float) * (size_t)KVW);
        memcpy(Vc + (size_t)(p0 + r) * KVW, s->v + (size_t)r * A, sizeof(float) * (size_t)KVW);
    }
    al_dec_attend(c, s->q, n, p0, K, KVW, Vc, KVW, p0 + n, &keys, s->scores, s->ctx, attn);
}

al_status al_decode(const al_model *model, al_kv_cache *cache, const int32_t *ids, int n, al_threadpool *pool,
                    float *logits, float *attentions, al_error *err) {
    if (!model || !cache || cache->model != model)
        return al_err(err, AL_ERR_INVALID, "decode: the cache belongs to another model");
    const al_config *c = &model->config;
    if (n < 1 || !ids) return al_err(err, AL_ERR_INVALID, "decode: no tokens given");
    const int p0 = cache->length, T = p0 + n;
    if (T > cache->max_tokens)
        return al_err(err, AL_ERR_INVALID, "decode: %d tokens after the %d cached ones exceed the cache's %d positions",
                      n, p0, cache->max_tokens);
    for (int i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= c->vocab_size)
            return al_err(err, AL_ERR_INVALID, "decode: token %d = %d is outside the vocabulary [0, %d)", i, (int)ids[i],
                          c->vocab_size);
    scratch s;
    al_carver cv = {NULL, 0};
    layout(&cv, c, n, T, &s);
    al_status st = al_memory_check(al_carve_bytes(&cv), "decode: its scratch", err);
    if (st) return st;
    float *mem = malloc((size_t)cv.used * sizeof(float) + 1);
    if (!mem) return al_err(err, AL_ERR_OOM, "decode: out of memory for %d tokens", n);
    cv = (al_carver){mem, 0};
    layout(&cv, c, n, T, &s);

    const al_batch batch = {1, n, ids, NULL, NULL, cache->pos + p0};
    al_fwd_embed(model, &batch, cache->pos + p0, 0, 1, s.wide, s.x);
    const al_layer_rule *rule = al_layer_rule_of(c);
    const size_t per_layer = (size_t)c->n_heads * n * T;
    for (int l = 0; l < c->n_layers; l++) {
        al_dec_attn_input(model, l, s.x, s.tmp, n);
        al_fwd_project_qkv(model, l, NULL, pool, s.tmp, n, cache->pos + p0, s.q, s.k, s.v);
        attend(model, cache, l, p0, n, &s, attentions ? attentions + (size_t)l * per_layer : NULL);
        rule->tail(model, l, pool, s.ctx, s.x, n, s.tmp, s.wide);
    }
    if (logits) al_fwd_lm_rows(model, pool, s.x, n, logits);
    cache->length = T;
    free(mem);
    return AL_OK;
}
