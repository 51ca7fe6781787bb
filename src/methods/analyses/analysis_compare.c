/* analysis_compare.c: attention by tag of the key for one query row (Sun & Marasovic Figure 1) and
 * the cosine similarity of two models' attentions (Figure 3). Contracts in attnlab.h. */
#include <math.h>
#include <string.h>

#include "../../core/error.h"

al_status al_attention_by_tag(const float *layer_attentions, int B, int H, int L,
                              const int32_t *query, const int32_t *key_tags, int n_tags,
                              int use_mean, double *sums, double *counts, al_error *err) {
    if (!layer_attentions || !query || !key_tags || !sums || !counts || B < 1 || H < 1 || L < 1 ||
        n_tags < 1)
        return al_err(err, AL_ERR_INVALID, "attention by tag: bad arguments (B %d, H %d, L %d, "
                      "%d tags)", B, H, L, n_tags);
    for (int b = 0; b < B; b++) {
        const int q = query[b];
        if (q < 0 || q >= L)
            return al_err(err, AL_ERR_INVALID, "attention by tag: query[%d] = %d is outside [0, %d)",
                          b, q, L);
        const int32_t *tags = key_tags + (size_t)b * L;
        for (int tag = 0; tag < n_tags; tag++) {
            int present = 0;
            for (int t = 0; t < L && !present; t++) present = tags[t] == tag;
            if (!present) continue;
            counts[tag] += 1;
            for (int h = 0; h < H; h++) {
                const float *row = layer_attentions + (((size_t)b * H + h) * L + q) * L;
                double best = -INFINITY, sum = 0;
                int n = 0;
                for (int t = 0; t < L; t++) {
                    if (tags[t] != tag) continue;
                    if (row[t] > best) best = row[t];
                    sum += row[t];
                    n++;
                }
                sums[(size_t)tag * H + h] += use_mean ? sum / n : best;
            }
        }
    }
    return AL_OK;
}

al_status al_attention_cosine(const float *a, const float *b, int NL, int B, int H, int L,
                              const int32_t *mask, al_average avg, double *sums, double *count,
                              al_error *err) {
    if (!a || !b || !sums || !count || NL < 1 || B < 1 || H < 1 || L < 1)
        return al_err(err, AL_ERR_INVALID, "attention cosine: bad arguments (NL %d, B %d, H %d, "
                      "L %d)", NL, B, H, L);
    const double eps = 1e-6;
    int used = 0;
    for (int s = 0; s < B; s++) {
        const int32_t *m = mask && avg == AL_AVERAGE_EXACT ? mask + (size_t)s * L : NULL;
        int n_real = 0;
        for (int t = 0; t < L; t++) n_real += !m || m[t];
        if (!n_real) continue;
        used++;
        for (int l = 0; l < NL; l++)
            for (int h = 0; h < H; h++) {
                const size_t off = (((size_t)l * B + s) * H + h) * L * L;
                double dot = 0, na = 0, nb = 0;
                for (int i = 0; i < L; i++) {
                    if (m && !m[i]) continue;
                    for (int j = 0; j < L; j++) {
                        if (m && !m[j]) continue;
                        const double x = a[off + (size_t)i * L + j], y = b[off + (size_t)i * L + j];
                        dot += x * y, na += x * x, nb += y * y;
                    }
                }
                const double cosv = dot / (fmax(sqrt(na), eps) * fmax(sqrt(nb), eps));
                sums[(size_t)l * H + h] += avg == AL_AVERAGE_EXACT ? cosv : cosv / B;
            }
    }
    *count += avg == AL_AVERAGE_EXACT ? used : 1;
    return AL_OK;
}
