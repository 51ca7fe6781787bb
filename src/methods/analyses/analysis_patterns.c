/* analysis_patterns.c: rule-based labels for Kovaleva et al.'s (2019) attention patterns. The rules
 * and thresholds are documented at al_attention_pattern in attnlab.h. */
#include <math.h>

#include "../../attnlab.h"

const char *al_pattern_name(al_pattern p) {
    switch (p) {
    case AL_PATTERN_VERTICAL: return "vertical";
    case AL_PATTERN_DIAGONAL: return "diagonal";
    case AL_PATTERN_VERTICAL_DIAGONAL: return "vertical+diagonal";
    case AL_PATTERN_BLOCK: return "block";
    case AL_PATTERN_HETEROGENEOUS: return "heterogeneous";
    }
    return "unknown";
}

al_pattern al_attention_pattern(const float *A, int L, const int32_t *mask, const uint8_t *classes,
                                const int32_t *segments, al_pattern_scores *scores) {
    const uint8_t delim = AL_KEY_CLS | AL_KEY_SEP | AL_KEY_PUNCT;
    int seen[2] = {0, 0};
    for (int t = 0; segments && t < L; t++)
        if ((!mask || mask[t]) && segments[t] >= 0 && segments[t] < 2) seen[segments[t]] = 1;
    const int pair = seen[0] && seen[1];
    double D = 0, V = 0, S = 0;
    int rows = 0, seg_rows = 0;
    for (int i = 0; i < L; i++) {
        if (mask && !mask[i]) continue;
        const float *row = A + (size_t)i * L;
        double total = 0;
        for (int j = 0; j < L; j++)
            if (!mask || mask[j]) total += fabs(row[j]);
        if (!(total > 0)) continue;
        double d = 0, v = 0, own = 0, rest = 0;
        for (int j = 0; j < L; j++) {
            if (mask && !mask[j]) continue;
            const double w = fabs(row[j]) / total;
            const int band = j >= i - 1 && j <= i + 1;
            if (band) d += w;
            if (classes && (classes[j] & delim)) {
                /* a delimiter's own (or neighbouring) cell is diagonal, not vertical */
                if (!band) v += w;
            } else if (pair && segments[i] >= 0) {
                rest += w;
                if (segments[j] == segments[i]) own += w;
            }
        }
        D += d, V += v, rows++;
        if (pair && segments[i] >= 0 && rest > 0) S += own / rest, seg_rows++;
    }
    if (rows) D /= rows, V /= rows;
    if (seg_rows) S /= seg_rows;
    if (scores) scores->vertical = (float)V, scores->diagonal = (float)D, scores->block = (float)S;
    if (V >= 0.25 && D >= 0.25 && V + D >= 0.6) return AL_PATTERN_VERTICAL_DIAGONAL;
    if (V > 0.5) return AL_PATTERN_VERTICAL;
    if (D > 0.5) return AL_PATTERN_DIAGONAL;
    if (pair && S >= 0.8) return AL_PATTERN_BLOCK;
    return AL_PATTERN_HETEROGENEOUS;
}
