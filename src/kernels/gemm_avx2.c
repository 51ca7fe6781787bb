/* gemm_avx2.c: the GEMM block of gemm.c on 8 AVX2 lanes (compiled with -mavx2, never -mfma; run only
 * when the CPU has AVX2, path.c).
 *
 * A 6 x 16 tile of C lives in 12 ymm registers; each k step loads 16 packed B values (two of gemm.c's
 * 8-column panels side by side), broadcasts 6 values of A and does 12 multiplies then 12 adds. Every
 * entry gets exactly gemm.c's operations: acc = 0, acc = acc + a*b in k order over the depth block,
 * then c = alpha * acc (+ c), edge tiles through a stack tile. So the bits are the 4-lane path's. */
#include "path.h"

#if AL_KERNELS_HAVE_AVX2
#include <immintrin.h>

#include "gemm_block.h"

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("fp-contract=off")
#endif

#define MR 6
#define NR AL_GEMM_NR /* one packed panel; the tile is two */

static inline void store8(float *c, __m256 acc, __m256 alpha, int add) {
    acc = _mm256_mul_ps(alpha, acc);
    if (add) acc = _mm256_add_ps(_mm256_loadu_ps(c), acc);
    _mm256_storeu_ps(c, acc);
}

/* 6 rows x 16 columns: panels p0 (columns 0-7) and p1 (8-15). Out of line so the compiler keeps the
 * whole tile in registers for this one loop. */
__attribute__((noinline)) static void kernel_6x16(int kc, const float *const a[MR], ptrdiff_t cs,
                                                  const float *p0, const float *p1, float *C, ptrdiff_t ldc,
                                                  float alpha, int add) {
    const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (int k = 0; k < kc; k++) {
        __m256 b0 = _mm256_loadu_ps(p0), b1 = _mm256_loadu_ps(p1);
        ptrdiff_t o = (ptrdiff_t)k * cs;
        __m256 x = _mm256_broadcast_ss(a0 + o);
        c00 = _mm256_add_ps(c00, _mm256_mul_ps(x, b0));
        c01 = _mm256_add_ps(c01, _mm256_mul_ps(x, b1));
        x = _mm256_broadcast_ss(a1 + o);
        c10 = _mm256_add_ps(c10, _mm256_mul_ps(x, b0));
        c11 = _mm256_add_ps(c11, _mm256_mul_ps(x, b1));
        x = _mm256_broadcast_ss(a2 + o);
        c20 = _mm256_add_ps(c20, _mm256_mul_ps(x, b0));
        c21 = _mm256_add_ps(c21, _mm256_mul_ps(x, b1));
        x = _mm256_broadcast_ss(a3 + o);
        c30 = _mm256_add_ps(c30, _mm256_mul_ps(x, b0));
        c31 = _mm256_add_ps(c31, _mm256_mul_ps(x, b1));
        x = _mm256_broadcast_ss(a4 + o);
        c40 = _mm256_add_ps(c40, _mm256_mul_ps(x, b0));
        c41 = _mm256_add_ps(c41, _mm256_mul_ps(x, b1));
        x = _mm256_broadcast_ss(a5 + o);
        c50 = _mm256_add_ps(c50, _mm256_mul_ps(x, b0));
        c51 = _mm256_add_ps(c51, _mm256_mul_ps(x, b1));
        p0 += NR;
        p1 += NR;
    }
    __m256 al = _mm256_set1_ps(alpha);
    store8(C, c00, al, add), store8(C + 8, c01, al, add);
    store8(C + ldc, c10, al, add), store8(C + ldc + 8, c11, al, add);
    store8(C + 2 * ldc, c20, al, add), store8(C + 2 * ldc + 8, c21, al, add);
    store8(C + 3 * ldc, c30, al, add), store8(C + 3 * ldc + 8, c31, al, add);
    store8(C + 4 * ldc, c40, al, add), store8(C + 4 * ldc + 8, c41, al, add);
    store8(C + 5 * ldc, c50, al, add), store8(C + 5 * ldc + 8, c51, al, add);
}

/* 6 rows x 8 columns (one panel): a block's last panel when its column count is not a multiple of 16. */
__attribute__((noinline)) static void kernel_6x8(int kc, const float *const a[MR], ptrdiff_t cs,
                                                 const float *p0, float *C, ptrdiff_t ldc, float alpha,
                                                 int add) {
    const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3], *a4 = a[4], *a5 = a[5];
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
    for (int k = 0; k < kc; k++) {
        __m256 b0 = _mm256_loadu_ps(p0);
        ptrdiff_t o = (ptrdiff_t)k * cs;
        c0 = _mm256_add_ps(c0, _mm256_mul_ps(_mm256_broadcast_ss(a0 + o), b0));
        c1 = _mm256_add_ps(c1, _mm256_mul_ps(_mm256_broadcast_ss(a1 + o), b0));
        c2 = _mm256_add_ps(c2, _mm256_mul_ps(_mm256_broadcast_ss(a2 + o), b0));
        c3 = _mm256_add_ps(c3, _mm256_mul_ps(_mm256_broadcast_ss(a3 + o), b0));
        c4 = _mm256_add_ps(c4, _mm256_mul_ps(_mm256_broadcast_ss(a4 + o), b0));
        c5 = _mm256_add_ps(c5, _mm256_mul_ps(_mm256_broadcast_ss(a5 + o), b0));
        p0 += NR;
    }
    __m256 al = _mm256_set1_ps(alpha);
    store8(C, c0, al, add);
    store8(C + ldc, c1, al, add);
    store8(C + 2 * ldc, c2, al, add);
    store8(C + 3 * ldc, c3, al, add);
    store8(C + 4 * ldc, c4, al, add);
    store8(C + 5 * ldc, c5, al, add);
}

void al_gemm_block_avx2(int M, int nc, int kc, const float *A, ptrdiff_t a_rs, ptrdiff_t a_cs,
                        const float *bp, float *C, ptrdiff_t ldc, float alpha, int add) {
    for (int ic = 0; ic < M; ic += MR) {
        int mr = M - ic < MR ? M - ic : MR;
        /* Rows past M repeat the last row: read in bounds, never written. */
        const float *a[MR];
        for (int i = 0; i < MR; i++) a[i] = A + (ic + (i < mr ? i : mr - 1)) * a_rs;
        float *c_rows = C + ic * ldc;
        for (int jr = 0; jr < nc; jr += 2 * NR) {
            int nr = nc - jr < 2 * NR ? nc - jr : 2 * NR;
            const float *p0 = bp + (size_t)jr * kc;
            float *c = c_rows + jr;
            if (mr == MR && nr == 2 * NR) {
                kernel_6x16(kc, a, a_cs, p0, p0 + (size_t)NR * kc, c, ldc, alpha, add);
                continue;
            }
            if (mr == MR && nr == NR) {
                kernel_6x8(kc, a, a_cs, p0, c, ldc, alpha, add);
                continue;
            }
            /* Edge tile: t = alpha * acc on the stack, then c = t or c = c + t on the valid part. */
            float tile[MR * 2 * NR];
            if (nr > NR)
                kernel_6x16(kc, a, a_cs, p0, p0 + (size_t)NR * kc, tile, 2 * NR, alpha, 0);
            else
                kernel_6x8(kc, a, a_cs, p0, tile, 2 * NR, alpha, 0);
            for (int i = 0; i < mr; i++)
                for (int j = 0; j < nr; j++) {
                    float *ci = c + i * ldc + j;
                    *ci = add ? *ci + tile[i * 2 * NR + j] : tile[i * 2 * NR + j];
                }
        }
    }
}
#endif
