/* activation.c: in-place GELU (erf and tanh forms) and ReLU over n values, 4 lanes at a time; the
 * tail goes through the same vector code on a padded copy so every element gets the same bits. */
#include "kernels.h"
#include "vmath.h"

/* GELU as PyTorch writes it: x * 0.5 * (1 + erf(x * M_SQRT1_2)). */
static inline v4f gelu4(v4f x) {
    v4f e = v4f_erf(v4f_mul(x, v4f_splat(0.707106781186547524f)));
    return v4f_mul(v4f_mul(x, v4f_splat(0.5f)), v4f_add(v4f_splat(1.0f), e));
}

/* PyTorch's tanh form: 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))). */
static inline v4f gelu_tanh4(v4f x) {
    v4f x3 = v4f_mul(v4f_mul(x, x), x);
    v4f inner = v4f_mul(v4f_splat(0.797884560802865355f), v4f_add(x, v4f_mul(v4f_splat(0.044715f), x3)));
    v4f t = v4f_tanh(inner);
    return v4f_mul(v4f_mul(v4f_splat(0.5f), x), v4f_add(v4f_splat(1.0f), t));
}

/* max(x, 0) with NaN kept (as torch.relu). */
static inline v4f relu4(v4f x) {
    v4f r = v4f_max(x, v4f_splat(0.0f));
    return v4f_select(v4f_isnan(x), x, r);
}

#define AL_APPLY_INPLACE(fn, x, n)                              \
    do {                                                        \
        size_t i_ = 0;                                          \
        for (; i_ + 8 <= (n); i_ += 8) {                        \
            v4f u_ = fn(v4f_load((x) + i_));                    \
            v4f w_ = fn(v4f_load((x) + i_ + 4));                \
            v4f_store((x) + i_, u_);                            \
            v4f_store((x) + i_ + 4, w_);                        \
        }                                                       \
        for (; i_ + 4 <= (n); i_ += 4)                          \
            v4f_store((x) + i_, fn(v4f_load((x) + i_)));        \
        if (i_ < (n)) {                                         \
            float tail_[4] = {0.0f, 0.0f, 0.0f, 0.0f};          \
            size_t rest_ = (n) - i_;                            \
            for (size_t j_ = 0; j_ < rest_; j_++) tail_[j_] = (x)[i_ + j_]; \
            v4f_store(tail_, fn(v4f_load(tail_)));              \
            for (size_t j_ = 0; j_ < rest_; j_++) (x)[i_ + j_] = tail_[j_]; \
        }                                                       \
    } while (0)

void al_gelu(float *x, size_t n) { AL_APPLY_INPLACE(gelu4, x, n); }
void al_gelu_tanh(float *x, size_t n) { AL_APPLY_INPLACE(gelu_tanh4, x, n); }
void al_relu(float *x, size_t n) { AL_APPLY_INPLACE(relu4, x, n); }
