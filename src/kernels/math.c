/* math.c: the scalar portable math functions. Each scalar function is the vector
 * one on lane 0, so scalar tails and vector bodies of a kernel agree to the bit. */
#include "kernels.h"
#include "vmath.h"

float al_expf(float x) { return vf_lane0(vf_exp(vf_splat(x))); }
float al_erff(float x) { return vf_lane0(vf_erf(vf_splat(x))); }
float al_tanhf(float x) { return vf_lane0(vf_tanh(vf_splat(x))); }
