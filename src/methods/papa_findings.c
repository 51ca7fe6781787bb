/* papa_findings.c: the two verdicts of a sweep and their sentence (papa_findings.h, docs/papa.md). Two means
 * differ "clearly" when their 95% intervals do not overlap: the gap exceeds the sum of the two half-widths.
 * That is stricter than a t-test and needs no pooled variance, and a reader can check it from the table. "No"
 * needs the gap within the wider interval (a mean inside the other's interval) and narrow intervals: few seeds
 * or examples, or a gap between the two (beyond each interval, not beyond both), give "unknown", never a
 * false "no". */
#include "papa_findings.h"

#include <math.h>
#include <stdio.h>

const char *al_papa_verdict_name(al_papa_verdict v) {
    return v == AL_VERDICT_YES ? "yes" : v == AL_VERDICT_NO ? "no" : "unknown";
}

static int usable(const al_papa_config_summary *s, int c) { return c >= 0 && s[c].has && isfinite(s[c].ci95); }

/* An interval is narrow when its half-width is at most this share of the full model's score: narrow enough
 * to have seen a difference of that size had there been one. */
#define NARROW 0.05

static int narrow(const al_papa_config_summary *s, int c, double full) { return s[c].ci95 <= NARROW * fabs(full); }

/* The gap a - b is beyond the wider of the two intervals: each mean lies outside the other's interval. */
static int beyond_one(const al_papa_config_summary *s, int a, int b) {
    return s[a].mean - s[b].mean > fmax(s[a].ci95, s[b].ci95);
}

/* YES when a is above b beyond both intervals; NO when a is at most the wider interval above b and both
 * intervals are narrow (a difference of NARROW would have shown); UNKNOWN otherwise (too few seeds or
 * examples, or a gap beyond one interval but not both) and without intervals. */
static al_papa_verdict clearly_above(const al_papa_config_summary *s, int a, int b) {
    if (!usable(s, a) || !usable(s, b)) return AL_VERDICT_UNKNOWN;
    if (s[a].mean - s[b].mean > s[a].ci95 + s[b].ci95) return AL_VERDICT_YES;
    if (beyond_one(s, a, b)) return AL_VERDICT_UNKNOWN;
    return narrow(s, a, s[a].mean) && narrow(s, b, s[a].mean) ? AL_VERDICT_NO : AL_VERDICT_UNKNOWN;
}

void al_papa_findings_of(const al_papa_plan *plan, const al_papa_config_summary *s, int n_heads, const char *metric,
                         al_papa_findings *out) {
    if (!metric || !metric[0]) metric = "score";
    out->full = out->embeddings = out->all_constant = -1;
    for (int c = 0; c < plan->n_configs; c++) {
        const al_papa_config *x = &plan->configs[c];
        if (!s[c].has) continue;
        if (x->what == AL_CFG_SWEEP && x->k == 0 && out->full < 0) out->full = c;
        if (x->what == AL_CFG_EMBEDDINGS_ONLY && out->embeddings < 0) out->embeddings = c;
        if (x->what == AL_CFG_SWEEP && x->k == n_heads &&
            (out->all_constant < 0 || (x->constant == AL_CONST_AVERAGE && plan->configs[out->all_constant].constant != AL_CONST_AVERAGE)))
            out->all_constant = c;
    }
    out->informative = clearly_above(s, out->full, out->embeddings);
    out->constant_costs = clearly_above(s, out->full, out->all_constant);
    const int f = out->full, e = out->embeddings, a = out->all_constant;
    if (!usable(s, f)) {
        snprintf(out->text, sizeof out->text, "No verdict: the full model needs at least 2 seeds for a 95%% interval.");
    } else if (out->informative == AL_VERDICT_NO) {
        snprintf(out->text, sizeof out->text,
                 "Not informative on this model: the full model's %s (%.3f \xc2\xb1 %.3f) is no better than the "
                 "embeddings alone (%.3f \xc2\xb1 %.3f), so its attention has nothing here for constant heads to lose.",
                 metric, s[f].mean, s[f].ci95, s[e].mean, s[e].ci95);
    } else if (out->informative == AL_VERDICT_UNKNOWN && usable(s, e)) {
        snprintf(out->text, sizeof out->text,
                 "Undecided: the 95%% intervals (full model %.3f \xc2\xb1 %.3f, embeddings alone %.3f \xc2\xb1 %.3f) are "
                 "too wide to tell whether the layers add anything a probe can use; run more seeds or examples.",
                 s[f].mean, s[f].ci95, s[e].mean, s[e].ci95);
    } else if (out->constant_costs == AL_VERDICT_YES) {
        snprintf(out->text, sizeof out->text,
                 "Input-dependent attention matters here: with every head constant the %s falls from %.3f \xc2\xb1 %.3f "
                 "to %.3f \xc2\xb1 %.3f (%.1f%% lower), beyond both 95%% intervals.",
                 metric, s[f].mean, s[f].ci95, s[a].mean, s[a].ci95, 100.0 * (s[f].mean - s[a].mean) / fabs(s[f].mean));
    } else if (out->constant_costs == AL_VERDICT_NO && beyond_one(s, a, f)) {
        /* "no cost" holds, but "within the intervals" would not: the constant heads score higher, outside the
         * full model's interval */
        snprintf(out->text, sizeof out->text,
                 "Constant attention costs nothing here: with every head constant the %s is %.3f \xc2\xb1 %.3f, higher "
                 "than the full model's %.3f \xc2\xb1 %.3f (%.1f%%), %s%s.",
                 metric, s[a].mean, s[a].ci95, s[f].mean, s[f].ci95, 100.0 * (s[a].mean - s[f].mean) / fabs(s[f].mean),
                 s[a].mean - s[f].mean > s[a].ci95 + s[f].ci95 ? "beyond both 95% intervals"
                                                                : "outside each other's 95% intervals but not beyond both",
                 out->informative == AL_VERDICT_YES ? "; the layers beat the embeddings alone" : "");
    } else if (out->constant_costs == AL_VERDICT_NO) {
        snprintf(out->text, sizeof out->text,
                 "Constant attention costs nothing measurable here: with every head constant the %s is %.3f \xc2\xb1 %.3f "
                 "against %.3f \xc2\xb1 %.3f for the full model, within the 95%% intervals%s.",
                 metric, s[a].mean, s[a].ci95, s[f].mean, s[f].ci95,
                 out->informative == AL_VERDICT_YES ? ", though the layers beat the embeddings alone: the average pattern serves as well as the real one" : "");
    } else if (usable(s, a) && beyond_one(s, f, a)) {
        snprintf(out->text, sizeof out->text,
                 "Undecided, leaning to a cost: with every head constant the %s is %.3f \xc2\xb1 %.3f against %.3f "
                 "\xc2\xb1 %.3f for the full model (%.1f%% lower), outside each other's 95%% intervals but not beyond "
                 "both; run more seeds or examples to tell.",
                 metric, s[a].mean, s[a].ci95, s[f].mean, s[f].ci95, 100.0 * (s[f].mean - s[a].mean) / fabs(s[f].mean));
    } else if (usable(s, a)) {
        snprintf(out->text, sizeof out->text,
                 "Undecided: with every head constant the %s is %.3f \xc2\xb1 %.3f against %.3f \xc2\xb1 %.3f for the full "
                 "model; the intervals are too wide to tell whether constant attention costs anything; run more seeds or "
                 "examples.", metric, s[a].mean, s[a].ci95, s[f].mean, s[f].ci95);
    } else {
        snprintf(out->text, sizeof out->text,
                 "No verdict on constant attention: the sweep has no configuration with every head constant%s.",
                 out->informative == AL_VERDICT_YES ? " (the full model is clearly above the embeddings alone)" : "");
    }
}
