/* test_findings.c: the rule behind the head_agreement op's sentence (docs/findings.md;
 * src/methods/measures/finding_stats.c and agreement_finding.c). The p-values against float64 values
 * enumerated independently (tests/js/findings_oracle.test.mjs recomputes them in JS; n = 5, rho = 0.9 is the
 * textbook 0.0833), Holm against a hand-worked case, the hypergeometric tail against exact fractions; then the
 * sentences of the cases a reviewer named: a 2-head model, a lambda that did not move, small-bert's lambda
 * against gradient importance and sink mass on `agreement` (the matrix and overlaps of its model card). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "methods/measures/agreement_finding.h"
#include "methods/measures/finding_stats.h"

static const al_agreement_measure k_ms[7] = {
    {"lambda", "PAPA's λ", 1},     {"gradient", "gradient importance", 1}, {"input_dependence", "input dependence", 1},
    {"confidence", "confidence", 1}, {"entropy", "entropy", -1},             {"sink_mass", "sink mass", -1},
    {"norm_mass", "norm mass", 1},
};

static double p_of(int n, double rho) {
    al_spearman_null z;
    CHECK(al_spearman_null_build(&z, n) == 0);
    const double p = al_spearman_null_p(&z, rho);
    al_spearman_null_free(&z);
    return p;
}

static void test_p_values(void) {
    /* exact: every ordering (float64 enumeration, tests/js/findings_oracle.test.mjs) */
    CHECK_NEAR(p_of(4, 1.0), 1.0 / 12.0, 1e-15);
    CHECK_NEAR(p_of(5, 0.9), 0.08333333333333333, 1e-15);
    CHECK_NEAR(p_of(5, -1.0), 0.016666666666666666, 1e-15);
    CHECK_NEAR(p_of(6, 0.6), 0.24166666666666667, 1e-15);
    CHECK_NEAR(p_of(7, 0.75), 0.06626984126984127, 1e-15);
    CHECK_NEAR(p_of(8, 0.5), 0.21617063492063493, 1e-15);
    CHECK_NEAR(p_of(9, 0.7), 0.04325396825396825, 1e-15);
    CHECK(p_of(2, 1.0) == 1.0 && p_of(1, 1.0) == 1.0 && isnan(p_of(5, NAN)));
    /* permutations: near the t approximation (48 heads, rho 0.33: t = 2.37 on 46 degrees, p = 0.022), never 0 */
    CHECK_NEAR(p_of(48, 0.33), 0.022, 0.003);
    CHECK(p_of(48, 1.0) > 0.0 && p_of(48, 1.0) < 2e-5);
    CHECK(p_of(48, 0.33) == p_of(48, -0.33)); /* two-sided */
    /* Holm: 0.005 x 4, 0.01 x 3, 0.03 x 2, then 0.04 x 1 raised to the 0.06 before it; NAN is no test */
    const double p[5] = {0.01, 0.04, NAN, 0.03, 0.005};
    double adj[5];
    al_holm(p, 5, adj);
    CHECK_NEAR(adj[0], 0.03, 1e-15);
    CHECK_NEAR(adj[1], 0.06, 1e-15);
    CHECK(isnan(adj[2]));
    CHECK_NEAR(adj[3], 0.06, 1e-15);
    CHECK_NEAR(adj[4], 0.02, 1e-15);
    /* the hypergeometric tail: sum over x >= s of C(12,x) C(36,12-x) / C(48,12), exact fractions */
    CHECK_NEAR(al_overlap_p(48, 12, 7), 0.004727362998446245, 1e-15);
    CHECK_NEAR(al_overlap_p(48, 12, 3), 0.6377464526745268, 1e-13);
    CHECK_NEAR(al_overlap_p(16, 4, 4), 1.0 / 1820.0, 1e-17);
    CHECK(al_overlap_p(48, 12, 0) == 1.0 && al_overlap_p(48, 12, 13) == 0.0);
    CHECK_NEAR(al_overlap_p(3072, 768, 200), 0.23466123374419595, 1e-9); /* large n: no overflow */
}

static al_agreement_findings g_f;

static const char *finding(int n, const double *rho, const double *grid, int k, const int *overlap) {
    const al_agreement_input in = {k_ms, 7, n, rho, grid, k, overlap, NAN, "ranking.lr (now 1e-08) or ranking.epochs (now 2)"};
    CHECK(al_agreement_findings_make(&in, &g_f) == 0);
    return g_f.sentence;
}

static void test_two_heads(void) {
    /* a 2-head model: every rho is +-1, and none could be significant */
    double rho[49], grid[14];
    for (int i = 0; i < 49; i++) rho[i] = (i / 7 + i % 7) % 2 ? -1.0 : 1.0;
    for (int i = 0; i < 14; i++) grid[i] = i % 2 ? 0.6 : 0.4;
    const int overlap[49] = {1, 1, 0, 1, 0, 1, 1};
    const char *s = finding(2, rho, grid, 1, overlap);
    CHECK_MSG(strstr(s, "With 2 heads no rank correlation could be significant") && strstr(s, "too few heads to tell") &&
              !strstr(s, "agrees with"), "%s", s);
    CHECK(g_f.verdict == AL_FIND_TOO_FEW_HEADS && g_f.pairs[0].verdict == AL_PV_TOO_FEW_HEADS && g_f.exact);
    CHECK(g_f.overlaps[0].verdict == AL_OV_NOT_TESTED);
    printf("2 heads: %s\n", s);
    /* 5 heads: even rho = 1 has p = 1/60, 0.10 after Holm across 6 measures; 6 heads can (1/360 x 6) */
    for (int i = 0; i < 49; i++) rho[i] = 1.0;
    CHECK(strstr(finding(5, rho, NULL, 0, NULL), "too few heads to tell"));
    CHECK(!strstr(finding(6, rho, NULL, 0, NULL), "too few heads") && g_f.pairs[0].verdict == AL_PV_AGREES);
    /* one head: nothing to rank (not "a constant measure") */
    const char *one = finding(1, rho, NULL, 0, NULL);
    CHECK_MSG(strstr(one, "With 1 head there is nothing to rank") && !strstr(one, "constant"), "%s", one);
}

static void test_lambda_flat(void) {
    /* --ranking.lr 1e-8: every lambda within 0.5 +- 2.5e-8, so its correlations are noise */
    enum { N = 16 };
    double grid[7 * N], rho[49];
    for (int x = 0; x < 7; x++)
        for (int i = 0; i < N; i++) grid[x * N + i] = x == 0 ? 0.5 + 2.5e-8 * ((i * 7) % N) / N : (double)((i * (x + 2)) % N);
    for (int i = 0; i < 49; i++) rho[i] = i / 7 == i % 7 ? 1.0 : 0.0;
    rho[0 * 7 + 2] = rho[2 * 7 + 0] = 0.8; /* "agrees with input dependence" before */
    rho[3 * 7 + 4] = rho[4 * 7 + 3] = -0.95;
    const int overlap[49] = {4, 1, 2, 1, 1, 1, 1};
    const char *s = finding(N, rho, grid, 4, overlap);
    CHECK_MSG(strstr(s, "PAPA's λ did not learn a ranking") && strstr(s, "raise ranking.lr (now 1e-08) or ranking.epochs") &&
              !strstr(s, "agrees with input dependence"), "%s", s);
    CHECK(g_f.verdict == AL_FIND_LAMBDA_FLAT && g_f.pairs[1].verdict == AL_PV_LAMBDA_FLAT && g_f.lambda_range < 2.5e-8);
    CHECK_MSG(strstr(s, "confidence and entropy agree (ρ = +0.95"), "%s", s); /* the other pairs are still read */
    printf("λ flat: %s\n", s);
}

static void test_small_bert_agreement(void) {
    /* models/attnlab-small-bert/README.md, task `agreement`: 48 heads, k = 12 */
    const double rho[49] = {1.00,  0.33,  0.13,  0.13,  -0.22, -0.26, 0.33,  0.33,  1.00, 0.20, 0.27, -0.30, 0.01,
                            0.29,  0.13,  0.20,  1.00,  0.14,  -0.27, 0.25,  0.09,  0.13, 0.27, 0.14, 1.00, -0.94,
                            0.13,  0.38,  -0.22, -0.30, -0.27, -0.94, 1.00,  0.06,  -0.54, -0.26, 0.01, 0.25, 0.13,
                            0.06,  1.00,  -0.57, 0.33,  0.29,  0.09,  0.38,  -0.54, -0.57, 1.00};
    const int overlap[49] = {12, 4, 4, 3, 3, 7, 7};
    const char *s = finding(48, rho, NULL, 12, overlap);
    printf("small-bert agreement: %s\n", s);
    /* rho +0.33 with gradient importance: p = 0.02 alone, not significant across the 6 measures compared */
    CHECK(g_f.pairs[0].b == 1 && g_f.pairs[0].p < 0.03 && g_f.pairs[0].p_holm > 0.05);
    CHECK(g_f.pairs[0].verdict == AL_PV_NOT_SIGNIFICANT && !g_f.exact);
    /* 7 of 12 shared with sink mass and with norm mass, 3 expected: more than chance after Holm */
    CHECK(g_f.overlaps[4].b == 5 && g_f.overlaps[4].shared == 7 && g_f.overlaps[4].verdict == AL_OV_MORE_THAN_CHANCE);
    CHECK(g_f.overlaps[5].verdict == AL_OV_MORE_THAN_CHANCE && g_f.overlaps[0].verdict == AL_OV_CHANCE);
    CHECK_NEAR(g_f.overlaps[4].expected, 3.0, 1e-15);
    CHECK_MSG(strstr(s, "no significant relation to gradient importance (ρ = +0.33, p = 0.1") &&
              strstr(s, "share more than chance with sink mass's (7 of 12, 3.0 expected") && !strstr(s, "unrelated") &&
              !strstr(s, "leans"), "%s", s);
    /* every pair that matters: confidence with entropy is agreement (-0.94 raw, +0.94 in importance) */
    CHECK_MSG(strstr(s, "confidence and entropy agree (ρ = +0.94"), "%s", s);
    CHECK_MSG(strstr(s, "sink mass and norm mass agree (ρ = +0.57"), "%s", s);
}

static void test_constant_measure(void) {
    enum { N = 12 };
    double grid[7 * N], rho[49];
    for (int x = 0; x < 7; x++)
        for (int i = 0; i < N; i++) grid[x * N + i] = x == 3 ? 0.25 : x == 2 ? NAN : (double)((i * (x + 5)) % N) / N;
    grid[2 * N + 4] = 0.1;
    for (int i = 0; i < 49; i++) rho[i] = i / 7 == 3 || i % 7 == 3 || i / 7 == 2 || i % 7 == 2 ? NAN : i / 7 == i % 7 ? 1.0 : 0.1;
    const char *s = finding(N, rho, grid, 0, NULL);
    CHECK_MSG(strstr(s, "cannot be compared with input dependence: fewer than two heads have a value for it") &&
              strstr(s, "cannot be compared with confidence: it gives every head the same value"), "%s", s);
}

int main(void) {
    test_p_values();
    test_two_heads();
    test_lambda_flat();
    test_small_bert_agreement();
    test_constant_measure();
    return check_summary("test_findings");
}
