/* math.c: the scalar portable math functions. Each scalar function is the vector
 * one on lane 0, so scalar tails and vector bodies of a kernel agree to the bit. */
#include "kernels.h"
#include "vmath.h"

float al_expf(float x) { return v4f_lane0(v4f_exp(v4f_splat(x))); }
float al_erff(float x) { return v4f_lane0(v4f_erf(v4f_splat(x))); }
float al_tanhf(float x) { return v4f_lane0(v4f_tanh(v4f_splat(x))); }
