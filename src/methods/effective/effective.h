/* effective.h: the linear algebra behind effective attention (Brunner et al. 2020; Sun & Marasovic
 * 2021), shared by src/methods/effective/effective.c, the analyses and the tests. Not public: the public entry
 * points are in attnlab.h, section "effective attention".
 *
 * For one head with attention A [m, n] and values V [n, dh], effective attention keeps the part of
 * each row of A that V can "see": A_eff = A P, P the orthogonal projector onto col(V) (the rest of
 * the row lies in the left null space of V and is multiplied by zero, A_eff V = A V).
 *
 * Nothing here forms an n x n matrix or an n x n SVD. The basis of col(V) comes from the dh x dh Gram
 * matrix G = V^T V in double:
 *   - fast path: pivoted Cholesky of G, i.e. the R factor of a QR with column pivoting of V
 *     (CholeskyQR), stopped at a rank tolerance; Q = V P R^-1 [n, r]; when R is ill-conditioned a
 *     second CholeskyQR pass on Q restores orthogonality to double precision;
 *   - exact spectrum (the paper mode's singular-value count when the fast path cannot decide it, and
 *     the tests): cyclic Jacobi eigen-decomposition G = W diag(sigma^2) W^T, left singular vectors
 *     U_k = V w_k / sigma_k, re-orthonormalised in double.
 * The projection itself is two float GEMMs: A_eff = (A Q) Q^T. */
#ifndef AL_METHODS_EFFECTIVE_H
#define AL_METHODS_EFFECTIVE_H

#include "../../attnlab.h"

/* Reusable buffers for one head at a time; grown on demand, freed by al_eff_scratch_free. */
typedef struct al_eff_scratch {
    int cap_n, cap_dh;
    double *G;     /* [dh, dh] Gram matrix, then the Cholesky factor R (upper triangle) */
    double *W;     /* [dh, dh] eigenvectors (Jacobi) or R^-1 */
    double *sig;   /* [dh] singular values, descending */
    int *piv;      /* [dh] column pivots */
    double *Qd;    /* [n, dh] basis in double */
    double *tmp;   /* [max(n, dh) * dh] */
    float *Q;      /* [n, dh] basis in float (first r columns used), row stride dh */
    float *T;      /* [n, dh] A Q */
    float *Ag;     /* [n, n] gathered rows/columns of A (exact mode with padding) */
    float *Vg;     /* [n, dh] gathered rows of V */
} al_eff_scratch;

al_status al_eff_scratch_reserve(al_eff_scratch *s, int n, int dh, al_error *err);
void al_eff_scratch_free(al_eff_scratch *s);

/* Single-precision machine epsilon (numpy finfo(float32).eps). */
#define AL_EPS_F32 1.1920928955078125e-7

/* Largest singular value of V [n, dh] (row stride ldv), from G = V^T V by power iteration (G left
 * in s->G). */
double al_eff_gram(const float *V, int n, int dh, int ldv, al_eff_scratch *s);
double al_eff_sigma_max(al_eff_scratch *s, int dh);

/* Fast path. Orthonormal basis of col(V) in s->Q (float, [n, r], stride dh) and s->Qd (double),
 * keeping pivoted directions whose R_kk exceeds `tol` (absolute). Returns r. When `sigma_min_lb` is
 * not NULL it receives a lower bound on the r-th singular value (1 / ||R^-1||_F), 0 when r == 0. */
int al_eff_basis_qr(const float *V, int n, int dh, int ldv, double tol, al_eff_scratch *s,
                    double *sigma_min_lb);

/* Exact spectrum of V: singular values (descending) in s->sig and right singular vectors in s->W
 * (column k = w_k), from cyclic Jacobi on G (call al_eff_gram first). */
void al_eff_eigen(al_eff_scratch *s, int dh);

/* Orthonormal basis spanning the top `r` left singular vectors of V (after al_eff_eigen) in s->Q /
 * s->Qd. Directions with sigma_k <= floor_tol (numerically zero) are completed deterministically
 * with unit vectors e_0, e_1, ... orthogonalised against the others (any completion is as valid as
 * the arbitrary one a full SVD returns). r <= n. */
void al_eff_basis_svd(const float *V, int n, int dh, int ldv, int r, double floor_tol,
                      al_eff_scratch *s);

/* out [m, n] (stride ldo) = (A Q) Q^T with A [m, n] (stride lda), m <= the reserved n, and
 * Q [n, r] with row stride dh (s->Q after a basis call, or a saved copy). out may equal A (A is
 * consumed into s->T first). r == 0 gives zeros. */
void al_eff_project(const float *A, int m, int n, int lda, const float *Q, int r, int dh,
                    al_eff_scratch *s, float *out, int ldo);

#endif
