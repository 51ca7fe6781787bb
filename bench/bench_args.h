/* bench_args.h: how a bench program reads a whole number from its command line. A word that is not a whole number
 * in the option's range stops the program with a message naming the program, the option and the word (exit 2), so
 * that a typo never runs a benchmark on a silent zero or default (atoi's "5x" is 5 and "x" is 0). */
#ifndef AL_BENCH_ARGS_H
#define AL_BENCH_ARGS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h" /* al_threads_max(): the bound of every --threads */

/* The largest count of rounds, repetitions or epochs a bench program takes. */
enum { BENCH_ROUNDS_MAX = 100000 };

static inline int bench_int(const char *prog, const char *option, const char *word, int lo, int hi) {
    char *end = NULL;
    errno = 0;
    const long v = word ? strtol(word, &end, 10) : 0;
    if (!word || end == word || *end || errno || v < lo || v > hi) {
        if (word) fprintf(stderr, "%s: %s must be a whole number from %d to %d, not '%s'\n", prog, option, lo, hi, word);
        else fprintf(stderr, "%s: %s needs a whole number from %d to %d after it\n", prog, option, lo, hi);
        exit(2);
    }
    return (int)v;
}

/* The word after the option at argv[*i], stepping past it; NULL when the option is the last word. */
static inline const char *bench_next(int argc, char **argv, int *i) {
    return *i + 1 < argc ? argv[++*i] : NULL;
}

/* A comma-separated list of whole numbers ("1,2,4"), each read as bench_int reads one; at most max of them. */
static inline int bench_int_list(const char *prog, const char *option, const char *word, int *out, int max, int lo,
                                 int hi) {
    char item[32];
    int n = 0;
    if (!word) return bench_int(prog, option, NULL, lo, hi); /* says the number is missing, and exits */
    for (const char *s = word;; s++) {
        const char *comma = strchr(s, ',');
        const size_t len = comma ? (size_t)(comma - s) : strlen(s);
        if (n == max || len >= sizeof item) {
            fprintf(stderr, "%s: %s takes at most %d numbers, each of at most %d digits, not '%s'\n", prog, option, max,
                    (int)sizeof item - 1, word);
            exit(2);
        }
        memcpy(item, s, len);
        item[len] = '\0';
        out[n++] = bench_int(prog, option, item, lo, hi);
        if (!comma) return n;
        s = comma;
    }
}

#endif
