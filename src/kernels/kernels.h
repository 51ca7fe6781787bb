/* kernels.h: the numeric kernels of the encoder. No allocation inside a kernel.
 *
 * Every kernel has one 4-lane implementation per build, chosen at compile time:
 *   - WASM SIMD128 (__wasm_simd128__), multiply-then-add (no FMA in this Emscripten);
 *   - x86 SSE (baseline x86_64), the same operation order as the WASM path so both give the same bits;
 *   - plain C (any other target);
 * and x86 native builds add an 8-lane AVX2 one (multiply then add, no FMA) chosen at run time when
 * the CPU has AVX2 (path.h). Every path gives the same bits (docs/kernels.md).
 * al_ref_* are plain scalar references kept for the tests, never used by the model.
 * Row-major everywhere; ld* are row strides in elements. */
#ifndef AL_KERNELS_H
#define AL_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "../core/threadpool.h"

/* C[M,N] = alpha * A[M,K] . B[N,K]^T (+ C when accumulate). B in nn.Linear layout [out, in]. */
void al_gemm_nt(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float *C, int ldc, int accumulate);
/* C[M,N] = alpha * A[M,K] . B[K,N] (+ C when accumulate). */
void al_gemm_nn(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float *C, int ldc, int accumulate);
/* C[M,N] = alpha * A[K,M]^T . B[K,N] (+ C when accumulate). Weight gradients. */
void al_gemm_tn(int M, int N, int K, float alpha, const float *A, int lda, const float *B, int ldb,
                float *C, int ldc, int accumulate);

/* y[M,N] = x[M,K] . W[N,K]^T + bias[N] (bias may be NULL): nn.Linear. */
void al_linear(int M, int N, int K, const float *x, const float *W, const float *bias, float *y);

/* The same products split over a thread pool by column blocks of C (gemm.c): each entry of C is
 * computed by the same operations whichever thread computes it, so the bits equal the one-thread
 * call's for any pool (docs/threads.md). pool NULL or a small product: the calling thread only. */
void al_gemm_nt_pool(al_threadpool *pool, int M, int N, int K, float alpha, const float *A, int lda,
                     const float *B, int ldb, float *C, int ldc, int accumulate);
void al_gemm_nn_pool(al_threadpool *pool, int M, int N, int K, float alpha, const float *A, int lda,
                     const float *B, int ldb, float *C, int ldc, int accumulate);
void al_gemm_tn_pool(al_threadpool *pool, int M, int N, int K, float alpha, const float *A, int lda,
                     const float *B, int ldb, float *C, int ldc, int accumulate);
void al_linear_pool(al_threadpool *pool, int M, int N, int K, const float *x, const float *W,
                    const float *bias, float *y);

/* Products of at most AL_GEMM_ROWS_MAX rows of A (a generation step) read B in place instead of packing it
 * (gemm_rows.c), with the same bits. al_gemm_set_rows_max lowers that bound (0: always pack; the default is
 * AL_GEMM_ROWS_MAX) for tests and benchmarks comparing the two paths in one process; not while kernels run on other
 * threads. Returns the previous bound. */
#define AL_GEMM_ROWS_MAX 4
int al_gemm_set_rows_max(int max_rows);

/* In-place row softmax over `cols` entries of each of `rows` rows (row stride ld). */
void al_softmax_rows(float *x, int rows, int cols, int ld);

/* y[r,:] = (x[r,:] - mean) / sqrt(var + eps) * gamma + beta, biased variance (as PyTorch). x may == y. */
void al_layernorm(const float *x, float *y, int rows, int dim, const float *gamma, const float *beta,
                  float eps);

/* In-place activations over n values. */
void al_gelu(float *x, size_t n);      /* 0.5 x (1 + erf(x / sqrt 2)) */
void al_gelu_tanh(float *x, size_t n); /* 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
void al_relu(float *x, size_t n);
void al_silu(float *x, size_t n);      /* x / (1 + exp(-x)) */
/* Their backward: dx = dy * f'(pre) over n values (dx may be dy), f' computed in float as written here, left to
 * right, erf, exp and tanh those of vmath.h:
 *   gelu       0.5 (1 + erf(x 0.70710678)) + x (0.39894228 exp(-0.5 x x))
 *   gelu_tanh  0.5 (1 + t) + 0.5 x (1 - t t) c (1 + 3a x x), t = tanh(c (x + a x x x)), c = 0.79788456, a = 0.044715
 *   silu       s (1 + x (1 - s)), s = 1 / (1 + exp(0 - x))
 *   relu       1 where x > 0, else 0 */
void al_gelu_bwd(const float *pre, const float *dy, float *dx, size_t n);
void al_gelu_tanh_bwd(const float *pre, const float *dy, float *dx, size_t n);
void al_relu_bwd(const float *pre, const float *dy, float *dx, size_t n);
void al_silu_bwd(const float *pre, const float *dy, float *dx, size_t n);

/* y[r,:] = x[r,:] / sqrt(mean(x[r,:]^2) + eps) * gamma (RMSNorm as Llama's: the mean of squares in float, then
 * the scale, then the gain). x may == y. */
void al_rmsnorm(const float *x, float *y, int rows, int dim, const float *gamma, float eps);

/* AdamW's rule for parameter i (torch.optim.AdamW's single-tensor update, src/train/adamw.c sets the
 * scalars of one step): p *= decay_factor where decay[i]; m = m beta1 + g (1 - beta1); v = v beta2 +
 * g g (1 - beta2); p -= step_size (m / (sqrt(v) / bc2_sqrt + eps)). Float operations in that order. */
typedef struct al_adam_rule {
    float beta1, beta2, eps, step_size, bc2_sqrt, decay_factor;
} al_adam_rule;
void al_adam_update(const al_adam_rule *r, float *params, float *m, float *v, const float *grads,
                    const uint8_t *decay, size_t n);

/* Portable float math with the same bits on every path (the tests bound their error vs libm). */
float al_expf(float x);
float al_erff(float x);
float al_tanhf(float x);

/* Scalar references (double accumulation where it matters) for the tests. */
void al_ref_gemm_nt(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                    int ldb, float *C, int ldc, int accumulate);
void al_ref_gemm_nn(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                    int ldb, float *C, int ldc, int accumulate);
void al_ref_gemm_tn(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                    int ldb, float *C, int ldc, int accumulate);
void al_ref_softmax_rows(float *x, int rows, int cols, int ld);
void al_ref_layernorm(const float *x, float *y, int rows, int dim, const float *gamma,
                      const float *beta, float eps);
void al_ref_gelu(float *x, size_t n);
void al_ref_gelu_tanh(float *x, size_t n);

/* The kernel path running: "wasm-simd128", "x86-sse" or "scalar" (the build's 4-lane path, simd.h),
 * "x86-avx2" (8 lanes, chosen at run time when the CPU has AVX2, path.h) or "wasm-simd128-4x8" (WebAssembly's
 * GEMM on 4 x 8 tiles, chosen by the host, path.h). All give the same bits. */
const char *al_kernels_path(void);
/* The paths this build can run on this CPU, the build's 4-lane one first: writes up to max names,
 * returns how many there are. */
int al_kernels_paths(const char **names, int max);
/* Switches every later kernel call to the named path (for tests and benchmarks comparing paths in
 * one process; not while kernels run on other threads). -1 when this build or CPU lacks it. */
int al_kernels_set_path(const char *name);

#endif
