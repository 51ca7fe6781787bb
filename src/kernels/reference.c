/* reference.c: plain scalar references of the kernels, in double where it matters. Only the tests
 * use them; they define what "correct" means for the fast paths. */
#include <math.h>

#include "kernels.h"

/* Shared tail of the three GEMM references: C = alpha * sum (+ C). */
static void ref_store(float *c, double alpha, double sum, int accumulate) {
    float v = (float)(alpha * sum);
    *c = accumulate ? *c + v : v;
}

void al_ref_gemm_nt(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                    int ldb, float *C, int ldc, int accumulate) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int k = 0; k < K; k++) s += (double)A[(size_t)i * lda + k] * B[(size_t)j * ldb + k];
            ref_store(&C[(size_t)i * ldc + j], alpha, s, accumulate);
        }
}

void al_ref_gemm_nn(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                    int ldb, float *C, int ldc, int accumulate) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int k = 0; k < K; k++) s += (double)A[(size_t)i * lda + k] * B[(size_t)k * ldb + j];
            ref_store(&C[(size_t)i * ldc + j], alpha, s, accumulate);
        }
}

void al_ref_gemm_tn(int M, int N, int K, float alpha, const float *A, int lda, const float *B,
                    int ldb, float *C, int ldc, int accumulate) {
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int k = 0; k < K; k++) s += (double)A[(size_t)k * lda + i] * B[(size_t)k * ldb + j];
            ref_store(&C[(size_t)i * ldc + j], alpha, s, accumulate);
        }
}

void al_ref_softmax_rows(float *x, int rows, int cols, int ld) {
    for (int r = 0; r < rows; r++) {
        float *row = x + (size_t)r * ld;
        double mx = -INFINITY, sum = 0.0;
        for (int j = 0; j < cols; j++) mx = row[j] > mx ? row[j] : mx;
        for (int j = 0; j < cols; j++) sum += exp((double)row[j] - mx);
        for (int j = 0; j < cols; j++) row[j] = (float)(exp((double)row[j] - mx) / sum);
    }
}

void al_ref_layernorm(const float *x, float *y, int rows, int dim, const float *gamma,
                      const float *beta, float eps) {
    for (int r = 0; r < rows; r++) {
        const float *xr = x + (size_t)r * dim;
        float *yr = y + (size_t)r * dim;
        double mean = 0.0, var = 0.0;
        for (int i = 0; i < dim; i++) mean += xr[i];
        mean /= dim;
        for (int i = 0; i < dim; i++) var += (xr[i] - mean) * (xr[i] - mean);
        var /= dim;
        double rstd = 1.0 / sqrt(var + eps);
        for (int i = 0; i < dim; i++) {
            double v = (xr[i] - mean) * rstd;
            if (gamma) v *= gamma[i];
            if (beta) v += beta[i];
            yr[i] = (float)v;
        }
    }
}

void al_ref_gelu(float *x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        x[i] = (float)(0.5 * v * (1.0 + erf(v / sqrt(2.0))));
    }
}

void al_ref_gelu_tanh(float *x, size_t n) {
    const double c = sqrt(2.0 / 3.14159265358979323846);
    for (size_t i = 0; i < n; i++) {
        double v = x[i];
        x[i] = (float)(0.5 * v * (1.0 + tanh(c * (v + 0.044715 * v * v * v))));
    }
}
