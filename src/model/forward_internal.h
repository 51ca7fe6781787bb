/* forward_internal.h: the pieces of al_forward (forward.c drives; embeddings.c and attention.c do the
 * two stages that have family- or policy-specific rules; head_policy.h holds the policy rules). Not
 * public. */
#ifndef AL_MODEL_FORWARD_INTERNAL_H
#define AL_MODEL_FORWARD_INTERNAL_H

#include "family.h"
#include "model_internal.h"

/* Scratch of one chunk of `n_seqs` sequences of length L (rows = n_seqs * L), carved from the call's
 * single workspace allocation by forward.c. */
typedef struct al_fwd_scratch {
    int n_seqs;
    al_threadpool *pool; /* the call's threads (NULL: one); the numbers do not depend on it */
    int n_threads;       /* al_threadpool_size(pool): probs and chat hold one [L, L] per thread */
    float *q;      /* [rows, D]   queries, only the columns of heads that need them are written */
    float *k;      /* [rows, D]   keys, likewise */
    float *v;      /* [rows, D]   values, all heads */
    float *ctx;    /* [rows, D]   per-head context P V, heads side by side */
    float *tmp;    /* [rows, D]   projection output before residual + LayerNorm */
    float *wide;   /* [rows, max(E, I, mlm_dim)]  embedding sums, FFN inner activations, MLM transform */
    float *probs;  /* [n_threads, L, L]  one head's probabilities per thread */
    float *chat;   /* [n_threads, L, L]  one head's masked-renormalised constant (MIX) per thread */
    /* Packed batches (al_forward_params.skip_pads): the chunk's sequences hold only real tokens, and
     * map[i] is the position in the caller's layout of packed row i (-1: packing pad). Constants are
     * read at those positions (row stride L_out) and outputs are written back there. NULL: rows are
     * the caller's own. */
    const int32_t *map; /* [n_seqs, L] of this chunk */
    int L_out;          /* the caller's sequence length */
    float *gathered;    /* [n_threads, L, L]  one head's constant at the packed positions, per thread */
    /* Real rows (packed batches unless al_forward_params.pad_rows; real_rows.h): the layer's row-wise parts run
     * on the chunk's n_rows real tokens, rows row_of of the chunk, held compact in x, ctx and the tail's
     * scratch; q, k and v keep the chunk's layout with zeros at the packing pads. n_rows = n_seqs * L: all. */
    int32_t *row_of;    /* [chunk rows]; NULL: every row runs */
    int n_rows;
    int32_t *pos_of;    /* [chunk rows] with row_of: the position id of each real row, pos[row_of[i]] */
    const int32_t *row_pos; /* the position ids of the n_rows rows (pos_of, or pos when every row runs): ModernBERT
                             * turns its compact queries and keys by their true positions, not their indices */
    /* a score rule's relative-position table (score_rule.h: DeBERTa's disentangled attention); NULL without one */
    float *rel;         /* [2 rel_span, D]  the relative embeddings after their LayerNorm, one per call */
    int32_t *rel_row;   /* [2 L_out - 1]    the relative embedding row of each distance (al_deberta_prepare) */
    float *pos_q, *pos_k; /* [2 rel_span, D] the layer's query / key projections of rel, heads that need them */
    int pos_layer;      /* the layer pos_q and pos_k hold, -1 none yet */
    float *rel_work;    /* [n_threads, the rule's head_scratch]  per thread */
    size_t rel_work_size;
    const int32_t *pos; /* [n_seqs, L] the chunk's position ids (rotary positions and windows) */
    /* Causal models (al_forward_params): the caller's window-and-sinks rule (causal_rows.c), whether the current
     * layer's attention block is left out, and where the layer writes x + attention for the chunk's n_rows rows
     * (compact like x; NULL: not asked). */
    int key_window, key_sinks;
    int attn_dropped;
    float *attn_residual;
} al_fwd_scratch;

/* al_forward, and for a causal model residual [NL, B, L, D] (NULL: not asked): the residual stream after each layer's
 * attention block, x + attention with x the layer's input (under GPT-NeoX's parallel rule the same sum, though its
 * MLP reads x; x itself when the block is dropped): what docs/decoders.md's block similarity compares with
 * hidden_states[l]. */
al_status al_forward_residual(const al_model *model, const al_batch *batch, const al_forward_params *params,
                              al_forward_outputs *out, float *residual, al_error *err);

/* Position ids [B, L] for the batch: given ones checked against max_position_embeddings, else the
 * family default (array index; RoBERTa: cumsum over input_ids != pad, times that mask, plus pad). */
/* The MLM head on rows of last-layer hidden states: x [rows, D] -> logits [rows, V]; wide is scratch of
 * [rows, mlm_dim] floats. */
void al_fwd_mlm_rows(const al_model *m, al_threadpool *pool, const float *x, int rows, float *wide, float *logits);
/* A causal model's LM head on rows of final-normed hidden states: x [rows, D] -> logits [rows, V]. */
void al_fwd_lm_rows(const al_model *m, al_threadpool *pool, const float *x, int rows, float *logits);
/* The activation in place over n values (elementwise: any cut gives the same bits), and the same cut into
 * runs over the pool's threads. */
void al_fwd_activate(al_act act, float *x, size_t n);
void al_fwd_activate_pool(al_threadpool *pool, al_act act, float *x, size_t n);
/* The gated feed-forward's act(u) * g over rows of [u | g] (width 2I), u replaced in place (ModernBERT's and
 * Llama's), rows cut over the pool's threads. */
void al_fwd_glu_pool(al_threadpool *pool, al_act act, float *ug, int rows, int I);
al_status al_fwd_positions(const al_config *c, const al_batch *batch, int32_t *pos, al_error *err);

/* Embedding output of sequences [b0, b0 + n_seqs) into x [n_seqs * L, D]: word + type + position,
 * LayerNorm, then ELECTRA's projection when E != D (sums in wide [rows, E]). */
void al_fwd_embed(const al_model *m, const al_batch *batch, const int32_t *pos, int b0, int n_seqs,
                  float *wide, float *x);
/* The embedding output alone (al_forward's hidden state 0) of a checked batch into x [B, L, D]: what a
 * probe of the embeddings reads, without running the layers. Each token's row depends on its own id,
 * type and position only, so the real tokens' rows are those of a packed al_forward (skip_pads). */
al_status al_forward_embeddings(const al_model *model, const al_batch *batch, float *x, al_error *err);

/* One packed sequence's rows (src [L, cols], row stride src_ld) written into the caller's [L_out, cols]
 * layout at the positions map gives (-1: a packing pad, not written); the other rows are zeroed. */
void al_fwd_scatter_rows(float *dst, const float *src, size_t src_ld, const int32_t *map, int L, int L_out, size_t cols);

/* Layer l's queries, keys and values of rows x [n_rows, D] into q, k, v [n_rows, A] (A = n_heads * head_dim; k and
 * v hold the key/value heads as projected in their first n_kv_heads * head_dim columns), only for the heads that
 * need them, queries and keys turned by the score rule at positions pos (attention.c; decode.c shares it). */
void al_fwd_project_qkv(const al_model *m, int layer, const al_head_policy *policies, al_threadpool *pool,
                        const float *x, int n_rows, const int32_t *pos, float *q, float *k, float *v);
/* The same before the turn: what a cache that turns its keys by their slot (decode_stream.c) keeps. */
void al_fwd_project_qkv_unturned(const al_model *m, int layer, const al_head_policy *policies, al_threadpool *pool,
                                 const float *x, int n_rows, float *q, float *k, float *v);

/* A cache's attention (decode.c, decode_stream.c): n query rows q [n, A] (turned) at positions p0 .. p0 + n - 1
 * against T cached keys K and values V (row strides ldk, ldv; key/value heads as projected), per head the scores
 * (1/sqrt(head_dim)), the causal rows' softmax under keys and P V into ctx [n, A]; attn [H, n, T] (may be NULL) the
 * probabilities. scores: scratch [n, T]. The forward's kernels and order, so the forward's bits. */
struct al_causal_keys;
void al_dec_attend(const al_config *c, const float *q, int n, int p0, const float *K, int ldk, const float *V, int ldv,
                   int T, const struct al_causal_keys *keys, float *scores, float *ctx, float *attn);

/* Self-attention of one layer for one chunk: x [s->n_rows, D] -> s->ctx [s->n_rows, D] (before the output
 * projection). policies: this layer's [H] policies, or NULL (all standard). mask: [rows] 1/0.
 * attn_out / values_out (may be NULL) point at this chunk's first sequence in the layer's slice of the
 * caller's [B, H, L, L] / [B, H, L, head_dim] outputs (L = s->L_out when the batch is packed). */
void al_fwd_attention(const al_model *m, int layer, const al_head_policy *policies, const float *x,
                      const float *mask, int L, al_fwd_scratch *s, float *attn_out, float *values_out);

/* The rest of layer l after self-attention, on rows [rows, D] in place: post-LN, x = LN(x + ctx W_O + b_O) then
 * x = LN(x + FFN(x)); in pre-norm families (ModernBERT) the residual x + ctx W_O, the gated feed-forward and,
 * after the last layer, the final norm: the family's layer rule's tail (layer_rule.h). tmp [rows, D] and wide [rows, al_fwd_ffn_width]
 * are scratch. al_forward's layers and value zeroing's reruns (src/methods/measures/value_zeroing.c) both call it. */
void al_fwd_layer_tail(const al_model *m, int l, al_threadpool *pool, const float *ctx, float *x, int rows, float *tmp,
                       float *wide);
/* The feed-forward's scratch width: the intermediate size, twice it when input and gate sit side by side. */
int al_fwd_ffn_width(const al_config *c);

#endif
