/* papa_findings.h: what a PAPA sweep's summary says, in two verdicts and one sentence (docs/papa.md,
 * "What a sweep finds"). The reply of papa and of papa_merge carries them, so the CLI, the page and a
 * merged sweep read the same rule. */
#ifndef AL_PAPA_FINDINGS_H
#define AL_PAPA_FINDINGS_H

#include "papa_plan.h"

/* One configuration's mean over the seeds and its 95% half-width (NAN when it has fewer than 2 seeds). */
typedef struct al_papa_config_summary {
    int has;          /* 0: the configuration has no run */
    double mean, ci95;
} al_papa_config_summary;

typedef enum al_papa_verdict { AL_VERDICT_UNKNOWN = -1, AL_VERDICT_NO = 0, AL_VERDICT_YES = 1 } al_papa_verdict;

typedef struct al_papa_findings {
    /* YES: the full model above the embeddings alone, beyond both 95% intervals: its layers add something a probe
     * can use, so there is something for constant attention to lose. NO: not above, with both intervals
     * within 5% of the full score (a gap that size would have shown). UNKNOWN: intervals too wide, or absent. */
    al_papa_verdict informative;
    /* every head constant (the average matrix, else the first constant kind listed) below the full model,
     * beyond both 95% intervals; NO and UNKNOWN as above */
    al_papa_verdict constant_costs;
    int full, embeddings, all_constant; /* the configurations compared (-1: absent) */
    char text[512];                     /* one plain sentence */
} al_papa_findings;

/* s[c] for each of plan->n_configs configurations; n_heads = layers x heads. */
void al_papa_findings_of(const al_papa_plan *plan, const al_papa_config_summary *s, int n_heads, const char *metric,
                         al_papa_findings *out);

const char *al_papa_verdict_name(al_papa_verdict v); /* "yes", "no", "unknown" */

#endif
