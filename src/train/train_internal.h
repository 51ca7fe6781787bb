/* train_internal.h: the training context and the activations it caches. Not public.
 *
 * One allocation (ctx->mem) holds everything that depends on the batch shape; it is sized at creation
 * for [max_batch, max_len] and re-carved for each batch's actual [B, L] (every tensor shrinks with B and
 * L, so the carving always fits). Shapes below use BL = B * L rows. */
#ifndef AL_TRAIN_INTERNAL_H
#define AL_TRAIN_INTERNAL_H

#include "../core/rng.h"
#include "../model/family_params.h"
#include "../model/model_internal.h"
#include "train.h"

/* What one encoder layer keeps for its backward pass. Its input is ctx->hidden + l * BL * D and its
 * output ctx->hidden + (l + 1) * BL * D. The comments give BERT's post-LayerNorm meaning; the pre-norm layers
 * (train_decoder.c: the decoders', ModernBERT's) use them as: mean1, rstd1 the attention norm's statistics (of the
 * input; RMSNorm keeps rstd only); q, k the turned projections (rows of A columns, the keys and values in the first
 * KVW); res1 = input + attention output, the MLP norm's input, with mean2, rstd2 (the parallel residual: the
 * attention output alone, the MLP norm reading the input); h1 that norm's output; ff_pre [BL, 2I] a gated
 * feed-forward's two halves side by side ([BL, I] the plain one's input); ff_act [BL, I] act(u) * g or act(ff_pre);
 * res2 = the layer's output before the final norm (statistics in ctx->fin_mean, fin_rstd). */
typedef struct al_tr_layer_cache {
    float *q, *k, *v;      /* [BL, D]       projections, heads side by side (bias included) */
    float *S;              /* [B, H, L, L]  softmax output of STANDARD and MIX heads */
    float *P;              /* [B, H, L, L]  final probabilities (after hooks), before attention dropout */
    uint8_t *attn_keep;    /* [B, H, L, L]  attention dropout keep mask */
    float *ctx;            /* [BL, D]       dropout(P) V per head */
    uint8_t *keep1;        /* [BL, D]       hidden dropout after the attention output projection */
    float *res1;           /* [BL, D]       dropout(ctx Wo^T + bo) + x: LayerNorm 1 input */
    float *mean1, *rstd1;  /* [BL] */
    float *h1;             /* [BL, D]       LayerNorm 1 output */
    float *ff_pre;         /* [BL, I]       h1 W_in^T + b_in */
    float *ff_act;         /* [BL, I]       act(ff_pre) */
    uint8_t *keep2;        /* [BL, D]       hidden dropout after the FFN output projection */
    float *res2;           /* [BL, D]       dropout(ff_act W_out^T + b_out) + h1: LayerNorm 2 input */
    float *mean2, *rstd2;  /* [BL] */
    float *attn_in;        /* [BL, D]       a decoder's ln_1 output, the attention's input (train_decoder.c);
                            * NULL in encoders */
} al_tr_layer_cache;

struct al_train_ctx {
    al_model *model;
    al_train_options opt;
    int max_batch, max_len;
    al_rng rng;                /* dropout masks */

    float *grads;              /* [model->n_floats]; NULL when opt.weight_grads == 0 */
    float *theta, *dtheta;     /* [NL * H] lambda logits of MIX heads and their gradients */
    double *dlambda;           /* [NL * H] gradients wrt lambda itself (head importance at lambda = 1) */
    al_head_policy *policies;  /* [NL * H] copies; constants borrowed [L, L]; MIX uses theta, not lambda */
    int has_policies;

    float *mem;                /* the workspace; carved by al_tr_carve */
    size_t mem_floats;
    al_tr_layer_cache *layers; /* [NL] */

    /* Carved for the current batch. */
    int B, L;
    int forward_done;          /* a forward ran and its caches are valid */
    int mlm_pending;           /* d_top holds the MLM loss's gradient */
    int32_t *ids, *types;      /* [BL]          copies of the batch's ids and token types */
    int32_t *pos;              /* [BL]          position ids */
    int32_t *row_of;           /* [BL]          with opt.real_rows: the row of each real token (real_rows.h) */
    int n_rows;                /* the rows the row-wise layers run on: the real tokens' (opt.real_rows) or BL;
                                * below BL those layers' tensors hold compact rows (the attention's q, k, v,
                                * S, P and the hidden states keep the [B, L] layout) */
    int32_t *pos_of;           /* [BL]          with opt.real_rows: the position id of each real row, pos[row_of[i]] */
    const int32_t *row_pos;    /* the position ids of the n_rows rows (pos_of, or pos): ModernBERT turns its compact
                                * queries and keys by their true positions, not their indices */
    float *mask;               /* [BL]          attention mask 1/0 */
    float *emb_sum;            /* [BL, E]       word + type + position */
    float *emb_mean, *emb_rstd; /* [BL] */
    uint8_t *emb_keep;         /* [BL, E]       embedding dropout keep mask */
    float *emb_ln;             /* [BL, E]       dropout(LayerNorm(emb_sum)): the projection's input (ELECTRA) */
    float *hidden;             /* [NL + 1, BL, D] */
    /* MLM head over the n_sel labelled rows */
    int n_sel;
    int32_t *sel_rows;         /* [BL]          token index of each labelled row */
    int32_t *sel_labels;       /* [BL] */
    float *head_x;             /* [BL, D]       gathered last hidden states */
    float *head_pre;           /* [BL, M]       dense output (activation input) */
    float *head_act;           /* [BL, M]       LayerNorm input */
    float *head_mean, *head_rstd; /* [BL] */
    float *head_ln;            /* [BL, M]       decoder input */
    float *logits;             /* [BL, V]       logits, then their gradient */
    /* backward scratch */
    float *d_top;              /* [BL, D]       MLM gradient wrt the last hidden state */
    float *dx_a, *dx_b;        /* [BL, D]       gradient wrt a layer's output / input (swapped) */
    float *d_res, *d_h1, *d_ctx, *dq, *dk, *dv; /* [BL, D] */
    float *d_ff;               /* [BL, I] */
    float *d_emb;              /* [BL, E] */
    float *d_head_a, *d_head_b; /* [BL, M] */
    float *dP, *dS, *tmp_LL, *chat; /* [L, L] */
    float *pd;                 /* [L, L]        one head's dropped-out probabilities */
    /* a score rule's relative-position table (src/model/score_rule.h: DeBERTa's); NULL without one */
    float *rel;                /* [2 rel_span, D] relative embeddings after their LayerNorm */
    float *pos_q, *pos_k;      /* [2 rel_span, D] the current layer's projections of rel */
    int32_t *rel_row;          /* [2 L - 1]     the relative embedding row of each distance */
    float *rel_work;           /* the score rule's head_scratch floats */
    /* a pre-norm rule's final norm after the last layer (train_decoder.c); NULL in other families */
    float *fin_mean, *fin_rstd; /* [BL] */
};

/* Carves the workspace for [B, L] (base NULL: only measures; ctx->layers NULL: layer caches not recorded).
 * Returns the floats used, counted in 64 bits (exact for requests beyond wasm32's address space). Buffers a
 * context does not need are NULL: the MLM head's and d_top without opt.mlm_head (or without an MLM head in
 * the model), d_emb without opt.weight_grads; without opt.weight_grads all layers share one ctx, h1 and ff_act
 * (the backward pass reads them only for weight gradients). */
uint64_t al_tr_carve(al_train_ctx *ctx, float *base, int B, int L);

/* Where the gradient of weight w accumulates (grads is carved like model->storage); NULL for a frozen
 * encoder (no gradient buffer) or an absent weight. */
static inline float *al_tr_grad(const al_train_ctx *ctx, const float *w) {
    return ctx->grads && w ? ctx->grads + (w - ctx->model->storage) : NULL;
}

/* Attention of layer l for the whole batch (x = its input, ctx->n_rows rows): fills q, k, v (in the [B, L] layout),
 * S, P, attn_keep, and ctx (ctx->n_rows rows). */
void al_tr_attention_fwd(al_train_ctx *ctx, int l, const float *x);
/* Backward from d_ctx ([B, L] layout): writes dq, dk, dv ([B, L], all heads' columns) and accumulates MIX
 * lambda-logit gradients. */
void al_tr_attention_bwd(al_train_ctx *ctx, int l);

/* A layer's query [A, D], key and value [KVW, D] weights (A = al_attn_width, KVW = al_kv_width: D and D in encoders),
 * from the fused [A + 2 KVW, D] block when the family has one (ModernBERT's Wqkv, GPT-NeoX's regrouped
 * query_key_value), as al_fwd_project_qkv (src/model/attention.c) reads them. */
static inline void al_tr_qkv_weights(const al_config *c, const al_layer_weights *lw, const float **q_w,
                                     const float **k_w, const float **v_w) {
    const size_t D = (size_t)c->hidden_size, A = (size_t)al_attn_width(c), KVW = (size_t)al_kv_width(c);
    *q_w = lw->q_w, *k_w = lw->k_w, *v_w = lw->v_w;
    if (lw->qkv_w) *q_w = lw->qkv_w, *k_w = *q_w + A * D, *v_w = *k_w + KVW * D;
}

/* A layer's query (which 0, [A]), key (1) or value (2, [KVW]) bias, from the fused [A + 2 KVW] block when the
 * family has one (GPT-2's c_attn.bias, GPT-NeoX's); NULL when the layer has none. */
static inline const float *al_tr_qkv_bias(const al_config *c, const al_layer_weights *lw, int which) {
    if (lw->qkv_b) return lw->qkv_b + (which > 0 ? (size_t)al_attn_width(c) : 0) + (which > 1 ? (size_t)al_kv_width(c) : 0);
    return which == 0 ? lw->q_b : which == 1 ? lw->k_b : lw->v_b;
}


/* The head losses' common start (train_mlm.c, train_lm.c): the labelled positions of labels [B, L] into sel_rows and
 * sel_labels (*n_rows of them, also *n_labelled when not NULL), *loss 0 until the head sets it, the hidden-state
 * gradient d_top cleared and the head marked pending, and the labelled rows of the last hidden state gathered into
 * head_x. A label neither AL_IGNORE_INDEX nor a token id is an error naming its place. */
al_status al_tr_gather_labelled(al_train_ctx *ctx, const int32_t *labels, float *loss, int *n_labelled, int *n_rows,
                                al_error *err);

/* lambda = sigmoid(theta) as the forward pass uses it. */
float al_tr_sigmoid(float theta);

#endif
