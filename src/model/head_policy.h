/* head_policy.h: the rules of the per-(layer, head) attention hooks, in one place for the inference
 * pass (attention.c, forward.c), the training pass (src/train/train_attention.c, train_ctx.c) and the
 * JSON API's policy reader (src/api/attention_policies.c). docs/head_policies.md states the rules.
 * Not public. */
#ifndef AL_MODEL_HEAD_POLICY_H
#define AL_MODEL_HEAD_POLICY_H

#include <stddef.h>

#include "../attnlab.h"

/* HF BERT/RoBERTa's additive mask on pad keys (older transformers; the softmax gives them exactly 0). */
#define AL_MASK_ADD (-10000.0f)
/* torch.nn.functional.normalize's eps in PAPA's mask_and_normalize. */
#define AL_NORMALIZE_EPS 1e-12
/* The range of a MIX head's lambda. */
#define AL_HEAD_LAMBDA_MIN 0.0f
#define AL_HEAD_LAMBDA_MAX 1.0f
#define AL_HEAD_N_MODES 4

/* The mode named `name`; 0 when no mode has that name. */
int al_head_mode_parse(const char *name, al_head_mode *out);
/* "standard, constant, mix, zero" into buf (for error messages). */
void al_head_mode_list(char *buf, size_t size);

int al_head_mode_needs_qk(al_head_mode mode);       /* STANDARD, MIX: Q, K and a softmax */
int al_head_mode_needs_constant(al_head_mode mode); /* CONSTANT, MIX: a constant [L, L] matrix */
int al_head_mode_is_static(al_head_mode mode);      /* CONSTANT, ZERO: makes its layer static */
/* One layer's [H] policies (NULL: all standard): 1 when a head is CONSTANT or ZERO. */
int al_head_layer_is_static(const al_head_policy *layer, int H);

/* Checks [n_layers * n_heads] policies (layer-major): a known mode, a constant for CONSTANT and MIX,
 * lambda in [0, 1] for MIX. `who` prefixes the message ("forward", "train"); L > 0 is the constant's
 * expected size, named in the message. NULL policies are valid (all standard). */
al_status al_head_policies_check(const al_head_policy *policies, int n_layers, int n_heads, int L,
                                 const char *who, al_error *err);

/* PAPA's mask_and_normalize on one [L, L] matrix, in place: P * (m m^T), rows L1-normalised with eps
 * 1e-12. Pad-query rows become 0; a row with no mass on valid keys becomes 0 (no NaN). */
void al_head_mask_and_normalize(float *p, const float *mask, int L);
/* A causal head reads no later token, constant or not (docs/head_policies.md): the entries of one [L, L]
 * matrix above the diagonal set to 0, in place, before it is masked and normalised as in any family. */
void al_head_drop_later_keys(float *p, int L);
/* C_hat = mask_and_normalize(C) for one sequence's mask into out [L, L]. */
void al_head_constant_hat(const float *constant, const float *mask, int L, float *out);
/* out[e] = lambda S[e] + (1 - lambda) chat[e] for n entries (out may equal S). */
void al_head_mix(float lambda, const float *S, const float *chat, size_t n, float *out);
/* The head's final probabilities P [L, L] from its softmax S (read for STANDARD and MIX; P may equal
 * S): the mode's rule, then mask_and_normalize when the layer is static and the head carries a
 * softmax. lambda and constant as the policy's; chat is [L, L] scratch (MIX). */
void al_head_final_probs(al_head_mode mode, float lambda, const float *constant, int layer_static,
                         const float *mask, int L, const float *S, float *P, float *chat);

#endif
