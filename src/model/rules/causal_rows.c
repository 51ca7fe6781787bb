/* causal_rows.c: which keys a causal query reads, and the softmax over them (score_rule.h), shared by the causal
 * score rules (rule_causal_dot.c, rule_causal_rotary.c), head_steps (causal_steps.c) and the key/value-cache path
 * (src/model/decode.c), so that a generated token's row is the forward's row bit for bit (docs/decoders.md, "Causal
 * attention").
 *
 * Query i reads key j when j <= i (by index: a packed or cached sequence keeps its order), key j is a real token,
 * in a windowed layer pos[i] - pos[j] < window (Qwen2's sliding window: itself and the window - 1 keys before it),
 * and, when the caller asks for StreamingLLM's window and sinks (al_forward_params key_window = recent, key_sinks
 * = sinks), pos[i] - pos[j] < recent or pos[j] < sinks (docs/decoders.md, "Window and sinks"). The rules are by
 * position id, so a packed batch (skip_pads) reads the same keys as its padded layout. The allowed scores are
 * packed to the row's front in key order, their softmax taken over exactly those, and spread back with zeros
 * elsewhere: the row depends only on the allowed keys, never on how many excluded ones follow. A row with no key
 * left (a pad query before any real key) is all zeros. */
#include "../../kernels/kernels.h"
#include "../score_rule.h"

int al_causal_key_allowed(const al_causal_keys *keys, int i, int j) {
    if (j > i) return 0;
    if (keys->mask && keys->mask[j] == 0.0f) return 0;
    const int32_t gap = keys->pos[i] - keys->pos[j];
    if (keys->window > 0 && gap >= keys->window) return 0;
    return keys->recent <= 0 || gap < keys->recent || keys->pos[j] < keys->sinks;
}

void al_causal_softmax_row(float *row, int n_keys, int i, const al_causal_keys *keys) {
    int n = 0;
    for (int j = 0; j < n_keys; j++)
        if (al_causal_key_allowed(keys, i, j)) row[n++] = row[j]; /* each moves left or stays */
    if (n > 0) al_softmax_rows(row, 1, n, n);
    for (int j = n_keys - 1; j >= 0; j--) row[j] = al_causal_key_allowed(keys, i, j) ? row[--n] : 0.0f;
}

al_causal_keys al_causal_keys_of(const al_score_layer *ly, const al_score_head *hd) {
    const al_causal_keys keys = {hd->mask, hd->pos, ly->window, ly->key_window, ly->key_sinks};
    return keys;
}
