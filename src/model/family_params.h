/* family_params.h: the config fields that only one family's rules read, out of the public al_config
 * (docs/families.md, "A family's own config fields"). al_config holds them in its opaque `family` block so
 * that a config stays a plain value callers copy; only src/model (and tests of a family) read them, through
 * these accessors. A new family with fields of its own adds a struct here and reads it in its read_config. */
#ifndef AL_MODEL_FAMILY_PARAMS_H
#define AL_MODEL_FAMILY_PARAMS_H

#include "../attnlab.h"

/* DeBERTa-v2/v3's disentangled attention (family_deberta_v2.c, rules/rule_disentangled.c); all 0 elsewhere. */
typedef struct al_deberta_params {
    int rel_span;               /* relative position rows per side: position_buckets, else max_relative_positions;
                                 * 0 without relative_attention */
    int position_buckets;       /* log-bucketed relative positions when > 0 */
    int max_relative_positions; /* -1 in config.json means max_position_embeddings */
    int pos_att;                /* extra score terms: bit 1 c2p (content to position), bit 2 p2c */
    int position_biased_input;  /* absolute position embeddings are added to the input */
    int norm_rel_ebd;           /* 1: the relative embeddings pass a LayerNorm (norm_rel_ebd "layer_norm") */
} al_deberta_params;

/* ModernBERT (family_modernbert.c, rules/rule_rotary_window.c): layer l attends globally when
 * l % global_attn_every_n_layers == 0, else to keys within local_attention / 2 positions; the rotary bases of
 * the two kinds of layer. All 0 elsewhere. */
typedef struct al_modernbert_params {
    int global_attn_every_n_layers;
    int local_attention;
    double global_rope_theta, local_rope_theta;
} al_modernbert_params;

/* The causal language models (family_gpt2.c, family_llama.c, family_qwen2.c, family_gpt_neox.c; docs/decoders.md).
 * All 0 in encoders. */
typedef enum al_decoder_norm { AL_DEC_LAYERNORM = 0, AL_DEC_RMSNORM = 1 } al_decoder_norm;
typedef enum al_decoder_mlp { AL_DEC_MLP = 0, AL_DEC_GLU = 1 } al_decoder_mlp;
typedef struct al_decoder_params {
    int n_kv_heads;       /* key/value heads (grouped-query attention): n_heads / n_kv_heads query heads share one */
    int rotary_dims;      /* the first rotary_dims of each head turn (0: learned positions, GPT-2) */
    double rope_theta;    /* the rotary base */
    int window;           /* sliding window (Qwen2): a query reads itself and the window - 1 keys before it; 0: none */
    int window_from_layer; /* the window applies in layers >= this one (Qwen2's max_window_layers) */
    int parallel_residual; /* GPT-NeoX: x + attn(ln1(x)) + mlp(ln2(x)) */
    al_decoder_norm norm;  /* LayerNorm with bias (GPT-2, GPT-NeoX) or RMSNorm (Llama, Qwen2) */
    al_decoder_mlp mlp;    /* act(x W_in + b) W_out + b, or down(act(gate x) * up x) */
} al_decoder_params;

/* may_alias: the block is declared as bytes in the public header and read through this type. */
typedef struct __attribute__((__may_alias__)) al_family_params {
    al_deberta_params deberta;
    al_modernbert_params modernbert;
    al_decoder_params decoder;
} al_family_params;

_Static_assert(sizeof(al_family_params) <= sizeof(al_family_block), "al_family_block is too small: enlarge it");
_Static_assert(_Alignof(al_family_params) <= _Alignof(al_family_block), "al_family_block is under-aligned");

static inline const al_deberta_params *al_deberta(const al_config *c) {
    return &((const al_family_params *)(const void *)c->family.bytes)->deberta;
}
static inline al_deberta_params *al_deberta_mut(al_config *c) {
    return &((al_family_params *)(void *)c->family.bytes)->deberta;
}
static inline const al_modernbert_params *al_modernbert(const al_config *c) {
    return &((const al_family_params *)(const void *)c->family.bytes)->modernbert;
}
static inline al_modernbert_params *al_modernbert_mut(al_config *c) {
    return &((al_family_params *)(void *)c->family.bytes)->modernbert;
}

static inline const al_decoder_params *al_decoder(const al_config *c) {
    return &((const al_family_params *)(const void *)c->family.bytes)->decoder;
}
static inline al_decoder_params *al_decoder_mut(al_config *c) {
    return &((al_family_params *)(void *)c->family.bytes)->decoder;
}

/* The width of the queries and of the attention's context, n_heads * head_dim (the hidden size in encoders; a
 * decoder's head_dim may differ), and of the keys and values, n_kv_heads * head_dim (the same unless grouped). */
static inline int al_attn_width(const al_config *c) { return c->n_heads * c->head_dim; }
static inline int al_kv_heads(const al_config *c) {
    return al_decoder(c)->n_kv_heads > 0 ? al_decoder(c)->n_kv_heads : c->n_heads;
}
static inline int al_kv_width(const al_config *c) { return al_kv_heads(c) * c->head_dim; }

#endif
