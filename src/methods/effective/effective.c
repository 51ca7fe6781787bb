/* effective.c: effective attention for one head and for a whole forward output, in the exact mode
 * (real tokens only, per-head relative rank) and the paper mode (Sun & Marasovic's code: padded
 * length, absolute tolerance eps*H, one rank r* per layer, pad-key columns zeroed afterwards).
 * The contract is in attnlab.h ("effective attention"); the linear algebra in effective.h. */
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../model/family.h"
#include "effective.h"

double al_effective_paper_tolerance(int n_heads) { return AL_EPS_F32 * n_heads; }

static int imax(int a, int b) { return a > b ? a : b; }

/* Relative rank tolerance of the exact mode for n rows. */
static double relative_tol(double sigma_max, int n, int dh) {
    return sigma_max * imax(n, dh) * AL_EPS_F32;
}

/* Exact-mode projection of a contiguous head (no padding): A [m, n], V [n, dh]. */
static int project_exact(const float *A, int m, int lda, const float *V, int n, int dh, int ldv,
                         float *out, int ldo, al_eff_scratch *s) {
    const double smax = al_eff_gram(V, n, dh, ldv, s);
    const int r = smax > 0 ? al_eff_basis_qr(V, n, dh, ldv, relative_tol(smax, n, dh), s, NULL) : 0;
    al_eff_project(A, m, n, lda, s->Q, r, dh, s, out, ldo);
    return r;
}

al_status al_effective_head(const float *A, int n_rows, int lda, const float *V, int n, int dh,
                            int ldv, float *out, int ldo, int *rank, al_error *err) {
    if (!A || !V || !out || n_rows < 0 || n < 0 || dh < 1 || lda < n || ldo < n || ldv < dh)
        return al_err(err, AL_ERR_INVALID,
                      "effective attention: bad head arguments (n_rows %d, n %d, dh %d, lda %d, "
                      "ldv %d, ldo %d)",
                      n_rows, n, dh, lda, ldv, ldo);
    al_eff_scratch s = {0};
    al_status st = al_eff_scratch_reserve(&s, imax(n, n_rows), dh, err);
    if (st) return st;
    int r = 0;
    if (n == 0) {
        r = 0;
    } else {
        r = project_exact(A, n_rows, lda, V, n, dh, ldv, out, ldo, &s);
    }
    if (rank) *rank = r;
    al_eff_scratch_free(&s);
    return AL_OK;
}

/* Real-token positions of one example: idx[0..n) (mask NULL: all). Returns n. */
static int real_positions(const int32_t *mask_row, int L, int *idx) {
    int n = 0;
    for (int t = 0; t < L; t++)
        if (!mask_row || mask_row[t]) idx[n++] = t;
    return n;
}

static void exact_head(const float *A, const float *V, int L, int dh, const int *idx, int n,
                       float *out, int *rank, al_eff_scratch *s) {
    if (n == L) { /* no padding: project in place, no gather */
        *rank = project_exact(A, L, L, V, L, dh, dh, out, L, s);
        return;
    }
    /* Gather the real rows and columns first (out may be A), project, scatter into zeros. */
    for (int i = 0; i < n; i++) {
        memcpy(s->Vg + (size_t)i * dh, V + (size_t)idx[i] * dh, sizeof(float) * (size_t)dh);
        const float *a = A + (size_t)idx[i] * L;
        float *g = s->Ag + (size_t)i * n;
        for (int j = 0; j < n; j++) g[j] = a[idx[j]];
    }
    *rank = n ? project_exact(s->Ag, n, n, s->Vg, n, dh, dh, s->Ag, n, s) : 0;
    memset(out, 0, sizeof(float) * (size_t)L * L);
    for (int i = 0; i < n; i++) {
        float *o = out + (size_t)idx[i] * L;
        const float *g = s->Ag + (size_t)i * n;
        for (int j = 0; j < n; j++) o[idx[j]] = g[j];
    }
}

/* Exact mode for a causal head (docs/effective.md, "Causal heads"): query row i reads only the values of the real
 * tokens <= i, so its effective row is its first i + 1 entries projected onto the column space of those i + 1 value
 * rows, and its entries after i stay 0. One projection per row: a row's null space depends on the prefix it sees.
 * *rank is the rank of the last row's prefix (all the real tokens), as in the encoder's exact mode. */
static void exact_causal_head(const float *A, const float *V, int L, int dh, const int *idx, int n, float *out,
                              int *rank, al_eff_scratch *s) {
    for (int i = 0; i < n; i++) {
        memcpy(s->Vg + (size_t)i * dh, V + (size_t)idx[i] * dh, sizeof(float) * (size_t)dh);
        const float *a = A + (size_t)idx[i] * L;
        float *g = s->Ag + (size_t)i * n;
        for (int j = 0; j < n; j++) g[j] = a[idx[j]];
    }
    *rank = 0;
    for (int i = 0; i < n; i++) /* row i in place over its own prefix: earlier rows are done, later ones unread */
        *rank = project_exact(s->Ag + (size_t)i * n, 1, n, s->Vg, i + 1, dh, dh, s->Ag + (size_t)i * n, n, s);
    memset(out, 0, sizeof(float) * (size_t)L * L);
    for (int i = 0; i < n; i++) {
        float *o = out + (size_t)idx[i] * L;
        const float *g = s->Ag + (size_t)i * n;
        for (int j = 0; j <= i; j++) o[idx[j]] = g[j];
    }
}

/* Paper mode, one layer: [B, H, L, L] attentions and [B, H, L, dh] values. The basis of each head is
 * kept between the two passes when it fits in `saved` (NULL: recomputed). */
static void paper_layer(const float *A, const float *V, const int32_t *mask, int B, int H, int L,
                        int dh, float *out, int *ranks, al_eff_scratch *s, float *saved,
                        unsigned char *fast) {
    const double tol = al_effective_paper_tolerance(H);
    const int full = L < dh ? L : dh;
    int r_star = 0;
    /* Pass 1: each head's count of singular values above tol. When the pivoted Cholesky reaches
     * full rank and its lower bound 1/||R^-1||_F on sigma_min clears tol, every singular value does
     * and the count is min(L, dh) without a spectrum; otherwise Jacobi gives the count. */
    for (int bh = 0; bh < B * H; bh++) {
        const float *v = V + (size_t)bh * L * dh;
        const double smax = al_eff_gram(v, L, dh, dh, s);
        int count = 0;
        fast[bh] = 0;
        if (smax > 0) {
            double smin_lb = 0;
            int r = al_eff_basis_qr(v, L, dh, dh, relative_tol(smax, L, dh), s, &smin_lb);
            if (r == full && smin_lb > tol) {
                count = full;
                fast[bh] = 1;
                if (saved) memcpy(saved + (size_t)bh * L * dh, s->Q, sizeof(float) * (size_t)L * dh);
            } else {
                al_eff_gram(v, L, dh, dh, s);
                al_eff_eigen(s, dh);
                for (int k = 0; k < full; k++) count += s->sig[k] > tol;
            }
        }
        if (count > r_star) r_star = count;
    }
    /* Pass 2: project every row (pad queries included) on the top-r* directions, then zero the
     * pad-key columns. */
    for (int b = 0; b < B; b++) {
        const int32_t *m = mask ? mask + (size_t)b * L : NULL;
        for (int h = 0; h < H; h++) {
            const int bh = b * H + h;
            const float *a = A + (size_t)bh * L * L, *v = V + (size_t)bh * L * dh;
            float *o = out + (size_t)bh * L * L;
            const float *Q = s->Q;
            if (fast[bh] && r_star == full && saved) {
                Q = saved + (size_t)bh * L * dh;
            } else if (fast[bh] && r_star == full) {
                double smax = al_eff_gram(v, L, dh, dh, s);
                al_eff_basis_qr(v, L, dh, dh, relative_tol(smax, L, dh), s, NULL);
            } else {
                double smax = al_eff_gram(v, L, dh, dh, s);
                al_eff_eigen(s, dh);
                al_eff_basis_svd(v, L, dh, dh, r_star, relative_tol(smax, L, dh), s);
            }
            al_eff_project(a, L, L, L, Q, r_star, dh, s, o, L);
            if (m)
                for (int j = 0; j < L; j++)
                    if (!m[j])
                        for (int i = 0; i < L; i++) o[(size_t)i * L + j] = 0.0f;
            ranks[bh] = r_star;
        }
    }
}

al_status al_effective_attention(const al_config *config, const float *attentions,
                                 const float *values, const int32_t *mask, int B, int L,
                                 al_effective_mode mode, float *out, int *ranks_out,
                                 al_error *err) {
    if (!config || !attentions || !values || !out)
        return al_err(err, AL_ERR_INVALID,
                      "effective attention: config, attentions, values and out are required");
    if (B < 1 || L < 1)
        return al_err(err, AL_ERR_INVALID, "effective attention: batch %d x length %d is empty", B, L);
    if (mode != AL_EFFECTIVE_EXACT && mode != AL_EFFECTIVE_PAPER)
        return al_err(err, AL_ERR_INVALID, "effective attention: unknown mode %d", (int)mode);
    const int NL = config->n_layers, H = config->n_heads, dh = config->head_dim;
    if (NL < 1 || H < 1 || dh < 1)
        return al_err(err, AL_ERR_INVALID, "effective attention: config has %d layers, %d heads, "
                      "head_dim %d", NL, H, dh);
    const int causal = al_family_of(config)->causal;
    if (causal && mode == AL_EFFECTIVE_PAPER) /* docs/effective.md, "Causal heads" */
        return al_err(err, AL_ERR_UNSUPPORTED, "effective attention: field 'mode': \"paper\" (one projection "
                      "onto the values of the whole padded sequence) is not defined for a causal model, whose query i "
                      "reads only tokens <= i; use \"exact\"");
    al_eff_scratch s = {0};
    al_status st = al_eff_scratch_reserve(&s, L, dh, err);
    int *idx = malloc(sizeof(int) * (size_t)L);
    int *ranks = malloc(sizeof(int) * (size_t)B * H);
    unsigned char *fast = malloc((size_t)B * H);
    float *saved = NULL;
    /* Paper mode keeps each head's basis between its two passes when that stays under 256 MB. */
    if (mode == AL_EFFECTIVE_PAPER && (double)B * H * L * dh * sizeof(float) <= 256e6)
        saved = malloc(sizeof(float) * (size_t)B * H * L * dh);
    if (!st && (!idx || !ranks || !fast))
        st = al_err(err, AL_ERR_OOM, "effective attention: out of memory for batch %d x %d", B, L);
    for (int l = 0; !st && l < NL; l++) {
        const size_t a_off = (size_t)l * B * H * L * L, v_off = (size_t)l * B * H * L * dh;
        if (mode == AL_EFFECTIVE_PAPER) {
            paper_layer(attentions + a_off, values + v_off, mask, B, H, L, dh, out + a_off, ranks,
                        &s, saved, fast);
        } else {
            for (int b = 0; b < B; b++) {
                const int n = real_positions(mask ? mask + (size_t)b * L : NULL, L, idx);
                for (int h = 0; h < H; h++) {
                    const size_t bh = (size_t)b * H + h;
                    (causal ? exact_causal_head : exact_head)(attentions + a_off + bh * L * L,
                                                              values + v_off + bh * L * dh, L, dh, idx, n,
                                                              out + a_off + bh * L * L, &ranks[bh], &s);
                }
            }
        }
        if (ranks_out) memcpy(ranks_out + (size_t)l * B * H, ranks, sizeof(int) * (size_t)B * H);
    }
    free(idx), free(ranks), free(fast), free(saved);
    al_eff_scratch_free(&s);
    return st;
}
