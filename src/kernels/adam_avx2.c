/* adam_avx2.c: adam.c on 8 AVX2 lanes (AL_SIMD_AVX2: vf is 8 lanes, simd.h), compiled with -mavx2 and never
 * -mfma, run only when the CPU has AVX2 (path.c). Same operations per element, same bits. */
#define AL_SIMD_AVX2 1
#include "path.h"

#if AL_KERNELS_HAVE_AVX2
#include "adam.c"
#endif
