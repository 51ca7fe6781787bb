/* papa_summary.h: the statistics of a PAPA sweep's reply (docs/papa.md, docs/papa-op.md): every
 * configuration's mean over the seeds with its 95% Student-t interval (al_metric_summary), its relative
 * drop from the full model, the full model minus it seed by seed (al_papa_paired_of), and the findings
 * (papa_findings.h). The papa and papa_merge replies print these; they compute nothing themselves. */
#ifndef AL_PAPA_SUMMARY_H
#define AL_PAPA_SUMMARY_H

#include "papa_findings.h"
#include "papa_sweep.h"

/* One configuration with at least one run. */
typedef struct al_papa_summary_row {
    int config, n;
    double mean, sd;
    double ci95;           /* NAN with fewer than 2 seeds */
    double drop;           /* (full - mean) / |full|; NAN without a full-model mean */
    al_papa_paired paired; /* full model minus this configuration, seed by seed; n = 0 for the full model */
} al_papa_summary_row;

typedef struct al_papa_summary {
    int n_rows;
    al_papa_summary_row rows[AL_PAPA_MAX_CONFIGS];       /* in configuration order */
    al_papa_config_summary configs[AL_PAPA_MAX_CONFIGS]; /* by configuration, has = 0 without runs */
    al_papa_findings findings;
} al_papa_summary;

/* The summary of r's runs (scores as the reply holds them: see al_json_canonical). n_heads = layers x
 * heads; metric names the score in the findings' sentence; n_validation < 0 when not known. */
al_status al_papa_summarize(const al_papa_sweep_result *r, int n_heads, const char *metric, int n_validation,
                            al_papa_summary *out, al_error *err);

#endif
