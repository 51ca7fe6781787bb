/* test_effective.c: effective attention against METHODS.md "Checks: Effective attention":
 * A_eff V = A V (exact mode, per example and head, random model and the golden BERT), A_eff N = 0
 * and idempotence, orthogonal split A = A_eff + (A - A_eff), A_eff == A when n <= rank V, the
 * paper mode (tolerance eps*H, shared r* = dh when padded past dh, pad-key columns zero,
 * mask(A_eff) V != A V), rank-deficient V, and both bases (pivoted Cholesky, Jacobi) against an
 * independent double-precision Gram-Schmidt projection. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "core/rng.h"
#include "methods/effective/effective.h"

/* ------------------------------------------------------------ helpers */

static void random_softmax(al_rng *r, float *A, int m, int n, float scale) {
    for (int i = 0; i < m; i++) {
        double sum = 0;
        for (int j = 0; j < n; j++) {
            A[(size_t)i * n + j] = expf(scale * al_rng_normal(r));
            sum += A[(size_t)i * n + j];
        }
        for (int j = 0; j < n; j++) A[(size_t)i * n + j] = (float)(A[(size_t)i * n + j] / sum);
    }
}

static void random_normal(al_rng *r, float *x, size_t n, float bias) {
    for (size_t i = 0; i < n; i++) x[i] = al_rng_normal(r) + bias;
}

/* max |X V - Y V| / max |Y V| over rows [m], X, Y [m, n] (stride ldx), V [n, dh] (stride ldv). */
static double rel_av_diff(const float *X, const float *Y, int m, int n, int ldx, const float *V,
                          int dh, int ldv) {
    double worst = 0, scale = 0;
    for (int i = 0; i < m; i++)
        for (int k = 0; k < dh; k++) {
            double x = 0, y = 0;
            for (int j = 0; j < n; j++) {
                x += (double)X[(size_t)i * ldx + j] * V[(size_t)j * ldv + k];
                y += (double)Y[(size_t)i * ldx + j] * V[(size_t)j * ldv + k];
            }
            if (fabs(x - y) > worst) worst = fabs(x - y);
            if (fabs(y) > scale) scale = fabs(y);
        }
    return scale > 0 ? worst / scale : worst;
}

/* Independent reference: modified Gram-Schmidt (twice) over V's columns in double, dropping columns
 * whose residual is below rel * (largest column norm); returns the projector P [n, n] and the rank. */
static int mgs_projector(const float *V, int n, int dh, double rel, double *P) {
    double *Q = calloc((size_t)n * dh, sizeof(double));
    double maxnorm = 0;
    for (int k = 0; k < dh; k++) {
        double s = 0;
        for (int t = 0; t < n; t++) s += (double)V[(size_t)t * dh + k] * V[(size_t)t * dh + k];
        if (sqrt(s) > maxnorm) maxnorm = sqrt(s);
    }
    int r = 0;
    for (int k = 0; k < dh && r < n; k++) {
        double *q = Q + (size_t)r * n;
        for (int t = 0; t < n; t++) q[t] = V[(size_t)t * dh + k];
        for (int pass = 0; pass < 2; pass++)
            for (int j = 0; j < r; j++) {
                double dot = 0;
                for (int t = 0; t < n; t++) dot += Q[(size_t)j * n + t] * q[t];
                for (int t = 0; t < n; t++) q[t] -= dot * Q[(size_t)j * n + t];
            }
        double norm = 0;
        for (int t = 0; t < n; t++) norm += q[t] * q[t];
        norm = sqrt(norm);
        if (norm <= rel * maxnorm) continue;
        for (int t = 0; t < n; t++) q[t] /= norm;
        r++;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < r; k++) s += Q[(size_t)k * n + i] * Q[(size_t)k * n + j];
            P[(size_t)i * n + j] = s;
        }
    free(Q);
    return r;
}

/* max |X - A P| over an m x n block, with A P in double. */
static double diff_to_projection(const float *X, const float *A, const double *P, int m, int n) {
    double worst = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += (double)A[(size_t)i * n + k] * P[(size_t)k * n + j];
            double d = fabs(s - X[(size_t)i * n + j]);
            if (d > worst) worst = d;
        }
    return worst;
}

static double g_worst_av = 0, g_worst_idem = 0, g_worst_orth = 0, g_worst_mgs = 0;

/* ------------------------------------------------------------ one head, random matrices */

static void check_head_invariants(int m, int n, int dh, uint64_t seed) {
    al_rng r;
    al_rng_seed(&r, seed);
    float *A = malloc(sizeof(float) * (size_t)m * n), *V = malloc(sizeof(float) * (size_t)n * dh);
    float *E = malloc(sizeof(float) * (size_t)m * n), *E2 = malloc(sizeof(float) * (size_t)m * n);
    double *P = malloc(sizeof(double) * (size_t)n * n);
    random_softmax(&r, A, m, n, 2.0f);
    random_normal(&r, V, (size_t)n * dh, 0.3f);
    al_error err = {0};
    int rank = -1, rank2 = -1;
    CHECK(al_effective_head(A, m, n, V, n, dh, dh, E, n, &rank, &err) == AL_OK);
    CHECK(rank == (n < dh ? n : dh));
    /* A_eff V = A V */
    double av = rel_av_diff(E, A, m, n, n, V, dh, dh);
    CHECK_MSG(av <= 1e-5, "n %d dh %d: |A_eff V - A V| rel %g", n, dh, av);
    if (av > g_worst_av) g_worst_av = av;
    /* idempotence: projecting A_eff again changes nothing */
    CHECK(al_effective_head(E, m, n, V, n, dh, dh, E2, n, &rank2, &err) == AL_OK);
    double idem = 0;
    for (size_t e = 0; e < (size_t)m * n; e++)
        if (fabs(E2[e] - E[e]) > idem) idem = fabs(E2[e] - E[e]);
    CHECK_MSG(idem <= 1e-6, "n %d dh %d: idempotence %g", n, dh, idem);
    if (idem > g_worst_idem) g_worst_idem = idem;
    /* A = A_eff + (A - A_eff) with orthogonal parts, and A_eff N = 0: the null part of each row is
     * orthogonal to A_eff's row and to every column of V. */
    double orth = 0;
    for (int i = 0; i < m; i++) {
        double dot = 0, na = 0;
        for (int j = 0; j < n; j++) {
            double e = E[(size_t)i * n + j], a = A[(size_t)i * n + j];
            dot += e * (a - e);
            na += a * a;
        }
        if (fabs(dot) / na > orth) orth = fabs(dot) / na;
        for (int k = 0; k < dh; k++) {
            double vn = 0, dv = 0;
            for (int j = 0; j < n; j++) {
                double e = E[(size_t)i * n + j], a = A[(size_t)i * n + j];
                dv += (a - e) * V[(size_t)j * dh + k];
                vn += (double)V[(size_t)j * dh + k] * V[(size_t)j * dh + k];
            }
            if (fabs(dv) / sqrt(vn * na) > orth) orth = fabs(dv) / sqrt(vn * na);
        }
    }
    CHECK_MSG(orth <= 1e-6, "n %d dh %d: orthogonality %g", n, dh, orth);
    if (orth > g_worst_orth) g_worst_orth = orth;
    /* against double Gram-Schmidt */
    int rm = mgs_projector(V, n, dh, 1e-10, P);
    CHECK(rm == rank);
    double dm = diff_to_projection(E, A, P, m, n);
    CHECK_MSG(dm <= 2e-6, "n %d dh %d: vs Gram-Schmidt %g", n, dh, dm);
    if (dm > g_worst_mgs) g_worst_mgs = dm;
    /* Jacobi (eigen-based) basis against the same reference */
    al_eff_scratch s = {0};
    CHECK(al_eff_scratch_reserve(&s, n > m ? n : m, dh, &err) == AL_OK);
    al_eff_gram(V, n, dh, dh, &s);
    al_eff_eigen(&s, dh);
    int re = 0;
    for (int k = 0; k < dh && k < n; k++) re += s.sig[k] > s.sig[0] * (n > dh ? n : dh) * AL_EPS_F32;
    CHECK(re == rank);
    al_eff_basis_svd(V, n, dh, dh, re, 0, &s);
    al_eff_project(A, m, n, n, s.Q, re, dh, &s, E2, n);
    double de = diff_to_projection(E2, A, P, m, n);
    CHECK_MSG(de <= 2e-6, "n %d dh %d: eigen basis vs Gram-Schmidt %g", n, dh, de);
    if (de > g_worst_mgs) g_worst_mgs = de;
    al_eff_scratch_free(&s);
    free(A), free(V), free(E), free(E2), free(P);
}

/* n <= dh with V of full rank n: A_eff == A bit for bit. */
static void check_short_input_identity(void) {
    al_rng r;
    al_rng_seed(&r, 7);
    const int n = 10, dh = 16;
    float A[10 * 10], V[10 * 16], E[10 * 10];
    random_softmax(&r, A, n, n, 1.0f);
    random_normal(&r, V, sizeof V / sizeof V[0], 0.0f);
    al_error err = {0};
    int rank = 0;
    CHECK(al_effective_head(A, n, n, V, n, dh, dh, E, n, &rank, &err) == AL_OK);
    CHECK(rank == n);
    CHECK(memcmp(A, E, sizeof A) == 0);
}

/* Duplicate and zero columns: the relative tolerance finds the true rank; the projection matches
 * Gram-Schmidt on the distinct columns. */
static void check_rank_deficient(void) {
    al_rng r;
    al_rng_seed(&r, 11);
    const int n = 40, dh = 16, m = 40;
    float *A = malloc(sizeof(float) * n * n), *V = malloc(sizeof(float) * n * dh);
    float *E = malloc(sizeof(float) * n * n);
    double *P = malloc(sizeof(double) * n * n);
    random_softmax(&r, A, m, n, 2.0f);
    random_normal(&r, V, (size_t)n * dh, 0.0f);
    for (int t = 0; t < n; t++) {
        V[t * dh + 3] = V[t * dh + 0];             /* duplicate */
        V[t * dh + 7] = V[t * dh + 1] * 2.5f;       /* scaled duplicate */
        V[t * dh + 9] = 0.0f;                       /* zero column */
        V[t * dh + 12] = V[t * dh + 2] + V[t * dh + 4]; /* sum (rounded in float) */
    }
    al_error err = {0};
    int rank = 0;
    CHECK(al_effective_head(A, m, n, V, n, dh, dh, E, n, &rank, &err) == AL_OK);
    CHECK_MSG(rank == dh - 4, "rank %d, expected %d", rank, dh - 4);
    int rm = mgs_projector(V, n, dh, 1e-5, P);
    CHECK(rm == dh - 4);
    double dm = diff_to_projection(E, A, P, m, n);
    CHECK_MSG(dm <= 2e-6, "rank-deficient vs Gram-Schmidt %g", dm);
    double av = rel_av_diff(E, A, m, n, n, V, dh, dh);
    CHECK_MSG(av <= 1e-5, "rank-deficient A_eff V %g", av);
    /* an all-zero V leaves nothing */
    memset(V, 0, sizeof(float) * n * dh);
    CHECK(al_effective_head(A, m, n, V, n, dh, dh, E, n, &rank, &err) == AL_OK);
    CHECK(rank == 0);
    double mx = 0;
    for (int e = 0; e < n * n; e++) mx = fmax(mx, fabs(E[e]));
    CHECK(mx == 0);
    free(A), free(V), free(E), free(P);
}

/* ------------------------------------------------------------ whole forward outputs */

typedef struct fwd {
    int NL, B, H, L, dh;
    float *attn, *values, *eff;
    int32_t *ids, *mask;
    int *ranks;
} fwd;

static void fwd_free(fwd *f) {
    free(f->attn), free(f->values), free(f->eff), free(f->ids), free(f->mask), free(f->ranks);
    memset(f, 0, sizeof *f);
}

/* A padded batch with lengths[b] real tokens (suffix padding), random ids. */
static int fwd_run(const al_model *model, int B, int L, const int *lengths, uint64_t seed, fwd *f) {
    const al_config *c = al_model_config(model);
    memset(f, 0, sizeof *f);
    f->NL = c->n_layers, f->B = B, f->H = c->n_heads, f->L = L, f->dh = c->head_dim;
    const size_t na = (size_t)f->NL * B * f->H * L * L, nv = (size_t)f->NL * B * f->H * L * f->dh;
    f->attn = calloc(na, sizeof(float));
    f->values = calloc(nv, sizeof(float));
    f->eff = calloc(na, sizeof(float));
    f->ids = calloc((size_t)B * L, sizeof(int32_t));
    f->mask = calloc((size_t)B * L, sizeof(int32_t));
    f->ranks = calloc((size_t)f->NL * B * f->H, sizeof(int));
    al_rng r;
    al_rng_seed(&r, seed);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < L; t++) {
            int real = t < lengths[b];
            f->ids[b * L + t] = real ? 1 + (int)al_rng_below(&r, (uint32_t)c->vocab_size - 1) : 0;
            f->mask[b * L + t] = real;
        }
    al_batch batch = {B, L, f->ids, f->mask, NULL, NULL};
    al_forward_outputs out = {0};
    out.attentions = f->attn;
    out.values = f->values;
    al_error err = {0};
    al_status st = al_forward(model, &batch, NULL, &out, &err);
    CHECK_MSG(st == AL_OK, "forward: %s", err.message);
    return st == AL_OK;
}

static void check_exact_forward(const al_model *model, const char *what) {
    const int B = 3, L = 30, lengths[3] = {30, 17, 5};
    fwd f;
    if (!fwd_run(model, B, L, lengths, 5, &f)) return;
    al_error err = {0};
    CHECK(al_effective_attention(al_model_config(model), f.attn, f.values, f.mask, B, L,
                                 AL_EFFECTIVE_EXACT, f.eff, f.ranks, &err) == AL_OK);
    double worst = 0, pad = 0;
    int ranks_ok = 1;
    for (int l = 0; l < f.NL; l++)
        for (int b = 0; b < B; b++)
            for (int h = 0; h < f.H; h++) {
                const size_t bh = ((size_t)l * B + b) * f.H + h;
                const float *A = f.attn + bh * L * L, *E = f.eff + bh * L * L;
                const float *V = f.values + bh * L * f.dh;
                const int n = lengths[b];
                double d = rel_av_diff(E, A, n, n, L, V, f.dh, f.dh);
                if (d > worst) worst = d;
                for (int i = 0; i < L; i++)
                    for (int j = 0; j < L; j++)
                        if (i >= n || j >= n) pad = fmax(pad, fabs(E[(size_t)i * L + j]));
                int expect = n < f.dh ? n : f.dh;
                if (f.ranks[bh] != expect) ranks_ok = 0;
                if (n <= f.dh) /* short: identity on the real block */
                    for (int i = 0; i < n; i++)
                        if (memcmp(A + (size_t)i * L, E + (size_t)i * L, sizeof(float) * n)) ranks_ok = 0;
            }
    CHECK_MSG(worst <= 1e-5, "%s: exact mode max |A_eff V - A V| / max |A V| = %g", what, worst);
    if (worst > g_worst_av) g_worst_av = worst;
    CHECK_MSG(pad == 0, "%s: pad rows/columns %g", what, pad);
    CHECK_MSG(ranks_ok, "%s: ranks or short-input identity", what);
    /* in place gives the same result */
    float *copy = malloc(sizeof(float) * (size_t)f.NL * B * f.H * L * L);
    memcpy(copy, f.attn, sizeof(float) * (size_t)f.NL * B * f.H * L * L);
    CHECK(al_effective_attention(al_model_config(model), copy, f.values, f.mask, B, L,
                                 AL_EFFECTIVE_EXACT, copy, NULL, &err) == AL_OK);
    CHECK(memcmp(copy, f.eff, sizeof(float) * (size_t)f.NL * B * f.H * L * L) == 0);
    free(copy);
    fwd_free(&f);
}

static void check_paper_forward(const al_model *model, const char *what) {
    const al_config *c = al_model_config(model);
    const int B = 3, L = 3 * c->head_dim, lengths[3] = {L, c->head_dim + 3, 4};
    fwd f;
    if (!fwd_run(model, B, L, lengths, 9, &f)) return;
    al_error err = {0};
    CHECK(al_effective_attention(c, f.attn, f.values, f.mask, B, L, AL_EFFECTIVE_PAPER, f.eff,
                                 f.ranks, &err) == AL_OK);
    int rstar_ok = 1;
    double pad_cols = 0, masked_diff = 0, real_cols = 0;
    float *ref = malloc(sizeof(float) * (size_t)L * L);
    for (int l = 0; l < f.NL; l++)
        for (int b = 0; b < B; b++)
            for (int h = 0; h < f.H; h++) {
                const size_t bh = ((size_t)l * B + b) * f.H + h;
                const float *A = f.attn + bh * L * L, *E = f.eff + bh * L * L;
                const float *V = f.values + bh * L * f.dh;
                if (f.ranks[bh] != f.dh) rstar_ok = 0;
                for (int i = 0; i < L; i++)
                    for (int j = lengths[b]; j < L; j++) pad_cols = fmax(pad_cols, fabs(E[i * L + j]));
                if (lengths[b] < L) {
                    double d = rel_av_diff(E, A, L, L, L, V, f.dh, f.dh);
                    if (d > masked_diff) masked_diff = d;
                }
                /* before the mask, the paper's projection (r* = dh, full column rank) is the plain
                 * projection on col(V) over all L rows: compare the real key columns */
                int rank = 0;
                CHECK(al_effective_head(A, L, L, V, L, f.dh, f.dh, ref, L, &rank, &err) == AL_OK);
                for (int i = 0; i < L; i++)
                    for (int j = 0; j < lengths[b]; j++)
                        real_cols = fmax(real_cols, fabs(ref[i * L + j] - E[i * L + j]));
            }
    CHECK_MSG(rstar_ok, "%s: paper mode r* != head_dim %d", what, f.dh);
    CHECK_MSG(pad_cols == 0, "%s: pad-key columns %g", what, pad_cols);
    CHECK_MSG(masked_diff > 1e-3, "%s: mask(A_eff) V should differ from A V, rel %g", what,
              masked_diff);
    CHECK_MSG(real_cols <= 1e-6, "%s: paper mode real columns vs unmasked projection %g", what,
              real_cols);
    printf("%s: paper mode |mask(A_eff) V - A V| / |A V| = %.3g (padded examples)\n", what,
           masked_diff);
    free(ref);
    fwd_free(&f);
}

/* Paper mode with rank-deficient heads: r* is the max over the layer's heads; a layer where every
 * head lost a direction gets r* = dh - 1, and heads below r* are completed without NaN. */
static void check_paper_rank_star(void) {
    const int NL = 1, B = 2, H = 3, L = 12, dh = 4;
    al_config cfg = al_config_bert(50, H * dh, NL, H, 16);
    al_rng r;
    al_rng_seed(&r, 21);
    float *A = malloc(sizeof(float) * B * H * L * L), *V = malloc(sizeof(float) * B * H * L * dh);
    float *E = malloc(sizeof(float) * B * H * L * L);
    int ranks[6];
    random_softmax(&r, A, B * H * L, L, 1.0f);
    random_normal(&r, V, (size_t)B * H * L * dh, 0.0f);
    for (int bh = 0; bh < B * H; bh++)
        for (int t = 0; t < L; t++) V[(bh * L + t) * dh + 3] = 0.0f; /* every head rank 3 */
    al_error err = {0};
    CHECK(al_effective_attention(&cfg, A, V, NULL, B, L, AL_EFFECTIVE_PAPER, E, ranks, &err) == AL_OK);
    CHECK(ranks[0] == 3 && ranks[5] == 3);
    /* one head keeps full rank: r* = 4 for all, the others completed with a null direction */
    random_normal(&r, V + (size_t)4 * L * dh, (size_t)L * dh, 0.0f);
    CHECK(al_effective_attention(&cfg, A, V, NULL, B, L, AL_EFFECTIVE_PAPER, E, ranks, &err) == AL_OK);
    CHECK(ranks[0] == 4 && ranks[4] == 4);
    int finite = 1;
    for (int e = 0; e < B * H * L * L; e++) finite &= isfinite(E[e]) != 0;
    CHECK(finite);
    /* A_eff V = A V still holds for the completed heads (the extra direction is null for V) */
    double worst = 0;
    for (int bh = 0; bh < B * H; bh++)
        worst = fmax(worst, rel_av_diff(E + (size_t)bh * L * L, A + (size_t)bh * L * L, L, L, L,
                                        V + (size_t)bh * L * dh, dh, dh));
    CHECK_MSG(worst <= 1e-5, "completed heads A_eff V %g", worst);
    /* argument errors name what is wrong */
    CHECK(al_effective_attention(&cfg, A, V, NULL, 0, L, AL_EFFECTIVE_PAPER, E, ranks, &err) ==
          AL_ERR_INVALID);
    CHECK(strstr(err.message, "batch") != NULL);
    CHECK(al_effective_attention(&cfg, A, V, NULL, B, L, (al_effective_mode)7, E, ranks, &err) ==
          AL_ERR_INVALID);
    CHECK(strstr(err.message, "mode") != NULL);
    free(A), free(V), free(E);
}

int main(void) {
    /* the paper's tolerance */
    CHECK_NEAR(al_effective_paper_tolerance(12), 1.4305115e-6, 1e-12);

    check_head_invariants(20, 20, 8, 1);
    check_head_invariants(64, 64, 16, 2);
    check_head_invariants(128, 128, 64, 3);
    check_head_invariants(30, 50, 64, 4); /* n < dh after rows: short */
    check_head_invariants(5, 70, 32, 5);
    check_short_input_identity();
    check_rank_deficient();
    check_paper_rank_star();

    al_config cfg = al_config_bert(200, 64, 2, 4, 128); /* head_dim 16 */
    al_model *model = NULL;
    al_error err = {0};
    CHECK(al_model_new_random(&cfg, 3, 0, &model, &err) == AL_OK);
    if (model) {
        check_exact_forward(model, "random model");
        check_paper_forward(model, "random model");
    }
    al_model_free(model);

    model = NULL;
    if (al_model_load_dir("tests/golden/bert", &model, &err) == AL_OK) {
        check_exact_forward(model, "golden bert");
        check_paper_forward(model, "golden bert");
    } else {
        CHECK_MSG(0, "golden bert: %s", err.message);
    }
    al_model_free(model);

    printf("worst: |A_eff V - A V|/|A V| %.3g, idempotence %.3g, orthogonality %.3g, "
           "vs Gram-Schmidt %.3g\n",
           g_worst_av, g_worst_idem, g_worst_orth, g_worst_mgs);
    return check_summary("effective");
}
