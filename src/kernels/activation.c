/* activation.c: in-place GELU (erf and tanh forms), ReLU and SiLU over n values, and their backward (the
 * incoming gradient times the derivative at the input), a vector (vf: 4 lanes, or 8 in activation_avx2.c) at a
 * time; the tail goes through the same vector code on a padded copy so every element gets the same bits,
 * whatever its place and the vector width. */
#include "kernels.h"
#include "path.h"
#include "vmath.h"

/* GELU as PyTorch writes it: x * 0.5 * (1 + erf(x * M_SQRT1_2)). */
static inline vf gelu_v(vf x) {
    vf e = vf_erf(vf_mul(x, vf_splat(0.707106781186547524f)));
    return vf_mul(vf_mul(x, vf_splat(0.5f)), vf_add(vf_splat(1.0f), e));
}

/* PyTorch's tanh form: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))). */
static inline vf gelu_tanh_v(vf x) {
    vf x3 = vf_mul(vf_mul(x, x), x);
    vf inner = vf_mul(vf_splat(0.797884560802865355f), vf_add(x, vf_mul(vf_splat(0.044715f), x3)));
    vf t = vf_tanh(inner);
    return vf_mul(vf_mul(vf_splat(0.5f), x), vf_add(vf_splat(1.0f), t));
}

/* max(x, 0) with NaN kept (as torch.relu). */
static inline vf relu_v(vf x) {
    vf r = vf_max(x, vf_splat(0.0f));
    return vf_select(vf_isnan(x), x, r);
}

/* SiLU as PyTorch writes it: x * sigmoid(x), here x / (1 + exp(-x)) (one rounding fewer than x * (1 / (1 +
 * exp(-x))); the same on every path). */
static inline vf silu_v(vf x) {
    vf e = vf_exp(vf_sub(vf_splat(0.0f), x));
    return vf_div(x, vf_add(vf_splat(1.0f), e));
}

/* The derivatives, each term in the order the scalar formula writes it (kernels.h), so that every path, and a
 * scalar loop over al_erff/al_expf/al_tanhf (lane 0 of these same functions), gives the same bits. */
static inline vf gelu_grad_v(vf x) { /* Phi(x) + x phi(x) */
    vf cdf = vf_mul(vf_splat(0.5f), vf_add(vf_splat(1.0f), vf_erf(vf_mul(x, vf_splat(0.707106781186547524f)))));
    vf pdf = vf_mul(vf_splat(0.398942280401432678f), vf_exp(vf_mul(vf_mul(vf_splat(-0.5f), x), x)));
    return vf_add(cdf, vf_mul(x, pdf));
}

static inline vf gelu_tanh_grad_v(vf x) { /* 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2) */
    const float c = 0.797884560802865355f, a = 0.044715f;
    vf t = vf_tanh(vf_mul(vf_splat(c), vf_add(x, vf_mul(vf_mul(vf_mul(vf_splat(a), x), x), x))));
    vf left = vf_mul(vf_splat(0.5f), vf_add(vf_splat(1.0f), t));
    vf right = vf_mul(vf_mul(vf_mul(vf_mul(vf_splat(0.5f), x), vf_sub(vf_splat(1.0f), vf_mul(t, t))), vf_splat(c)),
                      vf_add(vf_splat(1.0f), vf_mul(vf_mul(vf_splat(3.0f * a), x), x)));
    return vf_add(left, right);
}

static inline vf silu_grad_v(vf x) { /* s (1 + x (1 - s)), s = 1 / (1 + exp(-x)) */
    vf s = vf_div(vf_splat(1.0f), vf_add(vf_splat(1.0f), vf_exp(vf_sub(vf_splat(0.0f), x))));
    return vf_mul(s, vf_add(vf_splat(1.0f), vf_mul(x, vf_sub(vf_splat(1.0f), s))));
}

static inline vf relu_grad_v(vf x) { /* 1 where x > 0, else 0 (NaN included) */
    return vf_select(vf_lt(vf_splat(0.0f), x), vf_splat(1.0f), vf_splat(0.0f));
}

#define W AL_VF_LANES
#define AL_APPLY_INPLACE(fn, x, n)                                             \
    do {                                                                       \
        size_t i_ = 0;                                                         \
        for (; i_ + 2 * W <= (n); i_ += 2 * W) {                               \
            vf u_ = fn(vf_load((x) + i_));                                     \
            vf w_ = fn(vf_load((x) + i_ + W));                                 \
            vf_store((x) + i_, u_);                                            \
            vf_store((x) + i_ + W, w_);                                        \
        }                                                                      \
        for (; i_ + W <= (n); i_ += W) vf_store((x) + i_, fn(vf_load((x) + i_))); \
        if (i_ < (n)) {                                                        \
            const size_t r_ = (n) - i_;                                        \
            vf_store_part((x) + i_, fn(vf_load_part((x) + i_, r_)), r_);       \
        }                                                                      \
    } while (0)

/* dx = dy * grad(pre); dx may be dy. */
#define AL_APPLY_GRAD(grad, pre, dy, dx, n)                                                   \
    do {                                                                                      \
        size_t i_ = 0;                                                                        \
        for (; i_ + W <= (n); i_ += W)                                                        \
            vf_store((dx) + i_, vf_mul(vf_load((dy) + i_), grad(vf_load((pre) + i_))));        \
        if (i_ < (n)) {                                                                       \
            const size_t r_ = (n) - i_;                                                       \
            vf_store_part((dx) + i_, vf_mul(vf_load_part((dy) + i_, r_), grad(vf_load_part((pre) + i_, r_))), r_); \
        }                                                                                     \
    } while (0)

void AL_KFN(al_gelu)(float *x, size_t n) { AL_APPLY_INPLACE(gelu_v, x, n); }
void AL_KFN(al_gelu_tanh)(float *x, size_t n) { AL_APPLY_INPLACE(gelu_tanh_v, x, n); }
void AL_KFN(al_relu)(float *x, size_t n) { AL_APPLY_INPLACE(relu_v, x, n); }
void AL_KFN(al_silu)(float *x, size_t n) { AL_APPLY_INPLACE(silu_v, x, n); }
void AL_KFN(al_gelu_bwd)(const float *pre, const float *dy, float *dx, size_t n) { AL_APPLY_GRAD(gelu_grad_v, pre, dy, dx, n); }
void AL_KFN(al_gelu_tanh_bwd)(const float *pre, const float *dy, float *dx, size_t n) {
    AL_APPLY_GRAD(gelu_tanh_grad_v, pre, dy, dx, n);
}
void AL_KFN(al_relu_bwd)(const float *pre, const float *dy, float *dx, size_t n) { AL_APPLY_GRAD(relu_grad_v, pre, dy, dx, n); }
void AL_KFN(al_silu_bwd)(const float *pre, const float *dy, float *dx, size_t n) { AL_APPLY_GRAD(silu_grad_v, pre, dy, dx, n); }

#ifndef AL_SIMD_AVX2
void al_gelu(float *x, size_t n) { AL_KDISPATCH(al_gelu, (x, n)); }
void al_gelu_tanh(float *x, size_t n) { AL_KDISPATCH(al_gelu_tanh, (x, n)); }
void al_relu(float *x, size_t n) { AL_KDISPATCH(al_relu, (x, n)); }
void al_silu(float *x, size_t n) { AL_KDISPATCH(al_silu, (x, n)); }
void al_gelu_bwd(const float *pre, const float *dy, float *dx, size_t n) { AL_KDISPATCH(al_gelu_bwd, (pre, dy, dx, n)); }
void al_gelu_tanh_bwd(const float *pre, const float *dy, float *dx, size_t n) {
    AL_KDISPATCH(al_gelu_tanh_bwd, (pre, dy, dx, n));
}
void al_relu_bwd(const float *pre, const float *dy, float *dx, size_t n) { AL_KDISPATCH(al_relu_bwd, (pre, dy, dx, n)); }
void al_silu_bwd(const float *pre, const float *dy, float *dx, size_t n) { AL_KDISPATCH(al_silu_bwd, (pre, dy, dx, n)); }
#endif
