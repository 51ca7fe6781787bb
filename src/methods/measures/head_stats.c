/* head_stats.c: one example's head statistics (measures.h, docs/measures.md), in double. */
#include <math.h>
#include <string.h>

#include "../../model/head_policy.h"
#include "measures.h"

const char *const al_head_stat_names[AL_HS_N] = {"entropy", "confidence", "cls", "sep", "first", "punct", "js", "sink"};

/* KL(p || m) terms of the Jensen-Shannon divergence: 0.5 KL(p||m) + 0.5 KL(q||m), m = (p + q) / 2. */
static double js_row(const float *p, const float *q, const int32_t *mask, int L) {
    double js = 0.0;
    for (int j = 0; j < L; j++) {
        if (!mask[j]) continue;
        const double a = p[j], b = q[j], m = 0.5 * (a + b);
        if (a > 0.0) js += 0.5 * a * log(a / m);
        if (b > 0.0) js += 0.5 * b * log(b / m);
    }
    return js;
}

/* A row's entropy over its real keys j < keys (nats). */
static double row_entropy(const float *row, const int32_t *mask, int keys) {
    double ent = 0.0;
    for (int j = 0; j < keys; j++) {
        const double v = row[j];
        if (mask[j] && v > 0.0) ent -= v * log(v);
    }
    return ent;
}

/* Row i's entropy over its real keys j <= i divided by ln k, k >= 2 the number of those keys (the bound the uniform
 * row over them reaches): the one rule al_causal_entropy_example and the causal head statistics share. */
static double causal_row_entropy(const float *row, const int32_t *mask, int i, int k) {
    return row_entropy(row, mask, i + 1) / log((double)k);
}

const char *const al_confidence_names[] = {"max", "voita", NULL};

void al_head_stats_example(const float *const *attn, int NL, int H, int L, const int32_t *mask,
                           const uint8_t *classes, const float *C, float *scratch, double *out) {
    al_head_stats_example_kind(attn, NL, H, L, mask, classes, C, AL_CONFIDENCE_MAX, scratch, out);
}

/* One rule for an encoder's rows and a causal model's (docs/measures.md): a causal row i reads only its keys j <= i,
 * its first row (one key: entropy 0, confidence and first 1 by force) is left out, and its entropy is divided by
 * ln k, k the real keys it sees; the constant is the one the forward pass uses (attention.c: a causal head's
 * later keys dropped before the mask). */
static void head_stats_rows(const float *const *attn, int NL, int H, int L, const int32_t *mask,
                            const uint8_t *classes, const float *C, al_confidence_kind confidence, int causal,
                            float *scratch, double *out) {
    /* Voita et al. leave out the end-of-sentence key, where heads park attention as a no-op */
    const uint8_t skip = confidence == AL_CONFIDENCE_VOITA ? AL_KEY_SEP : 0;
    int first = -1;
    for (int t = 0; t < L && first < 0; t++)
        if (mask[t]) first = t;
    float maskf[4096];
    float *mf = L <= 4096 ? maskf : NULL;
    for (int t = 0; mf && t < L; t++) mf[t] = mask[t] ? 1.0f : 0.0f;
    for (int l = 0; l < NL; l++)
        for (int h = 0; h < H; h++) {
            const float *A = attn[l] + (size_t)h * L * L;
            double sum[AL_HS_N] = {0};
            int rows = 0, js_rows = 0, k = 0; /* k: the real keys j <= i */
            float *c = NULL;
            if (C && mf) { /* the constant as the forward pass would use it on this example */
                c = scratch;
                memcpy(c, C + ((size_t)l * H + h) * L * L, sizeof(float) * (size_t)L * L);
                if (causal) al_head_drop_later_keys(c, L);
                al_head_mask_and_normalize(c, mf, L);
            }
            for (int i = 0; i < L; i++) {
                if (!mask[i]) continue;
                if (causal && ++k < 2) continue;
                const float *a = A + (size_t)i * L;
                const int keys = causal ? i + 1 : L;
                double mx = 0.0, cls = 0.0, sep = 0.0, punct = 0.0, sink = 0.0;
                for (int j = 0; j < keys; j++) {
                    if (!mask[j]) continue;
                    const double v = a[j];
                    if (v > mx && !(classes[j] & skip)) mx = v;
                    if (classes[j] & AL_KEY_CLS) cls += v;
                    if (classes[j] & AL_KEY_SEP) sep += v;
                    if (classes[j] & AL_KEY_PUNCT) punct += v;
                    if ((classes[j] & (AL_KEY_CLS | AL_KEY_SEP | AL_KEY_PUNCT)) || j == first) sink += v; /* once per key */
                }
                sum[AL_HS_ENTROPY] += causal ? causal_row_entropy(a, mask, i, k) : row_entropy(a, mask, L);
                sum[AL_HS_CONFIDENCE] += mx;
                sum[AL_HS_CLS] += cls;
                sum[AL_HS_SEP] += sep;
                sum[AL_HS_FIRST] += a[first];
                sum[AL_HS_PUNCT] += punct;
                sum[AL_HS_SINK] += sink;
                rows++;
                if (c) {
                    const float *crow = c + (size_t)i * L;
                    double mass = 0.0;
                    for (int j = 0; j < L; j++) mass += crow[j];
                    if (mass > 0.0) {
                        sum[AL_HS_JS] += js_row(a, crow, mask, L);
                        js_rows++;
                    }
                }
            }
            double *o = out + ((size_t)l * H + h) * AL_HS_N;
            for (int s = 0; s < AL_HS_N; s++) o[s] = rows ? sum[s] / rows : NAN;
            o[AL_HS_JS] = js_rows ? sum[AL_HS_JS] / js_rows : NAN;
        }
}

void al_head_stats_example_kind(const float *const *attn, int NL, int H, int L, const int32_t *mask,
                                const uint8_t *classes, const float *C, al_confidence_kind confidence, float *scratch,
                                double *out) {
    head_stats_rows(attn, NL, H, L, mask, classes, C, confidence, 0, scratch, out);
}

void al_causal_entropy_example(const float *attn, int H, int L, const int32_t *mask, double *out) {
    for (int h = 0; h < H; h++) {
        const float *A = attn + (size_t)h * L * L;
        double sum = 0.0;
        int rows = 0, k = 0; /* k: the real keys j <= i */
        for (int i = 0; i < L; i++) {
            if (!mask[i]) continue;
            if (++k < 2) continue; /* one key: the row is 1 there, its bound ln 1 = 0 */
            sum += causal_row_entropy(A + (size_t)i * L, mask, i, k);
            rows++;
        }
        out[h] = rows ? sum / rows : NAN;
    }
}

void al_causal_head_stats_example(const float *const *attn, int NL, int H, int L, const int32_t *mask,
                                  const uint8_t *classes, const float *C, al_confidence_kind confidence, float *scratch,
                                  double *out) {
    head_stats_rows(attn, NL, H, L, mask, classes, C, confidence, 1, scratch, out);
}
