/* family.h: a model family in one descriptor (docs/families.md). Each family's file (family_bert.c,
 * family_roberta.c, ...) fills one al_family: the config.json names that pick it, its config fields and
 * refusals, the one table of Hugging Face tensor names that the loader reads and `attnlab export` writes,
 * and its embedding, position and MLM-head rules. families.c lists them; nothing else switches on a family.
 * Not public. */
#ifndef AL_MODEL_FAMILY_H
#define AL_MODEL_FAMILY_H

#include "../attnlab.h"
#include "cJSON.h"

/* Every weight a family can hold; weights.c maps each to its pointer in al_weights and its initialisation.
 * Order within the embedding, layer and MLM groups is free: a family's table gives the order. */
typedef enum al_weight_slot {
    AL_W_WORD_EMB, AL_W_POS_EMB, AL_W_TYPE_EMB, AL_W_EMB_LN_G, AL_W_EMB_LN_B, AL_W_EMB_PROJ_W, AL_W_EMB_PROJ_B,
    AL_W_REL_EMB, AL_W_REL_LN_G, AL_W_REL_LN_B, /* DeBERTa's relative position embeddings and their LayerNorm */
    AL_W_FINAL_LN_G, /* the norm after the last layer (pre-norm families); listed with the embeddings */
    AL_W_FINAL_LN_B, /* its bias (GPT-2, GPT-NeoX) */
    AL_W_FIRST_LAYER, /* per layer from here */
    AL_W_Q_W = AL_W_FIRST_LAYER, AL_W_Q_B, AL_W_K_W, AL_W_K_B, AL_W_V_W, AL_W_V_B, AL_W_O_W, AL_W_O_B,
    AL_W_LN_ATTN_G, AL_W_LN_ATTN_B, AL_W_FF_IN_W, AL_W_FF_IN_B, AL_W_FF_OUT_W, AL_W_FF_OUT_B, AL_W_LN_FFN_G,
    AL_W_LN_FFN_B, AL_W_QKV_W, AL_W_QKV_B, /* a fused query-key-value projection: rows q, k, v (as loaded) */
    AL_W_FF_UP_W, /* a gated feed-forward's up projection beside FF_IN (its gate): Llama's up_proj */
    AL_W_FIRST_MLM, /* the MLM head from here; its names carry no family prefix */
    AL_W_MLM_DENSE_W = AL_W_FIRST_MLM, AL_W_MLM_DENSE_B, AL_W_MLM_LN_G, AL_W_MLM_LN_B, AL_W_MLM_DECODER_W,
    AL_W_MLM_DECODER_B,
    AL_W_LM_HEAD_W, /* a causal model's LM head [V, D]; the word embeddings when tied */
    AL_W_COUNT
} al_weight_slot;

/* A dimension of a tensor's shape, from the config: V vocabulary, E embedding, D hidden, I intermediate,
 * P positions, T token types, M the MLM transform's width (the family's mlm_width rule), R the relative
 * position rows (2 rel_span, DeBERTa), 2I a gated feed-forward's input and gate side by side, 3D a fused
 * query-key-value projection (ModernBERT). */
typedef enum al_dim {
    AL_DIM_NONE, AL_DIM_V, AL_DIM_E, AL_DIM_D, AL_DIM_I, AL_DIM_P, AL_DIM_T, AL_DIM_M, AL_DIM_R, AL_DIM_2I, AL_DIM_3D,
    AL_DIM_A,  /* the queries' width n_heads * head_dim (family_params.h's al_attn_width) */
    AL_DIM_KV  /* the keys' and values' width n_kv_heads * head_dim */
} al_dim;

/* When a tensor belongs to a model: always, only with token types (type_vocab_size > 0), only when the
 * embeddings are projected to the hidden size (embedding_size != hidden_size); DeBERTa's: only with absolute
 * positions (position_biased_input), only with relative attention (rel_span > 0), only when the relative
 * embeddings are normalised (norm_rel_ebd); ModernBERT's: only in layers after the first (its layer 0 has no
 * attention norm: the embedding norm precedes it). */
typedef enum al_tensor_when {
    AL_WHEN_ALWAYS, AL_WHEN_TYPES, AL_WHEN_PROJECTED, AL_WHEN_ABS_POSITIONS, AL_WHEN_RELATIVE, AL_WHEN_REL_NORM,
    AL_WHEN_NOT_FIRST_LAYER,
    AL_WHEN_UNTIED /* only when the LM head is not tied to the word embeddings (a causal model's lm_head) */
} al_tensor_when;

/* How a file stores a tensor when not as attnlab holds it (weights.c turns it on load): as is; as GPT-2's Conv1D
 * weight [in, out], the transpose of nn.Linear's [out, in] (shape[] gives attnlab's [out, in]); as GPT-NeoX's
 * fused query-key-value rows per head, [H][q, k, v][head_dim], held as q, k, v blocks [3][H][head_dim]
 * (docs/decoders.md). */
typedef enum al_tensor_layout { AL_LAYOUT_AS_IS = 0, AL_LAYOUT_CONV1D, AL_LAYOUT_QKV_PER_HEAD } al_tensor_layout;

/* One row of a family's tensor table. Embedding and layer names follow the family's prefix ("bert.") when
 * the file has it; "{layer}" stands for the layer index. */
typedef struct al_tensor_name {
    const char *name;
    const char *alt; /* another name the loader accepts (never written), or NULL */
    al_weight_slot slot;
    al_dim shape[2]; /* AL_DIM_NONE in shape[1] for a vector */
    al_tensor_when when;
    al_tensor_layout layout;
} al_tensor_name;

/* Consecutive rows of a tensor table. */
typedef struct al_tensor_rows {
    const al_tensor_name *rows;
    int n;
} al_tensor_rows;
#define AL_ROWS(table) {(table), (int)(sizeof(table) / sizeof((table)[0]))}
#define AL_FAMILY_MAX_PARTS 5

/* Position ids: 0, 1, 2, ... or, as RoBERTa, counted from pad_token_id + 1 over the real tokens with pads
 * at pad_token_id (Hugging Face's create_position_ids_from_input_ids); or, as DeBERTa, relative positions
 * in the attention scores (absolute ones 0, 1, 2, ... only with position_biased_input); or, as ModernBERT,
 * AL_POS_ROTARY: no position embeddings; the ids 0, 1, ... rotate queries and keys (rotary.c). */
typedef enum al_position_rule { AL_POS_ABSOLUTE, AL_POS_AFTER_PADDING, AL_POS_RELATIVE, AL_POS_ROTARY } al_position_rule;
/* The MLM transform's activation: the config's (hidden_act / activation), or always exact GELU. */
typedef enum al_mlm_act_rule { AL_MLM_ACT_CONFIG, AL_MLM_ACT_GELU } al_mlm_act_rule;
/* The MLM transform's width: the hidden size, or the embedding size (ELECTRA's generator). */
typedef enum al_mlm_width_rule { AL_MLM_WIDTH_HIDDEN, AL_MLM_WIDTH_EMBEDDING } al_mlm_width_rule;
typedef struct al_family {
    const char *name;                  /* al_arch_name: "bert" */
    const char *const *model_types;    /* config.json model_type values, NULL-terminated */
    const char *const *class_prefixes; /* architectures[] class names that start so ("Bert"), NULL-terminated */
    const char *prefix;                /* the encoder's state-dict prefix in *ForMaskedLM files: "bert." */
    /* Reads the family's own config fields into c (sizes, activation, pad id, eps, embedding size),
     * refusing by name the fields whose meaning attnlab does not implement. */
    al_status (*read_config)(const cJSON *root, const char *file, al_config *c, al_error *err);
    /* The tensor table as consecutive parts (embeddings, then one layer, then the MLM head), so a family
     * that shares BERT's names lists BERT's parts: up to AL_FAMILY_MAX_PARTS, the unused ones NULL. */
    const al_tensor_rows *tensors[AL_FAMILY_MAX_PARTS];
    int token_types;                   /* token type embeddings exist (type_vocab_size may be > 0) */
    int projection;                    /* embedding_size may differ from hidden_size (a projection) */
    al_position_rule positions;
    const struct al_score_rule *scores; /* the attention-score rule (score_rule.h, src/model/rules/) */
    al_mlm_act_rule mlm_act;
    al_mlm_width_rule mlm_width;
    const struct al_layer_rule *layers; /* the layer rule (layer_rule.h, src/model/rules/layer_*.c) */
    /* A family whose configs choose between layer rules (GPT-NeoX's use_parallel_residual) picks here (NULL: layers). */
    const struct al_layer_rule *(*layers_of)(const al_config *c);
    /* A causal language model (docs/decoders.md): token i reads tokens <= i, and the third part of the tensor
     * table is its LM head (always loaded; tied to the word embeddings when tie_word_embeddings) instead of an MLM
     * head. */
    int causal;
    /* The family's own config fields beyond BERT's (NULL: none): one line for the model hash into buf, giving its
     * length (model_hash.c), and an object of them as config.json names them, in order, for the reply's config
     * (src/api/api_shared.c; NULL: out of memory). */
    int (*hash_fields)(const al_config *c, char *buf, size_t size);
    cJSON *(*config_fields)(const al_config *c);
} al_family;

/* The registry (families.c), in the order that breaks ties (a bare encoder's tensor names are BERT's). */
int al_family_count(void);
const al_family *al_family_at(int arch);        /* NULL when out of range */
const al_family *al_family_of(const al_config *c); /* never NULL for a config that passed the parser */
int al_family_from_model_type(const char *model_type);   /* -1 when none */
int al_family_from_class_name(const char *class_name);   /* -1 when none */
/* "bert, roberta, distilbert, electra" into buf, for messages */
void al_family_names(char *buf, size_t size);

/* Which part of a table a row is in: 0 embeddings, 1 a layer, 2 the MLM head (from its slot). */
int al_family_row_part(const al_tensor_name *row);
/* Whether a state dict has the family's prefixed names (else it was saved from the bare encoder class),
 * and whether it has the family's MLM head (its first MLM row). */
struct al_tensor_list;
int al_family_has_prefix(const al_family *f, const struct al_tensor_list *list);
int al_family_has_mlm_head(const al_family *f, const struct al_tensor_list *list);

/* The family a state dict's tensor names show (docs/families.md, "Which family"), rule saying which name
 * decided; -1 when none does. */
int al_family_from_tensors(const struct al_tensor_list *list, char *rule, size_t rule_size);

/* The position row that pad tokens take and that gets no gradient, or -1 (AL_POS_ABSOLUTE). */
int al_family_padding_position(const al_config *c);

/* Config field readers the families share (config.c): absent or null gives def, or an error naming the
 * field when def_ok is 0; a wrong type or a value out of range is an error naming the field. */
al_status al_cfg_int(const cJSON *root, const char *file, const char *field, int def_ok, int def, int min, int max,
                     int *out, al_error *err);
al_status al_cfg_eps(const cJSON *root, const char *file, const char *field, float def, float *out, al_error *err);
al_status al_cfg_act(const cJSON *root, const char *file, const char *field, al_act *out, al_error *err);
#define AL_CONFIG_MAX_DIM (1 << 24) /* keeps every product of two sizes far from int overflow */

/* The decoder families' shared readers (family_decoder.c): a true/false field (def when absent or null); one refused
 * when it has the value `refused`, or whenever present, naming the field and why; a number in [min, max]. */
al_status al_cfg_flag(const cJSON *root, const char *file, const char *field, int def, int *out, al_error *err);
al_status al_cfg_refuse_flag(const cJSON *root, const char *file, const char *field, int def, int refused,
                             const char *why, al_error *err);
al_status al_cfg_refuse_present(const cJSON *root, const char *file, const char *field, const char *why,
                                al_error *err);
al_status al_cfg_number(const cJSON *root, const char *file, const char *field, double def, double min, double max,
                        double *out, al_error *err);
/* The id a batch's pads take (pad_token_id, else eos_token_id, else 0), rope_scaling refused, the key/value heads
 * (default: every head) checked against the heads, head_dim (default hidden_size / n_heads), no token types. After
 * the family's own fields. */
al_status al_decoder_pad_id(const cJSON *root, const char *file, al_config *c, al_error *err);
al_status al_decoder_common(const cJSON *root, const char *file, al_config *c, al_error *err);
/* The decoder families' own fields for the model hash and the reply's config (al_family's hash_fields and
 * config_fields): key/value heads, head size, rotary columns and base, window, residual, norm, MLP, tied head. */
int al_decoder_hash_fields(const al_config *c, char *buf, size_t size);
cJSON *al_decoder_config_fields(const al_config *c);
/* What every causal language model's descriptor says alike (docs/decoders.md, "How attnlab runs them"): no token
 * types or projection, its own config fields, causal. A descriptor lists this, then what its family does. */
#define AL_DECODER_FAMILY_COMMON                                                                                     \
    .token_types = 0, .projection = 0, .mlm_act = AL_MLM_ACT_CONFIG, .mlm_width = AL_MLM_WIDTH_HIDDEN,               \
    .hash_fields = al_decoder_hash_fields, .config_fields = al_decoder_config_fields, .causal = 1

/* al_config_parse (config.c), told what to do when config.json names no family (neither model_type nor an
 * architectures entry that names one): decided_arch >= 0 is the family to use, decided_rule saying why (the
 * weights' tensor names); AL_FAMILY_BY_CONFIG_FIELDS takes the first family whose config fields the file has;
 * -1 refuses, setting *undecided. `rule` (may be NULL) receives the rule that decided. */
#define AL_FAMILY_BY_CONFIG_FIELDS (-2)
al_status al_config_parse_family(const char *json, size_t len, const char *filename, int decided_arch,
                                 const char *decided_rule, al_config *out, char *rule, size_t rule_size,
                                 int *undecided, al_error *err);

/* BERT's config fields (hidden_size, num_hidden_layers, ...), which RoBERTa and ELECTRA share (family_bert.c);
 * pad_default is the family's pad_token_id when the field is absent. */
al_status al_family_bert_fields(const cJSON *root, const char *file, al_config *c, int pad_default, al_error *err);
/* BERT's refusals by name: position_embedding_type other than 'absolute', is_decoder true. */
al_status al_family_bert_refusals(const cJSON *root, const char *file, al_error *err);

/* BERT's embedding rows and layer rows (family_bert.c), which RoBERTa and ELECTRA share. */
extern const al_tensor_rows al_bert_embedding_rows, al_bert_self_attention_rows, al_bert_layer_tail_rows;

#endif
