/* layer_rule.h: a layer rule in one file (docs/families.md, "How to add a layer rule"): how one encoder layer
 * wraps self-attention (norms, residuals, feed-forward). The family descriptor (family.h) points at its rule;
 * the forward pass (forward.c), value zeroing's reruns (al_fwd_layer_tail), training (src/train/), head_steps
 * (its pre-norm input) and the norm measures go through the pointer. Rules live in src/model/rules/layer_*.c,
 * their training twins in src/train/. Not public. */
#ifndef AL_MODEL_LAYER_RULE_H
#define AL_MODEL_LAYER_RULE_H

#include "forward_internal.h"

struct al_train_ctx;

typedef struct al_layer_rule {
    const char *name;
    int ffn_factor; /* the feed-forward's scratch width in intermediate sizes: 2 when input and gate sit side by side */
    int pre_norm;   /* self-attention reads attn_norm(x) where the layer has that norm (head_steps) */
    int res_ln;     /* a residual and LayerNorm follow the attention (norm_attention's res_ln variant applies) */
    int frozen;     /* training builds no weight gradients through it (a frozen encoder only: train_ctx.c) */
    /* One layer on one chunk, x [s->n_rows, D] in place (forward.c; forward_internal.h's al_fwd_attention for
     * self-attention), and the rest after self-attention (al_fwd_layer_tail's contract). */
    void (*layer)(const al_model *m, int l, const al_head_policy *policies, float *x, const float *mask, int L,
                  al_fwd_scratch *s, float *attn_out, float *values_out);
    void (*tail)(const al_model *m, int l, al_threadpool *pool, const float *ctx, float *x, int rows, float *tmp,
                 float *wide);
    /* The training twins (src/train/): layer l's forward into hidden[l + 1], and its backward from dy (the
     * gradient wrt its output) into dx. NULL: training refuses the family. */
    void (*train_fwd)(struct al_train_ctx *ctx, int l);
    void (*train_bwd)(struct al_train_ctx *ctx, int l, const float *dy, float *dx);
} al_layer_rule;

/* The rules (src/model/rules/layer_*.c). */
extern const al_layer_rule al_layer_post_ln, al_layer_pre_ln_glu, al_layer_decoder_sequential,
    al_layer_decoder_parallel;

/* A decoder layer's norm before attention, x -> out [rows, D] (rules/layer_decoder.c): the key/value cache
 * (decode.c) runs a layer as this, its own attention, then the rule's tail. */
void al_dec_attn_input(const al_model *m, int l, const float *x, float *out, int rows);

/* The family's rule. */
const al_layer_rule *al_layer_rule_of(const al_config *c);

/* The training twins (src/train/train_forward.c, train_backward.c; train_decoder.c): layer l's forward, and
 * its backward from dy (the gradient wrt its output) to dx (wrt its input, written). The pre-norm twins serve the
 * decoders' rules (with weight gradients; a sliding window is refused by name) and ModernBERT's (a frozen encoder
 * only: train_ctx.c). */
void al_tr_post_ln_layer_fwd(struct al_train_ctx *ctx, int l);
void al_tr_post_ln_layer_bwd(struct al_train_ctx *ctx, int l, const float *dy, float *dx);
void al_tr_prenorm_layer_fwd(struct al_train_ctx *ctx, int l);
void al_tr_prenorm_layer_bwd(struct al_train_ctx *ctx, int l, const float *dy, float *dx);

/* y += x elementwise: the residual add both layer rules make (any order of elements gives the same bits). */
static inline void al_layer_add_inplace(float *y, const float *x, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] += x[i];
}

#endif
