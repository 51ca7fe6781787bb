/* adamw.c: AdamW (torch.optim.AdamW's single-tensor update, step by step), HF learning-rate schedules and
 * global-norm clipping. */
#include "adamw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../kernels/simd.h"

struct al_adamw {
    al_adamw_config cfg;
    size_t n;
    int step;          /* updates done */
    float *m, *v;      /* [n] first and second moments */
    uint8_t *decay;    /* [n] */
};

al_adamw_config al_adamw_default_config(void) {
    al_adamw_config c;
    memset(&c, 0, sizeof c);
    c.lr = 5e-5f;
    c.beta1 = 0.9f;
    c.beta2 = 0.999f;
    c.eps = 1e-8f;
    c.weight_decay = 0.0f;
    c.max_grad_norm = 1.0f;
    c.schedule = AL_LR_LINEAR;
    return c;
}

double al_lr_factor(const al_adamw_config *cfg, int step) {
    const int warm = cfg->warmup_steps > 0 ? cfg->warmup_steps : 0;
    if (cfg->schedule == AL_LR_CONSTANT) return 1.0;
    if (step < warm) return (double)step / (double)(warm > 1 ? warm : 1);
    if (cfg->schedule == AL_LR_CONSTANT_WARMUP) return 1.0;
    const int span = cfg->total_steps - warm;
    const double f = (double)(cfg->total_steps - step) / (double)(span > 1 ? span : 1);
    return f > 0.0 ? f : 0.0;
}

double al_clip_grad_norm(float *const *grads, const size_t *sizes, int n_groups, float max_norm) {
    double sq = 0.0;
    for (int g = 0; g < n_groups; g++)
        for (size_t i = 0; i < sizes[g]; i++) sq += (double)grads[g][i] * grads[g][i];
    const double norm = sqrt(sq);
    if (max_norm > 0.0f) {
        const double coef = (double)max_norm / (norm + 1e-6);
        if (coef < 1.0)
            for (int g = 0; g < n_groups; g++)
                for (size_t i = 0; i < sizes[g]; i++) grads[g][i] = (float)(grads[g][i] * coef);
    }
    return norm;
}

al_status al_adamw_new(size_t n, const al_adamw_config *cfg, const uint8_t *decay, al_adamw **out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "adamw: no output pointer");
    *out = NULL;
    if (!cfg) return al_err(err, AL_ERR_INVALID, "adamw: config is NULL");
    if (!(cfg->lr >= 0.0f)) return al_err(err, AL_ERR_INVALID, "adamw: lr %g must be >= 0", (double)cfg->lr);
    if (!(cfg->beta1 >= 0.0f && cfg->beta1 < 1.0f) || !(cfg->beta2 >= 0.0f && cfg->beta2 < 1.0f))
        return al_err(err, AL_ERR_INVALID, "adamw: betas (%g, %g) must be in [0, 1)", (double)cfg->beta1,
                      (double)cfg->beta2);
    if (!(cfg->eps > 0.0f)) return al_err(err, AL_ERR_INVALID, "adamw: eps %g must be > 0", (double)cfg->eps);
    if (!(cfg->weight_decay >= 0.0f))
        return al_err(err, AL_ERR_INVALID, "adamw: weight_decay %g must be >= 0", (double)cfg->weight_decay);
    if (cfg->schedule == AL_LR_LINEAR && cfg->total_steps < 1)
        return al_err(err, AL_ERR_INVALID, "adamw: the linear schedule needs total_steps >= 1 (got %d)",
                      cfg->total_steps);
    al_adamw *o = calloc(1, sizeof *o);
    if (!o) return al_err(err, AL_ERR_OOM, "adamw: out of memory");
    o->cfg = *cfg;
    o->n = n;
    o->m = calloc(n ? n : 1, sizeof(float));
    o->v = calloc(n ? n : 1, sizeof(float));
    o->decay = malloc(n ? n : 1);
    if (!o->m || !o->v || !o->decay) {
        al_adamw_free(o);
        return al_err(err, AL_ERR_OOM, "adamw: out of memory for %zu parameters", n);
    }
    if (decay) memcpy(o->decay, decay, n);
    else memset(o->decay, 1, n);
    *out = o;
    return AL_OK;
}

void al_adamw_free(al_adamw *o) {
    if (!o) return;
    free(o->m);
    free(o->v);
    free(o->decay);
    free(o);
}

int al_adamw_step_count(const al_adamw *o) { return o ? o->step : 0; }

double al_adamw_lr(const al_adamw *o) { return (double)o->cfg.lr * al_lr_factor(&o->cfg, o->step); }

void al_adamw_step(al_adamw *o, float *params, float *grads, double *grad_norm, double *lr_used) {
    float *groups[1] = {grads};
    size_t sizes[1] = {o->n};
    const double norm = al_clip_grad_norm(groups, sizes, 1, o->cfg.max_grad_norm);
    const double lr = al_adamw_lr(o);
    al_adamw_update(o, params, grads, lr);
    if (grad_norm) *grad_norm = norm;
    if (lr_used) *lr_used = lr;
}

void al_adamw_update(al_adamw *o, float *params, const float *grads, double lr) {
    const al_adamw_config *c = &o->cfg;
    o->step++;
    const float b1 = c->beta1, b2 = c->beta2;
    const double bc1 = 1.0 - pow((double)b1, o->step), bc2 = 1.0 - pow((double)b2, o->step);
    const float step_size = (float)(lr / bc1), bc2_sqrt = (float)sqrt(bc2);
    const float decay_factor = (float)(1.0 - lr * c->weight_decay);
    /* 4 elements at a time with the scalar loop's operations lane by lane (IEEE square root and division
     * are correctly rounded on every path, docs/kernels.md): the same bits, without a scalar division and
     * square root per parameter, which cost as much as a probe's matrix products per step */
    const v4f vb1 = v4f_splat(b1), vb2 = v4f_splat(b2), vc1 = v4f_splat(1.0f - b1), vc2 = v4f_splat(1.0f - b2);
    const v4f vbc2 = v4f_splat(bc2_sqrt), veps = v4f_splat(c->eps), vstep = v4f_splat(step_size);
    size_t i = 0;
    for (; i + 4 <= o->n; i += 4) {
        const v4f g = v4f_load(grads + i);
        const float f[4] = {o->decay[i] ? decay_factor : 1.0f, o->decay[i + 1] ? decay_factor : 1.0f,
                            o->decay[i + 2] ? decay_factor : 1.0f, o->decay[i + 3] ? decay_factor : 1.0f};
        const v4f p = v4f_mul(v4f_load(params + i), v4f_load(f)); /* x * 1 is x: undecayed lanes keep their bits */
        const v4f m = v4f_add(v4f_mul(v4f_load(o->m + i), vb1), v4f_mul(g, vc1));
        const v4f v = v4f_add(v4f_mul(v4f_load(o->v + i), vb2), v4f_mul(v4f_mul(g, g), vc2));
        const v4f denom = v4f_add(v4f_div(v4f_sqrt(v), vbc2), veps);
        v4f_store(o->m + i, m);
        v4f_store(o->v + i, v);
        v4f_store(params + i, v4f_sub(p, v4f_mul(vstep, v4f_div(m, denom))));
    }
    for (; i < o->n; i++) {
        const float g = grads[i];
        if (o->decay[i]) params[i] *= decay_factor;
        o->m[i] = o->m[i] * b1 + g * (1.0f - b1);
        o->v[i] = o->v[i] * b2 + g * g * (1.0f - b2);
        const float denom = sqrtf(o->v[i]) / bc2_sqrt + c->eps;
        params[i] -= step_size * (o->m[i] / denom);
    }
}

size_t al_adamw_size(const al_adamw *opt) { return opt->n; }
float *al_adamw_first_moments(al_adamw *opt) { return opt->m; }
float *al_adamw_second_moments(al_adamw *opt) { return opt->v; }
void al_adamw_set_step_count(al_adamw *opt, int step) { opt->step = step; }
