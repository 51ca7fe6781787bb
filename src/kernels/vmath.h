/* vmath.h: exp, erf and tanh on the lanes of a vf (4, or 8 in the AVX2 files), written once over simd.h.
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
static inline vf vf_exp(vf x) {
    const vf magic = vf_splat(12582912.0f); /* 1.5 * 2^23: adding it rounds to an integer */
    vf xc = vf_min(vf_max(x, vf_splat(-104.0f)), vf_splat(89.0f));
    vf t = vf_add(vf_mul(xc, vf_splat(1.44269504088896341f)), magic);
    vf n = vf_sub(t, magic);
    vi ni = vi_sub(vf_bits(t), vf_bits(magic));
    /* r = x - n ln2 in two pieces (Cody-Waite): n * 0.693359375 is exact for |n| < 2^15. */
    vf r = vf_sub(vf_sub(xc, vf_mul(n, vf_splat(0.693359375f))),
                    vf_mul(n, vf_splat(-2.12194440e-4f)));
    vf z = vf_mul(r, r);
    vf p = vf_splat(1.9875691500e-4f);
    p = vf_add(vf_mul(p, r), vf_splat(1.3981999507e-3f));
    p = vf_add(vf_mul(p, r), vf_splat(8.3334519073e-3f));
    p = vf_add(vf_mul(p, r), vf_splat(4.1665795894e-2f));
    p = vf_add(vf_mul(p, r), vf_splat(1.6666665459e-1f));
    p = vf_add(vf_mul(p, r), vf_splat(5.0000001201e-1f));
    vf y = vf_add(vf_add(vf_mul(p, z), r), vf_splat(1.0f));
    vi n1 = vi_sra(ni, 1);
    vi n2 = vi_sub(ni, n1);
    vf s1 = vi_as_float(vi_shl(vi_add(n1, vi_splat(127)), 23));
    vf s2 = vi_as_float(vi_shl(vi_add(n2, vi_splat(127)), 23));
    y = vf_mul(vf_mul(y, s1), s2);
    return vf_select(vf_isnan(x), x, y);
}

/* erf(x). |x| < 0.875: x P(x^2); otherwise 1 - exp(Q(|x|)) with Q fitted to log erfc on
 * [0.875, 4] (erf rounds to 1 beyond 4, so |x| is clamped there). Odd symmetry via the sign bit. */
static inline vf vf_erf(vf x) {
    vf sign = vf_and(x, vf_splat(-0.0f));
    vf a = vf_xor(x, sign);
    vf z = vf_mul(a, a);
    vf p = vf_splat(7.900815e-05f);
    p = vf_add(vf_mul(p, z), vf_splat(-8.022823e-04f));
    p = vf_add(vf_mul(p, z), vf_splat(5.1895506e-03f));
    p = vf_add(vf_mul(p, z), vf_splat(-2.685431e-02f));
    p = vf_add(vf_mul(p, z), vf_splat(1.1283592e-01f));
    p = vf_add(vf_mul(p, z), vf_splat(-3.7612626e-01f));
    p = vf_add(vf_mul(p, z), vf_splat(1.1283791f));
    vf small = vf_mul(a, p);
    /* Every lane below the cut (NaN is not): the other branch would be computed and then not chosen, so it
     * is not computed (the same bits; a GELU's inputs are mostly here, docs/kernels.md). */
    vf is_small = vf_lt(a, vf_splat(0.875f));
    if (vf_all(is_small)) return vf_or(small, sign);
    vf t = vf_min(a, vf_splat(4.0f));
    vf q = vf_splat(2.0680066e-08f);
    q = vf_add(vf_mul(q, t), vf_splat(1.1680231e-06f));
    q = vf_add(vf_mul(q, t), vf_splat(-4.1418436e-05f));
    q = vf_add(vf_mul(q, t), vf_splat(5.7058886e-04f));
    q = vf_add(vf_mul(q, t), vf_splat(-4.666468e-03f));
    q = vf_add(vf_mul(q, t), vf_splat(2.6205849e-02f));
    q = vf_add(vf_mul(q, t), vf_splat(-1.097568e-01f));
    q = vf_add(vf_mul(q, t), vf_splat(-6.3212955e-01f));
    q = vf_add(vf_mul(q, t), vf_splat(-1.1300721f));
    q = vf_add(vf_mul(q, t), vf_splat(2.831755e-04f));
    vf large = vf_sub(vf_splat(1.0f), vf_exp(q));
    vf r = vf_select(is_small, small, large);
    r = vf_or(r, sign);
    return vf_select(vf_isnan(x), x, r);
}

/* tanh(x). |x| < 0.625: x + x^3 P(x^2); otherwise 1 - 2 / (e^{2|x|} + 1) (exact limit 1 at +inf). */
static inline vf vf_tanh(vf x) {
    vf sign = vf_and(x, vf_splat(-0.0f));
    vf a = vf_xor(x, sign);
    vf z = vf_mul(a, a);
    vf p = vf_splat(-5.70498872745e-3f);
    p = vf_add(vf_mul(p, z), vf_splat(2.06390887954e-2f));
    p = vf_add(vf_mul(p, z), vf_splat(-5.37397155531e-2f));
    p = vf_add(vf_mul(p, z), vf_splat(1.33314422036e-1f));
    p = vf_add(vf_mul(p, z), vf_splat(-3.33332819422e-1f));
    vf small = vf_add(vf_mul(vf_mul(p, z), a), a);
    vf is_small = vf_lt(a, vf_splat(0.625f));
    if (vf_all(is_small)) return vf_or(small, sign); /* as in vf_erf */
    vf e = vf_exp(vf_add(a, a));
    vf large = vf_sub(vf_splat(1.0f), vf_div(vf_splat(2.0f), vf_add(e, vf_splat(1.0f))));
    vf r = vf_select(is_small, small, large);
    r = vf_or(r, sign);
    return vf_select(vf_isnan(x), x, r);
}

#endif
