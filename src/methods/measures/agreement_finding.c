/* agreement_finding.c: the verdicts and the sentence of the head_agreement op (agreement_finding.h,
 * docs/findings.md). */
#include "agreement_finding.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "finding_stats.h"

const char *const al_pair_verdict_names[AL_PV_N] = {"agrees", "other_way", "weakly_alike", "weakly_opposite",
                                                    "not_significant", "no_ranking", "too_few_heads", "lambda_flat"};
const char *const al_overlap_verdict_names[AL_OV_N] = {"more_than_chance", "chance", "not_tested"};
const char *const al_finding_names[AL_FIND_N] = {"compared", "too_few_heads", "lambda_flat"};

typedef struct text {
    char *s;
    size_t cap, len;
} text;

static void put(text *t, const char *fmt, ...) {
    if (t->len + 1 >= t->cap) return;
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (n > 0) t->len += (size_t)n < t->cap - t->len ? (size_t)n : t->cap - t->len - 1;
}

/* "+0.33", "−0.59" (a minus sign, as the docs write it) */
static const char *signed_rho(double r, char *buf, size_t cap) {
    if (r < 0) snprintf(buf, cap, "\u2212%.2f", -r);
    else snprintf(buf, cap, "+%.2f", r);
    return buf;
}

static const char *p_text(double p, char *buf, size_t cap) {
    if (p < 0.001) snprintf(buf, cap, "p < 0.001");
    else if (p < 0.01) snprintf(buf, cap, "p = %.3f", p);
    else snprintf(buf, cap, "p = %.2f", p);
    return buf;
}

static void pair_numbers(text *t, const al_pair_finding *f) {
    char r[16], p[24];
    put(t, " (\u03c1 = %s, %s)", signed_rho(f->rho_importance, r, sizeof r), p_text(f->p_holm, p, sizeof p));
}

/* The other measure of each reference pair, with ", " and a final " and ", each followed by its numbers. */
static void name_list(text *t, const al_agreement_input *in, const al_pair_finding *const *l, int n) {
    for (int i = 0; i < n; i++) {
        put(t, "%s%s", i == 0 ? "" : i == n - 1 ? " and " : ", ", in->m[l[i]->b].words);
        pair_numbers(t, l[i]);
    }
}

static int measure_has_ranking(const al_agreement_input *in, int x, const char **why) {
    if (!in->grid) {
        *why = "it gives every head the same value, or fewer than two heads a value";
        return 0;
    }
    int finite = 0;
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < in->n_heads; i++) {
        const double v = in->grid[(size_t)x * in->n_heads + i];
        if (!isfinite(v)) continue;
        finite++;
        lo = v < lo ? v : lo, hi = v > hi ? v : hi;
    }
    *why = finite < 2 ? "fewer than two heads have a value for it" : "it gives every head the same value";
    return finite >= 2 && hi > lo;
}

/* The pairs among the measures other than the reference that matter: significant after Holm with
 * |rho| >= AL_AGREEMENT_RHO, strongest first. */
static void other_pairs(text *t, const al_agreement_input *in, const al_agreement_findings *o) {
    const al_pair_finding *l[AL_FINDING_MAX_MEASURES * AL_FINDING_MAX_MEASURES / 2];
    int n = 0;
    for (int i = 0; i < o->n_pairs; i++) {
        const al_pair_finding *f = &o->pairs[i];
        if (f->family == 1 && (f->verdict == AL_PV_AGREES || f->verdict == AL_PV_OTHER_WAY)) l[n++] = f;
    }
    for (int i = 1; i < n; i++) /* insertion sort by |rho|, ties in pair order */
        for (int j = i; j > 0 && fabs(l[j]->rho_importance) > fabs(l[j - 1]->rho_importance); j--) {
            const al_pair_finding *s = l[j];
            l[j] = l[j - 1], l[j - 1] = s;
        }
    if (!n) {
        put(t, " No pair of the other measures agrees or disagrees significantly with |\u03c1| \u2265 %.1f.", AL_AGREEMENT_RHO);
        return;
    }
    put(t, " Among the other measures, ");
    for (int i = 0; i < n; i++) {
        put(t, "%s%s and %s %s", i == 0 ? "" : i == n - 1 ? " and " : ", ", in->m[l[i]->a].words, in->m[l[i]->b].words,
            l[i]->verdict == AL_PV_AGREES ? "agree" : "rank heads the other way");
        pair_numbers(t, l[i]);
    }
    put(t, ".");
}

static void method_note(text *t, const al_agreement_input *in, const al_agreement_findings *o) {
    const int M = in->M;
    put(t, " By the rule of docs/findings.md: Spearman \u03c1 over %d heads, read in the direction of importance; two-sided p ",
        in->n_heads);
    if (o->exact) put(t, "from all %.0f orderings", o->orderings);
    else put(t, "from %d,%03d seeded permutations", (int)o->orderings / 1000, (int)o->orderings % 1000);
    put(t, ", Holm-adjusted across the %d measures compared with %s and across the %d other pairs", M - 1, in->m[0].words,
        (M - 1) * (M - 2) / 2);
    if (o->n_overlaps) put(t, "; overlaps against chance by the hypergeometric tail, Holm-adjusted the same way");
    put(t, "; \u03b1 = %.2f.", AL_FINDING_ALPHA);
}

static void reference_clauses(text *t, const al_agreement_input *in, const al_agreement_findings *o) {
    const al_pair_finding *by[AL_PV_N][AL_FINDING_MAX_MEASURES];
    int nb[AL_PV_N] = {0};
    for (int i = 0; i < o->n_pairs; i++)
        if (o->pairs[i].family == 0) by[o->pairs[i].verdict][nb[o->pairs[i].verdict]++] = &o->pairs[i];
    int clauses = 0;
    put(t, "%s ", in->m[0].words);
    if (!nb[AL_PV_AGREES] && !nb[AL_PV_OTHER_WAY]) {
        put(t, "agrees significantly with no other measure on which heads matter (none at |\u03c1| \u2265 %.1f)", AL_AGREEMENT_RHO);
        clauses++;
    }
    if (nb[AL_PV_AGREES]) {
        put(t, "%sagrees with ", clauses++ ? "; it " : "");
        name_list(t, in, by[AL_PV_AGREES], nb[AL_PV_AGREES]);
        put(t, " on which heads matter");
    }
    if (nb[AL_PV_OTHER_WAY]) {
        put(t, "%sranks heads the other way from ", clauses++ ? "; it " : "");
        name_list(t, in, by[AL_PV_OTHER_WAY], nb[AL_PV_OTHER_WAY]);
    }
    if (nb[AL_PV_WEAKLY_ALIKE]) {
        put(t, "; it ranks heads weakly like ");
        name_list(t, in, by[AL_PV_WEAKLY_ALIKE], nb[AL_PV_WEAKLY_ALIKE]);
        put(t, ", significant but below |\u03c1| = %.1f", AL_AGREEMENT_RHO);
    }
    if (nb[AL_PV_WEAKLY_OPPOSITE]) {
        put(t, "; it ranks heads weakly the other way from ");
        name_list(t, in, by[AL_PV_WEAKLY_OPPOSITE], nb[AL_PV_WEAKLY_OPPOSITE]);
        put(t, ", significant but below |\u03c1| = %.1f", AL_AGREEMENT_RHO);
    }
    if (nb[AL_PV_NOT_SIGNIFICANT]) {
        put(t, "; no significant relation to ");
        name_list(t, in, by[AL_PV_NOT_SIGNIFICANT], nb[AL_PV_NOT_SIGNIFICANT]);
    }
    if (nb[AL_PV_NO_RANKING]) {
        const char *why = "";
        if (in->grid && !measure_has_ranking(in, 0, &why)) {
            put(t, "; it cannot be compared with any measure: %s", why);
        } else {
            for (int i = 0; i < nb[AL_PV_NO_RANKING]; i++) {
                measure_has_ranking(in, by[AL_PV_NO_RANKING][i]->b, &why);
                put(t, "; it cannot be compared with %s: %s", in->m[by[AL_PV_NO_RANKING][i]->b].words, why);
            }
        }
    }
    put(t, ".");
    if (!o->n_overlaps) return;
    const al_overlap_finding *more[AL_FINDING_MAX_MEASURES], *most = NULL;
    int nm = 0;
    for (int i = 0; i < o->n_overlaps; i++) {
        const al_overlap_finding *f = &o->overlaps[i];
        if (f->verdict == AL_OV_MORE_THAN_CHANCE) more[nm++] = f;
        if (f->verdict != AL_OV_NOT_TESTED && (!most || f->shared > most->shared)) most = f;
    }
    char p[24];
    if (nm) {
        put(t, " Its %d least important heads share more than chance with ", in->k);
        for (int i = 0; i < nm; i++)
            put(t, "%s%s's (%d of %d, %.1f expected, %s)", i == 0 ? "" : i == nm - 1 ? " and " : ", ", in->m[more[i]->b].words,
                more[i]->shared, in->k, more[i]->expected, p_text(more[i]->p_holm, p, sizeof p));
        put(t, ".");
    } else if (most) {
        put(t, " Its %d least important heads share no more than chance with any other measure's (at most %d, with %s's; "
            "%.1f expected, %s).", in->k, most->shared, in->m[most->b].words, most->expected, p_text(most->p_holm, p, sizeof p));
    }
}

int al_agreement_findings_make(const al_agreement_input *in, al_agreement_findings *o) {
    memset(o, 0, sizeof *o);
    const int M = in->M, n = in->n_heads;
    if (M < 2 || M > AL_FINDING_MAX_MEASURES) return -1;
    al_spearman_null z;
    if (al_spearman_null_build(&z, n)) return -1;
    o->exact = z.exact || n < 2;
    o->orderings = n < 2 ? 1.0 : z.orderings;
    /* the pairs: reference first (family 0), then the others (family 1) */
    double p[2][AL_FINDING_MAX_MEASURES * AL_FINDING_MAX_MEASURES / 2], adj[2][AL_FINDING_MAX_MEASURES * AL_FINDING_MAX_MEASURES / 2];
    int idx[2][AL_FINDING_MAX_MEASURES * AL_FINDING_MAX_MEASURES / 2], np[2] = {0, 0};
    for (int a = 0; a < M; a++)
        for (int b = a + 1; b < M; b++) {
            al_pair_finding *f = &o->pairs[o->n_pairs];
            f->a = a, f->b = b, f->family = a == 0 ? 0 : 1;
            f->rho_importance = in->rho[a * M + b] * in->m[a].importance_sign * in->m[b].importance_sign;
            f->p = al_spearman_null_p(&z, f->rho_importance);
            p[f->family][np[f->family]] = f->p;
            idx[f->family][np[f->family]++] = o->n_pairs++;
        }
    for (int fam = 0; fam < 2; fam++) {
        al_holm(p[fam], np[fam], adj[fam]);
        for (int i = 0; i < np[fam]; i++) o->pairs[idx[fam][i]].p_holm = adj[fam][i];
    }
    /* even a perfect correlation would not survive Holm across the measures compared with the reference */
    const double p_best = al_spearman_null_p(&z, 1.0), m_ref = (double)(M - 1);
    const int too_few = n < 2 || p_best * m_ref >= AL_FINDING_ALPHA;
    double lo = INFINITY, hi = -INFINITY;
    o->lambda_range = in->lambda_range;
    if (in->grid) {
        for (int i = 0; i < n; i++)
            if (isfinite(in->grid[i])) lo = in->grid[i] < lo ? in->grid[i] : lo, hi = in->grid[i] > hi ? in->grid[i] : hi;
        o->lambda_range = hi >= lo ? hi - lo : NAN;
    }
    const int flat = !too_few && isfinite(o->lambda_range) && o->lambda_range < AL_FINDING_LAMBDA_FLOOR;
    o->verdict = too_few ? AL_FIND_TOO_FEW_HEADS : flat ? AL_FIND_LAMBDA_FLAT : AL_FIND_COMPARED;
    for (int i = 0; i < o->n_pairs; i++) {
        al_pair_finding *f = &o->pairs[i];
        const double r = f->rho_importance;
        if (too_few) f->verdict = AL_PV_TOO_FEW_HEADS;
        else if (isnan(r)) f->verdict = AL_PV_NO_RANKING;
        else if (flat && f->family == 0) f->verdict = AL_PV_LAMBDA_FLAT;
        else if (!(f->p_holm < AL_FINDING_ALPHA)) f->verdict = AL_PV_NOT_SIGNIFICANT;
        else if (r >= AL_AGREEMENT_RHO) f->verdict = AL_PV_AGREES;
        else if (r <= -AL_AGREEMENT_RHO) f->verdict = AL_PV_OTHER_WAY;
        else f->verdict = r > 0 ? AL_PV_WEAKLY_ALIKE : AL_PV_WEAKLY_OPPOSITE;
    }
    /* the reference's least important heads against each other measure's: more shared than chance? */
    if (in->overlap && in->k > 0 && in->k < n) {
        double op[AL_FINDING_MAX_MEASURES], oa[AL_FINDING_MAX_MEASURES];
        for (int b = 1; b < M; b++) {
            al_overlap_finding *f = &o->overlaps[o->n_overlaps++];
            f->b = b, f->shared = in->overlap[b];
            f->expected = (double)in->k * in->k / (double)n;
            f->p = al_overlap_p(n, in->k, f->shared);
            op[b - 1] = f->p;
        }
        al_holm(op, M - 1, oa);
        for (int i = 0; i < o->n_overlaps; i++) {
            al_overlap_finding *f = &o->overlaps[i];
            f->p_holm = oa[i];
            f->verdict = too_few || flat ? AL_OV_NOT_TESTED : f->p_holm < AL_FINDING_ALPHA ? AL_OV_MORE_THAN_CHANCE : AL_OV_CHANCE;
        }
    }
    text t = {o->sentence, sizeof o->sentence, 0};
    char pb[24];
    if (too_few && n < 2) {
        put(&t, "With %d head there is nothing to rank: too few heads to tell whether the measures agree on which heads "
            "matter.", n);
    } else if (too_few) {
        put(&t, "With %d heads no rank correlation could be significant (even \u03c1 = \u00b11 has %s, %.2f after Holm "
            "across the %d measures compared with %s): too few heads to tell whether the measures agree on which heads "
            "matter.", n, p_text(p_best, pb, sizeof pb), p_best * m_ref > 1.0 ? 1.0 : p_best * m_ref, M - 1, in->m[0].words);
    } else {
        if (flat) {
            put(&t, "%s did not learn a ranking: its values span %.2g over the heads, below the floor %g, so its "
                "correlations and least important heads are not read; raise %s.", in->m[0].words, o->lambda_range,
                AL_FINDING_LAMBDA_FLOOR, in->raise && in->raise[0] ? in->raise : "the ranking's learning rate or epochs");
        } else {
            reference_clauses(&t, in, o);
        }
        other_pairs(&t, in, o);
        method_note(&t, in, o);
    }
    al_spearman_null_free(&z);
    return 0;
}
