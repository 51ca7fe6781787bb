/* train.h: the training path of the encoder (forward pass that keeps its activations, backward pass,
 * MLM loss), the groundwork of MLM pretraining, PAPA lambda ranking and probes. Internal to the core
 * (tools and tests include it); the inference path (al_forward) stays separate and untouched.
 *
 * Gradients live in one buffer shaped like model->storage: the gradient of the weight at
 * model->storage + i is grads[i], so every weight pointer p of al_weights has its gradient at
 * grads + (p - model->storage). A tied MLM decoder (pointer equal to the word embeddings) therefore
 * gets the sum of both uses, as in PyTorch.
 *
 * Typical use:
 *   al_train_ctx *ctx; al_train_ctx_new(model, B, L, &opt, &ctx, &err);
 *   al_train_zero_grads(ctx);
 *   al_train_forward_backward(ctx, &batch, labels, &loss, &err);   // accumulates into grads
 *   al_adamw_step(...)                                               // src/train/adamw.h
 */
#ifndef AL_TRAIN_H
#define AL_TRAIN_H

#include <stdint.h>

#include "../attnlab.h"

#define AL_IGNORE_INDEX (-100) /* labels equal to this are not part of the loss (PyTorch's ignore_index) */

typedef struct al_train_options {
    int training;            /* 1: dropout active (train mode); 0: eval, no dropout. Default 1. */
    float hidden_dropout;    /* hidden_dropout_prob; default 0.1 (0 turns it off) */
    float attention_dropout; /* attention_probs_dropout_prob; default 0.1 (0 turns it off) */
    uint64_t seed;           /* seeds the dropout masks (one al_rng draw sequence per context) */
    int weight_grads;        /* 1: accumulate parameter gradients (default); 0: frozen encoder, only
                              * lambda-logit gradients and hidden-state gradients are computed, and the
                              * context holds no parameter-gradient buffer (al_train_grads returns NULL) */
    int mlm_head;            /* 1: room for al_train_mlm_loss (default; the head's rows and [B * L, vocab]
                              * logits); 0: no MLM loss (e.g. a probe's loss on the hidden states) */
    al_threadpool *pool;     /* a shard set (shards.h) runs its shards on this pool, which must outlive it,
                              * instead of starting one thread per shard (default NULL: its own threads).
                              * The caller's thread count then bounds the set's; the numbers stay the same. */
    int real_rows;           /* 1: the row-wise layers (linear layers, LayerNorm, activations) run on the
                              * tokens whose attention mask is 1 only; attention keeps the padded layout
                              * (docs/speed.md). The real tokens' numbers stay the same bits; the hidden states
                              * at pads become 0 and gradients given there are ignored. Needs weight_grads = 0.
                              * Default 0. */
} al_train_options;

al_train_options al_train_default_options(void);

typedef struct al_train_ctx al_train_ctx;

/* What a context holds, in bytes (64-bit even on wasm32, where a request may exceed the address space). */
typedef struct al_train_size {
    int max_batch, max_len; /* the request measured */
    uint64_t activations; /* forward caches and backward scratch for [max_batch, max_len], MLM head excluded */
    uint64_t mlm_head;    /* the MLM head's rows and logits (0 when opt.mlm_head == 0 or the model has none) */
    uint64_t grads;       /* parameter gradients, 4 bytes per parameter (0 when opt.weight_grads == 0) */
    uint64_t other;       /* lambda logits, policies, bookkeeping */
    uint64_t total;       /* the sum: what al_train_ctx_new allocates */
} al_train_size;

/* The bytes al_train_ctx_new(model, max_batch, max_len, opt) would allocate, without allocating them. */
al_status al_train_ctx_measure(const al_model *model, int max_batch, int max_len, const al_train_options *opt,
                               al_train_size *out, al_error *err);
/* AL_OK when size->total <= budget_bytes; else AL_ERR_OOM with a message naming the size, its parts and
 * what to lower (batch, length, weight_grads, mlm_head). `what` names the request in the message. */
al_status al_train_check_budget(const char *what, const al_train_size *size, uint64_t budget_bytes, al_error *err);
/* The training forward and backward compute BERT's post-LayerNorm layers and ModernBERT's pre-norm GeGLU layers
 * (the latter, like DeBERTa's attention, for a frozen encoder only): "WHAT is not built for FAMILY yet" +
 * instead (may be "") for a model of any other layer rule (docs/families.md). */
al_status al_train_check_family(const al_model *model, const char *what, const char *instead, al_error *err);

/* One workspace sized for batches up to [max_batch, max_len]. The model must outlive the context; its
 * weights may change between steps (the optimiser updates them in place). */
al_status al_train_ctx_new(al_model *model, int max_batch, int max_len, const al_train_options *opt,
                           al_train_ctx **out, al_error *err);
void al_train_ctx_free(al_train_ctx *ctx);

/* Restarts the dropout generator from a seed (the next forward draws the same masks as after creation with
 * that seed: finite-difference checks and reproducible runs). */
void al_train_seed(al_train_ctx *ctx, uint64_t seed);

/* Attention policies for every later forward pass ([NL * H], layer-major; NULL: all standard). Modes and
 * constant pointers are copied (the constants must stay alive, each [L, L] for the batches' seq_len).
 * For MIX heads the lambda logit theta is set to logit(policy.lambda) (lambda clamped to [1e-6, 1-1e-6]);
 * from then on the forward pass uses lambda = sigmoid(theta) and theta is trainable. No gradient flows to
 * the constant matrices. */
al_status al_train_set_policies(al_train_ctx *ctx, const al_head_policy *policies, al_error *err);
/* The lambda logits theta [NL * H] (writable; only MIX heads use theta) and their gradients. */
float *al_train_lambda_logits(al_train_ctx *ctx);
float *al_train_lambda_grads(al_train_ctx *ctx);
/* The gradients with respect to lambda itself, dL/dlambda [NL * H] (double), accumulated beside the logits'.
 * A MIX head at lambda = 1 with a zero constant computes exactly the standard head, and there dL/dlambda is
 * the gradient wrt a head mask xi scaling the head's output (docs/importance.md). */
const double *al_train_lambda_value_grads(const al_train_ctx *ctx);

/* Gradient buffer [al_model_n_params(model)], carved like model->storage; NULL when weight_grads == 0. */
float *al_train_grads(al_train_ctx *ctx);
/* Zeroes the parameter and lambda-logit gradients (gradients accumulate over calls until then). */
void al_train_zero_grads(al_train_ctx *ctx);

/* Forward pass that caches what the backward pass needs. The batch follows al_forward's rules and must fit
 * [max_batch, max_len]. Dropout masks are drawn from the context's generator when training. */
al_status al_train_forward(al_train_ctx *ctx, const al_batch *batch, al_error *err);
/* Hidden states of the last al_train_forward: layer 0 is the embedding output, layer NL the last layer's
 * output; [B, L, D] each, valid until the next forward. NULL when out of range or before a forward. */
const float *al_train_hidden(const al_train_ctx *ctx, int layer);

/* MLM head and mean cross-entropy over the positions whose label is not AL_IGNORE_INDEX (labels [B, L],
 * token ids otherwise). Needs an MLM head, a context created with mlm_head = 1 and a preceding
 * al_train_forward. Writes the loss (0 when no
 * position is labelled), accumulates the head's parameter gradients and keeps the gradient with respect to
 * the last hidden state for al_train_backward. *n_labelled (may be NULL) gets the number of positions. */
al_status al_train_mlm_loss(al_train_ctx *ctx, const int32_t *labels, float *loss, int *n_labelled,
                            al_error *err);

/* A causal language model's next-token loss (train_lm.c; docs/decoder_pretraining.md): the LM head (lm_head_w,
 * the word embeddings when tied) on the last hidden state of every position whose label is not AL_IGNORE_INDEX,
 * and the mean cross-entropy there. labels [B, L] are already shifted: labels[b][i] is the token that follows
 * position i (al_clm_labels). Same contract as al_train_mlm_loss otherwise (a context with mlm_head = 1, a
 * preceding al_train_forward; the head's gradient accumulates into the word embeddings' when tied). */
al_status al_train_lm_loss(al_train_ctx *ctx, const int32_t *labels, float *loss, int *n_labelled, al_error *err);
/* The next-token labels of a batch: labels[b][i] = ids[b][i + 1] where both positions are real tokens
 * (attention_mask 1, or no mask), AL_IGNORE_INDEX elsewhere (the last position, pads). */
void al_clm_labels(const int32_t *ids, const int32_t *attention_mask, int B, int L, int32_t *labels);

/* The sentence-order head of pretraining (train_sop.c; docs/pretraining.md): pooler [D, D] + tanh on the [CLS]
 * state of the last layer, then a classifier [2, D] (class 0: the segments in their order, 1: swapped). Its
 * parameters are one flat block of al_sop_head_size(D) floats in this order (Hugging Face's names):
 * bert.pooler.dense.weight, .bias, cls.seq_relationship.weight, .bias. */
typedef struct al_sop_head {
    float *pool_w, *pool_b; /* [D, D], [D] */
    float *cls_w, *cls_b;   /* [2, D], [2] */
} al_sop_head;
size_t al_sop_head_size(int D);
al_sop_head al_sop_head_carve(float *block, int D);

/* Sentence-order loss of the last al_train_forward: the mean cross-entropy over n pairs, pair r being batch
 * sequence rows[r] (its position 0 is the [CLS]) with label labels[r] in {0, 1}. Writes the mean (0 when n is
 * 0) and the pairs classified right (either may be NULL); accumulates scale times the mean's gradient into
 * head_grads [al_sop_head_size(D)] and into the gradient wrt the last hidden state that al_train_backward
 * reads, on top of an MLM loss's when al_train_mlm_loss ran since the forward (call it first: it resets
 * that gradient). Needs a context created with mlm_head = 1. */
al_status al_train_sop_loss(al_train_ctx *ctx, const float *head, const int *rows, const int32_t *labels, int n,
                            float scale, float *head_grads, float *loss, int *n_correct, al_error *err);

/* Backward pass of the last forward: d_hidden [NL + 1, B, L, D] (may be NULL) holds external gradients
 * with respect to every hidden state (e.g. from a probe), added to the MLM loss's gradient when
 * al_train_mlm_loss ran since the forward. Accumulates parameter gradients (when weight_grads) and
 * lambda-logit gradients of MIX heads. */
al_status al_train_backward(al_train_ctx *ctx, const float *d_hidden, al_error *err);

/* al_train_forward + al_train_mlm_loss + al_train_backward. */
al_status al_train_forward_backward(al_train_ctx *ctx, const al_batch *batch, const int32_t *labels,
                                    float *loss, al_error *err);

/* Which weights take decoupled weight decay (Hugging Face's rule: not biases, not LayerNorm weights):
 * fills decay [al_model_n_params(model)] with 1 or 0 per float. */
void al_train_decay_mask(const al_model *model, uint8_t *decay);

#endif
