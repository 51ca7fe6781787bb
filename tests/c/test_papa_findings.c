/* test_papa_findings.c: the verdicts of a sweep (src/methods/papa/papa_findings.c; docs/papa.md, "What a sweep
 * finds"): "clearly" means the two 95% intervals do not overlap; without intervals there is no verdict; the
 * average constant is preferred for "every head constant". */
#include <math.h>
#include <string.h>

#include "check.h"
#include "methods/probes/metrics.h"
#include "methods/papa/papa_findings.h"

enum { N_HEADS = 16 };

/* full model, average at k = 16, uniform at k = 16, embeddings only */
static al_papa_plan plan4(void) {
    al_papa_plan p;
    memset(&p, 0, sizeof p);
    p.n_configs = 4;
    p.configs[0] = (al_papa_config){AL_CFG_SWEEP, AL_CONST_AVERAGE, AL_ORDER_LAMBDA, 0};
    p.configs[1] = (al_papa_config){AL_CFG_SWEEP, AL_CONST_UNIFORM, AL_ORDER_LAMBDA, N_HEADS};
    p.configs[2] = (al_papa_config){AL_CFG_SWEEP, AL_CONST_AVERAGE, AL_ORDER_LAMBDA, N_HEADS};
    p.configs[3] = (al_papa_config){AL_CFG_EMBEDDINGS_ONLY, AL_CONST_AVERAGE, AL_ORDER_LAMBDA, 0};
    return p;
}

static al_papa_findings findings(const al_papa_plan *p, const al_papa_config_summary *s, const double *scores,
                                 int n_seeds, int n_validation, const char *metric) {
    const al_papa_findings_input in = {p, s, scores, n_seeds, n_validation, N_HEADS, metric, 0};
    al_papa_findings f;
    al_papa_findings_of(&in, &f);
    return f;
}

/* From the summaries alone (no per-seed scores to pair), on 800 validation examples. */
static al_papa_findings run(double full, double full_ci, double avg, double avg_ci, double emb, double emb_ci) {
    al_papa_plan p = plan4();
    al_papa_config_summary s[4] = {{1, full, full_ci}, {1, 0.1, 0.01}, {1, avg, avg_ci}, {1, emb, emb_ci}};
    return findings(&p, s, NULL, 0, 800, "accuracy");
}

/* From per-seed scores (configurations 0 full, 2 average, 3 embeddings; 1 uniform at 0.1), as the op does:
 * the summaries by al_metric_summary, the pairs seed by seed. */
static al_papa_findings run_seeds(int n, const double *full, const double *avg, const double *emb, int n_validation) {
    al_papa_plan p = plan4();
    double scores[4 * 16];
    const double *col[4] = {full, NULL, avg, emb};
    al_papa_config_summary s[4];
    for (int c = 0; c < 4; c++) {
        for (int i = 0; i < n; i++) scores[c * n + i] = col[c] ? col[c][i] : 0.1 + 0.001 * i;
        al_seed_summary ss;
        al_error err;
        al_metric_summary(scores + c * n, n, &ss, &err);
        s[c] = (al_papa_config_summary){1, ss.mean, ss.has_interval ? ss.half_width : NAN};
    }
    return findings(&p, s, scores, n, n_validation, "accuracy");
}

int main(void) {
    /* attention matters: the layers beat the embeddings and constant heads cost beyond both intervals */
    al_papa_findings f = run(0.90, 0.01, 0.85, 0.01, 0.60, 0.02);
    CHECK(f.informative == AL_VERDICT_YES && f.constant_costs == AL_VERDICT_YES);
    CHECK(f.full == 0 && f.all_constant == 2 && f.embeddings == 3); /* the average, not the uniform (config 1) */
    CHECK(strstr(f.text, "falls from 0.900") && strstr(f.text, "to 0.850") && strstr(f.text, "5.6%"));
    /* a gap equal to the two half-widths is not clear: the intervals touch (values exact in binary); nor is it
     * "nothing": each mean is outside the other's interval */
    f = run(0.75, 0.03125, 0.6875, 0.03125, 0.25, 0.0625);
    CHECK(f.constant_costs == AL_VERDICT_UNDECIDED);
    CHECK(strstr(f.text, "leaning to a cost") && strstr(f.text, "8.3% lower"));
    /* a 2.8% gap beyond each interval, the intervals overlapping (attnlab-small-bert on agreement, 5 seeds) */
    f = run(0.8157, 0.0110, 0.7933, 0.0127, 0.5092, 0.0099);
    CHECK(f.informative == AL_VERDICT_YES && f.constant_costs == AL_VERDICT_UNDECIDED && strstr(f.text, "leaning"));
    /* a gap within the wider interval, narrow intervals: nothing measurable */
    f = run(0.75, 0.03125, 0.71875, 0.03125, 0.25, 0.0625);
    CHECK(f.constant_costs == AL_VERDICT_NO);
    f = run(0.75, 0.0312, 0.6875, 0.03125, 0.25, 0.0625);
    CHECK(f.constant_costs == AL_VERDICT_YES);
    /* informative, but the average pattern serves as well as the real one */
    f = run(0.765, 0.007, 0.773, 0.013, 0.498, 0.005);
    CHECK(f.informative == AL_VERDICT_YES && f.constant_costs == AL_VERDICT_NO);
    CHECK(strstr(f.text, "nothing measurable") && strstr(f.text, "serves as well"));
    /* constant heads higher than the full model, outside its interval (attnlab-small-bert on POS rounded to 4
     * places; unrounded, the gap is 3e-7 inside): no cost, and the sentence does not say "within the intervals" */
    f = run(0.9410, 0.0021, 0.9432, 0.0006, 0.9052, 0.0008);
    CHECK(f.informative == AL_VERDICT_YES && f.constant_costs == AL_VERDICT_NO);
    CHECK(strstr(f.text, "costs nothing here") && strstr(f.text, "higher than the full model's 0.941") &&
          strstr(f.text, "(0.2%)") && strstr(f.text, "not beyond both") && !strstr(f.text, "within"));
    f = run(0.75, 0.03125, 0.84375, 0.03125, 0.25, 0.0625);
    CHECK(f.constant_costs == AL_VERDICT_NO && strstr(f.text, "higher") && strstr(f.text, ", beyond both"));
    /* the full model no better than the embeddings alone, with narrow intervals: not informative */
    f = run(0.492, 0.018, 0.490, 0.02, 0.498, 0.005);
    CHECK(f.informative == AL_VERDICT_NO && strstr(f.text, "Not informative") && strstr(f.text, "0.492"));
    /* wide intervals never give "no": a small run is undecided, whatever the means */
    f = run(0.508, 0.047, 0.50, 0.05, 0.510, 0.082);
    CHECK(f.informative == AL_VERDICT_UNDECIDED && strstr(f.text, "Undecided") && strstr(f.text, "too wide"));
    f = run(0.648, 0.101, 0.65, 0.025, 0.424, 0.796);
    CHECK(f.informative == AL_VERDICT_UNDECIDED && f.constant_costs == AL_VERDICT_UNDECIDED);
    f = run(0.90, 0.01, 0.86, 0.09, 0.60, 0.01);
    CHECK(f.informative == AL_VERDICT_YES && f.constant_costs == AL_VERDICT_UNDECIDED && strstr(f.text, "too wide to tell whether constant"));
    /* one seed: no intervals, too little data for a verdict */
    f = run(0.9, NAN, 0.8, NAN, 0.5, NAN);
    CHECK(f.informative == AL_VERDICT_TOO_LITTLE_DATA && f.constant_costs == AL_VERDICT_TOO_LITTLE_DATA &&
          strstr(f.text, "Too little data") && strstr(f.text, "2 seeds"));
    /* no baselines and no all-constant configuration */
    al_papa_plan p = plan4();
    p.n_configs = 1;
    al_papa_config_summary s1[1] = {{1, 0.9, 0.01}};
    f = findings(&p, s1, NULL, 0, 800, "");
    CHECK(f.informative == AL_VERDICT_UNDECIDED && f.constant_costs == AL_VERDICT_UNDECIDED && f.embeddings < 0 &&
          f.all_constant < 0 && strstr(f.text, "No verdict on constant attention"));
    /* the uniform alone stands for "every head constant" when the average is not in the sweep */
    p = plan4();
    al_papa_config_summary s2[4] = {{1, 0.9, 0.01}, {1, 0.5, 0.01}, {0, 0, 0}, {1, 0.6, 0.01}};
    f = findings(&p, s2, NULL, 0, 800, "accuracy");
    CHECK(f.all_constant == 1 && f.constant_costs == AL_VERDICT_YES);

    /* a shard without the full model's runs says so */
    {
        al_papa_plan ps = plan4();
        al_papa_config_summary sh[4] = {{0, 0, 0}, {1, 0.5, 0.01}, {1, 0.6, 0.01}, {1, 0.6, 0.01}};
        f = findings(&ps, sh, NULL, 0, 800, "accuracy");
        CHECK(f.full < 0 && f.informative == AL_VERDICT_TOO_LITTLE_DATA && strstr(f.text, "papa_merge"));
    }
    /* one vocabulary: the codes a reply carries and the words a reader sees */
    CHECK(!strcmp(al_papa_verdict_codes[AL_VERDICT_UNDECIDED], "undecided") &&
          !strcmp(al_papa_verdict_words[AL_VERDICT_TOO_LITTLE_DATA], "too little data") &&
          !strcmp(al_papa_verdict_codes[AL_VERDICT_TOO_LITTLE_DATA], "too_little_data"));

    /* docs/papa.md, "Too little data": a 4-row file, 3 training rows and 1 validation row: every seed scores 0, the intervals are
     * 0 wide, and that is too little data, not "costs nothing measurable" */
    const double zero3[3] = {0, 0, 0};
    f = run_seeds(3, zero3, zero3, zero3, 1);
    CHECK(f.informative == AL_VERDICT_TOO_LITTLE_DATA && f.constant_costs == AL_VERDICT_TOO_LITTLE_DATA);
    CHECK(strstr(f.text, "Too little data to tell") && strstr(f.text, "1 example ") && !strstr(f.text, "nothing"));
    f = run_seeds(3, zero3, zero3, zero3, AL_PAPA_MIN_VALIDATION - 1);
    CHECK(f.informative == AL_VERDICT_TOO_LITTLE_DATA);
    f = run_seeds(3, zero3, zero3, zero3, AL_PAPA_MIN_VALIDATION);
    CHECK(f.informative == AL_VERDICT_NO);

    /* docs/papa.md, "informative": the embeddings alone beat the full model beyond both intervals (SST-2 with the default
     * model: 0.603 +- 0.039 against 0.535 +- 0.016): the layers add nothing, and the sentence says the
     * embeddings win, not that the intervals are too wide */
    f = run(0.535, 0.016, 0.52, 0.02, 0.603, 0.039);
    CHECK(f.informative == AL_VERDICT_NO && strstr(f.text, "embeddings alone (0.603") &&
          strstr(f.text, "beat the full model") && strstr(f.text, "beyond both") && !strstr(f.text, "too wide"));

    /* docs/papa.md, "Paired seeds": The constant heads are 0.012 below the full model on every seed, give or
     * take 0.004, while each configuration's seeds spread by 0.03: the unpaired intervals overlap, the paired
     * difference's interval lies above 0, and the verdict is a cost */
    const double full5[5] = {0.80, 0.83, 0.78, 0.82, 0.79};
    const double avg5[5] = {0.786, 0.820, 0.768, 0.806, 0.780};
    const double emb5[5] = {0.50, 0.51, 0.49, 0.50, 0.51};
    f = run_seeds(5, full5, avg5, emb5, 800);
    CHECK(f.full_minus_constant.n == 5 && fabs(f.full_minus_constant.mean - 0.012) < 1e-9);
    CHECK(f.full_minus_constant.ci95 > 0 && f.full_minus_constant.ci95 < 0.012);
    CHECK(f.informative == AL_VERDICT_YES && f.constant_costs == AL_VERDICT_YES);
    CHECK(strstr(f.text, "beyond the paired 95% interval") && strstr(f.text, "0.0120 \xc2\xb1") && strstr(f.text, "5 seeds"));
    /* the same gap without seeds to pair is no cost (the intervals overlap, and both are narrow): the
     * unpaired rule alone misses it */
    {
        al_papa_plan p5 = plan4();
        al_seed_summary a, b, e;
        al_error err;
        al_metric_summary(full5, 5, &a, &err);
        al_metric_summary(avg5, 5, &b, &err);
        al_metric_summary(emb5, 5, &e, &err);
        al_papa_config_summary s5[4] = {{1, a.mean, a.half_width}, {1, 0.1, 0.01}, {1, b.mean, b.half_width}, {1, e.mean, e.half_width}};
        f = findings(&p5, s5, NULL, 0, 800, "accuracy");
        CHECK(f.constant_costs == AL_VERDICT_NO && f.full_minus_constant.n == 0);
    }
    /* the panel's first example on attnlab-small-bert (agreement, 5 seeds, docs/papa-page.md): a 2.4% drop
     * beyond each interval, 0.019 +- 0.021 seed by seed, whose top end stays under 5% of the score: still
     * undecided, never "no" (per-seed scores of that run) */
    {
        const double fs[5] = {0.8075, 0.8075, 0.825, 0.7975, 0.8}, as[5] = {0.7975, 0.78, 0.78, 0.79, 0.795};
        const double es[5] = {0.4975, 0.525, 0.4875, 0.5, 0.4875};
        f = run_seeds(5, fs, as, es, 400);
        CHECK(f.full_minus_constant.mean - f.full_minus_constant.ci95 < 0 &&
              f.full_minus_constant.mean + f.full_minus_constant.ci95 <= 0.05 * 0.8075);
        CHECK_MSG(f.constant_costs == AL_VERDICT_UNDECIDED && strstr(f.text, "leaning to a cost"), "%s", f.text);
    }
    /* a paired difference whose interval holds 0 and stays under 5% of the full score: no cost */
    const double avg5b[5] = {0.801, 0.829, 0.781, 0.819, 0.790};
    f = run_seeds(5, full5, avg5b, emb5, 800);
    CHECK(f.constant_costs == AL_VERDICT_NO && strstr(f.text, "nothing measurable") && strstr(f.text, "paired"));
    return check_summary("papa_findings");
}
