/* finding_stats.c: permutation p-values of Spearman's rho, Holm's correction, the hypergeometric tail of an
 * overlap, the sign test (finding_stats.h, docs/findings.md). */
#include "finding_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/rng.h"

/* S of a permutation p of 0..n-1 against the identity. */
static double squared_differences(const int *p, int n) {
    double s = 0.0;
    for (int i = 0; i < n; i++) s += (double)(p[i] - i) * (double)(p[i] - i);
    return s;
}

int al_spearman_null_build(al_spearman_null *z, int n) {
    memset(z, 0, sizeof *z);
    z->n = n;
    if (n < 2) return 0;
    int *p = malloc(sizeof(int) * (size_t)n), *c = calloc((size_t)n, sizeof(int));
    if (!p || !c) {
        free(p), free(c);
        return -1;
    }
    for (int i = 0; i < n; i++) p[i] = i;
    if (n <= AL_FINDING_EXACT_MAX_N) {
        /* every ordering, by Heap's algorithm: one swap per step, S updated from the two positions it moves */
        z->exact = 1;
        z->n_s = n * (n * n - 1) / 3 + 1;
        z->count = calloc((size_t)z->n_s, sizeof(double));
        if (!z->count) {
            free(p), free(c);
            return -1;
        }
        long s = 0;
        z->count[0] = 1.0, z->orderings = 1.0;
        for (int i = 0; i < n;) {
            if (c[i] < i) {
                const int j = i % 2 == 0 ? 0 : c[i];
                s -= (long)(p[j] - j) * (p[j] - j) + (long)(p[i] - i) * (p[i] - i);
                const int t = p[j];
                p[j] = p[i], p[i] = t;
                s += (long)(p[j] - j) * (p[j] - j) + (long)(p[i] - i) * (p[i] - i);
                z->count[s] += 1.0, z->orderings += 1.0;
                c[i]++;
                i = 0;
            } else {
                c[i] = 0;
                i++;
            }
        }
    } else {
        /* seeded orderings: each Fisher-Yates shuffle of the last is again uniform over all orderings */
        z->orderings = AL_FINDING_PERMUTATIONS;
        z->n_s = AL_FINDING_PERMUTATIONS;
        z->count = malloc(sizeof(double) * (size_t)z->n_s); /* here: each ordering's S */
        if (!z->count) {
            free(p), free(c);
            return -1;
        }
        al_rng r;
        al_rng_seed(&r, AL_FINDING_SEED + (uint64_t)n);
        for (int b = 0; b < AL_FINDING_PERMUTATIONS; b++) {
            for (int i = n - 1; i > 0; i--) {
                const int j = (int)al_rng_below(&r, (uint32_t)(i + 1)), t = p[i];
                p[i] = p[j], p[j] = t;
            }
            z->count[b] = squared_differences(p, n);
        }
    }
    free(p), free(c);
    return 0;
}

void al_spearman_null_free(al_spearman_null *z) {
    free(z->count);
    memset(z, 0, sizeof *z);
}

double al_spearman_null_p(const al_spearman_null *z, double rho) {
    if (isnan(rho)) return NAN;
    if (z->n < 2 || !z->count) return 1.0;
    const double d = (double)z->n * ((double)z->n * z->n - 1.0) / 6.0, target = fabs(rho) - 1e-12;
    double hits = 0.0;
    if (z->exact) {
        for (int s = 0; s < z->n_s; s++)
            if (z->count[s] > 0.0 && fabs(1.0 - (double)s / d) >= target) hits += z->count[s];
        return hits / z->orderings;
    }
    for (int b = 0; b < z->n_s; b++)
        if (fabs(1.0 - z->count[b] / d) >= target) hits += 1.0;
    return (1.0 + hits) / (1.0 + z->orderings);
}

typedef struct indexed {
    double p;
    int i;
} indexed;

static int by_p(const void *a, const void *b) {
    const indexed *x = a, *y = b;
    if (x->p != y->p) return x->p < y->p ? -1 : 1;
    return x->i - y->i;
}

void al_holm(const double *p, int m, double *adjusted) {
    indexed *s = malloc(sizeof *s * (size_t)(m > 0 ? m : 1));
    int tests = 0;
    for (int i = 0; i < m; i++) {
        adjusted[i] = NAN;
        if (s && !isnan(p[i])) s[tests++] = (indexed){p[i], i};
    }
    if (!s) return;
    qsort(s, (size_t)tests, sizeof *s, by_p);
    double running = 0.0;
    for (int j = 0; j < tests; j++) {
        double a = (double)(tests - j) * s[j].p;
        if (a > 1.0) a = 1.0;
        if (a < running) a = running; /* step-down: never below an earlier, smaller p's adjustment */
        running = a;
        adjusted[s[j].i] = a;
    }
    free(s);
}

double al_overlap_p(int n, int k, int shared) {
    if (n <= 0 || k <= 0 || k > n) return NAN;
    const int lo = k - (n - k) > 0 ? k - (n - k) : 0;
    if (shared <= lo) return 1.0;
    if (shared > k) return 0.0;
    /* P(X = x) up to a constant, from the mode outwards (the mode's term is 1, so nothing overflows):
     * P(x + 1) / P(x) = (k - x)^2 / ((x + 1)(n - 2k + x + 1)) for K = k white of n, k drawn */
    int mode = (int)((double)(k + 1) * (k + 1) / (double)(n + 2));
    if (mode < lo) mode = lo;
    if (mode > k) mode = k;
    double total = 1.0, tail = mode >= shared ? 1.0 : 0.0, t = 1.0;
    for (int x = mode; x < k; x++) {
        t *= (double)(k - x) * (k - x) / ((double)(x + 1) * (double)(n - 2 * k + x + 1));
        total += t;
        if (x + 1 >= shared) tail += t;
    }
    t = 1.0;
    for (int x = mode; x > lo; x--) {
        t *= (double)x * (double)(n - 2 * k + x) / ((double)(k - x + 1) * (k - x + 1));
        total += t;
        if (x - 1 >= shared) tail += t;
    }
    return tail / total;
}

double al_sign_test_p(int m, int above) {
    if (m <= 0 || above <= 0) return 1.0;
    if (above > m) return 0.0;
    /* C(m, x) relative to the mode's (x = m / 2, term 1), outwards, so nothing overflows: P(x + 1) / P(x) =
     * (m - x) / (x + 1) */
    const int mode = m / 2;
    double total = 1.0, tail = mode >= above ? 1.0 : 0.0, t = 1.0;
    for (int x = mode; x < m; x++) {
        t *= (double)(m - x) / (double)(x + 1);
        total += t;
        if (x + 1 >= above) tail += t;
    }
    t = 1.0;
    for (int x = mode; x > 0; x--) {
        t *= (double)x / (double)(m - x + 1);
        total += t;
        if (x - 1 >= above) tail += t;
    }
    return tail / total;
}
