/* vmath.h: exp, erf and tanh on 4 float lanes, written once over simd.h.
 *
 * The scalar al_expf/al_erff/al_tanhf run these same functions on lane 0, so a value computed in a
 * vector loop and one computed in a scalar tail are the same bits, on every path.
 * Method: range reduction + polynomial, multiply-then-add (no FMA); the polynomial coefficients of
 * exp and tanh are the classic minimax ones (Cephes single precision), those of erf were fitted for
 * attnlab (near-minimax, least squares with iterative reweighting, in double) on the stated ranges. */
#ifndef AL_KERNELS_VMATH_H
#define AL_KERNELS_VMATH_H

#include "simd.h"

/* e^x. Inputs are clamped to [-104, 89] first: below, the result rounds to 0 (so a -10000 attention
 * mask gives exactly 0); above, it overflows to +inf. NaN is returned unchanged. The result is
 * p(r) * 2^n1 * 2^n2 with n1 + n2 = n, so subnormal results come out right too. */
static inline v4f v4f_exp(v4f x) {
    const v4f magic = v4f_splat(12582912.0f); /* 1.5 * 2^23: adding it rounds to an integer */
    v4f xc = v4f_min(v4f_max(x, v4f_splat(-104.0f)), v4f_splat(89.0f));
    v4f t = v4f_add(v4f_mul(xc, v4f_splat(1.44269504088896341f)), magic);
    v4f n = v4f_sub(t, magic);
    v4i ni = v4i_sub(v4f_bits(t), v4f_bits(magic));
    /* r = x - n ln2 in two pieces (Cody-Waite): n * 0.693359375 is exact for |n| < 2^15. */
    v4f r = v4f_sub(v4f_sub(xc, v4f_mul(n, v4f_splat(0.693359375f))),
                    v4f_mul(n, v4f_splat(-2.12194440e-4f)));
    v4f z = v4f_mul(r, r);
    v4f p = v4f_splat(1.9875691500e-4f);
    p = v4f_add(v4f_mul(p, r), v4f_splat(1.3981999507e-3f));
    p = v4f_add(v4f_mul(p, r), v4f_splat(8.3334519073e-3f));
    p = v4f_add(v4f_mul(p, r), v4f_splat(4.1665795894e-2f));
    p = v4f_add(v4f_mul(p, r), v4f_splat(1.6666665459e-1f));
    p = v4f_add(v4f_mul(p, r), v4f_splat(5.0000001201e-1f));
    v4f y = v4f_add(v4f_add(v4f_mul(p, z), r), v4f_splat(1.0f));
    v4i n1 = v4i_sra(ni, 1);
    v4i n2 = v4i_sub(ni, n1);
    v4f s1 = v4i_as_float(v4i_shl(v4i_add(n1, v4i_splat(127)), 23));
    v4f s2 = v4i_as_float(v4i_shl(v4i_add(n2, v4i_splat(127)), 23));
    y = v4f_mul(v4f_mul(y, s1), s2);
    return v4f_select(v4f_isnan(x), x, y);
}

/* erf(x). |x| < 0.875: x P(x^2); otherwise 1 - exp(Q(|x|)) with Q fitted to log erfc on
 * [0.875, 4] (erf rounds to 1 beyond 4, so |x| is clamped there). Odd symmetry via the sign bit. */
static inline v4f v4f_erf(v4f x) {
    v4f sign = v4f_and(x, v4f_splat(-0.0f));
    v4f a = v4f_xor(x, sign);
    v4f z = v4f_mul(a, a);
    v4f p = v4f_splat(7.900815e-05f);
    p = v4f_add(v4f_mul(p, z), v4f_splat(-8.022823e-04f));
    p = v4f_add(v4f_mul(p, z), v4f_splat(5.1895506e-03f));
    p = v4f_add(v4f_mul(p, z), v4f_splat(-2.685431e-02f));
    p = v4f_add(v4f_mul(p, z), v4f_splat(1.1283592e-01f));
    p = v4f_add(v4f_mul(p, z), v4f_splat(-3.7612626e-01f));
    p = v4f_add(v4f_mul(p, z), v4f_splat(1.1283791f));
    v4f small = v4f_mul(a, p);
    v4f t = v4f_min(a, v4f_splat(4.0f));
    v4f q = v4f_splat(2.0680066e-08f);
    q = v4f_add(v4f_mul(q, t), v4f_splat(1.1680231e-06f));
    q = v4f_add(v4f_mul(q, t), v4f_splat(-4.1418436e-05f));
    q = v4f_add(v4f_mul(q, t), v4f_splat(5.7058886e-04f));
    q = v4f_add(v4f_mul(q, t), v4f_splat(-4.666468e-03f));
    q = v4f_add(v4f_mul(q, t), v4f_splat(2.6205849e-02f));
    q = v4f_add(v4f_mul(q, t), v4f_splat(-1.097568e-01f));
    q = v4f_add(v4f_mul(q, t), v4f_splat(-6.3212955e-01f));
    q = v4f_add(v4f_mul(q, t), v4f_splat(-1.1300721f));
    q = v4f_add(v4f_mul(q, t), v4f_splat(2.831755e-04f));
    v4f large = v4f_sub(v4f_splat(1.0f), v4f_exp(q));
    v4f r = v4f_select(v4f_lt(a, v4f_splat(0.875f)), small, large);
    r = v4f_or(r, sign);
    return v4f_select(v4f_isnan(x), x, r);
}

/* tanh(x). |x| < 0.625: x + x^3 P(x^2); otherwise 1 - 2 / (e^{2|x|} + 1) (exact limit 1 at +inf). */
static inline v4f v4f_tanh(v4f x) {
    v4f sign = v4f_and(x, v4f_splat(-0.0f));
    v4f a = v4f_xor(x, sign);
    v4f z = v4f_mul(a, a);
    v4f p = v4f_splat(-5.70498872745e-3f);
    p = v4f_add(v4f_mul(p, z), v4f_splat(2.06390887954e-2f));
    p = v4f_add(v4f_mul(p, z), v4f_splat(-5.37397155531e-2f));
    p = v4f_add(v4f_mul(p, z), v4f_splat(1.33314422036e-1f));
    p = v4f_add(v4f_mul(p, z), v4f_splat(-3.33332819422e-1f));
    v4f small = v4f_add(v4f_mul(v4f_mul(p, z), a), a);
    v4f e = v4f_exp(v4f_add(a, a));
    v4f large = v4f_sub(v4f_splat(1.0f), v4f_div(v4f_splat(2.0f), v4f_add(e, v4f_splat(1.0f))));
    v4f r = v4f_select(v4f_lt(a, v4f_splat(0.625f)), small, large);
    r = v4f_or(r, sign);
    return v4f_select(v4f_isnan(x), x, r);
}

#endif
