/* det_math.c: log, exp, cos and sin by plain double arithmetic (det_math.h). */
#include <math.h>

#include "det_math.h"

#define LN2 0.693147180559945309417232121458

/* log(x) for x > 0: x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s), s = (m - 1) / (m + 1). */
double al_det_log(double x) {
    int e;
    double m = frexp(x, &e); /* exact: m in [0.5, 1) */
    if (m < 0.70710678118654752440) {
        m *= 2.0;
        e -= 1;
    }
    const double s = (m - 1.0) / (m + 1.0), s2 = s * s;
    double term = s, sum = 0.0;
    for (int k = 0; k < 30; k++) { /* |s| < 0.172: s^61 is far below a double's precision */
        sum += term / (double)(2 * k + 1);
        term *= s2;
    }
    return (double)e * LN2 + 2.0 * sum;
}

/* exp(x) for x <= 0 as used here (exponents of inverse frequencies): x = k ln2 + r, |r| <= ln2 / 2. */
double al_det_exp(double x) {
    /* outside double's range the answer is 0 or infinity, and NaN stays NaN (a mean over no tokens): never a cast of
     * a k that int cannot hold */
    if (isnan(x)) return x;
    if (x < -1100.0) return 0.0;
    if (x > 710.0) return INFINITY;
    const double k = floor(x / LN2 + 0.5);
    const double r = x - k * LN2;
    double term = 1.0, sum = 1.0;
    for (int n = 1; n < 25; n++) {
        term *= r / (double)n;
        sum += term;
    }
    return ldexp(sum, (int)k); /* exact scaling by 2^k */
}

/* cos and sin of a >= 0: a = k pi/2 + r with pi/2 in three parts (Cody-Waite), exact products for the
 * angles of any position a model holds (k < 2^20); then Taylor series on |r| <= pi/4. */
void al_det_cos_sin(double a, double *c, double *s) {
    const double pio2_1 = 1.57079632673412561417e+00, pio2_2 = 6.07710050630396597660e-11,
                 pio2_3 = 2.02226624871116645580e-21;
    const double k = floor(a / 1.57079632679489661923 + 0.5);
    const double r = ((a - k * pio2_1) - k * pio2_2) - k * pio2_3;
    const double r2 = r * r;
    double ct = 1.0, cs = 1.0, st = r, ss = r;
    for (int n = 1; n < 14; n++) {
        ct *= -r2 / (double)((2 * n - 1) * (2 * n));
        cs += ct;
        st *= -r2 / (double)((2 * n) * (2 * n + 1));
        ss += st;
    }
    switch ((long long)k & 3) {
    case 0: *c = cs, *s = ss; break;
    case 1: *c = -ss, *s = cs; break;
    case 2: *c = -cs, *s = -ss; break;
    default: *c = ss, *s = -cs; break;
    }
}
