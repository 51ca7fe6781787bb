/* papa_findings.h: what a PAPA sweep's summary says, in two verdicts and one sentence (docs/papa.md,
 * "What a sweep finds"). The reply of papa and of papa_merge carries them, so the CLI, the page and a
 * merged sweep read the same rule and the same words. */
#ifndef AL_PAPA_FINDINGS_H
#define AL_PAPA_FINDINGS_H

#include "papa_plan.h"

/* One configuration's mean over the seeds and its 95% half-width (NAN when it has fewer than 2 seeds). */
typedef struct al_papa_config_summary {
    int has;          /* 0: the configuration has no run */
    double mean, ci95;
} al_papa_config_summary;

/* The verdicts, in the order of al_papa_verdict_codes and al_papa_verdict_words (indexed by the verdict). */
typedef enum al_papa_verdict {
    AL_VERDICT_YES = 0,
    AL_VERDICT_NO = 1,
    AL_VERDICT_UNDECIDED = 2,
    AL_VERDICT_TOO_LITTLE_DATA = 3,
    AL_N_VERDICTS = 4
} al_papa_verdict;

/* The one vocabulary of verdicts: the code a reply's findings carry ("yes", "no", "undecided",
 * "too_little_data") and the word a reader sees ("yes", "no", "undecided", "too little data"). The reply
 * publishes both (findings.words), and the page shows the word the reply gives for a code. */
extern const char *const al_papa_verdict_codes[AL_N_VERDICTS];
extern const char *const al_papa_verdict_words[AL_N_VERDICTS];

/* Below these a sweep gets "too little data" instead of a verdict (docs/papa.md): a 95% interval needs 2
 * seeds, and a validation split of a handful of examples gives scores in coarse steps whose spread over
 * seeds says nothing (1 example: every seed scores 0 or 1). */
#define AL_PAPA_MIN_SEEDS 2
#define AL_PAPA_MIN_VALIDATION 20

/* The difference a - b seed by seed, over the seeds both configurations ran (they share each probe seed):
 * its mean and 95% Student-t half-width (NAN with fewer than 2 shared seeds). */
typedef struct al_papa_paired {
    int n;
    double mean, ci95;
} al_papa_paired;

/* scores[c * n_seeds + s]: configuration c's score with seed s (NAN when it did not run); any n_seeds (a language
 * model's sweep pairs its documents). */
al_papa_paired al_papa_paired_of(const double *scores, int n_seeds, int a, int b);

typedef struct al_papa_findings_input {
    const al_papa_plan *plan;
    const al_papa_config_summary *summary; /* [plan->n_configs] */
    const double *scores;                  /* [plan->n_configs * n_seeds], NAN where absent; NULL: none */
    int n_seeds;
    int n_validation; /* validation examples each probe was scored on; < 0: not known */
    int n_heads;      /* layers x heads */
    const char *metric;
    /* A language model's sweep (papa_lm.h): the score is a loss (bits per token, lower is better) and the pairs
     * are documents, not seeds. The same rule runs on the negated scores; the sentence prints the scores as they
     * are, with the directions' words turned ("rises", "higher" for a cost) and "documents" for "seeds", and the
     * paired differences are the loss's (full minus configuration: negative is a cost). */
    int lower_is_better;
} al_papa_findings_input;

typedef struct al_papa_findings {
    /* YES: the full model above the embeddings alone (the paired difference's 95% interval above 0, or the
     * two 95% intervals apart): its layers add something a probe can use, so there is something for
     * constant attention to lose. NO: the embeddings alone clearly above the full model, or the gap
     * within the wider of the two intervals and at most 5% of the full score (the paired interval's top
     * end; without seeds to pair, both intervals that narrow). UNDECIDED: neither. TOO_LITTLE_DATA:
     * fewer than AL_PAPA_MIN_SEEDS seeds or AL_PAPA_MIN_VALIDATION validation examples. */
    al_papa_verdict informative;
    /* the same rule between the full model and every head constant (the average matrix, else the first
     * constant kind listed) */
    al_papa_verdict constant_costs;
    int full, embeddings, all_constant; /* the configurations compared (-1: absent) */
    al_papa_paired full_minus_embeddings, full_minus_constant;
    char text[640];                     /* one plain sentence */
} al_papa_findings;

void al_papa_findings_of(const al_papa_findings_input *in, al_papa_findings *out);

#endif
