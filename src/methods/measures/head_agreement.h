/* head_agreement.h: whether per-head measures agree on which heads matter (docs/agreement.md): ranks with
 * ties averaged, Spearman's rank correlation, the k heads a measure calls least important, the overlap of
 * two such sets (agreement_finding.h says what the op may conclude from them). Pure arithmetic on [n]
 * arrays of doubles (NAN: the head has no value for the measure). Not public. */
#ifndef AL_METHODS_HEAD_AGREEMENT_H
#define AL_METHODS_HEAD_AGREEMENT_H

/* ranks[i] = the 1-based rank of v[i] in ascending order; tied values share the mean of the ranks they
 * span (1, 2.5, 2.5, 4). NAN values get NAN. */
void al_average_ranks(const double *v, int n, double *ranks);

/* Spearman's rho: Pearson's correlation of the average ranks of a and b, over the indices where both are
 * finite (ranked among those indices only). NAN when fewer than 2 such indices or when either measure is
 * constant over them (its ranks have no variance). */
double al_spearman(const double *a, const double *b, int n);

/* The k indices a measure calls least important: ascending values when low_is_least, else descending;
 * ties in index order; NAN values last. out [k]; k is clamped to [0, n]; returns k. */
int al_least_k(const double *v, int n, int low_is_least, int k, int *out);

/* How many indices two sets of k share. */
int al_overlap(const int *a, const int *b, int k);

/* One measure of the comparison: its id (e.g. "gradient"), the words used in the sentence ("gradient
 * importance"), and the direction of importance: +1 when a higher value means the head matters more
 * (its least important heads are the lowest), -1 when a higher value means it matters less. */
typedef struct al_agreement_measure {
    const char *id, *words;
    int importance_sign;
} al_agreement_measure;

/* |rho| at or above this, when significant, is called agreement (or opposition) in the sentence (docs/findings.md). */
#define AL_AGREEMENT_RHO 0.5

#endif
