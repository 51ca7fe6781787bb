/* test_papa_constants.c: constant matrices (src/methods/papa/papa_constants.c) against the checks of
 * docs/papa.md#constant-matrices: shape and range, exact zeros where no pair was seen, the shared count
 * matrix, the plain mean when every mask is equal, batching-independent sums, and data-free matrices. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "core/rng.h"
#include "methods/papa/papa.h"

enum { L = 32 }; /* positions per example (an enum: the name L is also a struct member) */
#define N_EX 10

static const char *const k_texts[N_EX] = {
    "the cat sat on the mat .",
    "a dog barked .",
    "she read the letter twice and then put it away in the drawer .",
    "rain fell .",
    "the committee will meet on monday to discuss the budget for next year .",
    "he smiled .",
    "they walked along the river until the sun went down behind the hills .",
    "birds sing in the morning .",
    "it was late .",
    "the old house at the end of the street had been empty for many years .",
};

typedef struct corpus {
    int32_t ids[N_EX * L], mask[N_EX * L], types[N_EX * L];
} corpus;

static void lay_out(const al_tokenizer *tok, corpus *c) {
    al_error err;
    for (int x = 0; x < N_EX; x++) {
        al_papa_example ex = {c->ids + x * L, c->mask + x * L, c->types + x * L, NULL, 0};
        CHECK_MSG(al_papa_encode(tok, AL_LAYOUT_PAPA, k_texts[x], NULL, L, &ex, &err) == AL_OK, "%s", err.message);
    }
}

static void test_average(const al_model *m, const corpus *c) {
    const al_config *cfg = al_model_config(m);
    const int NL = cfg->n_layers, H = cfg->n_heads;
    const size_t n_c = (size_t)NL * H * L * L;
    float *C = malloc(n_c * sizeof *C), *C3 = malloc(n_c * sizeof *C3);
    al_error err;
    CHECK_MSG(al_papa_average_constants(m, c->ids, c->mask, c->types, N_EX, L, 8, NULL, C, &err) == AL_OK, "%s",
              err.message);
    CHECK(al_papa_average_constants(m, c->ids, c->mask, c->types, N_EX, L, 3, NULL, C3, &err) == AL_OK);
    CHECK_MSG(memcmp(C, C3, n_c * sizeof *C) == 0, "batch size changed the constants");

    /* The count matrix: symmetric, at most |train|, and [CLS] (0) and the final [SEP] (L-1) always real. */
    al_papa_sums s;
    CHECK(al_papa_sums_init(&s, NL, H, L, &err) == AL_OK);
    float *attn = malloc((size_t)NL * N_EX * H * L * L * sizeof *attn);
    al_batch batch = {N_EX, L, c->ids, c->mask, c->types, NULL};
    al_forward_outputs out = {0};
    out.attentions = attn;
    CHECK(al_forward(m, &batch, NULL, &out, &err) == AL_OK);
    al_papa_sums_add(&s, attn, c->mask, N_EX);
    int sym = 1, bounded = 1;
    for (int i = 0; i < L; i++)
        for (int j = 0; j < L; j++) {
            sym &= s.N[i * L + j] == s.N[j * L + i];
            bounded &= s.N[i * L + j] <= N_EX;
        }
    CHECK(sym && bounded);
    CHECK(s.N[0] == N_EX && s.N[L - 1] == N_EX && s.N[(size_t)(L - 1) * L + L - 1] == N_EX);
    CHECK(s.n_examples == N_EX);

    /* Range, exact zeros where N = 0, and the definition entry by entry on one head. */
    int in_range = 1, zeros = 1, n_unseen = 0;
    for (size_t e = 0; e < n_c; e++) in_range &= C[e] >= 0.0f && C[e] <= 1.0f;
    for (int lh = 0; lh < NL * H; lh++)
        for (int e = 0; e < L * L; e++)
            if (s.N[e] == 0.0) {
                zeros &= C[(size_t)lh * L * L + e] == 0.0f;
                n_unseen += lh == 0;
            }
    CHECK(in_range && zeros);
    CHECK(n_unseen > 0); /* the short sentences leave pairs that were never both real */
    const int l = NL - 1, h = H - 1, i = 0;
    double max_diff = 0.0;
    for (int j = 0; j < L; j++) {
        double sum = 0.0;
        int count = 0;
        for (int x = 0; x < N_EX; x++) {
            if (!c->mask[x * L + i] || !c->mask[x * L + j]) continue;
            sum += attn[((((size_t)l * N_EX + x) * H + h) * L + i) * L + j];
            count++;
        }
        double want = count ? sum / count : 0.0;
        double d = fabs(want - C[(((size_t)l * H + h) * L + i) * L + j]);
        if (d > max_diff) max_diff = d;
    }
    CHECK_MSG(max_diff < 1e-7, "C differs from the masked mean by %g", max_diff);
    /* rows are not stochastic in general: row 0 of the first head sums to something other than 1 */
    double row = 0.0;
    for (int j = 0; j < L; j++) row += C[j];
    CHECK(fabs(row - 1.0) > 1e-4);

    al_papa_sums_free(&s);
    free(attn);
    free(C);
    free(C3);
}

/* Every example with the same mask: C is the plain mean of A * m m^T over the examples. */
static void test_same_mask(void) {
    const int NL = 2, H = 3, B = 4, n = 6;
    al_rng r;
    al_rng_seed(&r, 5);
    float *A = malloc(sizeof(float) * NL * B * H * n * n);
    for (int e = 0; e < NL * B * H * n * n; e++) A[e] = al_rng_uniform(&r);
    int32_t mask[4 * 6];
    for (int b = 0; b < B; b++)
        for (int i = 0; i < n; i++) mask[b * n + i] = i < 4 || i == n - 1;
    al_papa_sums s;
    al_error err;
    CHECK(al_papa_sums_init(&s, NL, H, n, &err) == AL_OK);
    al_papa_sums_add(&s, A, mask, B);
    float C[2 * 3 * 36];
    al_papa_sums_average(&s, C);
    double max_diff = 0.0;
    for (int l = 0; l < NL; l++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    double sum = 0.0;
                    for (int b = 0; b < B; b++)
                        sum += A[((((size_t)l * B + b) * H + h) * n + i) * n + j] * mask[b * n + i] * mask[b * n + j];
                    double d = fabs(sum / B - C[((l * H + h) * n + i) * n + j]);
                    if (d > max_diff) max_diff = d;
                }
    CHECK_MSG(max_diff < 1e-7, "same-mask mean differs by %g", max_diff);
    al_papa_sums_free(&s);
    free(A);
}

static void test_data_free(void) {
    float C[5 * 5];
    al_error err;
    CHECK(al_papa_data_free(AL_CONST_IDENTITY, 5, C, &err) == AL_OK);
    CHECK(C[0] == 1.0f && C[1] == 0.0f && C[24] == 1.0f);
    CHECK(al_papa_data_free(AL_CONST_TOEPLITZ, 5, C, &err) == AL_OK);
    CHECK(C[0] == 1.0f && C[1] == 0.5f && C[4] == 0.2f && C[5 * 4] == 0.2f && C[5 * 2 + 1] == 0.5f);
    CHECK(al_papa_data_free(AL_CONST_ZEROS, 5, C, &err) == AL_OK);
    CHECK(C[0] == 0.0f && C[12] == 0.0f);
    CHECK(al_papa_data_free(AL_CONST_UNIFORM, 5, C, &err) == AL_OK);
    CHECK(C[0] == 1.0f && C[13] == 1.0f);
    CHECK(al_papa_data_free(AL_CONST_AVERAGE, 5, C, &err) == AL_ERR_INVALID);
    for (int k = 0; k < AL_N_CONST_KINDS; k++)
        CHECK(al_papa_constant_from_name(al_papa_constant_name((al_papa_constant_kind)k)) == k);
    CHECK(al_papa_constant_from_name("gaussian") == -1);
}

int main(void) {
    test_same_mask();
    test_data_free();
    al_model *m = NULL;
    al_error err;
    CHECK_MSG(al_model_load_dir("models/attnlab-mini-bert", &m, &err) == AL_OK, "%s", err.message);
    if (m) {
        corpus *c = malloc(sizeof *c);
        lay_out(al_model_tokenizer(m), c);
        test_average(m, c);
        free(c);
        al_model_free(m);
    }
    return check_summary("papa_constants");
}
