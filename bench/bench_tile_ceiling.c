/* bench_tile_ceiling.c: how fast can this core run the WebAssembly GEMM tile's k step at all? (docs/kernels.md,
 * "The ceiling on Zen 3"). V8 compiles the 5 x 8 tile's k step (src/kernels/gemm.c, tile_loop) to 2 loads of B,
 * 5 vbroadcastss from A, 10 vmulps and 10 vaddps on xmm registers; this program times that step written in x86
 * assembly, and the same arithmetic with parts added or taken away, side by side in one run:
 *
 *   arithmetic     10 multiplies and 10 adds on registers alone (the multiply and add pipes' own limit)
 *   + int loads    the same and 7 loads into general registers
 *   + vec loads    the same and 7 loads into xmm registers (as many loads as the tile's step has)
 *   + vec moves    the same and 7 register moves and logic ops on xmm registers
 *   tile step      the step as V8 emits it (2 loads of B, 5 broadcasts from memory)
 *   tile, no bcast the step with A already broadcast in memory (5 plain vector loads instead of vbroadcastss)
 *
 * Cycles come from a loop of dependent integer adds (one add a cycle on the cores this project runs on) read before
 * and after each variant, so they hold while a VM's clock moves. Printed per variant: the median cycles per k step
 * over the rounds, flops a cycle (80 per step) and the ratio to the arithmetic alone. x86-64 with GCC or clang only.
 *
 *   bench_tile_ceiling [--rounds R] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/clock.h"
#include "bench_args.h"

#if defined(__x86_64__) && defined(__GNUC__)

/* G dependent adds a second: best of 5 runs of 2e7. */
static double clock_ghz(void) {
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        long n = 20000000, x = 0;
        const double t = al_now_seconds();
        __asm__ volatile("1: add $1, %0\n\t sub $1, %1\n\t jnz 1b" : "+r"(x), "+r"(n));
        const double dt = al_now_seconds() - t;
        if (dt < best) best = dt;
    }
    return 2e7 / best / 1e9;
}

/* A (5 floats a step, or 5 x 4 already broadcast) and B (8 floats a step) for STEPS steps, reused. */
enum { STEPS = 256 };
static float a_buf[STEPS * 5 * 4] __attribute__((aligned(64)));
static float b_buf[STEPS * 8] __attribute__((aligned(64)));

#define MA(acc, tmp) "vmulps %%xmm10, %%xmm11, " tmp "\n\tvaddps " tmp ", " acc ", " acc "\n\t"
#define ARITH                                                                                                   \
    MA("%%xmm0", "%%xmm12") MA("%%xmm1", "%%xmm13") MA("%%xmm2", "%%xmm12") MA("%%xmm3", "%%xmm13")            \
    MA("%%xmm4", "%%xmm12") MA("%%xmm5", "%%xmm13") MA("%%xmm6", "%%xmm12") MA("%%xmm7", "%%xmm13")            \
    MA("%%xmm8", "%%xmm12") MA("%%xmm9", "%%xmm13")
#define INT_LOADS                                                                                               \
    "mov (%1), %%r8\n\tmov 8(%1), %%r9\n\tmov 16(%1), %%r10\n\tmov 24(%1), %%r11\n\t"                           \
    "mov 32(%1), %%r8\n\tmov 40(%1), %%r9\n\tmov 48(%1), %%r10\n\t"
#define VEC_LOADS                                                                                               \
    "vmovups (%1), %%xmm14\n\tvmovups 16(%1), %%xmm15\n\tvmovups 32(%1), %%xmm14\n\tvmovups 48(%1), %%xmm15\n\t" \
    "vmovups 64(%1), %%xmm14\n\tvmovups 80(%1), %%xmm15\n\tvmovups 96(%1), %%xmm14\n\t"
#define VEC_MOVES                                                                                               \
    "vmovaps %%xmm10, %%xmm14\n\tvmovaps %%xmm11, %%xmm15\n\tvpor %%xmm10, %%xmm11, %%xmm14\n\t"                 \
    "vpand %%xmm10, %%xmm11, %%xmm15\n\tvpor %%xmm11, %%xmm10, %%xmm14\n\tvpand %%xmm11, %%xmm10, %%xmm15\n\t"   \
    "vpxor %%xmm10, %%xmm11, %%xmm14\n\t"
/* one row of the tile: a broadcast (or a loaded vector) of A against B's two vectors */
#define ROW(a_op, off, acc0, acc1)                                                                              \
    a_op " " off "(%1), %%xmm11\n\tvmulps %%xmm10, %%xmm11, %%xmm13\n\tvaddps %%xmm13, " acc0 ", " acc0 "\n\t"    \
    "vmulps %%xmm12, %%xmm11, %%xmm11\n\tvaddps %%xmm11, " acc1 ", " acc1 "\n\t"
#define TILE(a_op, s)                                                                                           \
    "vmovups (%2), %%xmm10\n\tvmovups 16(%2), %%xmm12\n\t" ROW(a_op, "0", "%%xmm0", "%%xmm1")                    \
    ROW(a_op, #s, "%%xmm2", "%%xmm3") ROW(a_op, "2*" #s, "%%xmm4", "%%xmm5")                                     \
    ROW(a_op, "3*" #s, "%%xmm6", "%%xmm7") ROW(a_op, "4*" #s, "%%xmm8", "%%xmm9")

#define CLOBBERS                                                                                                \
    "r8", "r9", "r10", "r11", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",  \
        "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "memory"
/* STEPS k steps; the tile variants walk A and B as the kernel does */
#define STEP_LOOP(body, a_step)                                                                                 \
    do {                                                                                                        \
        long k = STEPS;                                                                                         \
        const float *a = a_buf, *b = b_buf;                                                                     \
        __asm__ volatile("1:\n\t" body "add $" #a_step ", %1\n\tadd $32, %2\n\tsub $1, %0\n\tjnz 1b"             \
                         : "+r"(k), "+r"(a), "+r"(b)                                                            \
                         :                                                                                      \
                         : CLOBBERS);                                                                           \
    } while (0)

enum { N_VARIANTS = 6, REPS = 40000 };
static const char *const names[N_VARIANTS] = {"arithmetic", "+ 7 int loads", "+ 7 vec loads", "+ 7 vec moves",
                                              "tile step", "tile, no bcast"};

/* Seconds for REPS x STEPS steps of variant v. A's pointer steps back after every STEPS (the buffers stay in L1). */
static double time_variant(int v) {
    const double t = al_now_seconds();
    for (int rep = 0; rep < REPS; rep++) {
        switch (v) {
        case 0: STEP_LOOP(ARITH, 0); break;
        case 1: STEP_LOOP(ARITH INT_LOADS, 0); break;
        case 2: STEP_LOOP(ARITH VEC_LOADS, 0); break;
        case 3: STEP_LOOP(ARITH VEC_MOVES, 0); break;
        case 4: STEP_LOOP(TILE("vbroadcastss", 4), 20); break;
        default: STEP_LOOP(TILE("vmovups", 16), 80); break;
        }
    }
    return al_now_seconds() - t;
}

static int by_value(const void *x, const void *y) {
    const double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(int argc, char **argv) {
    int rounds = 7;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds")) rounds = bench_int("bench_tile_ceiling", "--rounds", bench_next(argc, argv, &i), 1, BENCH_ROUNDS_MAX);
        else {
            fprintf(stderr, "usage: bench_tile_ceiling [--rounds R]\n");
            return 2;
        }
    }
    for (int i = 0; i < (int)(sizeof a_buf / sizeof *a_buf); i++) a_buf[i] = 1.0f + 1e-3f * (float)(i % 7);
    for (int i = 0; i < (int)(sizeof b_buf / sizeof *b_buf); i++) b_buf[i] = 1.0f - 1e-3f * (float)(i % 5);
    /* A VM may run the first seconds after an idle moment slower: two seconds of work before anything is timed. */
    for (const double t0 = al_now_seconds(); al_now_seconds() - t0 < 2.0;) time_variant(0);
    /* each variant between two readings of the clock; the median over the rounds */
    enum { MAX_ROUNDS = 101 };
    if (rounds > MAX_ROUNDS) rounds = MAX_ROUNDS;
    static double cycles[N_VARIANTS][MAX_ROUNDS];
    double lo = 1e9, hi = 0;
    for (int r = 0; r < rounds; r++)
        for (int v = 0; v < N_VARIANTS; v++) {
            const double c0 = clock_ghz(), secs = time_variant(v), c1 = clock_ghz(), ghz = 0.5 * (c0 + c1);
            if (ghz < lo) lo = ghz;
            if (ghz > hi) hi = ghz;
            cycles[v][r] = secs * ghz * 1e9 / ((double)REPS * STEPS);
        }
    double median[N_VARIANTS];
    for (int v = 0; v < N_VARIANTS; v++) {
        qsort(cycles[v], (size_t)rounds, sizeof(double), by_value);
        median[v] = cycles[v][rounds / 2];
    }
    printf("the 5 x 8 tile's k step in x86 assembly, %d rounds, the clock %.2f to %.2f G dependent adds a second\n",
           rounds, lo, hi);
    printf("%-16s %14s %14s %14s\n", "variant", "cycles / step", "flops / cycle", "vs arithmetic");
    for (int v = 0; v < N_VARIANTS; v++)
        printf("%-16s %14.2f %14.1f %13.2fx\n", names[v], median[v], 80.0 / median[v], median[v] / median[0]);
    return 0;
}

#else

int main(void) {
    fprintf(stderr, "bench_tile_ceiling: x86-64 with GCC or clang only\n");
    return 77;
}

#endif

