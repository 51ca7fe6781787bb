/* model_internal.h: what the loader fills and the forward pass reads. Not public. */
#ifndef AL_MODEL_INTERNAL_H
#define AL_MODEL_INTERNAL_H

#include "../attnlab.h"

/* One encoder layer (post-LayerNorm, as BERT). nn.Linear layout: weight [out, in]. */
typedef struct al_layer_weights {
    float *q_w, *q_b;           /* [D, D], [D] */
    float *k_w, *k_b;           /* [D, D], [D] */
    float *v_w, *v_b;           /* [D, D], [D] */
    float *o_w, *o_b;           /* [D, D], [D]   attention output projection */
    float *ln_attn_g, *ln_attn_b; /* [D]         LayerNorm after attention + residual */
    float *ff_in_w, *ff_in_b;   /* [I, D], [I] */
    float *ff_out_w, *ff_out_b; /* [D, I], [D] */
    float *ln_ffn_g, *ln_ffn_b; /* [D]           LayerNorm after FFN + residual */
    /* ModernBERT (pre-norm): qkv_w [3D, D] holds the query, key and value rows in that order (q_w, k_w,
     * v_w stay NULL); ln_attn_g is the norm before attention (NULL in layer 0), ln_ffn_g the one before the
     * gated feed-forward, ff_in_w [2I, D] its input rows then its gate rows. */
    float *qkv_w;
    /* Decoders (docs/decoders.md): q_w [A, D], k_w and v_w [KVW, D], o_w [D, A] with A = n_heads * head_dim and KVW
     * = n_kv_heads * head_dim (family_params.h); GPT-2's and GPT-NeoX's fused projection qkv_w [3D, D] with its
     * bias qkv_b [3D], held as q, k, v blocks whatever the file's layout; ln_attn_g/_b the norm before attention,
     * ln_ffn_g/_b the one before the feed-forward; a gated feed-forward's gate in ff_in_w [I, D] and its up
     * projection in ff_up_w [I, D]. */
    float *qkv_b;
    float *ff_up_w;
} al_layer_weights;

typedef struct al_weights {
    float *word_emb;             /* [V, E] */
    float *pos_emb;              /* [P, E] */
    float *type_emb;             /* [T, E], NULL when type_vocab_size == 0 */
    float *emb_ln_g, *emb_ln_b;  /* [E] */
    float *emb_proj_w, *emb_proj_b; /* [D, E], [D]: ELECTRA when E != D, else NULL */
    al_layer_weights *layers;    /* [NL] */
    /* MLM head, all NULL when absent: h -> dense -> act -> LayerNorm -> decoder + bias */
    int mlm_dim;                 /* width of the transform (D; E for the ELECTRA generator) */
    al_act mlm_act;
    float *mlm_dense_w, *mlm_dense_b; /* [mlm_dim, D], [mlm_dim] */
    float *mlm_ln_g, *mlm_ln_b;       /* [mlm_dim] */
    float *mlm_decoder_w;             /* [V, mlm_dim], tied to word_emb when the file omits it */
    float *mlm_decoder_b;             /* [V] */
    /* DeBERTa: relative position embeddings and their LayerNorm, NULL elsewhere */
    float *rel_emb;                   /* [2 rel_span, D] */
    float *rel_ln_g, *rel_ln_b;       /* [D], NULL without norm_rel_ebd */
    float *final_ln_g;                /* [D] the norm after the last layer (ModernBERT, decoders), else NULL */
    float *final_ln_b;                /* [D] its bias (GPT-2, GPT-NeoX), else NULL */
    float *lm_head_w;                 /* [V, D] a causal model's LM head (word_emb when tied), else NULL */
} al_weights;

typedef struct al_unused_file {
    char name[128];
    char reason[128];
} al_unused_file;

struct al_model {
    al_config config;
    al_weights w;
    float *storage;       /* one allocation that every weight pointer points into */
    size_t n_floats;      /* floats in storage */
    al_layer_weights *layer_storage;
    al_tokenizer *tokenizer; /* NULL when the files have none */
    char weights_file[128];
    char weights_dtype[8];
    char family_rule[160];        /* what decided the family (al_model_family_rule) */
    al_unused_file *unused;       /* the given files the loader did not use, and why */
    int n_unused;
};

#endif
