/* adam.c: AdamW's per-parameter rule (src/train/adamw.c sets its scalars) a vector at a time (vf: 4 lanes,
 * or 8 in adam_avx2.c), with the one-at-a-time rule's IEEE operations lane by lane: square root and
 * division are correctly rounded on every path (docs/kernels.md), so every element gets the same bits
 * whatever the vector width or where the tail starts. */
#include <math.h>

#include "kernels.h"
#include "path.h"
#include "simd.h"

void AL_KFN(al_adam_update)(const al_adam_rule *r, float *params, float *m, float *v, const float *grads,
                            const uint8_t *decay, size_t n) {
    const vf vb1 = vf_splat(r->beta1), vb2 = vf_splat(r->beta2);
    const vf vc1 = vf_splat(1.0f - r->beta1), vc2 = vf_splat(1.0f - r->beta2);
    const vf vbc2 = vf_splat(r->bc2_sqrt), veps = vf_splat(r->eps), vstep = vf_splat(r->step_size);
    /* a factor of 1 for every lane is what the mask would give when the factor itself is 1 (no weight
     * decay): then the mask is not read */
    const int uniform = r->decay_factor == 1.0f;
    const vf vone = vf_splat(1.0f);
    size_t i = 0;
    for (; i + AL_VF_LANES <= n; i += AL_VF_LANES) {
        const vf g = vf_load(grads + i);
        vf f = vone;
        if (!uniform) {
            float fl[AL_VF_LANES];
            for (int l = 0; l < AL_VF_LANES; l++) fl[l] = decay[i + l] ? r->decay_factor : 1.0f;
            f = vf_load(fl);
        }
        const vf p = vf_mul(vf_load(params + i), f); /* x * 1 is x: undecayed lanes keep their bits */
        const vf mi = vf_add(vf_mul(vf_load(m + i), vb1), vf_mul(g, vc1));
        const vf vi2 = vf_add(vf_mul(vf_load(v + i), vb2), vf_mul(vf_mul(g, g), vc2));
        const vf denom = vf_add(vf_div(vf_sqrt(vi2), vbc2), veps);
        vf_store(m + i, mi);
        vf_store(v + i, vi2);
        vf_store(params + i, vf_sub(p, vf_mul(vstep, vf_div(mi, denom))));
    }
    for (; i < n; i++) {
        const float g = grads[i];
        if (decay[i]) params[i] *= r->decay_factor;
        m[i] = m[i] * r->beta1 + g * (1.0f - r->beta1);
        v[i] = v[i] * r->beta2 + g * g * (1.0f - r->beta2);
        const float denom = sqrtf(v[i]) / r->bc2_sqrt + r->eps;
        params[i] -= r->step_size * (m[i] / denom);
    }
}

#ifndef AL_SIMD_AVX2
void al_adam_update(const al_adam_rule *r, float *params, float *m, float *v, const float *grads,
                    const uint8_t *decay, size_t n) {
    AL_KDISPATCH(al_adam_update, (r, params, m, v, grads, decay, n));
}
#endif
