/* test_stream_cache.c: StreamingLLM's rolling key/value cache with positions in the cache (src/model/stream_cache.h,
 * docs/decoders.md "Positions in the cache") against the float64 reference tests/golden/make_decoder_stream.py
 * writes: a text three times the model's positions read through caches of k sinks and W recent slots, the loss after
 * every token; the same bits on 1 and 3 threads; while nothing leaves the cache, the bits of the plain forward; bad
 * calls refused by name. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "fnv_digest.h"
#include "golden_file.h"
#include "methods/lm/lm_score.h"
#include "model/stream_cache.h"

/* The loss after each of ids[0 .. n-2] through a cache of (sinks, recent), into nll [n - 1]. */
static int read_text(const al_model *m, const int32_t *ids, int n, int sinks, int recent, al_threadpool *pool,
                     float *nll, float *logits_out) {
    const int V = al_model_config(m)->vocab_size;
    al_error err;
    al_stream_cache *c = NULL;
    float *logits = malloc(sizeof(float) * V);
    if (!logits || al_stream_cache_new(m, sinks, recent, &c, &err) != AL_OK) {
        free(logits);
        return 0;
    }
    int ok = 1;
    for (int i = 0; ok && i + 1 < n; i++) {
        ok = al_stream_cache_step(c, ids[i], pool, logits, &err) == AL_OK;
        float e;
        if (ok) al_lm_score_row(logits, V, ids[i + 1], 0, &nll[i], &e, NULL, NULL);
        if (ok && logits_out) memcpy(logits_out + (size_t)i * V, logits, sizeof(float) * V);
    }
    al_stream_cache_free(c);
    free(logits);
    return ok;
}

static uint64_t check_variant(const char *name, al_threadpool *pool3, uint64_t digest) {
    char path[256];
    snprintf(path, sizeof path, "tests/golden/decoders/%s", name);
    al_model *m = NULL;
    al_error err;
    CHECK_MSG(al_model_load_dir(path, &m, &err) == AL_OK, "%s: %s", name, err.message);
    if (!m) return digest;
    const al_config *c = al_model_config(m);
    const int P = c->max_position_embeddings, N = 3 * P, V = c->vocab_size;
    snprintf(path, sizeof path, "tests/golden/decoders/%s/stream.safetensors", name);
    golden_file g;
    CHECK(golden_open(&g, path));
    const double *ids_d = golden_f64_in(&g, "ids", (size_t)N), *cfg = golden_f64_in(&g, "cfg", 6);
    const double *want = golden_f64_in(&g, "nll", (size_t)3 * (N - 1));
    CHECK_MSG(ids_d && cfg && want, "%s: the reference's ids, cfg and nll", name);
    int32_t *ids = malloc(sizeof(int32_t) * N);
    float *nll = malloc(sizeof(float) * N), *nll3 = malloc(sizeof(float) * N);
    for (int i = 0; ids_d && i < N; i++) ids[i] = (int32_t)ids_d[i];
    for (int r = 0; want && cfg && r < 3; r++) {
        const int k = (int)cfg[2 * r], W = (int)cfg[2 * r + 1];
        CHECK(read_text(m, ids, N, k, W, NULL, nll, NULL));
        digest = fnv_digest(digest, nll, (size_t)N - 1);
        double worst = 0.0;
        for (int i = 0; i + 1 < N; i++) {
            const double ref = want[(size_t)r * (N - 1) + i], e = fabs(nll[i] - ref) / fmax(1.0, fabs(ref));
            if (!(e <= worst)) worst = e;
        }
        printf("%-14s k %d W %2d: %d tokens, largest error of the loss %.2e\n", name, k, W, N - 1, worst);
        CHECK_MSG(worst < 2e-5, "%s k %d W %d: loss off the float64 reference by %.3e", name, k, W, worst);
        /* the thread count changes no bit */
        CHECK(read_text(m, ids, N, k, W, pool3, nll3, NULL));
        CHECK_MSG(!memcmp(nll, nll3, sizeof(float) * (N - 1)), "%s k %d W %d: 3 threads differ", name, k, W);
    }
    /* nothing leaves a cache of P slots over P tokens: each step is the plain forward's row, bit for bit */
    float *logits = malloc(sizeof(float) * (size_t)P * V), *steps = malloc(sizeof(float) * (size_t)P * V);
    al_forward_outputs out = {0};
    out.lm_logits = logits;
    al_batch b = {1, P, ids, NULL, NULL, NULL};
    CHECK(al_forward(m, &b, NULL, &out, &err) == AL_OK);
    CHECK(read_text(m, ids, P, 4, P - 4, NULL, nll, steps));
    CHECK_MSG(!memcmp(logits, steps, sizeof(float) * (size_t)(P - 1) * V), "%s: the cache's rows differ from the "
              "forward's before any token leaves", name);
    /* refusals name what is wrong */
    al_stream_cache *sc = NULL;
    CHECK(al_stream_cache_new(m, 4, P - 3, &sc, &err) == AL_ERR_INVALID && strstr(err.message, "positions"));
    CHECK(al_stream_cache_new(m, 0, 0, &sc, &err) == AL_ERR_INVALID && strstr(err.message, "recent"));
    CHECK(al_stream_cache_new(m, 1, 4, &sc, &err) == AL_OK);
    CHECK(al_stream_cache_step(sc, (int32_t)V, NULL, NULL, &err) == AL_ERR_INVALID && strstr(err.message, "vocabulary"));
    al_stream_cache_free(sc);
    free(logits), free(steps), free(ids), free(nll), free(nll3);
    golden_close(&g);
    al_model_free(m);
    return digest;
}

int main(void) {
    al_error err;
    al_threadpool *pool3 = NULL;
    CHECK(al_threadpool_new(3, &pool3, &err) == AL_OK);
    const char *names[] = {"gpt2", "llama_gqa", "qwen2_window", "pythia"};
    uint64_t digest = FNV_DIGEST_START;
    for (int v = 0; v < 4; v++) digest = check_variant(names[v], pool3, digest);
    /* every loss's bits, pinned: the same constant natively (4- and 8-lane paths) and in WASM */
    printf("digest %016llx\n", (unsigned long long)digest);
    CHECK_MSG(digest == 0x5d5ab52f1d1f55e8ull, "the losses' digest %016llx is not the pinned one", (unsigned long long)digest);
    /* an encoder has no cache */
    al_model *enc = NULL;
    if (al_model_load_dir("models/attnlab-mini-bert", &enc, &err) == AL_OK) {
        al_stream_cache *sc = NULL;
        CHECK(al_stream_cache_new(enc, 0, 4, &sc, &err) == AL_ERR_INVALID && strstr(err.message, "causal"));
        al_model_free(enc);
    }
    al_threadpool_free(pool3);
    return check_summary("stream_cache");
}
