/* role_finding.c: which heads have a role (head_roles.h), by the rule of docs/findings.md ("Head roles"): each
 * unit's score against its own chance, a one-sided exact sign test over the units (the independent repeats or
 * texts), Holm across the heads of the role, alpha 0.05, and the effect: the score at least twice its chance. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../measures/finding_stats.h"
#include "head_roles.h"

/* The fewest units with which the smallest Holm-adjusted p, n_heads * 2^-U (every unit above its chance), is below
 * alpha. */
static int fewest_units(int n_heads) {
    int U = 0;
    for (double p = 1.0; (double)n_heads * p >= AL_FINDING_ALPHA && U < 4096; U++) p *= 0.5;
    return U;
}

al_status al_role_finding_make(const double *score, const double *chance, int U, int n_heads, size_t stride,
                               al_role_finding *out, al_error *err) {
    memset(out, 0, sizeof *out);
    const size_t n = (size_t)(n_heads > 0 ? n_heads : 1);
    out->n_heads = n_heads;
    out->score = calloc(n, sizeof(double)), out->chance = calloc(n, sizeof(double));
    out->effect = calloc(n, sizeof(double)), out->ratio = calloc(n, sizeof(double));
    out->p = calloc(n, sizeof(double)), out->p_holm = calloc(n, sizeof(double));
    out->above = calloc(n, sizeof(int)), out->below = calloc(n, sizeof(int));
    out->has_role = calloc(n, sizeof(int)), out->weak = calloc(n, sizeof(int));
    if (!out->score || !out->chance || !out->effect || !out->ratio || !out->p || !out->p_holm || !out->above ||
        !out->below || !out->has_role || !out->weak) {
        al_role_finding_free(out);
        return al_err(err, AL_ERR_OOM, "head_roles: out of memory for %d heads", n_heads);
    }
    for (int k = 0; k < n_heads; k++) {
        double s = 0.0, c = 0.0;
        int units = 0;
        for (int u = 0; u < U; u++) {
            const double su = score[(size_t)u * stride + k], cu = chance[(size_t)u * stride + k];
            if (isnan(su) || isnan(cu)) continue;
            s += su, c += cu, units++;
            out->above[k] += su > cu;
            out->below[k] += su < cu;
        }
        if (units > out->units) out->units = units; /* every head of a role has the same units */
        out->score[k] = units ? s / units : NAN;
        out->chance[k] = units ? c / units : NAN;
        out->effect[k] = units ? (s - c) / units : NAN;
        out->ratio[k] = units && c > 0.0 ? s / c : NAN;
        out->p[k] = units ? al_sign_test_p(out->above[k] + out->below[k], out->above[k]) : NAN;
    }
    al_holm(out->p, n_heads, out->p_holm);
    out->min_units = fewest_units(n_heads);
    for (int k = 0; k < n_heads; k++) {
        const int significant = out->p_holm[k] < AL_FINDING_ALPHA; /* NAN compares false */
        out->has_role[k] = significant && out->ratio[k] >= AL_ROLE_MIN_RATIO;
        out->weak[k] = significant && !out->has_role[k];
        out->n_found += out->has_role[k];
        out->n_weak += out->weak[k];
    }
    out->verdict = out->units < out->min_units ? "too_few_units" : out->n_found ? "found" : out->n_weak ? "weak_only"
                                                                                                      : "none";
    return AL_OK;
}

void al_role_finding_free(al_role_finding *f) {
    free(f->score), free(f->chance), free(f->effect), free(f->ratio), free(f->p), free(f->p_holm);
    free(f->above), free(f->below), free(f->has_role), free(f->weak);
    memset(f, 0, sizeof *f);
}
