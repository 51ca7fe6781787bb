/* check.h: the smallest test harness. CHECK records a failure and goes on; the test's main returns
 * check_summary(), which prints "N passed, N failed" and the exit status. */
#ifndef AL_CHECK_H
#define AL_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int check_passed_, check_failed_;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (cond) {                                                                  \
            check_passed_++;                                                         \
        } else {                                                                     \
            check_failed_++;                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                            \
    } while (0)

#define CHECK_MSG(cond, ...)                                                  \
    do {                                                                      \
        if (cond) {                                                           \
            check_passed_++;                                                  \
        } else {                                                              \
            check_failed_++;                                                  \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                     \
            fputc('\n', stderr);                                              \
        }                                                                     \
    } while (0)

/* |a - b| <= tol */
#define CHECK_NEAR(a, b, tol) \
    CHECK_MSG(fabs((double)(a) - (double)(b)) <= (tol), "%.9g vs %.9g (tol %g)", (double)(a), (double)(b), (double)(tol))

/* Skips the whole test (CTest shows it passed; the line says why). */
#define SKIP_TEST(why)                         \
    do {                                       \
        printf("skipped: %s\n", why);          \
        return 0;                              \
    } while (0)

static inline int check_summary(const char *name) {
    printf("%s: %d passed, %d failed\n", name, check_passed_, check_failed_);
    return check_failed_ ? 1 : 0;
}

#endif
