/* test_papa_findings.c: the verdicts of a sweep (src/methods/papa_findings.c; docs/papa.md, "What a sweep
 * finds"): "clearly" means the two 95% intervals do not overlap; without intervals there is no verdict; the
 * average constant is preferred for "every head constant". */
#include <math.h>
#include <string.h>

#include "check.h"
#include "methods/papa_findings.h"

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

static al_papa_findings run(double full, double full_ci, double avg, double avg_ci, double emb, double emb_ci) {
    al_papa_plan p = plan4();
    al_papa_config_summary s[4] = {{1, full, full_ci}, {1, 0.1, 0.01}, {1, avg, avg_ci}, {1, emb, emb_ci}};
    al_papa_findings f;
    al_papa_findings_of(&p, s, N_HEADS, "accuracy", &f);
    return f;
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
    CHECK(f.constant_costs == AL_VERDICT_UNKNOWN);
    CHECK(strstr(f.text, "leaning to a cost") && strstr(f.text, "8.3% lower"));
    /* a 2.8% gap beyond each interval, the intervals overlapping (attnlab-small-bert on agreement, 5 seeds) */
    f = run(0.8157, 0.0110, 0.7933, 0.0127, 0.5092, 0.0099);
    CHECK(f.informative == AL_VERDICT_YES && f.constant_costs == AL_VERDICT_UNKNOWN && strstr(f.text, "leaning"));
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
    CHECK(f.informative == AL_VERDICT_UNKNOWN && strstr(f.text, "Undecided") && strstr(f.text, "too wide"));
    f = run(0.648, 0.101, 0.65, 0.025, 0.424, 0.796);
    CHECK(f.informative == AL_VERDICT_UNKNOWN && f.constant_costs == AL_VERDICT_UNKNOWN);
    f = run(0.90, 0.01, 0.86, 0.09, 0.60, 0.01);
    CHECK(f.informative == AL_VERDICT_YES && f.constant_costs == AL_VERDICT_UNKNOWN && strstr(f.text, "too wide to tell whether constant"));
    /* one seed: no intervals, no verdicts */
    f = run(0.9, NAN, 0.8, NAN, 0.5, NAN);
    CHECK(f.informative == AL_VERDICT_UNKNOWN && f.constant_costs == AL_VERDICT_UNKNOWN && strstr(f.text, "2 seeds"));
    /* no baselines and no all-constant configuration */
    al_papa_plan p = plan4();
    p.n_configs = 1;
    al_papa_config_summary s1[1] = {{1, 0.9, 0.01}};
    al_papa_findings_of(&p, s1, N_HEADS, "", &f);
    CHECK(f.informative == AL_VERDICT_UNKNOWN && f.constant_costs == AL_VERDICT_UNKNOWN && f.embeddings < 0 &&
          f.all_constant < 0 && strstr(f.text, "No verdict on constant attention"));
    /* the uniform alone stands for "every head constant" when the average is not in the sweep */
    p = plan4();
    al_papa_config_summary s2[4] = {{1, 0.9, 0.01}, {1, 0.5, 0.01}, {0, 0, 0}, {1, 0.6, 0.01}};
    al_papa_findings_of(&p, s2, N_HEADS, "accuracy", &f);
    CHECK(f.all_constant == 1 && f.constant_costs == AL_VERDICT_YES);
    CHECK(strcmp(al_papa_verdict_name(AL_VERDICT_UNKNOWN), "unknown") == 0);
    return check_summary("papa_findings");
}
