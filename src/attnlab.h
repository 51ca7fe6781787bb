/* attnlab.h: the one public header of the attnlab core.
 *
 * The core runs BERT-family encoders with per-(layer, head) attention policies and returns hidden
 * states, attention probabilities and value matrices. It never prints, never aborts and never reads
 * outside a buffer it was given: every fallible call returns an al_status and fills an al_error whose
 * message names the file, tensor, field or line at fault.
 *
 * Ownership: every *_new / *_load has a matching *_free. Pointers returned by getters stay valid
 * until the owning object is freed.
 */
#ifndef ATTNLAB_H
#define ATTNLAB_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AL_VERSION "0.1.0"

/* ---------------------------------------------------------------- status and errors */

typedef enum al_status {
    AL_OK = 0,
    AL_ERR_IO = 1,          /* a file is missing or cannot be read */
    AL_ERR_FORMAT = 2,      /* a file or text is malformed (bad header, bad JSON, bad UTF-8 ...) */
    AL_ERR_UNSUPPORTED = 3, /* well-formed but not supported (dtype, architecture, pickle global) */
    AL_ERR_INVALID = 4,     /* an argument or request field is wrong */
    AL_ERR_OOM = 5,         /* an allocation failed */
    AL_ERR_CANCELLED = 6,   /* the cancellation flag was raised */
} al_status;

typedef struct al_error {
    al_status code;
    char message[512]; /* "model.safetensors: tensor 'encoder.layer.0...' shape [3] does not match config" */
} al_error;

const char *al_status_name(al_status s); /* "ok", "io", "format", ... */

/* ---------------------------------------------------------------- files
 * A model is a set of named files (config.json, model.safetensors, vocab.txt, ...). The same loader
 * serves a directory on disk (CLI) and buffers handed over by JavaScript (WASM). */

typedef struct al_fileset al_fileset;

al_fileset *al_fileset_new(void);
void al_fileset_free(al_fileset *fs);
/* Adds a file by base name. copy != 0 copies the bytes; copy == 0 borrows them (caller keeps them
 * alive until the fileset is freed). Adding a name twice replaces the earlier file. */
al_status al_fileset_add(al_fileset *fs, const char *name, const void *data, size_t size, int copy,
                         al_error *err);
/* Reads every regular file of a directory (not recursive) into the set. */
al_status al_fileset_add_dir(al_fileset *fs, const char *dir, al_error *err);
/* Returns the bytes of a file, or NULL when absent. */
const uint8_t *al_fileset_get(const al_fileset *fs, const char *name, size_t *size);
int al_fileset_count(const al_fileset *fs);
const char *al_fileset_name(const al_fileset *fs, int index);

/* ---------------------------------------------------------------- configuration */

typedef enum al_arch {
    AL_ARCH_BERT = 0,       /* BERT, MiniLM, TinyBERT */
    AL_ARCH_ROBERTA = 1,
    AL_ARCH_DISTILBERT = 2,
    AL_ARCH_ELECTRA = 3,    /* discriminator or generator; embedding projection when E != D */
} al_arch;

typedef enum al_act {
    AL_ACT_GELU = 0,       /* exact erf GELU ("gelu") */
    AL_ACT_GELU_TANH = 1,  /* tanh approximation ("gelu_new", "gelu_pytorch_tanh", "gelu_fast") */
    AL_ACT_RELU = 2,
} al_act;

typedef struct al_config {
    al_arch arch;
    char model_type[32];         /* as written in config.json */
    int vocab_size;
    int hidden_size;             /* D */
    int embedding_size;          /* E: == D except ELECTRA small */
    int n_layers;                /* NL */
    int n_heads;                 /* H */
    int head_dim;                /* D / H */
    int intermediate_size;       /* FFN width */
    int max_position_embeddings;
    int type_vocab_size;         /* 0 when the family has no token types (DistilBERT) */
    int pad_token_id;
    int position_offset;         /* RoBERTa: first position id is pad_token_id + 1; else 0 */
    float layer_norm_eps;
    al_act act;
} al_config;

/* Parses config.json text. `filename` is used in error messages. */
al_status al_config_parse(const char *json, size_t len, const char *filename, al_config *out,
                          al_error *err);
const char *al_arch_name(al_arch arch);

/* ---------------------------------------------------------------- tokenizer */

typedef struct al_tokenizer al_tokenizer;

typedef enum al_tokenizer_kind { AL_TOK_WORDPIECE = 0, AL_TOK_BPE = 1 } al_tokenizer_kind;

/* Loads tokenizer.json when present, else vocab.txt (WordPiece) or vocab.json + merges.txt (BPE),
 * with options from tokenizer_config.json / special_tokens_map.json when present. */
al_status al_tokenizer_load(const al_fileset *files, al_tokenizer **out, al_error *err);
void al_tokenizer_free(al_tokenizer *tok);

typedef struct al_encode_options {
    int add_special_tokens; /* 1: [CLS] a [SEP] (b [SEP]) / <s> a </s></s> b </s> */
    int max_length;         /* 0: no limit (the model's limit still applies in al_forward callers) */
    int truncation;         /* 1: cut to max_length ("longest_first" for pairs) and set truncated */
    int pad_to;             /* 0: no padding; else pad to this length (>= n_tokens) */
} al_encode_options;

al_encode_options al_encode_default_options(void);

typedef struct al_encoding {
    int n_tokens;             /* real tokens, special tokens included */
    int length;               /* n_tokens, or pad_to when padded */
    int truncated;            /* 1 when tokens were dropped to respect max_length */
    int32_t *ids;             /* [length] */
    int32_t *type_ids;        /* [length] 0 for the first segment, 1 for the second */
    int32_t *attention_mask;  /* [length] 1 for real tokens, 0 for padding */
    int32_t *special_mask;    /* [length] 1 for special tokens and padding */
    int32_t *word_ids;        /* [length] index of the word a token came from, -1 for special/pad */
    int32_t *sequence_ids;    /* [length] 0 or 1 for segment, -1 for special/pad */
    int32_t *offsets;         /* [length*2] byte start/end in the source text (0,0 for special/pad) */
} al_encoding;

/* text_pair may be NULL. Text must be valid UTF-8 (else AL_ERR_FORMAT naming the byte offset). */
al_status al_tokenizer_encode(const al_tokenizer *tok, const char *text, const char *text_pair,
                              const al_encode_options *opt, al_encoding *out, al_error *err);
/* Pre-split words (word-level tasks): word_ids index into `words`. */
al_status al_tokenizer_encode_words(const al_tokenizer *tok, const char *const *words, int n_words,
                                    const al_encode_options *opt, al_encoding *out, al_error *err);
void al_encoding_free(al_encoding *enc);

al_tokenizer_kind al_tokenizer_get_kind(const al_tokenizer *tok);
int al_tokenizer_vocab_size(const al_tokenizer *tok);
const char *al_tokenizer_id_to_token(const al_tokenizer *tok, int id); /* NULL when out of range */
int al_tokenizer_token_to_id(const al_tokenizer *tok, const char *token); /* -1 when absent */

typedef struct al_special_ids { int cls, sep, pad, mask, unk; } al_special_ids; /* -1 when absent */
al_special_ids al_tokenizer_special_ids(const al_tokenizer *tok);

/* ---------------------------------------------------------------- model */

typedef struct al_model al_model;

/* Loads config.json, the weights (model.safetensors, a sharded model.safetensors.index.json, or
 * pytorch_model.bin) and the tokenizer when its files are present. Weights are kept as float32. */
al_status al_model_load(const al_fileset *files, al_model **out, al_error *err);
al_status al_model_load_dir(const char *dir, al_model **out, al_error *err);
void al_model_free(al_model *model);
/* A model with fresh weights: normal(0, 0.02) matrices and embeddings, zero biases, LayerNorm gain 1
 * (BERT's initialisation), from a seeded generator; with an MLM head when mlm_head != 0 (tied decoder).
 * For tests, benchmarks and pretraining. No tokenizer. */
al_status al_model_new_random(const al_config *config, uint64_t seed, int mlm_head, al_model **out,
                              al_error *err);
/* A config with BERT's defaults for the given shape (gelu, eps 1e-12, 512 positions, 2 types). */
al_config al_config_bert(int vocab_size, int hidden_size, int n_layers, int n_heads,
                         int intermediate_size);

const al_config *al_model_config(const al_model *model);
const al_tokenizer *al_model_tokenizer(const al_model *model); /* NULL when no tokenizer files */
int al_model_has_mlm_head(const al_model *model);
size_t al_model_n_params(const al_model *model);
const char *al_model_weights_file(const al_model *model);      /* which file the weights came from */
const char *al_model_weights_dtype(const al_model *model);     /* "F32", "F16", "BF16" */

/* ---------------------------------------------------------------- forward pass with attention hooks */

typedef enum al_head_mode {
    AL_HEAD_STANDARD = 0, /* softmax(QK^T/sqrt(d) + mask) */
    AL_HEAD_CONSTANT = 1, /* given constant matrix C, masked and row-renormalised (PAPA); skips Q, K */
    AL_HEAD_MIX = 2,      /* lambda * softmax + (1 - lambda) * masked-renormalised C (PAPA lambda stage) */
    AL_HEAD_ZERO = 3,     /* all-zero attention (a pruned head); counts as constant for its layer */
} al_head_mode;

typedef struct al_head_policy {
    al_head_mode mode;
    float lambda;          /* AL_HEAD_MIX only */
    const float *constant; /* AL_HEAD_CONSTANT / AL_HEAD_MIX: [seq_len, seq_len], row-major */
} al_head_policy;

typedef struct al_batch {
    int n_seqs;                     /* B */
    int seq_len;                    /* L (padded) */
    const int32_t *input_ids;       /* [B, L] */
    const int32_t *attention_mask;  /* [B, L] 1 real, 0 pad; NULL: all real */
    const int32_t *type_ids;        /* [B, L] or NULL: all 0 */
    const int32_t *position_ids;    /* [B, L] or NULL: the family's default */
} al_batch;

/* Caller-owned output buffers; any may be NULL to skip it. */
typedef struct al_forward_outputs {
    float *hidden_states; /* [NL+1, B, L, D]  embeddings output, then each layer */
    float *attentions;    /* [NL, B, H, L, L]  probabilities actually multiplied with V */
    float *values;        /* [NL, B, H, L, head_dim]  per-head value vectors, bias included */
    float *mlm_logits;    /* [B, L, V]  needs the MLM head */
} al_forward_outputs;

/* Progress: stage name and fraction in [0,1]. */
typedef void (*al_progress_fn)(void *user, const char *stage, double fraction);

typedef struct al_forward_params {
    const al_head_policy *policies; /* [NL * H], layer-major; NULL: all standard */
    al_progress_fn progress;        /* may be NULL */
    void *progress_user;
    const volatile int *cancel;     /* may be NULL; nonzero aborts with AL_ERR_CANCELLED */
} al_forward_params;

al_forward_params al_forward_default_params(void);

al_status al_forward(const al_model *model, const al_batch *batch, const al_forward_params *params,
                     al_forward_outputs *out, al_error *err);

/* ---------------------------------------------------------------- JSON API
 * One request object in, one reply object plus binary tensors out. The same requests run in the
 * native CLI and in the browser worker. See src/api/api.c for the ops. */

typedef struct al_session al_session; /* holds loaded models by id */

al_session *al_session_new(void);
void al_session_free(al_session *s);

typedef struct al_tensor_out {
    char name[64];
    char dtype[8];   /* "F32" or "I32" */
    int ndim;
    int64_t shape[6];
    void *data;      /* owned by the reply */
    size_t nbytes;
} al_tensor_out;

typedef struct al_reply {
    char *json;            /* reply object, NUL-terminated; owned */
    int n_tensors;
    al_tensor_out *tensors; /* owned */
} al_reply;

typedef struct al_run_params {
    al_progress_fn progress;
    void *progress_user;
    const volatile int *cancel;
} al_run_params;

/* Runs one request. On failure returns the status and the reply holds {"error": {...}}. */
al_status al_session_run(al_session *s, const char *request_json, const al_run_params *params,
                         al_reply *reply);
/* Loads a model from a fileset under an id (the worker hands files over this way). Takes ownership
 * of `files` whatever the outcome. */
al_status al_session_add_model(al_session *s, const char *model_id, al_fileset *files, al_error *err);
void al_reply_free(al_reply *reply);

/* Named input tensors for requests (binary data never travels inside the request JSON). A request
 * refers to one by name, e.g. a PAPA constant matrix in "policies": [{"mode": "constant",
 * "constant": "C"}], where "C" is [L, L] or [NL, H, L, L] float32. The data is copied; a name set
 * twice replaces the earlier tensor; tensors stay attached across runs until cleared. ndim 1..6. */
al_status al_session_set_tensor(al_session *s, const char *name, int ndim, const int64_t *shape,
                                const float *data, al_error *err);
void al_session_clear_tensors(al_session *s);

/* ---------------------------------------------------------------- tensor files */

/* Serialises tensors ("F32" / "I32") as a .safetensors byte buffer (malloc'd, caller frees), with
 * optional string metadata pairs (may be NULL). */
al_status al_safetensors_serialize(const al_tensor_out *tensors, int n_tensors,
                                   const char *const *metadata_kv, int n_metadata, uint8_t **out,
                                   size_t *out_size, al_error *err);
al_status al_safetensors_write(const char *path, const al_tensor_out *tensors, int n_tensors,
                               const char *const *metadata_kv, int n_metadata, al_error *err);

#ifdef __cplusplus
}
#endif
#endif /* ATTNLAB_H */
