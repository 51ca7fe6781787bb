/* measures.h: attention measures beside PAPA (docs/measures.md): norm-based attention (Kobayashi et al.
 * 2020, 2021), attention rollout (Abnar & Zuidema 2020) and head statistics over a dataset (entropy,
 * confidence, sink mass, input dependence against PAPA's constant matrices). Everything is computed in
 * double, in a fixed order, one example at a time, so the numbers do not depend on threads or build.
 * Pads (mask 0) are neither queries nor keys: their rows and columns are 0. Not public. */
#ifndef AL_METHODS_MEASURES_H
#define AL_METHODS_MEASURES_H

#include <stdint.h>

#include "../../attnlab.h"

/* ---------------------------------------------------------------- norm-based attention */

/* One layer of one example: x [L, D] the layer's input (hidden_states[layer]), attn [H, L, L] and
 * values [H, L, dh] (bias included) as al_forward returns them for that example, mask [L].
 * Outputs (any may be NULL):
 *   head_norms [H, L, L]: alpha_h[i, j] * ||f_h(x_j)||, f_h(x) = (x W_V + b_V)_h W_O^h (the head's rows
 *                         of W_O, i.e. its columns of the nn.Linear weight);
 *   layer_norms [L, L]:   ||sum_h alpha_h[i, j] f_h(x_j)||;
 *   res_ln [L, L]:        ||g_i(sum_h alpha_h[i, j] f_h(x_j) + [i == j] x_i)||, g_i(z) = gamma * (z - mean(z))
 *                         / sqrt(var(u_i) + eps), u_i the vector the layer's first LayerNorm normalises.
 * value_norms [H, L] (or NULL): ||f_h(x_j)||. */
typedef struct al_norm_outputs {
    float *head_norms, *layer_norms, *res_ln, *value_norms;
} al_norm_outputs;

al_status al_norm_attention_layer(const al_model *model, int layer, const float *x, const float *attn,
                                  const float *values, const int32_t *mask, int L, const al_norm_outputs *out,
                                  al_error *err);

/* The same with an explicit output projection, for tests: o_w [D, D] (nn.Linear: out[r] = sum_c
 * o_w[r, c] in[c]), o_b [D], ln_g, ln_b [D] (NULL when res_ln is NULL). */
al_status al_norm_attention_weights(const float *o_w, const float *o_b, const float *ln_g, float ln_eps, int D,
                                    int H, const float *x, const float *attn, const float *values,
                                    const int32_t *mask, int L, const al_norm_outputs *out, al_error *err);

/* The same for heads of any width dh (a decoder's head_dim may differ from D / H): o_w [D, H * dh], values
 * [H, L, dh] per query head (the heads of a grouped-query group repeat their key/value head's values). */
al_status al_norm_attention_heads(const float *o_w, const float *o_b, const float *ln_g, float ln_eps, int D, int H,
                                  int dh, const float *x, const float *attn, const float *values, const int32_t *mask,
                                  int L, const al_norm_outputs *out, al_error *err);

/* One example's per-head summaries (docs/measures.md, "norm_mass"): head_norms [H, L, L] and value_norms
 * [H, L] of one layer as al_norm_attention_layer gives them; adds to mass[h] the mean over real queries i of
 * sum_j head_norms[h, i, j], and to vmean[h] (when not NULL) the mean over real tokens of value_norms[h, j].
 * An example with no real token adds nothing. */
void al_norm_head_mass(const float *head_norms, const float *value_norms, const int32_t *mask, int L, int H,
                       double *mass, double *vmean);

/* ---------------------------------------------------------------- attention rollout */

/* One example: maps[l] points at layer l's [H, L, L] (raw, effective or norm-based attention), mask [L].
 * Per layer: A = the mean over heads of the real block; when normalise_first, each row of A divided by its
 * sum (norm-based maps are not distributions); then A' = 0.5 (A + I), each row divided by its sum; the
 * rollout R_0 = A'_0, R_l = A'_l R_{l-1}. out [NL, L, L] holds R_l (pad rows and columns 0). */
al_status al_rollout(const float *const *maps, int NL, int H, int L, const int32_t *mask, int normalise_first,
                     float *out, al_error *err);

/* ---------------------------------------------------------------- head statistics */

enum {
    AL_HS_ENTROPY = 0,    /* -sum_j a_ij ln a_ij over the real keys */
    AL_HS_CONFIDENCE,     /* max_j a_ij */
    AL_HS_CLS,            /* attention mass on [CLS] keys */
    AL_HS_SEP,            /* on [SEP] keys */
    AL_HS_FIRST,          /* on the first real position */
    AL_HS_PUNCT,          /* on punctuation keys */
    AL_HS_JS,             /* Jensen-Shannon divergence (nats) from the head's constant row */
    AL_HS_SINK,           /* total sink mass: on keys that are [CLS], [SEP], the first real position or
                           * punctuation, each key counted once */
    AL_HS_N
};
extern const char *const al_head_stat_names[AL_HS_N]; /* "entropy", "confidence", "cls", "sep", "first", "punct", "js", "sink" */

/* One example's statistics per head: out [NL * H * AL_HS_N] (layer-major, then head, then statistic),
 * each the mean over the example's real query rows (AL_HS_JS over the rows the constant gives mass to;
 * NAN when none). attn [NL] pointers to the example's [H, L, L]; classes [L] (al_key_classes); C [NL, H,
 * L, L] PAPA's averaged constant matrices (NULL: AL_HS_JS is NAN), masked and row-normalised for this
 * example's keys as the forward pass does (al_head_mask_and_normalize). scratch: L * L floats. */
void al_head_stats_example(const float *const *attn, int NL, int H, int L, const int32_t *mask,
                           const uint8_t *classes, const float *C, float *scratch, double *out);

/* How AL_HS_CONFIDENCE reads a row (docs/measures.md, "Confidence"): the largest weight over every real key
 * (the default), or as Voita et al. (2019) define it, the largest weight over the keys that are not the
 * end-of-sentence token [SEP]. */
typedef enum al_confidence_kind { AL_CONFIDENCE_MAX = 0, AL_CONFIDENCE_VOITA } al_confidence_kind;
extern const char *const al_confidence_names[]; /* "max", "voita", NULL */

/* al_head_stats_example with the confidence read as `confidence` says. */
void al_head_stats_example_kind(const float *const *attn, int NL, int H, int L, const int32_t *mask,
                                const uint8_t *classes, const float *C, al_confidence_kind confidence, float *scratch,
                                double *out);

/* A causal model's entropy per head, rows of different lengths made comparable (docs/measures.md, "Causal
 * decoders"): attn [H, L, L] one example's layer, mask [L]. Row i of a decoder is a distribution over the k_i real
 * keys j <= i, so its entropy lies in [0, ln k_i]; out[h] is the mean over the real rows with k_i >= 2 of
 * -sum_j a_ij ln a_ij / ln k_i (0 for a one-hot row, 1 for the uniform row over the keys it may see), NAN when no
 * row has two keys. In double, in a fixed order. */
void al_causal_entropy_example(const float *attn, int H, int L, const int32_t *mask, double *out);

/* A causal model's head statistics (docs/measures.md, "Causal decoders"), the encoder's al_head_stats_example_kind
 * for rows that see k_i real keys j <= i: each statistic is the mean over the rows with k_i >= 2 (the first real
 * row, whose one key takes all its mass, is left out of every statistic), the entropy of a row divided by ln k_i
 * (al_causal_entropy_example's rule), the masses and the confidence over the keys j <= i as they are, js against
 * the constant row as the forward pass uses it on a causal head (its entries after i dropped, then masked and
 * normalised). Same arguments and layout as al_head_stats_example_kind; NAN where no row has two keys. */
#define AL_CAUSAL_ROW_RULE                                                                                          \
    "causal rows: each statistic over the rows that see at least 2 real keys (the first row is left out); a row's " \
    "entropy divided by ln k_i, k_i the real keys j <= i"
void al_causal_head_stats_example(const float *const *attn, int NL, int H, int L, const int32_t *mask,
                                  const uint8_t *classes, const float *C, al_confidence_kind confidence, float *scratch,
                                  double *out);

#endif
