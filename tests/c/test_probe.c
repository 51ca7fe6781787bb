/* test_probe.c: the PAPA probes of src/methods/probes/probe.c (docs/probes.md).
 *  - PyTorch goldens (tests/golden_probe/make_probe_goldens.py): a sequence probe and a token probe over a
 *    padded batch (3 states, D 8, L 6, 3 classes, 3 examples of lengths 6, 4 in PAPA's layout, 2), loaded
 *    with the reference parameters, going through the gather and scatter helpers: logits, loss and the
 *    gradient of every parameter and of the hidden states agree to 1e-6 relative to each tensor's largest
 *    magnitude;
 *  - METHODS.md's probe checks: the pooled vector at initialisation is (1/L) times the sum of the real
 *    tokens' states; pad hidden states and w at pad positions do not change the output; W1 is
 *    [D, (NL+1) D] (BERT-base: 768 x 9984), and a probe copied from its parameters (al_probe_new_from) is
 *    drawing it again bit for bit; the token loss ignores -100 and mask-0 positions;
 *  - central finite differences on parameters and features of both probes, with and without dropout;
 *  - dropout: training differs from eval, the same generator seed gives the same bits;
 *  - bad batches and configurations are refused with a message. */
#include <string.h>

#include "check.h"
#include "golden_file.h"
#include "methods/probes/probe.h"

#define GOLDEN "tests/golden_probe/probe.safetensors"
enum { S = 3, D = 8, L = 6, C = 3, B = 3, SD = S * D };

static double worst_rel = 0.0; /* the largest relative difference to PyTorch over every compared tensor */

/* max |a - b| / max |b|, printed, checked against 1e-6, folded into worst_rel. */
static void compare(const char *name, const float *a, const float *ref, size_t n) {
    double scale = 0.0;
    for (size_t i = 0; i < n; i++) scale = fmax(scale, fabs(ref[i]));
    const double rel = max_abs_diff(a, ref, n) / (scale > 0.0 ? scale : 1.0);
    printf("  %-18s %3zu values, max |diff| / max |ref| = %.2e\n", name, n, rel);
    CHECK_MSG(rel <= 1e-6, "%s: relative difference %.3g", name, rel);
    if (rel > worst_rel || rel != rel) worst_rel = rel;
}

typedef struct fixture {
    golden_file g;
    float *hidden;          /* [S, B, L, D] */
    const float *states[S]; /* into hidden */
    int32_t *mask;          /* [B, L] */
} fixture;

static int fixture_open(fixture *f) {
    memset(f, 0, sizeof *f);
    if (!golden_open(&f->g, GOLDEN)) return 0;
    f->hidden = golden_f32(&f->g, "hidden", NULL, NULL);
    f->mask = golden_i32(&f->g, "mask");
    for (int k = 0; k < S; k++) f->states[k] = f->hidden + (size_t)k * B * L * D;
    return f->hidden && f->mask;
}

static void fixture_close(fixture *f) {
    free(f->hidden);
    free(f->mask);
    golden_close(&f->g);
}

static void load(const golden_file *g, const char *name, float *dst, size_t n) {
    size_t got = 0;
    float *v = golden_f32(g, name, &got, NULL);
    CHECK_MSG(v && got == n, "golden tensor %s: %zu values, expected %zu", name, got, n);
    if (v && got == n) memcpy(dst, v, n * sizeof(float));
    free(v);
}

static al_probe *make_probe(al_probe_kind kind, float dropout, uint64_t seed) {
    al_probe_config cfg = al_probe_default_config();
    cfg.kind = kind;
    cfg.n_states = S;
    cfg.hidden = D;
    cfg.max_len = L;
    cfg.n_labels = C;
    cfg.dropout = dropout;
    cfg.max_batch = B;
    al_probe *p = NULL;
    al_error err;
    al_status st = al_probe_new(&cfg, seed, &p, &err);
    CHECK_MSG(st == AL_OK, "al_probe_new: %s", err.message);
    return p;
}

/* Loads "<prefix>.w" (sequence only), W1, b1, W2, b2. */
static void load_params(const golden_file *g, const char *prefix, al_probe *p) {
    al_probe_tensors t = al_probe_param_tensors(p);
    char name[64];
#define LOAD(field, n)                                       \
    do {                                                     \
        snprintf(name, sizeof name, "%s." #field, prefix);   \
        load(g, name, t.field, n);                           \
    } while (0)
    if (t.w) LOAD(w, (size_t)S * L);
    LOAD(W1, (size_t)D * SD);
    LOAD(b1, (size_t)D);
    LOAD(W2, (size_t)C * D);
    LOAD(b2, (size_t)C);
#undef LOAD
}

/* Rows of the fixture's batch. */
typedef struct rows {
    float feats[B * L * SD];
    int32_t ex[B * L], pos[B * L], labels[B * L];
    int n;
} rows;

static void gather(const float *const *states, const int32_t *mask, const int32_t *token_labels, int labelled_only,
                   rows *r) {
    al_probe_dense in = {S, B, L, D, states, mask, token_labels};
    al_error err;
    al_status st = al_probe_gather(&in, labelled_only, B * L, r->feats, r->ex, r->pos, token_labels ? r->labels : NULL,
                                   &r->n, &err);
    CHECK_MSG(st == AL_OK, "gather: %s", err.message);
}

static void compare_grads(const golden_file *g, const char *prefix, al_probe *p, const rows *r, const float *d_feats) {
    al_probe_tensors t = al_probe_grad_tensors(p);
    char name[64];
    float ref[D * SD];
#define CMP(field, n)                                            \
    do {                                                         \
        snprintf(name, sizeof name, "%s.grad." #field, prefix);  \
        load(g, name, ref, n);                                   \
        compare(name, t.field, ref, n);                          \
    } while (0)
    if (t.w) CMP(w, (size_t)S * L);
    CMP(W1, (size_t)D * SD);
    CMP(b1, (size_t)D);
    CMP(W2, (size_t)C * D);
    CMP(b2, (size_t)C);
#undef CMP
    /* The hidden-state gradient, back in the dense layout (zeros at pads and unlabelled rows). */
    static float dense[S * B * L * D], want[S * B * L * D];
    float *d_hidden[S];
    for (int k = 0; k < S; k++) d_hidden[k] = dense + (size_t)k * B * L * D;
    al_error err;
    CHECK(al_probe_scatter(d_feats, r->n, r->ex, r->pos, S, B, L, D, d_hidden, &err) == AL_OK);
    snprintf(name, sizeof name, "%s.grad.hidden", prefix);
    load(g, name, want, sizeof want / sizeof *want);
    compare(name, dense, want, sizeof want / sizeof *want);
}

static void test_sequence_golden(fixture *f) {
    printf("sequence probe vs PyTorch:\n");
    al_probe *p = make_probe(AL_PROBE_SEQUENCE, 0.1f, 1);
    if (!p) return;
    load_params(&f->g, "seq", p);
    rows r;
    gather(f->states, f->mask, NULL, 0, &r);
    CHECK(r.n == 6 + 4 + 2);
    int32_t *labels = golden_i32(&f->g, "seq.labels");
    al_probe_batch batch = {B, r.n, r.feats, r.ex, r.pos, labels};
    static float d_feats[B * L * SD];
    float loss = 0.0f;
    al_error err;
    al_probe_zero_grads(p);
    CHECK(al_probe_forward_backward(p, &batch, 0, NULL, &loss, d_feats, &err) == AL_OK);
    float ref[B * C], ref_loss;
    load(&f->g, "seq.logits", ref, B * C);
    int n_items = 0;
    compare("seq.logits", al_probe_logits(p, &n_items), ref, B * C);
    CHECK(n_items == B);
    load(&f->g, "seq.loss", &ref_loss, 1);
    compare("seq.loss", &loss, &ref_loss, 1);
    compare_grads(&f->g, "seq", p, &r, d_feats);
    /* Predictions are the argmax of the reference logits. */
    int32_t preds[B];
    CHECK(al_probe_predict(p, &batch, preds, &err) == AL_OK);
    for (int b = 0; b < B; b++) {
        int best = 0;
        for (int c = 1; c < C; c++)
            if (ref[b * C + c] > ref[b * C + best]) best = c;
        CHECK(preds[b] == best);
    }
    free(labels);
    al_probe_free(p);
}

static void test_token_golden(fixture *f) {
    int32_t *labels = golden_i32(&f->g, "tok.labels");
    static float ref_logits[B * L * C];
    load(&f->g, "tok.logits", ref_logits, B * L * C);
    float ref_loss;
    load(&f->g, "tok.loss", &ref_loss, 1);
    for (int labelled_only = 0; labelled_only <= 1; labelled_only++) {
        printf("token probe vs PyTorch (%s rows):\n", labelled_only ? "labelled" : "all real");
        al_probe *p = make_probe(AL_PROBE_TOKEN, 0.0f, 1);
        if (!p) break;
        load_params(&f->g, "tok", p);
        rows r;
        gather(f->states, f->mask, labels, labelled_only, &r);
        CHECK(r.n == (labelled_only ? 8 : 12));
        al_probe_batch batch = {B, r.n, r.feats, r.ex, r.pos, r.labels};
        static float d_feats[B * L * SD];
        float loss = 0.0f;
        al_error err;
        al_probe_zero_grads(p);
        CHECK(al_probe_forward_backward(p, &batch, 0, NULL, &loss, d_feats, &err) == AL_OK);
        /* Logits of each row against the reference at the row's (example, position). */
        static float want[B * L * C];
        for (int i = 0; i < r.n; i++)
            memcpy(want + (size_t)i * C, ref_logits + ((size_t)r.ex[i] * L + r.pos[i]) * C, sizeof(float) * C);
        int n_items = 0;
        compare("tok.logits", al_probe_logits(p, &n_items), want, (size_t)r.n * C);
        CHECK(n_items == r.n);
        compare("tok.loss", &loss, &ref_loss, 1);
        compare_grads(&f->g, "tok", p, &r, d_feats);
        al_probe_free(p);
    }
    free(labels);
}

/* ---------------------------------------------------------------- METHODS.md probe checks */

static void random_states(float *hidden, uint64_t seed) {
    al_rng rng;
    al_rng_seed(&rng, seed);
    for (size_t i = 0; i < (size_t)S * B * L * D; i++) hidden[i] = al_rng_normal(&rng);
}

static void test_pooled_at_init(void) {
    static float hidden[S * B * L * D];
    random_states(hidden, 3);
    const float *states[S];
    for (int k = 0; k < S; k++) states[k] = hidden + (size_t)k * B * L * D;
    const int32_t mask[B * L] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0};
    al_probe *p = make_probe(AL_PROBE_SEQUENCE, 0.1f, 9);
    if (!p) return;
    al_probe_tensors t = al_probe_param_tensors(p);
    for (int i = 0; i < S * L; i++) CHECK(t.w[i] == 1.0f / L);
    for (int i = 0; i < D; i++) CHECK(t.b1[i] == 0.0f);
    for (int i = 0; i < C; i++) CHECK(t.b2[i] == 0.0f);
    double s1 = 0.0, s2 = 0.0; /* W1 ~ normal(0, 0.02) */
    for (int i = 0; i < D * SD; i++) {
        s1 += t.W1[i];
        s2 += (double)t.W1[i] * t.W1[i];
    }
    const double sd = sqrt(s2 / (D * SD) - (s1 / (D * SD)) * (s1 / (D * SD)));
    CHECK_MSG(sd > 0.015 && sd < 0.025, "W1 standard deviation %g", sd);

    rows r;
    gather(states, mask, NULL, 0, &r);
    al_probe_batch batch = {B, r.n, r.feats, r.ex, r.pos, NULL};
    int32_t preds[B];
    al_error err;
    CHECK(al_probe_predict(p, &batch, preds, &err) == AL_OK);
    int nb = 0;
    const float *pooled = al_probe_pooled(p, &nb);
    CHECK(nb == B && pooled);
    double worst = 0.0;
    for (int b = 0; b < B && pooled; b++)
        for (int k = 0; k < S; k++)
            for (int i = 0; i < D; i++) {
                double sum = 0.0;
                for (int tt = 0; tt < L; tt++)
                    if (mask[b * L + tt]) sum += states[k][((size_t)b * L + tt) * D + i];
                worst = fmax(worst, fabs(pooled[(size_t)b * SD + k * D + i] - sum / L));
            }
    printf("pooled vector at init vs (1/L) sum of real states: max abs diff %.2e\n", worst);
    CHECK(worst < 1e-6);
    al_probe_free(p);
}

/* Logits [B, C] of the sequence probe on the dense states (through the gather helper). */
static void seq_logits(al_probe *p, const float *const *states, const int32_t *mask, float *out) {
    rows r;
    gather(states, mask, NULL, 0, &r);
    al_probe_batch batch = {B, r.n, r.feats, r.ex, r.pos, NULL};
    int32_t preds[B];
    al_error err;
    CHECK(al_probe_predict(p, &batch, preds, &err) == AL_OK);
    memcpy(out, al_probe_logits(p, NULL), sizeof(float) * B * C);
}

static void test_pad_invariance(fixture *f) {
    al_probe *p = make_probe(AL_PROBE_SEQUENCE, 0.1f, 1);
    if (!p) return;
    load_params(&f->g, "seq", p);
    float base[B * C], now[B * C];
    seq_logits(p, f->states, f->mask, base);
    /* Pad hidden states: any values. */
    static float hidden2[S * B * L * D];
    memcpy(hidden2, f->hidden, sizeof hidden2);
    const float *states2[S];
    for (int k = 0; k < S; k++) states2[k] = hidden2 + (size_t)k * B * L * D;
    for (int k = 0; k < S; k++)
        for (int bt = 0; bt < B * L; bt++)
            if (!f->mask[bt])
                for (int i = 0; i < D; i++) hidden2[((size_t)k * B * L + bt) * D + i] = 1e3f * (float)(i + 1);
    seq_logits(p, states2, f->mask, now);
    CHECK(memcmp(base, now, sizeof base) == 0);
    /* w at positions that are pads of every example (lengths 4, 3, 2): no change at all. */
    const int32_t mask[B * L] = {1, 1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0, 0, 0};
    al_probe_tensors t = al_probe_param_tensors(p);
    seq_logits(p, f->states, mask, base);
    for (int k = 0; k < S; k++) t.w[k * L + 4] = t.w[k * L + 5] = 7.0f;
    seq_logits(p, f->states, mask, now);
    CHECK(memcmp(base, now, sizeof base) == 0);
    /* w at position 3: a pad of examples 1 and 2 only, so only example 0 moves. */
    for (int k = 0; k < S; k++) t.w[k * L + 3] += 0.5f;
    seq_logits(p, f->states, mask, now);
    CHECK(memcmp(base + C, now + C, sizeof(float) * 2 * C) == 0);
    CHECK(memcmp(base, now, sizeof(float) * C) != 0);
    al_probe_free(p);
}

static void test_shapes(void) {
    al_probe *p = make_probe(AL_PROBE_SEQUENCE, 0.1f, 1);
    if (!p) return;
    al_probe_tensors t = al_probe_param_tensors(p);
    CHECK(al_probe_n_params(p) == (size_t)S * L + (size_t)D * SD + D + (size_t)C * D + C);
    CHECK(t.w == al_probe_params(p) && t.W1 == t.w + S * L && t.b1 == t.W1 + D * SD && t.W2 == t.b1 + D &&
          t.b2 == t.W2 + C * D);
    uint8_t decay[1024];
    al_probe_decay_mask(p, decay);
    CHECK(decay[0] == 1 && decay[t.W1 - t.w] == 1 && decay[t.b1 - t.w] == 0 && decay[t.W2 - t.w] == 1 &&
          decay[t.b2 - t.w] == 0);
    al_probe_free(p);
    p = make_probe(AL_PROBE_TOKEN, 0.0f, 1);
    if (p) {
        t = al_probe_param_tensors(p);
        CHECK(t.w == NULL && t.W1 == al_probe_params(p) && al_probe_n_params(p) == (size_t)D * SD + D + (size_t)C * D + C);
        al_probe_free(p);
    }
    /* BERT-base, 13 states: W1 is [768, 9984], so b1 starts 768 * 9984 floats after W1. */
    al_probe_config cfg = al_probe_default_config();
    cfg.n_states = 13;
    cfg.hidden = 768;
    cfg.max_len = 64;
    cfg.n_labels = 2;
    cfg.max_batch = 2;
    al_error err;
    CHECK(al_probe_new(&cfg, 1, &p, &err) == AL_OK);
    if (p) {
        t = al_probe_param_tensors(p);
        CHECK(t.b1 - t.W1 == 768 * 9984 && t.W1 - t.w == 13 * 64);
        /* a probe copied from another's parameters (the sweep's seeds across configurations) starts where
         * that one started: the same bits as drawing it again */
        al_probe *copy = NULL, *again = NULL;
        CHECK(al_probe_new_from(&cfg, al_probe_params(p), &copy, &err) == AL_OK);
        CHECK(al_probe_new(&cfg, 1, &again, &err) == AL_OK);
        if (copy && again) {
            CHECK(al_probe_n_params(copy) == al_probe_n_params(p));
            CHECK(memcmp(al_probe_params(copy), al_probe_params(again), al_probe_n_params(p) * sizeof(float)) == 0);
        }
        al_probe_free(copy);
        al_probe_free(again);
        al_probe_free(p);
    }
    CHECK(al_probe_new_from(&cfg, NULL, &p, &err) == AL_ERR_INVALID && strstr(err.message, "params") && !p);
}

static void test_token_ignores(fixture *f) {
    al_probe *p = make_probe(AL_PROBE_TOKEN, 0.0f, 1);
    if (!p) return;
    load_params(&f->g, "tok", p);
    int32_t *labels = golden_i32(&f->g, "tok.labels");
    rows r;
    gather(f->states, f->mask, labels, 0, &r);
    al_probe_batch batch = {B, r.n, r.feats, r.ex, r.pos, r.labels};
    float loss = 0.0f, loss2 = 0.0f;
    al_error err;
    CHECK(al_probe_forward_backward(p, &batch, 0, NULL, &loss, NULL, &err) == AL_OK);
    /* By hand: mean over real rows with a label of logsumexp - logit[label]. */
    const float *z = al_probe_logits(p, NULL);
    double sum = 0.0;
    int n = 0;
    for (int i = 0; i < r.n; i++) {
        if (r.labels[i] == AL_IGNORE_INDEX) continue;
        double mx = z[i * C], s = 0.0;
        for (int c = 1; c < C; c++) mx = fmax(mx, z[i * C + c]);
        for (int c = 0; c < C; c++) s += exp(z[i * C + c] - mx);
        sum += mx + log(s) - z[i * C + r.labels[i]];
        n++;
    }
    CHECK(n == 8);
    CHECK_NEAR(loss, sum / n, 1e-6);
    /* Other labels at pad positions: the same loss, bit for bit. */
    for (int bt = 0; bt < B * L; bt++)
        if (!f->mask[bt]) labels[bt] = (labels[bt] + 1) % C;
    gather(f->states, f->mask, labels, 0, &r);
    CHECK(al_probe_forward_backward(p, &batch, 0, NULL, &loss2, NULL, &err) == AL_OK);
    CHECK(loss == loss2);
    /* Nothing labelled: loss 0 and no gradient. */
    for (int i = 0; i < r.n; i++) r.labels[i] = AL_IGNORE_INDEX;
    al_probe_zero_grads(p);
    CHECK(al_probe_forward_backward(p, &batch, 0, NULL, &loss2, NULL, &err) == AL_OK);
    CHECK(loss2 == 0.0f);
    int nonzero = 0;
    for (size_t i = 0; i < al_probe_n_params(p); i++) nonzero += al_probe_grads(p)[i] != 0.0f;
    CHECK(nonzero == 0);
    free(labels);
    al_probe_free(p);
}

/* ---------------------------------------------------------------- finite differences */

static float loss_at(al_probe *p, const al_probe_batch *batch, int training, uint64_t drop_seed) {
    al_rng rng;
    al_rng_seed(&rng, drop_seed);
    float loss = 0.0f;
    al_error err;
    al_probe_zero_grads(p);
    CHECK(al_probe_forward_backward(p, batch, training, &rng, &loss, NULL, &err) == AL_OK);
    return loss;
}

/* Central difference of the loss along one entry of x, step h. */
static double central(al_probe *p, const al_probe_batch *batch, int training, float *xi, float h) {
    const float keep = *xi;
    *xi = keep + h;
    const double up = loss_at(p, batch, training, 77);
    *xi = keep - h;
    const double down = loss_at(p, batch, training, 77);
    *xi = keep;
    return (up - down) / (2.0 * (double)h);
}

/* Finite differences on `n` entries of x (parameters or features), stride apart: Richardson extrapolation
 * of central differences with steps h and h/2 (error O(h^4), so float rounding dominates). */
static double fd_check(al_probe *p, const al_probe_batch *batch, int training, float *x, const float *grad, int n,
                       int stride, const char *name) {
    const float h = 2e-2f;
    double worst = 0.0;
    for (int j = 0; j < n; j++) {
        float *xi = x + (size_t)j * stride;
        const double g = grad[(size_t)j * stride];
        const double fd = (4.0 * central(p, batch, training, xi, 0.5f * h) - central(p, batch, training, xi, h)) / 3.0;
        worst = fmax(worst, fabs(fd - g) / fmax(fabs(g), 1e-2));
    }
    printf("  finite differences %-9s %2d entries, max |fd - grad| / max(|grad|, 0.01) = %.2e\n", name, n, worst);
    CHECK_MSG(worst < 2e-3, "%s: %g", name, worst); /* float rounding of the loss: about 5e-4 */
    return worst;
}

static void test_finite_differences(fixture *f) {
    int32_t *tok_labels = golden_i32(&f->g, "tok.labels");
    int32_t *seq_labels = golden_i32(&f->g, "seq.labels");
    for (int kind = 0; kind < 3; kind++) { /* sequence, sequence with dropout (fixed masks), token */
        const int token = kind == 2, training = kind == 1;
        printf("%s probe%s:\n", token ? "token" : "sequence", training ? " with dropout 0.3" : "");
        al_probe *p = make_probe(token ? AL_PROBE_TOKEN : AL_PROBE_SEQUENCE, training ? 0.3f : 0.0f, 1);
        if (!p) break;
        load_params(&f->g, token ? "tok" : "seq", p);
        static rows r;
        gather(f->states, f->mask, token ? tok_labels : NULL, 0, &r);
        al_probe_batch batch = {B, r.n, r.feats, r.ex, r.pos, token ? r.labels : seq_labels};
        /* Analytic gradients (same dropout masks as every finite-difference evaluation). */
        static float d_feats[B * L * SD];
        al_rng rng;
        al_rng_seed(&rng, 77);
        float loss;
        al_error err;
        al_probe_zero_grads(p);
        CHECK(al_probe_forward_backward(p, &batch, training, &rng, &loss, d_feats, &err) == AL_OK);
        const size_t n = al_probe_n_params(p);
        float *g = malloc(n * sizeof(float));
        memcpy(g, al_probe_grads(p), n * sizeof(float));
        al_probe_tensors t = al_probe_param_tensors(p);
        const size_t off = (size_t)(t.W1 - al_probe_params(p));
        if (!token) fd_check(p, &batch, training, t.w, g, S * L, 1, "w");
        fd_check(p, &batch, training, t.W1, g + off, 12, 17, "W1");
        fd_check(p, &batch, training, t.b1, g + off + D * SD, D, 1, "b1");
        fd_check(p, &batch, training, t.W2, g + off + D * SD + D, C * D, 1, "W2");
        fd_check(p, &batch, training, t.b2, g + off + D * SD + D + C * D, C, 1, "b2");
        fd_check(p, &batch, training, r.feats, d_feats, 24, 7, "features");
        free(g);
        al_probe_free(p);
    }
    free(tok_labels);
    free(seq_labels);
}

/* ---------------------------------------------------------------- dropout */

static void test_dropout(fixture *f) {
    al_probe *p = make_probe(AL_PROBE_SEQUENCE, 0.5f, 1);
    if (!p) return;
    load_params(&f->g, "seq", p);
    int32_t *labels = golden_i32(&f->g, "seq.labels");
    rows r;
    gather(f->states, f->mask, NULL, 0, &r);
    al_probe_batch batch = {B, r.n, r.feats, r.ex, r.pos, labels};
    const size_t n = al_probe_n_params(p);
    float train1[B * C], train2[B * C], eval[B * C], pred_logits[B * C];
    float *g1 = malloc(n * sizeof(float)), *g2 = malloc(n * sizeof(float));
    al_error err;
    float loss;
    for (int run = 0; run < 2; run++) {
        al_rng rng;
        al_rng_seed(&rng, 123);
        al_probe_zero_grads(p);
        CHECK(al_probe_forward_backward(p, &batch, 1, &rng, &loss, NULL, &err) == AL_OK);
        memcpy(run ? train2 : train1, al_probe_logits(p, NULL), sizeof train1);
        memcpy(run ? g2 : g1, al_probe_grads(p), n * sizeof(float));
    }
    CHECK(memcmp(train1, train2, sizeof train1) == 0 && memcmp(g1, g2, n * sizeof(float)) == 0);
    CHECK(al_probe_forward_backward(p, &batch, 0, NULL, &loss, NULL, &err) == AL_OK);
    memcpy(eval, al_probe_logits(p, NULL), sizeof eval);
    CHECK(memcmp(train1, eval, sizeof eval) != 0);
    int32_t preds[B];
    CHECK(al_probe_predict(p, &batch, preds, &err) == AL_OK);
    memcpy(pred_logits, al_probe_logits(p, NULL), sizeof pred_logits);
    CHECK(memcmp(pred_logits, eval, sizeof eval) == 0);
    /* Another seed, other masks. */
    al_rng rng;
    al_rng_seed(&rng, 124);
    CHECK(al_probe_forward_backward(p, &batch, 1, &rng, &loss, NULL, &err) == AL_OK);
    CHECK(memcmp(train1, al_probe_logits(p, NULL), sizeof train1) != 0);
    /* Training with dropout needs a generator. */
    CHECK(al_probe_forward_backward(p, &batch, 1, NULL, &loss, NULL, &err) == AL_ERR_INVALID &&
          strstr(err.message, "generator"));
    free(g1);
    free(g2);
    free(labels);
    al_probe_free(p);
}

/* ---------------------------------------------------------------- refusals */

static void test_errors(fixture *f) {
    al_error err;
    al_probe *p = NULL;
    al_probe_config cfg = al_probe_default_config();
    cfg.kind = AL_PROBE_TOKEN;
    cfg.n_states = S;
    cfg.hidden = D;
    cfg.max_len = L;
    cfg.n_labels = C;
    CHECK(al_probe_new(&cfg, 1, &p, &err) == AL_ERR_INVALID && strstr(err.message, "TOKEN") && !p);
    cfg.kind = AL_PROBE_SEQUENCE;
    cfg.n_labels = 1;
    CHECK(al_probe_new(&cfg, 1, &p, &err) == AL_ERR_INVALID && strstr(err.message, "n_labels"));

    p = make_probe(AL_PROBE_SEQUENCE, 0.0f, 1);
    if (!p) return;
    rows r;
    gather(f->states, f->mask, NULL, 0, &r);
    int32_t labels[B] = {0, 1, 2};
    al_probe_batch batch = {B, r.n, r.feats, r.ex, r.pos, labels};
    float loss;
    batch.B = B + 1;
    CHECK(al_probe_forward_backward(p, &batch, 0, NULL, &loss, NULL, &err) == AL_ERR_INVALID &&
          strstr(err.message, "max_batch"));
    batch.B = B;
    labels[1] = C;
    CHECK(al_probe_forward_backward(p, &batch, 0, NULL, &loss, NULL, &err) == AL_ERR_INVALID &&
          strstr(err.message, "labels[1]"));
    labels[1] = 1;
    r.ex[7] = 0; /* example 1's row between example 1 rows: not contiguous */
    CHECK(al_probe_forward_backward(p, &batch, 0, NULL, &loss, NULL, &err) == AL_ERR_INVALID &&
          strstr(err.message, "row_example[7]"));
    r.ex[7] = 1;
    r.pos[2] = L;
    CHECK(al_probe_forward_backward(p, &batch, 0, NULL, &loss, NULL, &err) == AL_ERR_INVALID &&
          strstr(err.message, "row_pos[2]"));
    r.pos[2] = 2;
    CHECK(al_probe_forward_backward(p, &batch, 0, NULL, &loss, NULL, &err) == AL_OK);
    /* Gather: a mask that is not 0/1, too many rows, labelled_only without labels. */
    int32_t mask[B * L];
    memcpy(mask, f->mask, sizeof mask);
    mask[4] = 2;
    al_probe_dense in = {S, B, L, D, f->states, mask, NULL};
    int n = 0;
    CHECK(al_probe_gather(&in, 0, B * L, r.feats, r.ex, r.pos, NULL, &n, &err) == AL_ERR_INVALID &&
          strstr(err.message, "mask[0][4]"));
    in.mask = f->mask;
    CHECK(al_probe_gather(&in, 0, 5, r.feats, r.ex, r.pos, NULL, &n, &err) == AL_ERR_INVALID &&
          strstr(err.message, "max_rows"));
    CHECK(al_probe_gather(&in, 1, B * L, r.feats, r.ex, r.pos, NULL, &n, &err) == AL_ERR_INVALID &&
          strstr(err.message, "token_labels"));
    al_probe_free(p);
}

int main(void) {
    fixture f;
    if (!fixture_open(&f)) {
        CHECK(0);
        return check_summary("probe");
    }
    test_sequence_golden(&f);
    test_token_golden(&f);
    printf("agreement with PyTorch: worst max |diff| / max |ref| over all tensors %.2e\n", worst_rel);
    test_pooled_at_init();
    test_pad_invariance(&f);
    test_shapes();
    test_token_ignores(&f);
    test_finite_differences(&f);
    test_dropout(&f);
    test_errors(&f);
    fixture_close(&f);
    return check_summary("probe");
}
