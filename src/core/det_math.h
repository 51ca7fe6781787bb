/* det_math.h: log, exp, cos and sin computed by plain double arithmetic, for the few places where a result's
 * bits must not depend on the C library: libm's last bit may differ between the native and the WebAssembly
 * builds, and every build must give the same bits (rotary angles, the lambda logits a training context starts
 * from). Accurate to a few units in the last place; frexp, ldexp and floor (exact everywhere) only. */
#ifndef AL_CORE_DET_MATH_H
#define AL_CORE_DET_MATH_H

/* log(x) for x > 0. */
double al_det_log(double x);
/* exp(x) for x <= 0 (the range it is used in). */
double al_det_exp(double x);
/* cos and sin of a >= 0, for angles below 2^20 pi/2. */
void al_det_cos_sin(double a, double *c, double *s);

#endif
