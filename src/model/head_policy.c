/* head_policy.c: the attention hook rules of docs/head_policies.md (modes, static layers, validation,
 * mask_and_normalize), called by inference and training alike so both compute the same bits. */
#include "head_policy.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "../kernels/kernels.h"

static const char *const k_names[AL_HEAD_N_MODES] = {"standard", "constant", "mix", "zero"};
static const char *const k_upper[AL_HEAD_N_MODES] = {"STANDARD", "CONSTANT", "MIX", "ZERO"};

int al_head_mode_parse(const char *name, al_head_mode *out) {
    for (int i = 0; name && i < AL_HEAD_N_MODES; i++)
        if (strcmp(name, k_names[i]) == 0) {
            *out = (al_head_mode)i;
            return 1;
        }
    return 0;
}

void al_head_mode_list(char *buf, size_t size) {
    if (!size) return;
    buf[0] = '\0';
    for (int i = 0; i < AL_HEAD_N_MODES; i++) al_names_append(buf, size, k_names[i]);
}

int al_head_mode_needs_qk(al_head_mode mode) { return mode == AL_HEAD_STANDARD || mode == AL_HEAD_MIX; }
int al_head_mode_needs_constant(al_head_mode mode) {
    return mode == AL_HEAD_CONSTANT || mode == AL_HEAD_MIX;
}
int al_head_mode_is_static(al_head_mode mode) { return mode == AL_HEAD_CONSTANT || mode == AL_HEAD_ZERO; }

int al_head_layer_is_static(const al_head_policy *layer, int H) {
    for (int h = 0; layer && h < H; h++)
        if (al_head_mode_is_static(layer[h].mode)) return 1;
    return 0;
}

al_status al_head_policies_check(const al_head_policy *policies, int n_layers, int n_heads, int L,
                                 const char *who, al_error *err) {
    for (int i = 0; policies && i < n_layers * n_heads; i++) {
        const al_head_policy *p = &policies[i];
        const int l = i / n_heads, h = i % n_heads;
        if ((unsigned)p->mode >= AL_HEAD_N_MODES)
            return al_err(err, AL_ERR_INVALID, "%s: policy of layer %d head %d: unknown mode %d", who, l,
                          h, (int)p->mode);
        if (al_head_mode_needs_constant(p->mode) && !p->constant) {
            char size[32] = "";
            if (L > 0) snprintf(size, sizeof size, " [%d, %d]", L, L);
            return al_err(err, AL_ERR_INVALID, "%s: policy of layer %d head %d: %s needs a constant%s matrix",
                          who, l, h, k_upper[p->mode], size);
        }
        if (p->mode == AL_HEAD_MIX && !(p->lambda >= AL_HEAD_LAMBDA_MIN && p->lambda <= AL_HEAD_LAMBDA_MAX))
            return al_err(err, AL_ERR_INVALID, "%s: policy of layer %d head %d: MIX lambda %g is outside [0, 1]",
                          who, l, h, (double)p->lambda);
    }
    return AL_OK;
}

void al_head_drop_later_keys(float *p, int L) {
    for (int i = 0; i < L; i++) memset(p + (size_t)i * L + i + 1, 0, sizeof(float) * (size_t)(L - 1 - i));
}

void al_head_mask_and_normalize(float *p, const float *mask, int L) {
    for (int i = 0; i < L; i++) {
        float *row = p + (size_t)i * L;
        if (mask[i] == 0.0f) {
            memset(row, 0, sizeof(float) * (size_t)L);
            continue;
        }
        double l1 = 0.0; /* double: the row sum must be 1 to ~1e-7 at any L */
        for (int j = 0; j < L; j++) {
            if (mask[j] == 0.0f) row[j] = 0.0f;
            l1 += fabs((double)row[j]);
        }
        /* one reciprocal per row and a float multiply per entry: a division per entry cost a tenth of an
         * all-constant forward; the row still sums to 1 within a few float ulps */
        const double denom = l1 > AL_NORMALIZE_EPS ? l1 : AL_NORMALIZE_EPS;
        const float inv = (float)(1.0 / denom);
        for (int j = 0; j < L; j++) row[j] *= inv;
    }
}

void al_head_constant_hat(const float *constant, const float *mask, int L, float *out) {
    memcpy(out, constant, sizeof(float) * (size_t)L * L);
    al_head_mask_and_normalize(out, mask, L);
}

void al_head_mix(float lambda, const float *S, const float *chat, size_t n, float *out) {
    for (size_t e = 0; e < n; e++) out[e] = lambda * S[e] + (1.0f - lambda) * chat[e];
}

void al_head_final_probs(al_head_mode mode, float lambda, const float *constant, int layer_static,
                         const float *mask, int L, const float *S, float *P, float *chat) {
    const size_t LL = (size_t)L * L;
    switch (mode) {
    case AL_HEAD_STANDARD:
        if (P != S) memcpy(P, S, sizeof(float) * LL);
        break;
    case AL_HEAD_CONSTANT: al_head_constant_hat(constant, mask, L, P); break;
    case AL_HEAD_MIX:
        al_head_constant_hat(constant, mask, L, chat);
        al_head_mix(lambda, S, chat, LL, P);
        break;
    case AL_HEAD_ZERO: memset(P, 0, sizeof(float) * LL); break;
    }
    /* C_hat and 0 are already normalised; renormalise the heads that carry a softmax. */
    if (layer_static && al_head_mode_needs_qk(mode)) al_head_mask_and_normalize(P, mask, L);
}
