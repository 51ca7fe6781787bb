/* head_agreement.c: ranks, Spearman's rho and least-important sets (head_agreement.h, docs/agreement.md); the
 * sentence is agreement_finding.c's. */
#include "head_agreement.h"

#include <math.h>
#include <stdlib.h>

typedef struct ranked {
    double v;
    int i;
} ranked;

/* Ascending value, ties in index order: a total order, so the result does not depend on qsort. */
static int by_value(const void *a, const void *b) {
    const ranked *x = a, *y = b;
    if (x->v != y->v) return x->v < y->v ? -1 : 1;
    return x->i - y->i;
}

void al_average_ranks(const double *v, int n, double *ranks) {
    ranked *r = malloc(sizeof *r * (size_t)(n > 0 ? n : 1));
    int m = 0;
    for (int i = 0; i < n; i++) {
        ranks[i] = NAN;
        if (r && !isnan(v[i])) r[m++] = (ranked){v[i], i};
    }
    if (!r) return;
    qsort(r, (size_t)m, sizeof *r, by_value);
    for (int a = 0; a < m;) {
        int b = a;
        while (b + 1 < m && r[b + 1].v == r[a].v) b++;
        const double mean_rank = 0.5 * (double)(a + b) + 1.0; /* positions a..b hold ranks a+1 .. b+1 */
        for (int k = a; k <= b; k++) ranks[r[k].i] = mean_rank;
        a = b + 1;
    }
    free(r);
}

double al_spearman(const double *a, const double *b, int n) {
    double *x = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1) * 4);
    if (!x) return NAN;
    double *y = x + n, *rx = y + n, *ry = rx + n;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (isfinite(a[i]) && isfinite(b[i])) x[m] = a[i], y[m] = b[i], m++;
    double rho = NAN;
    if (m >= 2) {
        al_average_ranks(x, m, rx);
        al_average_ranks(y, m, ry);
        double mx = 0.0, my = 0.0;
        for (int i = 0; i < m; i++) mx += rx[i], my += ry[i];
        mx /= m, my /= m;
        double sxy = 0.0, sxx = 0.0, syy = 0.0;
        for (int i = 0; i < m; i++) {
            sxy += (rx[i] - mx) * (ry[i] - my);
            sxx += (rx[i] - mx) * (rx[i] - mx);
            syy += (ry[i] - my) * (ry[i] - my);
        }
        if (sxx > 0.0 && syy > 0.0) rho = sxy / sqrt(sxx * syy);
        if (rho > 1.0) rho = 1.0; /* rounding of a perfect correlation */
        if (rho < -1.0) rho = -1.0;
    }
    free(x);
    return rho;
}

int al_least_k(const double *v, int n, int low_is_least, int k, int *out) {
    if (k < 0) k = 0;
    if (k > n) k = n;
    ranked *r = malloc(sizeof *r * (size_t)(n > 0 ? n : 1));
    if (!r) return 0;
    int m = 0;
    for (int i = 0; i < n; i++)
        if (!isnan(v[i])) r[m++] = (ranked){low_is_least ? v[i] : -v[i], i};
    qsort(r, (size_t)m, sizeof *r, by_value);
    int got = 0;
    for (int i = 0; i < m && got < k; i++) out[got++] = r[i].i;
    for (int i = 0; i < n && got < k; i++) /* NAN values last, in index order */
        if (isnan(v[i])) out[got++] = i;
    free(r);
    return k;
}

int al_overlap(const int *a, const int *b, int k) {
    int shared = 0;
    for (int i = 0; i < k; i++)
        for (int j = 0; j < k; j++)
            if (a[i] == b[j]) {
                shared++;
                break;
            }
    return shared;
}
