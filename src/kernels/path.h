/* path.h: which kernel path runs (path.c), and the 8-lane AVX2 entry points it can choose.
 *
 * A build has one 4-lane path fixed at compile time (wasm-simd128, x86-sse or scalar, simd.h). An x86
 * native build also compiles the *_avx2.c files with -mavx2 (never -mfma) and runs them when the CPU
 * has AVX2. Every path does the same IEEE operations per element in the same order (docs/kernels.md),
 * so the choice changes the speed only, never a bit. */
#ifndef AL_KERNELS_PATH_H
#define AL_KERNELS_PATH_H

#include <stddef.h>

#if (defined(__x86_64__) || defined(__i386__)) && defined(__SSE2__) && !defined(__wasm__) && \
    !defined(AL_KERNELS_SCALAR) && (defined(__GNUC__) || defined(__clang__))
#define AL_KERNELS_HAVE_AVX2 1
#else
#define AL_KERNELS_HAVE_AVX2 0
#endif

/* WebAssembly builds carry their GEMM twice, with a 5 x 8 tile ("wasm-simd128", the default) and a 4 x 8 one
 * ("wasm-simd128-4x8"): which is faster depends on the engine compiling the module (docs/kernels.md, "The tile
 * under Chromium"), and the host that knows its engine picks (wasm/worker.mjs). Everything else is shared. */
#if defined(__wasm_simd128__) && !defined(AL_KERNELS_SCALAR)
#define AL_KERNELS_HAVE_4X8 1
#else
#define AL_KERNELS_HAVE_4X8 0
#endif

/* Nonzero when the AVX2 path is the one running. The first call picks the path: AL_KERNELS from the
 * environment if set (a path name, as al_kernels_path prints it), else the best this CPU has. */
int al_kernels_use_avx2(void);
/* Nonzero when the "wasm-simd128-4x8" path is the one running (never without AL_KERNELS_HAVE_4X8). */
int al_kernels_use_4x8(void);

/* A row kernel file (activation.c, softmax.c, layernorm.c) is compiled twice: on its own, where
 * AL_KFN(f) names its 4-lane body f_4 and the public f dispatches (AL_KDISPATCH), and included by its
 * *_avx2.c file with AL_SIMD_AVX2 defined, where the same body becomes f_avx2 on 8 lanes. */
#ifdef AL_SIMD_AVX2
#define AL_KFN(f) f##_avx2
#else
#define AL_KFN(f) f##_4
#endif
#if AL_KERNELS_HAVE_AVX2
#define AL_KDISPATCH(f, args) (al_kernels_use_avx2() ? f##_avx2 args : f##_4 args)
#else
#define AL_KDISPATCH(f, args) (f##_4 args)
#endif

/* The row kernels' 4-lane bodies (kernels.h has their contracts). */
void al_gelu_4(float *x, size_t n);
void al_gelu_tanh_4(float *x, size_t n);
void al_relu_4(float *x, size_t n);
void al_silu_4(float *x, size_t n);
void al_gelu_bwd_4(const float *pre, const float *dy, float *dx, size_t n);
void al_gelu_tanh_bwd_4(const float *pre, const float *dy, float *dx, size_t n);
void al_relu_bwd_4(const float *pre, const float *dy, float *dx, size_t n);
void al_silu_bwd_4(const float *pre, const float *dy, float *dx, size_t n);
void al_softmax_rows_4(float *x, int rows, int cols, int ld);
void al_layernorm_4(const float *x, float *y, int rows, int dim, const float *gamma, const float *beta, float eps);
struct al_adam_rule;
void al_adam_update_4(const struct al_adam_rule *r, float *params, float *m, float *v, const float *grads,
                      const unsigned char *decay, size_t n);

/* gemm_rows.c: C = alpha * A B (+ C) for M <= AL_GEMM_ROWS_MAX rows with B read in place, in the packed driver's
 * strided form (gemm.c); the same bits as the packed driver. */
void al_gemm_rows_4(int M, int N, int K, float alpha, const float *A, ptrdiff_t a_rs, ptrdiff_t a_cs,
                    const float *B, ptrdiff_t b_rs, ptrdiff_t b_cs, float *C, ptrdiff_t ldc, int accumulate);

#if AL_KERNELS_HAVE_AVX2
/* gemm_rows_avx2.c: the same on 8 lanes. */
void al_gemm_rows_avx2(int M, int N, int K, float alpha, const float *A, ptrdiff_t a_rs, ptrdiff_t a_cs,
                       const float *B, ptrdiff_t b_rs, ptrdiff_t b_cs, float *C, ptrdiff_t ldc, int accumulate);
/* gemm_avx2.c: one packed block of B against all M rows of A (gemm_block.h). */
void al_gemm_block_avx2(int M, int nc, int kc, const float *A, ptrdiff_t a_rs, ptrdiff_t a_cs,
                        const float *bp, float *C, ptrdiff_t ldc, float alpha, int add);
/* Their 8-lane bodies. */
void al_gelu_avx2(float *x, size_t n);
void al_gelu_tanh_avx2(float *x, size_t n);
void al_relu_avx2(float *x, size_t n);
void al_silu_avx2(float *x, size_t n);
void al_gelu_bwd_avx2(const float *pre, const float *dy, float *dx, size_t n);
void al_gelu_tanh_bwd_avx2(const float *pre, const float *dy, float *dx, size_t n);
void al_relu_bwd_avx2(const float *pre, const float *dy, float *dx, size_t n);
void al_silu_bwd_avx2(const float *pre, const float *dy, float *dx, size_t n);
void al_softmax_rows_avx2(float *x, int rows, int cols, int ld);
void al_layernorm_avx2(const float *x, float *y, int rows, int dim, const float *gamma, const float *beta,
                       float eps);
void al_adam_update_avx2(const struct al_adam_rule *r, float *params, float *m, float *v, const float *grads,
                         const unsigned char *decay, size_t n);
#endif

#endif
