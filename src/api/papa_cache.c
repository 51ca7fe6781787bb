/* papa_cache.c: the session names of PAPA's averaged constants and learned lambdas, and keeping them
 * (papa_cache.h). */
#include "papa_cache.h"

#include <stdio.h>
#include <string.h>

#include "reply_digest.h"

static void cache_name(const char *what, const char *key, char name[64]) {
    char hex[65];
    al_sha256_hex_of(key, strlen(key), hex);
    snprintf(name, 64, "papa:%s:%.32s", what, hex);
}

void al_papa_cache_keys(const char *model_hash, const al_task *task, const al_papa_sweep_request *q, char c_name[64],
                       char t_name[64]) {
    char key[1024];
    int n = snprintf(key, sizeof key, "constants %s %s L=%d layout=%d max_train=%d examples=%d", model_hash, task->hash,
                     q->L, (int)q->layout, q->max_train, q->constants_examples);
    cache_name("constants", key, c_name);
    snprintf(key + n, sizeof key - (size_t)n, " ranking %d %d %d %.9g %d %d %llu %.9g", q->rank.epochs, q->rank.batch_size,
             q->rank.max_examples, (double)q->rank.lr, q->rank.shards, q->rank.train_mode,
             (unsigned long long)q->rank.seed, (double)q->probe.dropout);
    cache_name("theta", key, t_name);
}

void al_papa_lm_cache_keys(const char *model_hash, const char *averaged_hash, const al_papa_sweep_request *q,
                           int min_windows, char c_name[64], char t_name[64]) {
    char key[1024];
    int n = snprintf(key, sizeof key, "lm constants %s %s L=%d min_windows=%d batch=%d", model_hash, averaged_hash, q->L,
                     min_windows, q->batch_size);
    cache_name("constants", key, c_name);
    snprintf(key + n, sizeof key - (size_t)n, " ranking %d %d %d %.9g %d %d %llu", q->rank.epochs, q->rank.batch_size,
             q->rank.max_examples, (double)q->rank.lr, q->rank.shards, q->rank.train_mode,
             (unsigned long long)q->rank.seed);
    cache_name("theta", key, t_name);
}

void al_papa_cache_put(al_session *session, const char *name, int ndim, const int64_t *shape, const float *data) {
    al_error ignored;
    if (data && !al_api_find_tensor(session, name)) al_session_set_tensor(session, name, ndim, shape, data, &ignored);
}
