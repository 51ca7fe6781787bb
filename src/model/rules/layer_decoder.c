/* layer_decoder.c: the decoders' pre-norm layers (layer_rule.h, docs/decoders.md), one chunk:
 *
 *   sequential (GPT-2, Llama, Qwen2, GPT-NeoX with use_parallel_residual false):
 *     x = x + attn_out(attn(norm1(x)));  x = x + mlp(norm2(x))
 *   parallel (GPT-NeoX's default):
 *     x = x + mlp(norm2(x)) + attn_out(attn(norm1(x)))     (both branches read the layer's input)
 *
 * and after the last layer x = final_norm(x). The norm and the feed-forward are the family's (decoder_parts.c).
 * The attention reads norm1(x) from s->tmp; the tail is the rest (al_fwd_layer_tail's contract: x is the layer's
 * input), which value zeroing's reruns and the key/value cache (decode.c) call too. A dropped attention block
 * (al_forward_params.attn_dropped; docs/decoders.md, "Dropped attention blocks") leaves out the attention and its
 * output projection with its bias: sequential x = x + mlp(norm2(x)), parallel x = x + mlp(norm2(x)). */
#include <string.h>

#include "../../kernels/kernels.h"
#include "../layer_rule.h"
#include "decoder_parts.h"

void al_dec_attn_input(const al_model *m, int l, const float *x, float *out, int rows) {
    const al_layer_weights *lw = &m->w.layers[l];
    al_dec_norm(&m->config, lw->ln_attn_g, lw->ln_attn_b, x, out, rows);
}

/* x += attn_out(ctx): the attention block's residual add. */
static void attn_add(const al_model *m, int l, al_threadpool *pool, const float *ctx, float *x, int rows, float *tmp) {
    al_dec_attn_out(m, l, pool, ctx, tmp, rows);
    al_layer_add_inplace(x, tmp, (size_t)rows * m->config.hidden_size);
}

/* The sequential rule's second half: x += mlp(norm2(x)), then the final norm after the last layer. */
static void sequential_mlp(const al_model *m, int l, al_threadpool *pool, float *x, int rows, float *tmp,
                           float *wide) {
    const al_layer_weights *lw = &m->w.layers[l];
    al_dec_norm(&m->config, lw->ln_ffn_g, lw->ln_ffn_b, x, tmp, rows);
    al_dec_mlp(m, l, pool, tmp, tmp, rows, wide);
    al_layer_add_inplace(x, tmp, (size_t)rows * m->config.hidden_size);
    al_dec_final_norm(m, l, x, rows);
}

static void sequential_tail(const al_model *m, int l, al_threadpool *pool, const float *ctx, float *x, int rows,
                            float *tmp, float *wide) {
    attn_add(m, l, pool, ctx, x, rows, tmp);
    sequential_mlp(m, l, pool, x, rows, tmp, wide);
}

/* The parallel rule's MLP branch: x += mlp(norm2(x)) on the layer's input. */
static void parallel_mlp(const al_model *m, int l, al_threadpool *pool, float *x, int rows, float *tmp, float *wide) {
    const al_layer_weights *lw = &m->w.layers[l];
    al_dec_norm(&m->config, lw->ln_ffn_g, lw->ln_ffn_b, x, tmp, rows); /* the layer's input, before any add */
    al_dec_mlp(m, l, pool, tmp, tmp, rows, wide);
    al_layer_add_inplace(x, tmp, (size_t)rows * m->config.hidden_size);
}

static void parallel_tail(const al_model *m, int l, al_threadpool *pool, const float *ctx, float *x, int rows,
                          float *tmp, float *wide) {
    parallel_mlp(m, l, pool, x, rows, tmp, wide);
    attn_add(m, l, pool, ctx, x, rows, tmp);
    al_dec_final_norm(m, l, x, rows);
}

/* The layer's self-attention into s->ctx, and, when the caller asks (al_forward_outputs.attn_residual), x + its
 * output into s->attn_residual: the block's output that docs/decoders.md's similarity compares with x (the output
 * projection runs once more for it, with the same bits as the tail's). A dropped block (al_forward_params.
 * attn_dropped) computes nothing and its residual is x. */
static void attention_block(const al_model *m, int l, const al_head_policy *policies, const float *x,
                            const float *mask, int L, al_fwd_scratch *s, float *attn_out, float *values_out) {
    const size_t n = (size_t)s->n_rows * m->config.hidden_size;
    if (s->attn_dropped) {
        if (s->attn_residual) memcpy(s->attn_residual, x, sizeof(float) * n);
        return;
    }
    al_dec_attn_input(m, l, x, s->tmp, s->n_rows); /* x holds the chunk's real rows (forward_internal.h) */
    al_fwd_attention(m, l, policies, s->tmp, mask, L, s, attn_out, values_out); /* s->ctx */
    if (!s->attn_residual) return;
    memcpy(s->attn_residual, x, sizeof(float) * n);
    attn_add(m, l, s->pool, s->ctx, s->attn_residual, s->n_rows, s->tmp);
}

static void sequential_layer(const al_model *m, int l, const al_head_policy *policies, float *x, const float *mask,
                             int L, al_fwd_scratch *s, float *attn_out, float *values_out) {
    attention_block(m, l, policies, x, mask, L, s, attn_out, values_out);
    if (s->attn_dropped) sequential_mlp(m, l, s->pool, x, s->n_rows, s->tmp, s->wide);
    else sequential_tail(m, l, s->pool, s->ctx, x, s->n_rows, s->tmp, s->wide);
}

static void parallel_layer(const al_model *m, int l, const al_head_policy *policies, float *x, const float *mask,
                           int L, al_fwd_scratch *s, float *attn_out, float *values_out) {
    attention_block(m, l, policies, x, mask, L, s, attn_out, values_out);
    if (!s->attn_dropped) {
        parallel_tail(m, l, s->pool, s->ctx, x, s->n_rows, s->tmp, s->wide);
        return;
    }
    parallel_mlp(m, l, s->pool, x, s->n_rows, s->tmp, s->wide);
    al_dec_final_norm(m, l, x, s->n_rows);
}

const al_layer_rule al_layer_decoder_sequential = {
    .name = "decoder_sequential",
    .ffn_factor = 2, /* a gated feed-forward's gate and up side by side; a plain one uses the first half */
    .pre_norm = 1,
    .layer = sequential_layer,
    .tail = sequential_tail,
    .train_fwd = al_tr_prenorm_layer_fwd, /* src/train/train_decoder.c */
    .train_bwd = al_tr_prenorm_layer_bwd,
};

const al_layer_rule al_layer_decoder_parallel = {
    .name = "decoder_parallel",
    .ffn_factor = 2,
    .pre_norm = 1,
    .layer = parallel_layer,
    .tail = parallel_tail,
    .train_fwd = al_tr_prenorm_layer_fwd, /* the same twins: they read parallel_residual */
    .train_bwd = al_tr_prenorm_layer_bwd,
};
