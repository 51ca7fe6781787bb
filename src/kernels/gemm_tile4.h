/* gemm_tile4.h: the 4-lane path's packed block (gemm.c), written once for a tile of TILE_MR rows x NR (8) columns.
 * gemm.c includes it once per tile height it builds, with TILE_MR and TILE(name) (the name with a suffix for that
 * height) defined: AL_GEMM4_MR rows (6 natively, 5 in WebAssembly) and, in WebAssembly, 4 rows as well (the
 * "wasm-simd128-4x8" path, path.h). No include guard: each inclusion makes its own copy.
 *
 * The height decides which entries of C are computed together, never how: every entry is acc = 0, acc = acc + a*b
 * in k order over the depth block, then c = alpha * acc (+ c), so every height gives the same bits. Which height
 * runs faster depends on the engine that compiles the WebAssembly (docs/kernels.md, "The tile under Chromium"). */

/* The TILE_MR x NR register tile over kc steps: 2 x TILE_MR accumulators, two B vectors and one broadcast.
 * a[i] points at k = 0 of row i of A (step cs per k); bp is one packed panel; the tile goes to C as store_row
 * says. */
static inline __attribute__((always_inline)) void TILE(tile_loop)(int kc, const float *const a[TILE_MR],
                                                                  ptrdiff_t cs, const float *bp, float *C,
                                                                  ptrdiff_t ldc, float alpha, int add) {
    const float *a0 = a[0], *a1 = a[1], *a2 = a[2], *a3 = a[3];
    v4f c00 = v4f_splat(0.0f), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    v4f c30 = c00, c31 = c00;
#if TILE_MR >= 5
    const float *a4 = a[4];
    v4f c40 = c00, c41 = c00;
#endif
#if TILE_MR == 6
    const float *a5 = a[5];
    v4f c50 = c00, c51 = c00;
#endif
    for (int k = 0; k < kc; k++) {
        v4f b0 = v4f_load(bp), b1 = v4f_load(bp + 4);
        ptrdiff_t o = (ptrdiff_t)k * cs;
        v4f x = v4f_splat(a0[o]);
        c00 = v4f_add(c00, v4f_mul(x, b0));
        c01 = v4f_add(c01, v4f_mul(x, b1));
        x = v4f_splat(a1[o]);
        c10 = v4f_add(c10, v4f_mul(x, b0));
        c11 = v4f_add(c11, v4f_mul(x, b1));
        x = v4f_splat(a2[o]);
        c20 = v4f_add(c20, v4f_mul(x, b0));
        c21 = v4f_add(c21, v4f_mul(x, b1));
        x = v4f_splat(a3[o]);
        c30 = v4f_add(c30, v4f_mul(x, b0));
        c31 = v4f_add(c31, v4f_mul(x, b1));
#if TILE_MR >= 5
        x = v4f_splat(a4[o]);
        c40 = v4f_add(c40, v4f_mul(x, b0));
        c41 = v4f_add(c41, v4f_mul(x, b1));
#endif
#if TILE_MR == 6
        x = v4f_splat(a5[o]);
        c50 = v4f_add(c50, v4f_mul(x, b0));
        c51 = v4f_add(c51, v4f_mul(x, b1));
#endif
        bp += NR;
    }
    v4f al = v4f_splat(alpha);
    store_row(C, c00, c01, al, add);
    store_row(C + ldc, c10, c11, al, add);
    store_row(C + 2 * ldc, c20, c21, al, add);
    store_row(C + 3 * ldc, c30, c31, al, add);
#if TILE_MR >= 5
    store_row(C + 4 * ldc, c40, c41, al, add);
#endif
#if TILE_MR == 6
    store_row(C + 5 * ldc, c50, c51, al, add);
#endif
}

/* The tile loop out of line, twice: with A's step a constant 1 (nt and nn, every product of a forward pass:
 * each k step's addresses come without a multiply) and with any step (tn: training's gradients).
 * Under V8 on an Intel Xeon (Sapphire Rapids class) the unit-step copy runs a forward's products at 36 GFLOP/s
 * against 28.5 with the step a variable (docs/kernels.md, "A's step"). Same operations on every entry, so the
 * same bits either way.
 * Kept out of line (noinline for clang, two call sites each for binaryen, which otherwise inlines a
 * one-caller function): V8 has no on-stack replacement for wasm, so a hot loop inlined into a
 * function called once would run in the baseline compiler's code forever. A small function called
 * thousands of times is optimised after its first few calls. */
__attribute__((noinline)) static void TILE(micro_kernel_unit)(int kc, const float *const a[TILE_MR],
                                                              const float *bp, float *C, ptrdiff_t ldc, float alpha,
                                                              int add) {
    TILE(tile_loop)(kc, a, 1, bp, C, ldc, alpha, add);
}

__attribute__((noinline)) static void TILE(micro_kernel_strided)(int kc, const float *const a[TILE_MR],
                                                                 ptrdiff_t cs, const float *bp, float *C,
                                                                 ptrdiff_t ldc, float alpha, int add) {
    TILE(tile_loop)(kc, a, cs, bp, C, ldc, alpha, add);
}

static inline void TILE(micro_kernel)(int kc, const float *const a[TILE_MR], ptrdiff_t cs, const float *bp,
                                      float *C, ptrdiff_t ldc, float alpha, int add) {
    if (cs == 1) TILE(micro_kernel_unit)(kc, a, bp, C, ldc, alpha, add);
    else TILE(micro_kernel_strided)(kc, a, cs, bp, C, ldc, alpha, add);
}

/* One tile of C: full tiles straight into C; edge tiles (mr < TILE_MR or nr < NR) into a stack tile, then
 * the same operation (c = t or c = c + t, t = alpha * acc) entry by entry on the valid part. */
static void TILE(tile_kernel)(int kc, const float *const a[TILE_MR], ptrdiff_t cs, const float *bp, float *C,
                              ptrdiff_t ldc, int mr, int nr, float alpha, int add) {
    if (mr == TILE_MR && nr == NR) {
        TILE(micro_kernel)(kc, a, cs, bp, C, ldc, alpha, add);
        return;
    }
    float tile[TILE_MR * NR];
    TILE(micro_kernel)(kc, a, cs, bp, tile, NR, alpha, 0);
    for (int i = 0; i < mr; i++)
        for (int j = 0; j < nr; j++) {
            float *c = C + i * ldc + j;
            *c = add ? *c + tile[i * NR + j] : tile[i * NR + j];
        }
}

/* One packed KC x NC block of B (bp) against all M rows of A, on the 4-lane path: A points at its
 * depth block's first column, C at the block's first column. */
static void TILE(gemm_block)(int M, int nc, int kc, const float *A, ptrdiff_t a_rs, ptrdiff_t a_cs,
                             const float *bp, float *C, ptrdiff_t ldc, float alpha, int add) {
    for (int ic = 0; ic < M; ic += TILE_MR) {
        int mr = M - ic < TILE_MR ? M - ic : TILE_MR;
        /* Rows past M repeat the last row: read in bounds, never written. */
        const float *a[TILE_MR];
        for (int i = 0; i < TILE_MR; i++) a[i] = A + (ic + (i < mr ? i : mr - 1)) * a_rs;
        for (int jr = 0; jr < nc; jr += NR) {
            int nr = nc - jr < NR ? nc - jr : NR;
            TILE(tile_kernel)(kc, a, a_cs, bp + (size_t)jr * kc, C + ic * ldc + jr, ldc, mr, nr, alpha, add);
        }
    }
}

