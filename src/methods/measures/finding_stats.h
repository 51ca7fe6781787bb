/* finding_stats.h: the statistics behind the finding sentences (docs/findings.md): the permutation
 * distribution of Spearman's rho under "the two rankings are unrelated", Holm's step-down correction across
 * the measures compared, the hypergeometric chance of two sets of k heads sharing s or more, and the sign test
 * of the head roles. Pure arithmetic in double (no libm beyond sqrt), seeded by al_rng, so the native and WASM
 * builds give the same bits. Not public. */
#ifndef AL_METHODS_FINDING_STATS_H
#define AL_METHODS_FINDING_STATS_H

#include <stdint.h>

/* The significance level of every finding (docs/findings.md, "Thresholds"). */
#define AL_FINDING_ALPHA 0.05
/* Up to this many heads the null distribution enumerates every ordering (9! = 362,880); above, it draws
 * AL_FINDING_PERMUTATIONS seeded orderings. */
#define AL_FINDING_EXACT_MAX_N 9
#define AL_FINDING_PERMUTATIONS 100000
#define AL_FINDING_SEED 20190601u

/* The null distribution of Spearman's rho over n untied ranks, as a histogram of S = sum of squared rank
 * differences (rho = 1 - 6 S / (n (n^2 - 1))). exact: every one of the n! orderings counted; otherwise
 * `orderings` random ones from AL_FINDING_SEED. */
typedef struct al_spearman_null {
    int n, exact;
    double orderings; /* n! or AL_FINDING_PERMUTATIONS */
    int n_s;          /* S runs over 0 .. n_s - 1 */
    double *count;    /* [n_s] */
} al_spearman_null;

/* Builds the distribution for n heads (n < 2: an empty one whose p-values are all 1). Returns 0 on
 * success, -1 when out of memory. */
int al_spearman_null_build(al_spearman_null *z, int n);
void al_spearman_null_free(al_spearman_null *z);

/* Two-sided p-value of an observed rho: the share of orderings with |rho*| >= |rho| (exact), or
 * (1 + that count) / (1 + orderings) (permutations, so never 0). NAN rho gives NAN. */
double al_spearman_null_p(const al_spearman_null *z, double rho);

/* Holm's step-down adjusted p-values across the m tests of p (NAN entries are not tests and stay NAN):
 * sorted ascending, adj_(i) = max over j <= i of min(1, (m' - j) p_(j)), m' the finite count. */
void al_holm(const double *p, int m, double *adjusted);

/* P(X >= shared) for X hypergeometric: two sets of k drawn from n heads at random. Expected k^2 / n. */
double al_overlap_p(int n, int k, int shared);

/* The one-sided exact sign test: P(X >= above) for X binomial(m, 1/2), the chance that `above` or more of m units
 * (ties left out before) fall above their chance level when each is as likely above as below. m <= 0: 1. */
double al_sign_test_p(int m, int above);

#endif
