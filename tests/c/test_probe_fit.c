/* test_probe_fit.c: probe training on cached features (src/methods/probes/probe_data.c, probe_fit.c).
 *  - a sequence probe (dropout 0.1) and a token probe learn separable synthetic tasks: training and held-out
 *    accuracy near 1 (held-out predictions come in chunks smaller than the set, so evaluation's chunking
 *    is exercised); the sequence task's pads carry large misleading values, which the probe never sees;
 *  - the same seeds give the same parameters bit for bit; another seed gives others; a probe whose matrix
 *    products are split over a thread pool (al_probe_set_pool) ends with the same bits as one on one thread;
 *  - the memory estimate refuses a set over the caller's limit with the size in the message; capacities,
 *    cancellation and progress reports behave as documented. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "methods/probes/metrics.h"
#include "methods/probes/probe.h"

enum { S = 2, D = 8, L = 8, C = 3, BATCH = 16 };

/* One padded batch of BATCH examples. SEQUENCE: label y per example, every real token's states get +2 on
 * dimension y, pads get -5 on dimension (y + 1) % C. TOKEN: a label per real token (every third one -100),
 * +3 on the dimension C + its label. Lengths 2..L. */
typedef struct synth {
    float hidden[S * BATCH * L * D];
    const float *states[S];
    int32_t mask[BATCH * L], token_labels[BATCH * L], seq_labels[BATCH];
} synth;

static void make_batch(synth *s, al_rng *rng) {
    for (int k = 0; k < S; k++) s->states[k] = s->hidden + (size_t)k * BATCH * L * D;
    for (int b = 0; b < BATCH; b++) {
        const int len = 2 + (int)al_rng_below(rng, L - 1), y = (int)al_rng_below(rng, C);
        s->seq_labels[b] = y;
        for (int t = 0; t < L; t++) {
            const int bt = b * L + t, real = t < len, yt = (int)al_rng_below(rng, C);
            s->mask[bt] = real;
            s->token_labels[bt] = !real ? AL_IGNORE_INDEX : t % 3 == 2 ? AL_IGNORE_INDEX : yt;
            for (int k = 0; k < S; k++) {
                float *h = s->hidden + (((size_t)k * BATCH + b) * L + t) * D;
                for (int i = 0; i < D; i++) h[i] = al_rng_normal(rng);
                if (!real) h[(y + 1) % C] -= 5.0f;
                else {
                    h[y] += 2.0f;       /* the example's class */
                    h[C + yt] += 3.0f;  /* the token's class */
                }
            }
        }
    }
}

static al_probe_data *make_data(al_probe_kind kind, int n_batches, uint64_t seed) {
    al_probe_data *d = NULL;
    al_error err;
    CHECK(al_probe_data_new(kind, S, D, L, (int64_t)n_batches * BATCH, (int64_t)n_batches * BATCH * L, 0, &d, &err) ==
          AL_OK);
    if (!d) return NULL;
    al_rng rng;
    al_rng_seed(&rng, seed);
    static synth s;
    for (int i = 0; i < n_batches; i++) {
        make_batch(&s, &rng);
        al_probe_dense in = {S, BATCH, L, D, s.states, s.mask, s.token_labels};
        al_status st = al_probe_data_add(d, &in, s.seq_labels, 1, &err);
        CHECK_MSG(st == AL_OK, "data add: %s", err.message);
    }
    return d;
}

static al_probe *make_probe(al_probe_kind kind) {
    al_probe_config cfg = al_probe_default_config();
    cfg.kind = kind;
    cfg.n_states = S;
    cfg.hidden = D;
    cfg.max_len = L;
    cfg.n_labels = C;
    cfg.dropout = kind == AL_PROBE_SEQUENCE ? 0.1f : 0.0f;
    cfg.max_batch = 8;
    al_probe *p = NULL;
    al_error err;
    CHECK(al_probe_new(&cfg, 5, &p, &err) == AL_OK);
    return p;
}

static double last_fraction = -1.0;
static int n_progress = 0;
static void on_progress(void *user, const char *stage, double fraction) {
    (void)user;
    CHECK(strcmp(stage, "probe_fit") == 0);
    CHECK(fraction > last_fraction || n_progress == 0);
    last_fraction = fraction;
    n_progress++;
}

static double accuracy_on(al_probe *p, const al_probe_data *d) {
    const int kind_token = al_probe_get_config(p)->kind == AL_PROBE_TOKEN;
    const int n = kind_token ? al_probe_data_n_rows(d) : al_probe_data_n_examples(d);
    int32_t *preds = malloc(sizeof(int32_t) * (size_t)n);
    al_error err;
    double acc = -1.0;
    CHECK(al_probe_evaluate(p, d, preds, &err) == AL_OK);
    CHECK(al_metric_accuracy(preds, al_probe_data_labels(d), (size_t)n, &acc, &err) == AL_OK);
    free(preds);
    return acc;
}

static void test_learns(al_probe_kind kind) {
    const char *name = kind == AL_PROBE_SEQUENCE ? "sequence" : "token";
    al_probe_data *train = make_data(kind, 6, 1), *val = make_data(kind, 3, 2);
    if (!train || !val) return;
    al_probe_fit_options o = al_probe_fit_default_options();
    o.epochs = 12;
    o.batch_size = 8;
    o.lr = 1e-2f;
    o.seed = 3;
    o.progress = on_progress;
    al_probe *p = make_probe(kind), *q = make_probe(kind), *r = make_probe(kind);
    al_probe_fit_report rep;
    al_error err;
    last_fraction = -1.0;
    n_progress = 0;
    al_status st = al_probe_fit(p, train, &o, &rep, &err);
    CHECK_MSG(st == AL_OK, "fit: %s", err.message);
    CHECK(rep.steps == 12 * (96 / 8));
    CHECK(last_fraction == 1.0 && n_progress >= 10 && n_progress <= 101);
    const double acc_train = accuracy_on(p, train), acc_val = accuracy_on(p, val);
    printf("%s probe: %d steps, epoch loss %.4f -> %.4f, accuracy train %.4f, held-out %.4f (%d %s)\n", name,
           rep.steps, rep.first_epoch_loss, rep.last_epoch_loss, acc_train, acc_val,
           kind == AL_PROBE_TOKEN ? al_probe_data_n_rows(val) : al_probe_data_n_examples(val),
           kind == AL_PROBE_TOKEN ? "labelled tokens" : "examples");
    CHECK(rep.last_epoch_loss < 0.5 * rep.first_epoch_loss);
    CHECK(acc_train >= 0.97);
    CHECK(acc_val >= 0.95);

    /* Repeatable: the same seeds, the same bits; another shuffling seed, other parameters. */
    o.progress = NULL;
    CHECK(al_probe_fit(q, train, &o, NULL, &err) == AL_OK);
    const size_t n = al_probe_n_params(p);
    CHECK(memcmp(al_probe_params(p), al_probe_params(q), n * sizeof(float)) == 0);
    o.seed = 4;
    CHECK(al_probe_fit(r, train, &o, NULL, &err) == AL_OK);
    CHECK(memcmp(al_probe_params(p), al_probe_params(r), n * sizeof(float)) != 0);

    /* Cancellation stops before the first step. */
    volatile int cancel = 1;
    o.cancel = &cancel;
    CHECK(al_probe_fit(r, train, &o, NULL, &err) == AL_ERR_CANCELLED && strstr(err.message, "cancelled"));
    /* A batch larger than the probe's max_batch. */
    o.cancel = NULL;
    o.batch_size = 9;
    CHECK(al_probe_fit(r, train, &o, NULL, &err) == AL_ERR_INVALID && strstr(err.message, "max_batch"));
    al_probe_free(p);
    al_probe_free(q);
    al_probe_free(r);
    al_probe_data_free(train);
    al_probe_data_free(val);
}

static void test_data_limits(void) {
    /* 1000 rows of 13 x 768 floats: about 40 MB; a 1 MB limit refuses before allocating. */
    const size_t bytes = al_probe_data_bytes(AL_PROBE_SEQUENCE, 13, 768, 100, 1000);
    CHECK(bytes == 4 * ((size_t)1000 * 13 * 768 + 2 * 1000 + 100 + 101));
    al_probe_data *d = NULL;
    al_error err;
    CHECK(al_probe_data_new(AL_PROBE_SEQUENCE, 13, 768, 64, 100, 1000, 1u << 20, &d, &err) == AL_ERR_OOM && !d);
    char want[32];
    snprintf(want, sizeof want, "%zu bytes", bytes);
    CHECK_MSG(strstr(err.message, want) != NULL, "message: %s", err.message);
    /* Capacities: a second batch does not fit 20 examples. */
    CHECK(al_probe_data_new(AL_PROBE_SEQUENCE, S, D, L, 20, 20 * L, 0, &d, &err) == AL_OK);
    if (!d) return;
    static synth s;
    al_rng rng;
    al_rng_seed(&rng, 1);
    make_batch(&s, &rng);
    al_probe_dense in = {S, BATCH, L, D, s.states, s.mask, NULL};
    CHECK(al_probe_data_add(d, &in, s.seq_labels, 0, &err) == AL_OK);
    CHECK(al_probe_data_n_examples(d) == BATCH);
    int rows = 0;
    for (int i = 0; i < BATCH * L; i++) rows += s.mask[i];
    CHECK(al_probe_data_n_rows(d) == rows && al_probe_data_example_offsets(d)[BATCH] == rows);
    CHECK(al_probe_data_add(d, &in, NULL, 0, &err) == AL_ERR_INVALID && strstr(err.message, "seq_labels"));
    CHECK(al_probe_data_add(d, &in, s.seq_labels, 0, &err) == AL_ERR_INVALID && strstr(err.message, "capacity"));
    /* A probe of another width refuses the data. */
    al_probe_config cfg = al_probe_default_config();
    cfg.n_states = S;
    cfg.hidden = D + 1;
    cfg.max_len = L;
    cfg.n_labels = C;
    al_probe *p = NULL;
    CHECK(al_probe_new(&cfg, 1, &p, &err) == AL_OK);
    al_probe_fit_options o = al_probe_fit_default_options();
    CHECK(al_probe_fit(p, d, &o, NULL, &err) == AL_ERR_INVALID && strstr(err.message, "width"));
    al_probe_free(p);
    al_probe_data_free(d);
}

/* The sweep trains a last round's seeds with their products split over the pool (src/methods/papa/papa_sweep.c,
 * run_seeds): the parameters must be those of the one-thread fit bit for bit, for both kinds. The shapes are
 * large enough that the GEMMs really split (docs/threads.md: about 2^18 multiply-adds a task). */
static void test_pool_same_bits(al_probe_kind kind) {
    enum { S2 = 5, D2 = 96, L2 = 24, B2 = 16, N_BATCHES = 3 };
    al_error err;
    al_probe_data *d = NULL;
    CHECK(al_probe_data_new(kind, S2, D2, L2, N_BATCHES * B2, N_BATCHES * B2 * L2, 0, &d, &err) == AL_OK);
    static float hidden[S2 * B2 * L2 * D2];
    const float *states[S2];
    int32_t mask[B2 * L2], tok[B2 * L2], seq[B2];
    al_rng rng;
    al_rng_seed(&rng, 11);
    for (int i = 0; d && i < N_BATCHES; i++) {
        for (size_t j = 0; j < sizeof hidden / sizeof hidden[0]; j++) hidden[j] = al_rng_normal(&rng);
        for (int k = 0; k < S2; k++) states[k] = hidden + (size_t)k * B2 * L2 * D2;
        for (int b = 0; b < B2; b++) {
            const int len = 4 + (int)al_rng_below(&rng, L2 - 4);
            seq[b] = (int)al_rng_below(&rng, C);
            for (int t = 0; t < L2; t++) {
                mask[b * L2 + t] = t < len;
                tok[b * L2 + t] = t < len ? (int)al_rng_below(&rng, C) : AL_IGNORE_INDEX;
            }
        }
        al_probe_dense in = {S2, B2, L2, D2, states, mask, tok};
        CHECK(al_probe_data_add(d, &in, seq, 1, &err) == AL_OK);
    }
    al_threadpool *pool = NULL;
    CHECK(al_threadpool_new(3, &pool, &err) == AL_OK);
    al_probe_config cfg = al_probe_default_config();
    cfg.kind = kind;
    cfg.n_states = S2;
    cfg.hidden = D2;
    cfg.max_len = L2;
    cfg.n_labels = C;
    cfg.dropout = kind == AL_PROBE_SEQUENCE ? 0.1f : 0.0f;
    cfg.max_batch = B2;
    al_probe *alone = NULL, *pooled = NULL;
    CHECK(al_probe_new(&cfg, 7, &alone, &err) == AL_OK && al_probe_new(&cfg, 7, &pooled, &err) == AL_OK);
    if (!d || !pool || !alone || !pooled) return;
    al_probe_set_pool(pooled, pool);
    al_probe_fit_options o = al_probe_fit_default_options();
    o.epochs = 2;
    o.batch_size = B2;
    o.lr = 1e-3f;
    CHECK(al_probe_fit(alone, d, &o, NULL, &err) == AL_OK);
    CHECK(al_probe_fit(pooled, d, &o, NULL, &err) == AL_OK);
    const size_t n = al_probe_n_params(alone);
    CHECK_MSG(memcmp(al_probe_params(alone), al_probe_params(pooled), n * sizeof(float)) == 0,
              "%s probe: pooled fit differs from the one-thread fit", kind == AL_PROBE_SEQUENCE ? "sequence" : "token");
    int32_t *pa = malloc(sizeof(int32_t) * N_BATCHES * B2 * L2), *pb = malloc(sizeof(int32_t) * N_BATCHES * B2 * L2);
    CHECK(al_probe_evaluate(alone, d, pa, &err) == AL_OK && al_probe_evaluate(pooled, d, pb, &err) == AL_OK);
    const int items = kind == AL_PROBE_TOKEN ? al_probe_data_n_rows(d) : al_probe_data_n_examples(d);
    CHECK(memcmp(pa, pb, sizeof(int32_t) * (size_t)items) == 0);
    free(pa), free(pb);
    al_probe_free(alone), al_probe_free(pooled);
    al_threadpool_free(pool);
    al_probe_data_free(d);
}

int main(void) {
    test_learns(AL_PROBE_SEQUENCE);
    test_learns(AL_PROBE_TOKEN);
    test_data_limits();
    test_pool_same_bits(AL_PROBE_SEQUENCE);
    test_pool_same_bits(AL_PROBE_TOKEN);
    return check_summary("probe_fit");
}
