/* papa_summary.c: a sweep's summaries, drops, paired differences and findings (papa_summary.h). */
#include "papa_summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../probes/metrics.h"

al_status al_papa_summarize(const al_papa_sweep_result *r, int n_heads, const char *metric, int n_validation,
                            al_papa_summary *out, al_error *err) {
    memset(out, 0, sizeof *out);
    /* every run's score by configuration and seed, for the paired differences (configurations share each
     * probe seed) */
    int n_seeds = 0;
    for (int i = 0; i < r->n_runs; i++)
        if (r->runs[i].seed_index >= n_seeds && r->runs[i].seed_index < AL_PAPA_MAX_SEEDS) n_seeds = r->runs[i].seed_index + 1;
    double *scores = malloc(sizeof(double) * ((size_t)r->plan.n_configs * (size_t)n_seeds + 1));
    if (!scores) return al_err(err, AL_ERR_OOM, "papa: out of memory for the summary");
    for (int i = 0; i < r->plan.n_configs * n_seeds; i++) scores[i] = NAN;
    for (int i = 0; i < r->n_runs; i++)
        if (r->runs[i].seed_index < n_seeds) scores[(size_t)r->runs[i].config * n_seeds + r->runs[i].seed_index] = r->runs[i].score;
    int full_config = -1;
    for (int c = 0; c < r->plan.n_configs && full_config < 0; c++)
        if (r->plan.configs[c].what == AL_CFG_SWEEP && r->plan.configs[c].k == 0) full_config = c;
    /* the drop's reference: the full model's mean, known before any row (pass 0) */
    double full = NAN;
    for (int pass = 0; pass < 2; pass++)
        for (int c = 0; c < r->plan.n_configs; c++) {
            double vals[AL_PAPA_MAX_SEEDS];
            int n = 0;
            for (int i = 0; i < r->n_runs; i++)
                if (r->runs[i].config == c && n < AL_PAPA_MAX_SEEDS) vals[n++] = r->runs[i].score;
            if (!n) continue;
            al_seed_summary ss;
            al_error e2;
            if (al_metric_summary(vals, n, &ss, &e2)) continue;
            const al_papa_config *x = &r->plan.configs[c];
            if (pass == 0) {
                if (x->what == AL_CFG_SWEEP && x->k == 0) full = ss.mean;
                continue;
            }
            if (c < AL_PAPA_MAX_CONFIGS) out->configs[c] = (al_papa_config_summary){1, ss.mean, ss.has_interval ? ss.half_width : NAN};
            al_papa_summary_row *row = &out->rows[out->n_rows++];
            row->config = c;
            row->n = ss.n;
            row->mean = ss.mean;
            row->sd = ss.sd;
            row->ci95 = ss.has_interval ? ss.half_width : NAN;
            row->drop = NAN;
            if (!isnan(full) && al_metric_relative_drop(full, ss.mean, &row->drop, &e2)) row->drop = NAN;
            row->paired = al_papa_paired_of(scores, n_seeds, full_config, c);
            if (c == full_config) row->paired.n = 0;
        }
    const al_papa_findings_input in = {&r->plan, out->configs, scores, n_seeds, n_validation, n_heads, metric, 0};
    al_papa_findings_of(&in, &out->findings);
    free(scores);
    return AL_OK;
}
