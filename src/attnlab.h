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

/* The engine's version: PAPA replies and links carry it, and it changes whenever the same request would give
 * other numbers (0.2.0: sweeps skip the layout's padding and score a pair task's MLM on the pair). */
#define AL_VERSION "0.2.0"

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
/* Reads a whole file into a malloc'd, NUL-terminated buffer (caller frees); *size excludes the NUL. */
al_status al_read_file(const char *path, char **out, size_t *size, al_error *err);
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
    /* the later families (DeBERTa-v2, ModernBERT, and the causal language models GPT-2, Llama, Qwen2, GPT-NeoX)
     * have the indices of src/model/families.c's registry */
} al_arch;

typedef enum al_act {
    AL_ACT_GELU = 0,       /* exact erf GELU ("gelu") */
    AL_ACT_GELU_TANH = 1,  /* tanh approximation ("gelu_new", "gelu_pytorch_tanh", "gelu_fast") */
    AL_ACT_RELU = 2,
    AL_ACT_SILU = 3,       /* x sigmoid(x) ("silu", Llama's gate) */
} al_act;

/* Storage for the fields one family alone reads (src/model/family_params.h): opaque here so that the public
 * header does not grow with every family's own fields and an al_config stays a value callers copy. */
typedef union al_family_block {
    double align_;
    long long align_ll_;
    unsigned char bytes[128];
} al_family_block;

typedef struct al_config {
    al_arch arch;
    char model_type[32];         /* as written in config.json */
    int vocab_size;
    int hidden_size;             /* D */
    int embedding_size;          /* E: == D except ELECTRA small */
    int n_layers;                /* NL */
    int n_heads;                 /* H */
    int head_dim;                /* D / H (a decoder's config may set another: Llama's head_dim) */
    int intermediate_size;       /* FFN width */
    int max_position_embeddings;
    int type_vocab_size;         /* 0 when the family has no token types (DistilBERT) */
    int pad_token_id;
    int position_offset;         /* RoBERTa: first position id is pad_token_id + 1; else 0 */
    float layer_norm_eps;
    al_act act;
    int tie_word_embeddings;     /* 1 (the default): the MLM decoder is the word embeddings, as in HF */
    /* The fields only one family's rules read (DeBERTa's relative positions, ModernBERT's windows and rotary
     * bases): private to src/model (src/model/family_params.h reads them); all 0 in other families. */
    al_family_block family;
} al_config;

/* Parses config.json text. `filename` is used in error messages. */
al_status al_config_parse(const char *json, size_t len, const char *filename, al_config *out,
                          al_error *err);
const char *al_arch_name(al_arch arch);

/* ---------------------------------------------------------------- tokenizer */

typedef struct al_tokenizer al_tokenizer;

typedef enum al_tokenizer_kind { AL_TOK_WORDPIECE = 0, AL_TOK_BPE = 1, AL_TOK_UNIGRAM = 2 } al_tokenizer_kind;

/* Loads tokenizer.json when present, else spm.model (SentencePiece Unigram, DeBERTa-v2/v3), tokenizer.model
 * (SentencePiece BPE, Llama), vocab.txt (WordPiece) or vocab.json + merges.txt (BPE),
 * with options from tokenizer_config.json / special_tokens_map.json when present. */
al_status al_tokenizer_load(const al_fileset *files, al_tokenizer **out, al_error *err);
/* The files al_tokenizer_load reads from this set, by the same rule: up to max names into names (which may
 * be NULL when max is 0); returns how many there are, 0 when the set holds no tokenizer. */
int al_tokenizer_files(const al_fileset *files, const char **names, int max);
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

/* Token ids back to text as the Hugging Face tokenizers' decode does (docs/tokenizers.md, "Decoding"): byte-level
 * BPE's characters to their bytes, SentencePiece's ▁ to spaces and <0xNN> pieces to bytes (one leading space
 * dropped, as Llama's decoder strips it), WordPiece's ## joined; special and added tokens as written, or left out
 * with skip_special. Bytes that are not UTF-8 become U+FFFD. *out is malloc'd and NUL-terminated. */
al_status al_tokenizer_decode(const al_tokenizer *tok, const int32_t *ids, int n, int skip_special, char **out,
                              al_error *err);
al_tokenizer_kind al_tokenizer_get_kind(const al_tokenizer *tok);
int al_tokenizer_vocab_size(const al_tokenizer *tok);
const char *al_tokenizer_id_to_token(const al_tokenizer *tok, int id); /* NULL when out of range */
int al_tokenizer_token_to_id(const al_tokenizer *tok, const char *token); /* -1 when absent */

typedef struct al_special_ids { int cls, sep, pad, mask, unk; } al_special_ids; /* -1 when absent */
al_special_ids al_tokenizer_special_ids(const al_tokenizer *tok);
/* The end-of-text token: tokenizer_config.json's eos_token, else the vocabulary's <|endoftext|> (byte-level BPE) or
 * [SEP] (WordPiece); -1 when none. */
int al_tokenizer_eos_id(const al_tokenizer *tok);

/* ---------------------------------------------------------------- model */

typedef struct al_model al_model;

/* Loads config.json, the weights (model.safetensors, a sharded model.safetensors.index.json, or
 * pytorch_model.bin; else the only .bin or .safetensors file) and the tokenizer when its files are present.
 * Weights are kept as float32. The family comes from config.json's model_type, else its architectures,
 * else the weights' tensor names (docs/families.md). */
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
/* 1 for a causal language model (GPT-2, Llama, Qwen2, GPT-NeoX: token i reads tokens <= i, an LM head),
 * 0 for an encoder. */
int al_model_is_causal(const al_model *model);
size_t al_model_n_params(const al_model *model);
const char *al_model_weights_file(const al_model *model);      /* which file the weights came from */
const char *al_model_weights_dtype(const al_model *model);     /* "F32", "F16", "BF16" */
/* The rule that decided the family: 'model_type "bert"', 'architectures "BertForMaskedLM"', 'tensor names
 * ("bert.embeddings.word_embeddings.weight")'; "" for a random model. */
const char *al_model_family_rule(const al_model *model);
/* The files given to al_model_load that it did not use, each with the reason (index < the count). */
int al_model_n_unused_files(const al_model *model);
const char *al_model_unused_file(const al_model *model, int index, const char **reason);
/* SHA-256 (64 hex digits) of the config's shape, the weights as loaded (float32) and the vocabulary: the
 * same numbers give the same hash whatever file or dtype they came from (src/model/model_hash.c). */
void al_model_content_hash(const al_model *model, char hex[65]);

/* ---------------------------------------------------------------- threads
 * A pool of persistent worker threads (src/core/threadpool.c, docs/threads.md). Work is cut into a
 * fixed partition that depends on the problem size and the thread count only (GEMM by column blocks,
 * attention by head, a batch by example; no reduction is ever split), so every output is
 * bit-identical whatever the thread count. Small problems stay on the calling thread. A build without
 * threads (WASM without SharedArrayBuffer) gets a pool of size 1 and the same numbers. */

typedef struct al_threadpool al_threadpool;

/* The machine's cores, capped at 8. */
int al_threads_default(void);
int al_threads_max(void); /* the largest n_threads al_threadpool_new accepts (64) */
/* n_threads in [1, al_threads_max()], the caller's thread included; the pool may end up smaller when
 * threads cannot be started (al_threadpool_size tells). */
al_status al_threadpool_new(int n_threads, al_threadpool **out, al_error *err);
void al_threadpool_free(al_threadpool *pool);
int al_threadpool_size(const al_threadpool *pool); /* NULL: 1 */

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
    float *lm_logits;     /* [B, L, V]  a causal language model's next-token logits (its LM head) */
    float *last_hidden_state; /* [B, L, D]  hidden_states[NL] alone (Hugging Face's last_hidden_state) */
} al_forward_outputs;

/* Progress: stage name and fraction in [0,1]. */
typedef void (*al_progress_fn)(void *user, const char *stage, double fraction);
/* Progress of an op that works through a plan (a PAPA sweep's head configurations, docs/papa-op.md): each
 * report's stage and fraction with the step of the plan it belongs to, step of n_steps (1-based; step 0
 * before the first: reading the task, the constants, the ranking). */
typedef void (*al_plan_progress_fn)(void *user, const char *stage, double fraction, int step, int n_steps);

typedef struct al_forward_params {
    const al_head_policy *policies; /* [NL * H], layer-major; NULL: all standard */
    al_progress_fn progress;        /* may be NULL */
    void *progress_user;
    const volatile int *cancel;     /* may be NULL; nonzero aborts with AL_ERR_CANCELLED */
    al_threadpool *pool;            /* may be NULL: one thread; the numbers are the same either way */
    int skip_pads;                  /* 1: compute the real tokens only (docs/head_policies.md, "Skipping
                                     * padding"); outputs keep the [.., L, ..] layout, pad entries 0 */
    int pad_rows;                   /* with skip_pads, 1: the linear layers run on the packed batch's pads too,
                                     * as before docs/speed.md's real rows (the same bits, slower; tests and
                                     * benchmarks compare). Default 0. */
    /* Causal models only (docs/decoders.md, "Dropped attention blocks" and "Window and sinks"); the defaults (NULL,
     * 0) change nothing. */
    const unsigned char *attn_dropped; /* [NL] or NULL: 1 leaves layer l's attention block out, its output
                                        * projection's bias included, so the residual passes through (sequential
                                        * rule: x stays x before the MLP; GPT-NeoX's parallel rule: x + mlp(norm2 x));
                                        * the layer's attentions and values come out 0 */
    int key_window; /* > 0: StreamingLLM's window and sinks on top of the family's rules: query i reads key j <= i
                     * only when pos_i - pos_j < key_window or pos_j < key_sinks; 0: every earlier key */
    int key_sinks;  /* with key_window: the first positions every query keeps (0: plain window attention) */
} al_forward_params;

al_forward_params al_forward_default_params(void);

al_status al_forward(const al_model *model, const al_batch *batch, const al_forward_params *params,
                     al_forward_outputs *out, al_error *err);

/* ---------------------------------------------------------------- causal language models: the key/value cache
 * A causal model (al_model_is_causal) runs a text once and then one token at a time, each new token reading the
 * keys and values of the earlier ones from the cache instead of recomputing them (src/model/decode.c). Every
 * number is the bits al_forward gives for the whole text (docs/decoders.md, "The key/value cache"). */

typedef struct al_kv_cache al_kv_cache;

/* A cache for up to max_tokens positions (at most the model's max_position_embeddings). */
al_status al_kv_cache_new(const al_model *model, int max_tokens, al_kv_cache **out, al_error *err);
void al_kv_cache_free(al_kv_cache *cache);
int al_kv_cache_length(const al_kv_cache *cache); /* positions held */
void al_kv_cache_reset(al_kv_cache *cache);      /* empty again */

/* Runs n tokens after those in the cache (positions length .. length + n - 1), adding their keys and values.
 * logits [n, V] (may be NULL) are the LM head's for the n tokens; attentions [NL, H, n, length + n] (may be NULL)
 * their attention over every position so far. Standard heads only. pool may be NULL. */
al_status al_decode(const al_model *model, al_kv_cache *cache, const int32_t *ids, int n, al_threadpool *pool,
                    float *logits, float *attentions, al_error *err);

/* ---------------------------------------------------------------- JSON API
 * One request object in, one reply object plus binary tensors out. The same requests run in the
 * native CLI and in the browser worker. See src/api/api.c for the ops. */

typedef struct al_session al_session; /* holds loaded models by id */

typedef struct al_session_params {
    int n_threads; /* the session's thread pool: every op's forward passes, sweeps and analyses */
} al_session_params;

al_session_params al_session_default_params(void); /* n_threads = al_threads_default() */
al_session *al_session_new(void);                  /* default params */
/* NULL on a bad thread count (outside [1, al_threads_max()]) or out of memory. */
al_session *al_session_new_params(const al_session_params *params);
void al_session_free(al_session *s);
int al_session_threads(const al_session *s); /* the pool's actual size */

typedef struct al_tensor_out {
    char name[192];  /* a tensor name as long as the loader accepts (src/model/weights.c) */
    char dtype[8];   /* "F32" or "I32" (files may also be written as "F16") */
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
    al_plan_progress_fn plan_progress; /* may be NULL; set, an op with a plan reports through it (with
                                        * progress_user) in place of progress */
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

/* ---------------------------------------------------------------- vocabulary learning
 * A WordPiece vocabulary learned from plain text (src/text/vocab_learn.c): BERT's normalisation and
 * pre-tokenisation (lower-case, strip accents, split on whitespace and punctuation), then BPE-style merges
 * with the "##" continuation prefix, as the Hugging Face tokenizers WordPieceTrainer does. */

typedef struct al_vocab_learn_options {
    int vocab_size;      /* target size, special tokens included (8000) */
    int min_frequency;   /* a pair must occur this often to be merged (2) */
    int alphabet_limit;  /* keep at most this many characters, the most frequent (1000) */
} al_vocab_learn_options;

al_vocab_learn_options al_vocab_learn_default_options(void);

typedef struct al_vocab_learn_stats {
    long long n_words;      /* pre-tokenised words counted */
    int n_word_types;       /* distinct words */
    int n_alphabet;         /* characters kept */
    int n_merges;           /* merges done */
    int n_lines_skipped;    /* lines that were not valid UTF-8 */
} al_vocab_learn_stats;

/* Learns a vocabulary from text (lines separated by '\n'). Writes vocab.txt content (one token a line:
 * [PAD] [UNK] [CLS] [SEP] [MASK], the alphabet, then the merged pieces in merge order) to a malloc'd
 * NUL-terminated buffer. Deterministic. stats may be NULL. */
al_status al_vocab_learn(const char *text, size_t len, const al_vocab_learn_options *opt, char **out_vocab,
                         size_t *out_len, al_vocab_learn_stats *stats, al_error *err);

/* ---------------------------------------------------------------- effective attention
 * Effective attention (Brunner et al. 2020; Sun & Marasovic 2021): the part of a head's attention
 * that reaches its output. Row i of A mixes the value vectors V [n, dh] (value bias included); any
 * component of the row in the left null space of V (vectors x with x V = 0) is multiplied by zero.
 * A_eff = the rows of A projected onto col(V), so A_eff V = A V and A - A_eff is invisible to the
 * model. Computed from the dh x dh Gram matrix V^T V in double (never an n x n SVD); see
 * src/methods/effective/effective.h.
 *
 * Why A_eff == A for short inputs: when a sentence has n <= dh tokens and V has full rank n, the dh
 * columns of V span all of R^n, so the left null space is {0} and nothing is removed; only inputs
 * longer than the head dimension (or padded past it) change.
 *
 * Modes:
 *  AL_EFFECTIVE_EXACT (default): per example b and head, only the n_b real tokens (mask != 0) as
 *    query rows, key columns and rows of V, each (example, head) with its own rank from the relative
 *    tolerance sigma_k > sigma_max * max(n_b, dh) * eps_float32. Pad rows and columns of the output
 *    are 0. A_eff V = A V holds on the real tokens (to ~1e-6 relative).
 *  AL_EFFECTIVE_PAPER ("as in Sun & Marasovic"): the padded length L with V's pad rows included,
 *    their absolute tolerance eps_float32 * H on singular values (1.4305e-6 for H = 12), one rank r*
 *    per layer call shared by all examples and heads (the max of their ranks), projection on the
 *    top-r* left singular vectors of V (A_eff = A - A N N^T with N the other L - r*), and then
 *    pad-key columns set to 0 AFTER the projection (so mask(A_eff) V != A V in general); pad-query
 *    rows are kept. The result depends on L: pad to the paper's 128 (JSON "pad_to": 128) to
 *    reproduce it. */

typedef enum al_effective_mode {
    AL_EFFECTIVE_EXACT = 0,
    AL_EFFECTIVE_PAPER = 1,
} al_effective_mode;

/* The paper mode's absolute singular-value tolerance: float32 eps * n_heads. */
double al_effective_paper_tolerance(int n_heads);

/* One head, exact mode: the rows of A [n_rows, n] (row stride lda) projected onto col(V) with
 * V [n, dh] (row stride ldv), into out [n_rows, n] (row stride ldo; out may equal A). *rank (may be
 * NULL) receives the rank kept. */
al_status al_effective_head(const float *A, int n_rows, int lda, const float *V, int n, int dh,
                            int ldv, float *out, int ldo, int *rank, al_error *err);

/* A whole forward output: attentions [NL, B, H, L, L] and values [NL, B, H, L, head_dim] as
 * al_forward returns them, mask [B, L] (NULL: all real). out [NL, B, H, L, L] may equal attentions.
 * ranks_out [NL, B, H] (may be NULL): exact mode, the rank of each (example, head); paper mode, the
 * layer's shared r* in every entry. */
al_status al_effective_attention(const al_config *config, const float *attentions,
                                 const float *values, const int32_t *mask, int B, int L,
                                 al_effective_mode mode, float *out, int *ranks_out,
                                 al_error *err);

/* ---- attention analyses (Sun & Marasovic 2021: Figures 1, 3, 5, 6 and Table 2), on standard or
 * effective attention alike. Each takes one batch and adds into caller-owned sums, so a data set is
 * processed batch by batch; the averages are sums / counts. Layouts as al_forward's. */

/* Key classes, bit flags per position. */
enum { AL_KEY_CLS = 1, AL_KEY_SEP = 2, AL_KEY_PUNCT = 4 };

/* classes [L] for one sequence: [CLS] / [SEP] (RoBERTa <s> / </s>) by the tokenizer's special ids,
 * punctuation = a token whose text, without a "##" or BPE space prefix, is only punctuation (Unicode
 * P* or ASCII symbols). Pad positions (mask 0) get 0. tok NULL: the first real position is [CLS]
 * and the last real position [SEP]. */
void al_key_classes(const al_tokenizer *tok, const int32_t *ids, const int32_t *mask, int L,
                    uint8_t *classes);

typedef enum al_average {
    AL_AVERAGE_EXACT = 0, /* real query rows (and keys) only, mean over examples */
    AL_AVERAGE_PAPER = 1, /* the reference code: all L padded rows, mean per batch, then over batches */
} al_average;

/* Attention to [CLS], [SEP] and punctuation keys per (layer, head): sums [3, NL, H] (cls, sep,
 * punct). Exact: per example, the mass a real query row gives to that class's keys (summed over the
 * class's positions), averaged over real rows; *count += examples. Paper: [CLS] = the column of the
 * first [CLS] position, [SEP] = the max of the [SEP] columns (two for pairs), punctuation = the
 * summed punctuation columns, each averaged over all L rows, then over the batch; *count += 1. */
al_status al_attention_token_stats(const float *attentions, int NL, int B, int H, int L,
                                   const int32_t *mask, const uint8_t *classes, al_average avg,
                                   double *sums, double *count, al_error *err);

/* |effective - standard| per entry into abs_out [NL, B, H, L, L] (may be NULL) and its Frobenius
 * norm over each example's real-token block into fro_out [NL, B, H] (may be NULL). */
al_status al_attention_diff(const float *standard, const float *effective, int NL, int B, int H,
                            int L, const int32_t *mask, float *abs_out, float *fro_out,
                            al_error *err);

/* Attention from one query row to keys grouped by tag (parts of speech) in one layer's attention
 * [B, H, L, L]: query[b] is the query position of example b, key_tags [B, L] a tag index per key
 * position (-1: none). Per example, head and present tag: the max (use_mean 0, the paper) or the
 * mean of A[b, h, query, pos] over the tag's positions; sums [n_tags, H] += it, counts [n_tags] += 1
 * per example having the tag. */
al_status al_attention_by_tag(const float *layer_attentions, int B, int H, int L,
                              const int32_t *query, const int32_t *key_tags, int n_tags,
                              int use_mean, double *sums, double *counts, al_error *err);

/* Cosine similarity per (layer, head) between two models' attentions on the same batch: the
 * flattened real-token block (exact) or the whole L x L (paper), x.y / (max(|x|, eps) max(|y|, eps))
 * with eps 1e-6. sums [NL, H]; exact: += per example, *count += examples; paper: += batch mean,
 * *count += 1. */
al_status al_attention_cosine(const float *a, const float *b, int NL, int B, int H, int L,
                              const int32_t *mask, al_average avg, double *sums, double *count,
                              al_error *err);

/* Attention patterns of Kovaleva et al. (2019), by rules instead of their CNN. For one head's map
 * A [L, L] over the real tokens, each real query row i is turned into a distribution over real keys
 * w_ij = |A_ij| / sum_j |A_ij| (effective attention can be negative; rows with no mass are skipped)
 * and three scores are averaged over rows:
 *   diagonal D = mass on keys j with |i - j| <= 1 (previous, same, next token);
 *   vertical V = mass on delimiter keys ([CLS], [SEP], punctuation) outside that diagonal band;
 *   block    S = share of the non-delimiter mass that stays in the query's own segment, over query
 *              rows that belong to a segment; only for inputs with two segments (pairs), else 0.
 * Label, first rule that holds:
 *   vertical+diagonal  V >= 0.25 and D >= 0.25 and V + D >= 0.6
 *   vertical           V > 0.5
 *   diagonal           D > 0.5
 *   block              two segments and S >= 0.8 (a pair with a uniform head gives S ~ 0.5)
 *   heterogeneous      otherwise.
 * segments [L]: segment index per position (0 or 1), -1 for special tokens and pads (may be NULL:
 * one segment). classes as al_key_classes (may be NULL: no delimiters). */
typedef enum al_pattern {
    AL_PATTERN_VERTICAL = 0,
    AL_PATTERN_DIAGONAL = 1,
    AL_PATTERN_VERTICAL_DIAGONAL = 2,
    AL_PATTERN_BLOCK = 3,
    AL_PATTERN_HETEROGENEOUS = 4,
} al_pattern;
#define AL_N_PATTERNS 5

typedef struct al_pattern_scores { float vertical, diagonal, block; } al_pattern_scores;

const char *al_pattern_name(al_pattern p); /* "vertical", "diagonal", "vertical+diagonal", ... */
al_pattern al_attention_pattern(const float *A, int L, const int32_t *mask, const uint8_t *classes,
                                const int32_t *segments, al_pattern_scores *scores);

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
