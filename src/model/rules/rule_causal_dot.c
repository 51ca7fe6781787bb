/* rule_causal_dot.c: GPT-2's attention scores (score_rule.h, docs/decoders.md "GPT-2"):
 *
 *   S = softmax over the keys j <= i of Q K^T / sqrt(dh)
 *
 * Positions are in the embeddings (learned); no turn of Q and K. Future and pad keys are excluded, not given a
 * large negative score (causal_rows.c), so a row is exactly independent of what follows it: the key/value cache
 * (decode.c) computes the same bits one token at a time. */
#include <math.h>

#include "../../core/error.h"
#include "../../kernels/kernels.h"
#include "../family_params.h"
#include "../score_rule.h"
#include "causal_steps.h"

static void probs(const al_score_layer *ly, const al_score_head *hd, float *out) {
    const al_config *c = ly->c;
    const int L = hd->L, dh = c->head_dim, A = al_attn_width(c);
    const al_causal_keys keys = al_causal_keys_of(ly, hd);
    al_gemm_nt(L, L, dh, 1.0f / sqrtf((float)dh), hd->q, A, hd->k, A, out, L, 0);
    for (int i = 0; i < L; i++) al_causal_softmax_row(out + (size_t)i * L, L, i, &keys);
}

static float divisor(const al_config *c) { return sqrtf((float)c->head_dim); }

static void steps(al_score_steps *st) { al_causal_steps(st, -1, 0, 0.0); }

const al_score_rule al_rule_causal_dot = {
    .name = "causal_dot",
    .probs = probs,
    .divisor = divisor,
    .steps = steps,
};
