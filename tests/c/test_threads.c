/* test_threads.c: the same numbers on any thread count (docs/threads.md).
 *  - the thread pool runs every task exactly once on a thread of the pool, nested calls run inline, and a
 *    thread held up inside a task does not hold up the other tasks (they are claimed by the others);
 *  - every golden model's forward outputs (hidden states, attentions, values, MLM logits) with head
 *    policies of every mode, bit-identical for pools of 1, 2, 3 and 8 threads (every problem split as
 *    far as the pool allows, however small) and without a pool;
 *  - a bert-base-shaped layer at 128 tokens with the pool's own size thresholds;
 *  - all of these on every kernel path the build and CPU can run (x86-sse and x86-avx2 natively);
 *  - a PAPA sweep through the JSON API ("papa" op, 3 seeds whose probes train side by side): the same
 *    digest for sessions of 1, 2, 3 and 8 threads (1 and 3 under AddressSanitizer). */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "api/api_internal.h"
#include "check.h"
#include "core/threadpool.h"
#include "kernels/kernels.h"

static const int thread_counts[] = {1, 2, 3, 8};
#define N_COUNTS 4

/* ---------------------------------------------------------------- the pool itself */

typedef struct count_job {
    al_threadpool *pool;
    int hits[64];
    int bad_thread;
    int inner[64];
} count_job;

static void inner_task(void *arg, int t, int n, int thread) {
    int *row = arg;
    row[t] += 1;
    (void)n, (void)thread;
}

static void count_task(void *arg, int t, int n, int thread) {
    count_job *j = arg;
    j->hits[t]++;
    if (thread < 0 || thread >= al_threadpool_size(j->pool)) j->bad_thread = 1;
    int row[8] = {0};
    al_threadpool_for(j->pool, 8, inner_task, row); /* the pool is busy: runs here, in order */
    int ok = 1;
    for (int i = 0; i < 8; i++) ok &= row[i] == 1;
    j->inner[t] = ok;
    (void)n;
}

static void test_pool(void) {
    al_error err = {0};
    al_threadpool *pool = NULL;
    CHECK(al_threadpool_new(0, &pool, &err) == AL_ERR_INVALID && pool == NULL && strstr(err.message, "threads"));
    CHECK(al_threadpool_new(al_threads_max() + 1, &pool, &err) == AL_ERR_INVALID);
    CHECK(al_threads_default() >= 1 && al_threads_default() <= 8);
    CHECK(al_threadpool_size(NULL) == 1);
    for (int c = 0; c < N_COUNTS; c++) {
        CHECK(al_threadpool_new(thread_counts[c], &pool, &err) == AL_OK);
        if (!pool) continue;
        CHECK(al_threadpool_size(pool) == thread_counts[c]);
        for (int rep = 0; rep < 50; rep++) {
            count_job j;
            memset(&j, 0, sizeof j);
            j.pool = pool;
            const int n = 1 + rep % 40;
            al_threadpool_for(pool, n, count_task, &j);
            int ok = !j.bad_thread;
            for (int t = 0; t < 64; t++) ok &= j.hits[t] == (t < n) && j.inner[t] == (t < n);
            CHECK_MSG(ok, "%d threads, %d tasks", thread_counts[c], n);
        }
        al_threadpool_free(pool);
        pool = NULL;
    }
}

/* Task 0 waits (up to 20 s) until every other task has run: a fixed partition would leave task 0's thread
 * its own later tasks and time out; claiming gives them to the other threads. */
typedef struct held_job {
    _Atomic int others_done;
    int n, timed_out;
} held_job;

static void held_task(void *arg, int t, int n, int thread) {
    held_job *j = arg;
    (void)thread, (void)n;
    if (t != 0) {
        atomic_fetch_add(&j->others_done, 1);
        return;
    }
    for (int ms = 0; atomic_load(&j->others_done) < j->n - 1; ms++) {
        if (ms == 20000) {
            j->timed_out = 1;
            return;
        }
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
}

static void test_pool_claims(void) {
    al_error err = {0};
    al_threadpool *pool = NULL;
    CHECK(al_threadpool_new(2, &pool, &err) == AL_OK);
    if (!pool || al_threadpool_size(pool) < 2) {
        al_threadpool_free(pool);
        return;
    }
    for (int rep = 0; rep < 3; rep++) {
        held_job j = {0};
        j.n = 9;
        al_threadpool_for(pool, j.n, held_task, &j);
        CHECK_MSG(!j.timed_out && atomic_load(&j.others_done) == j.n - 1,
                  "a held-up task kept %d of %d other tasks waiting", j.n - 1 - atomic_load(&j.others_done), j.n - 1);
    }
    al_threadpool_free(pool);
}

/* ---------------------------------------------------------------- forward passes */

typedef struct fwd_result {
    float *hidden, *attn, *values, *logits;
    size_t n_hidden, n_attn, n_values, n_logits;
} fwd_result;

static void fwd_free(fwd_result *r) {
    free(r->hidden);
    free(r->attn);
    free(r->values);
    free(r->logits);
    memset(r, 0, sizeof *r);
}

static int run_forward(const al_model *m, const al_batch *batch, const al_head_policy *pol, al_threadpool *pool,
                       fwd_result *r) {
    const al_config *c = al_model_config(m);
    const size_t B = (size_t)batch->n_seqs, L = (size_t)batch->seq_len, NL = (size_t)c->n_layers;
    const size_t H = (size_t)c->n_heads;
    r->n_hidden = (NL + 1) * B * L * c->hidden_size;
    r->n_attn = NL * B * H * L * L;
    r->n_values = NL * B * H * L * c->head_dim;
    r->n_logits = al_model_has_mlm_head(m) ? B * L * c->vocab_size : 0;
    r->hidden = malloc(r->n_hidden * sizeof(float));
    r->attn = malloc(r->n_attn * sizeof(float));
    r->values = malloc(r->n_values * sizeof(float));
    r->logits = r->n_logits ? malloc(r->n_logits * sizeof(float)) : NULL;
    al_forward_outputs out = {
        .hidden_states = r->hidden,
        .attentions = r->attn,
        .values = r->values,
        .mlm_logits = r->logits,
    };
    al_forward_params p = al_forward_default_params();
    p.policies = pol;
    p.pool = pool;
    al_error err = {0};
    al_status st = al_forward(m, batch, &p, &out, &err);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    return st == AL_OK;
}

static int same_bits(const float *a, const float *b, size_t n) { return n == 0 || memcmp(a, b, n * sizeof(float)) == 0; }

static int same_result(const fwd_result *a, const fwd_result *b) {
    return same_bits(a->hidden, b->hidden, a->n_hidden) && same_bits(a->attn, b->attn, a->n_attn) &&
           same_bits(a->values, b->values, a->n_values) && same_bits(a->logits, b->logits, a->n_logits);
}

/* The batch on every other kernel path this build and CPU can run (x86-sse and x86-avx2 natively,
 * src/kernels/path.h), on a pool of 2: bit-identical to ref, computed on the default path. */
static void check_paths(const char *what, const al_model *m, const al_batch *batch, const al_head_policy *pol,
                        int split_all, const fwd_result *ref) {
    const char *paths[8], *was = al_kernels_path();
    const int n = al_kernels_paths(paths, 8);
    al_threadpool *pool = NULL;
    al_error err = {0};
    CHECK(al_threadpool_new(2, &pool, &err) == AL_OK);
    al_threadpool_split_all(pool, split_all);
    for (int p = 0; p < n && p < 8; p++) {
        if (strcmp(paths[p], was) == 0) continue;
        CHECK(al_kernels_set_path(paths[p]) == 0);
        fwd_result r = {0};
        if (run_forward(m, batch, pol, pool, &r))
            CHECK_MSG(same_result(ref, &r), "%s: kernel path %s differs from %s", what, paths[p], was);
        printf("%s: kernel path %s = %s, bit for bit\n", what, paths[p], was);
        fwd_free(&r);
    }
    CHECK(al_kernels_set_path(was) == 0);
    al_threadpool_free(pool);
}

/* The batch once with no pool, then with each pool (split_all as given), then on every other kernel
 * path: every output bit-identical. */
static void check_counts(const char *what, const al_model *m, const al_batch *batch, const al_head_policy *pol,
                         int split_all) {
    fwd_result ref = {0};
    if (!run_forward(m, batch, pol, NULL, &ref)) return;
    for (int c = 0; c < N_COUNTS; c++) {
        al_threadpool *pool = NULL;
        al_error err = {0};
        CHECK(al_threadpool_new(thread_counts[c], &pool, &err) == AL_OK);
        al_threadpool_split_all(pool, split_all);
        fwd_result r = {0};
        if (run_forward(m, batch, pol, pool, &r))
            CHECK_MSG(same_result(&ref, &r), "%s: %d threads differ from one", what, thread_counts[c]);
        fwd_free(&r);
        al_threadpool_free(pool);
    }
    check_paths(what, m, batch, pol, split_all, &ref);
    fwd_free(&ref);
}

/* Every golden model of test_golden.c on a padded batch of 3 sequences, with all heads standard and
 * with a mix of every head mode (constant, mix, zero; tests/c/test_hooks.c checks their numbers). */
static void test_golden_models(void) {
    static const char *const dirs[] = {"bert", "bert_gelu_new", "roberta", "distilbert", "electra"};
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) {
        char path[256];
        snprintf(path, sizeof path, "tests/golden/%s", dirs[d]);
        al_model *m = NULL;
        al_error err = {0};
        CHECK_MSG(al_model_load_dir(path, &m, &err) == AL_OK, "%s: %s", path, err.message);
        if (!m) continue;
        const al_config *c = al_model_config(m);
        enum { B = 3, L = 11 };
        int32_t ids[B * L], mask[B * L];
        for (int b = 0; b < B; b++)
            for (int i = 0; i < L; i++) {
                const int real = i < L - 3 * b;
                ids[b * L + i] = real ? (7 + 13 * i + 5 * b) % c->vocab_size : c->pad_token_id;
                mask[b * L + i] = real;
            }
        al_batch batch = {B, L, ids, mask, NULL, NULL};
        check_counts(dirs[d], m, &batch, NULL, 1);

        const int NL = c->n_layers, H = c->n_heads;
        al_head_policy *pol = calloc((size_t)NL * H, sizeof *pol);
        float *C = malloc(sizeof(float) * L * L);
        for (int i = 0; i < L * L; i++) C[i] = (float)(1 + (i * 7) % 5);
        for (int k = 0; k < NL * H; k++) {
            pol[k].mode = (al_head_mode)(k % 4);
            pol[k].lambda = 0.25f;
            pol[k].constant = pol[k].mode == AL_HEAD_CONSTANT || pol[k].mode == AL_HEAD_MIX ? C : NULL;
        }
        snprintf(path, sizeof path, "%s with policies", dirs[d]);
        check_counts(path, m, &batch, pol, 1);
        free(pol);
        free(C);
        al_model_free(m);
    }
}

/* A bert-base-shaped layer (D 768, 12 heads, FFN 3072) at 128 tokens: the pool's own thresholds. */
static void test_base_shape(void) {
    al_config cfg = al_config_bert(1000, 768, 1, 12, 3072);
    al_model *m = NULL;
    al_error err = {0};
    CHECK_MSG(al_model_new_random(&cfg, 5, 1, &m, &err) == AL_OK, "%s", err.message);
    if (!m) return;
    enum { B = 2, L = 128 };
    int32_t *ids = malloc(sizeof(int32_t) * B * L), *mask = malloc(sizeof(int32_t) * B * L);
    for (int t = 0; t < B * L; t++) {
        ids[t] = (t * 31 + 3) % 1000;
        mask[t] = t < L + 100;
    }
    al_batch batch = {B, L, ids, mask, NULL, NULL};
    check_counts("bert-base layer", m, &batch, NULL, 0);
    free(ids);
    free(mask);
    al_model_free(m);
}

/* ---------------------------------------------------------------- a PAPA sweep through the API */

static const char *digest_of(const char *json, char out[80]) {
    const char *p = strstr(json, "\"digest\"");
    out[0] = '\0';
    if (!p || !(p = strstr(p, "sha256:"))) return out;
    size_t n = 0;
    while (n < 71 && p[n] && p[n] != '"') n++;
    memcpy(out, p, n);
    out[n] = '\0';
    return out;
}

/* Under AddressSanitizer two sessions (1 and 3 threads) check memory safety; all four counts run in the
 * native and WebAssembly builds, where a sweep takes seconds instead of minutes. */
#if defined(__SANITIZE_ADDRESS__)
static const int papa_counts[] = {1, 3};
#else
static const int papa_counts[] = {1, 2, 3, 8};
#endif

static void test_papa_digest(void) {
    FILE *f = fopen("build/data/tasks/pos.jsonl", "rb");
    if (!f) {
        printf("papa digest: no build/data/tasks/pos.jsonl, skipped\n");
        return;
    }
    fclose(f);
    char first[80] = "";
    for (size_t c = 0; c < sizeof papa_counts / sizeof papa_counts[0]; c++) {
        al_session_params sp = al_session_default_params();
        sp.n_threads = papa_counts[c];
        al_session *s = al_session_new_params(&sp);
        CHECK(s != NULL);
        if (!s) continue;
        CHECK(al_session_threads(s) == papa_counts[c]);
        al_threadpool_split_all(s->pool, 1);
        al_reply reply = {0};
        al_status st = al_session_run(s, "{\"op\": \"load_model\", \"model\": \"mini\", \"path\": \"models/attnlab-mini-bert\"}",
                                      NULL, &reply);
        CHECK_MSG(st == AL_OK, "%s", reply.json);
        al_reply_free(&reply);
        st = al_session_run(s,
                            "{\"op\": \"papa\", \"model\": \"mini\", \"task\": \"pos\", \"max_train\": 64, "
                            "\"max_validation\": 24, \"L\": 32, \"seeds\": [1, 2, 3], \"fractions\": [1, 0.5, 0], "
                            "\"orders\": [\"lambda\", \"random\"], \"probe\": {\"epochs\": 1}, "
                            "\"ranking\": {\"max_examples\": 24, \"epochs\": 1, \"shards\": 2}}",
                            NULL, &reply);
        CHECK_MSG(st == AL_OK, "%s", reply.json ? reply.json : "");
        char d[80];
        digest_of(reply.json ? reply.json : "", d);
        CHECK_MSG(strlen(d) == 71, "no digest in %.200s", reply.json ? reply.json : "");
        if (c == 0) {
            memcpy(first, d, sizeof first);
            printf("papa digest on 1 thread: %s\n", d);
        } else {
            CHECK_MSG(strcmp(first, d) == 0, "papa digest on %d threads %s != %s", papa_counts[c], d, first);
        }
        al_reply_free(&reply);
        al_session_free(s);
    }
}

int main(void) {
    test_pool();
    test_pool_claims();
    test_golden_models();
    test_base_shape();
    test_papa_digest();
    return check_summary("threads");
}
