/* adamw.c: AdamW (torch.optim.AdamW's single-tensor update, step by step), HF learning-rate schedules and
 * global-norm clipping. */
#include "adamw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/memory.h"
#include "../kernels/kernels.h"

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
    o->m = al_alloc_large((n ? n : 1) * sizeof(float), 1);
    o->v = al_alloc_large((n ? n : 1) * sizeof(float), 1);
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
    al_free_large(o->m);
    al_free_large(o->v);
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
    const double bc1 = 1.0 - pow((double)c->beta1, o->step), bc2 = 1.0 - pow((double)c->beta2, o->step);
    const al_adam_rule rule = {c->beta1, c->beta2, c->eps, (float)(lr / bc1), (float)sqrt(bc2),
                               (float)(1.0 - lr * c->weight_decay)};
    /* the rule a vector at a time (src/kernels/adam.c: the same bits as one at a time); memory-bound (28
     * bytes a parameter), so splitting it over the pool measured no faster (docs/speed.md) */
    al_adam_update(&rule, params, o->m, o->v, grads, o->decay, o->n);
}

size_t al_adamw_size(const al_adamw *opt) { return opt->n; }
float *al_adamw_first_moments(al_adamw *opt) { return opt->m; }
float *al_adamw_second_moments(al_adamw *opt) { return opt->v; }
void al_adamw_set_step_count(al_adamw *opt, int step) { opt->step = step; }
