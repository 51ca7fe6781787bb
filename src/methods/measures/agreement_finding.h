/* agreement_finding.h: what the head_agreement op may say about its Spearman matrix and overlaps, by the
 * rule of docs/findings.md: permutation p-values, Holm across the measures compared, "too few heads to tell"
 * where no correlation could be significant, "λ did not learn a ranking" where λ barely moved, overlaps of
 * the least important heads against chance; a verdict code per pair and one sentence from them. The op
 * (op_agreement.c) and the CLI's `findings` command (tools/attnlab.c, for the model cards and the README)
 * call it, so every reading of the numbers is this one. Not public. */
#ifndef AL_METHODS_AGREEMENT_FINDING_H
#define AL_METHODS_AGREEMENT_FINDING_H

#include "head_agreement.h"

/* λ "did not learn a ranking" when its values over the heads span less than this (max - min): every λ
 * within 0.5 +- 0.0005 of its start (docs/findings.md, "λ did not learn a ranking"). */
#define AL_FINDING_LAMBDA_FLOOR 1e-3
#define AL_FINDING_MAX_MEASURES 16

/* Verdicts (the reply's codes; docs/findings.md names the words). */
typedef enum al_pair_verdict_code {
    AL_PV_AGREES,          /* significant after Holm, rho (direction of importance) >= AL_AGREEMENT_RHO */
    AL_PV_OTHER_WAY,       /* significant, rho <= -AL_AGREEMENT_RHO */
    AL_PV_WEAKLY_ALIKE,    /* significant, 0 < rho < AL_AGREEMENT_RHO */
    AL_PV_WEAKLY_OPPOSITE, /* significant, -AL_AGREEMENT_RHO < rho < 0 */
    AL_PV_NOT_SIGNIFICANT, /* Holm-adjusted p >= alpha */
    AL_PV_NO_RANKING,      /* a measure gives every head the same value, or fewer than two heads a value */
    AL_PV_TOO_FEW_HEADS,   /* even rho = +-1 would not be significant with this many heads */
    AL_PV_LAMBDA_FLAT,     /* lambda did not learn a ranking: not read */
    AL_PV_N
} al_pair_verdict_code;

typedef enum al_overlap_verdict_code { AL_OV_MORE_THAN_CHANCE, AL_OV_CHANCE, AL_OV_NOT_TESTED, AL_OV_N } al_overlap_verdict_code;

typedef enum al_finding_code { AL_FIND_COMPARED, AL_FIND_TOO_FEW_HEADS, AL_FIND_LAMBDA_FLAT, AL_FIND_N } al_finding_code;

extern const char *const al_pair_verdict_names[AL_PV_N];
extern const char *const al_overlap_verdict_names[AL_OV_N];
extern const char *const al_finding_names[AL_FIND_N];

/* What the rule reads. Measure 0 is the reference (PAPA's lambda). */
typedef struct al_agreement_input {
    const al_agreement_measure *m;
    int M;
    int n_heads;          /* heads the correlations run over */
    const double *rho;    /* [M][M] Spearman on the raw values (NAN where undefined) */
    const double *grid;   /* [M][n_heads] or NULL: tells a constant measure from one without values */
    int k;                /* least-important set size; 0: no overlaps */
    const int *overlap;   /* [M][M] or NULL */
    double lambda_range;  /* max - min of measure 0 over the heads (NAN: unknown; from grid when given) */
    const char *raise;    /* what to raise when lambda did not learn, e.g. "ranking.lr (now 1e-08) or ..." */
} al_agreement_input;

typedef struct al_pair_finding {
    int a, b;
    double rho_importance; /* rho * sign_a * sign_b */
    double p, p_holm;
    int family;            /* 0: against the reference; 1: among the other measures */
    al_pair_verdict_code verdict;
} al_pair_finding;

typedef struct al_overlap_finding {
    int b, shared;
    double expected, p, p_holm;
    al_overlap_verdict_code verdict;
} al_overlap_finding;

typedef struct al_agreement_findings {
    al_finding_code verdict;
    int exact;                  /* the p-values enumerate every ordering (else seeded permutations) */
    double orderings;           /* n! or the permutation count */
    double lambda_range;
    int n_pairs;                /* M (M - 1) / 2, reference pairs first */
    al_pair_finding pairs[AL_FINDING_MAX_MEASURES * (AL_FINDING_MAX_MEASURES - 1) / 2];
    int n_overlaps;             /* M - 1 (the reference against each other), 0 without overlaps */
    al_overlap_finding overlaps[AL_FINDING_MAX_MEASURES];
    char sentence[4096];
} al_agreement_findings;

/* Applies the rule. Returns 0, or -1 when out of memory or M is outside 2 .. AL_FINDING_MAX_MEASURES. */
int al_agreement_findings_make(const al_agreement_input *in, al_agreement_findings *out);

#endif
