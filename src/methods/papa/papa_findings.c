/* papa_findings.c: the two verdicts of a sweep and their sentence (papa_findings.h, docs/papa.md, "What a
 * sweep finds"). A configuration and the full model share each probe seed (the same probe initialisation
 * and example order), so their difference seed by seed is the tighter test: a is "clearly" above b when the
 * paired difference's 95% interval lies above 0, or when the two 95% intervals do not overlap (the gap
 * exceeds the sum of the half-widths, which a reader can check from the table). "No" is one-sided: b
 * clearly above a, or the gap within the wider interval and a at most 5% of the full score above b (the
 * paired interval's top end; without seeds to pair, both intervals that narrow). Few seeds or a tiny
 * validation split give "too little data", never a verdict. */
#include "papa_findings.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../probes/metrics.h"
#include "papa_sweep.h" /* AL_PAPA_MAX_SEEDS */

const char *const al_papa_verdict_codes[AL_N_VERDICTS] = {"yes", "no", "undecided", "too_little_data"};
const char *const al_papa_verdict_words[AL_N_VERDICTS] = {"yes", "no", "undecided", "too little data"};

al_papa_paired al_papa_paired_of(const double *scores, int n_seeds, int a, int b) {
    al_papa_paired p = {0, NAN, NAN};
    if (!scores || a < 0 || b < 0 || n_seeds < 1) return p;
    double *d = malloc(sizeof(double) * (size_t)n_seeds);
    if (!d) return p;
    for (int s = 0; s < n_seeds; s++) {
        const double x = scores[(size_t)a * n_seeds + s], y = scores[(size_t)b * n_seeds + s];
        if (isfinite(x) && isfinite(y)) d[p.n++] = x - y;
    }
    al_seed_summary ss;
    al_error err;
    if (p.n >= 1 && !al_metric_summary(d, p.n, &ss, &err)) {
        p.mean = ss.mean;
        p.ci95 = ss.has_interval ? ss.half_width : NAN;
    }
    free(d);
    return p;
}

static int usable(const al_papa_config_summary *s, int c) { return c >= 0 && s[c].has && isfinite(s[c].ci95); }

/* An interval is narrow when its half-width is at most this share of the full model's score: narrow enough
 * to have seen a difference of that size had there been one. */
#define NARROW 0.05

/* The gap a - b is beyond both intervals: they do not overlap. */
static int apart(const al_papa_config_summary *s, int a, int b) { return s[a].mean - s[b].mean > s[a].ci95 + s[b].ci95; }

/* The gap a - b is beyond the wider of the two intervals: each mean lies outside the other's interval. */
static int beyond_one(const al_papa_config_summary *s, int a, int b) {
    return s[a].mean - s[b].mean > fmax(s[a].ci95, s[b].ci95);
}

static int has_pair(const al_papa_paired *p) { return p->n >= AL_PAPA_MIN_SEEDS && isfinite(p->ci95); }

/* Is a clearly above b? full is the full model's mean, the scale of "narrow". */
static al_papa_verdict clearly_above(const al_papa_config_summary *s, const al_papa_paired *p, int a, int b, double full) {
    if (!usable(s, a) || !usable(s, b)) return AL_VERDICT_TOO_LITTLE_DATA;
    if (apart(s, a, b) || (has_pair(p) && p->mean - p->ci95 > 0)) return AL_VERDICT_YES;
    if (apart(s, b, a) || (has_pair(p) && p->mean + p->ci95 < 0)) return AL_VERDICT_NO;
    /* a gap beyond the wider interval is never "no": the paired interval alone reaches 5% of the score
     * (a 2.4% drop, 0.019 +- 0.021 seed by seed, would pass it) */
    if (beyond_one(s, a, b)) return AL_VERDICT_UNDECIDED;
    if (has_pair(p)) return p->mean + p->ci95 <= NARROW * fabs(full) ? AL_VERDICT_NO : AL_VERDICT_UNDECIDED;
    return s[a].ci95 <= NARROW * fabs(full) && s[b].ci95 <= NARROW * fabs(full) ? AL_VERDICT_NO : AL_VERDICT_UNDECIDED;
}

/* The words of a sentence: a probe's score (higher is better, paired by seed) or a language model's loss (lower is
 * better, paired by document). The rule runs on scores where higher is better; sg turns them back for printing. */
typedef struct words {
    double sg;                   /* 1, or -1 for a loss */
    const char *higher, *lower;  /* a printed score's direction: "higher", "lower" (swapped for a loss) */
    const char *falls;           /* a cost: "falls", "rises" */
    const char *unit, *units;    /* "seed", "document" */
    const char *more;            /* what to add for a verdict */
} words;

static words words_of(const al_papa_findings_input *in) {
    static const words probe = {1.0, "higher", "lower", "falls", "seed", "seeds", "seeds or examples"};
    static const words loss = {-1.0, "lower", "higher", "rises", "document", "documents", "documents of held-out text"};
    return in->lower_is_better ? loss : probe;
}

/* ", per seed 0.0119 \xc2\xb1 0.0053 higher (paired, 15 seeds)": the paired difference a - b, if any. */
static void paired_text(const al_papa_paired *p, const char *who, const words *w, char *out, size_t size) {
    out[0] = 0;
    if (has_pair(p))
        snprintf(out, size, "; %s by %s the %s is %.4f \xc2\xb1 %.4f %s (paired 95%% interval, %d %s)", w->unit,
                 w->unit, who, fabs(p->mean), p->ci95, p->mean >= 0 ? w->higher : w->lower, p->n, w->units);
}

static void too_little(const al_papa_findings_input *in, const al_papa_config_summary *s, int f, char *text, size_t size) {
    if (in->lower_is_better && in->n_validation >= 0 && in->n_validation < AL_PAPA_MIN_VALIDATION)
        snprintf(text, size, "Too little data to tell: the held-out text has %d document%s (a verdict needs at least "
                 "%d).", in->n_validation, in->n_validation == 1 ? "" : "s", AL_PAPA_MIN_VALIDATION);
    else if (in->n_validation >= 0 && in->n_validation < AL_PAPA_MIN_VALIDATION)
        snprintf(text, size, "Too little data to tell: the validation split has %d example%s (a verdict needs at least "
                 "%d, and %d seeds); import or keep more validation examples.", in->n_validation,
                 in->n_validation == 1 ? "" : "s", AL_PAPA_MIN_VALIDATION, AL_PAPA_MIN_SEEDS);
    else if (f < 0)
        snprintf(text, size, "Too little data to tell: this reply has no run of the full model (one shard of a "
                 "sweep? papa_merge joins the shards).");
    else if (!usable(s, f))
        snprintf(text, size, "Too little data to tell: the full model needs at least %d seeds for a 95%% interval.",
                 AL_PAPA_MIN_SEEDS);
    else
        snprintf(text, size, "Too little data to tell: a configuration the verdict compares has fewer than %d seeds.",
                 AL_PAPA_MIN_SEEDS);
}

static void findings_of(const al_papa_findings_input *in, al_papa_findings *out);

void al_papa_findings_of(const al_papa_findings_input *in, al_papa_findings *out) {
    if (in->lower_is_better == 1) { /* the rule on the negated loss, the sentence in the loss's words */
        al_papa_findings_input neg = *in;
        al_papa_config_summary *s = malloc(sizeof *s * (size_t)(in->plan->n_configs ? in->plan->n_configs : 1));
        const size_t n_scores = (size_t)in->plan->n_configs * (in->n_seeds > 0 ? in->n_seeds : 0);
        double *scores = in->scores ? malloc(sizeof(double) * (n_scores ? n_scores : 1)) : NULL;
        if (!s || (in->scores && !scores)) {
            free(s), free(scores);
            out->informative = out->constant_costs = AL_VERDICT_TOO_LITTLE_DATA;
            snprintf(out->text, sizeof out->text, "No verdict: out of memory.");
            return;
        }
        for (int c = 0; c < in->plan->n_configs; c++) s[c] = in->summary[c], s[c].mean = -s[c].mean;
        for (size_t e = 0; scores && e < n_scores; e++) scores[e] = -in->scores[e];
        neg.summary = s;
        neg.scores = scores;
        neg.lower_is_better = 2; /* negated: findings_of below prints in a loss's words */
        al_papa_findings_of(&neg, out);
        /* the pairs back in the loss's units: the full model minus the configuration (negative: a cost) */
        out->full_minus_embeddings.mean = -out->full_minus_embeddings.mean;
        out->full_minus_constant.mean = -out->full_minus_constant.mean;
        free(s), free(scores);
        return;
    }
    findings_of(in, out);
}

static void findings_of(const al_papa_findings_input *in, al_papa_findings *out) {
    const al_papa_plan *plan = in->plan;
    const al_papa_config_summary *s = in->summary;
    const words w = words_of(in);
    const double g = w.sg; /* a printed mean is g * s[c].mean */
    const char *metric = in->metric && in->metric[0] ? in->metric : "score";
    out->full = out->embeddings = out->all_constant = -1;
    for (int c = 0; c < plan->n_configs; c++) {
        const al_papa_config *x = &plan->configs[c];
        if (!s[c].has) continue;
        if (x->what == AL_CFG_SWEEP && x->k == 0 && out->full < 0) out->full = c;
        if (x->what == AL_CFG_EMBEDDINGS_ONLY && out->embeddings < 0) out->embeddings = c;
        if (x->what == AL_CFG_SWEEP && x->k == in->n_heads &&
            (out->all_constant < 0 || (x->constant == AL_CONST_AVERAGE && plan->configs[out->all_constant].constant != AL_CONST_AVERAGE)))
            out->all_constant = c;
    }
    const int f = out->full, e = out->embeddings, a = out->all_constant;
    out->full_minus_embeddings = al_papa_paired_of(in->scores, in->n_seeds, f, e);
    out->full_minus_constant = al_papa_paired_of(in->scores, in->n_seeds, f, a);
    const double full = usable(s, f) ? s[f].mean : NAN;
    const int little = !usable(s, f) || (in->n_validation >= 0 && in->n_validation < AL_PAPA_MIN_VALIDATION);
    out->informative = little ? AL_VERDICT_TOO_LITTLE_DATA
                     : e < 0  ? AL_VERDICT_UNDECIDED
                              : clearly_above(s, &out->full_minus_embeddings, f, e, full);
    out->constant_costs = little ? AL_VERDICT_TOO_LITTLE_DATA
                        : a < 0  ? AL_VERDICT_UNDECIDED
                                 : clearly_above(s, &out->full_minus_constant, f, a, full);
    char pe[160], pa[160];
    paired_text(&out->full_minus_embeddings, "full model", &w, pe, sizeof pe);
    paired_text(&out->full_minus_constant, "full model", &w, pa, sizeof pa);
    const size_t size = sizeof out->text;
    if (little || out->informative == AL_VERDICT_TOO_LITTLE_DATA) {
        too_little(in, s, f, out->text, size);
    } else if (out->informative == AL_VERDICT_NO && s[e].mean > s[f].mean &&
               (apart(s, e, f) || (has_pair(&out->full_minus_embeddings) &&
                                   out->full_minus_embeddings.mean + out->full_minus_embeddings.ci95 < 0))) {
        snprintf(out->text, size,
                 "Not informative on this model: the embeddings alone (%.3f \xc2\xb1 %.3f) beat the full model "
                 "(%.3f \xc2\xb1 %.3f) on %s, %s%s, so its attention has nothing here for constant heads to lose.",
                 s[e].mean, s[e].ci95, s[f].mean, s[f].ci95, metric,
                 apart(s, e, f) ? "beyond both 95% intervals" : "outside the paired 95% interval", pe);
    } else if (out->informative == AL_VERDICT_NO) {
        snprintf(out->text, size,
                 "Not informative on this model: the full model's %s (%.3f \xc2\xb1 %.3f) is no better than the "
                 "embeddings alone (%.3f \xc2\xb1 %.3f)%s, so its attention has nothing here for constant heads to lose.",
                 metric, s[f].mean, s[f].ci95, s[e].mean, s[e].ci95, pe);
    } else if (out->informative == AL_VERDICT_UNDECIDED && e >= 0) {
        snprintf(out->text, size,
                 "Undecided: the 95%% intervals (full model %.3f \xc2\xb1 %.3f, embeddings alone %.3f \xc2\xb1 %.3f%s) "
                 "are too wide to tell whether the layers add anything a probe can use; run more seeds or examples.",
                 s[f].mean, s[f].ci95, s[e].mean, s[e].ci95, pe);
    } else if (out->constant_costs == AL_VERDICT_YES) {
        snprintf(out->text, size,
                 "Input-dependent attention matters here: with every head constant the %s %s from %.3f \xc2\xb1 %.3f "
                 "to %.3f \xc2\xb1 %.3f (%.1f%% %s), %s%s.",
                 metric, w.falls, g * s[f].mean, s[f].ci95, g * s[a].mean, s[a].ci95,
                 100.0 * (s[f].mean - s[a].mean) / fabs(s[f].mean), w.lower,
                 apart(s, f, a) ? "beyond both 95% intervals" : "beyond the paired 95% interval", pa);
    } else if (out->constant_costs == AL_VERDICT_NO && beyond_one(s, a, f)) {
        /* "no cost" holds, but "within the intervals" would not: the constant heads score higher, outside the
         * full model's interval */
        snprintf(out->text, size,
                 "Constant attention costs nothing here: with every head constant the %s is %.3f \xc2\xb1 %.3f, %s "
                 "than the full model's %.3f \xc2\xb1 %.3f (%.1f%%), %s%s%s.",
                 metric, g * s[a].mean, s[a].ci95, w.higher, g * s[f].mean, s[f].ci95,
                 100.0 * (s[a].mean - s[f].mean) / fabs(s[f].mean),
                 apart(s, a, f) ? "beyond both 95% intervals" : "outside each other's 95% intervals but not beyond both", pa,
                 out->informative == AL_VERDICT_YES ? "; the layers beat the embeddings alone" : "");
    } else if (out->constant_costs == AL_VERDICT_NO) {
        snprintf(out->text, size,
                 "Constant attention costs nothing measurable here: with every head constant the %s is %.3f \xc2\xb1 %.3f "
                 "against %.3f \xc2\xb1 %.3f for the full model, within the 95%% intervals%s%s.",
                 metric, g * s[a].mean, s[a].ci95, g * s[f].mean, s[f].ci95, pa,
                 out->informative == AL_VERDICT_YES ? ", though the layers beat the embeddings alone: the average pattern serves as well as the real one" : "");
    } else if (a >= 0 && beyond_one(s, f, a)) {
        snprintf(out->text, size,
                 "Undecided, leaning to a cost: with every head constant the %s is %.3f \xc2\xb1 %.3f against %.3f "
                 "\xc2\xb1 %.3f for the full model (%.1f%% %s), outside each other's 95%% intervals but not beyond "
                 "both%s; run more %s to tell.",
                 metric, g * s[a].mean, s[a].ci95, g * s[f].mean, s[f].ci95,
                 100.0 * (s[f].mean - s[a].mean) / fabs(s[f].mean), w.lower, pa, w.more);
    } else if (a >= 0) {
        snprintf(out->text, size,
                 "Undecided: with every head constant the %s is %.3f \xc2\xb1 %.3f against %.3f \xc2\xb1 %.3f for the full "
                 "model%s; the intervals are too wide to tell whether constant attention costs anything; run more %s.",
                 metric, g * s[a].mean, s[a].ci95, g * s[f].mean, s[f].ci95, pa, w.more);
    } else {
        snprintf(out->text, size,
                 "No verdict on constant attention: the sweep has no configuration with every head constant%s.",
                 out->informative == AL_VERDICT_YES ? " (the full model is clearly above the embeddings alone)" : "");
    }
}
