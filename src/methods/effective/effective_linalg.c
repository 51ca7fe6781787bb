/* effective_linalg.c: bases of col(V) for effective attention, from the dh x dh Gram matrix in
 * double (pivoted Cholesky = QR with column pivoting; cyclic Jacobi for the exact spectrum), and
 * the float projection A_eff = (A Q) Q^T. See effective.h for why no n x n matrix is formed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../kernels/kernels.h"
#include "effective.h"

void al_eff_scratch_free(al_eff_scratch *s) {
    free(s->G), free(s->W), free(s->sig), free(s->piv), free(s->Qd), free(s->tmp);
    free(s->Q), free(s->T), free(s->Ag), free(s->Vg);
    memset(s, 0, sizeof *s);
}

al_status al_eff_scratch_reserve(al_eff_scratch *s, int n, int dh, al_error *err) {
    if (n <= s->cap_n && dh <= s->cap_dh) return AL_OK;
    if (n < s->cap_n) n = s->cap_n;
    if (dh < s->cap_dh) dh = s->cap_dh;
    al_eff_scratch_free(s);
    const size_t nn = (size_t)(n > 0 ? n : 1), d = (size_t)(dh > 0 ? dh : 1);
    const size_t big = nn > d ? nn : d;
    s->G = malloc(d * d * sizeof(double));
    s->W = malloc(d * d * sizeof(double));
    s->sig = malloc(d * sizeof(double));
    s->piv = malloc(d * sizeof(int));
    s->Qd = malloc(nn * d * sizeof(double));
    s->tmp = malloc((big + 2) * d * sizeof(double));
    s->Q = malloc(nn * d * sizeof(float));
    s->T = malloc(nn * d * sizeof(float));
    s->Ag = malloc(nn * nn * sizeof(float));
    s->Vg = malloc(nn * d * sizeof(float));
    if (!s->G || !s->W || !s->sig || !s->piv || !s->Qd || !s->tmp || !s->Q || !s->T || !s->Ag ||
        !s->Vg) {
        al_eff_scratch_free(s);
        return al_err(err, AL_ERR_OOM, "effective attention: out of memory for n=%d, dh=%d", n, dh);
    }
    s->cap_n = n;
    s->cap_dh = dh;
    return AL_OK;
}

double al_eff_gram(const float *V, int n, int dh, int ldv, al_eff_scratch *s) {
    double *G = s->G, *row = s->sig; /* sig doubles as a row buffer here */
    memset(G, 0, sizeof(double) * (size_t)dh * dh);
    for (int t = 0; t < n; t++) {
        const float *v = V + (size_t)t * ldv;
        for (int i = 0; i < dh; i++) row[i] = v[i];
        for (int i = 0; i < dh; i++) {
            const double vi = row[i];
            double *g = G + (size_t)i * dh;
            for (int j = i; j < dh; j++) g[j] += vi * row[j];
        }
    }
    for (int i = 0; i < dh; i++)
        for (int j = 0; j < i; j++) G[(size_t)i * dh + j] = G[(size_t)j * dh + i];
    return al_eff_sigma_max(s, dh);
}

/* Power iteration on G from the all-ones vector, then the Rayleigh quotient: sigma_max^2. The
 * estimate only scales a rank tolerance, so 30 steps are plenty. */
double al_eff_sigma_max(al_eff_scratch *s, int dh) {
    const double *G = s->G;
    double *x = s->tmp, *y = s->tmp + dh;
    double trace = 0;
    for (int i = 0; i < dh; i++) trace += G[(size_t)i * dh + i];
    if (!(trace > 0)) return 0;
    for (int i = 0; i < dh; i++) x[i] = 1.0;
    double lambda = trace / dh;
    for (int it = 0; it < 30; it++) {
        double norm = 0;
        for (int i = 0; i < dh; i++) {
            double acc = 0;
            for (int j = 0; j < dh; j++) acc += G[(size_t)i * dh + j] * x[j];
            y[i] = acc;
            norm += acc * acc;
        }
        norm = sqrt(norm);
        if (!(norm > 0)) break; /* x in the null space: restart would be needed; keep trace/dh */
        double xx = 0, xy = 0;
        for (int i = 0; i < dh; i++) xx += x[i] * x[i], xy += x[i] * y[i];
        lambda = xy / xx;
        for (int i = 0; i < dh; i++) x[i] = y[i] / norm;
    }
    if (lambda < trace / dh) lambda = trace / dh; /* sigma_max^2 >= mean eigenvalue */
    return sqrt(lambda);
}

/* Cholesky of a symmetric positive definite r x r matrix M (stride ld) in place (upper R); returns
 * 0 when a pivot is not positive. */
static int cholesky_upper(double *M, int r, int ld) {
    for (int k = 0; k < r; k++) {
        double d = M[(size_t)k * ld + k];
        if (!(d > 0)) return 0;
        d = sqrt(d);
        M[(size_t)k * ld + k] = d;
        for (int j = k + 1; j < r; j++) M[(size_t)k * ld + j] /= d;
        for (int i = k + 1; i < r; i++) {
            const double rki = M[(size_t)k * ld + i];
            double *mi = M + (size_t)i * ld;
            const double *mk = M + (size_t)k * ld;
            for (int j = i; j < r; j++) mi[j] -= rki * mk[j];
        }
    }
    return 1;
}

/* X [n, r] (stride ld) <- X R^-1 for upper-triangular R (stride ldr), row by row. */
static void solve_right_upper(double *X, int n, int r, int ld, const double *R, int ldr) {
    for (int t = 0; t < n; t++) {
        double *x = X + (size_t)t * ld;
        for (int k = 0; k < r; k++) {
            double acc = x[k];
            for (int j = 0; j < k; j++) acc -= x[j] * R[(size_t)j * ldr + k];
            x[k] = acc / R[(size_t)k * ldr + k];
        }
    }
}

/* ||R^-1||_F for upper-triangular R [r, r] (stride ld), via back substitution into Rinv. */
static double inverse_frobenius(const double *R, int r, int ld, double *Rinv) {
    double sum = 0;
    for (int j = 0; j < r; j++) { /* column j of R^-1: R x = e_j, x[i] = 0 for i > j */
        for (int i = j; i >= 0; i--) {
            double acc = i == j ? 1.0 : 0.0;
            for (int k = i + 1; k <= j; k++) acc -= R[(size_t)i * ld + k] * Rinv[(size_t)k * r + j];
            Rinv[(size_t)i * r + j] = acc / R[(size_t)i * ld + i];
            sum += Rinv[(size_t)i * r + j] * Rinv[(size_t)i * r + j];
        }
    }
    return sqrt(sum);
}

static void store_float(al_eff_scratch *s, int n, int dh, int r) {
    for (size_t t = 0; t < (size_t)n; t++)
        for (int k = 0; k < r; k++) s->Q[t * dh + k] = (float)s->Qd[t * dh + k];
}

int al_eff_basis_qr(const float *V, int n, int dh, int ldv, double tol, al_eff_scratch *s,
                    double *sigma_min_lb) {
    double *G = s->G; /* holds V^T V from al_eff_gram */
    int *piv = s->piv;
    const double tol2 = tol * tol;
    int r = 0;
    for (int i = 0; i < dh; i++) piv[i] = i;
    for (int k = 0; k < dh && k < n; k++) {
        int p = k;
        for (int j = k + 1; j < dh; j++)
            if (G[(size_t)j * dh + j] > G[(size_t)p * dh + p]) p = j;
        const double d = G[(size_t)p * dh + p];
        if (!(d > tol2)) break;
        if (p != k) { /* symmetric swap of rows and columns k, p (R rows above keep their order) */
            for (int j = 0; j < dh; j++) {
                double t = G[(size_t)k * dh + j];
                G[(size_t)k * dh + j] = G[(size_t)p * dh + j];
                G[(size_t)p * dh + j] = t;
            }
            for (int i = 0; i < dh; i++) {
                double t = G[(size_t)i * dh + k];
                G[(size_t)i * dh + k] = G[(size_t)i * dh + p];
                G[(size_t)i * dh + p] = t;
            }
            int t = piv[k];
            piv[k] = piv[p];
            piv[p] = t;
        }
        const double rkk = sqrt(d);
        double *gk = G + (size_t)k * dh;
        gk[k] = rkk;
        for (int j = k + 1; j < dh; j++) gk[j] /= rkk;
        for (int i = k + 1; i < dh; i++) {
            const double rki = gk[i];
            double *gi = G + (size_t)i * dh;
            for (int j = k + 1; j < dh; j++) gi[j] -= rki * gk[j];
        }
        r = k + 1;
    }
    /* Q = V[:, piv[:r]] R11^-1 in double. */
    for (size_t t = 0; t < (size_t)n; t++)
        for (int k = 0; k < r; k++) s->Qd[t * dh + k] = V[t * ldv + piv[k]];
    solve_right_upper(s->Qd, n, r, dh, G, dh);
    double rinv = r ? inverse_frobenius(G, r, dh, s->W) : 0;
    if (sigma_min_lb) *sigma_min_lb = r ? 1.0 / rinv : 0;
    /* CholeskyQR loses orthogonality like eps * cond(R)^2: a second pass when cond_F > 1e3. */
    double rnorm = 0;
    for (int i = 0; i < r; i++)
        for (int j = i; j < r; j++) rnorm += G[(size_t)i * dh + j] * G[(size_t)i * dh + j];
    if (r && sqrt(rnorm) * rinv > 1e3) {
        double *G2 = s->W; /* r x r, stride dh */
        for (int i = 0; i < r; i++)
            for (int j = i; j < r; j++) {
                double acc = 0;
                for (size_t t = 0; t < (size_t)n; t++) acc += s->Qd[t * dh + i] * s->Qd[t * dh + j];
                G2[(size_t)i * dh + j] = acc;
            }
        if (cholesky_upper(G2, r, dh)) solve_right_upper(s->Qd, n, r, dh, G2, dh);
    }
    store_float(s, n, dh, r);
    return r;
}

void al_eff_eigen(al_eff_scratch *s, int dh) {
    double *A = s->tmp, *W = s->W;
    memcpy(A, s->G, sizeof(double) * (size_t)dh * dh);
    for (int i = 0; i < dh; i++)
        for (int j = 0; j < dh; j++) W[(size_t)i * dh + j] = i == j;
    double total = 0;
    for (size_t e = 0; e < (size_t)dh * dh; e++) total += A[e] * A[e];
    for (int sweep = 0; sweep < 60; sweep++) {
        double off = 0;
        for (int p = 0; p < dh; p++)
            for (int q = p + 1; q < dh; q++) off += A[(size_t)p * dh + q] * A[(size_t)p * dh + q];
        if (off <= 1e-32 * total) break;
        for (int p = 0; p < dh; p++) {
            for (int q = p + 1; q < dh; q++) {
                const double apq = A[(size_t)p * dh + q];
                if (apq == 0) continue;
                const double theta = (A[(size_t)q * dh + q] - A[(size_t)p * dh + p]) / (2 * apq);
                double t = fabs(theta) > 1e150 ? 0.5 / theta
                                                : (theta >= 0 ? 1.0 : -1.0) /
                                                      (fabs(theta) + sqrt(theta * theta + 1));
                const double c = 1 / sqrt(t * t + 1), sn = t * c;
                for (int k = 0; k < dh; k++) { /* columns p, q */
                    double *ak = A + (size_t)k * dh;
                    const double akp = ak[p], akq = ak[q];
                    ak[p] = c * akp - sn * akq;
                    ak[q] = sn * akp + c * akq;
                    double *wk = W + (size_t)k * dh;
                    const double wkp = wk[p], wkq = wk[q];
                    wk[p] = c * wkp - sn * wkq;
                    wk[q] = sn * wkp + c * wkq;
                }
                double *ap = A + (size_t)p * dh, *aq = A + (size_t)q * dh;
                for (int k = 0; k < dh; k++) { /* rows p, q */
                    const double apk = ap[k], aqk = aq[k];
                    ap[k] = c * apk - sn * aqk;
                    aq[k] = sn * apk + c * aqk;
                }
            }
        }
    }
    /* Sort descending (selection sort: dh <= a few hundred), moving W's columns along. */
    for (int i = 0; i < dh; i++) s->sig[i] = A[(size_t)i * dh + i];
    for (int i = 0; i < dh; i++) {
        int best = i;
        for (int j = i + 1; j < dh; j++)
            if (s->sig[j] > s->sig[best]) best = j;
        if (best != i) {
            double t = s->sig[i];
            s->sig[i] = s->sig[best];
            s->sig[best] = t;
            for (int k = 0; k < dh; k++) {
                t = W[(size_t)k * dh + i];
                W[(size_t)k * dh + i] = W[(size_t)k * dh + best];
                W[(size_t)k * dh + best] = t;
            }
        }
    }
    for (int i = 0; i < dh; i++) s->sig[i] = s->sig[i] > 0 ? sqrt(s->sig[i]) : 0;
}

/* Makes column k of Qd [n, *] (stride ld) orthogonal to columns 0..k-1 (two passes) and returns
 * its norm before normalising it. */
static double orthonormalise_column(double *Qd, int n, int ld, int k) {
    for (int pass = 0; pass < 2; pass++) {
        for (int j = 0; j < k; j++) {
            double dot = 0;
            for (size_t t = 0; t < (size_t)n; t++) dot += Qd[t * ld + j] * Qd[t * ld + k];
            for (size_t t = 0; t < (size_t)n; t++) Qd[t * ld + k] -= dot * Qd[t * ld + j];
        }
    }
    double norm = 0;
    for (size_t t = 0; t < (size_t)n; t++) norm += Qd[t * ld + k] * Qd[t * ld + k];
    norm = sqrt(norm);
    if (norm > 0)
        for (size_t t = 0; t < (size_t)n; t++) Qd[t * ld + k] /= norm;
    return norm;
}

void al_eff_basis_svd(const float *V, int n, int dh, int ldv, int r, double floor_tol,
                      al_eff_scratch *s) {
    if (r > n) r = n;
    if (r > dh) r = dh;
    int next_unit = 0;
    for (int k = 0; k < r; k++) {
        double norm = 0;
        if (s->sig[k] > floor_tol) {
            for (size_t t = 0; t < (size_t)n; t++) {
                double acc = 0;
                for (int i = 0; i < dh; i++) acc += (double)V[t * ldv + i] * s->W[(size_t)i * dh + k];
                s->Qd[t * dh + k] = acc / s->sig[k];
            }
            norm = orthonormalise_column(s->Qd, n, dh, k);
        }
        /* A numerically null direction: complete with the next unit vector that is not in span. */
        while (!(norm > 0.5) && next_unit < n) {
            for (size_t t = 0; t < (size_t)n; t++) s->Qd[t * dh + k] = (int)t == next_unit;
            next_unit++;
            norm = orthonormalise_column(s->Qd, n, dh, k);
        }
    }
    store_float(s, n, dh, r);
}

void al_eff_project(const float *A, int m, int n, int lda, const float *Q, int r, int dh,
                    al_eff_scratch *s, float *out, int ldo) {
    if (r == 0) {
        for (int i = 0; i < m; i++) memset(out + (size_t)i * ldo, 0, sizeof(float) * (size_t)n);
        return;
    }
    if (r == n) { /* Q spans all of R^n: the projector is the identity, A_eff == A exactly */
        if (out != A)
            for (int i = 0; i < m; i++)
                memcpy(out + (size_t)i * ldo, A + (size_t)i * lda, sizeof(float) * (size_t)n);
        return;
    }
    /* Q [n, r] and T [m, r] both have row stride dh. */
    al_gemm_nn(m, r, n, 1.0f, A, lda, Q, dh, s->T, dh, 0);
    al_gemm_nt(m, n, r, 1.0f, s->T, dh, Q, dh, out, ldo, 0);
}
