/* grad_ops.h: the elementary forward/backward pieces of the training path, each testable on its own
 * (tests/c/test_grad.c checks every one against finite differences). Row-major; "accumulate" means the
 * result is added to what the output already holds, as gradients of shared weights must be. */
#ifndef AL_TRAIN_GRAD_OPS_H
#define AL_TRAIN_GRAD_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "../attnlab.h"
#include "../core/rng.h"

/* LayerNorm forward as PyTorch (biased variance), keeping each row's mean and 1/sqrt(var + eps) for the
 * backward pass. Row statistics are accumulated in double. y may equal x. */
void al_tr_layernorm_fwd(const float *x, float *y, int rows, int dim, const float *gamma, const float *beta,
                         float eps, float *mean, float *rstd);
/* The same statistics, the output by the inference kernel al_layernorm (src/kernels/layernorm.c): a training
 * forward that must give al_forward's bits (the pre-norm layers', src/train/train_decoder.c). */
void al_tr_layernorm_kernel_fwd(const float *x, float *y, int rows, int dim, const float *gamma, const float *beta,
                                float eps, float *mean, float *rstd);
/* dx = dL/dx from dy = dL/dy (written, not accumulated; dx may equal dy); dgamma and dbeta are
 * accumulated (either may be NULL). x is the forward input with its saved mean and rstd. */
void al_tr_layernorm_bwd(const float *x, const float *mean, const float *rstd, const float *dy, int rows,
                         int dim, const float *gamma, float *dx, float *dgamma, float *dbeta);

/* RMSNorm (docs/decoders.md, "Llama"): the output by the inference kernel al_rmsnorm (src/kernels/rmsnorm.c), so a
 * training forward gives al_forward's bits, keeping each row's 1/sqrt(mean(x^2) + eps) (accumulated in double);
 * the backward writes dx (may equal dy) and accumulates dgamma (may be NULL). */
void al_tr_rmsnorm_kernel_fwd(const float *x, float *y, int rows, int dim, const float *gamma, float eps, float *rstd);
void al_tr_rmsnorm_bwd(const float *x, const float *rstd, const float *dy, int rows, int dim, const float *gamma,
                       float *dx, float *dgamma);

/* A gated feed-forward's middle, rows of pre [rows, 2I] = [u | g] (ModernBERT's input and gate, Llama's gate and
 * up): f = act(u) * g [rows, I]. The backward reads df from the second half of d_pre [rows, 2I] and writes
 * [du | dg] over it (du = df g act'(u), dg = df act(u)); act_u is scratch of I floats. */
void al_tr_glu_fwd(al_act act, const float *pre, float *f, int rows, int I);
void al_tr_glu_bwd(al_act act, const float *pre, float *d_pre, float *act_u, int rows, int I);

/* nn.Linear y = x W^T + b with x [rows, n_in], W [n_out, n_in]: dx = dy W (written, or added when
 * dx_accumulate; skipped when dx is NULL), dW += dy^T x and db += column sums of dy (each skipped when
 * NULL). */
void al_tr_linear_bwd(int rows, int n_out, int n_in, const float *x, const float *W, const float *dy, float *dx,
                      int dx_accumulate, float *dW, float *db);
/* The same with the two products split over a pool by column blocks (the same bits for any pool). */
void al_tr_linear_bwd_pool(al_threadpool *pool, int rows, int n_out, int n_in, const float *x, const float *W,
                           const float *dy, float *dx, int dx_accumulate, float *dW, float *db);

/* Activation in place (the inference kernels) and its backward: dx = dy * act'(pre), where pre is the
 * activation's input. dx may equal dy. */
void al_tr_act_fwd(al_act act, float *x, size_t n);
void al_tr_act_bwd(al_act act, const float *pre, const float *dy, float *dx, size_t n);

/* Row softmax backward: p = softmax(z) per row, dz = p * (dp - sum(dp * p)). dz may equal dp. */
void al_tr_softmax_bwd(const float *p, const float *dp, float *dz, int rows, int cols);

/* Backward of PAPA's mask_and_normalize (al_head_mask_and_normalize) on one [L, L] matrix: r is the input
 * before normalisation, dp the gradient of the output; dr is written (pad rows and pad columns get 0). */
void al_tr_mask_normalize_bwd(const float *r, const float *mask, const float *dp, float *dr, int L);

/* Dropout: keep[i] = 1 with probability 1 - p (drawn from rng, one uniform per element, in order);
 * apply multiplies x by keep / (1 - p). p <= 0 keeps everything without drawing. */
void al_tr_dropout_draw(al_rng *rng, uint8_t *keep, size_t n, float p);
void al_tr_dropout_apply(float *x, const uint8_t *keep, size_t n, float p);

/* Mean cross-entropy over n >= 1 rows of logits [n, V] with labels in [0, V): returns the mean loss
 * (double accumulation) and overwrites logits with its gradient (softmax - onehot) / n. */
double al_tr_cross_entropy(float *logits, const int32_t *labels, int n, int V);

#endif
