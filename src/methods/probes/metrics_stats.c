/* metrics_stats.c: summary over seeds (mean, sample standard deviation, 95% Student-t half-width) and the
 * relative drop from a reference (docs/probes.md, "Summary over seeds"). The t quantile is computed, not
 * tabulated: bisection on the CDF, which is a regularised incomplete beta function evaluated by its
 * continued fraction (modified Lentz). */
#include <math.h>

#include "../../core/error.h"
#include "metrics.h"

/* Continued fraction of I_x(a, b), valid (fast) for x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, double x) {
    const double tiny = 1e-300;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
    if (fabs(d) < tiny) d = tiny;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m <= 1000; m++) {
        const double m2 = 2.0 * m;
        /* even step: m (b - m) x / ((a + 2m - 1)(a + 2m)) */
        double aa = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 + aa * d;
        if (fabs(d) < tiny) d = tiny;
        c = 1.0 + aa / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        h *= d * c;
        /* odd step: -(a + m)(a + b + m) x / ((a + 2m)(a + 2m + 1)) */
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + aa * d;
        if (fabs(d) < tiny) d = tiny;
        c = 1.0 + aa / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1.0 / d;
        const double step = d * c;
        h *= step;
        if (fabs(step - 1.0) < 1e-15) break;
    }
    return h;
}

/* Regularised incomplete beta I_x(a, b), a, b > 0, x in [0, 1]. */
static double inc_beta(double a, double b, double x) {
    if (x <= 0.0) return 0.0;
    if (x >= 1.0) return 1.0;
    const double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1.0) / (a + b + 2.0)) return front * beta_cf(a, b, x) / a;
    return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

double al_student_t_cdf(double x, double dof) {
    if (!(dof > 0.0) || isnan(x)) return NAN;
    if (isinf(x)) return x > 0 ? 1.0 : 0.0;
    /* P(|T| > |x|) = I_{dof / (dof + x^2)}(dof / 2, 1/2) */
    const double tail = 0.5 * inc_beta(0.5 * dof, 0.5, dof / (dof + x * x));
    return x >= 0.0 ? 1.0 - tail : tail;
}

double al_student_t_quantile(double p, double dof) {
    if (!(p > 0.0 && p < 1.0) || !(dof > 0.0) || isinf(dof)) return NAN;
    if (p < 0.5) return -al_student_t_quantile(1.0 - p, dof);
    if (p == 0.5) return 0.0;
    double lo = 0.0, hi = 1.0;
    while (al_student_t_cdf(hi, dof) < p && hi < 1e300) hi *= 2.0;
    for (int it = 0; it < 2000 && hi - lo > 1e-15 * hi; it++) {
        const double mid = 0.5 * (lo + hi);
        if (al_student_t_cdf(mid, dof) < p) lo = mid;
        else hi = mid;
    }
    return 0.5 * (lo + hi);
}

al_status al_metric_summary(const double *values, int n, al_seed_summary *out, al_error *err) {
    if (!values || !out) return al_err(err, AL_ERR_INVALID, "seed summary: values or out is NULL");
    if (n < 1) return al_err(err, AL_ERR_INVALID, "seed summary: n = %d, need at least one value", n);
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(values[i]))
            return al_err(err, AL_ERR_INVALID, "seed summary: value %d is %g", i, values[i]);
        sum += values[i];
    }
    const double mean = sum / n;
    double ss = 0.0;
    for (int i = 0; i < n; i++) ss += (values[i] - mean) * (values[i] - mean);
    out->n = n;
    out->mean = mean;
    out->sd = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
    out->has_interval = n > 1;
    out->half_width = n > 1 ? al_student_t_quantile(0.975, n - 1.0) * out->sd / sqrt((double)n) : 0.0;
    return AL_OK;
}

al_status al_metric_relative_drop(double ref, double x, double *out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "relative drop: out is NULL");
    if (!isfinite(ref) || ref == 0.0 || !isfinite(x))
        return al_err(err, AL_ERR_INVALID, "relative drop: reference %g and value %g (the reference must be finite and "
                      "nonzero)", ref, x);
    *out = (ref - x) / fabs(ref);
    return AL_OK;
}
