/* causal_rows.c: which keys a causal query reads, and the softmax over them (score_rule.h), shared by the causal
 * score rules (rule_causal_dot.c, rule_causal_rotary.c) and the key/value-cache path (src/model/decode.c), so that
 * a generated token's row is the forward's row bit for bit (docs/decoders.md, "Causal attention").
 *
 * Query i reads key j when j <= i (by index: a packed or cached sequence keeps its order), key j is a real token,
 * and, in a windowed layer, pos[i] - pos[j] < window (Qwen2's sliding window: itself and the window - 1 keys
 * before it). The allowed scores are packed to the row's front in key order, their softmax taken over exactly
 * those, and spread back with zeros elsewhere: the row depends only on the allowed keys, never on how many
 * excluded ones follow. A row with no key left (a pad query before any real key) is all zeros. */
#include "../../kernels/kernels.h"
#include "../score_rule.h"

int al_causal_key_allowed(int i, int j, const float *mask, const int32_t *pos, int window) {
    if (j > i) return 0;
    if (mask && mask[j] == 0.0f) return 0;
    return window <= 0 || pos[i] - pos[j] < window;
}

void al_causal_softmax_row(float *row, int n_keys, int i, const float *mask, const int32_t *pos, int window) {
    int n = 0;
    for (int j = 0; j < n_keys; j++)
        if (al_causal_key_allowed(i, j, mask, pos, window)) row[n++] = row[j]; /* each moves left or stays */
    if (n > 0) al_softmax_rows(row, 1, n, n);
    for (int j = n_keys - 1; j >= 0; j--) row[j] = al_causal_key_allowed(i, j, mask, pos, window) ? row[--n] : 0.0f;
}
