/* rollout.c: attention rollout (measures.h, docs/measures.md; Abnar & Zuidema 2020), over the real tokens
 * of one example, in double. */
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "measures.h"

static void normalise_rows(double *A, int n) {
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = 0; j < n; j++) s += A[(size_t)i * n + j];
        if (s != 0.0)
            for (int j = 0; j < n; j++) A[(size_t)i * n + j] /= s;
    }
}

al_status al_rollout(const float *const *maps, int NL, int H, int L, const int32_t *mask, int normalise_first,
                     float *out, al_error *err) {
    if (NL < 1 || H < 1 || L < 1) return al_err(err, AL_ERR_INVALID, "rollout: empty shape [%d, %d, %d]", NL, H, L);
    int *idx = malloc(sizeof(int) * (size_t)L);
    int n = 0;
    for (int t = 0; idx && t < L; t++)
        if (!mask || mask[t]) idx[n++] = t;
    double *A = malloc(sizeof(double) * ((size_t)n * n + 1)), *R = malloc(sizeof(double) * ((size_t)n * n + 1));
    double *T = malloc(sizeof(double) * ((size_t)n * n + 1));
    if (!idx || !A || !R || !T) {
        free(idx), free(A), free(R), free(T);
        return al_err(err, AL_ERR_OOM, "rollout: out of memory for %d tokens", L);
    }
    memset(out, 0, sizeof(float) * (size_t)NL * L * L);
    for (int l = 0; l < NL; l++) {
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                double s = 0.0;
                for (int h = 0; h < H; h++) s += maps[l][((size_t)h * L + idx[i]) * L + idx[j]];
                A[(size_t)i * n + j] = s / H;
            }
        if (normalise_first) normalise_rows(A, n);
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) A[(size_t)i * n + j] *= 0.5;
            A[(size_t)i * n + i] += 0.5;
        }
        normalise_rows(A, n);
        if (l == 0) {
            memcpy(R, A, sizeof(double) * (size_t)n * n);
        } else { /* R_l = A'_l R_{l-1} */
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    double s = 0.0;
                    for (int k = 0; k < n; k++) s += A[(size_t)i * n + k] * R[(size_t)k * n + j];
                    T[(size_t)i * n + j] = s;
                }
            memcpy(R, T, sizeof(double) * (size_t)n * n);
        }
        float *o = out + (size_t)l * L * L;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) o[(size_t)idx[i] * L + idx[j]] = (float)R[(size_t)i * n + j];
    }
    free(idx), free(A), free(R), free(T);
    return AL_OK;
}
