/* adamw.h: AdamW as torch.optim.AdamW computes it (decoupled weight decay applied before the Adam
 * update), with Hugging Face Trainer's defaults and schedules, and global-norm gradient clipping as
 * torch.nn.utils.clip_grad_norm_. Deterministic: no randomness, fixed summation order. */
#ifndef AL_TRAIN_ADAMW_H
#define AL_TRAIN_ADAMW_H

#include <stddef.h>
#include <stdint.h>

#include "../attnlab.h"

typedef enum al_lr_schedule {
    AL_LR_LINEAR = 0,        /* linear warm-up from 0, then linear decay to 0 at total_steps (HF "linear") */
    AL_LR_CONSTANT = 1,      /* lr throughout (HF "constant"; warmup_steps ignored) */
    AL_LR_CONSTANT_WARMUP = 2, /* linear warm-up, then lr (HF "constant_with_warmup") */
} al_lr_schedule;

typedef struct al_adamw_config {
    float lr;             /* peak learning rate */
    float beta1, beta2;   /* 0.9, 0.999 */
    float eps;            /* 1e-8 */
    float weight_decay;   /* 0 (HF default); applied only where the decay mask says so */
    float max_grad_norm;  /* 1.0; <= 0 turns clipping off */
    int warmup_steps;     /* 0 */
    int total_steps;      /* AL_LR_LINEAR: the step at which lr reaches 0 */
    al_lr_schedule schedule;
} al_adamw_config;

al_adamw_config al_adamw_default_config(void); /* lr 5e-5 and the values above, AL_LR_LINEAR */

/* The learning-rate multiplier of update number `step` (0-based), as HF's LambdaLR gives it: with a
 * warm-up the first update uses 0. The learning rate used is cfg->lr times this. */
double al_lr_factor(const al_adamw_config *cfg, int step);

/* Global L2 norm over several gradient arrays (double accumulation); scales them all by
 * max_norm / (norm + 1e-6) when that is below 1, as clip_grad_norm_. Returns the norm before clipping.
 * max_norm <= 0 only measures. */
double al_clip_grad_norm(float *const *grads, const size_t *sizes, int n_groups, float max_norm);

typedef struct al_adamw al_adamw;

/* State for n parameters. decay (may be NULL: every parameter decays) is copied: 1 where weight decay
 * applies (see al_train_decay_mask), 0 elsewhere. */
al_status al_adamw_new(size_t n, const al_adamw_config *cfg, const uint8_t *decay, al_adamw **out, al_error *err);
void al_adamw_free(al_adamw *opt);

/* One update of params [n] from grads [n]: clips grads in place when max_grad_norm > 0 (over these n
 * values only; clip several groups together with al_clip_grad_norm and a config with max_grad_norm 0),
 * then the AdamW step with the scheduled learning rate. *grad_norm (may be NULL) gets the norm before
 * clipping; *lr_used (may be NULL) the learning rate applied. */
void al_adamw_step(al_adamw *opt, float *params, float *grads, double *grad_norm, double *lr_used);
int al_adamw_step_count(const al_adamw *opt); /* updates done so far */
/* The learning rate the next al_adamw_step would use: lr times the schedule's factor at the step count. */
double al_adamw_lr(const al_adamw *opt);
/* al_adamw_step's update without the clipping, at the learning rate given (the caller's schedule): for
 * groups clipped together with al_clip_grad_norm whose schedule is another optimiser's (pretraining's
 * sentence-order head, created mid-run, follows the encoder's learning rate while its bias correction
 * counts its own updates, as a parameter group added to torch.optim.AdamW mid-run does). */
void al_adamw_update(al_adamw *opt, float *params, const float *grads, double lr);

/* The optimiser's state, for checkpoints: first and second moments [n] (writable, so a checkpoint can
 * restore them) and the number of updates done. */
size_t al_adamw_size(const al_adamw *opt);
float *al_adamw_first_moments(al_adamw *opt);
float *al_adamw_second_moments(al_adamw *opt);
void al_adamw_set_step_count(al_adamw *opt, int step);

#endif
