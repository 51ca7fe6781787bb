/* pretrain.h: BERT-style masked-language-model pretraining of a BERT-layout encoder from plain text
 * (mlm_data.c: packing and masking; checkpoint.c: Hugging Face layout files and resumable checkpoints;
 * pretrain.c: the training loop). Internal to the core; tools/attnlab.c drives it (`attnlab pretrain`).
 *
 * Reproducibility: every batch is a pure function of (seed, step): the sequence order of an epoch comes
 * from al_rng(seed, epoch), the masking of step s from al_rng(seed, s) and the dropout masks from the
 * training context reseeded with (seed, s) before the step. So a run resumed from a checkpoint at step k
 * repeats the uninterrupted run bit for bit (the checkpoint holds weights, AdamW moments and k). */
#ifndef AL_TRAIN_PRETRAIN_H
#define AL_TRAIN_PRETRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "../attnlab.h"
#include "../core/rng.h"
#include "../core/seeds.h" /* al_mlm_derive_seed and its purposes */
#include "adamw.h"
#include "shards.h"

/* ---------------------------------------------------------------- MLM data (mlm_data.c) */

/* Tokenised text packed into sequences: [CLS] line [SEP] line [SEP] ... up to max_len tokens; a line
 * longer than max_len - 2 tokens is cut. */
typedef struct al_mlm_corpus {
    int32_t *ids;        /* all sequences back to back */
    int64_t *seq_start;  /* [n_seqs] */
    int32_t *seq_len;    /* [n_seqs] */
    int n_seqs;
    int64_t n_ids;
    int64_t n_lines;
    int64_t n_line_tokens;   /* tokens of the lines (specials excluded), before any cut */
    int64_t n_unk;           /* [UNK] among them */
    int max_len;
} al_mlm_corpus;

/* The lines of a training text ('\n'-separated), each tokenised without special tokens (text_lines.c):
 * fn gets the line (NUL-terminated, n bytes) and its encoding (no tokens for an empty line); it may set
 * *stop to end the reading after this line. An encoding error names its line. */
typedef al_status (*al_text_line_fn)(void *user, const char *line, size_t n, const al_encoding *enc, int *stop,
                                     al_error *err);
al_status al_text_lines_encode(const al_tokenizer *tok, const char *text, size_t len, al_text_line_fn fn,
                               void *user, al_error *err);

/* Packs the lines of text ('\n'-separated; empty lines skipped) with a WordPiece tokenizer that has
 * [CLS], [SEP], [PAD], [MASK]. max_lines > 0 stops after that many lines. */
al_status al_mlm_corpus_build(const al_tokenizer *tok, const char *text, size_t len, int max_len,
                              int64_t max_lines, al_mlm_corpus *out, al_error *err);
void al_mlm_corpus_free(al_mlm_corpus *c);

typedef struct al_mlm_masking {
    float mask_prob;     /* 0.15: share of a sequence's real non-special tokens chosen (at least 1) */
    float replace_mask;  /* 0.8: of the chosen, replaced by [MASK] */
    float replace_random;/* 0.1: replaced by a random non-special token (the rest keep their token) */
    int mask_id;
    int vocab_size;
    int n_special;       /* ids below this are special (al_mlm_leading_specials: 5 for a learned vocabulary,
                          * 999 for bert-base-uncased's): never chosen, never drawn as random replacements */
} al_mlm_masking;

al_mlm_masking al_mlm_default_masking(const al_tokenizer *tok);
/* Size of the leading block of bracketed special tokens ([PAD], [unused0], ...) of the vocabulary. */
int al_mlm_leading_specials(const al_tokenizer *tok);

/* One padded batch: ids [B, L], attention mask [B, L], labels [B, L] (the original id at chosen
 * positions, AL_IGNORE_INDEX elsewhere). L is the longest sequence of the batch. */
typedef struct al_mlm_batch {
    int B, L;
    int32_t *ids, *mask, *labels;
    int n_tokens;        /* real tokens */
    int n_chosen;        /* labelled positions */
} al_mlm_batch;

/* Builds the batch of sequences seq_index[0..n) of the corpus, masking with draws from rng in order. */
al_status al_mlm_make_batch(const al_mlm_corpus *c, const int *seq_index, int n, const al_mlm_masking *m,
                            al_rng *rng, al_mlm_batch *out, al_error *err);
void al_mlm_batch_free(al_mlm_batch *b);

/* Masks one sequence in place: picks round(mask_prob * n) of the positions holding ids >= n_special (at
 * least one) and replaces them as the masking says; labels [len] get the original id there (other entries
 * untouched). cand is scratch of len ints. Returns the number chosen. Pretraining batches and the MLM
 * score of the PAPA sweep both mask through here. */
int al_mlm_mask_sequence(int32_t *ids, int32_t *labels, int len, const al_mlm_masking *m, al_rng *rng, int *cand);

/* The permutation of sequence indices of an epoch (Fisher-Yates from al_rng(seed, epoch)). */
void al_mlm_epoch_order(int n_seqs, uint64_t seed, int64_t epoch, int *order);

/* ---------------------------------------------------------------- causal LM data (clm_data.c) */

/* The lines of text ('\n'-separated; empty lines skipped) tokenised without special tokens, each followed by the
 * vocabulary's [SEP] as its end-of-line token, as one stream cut into consecutive sequences of max_len tokens
 * (the last one shorter; a last piece of one token dropped). No [CLS]; a line may span two sequences.
 * max_lines > 0 stops after that many lines. */
al_status al_clm_corpus_build(const al_tokenizer *tok, const char *text, size_t len, int max_len, int64_t max_lines,
                              al_mlm_corpus *out, al_error *err);
/* The batch of sequences seq_index[0..n): ids (pad_id after a shorter sequence), with copies[b]'s span repeated in
 * sequence b when copies is not NULL, mask, next-token labels (al_clm_labels); n_tokens the real tokens, n_chosen the
 * labelled positions. */
typedef struct al_clm_copy al_clm_copy;
al_status al_clm_make_batch(const al_mlm_corpus *c, const int *seq_index, int n, int pad_id, const al_clm_copy *copies,
                            al_mlm_batch *out, al_error *err);

/* A repeated span (docs/decoder_pretraining.md, "Repeated spans"): the sequence's tokens [src, src + len) written
 * again over [dst, dst + len), dst >= src + len; len 0 leaves the sequence as it is. */
struct al_clm_copy {
    int src, dst, len;
};
/* The spans of a step whose batch is seq_index[0..n): round(share * n) sequences spread evenly over the batch get
 * one span each, drawn from al_rng(seed) in batch order (length in [8, len / 2], its place anywhere); sequences
 * shorter than 16 tokens and the others get none. copies[n]. */
void al_clm_plan_copies(const al_mlm_corpus *c, const int *seq_index, int n, float share, uint64_t seed,
                        al_clm_copy *copies);

/* The held-out perplexity's baselines from the training stream's next-token pairs (the positions the model
 * predicts): an add-one unigram model and a Witten-Bell bigram model (interpolated with that unigram). */
typedef struct al_clm_baselines {
    int V;
    int64_t *unigram, total;          /* [V] counts of predicted tokens */
    int64_t *follow_total;            /* [V] c(v): pairs starting with v */
    int64_t *follow_types;            /* [V] T(v): distinct tokens after v */
    uint64_t *pairs;                  /* [n_pairs] v * V + w, sorted */
    int64_t *pair_count, n_pairs;
} al_clm_baselines;
al_status al_clm_baselines_build(const al_mlm_corpus *train, int V, al_clm_baselines *out, al_error *err);
void al_clm_baselines_free(al_clm_baselines *b);
double al_clm_unigram_prob(const al_clm_baselines *b, int next);
double al_clm_bigram_prob(const al_clm_baselines *b, int prev, int next);

/* Held-out next-token figures of a causal model on the first n sequences of c (0: all): mean cross-entropy in
 * nats (perplexity exp of it) with the baselines' on the same positions (pretrain_clm.c). */
typedef struct al_clm_eval {
    double loss, perplexity, unigram_perplexity, bigram_perplexity, accuracy;
    int64_t positions;
} al_clm_eval;
al_status al_clm_evaluate(const al_model *model, const al_mlm_corpus *c, int n, const al_clm_baselines *base,
                          al_threadpool *pool, al_clm_eval *out, al_error *err);

/* ---------------------------------------------------------------- sentence-order data (sop_data.c) */

/* Documents of consecutive sentences (text: one sentence a line, a blank line between documents), tokenised,
 * and their runs: consecutive sentences of one document whose tokens fit max_len - 3 together (a sentence
 * longer than that is left out and cuts the run). Each run of >= 2 sentences is one sentence-order example
 * (docs/pretraining.md, "Sentence order"). */
typedef struct al_sop_docs {
    int32_t *ids;          /* every sentence's tokens back to back */
    int64_t n_ids;
    int64_t *sent_start;   /* [n_sents] */
    int32_t *sent_len;     /* [n_sents] */
    int n_sents;
    int *run_first, *run_count; /* [n_runs]: first sentence and sentence count (>= 2) of each run */
    int n_runs;
    int64_t n_docs;
    int max_len;
    int cls, sep;          /* the tokenizer's [CLS] and [SEP] */
} al_sop_docs;

al_status al_sop_docs_build(const al_tokenizer *tok, const char *text, size_t len, int max_len, al_sop_docs *out,
                            al_error *err);
void al_sop_docs_free(al_sop_docs *d);
/* The pair of run `run`: a split point (A = the run's first k sentences, B = the rest, k from rng in [1, n)) and
 * a coin (from rng) that swaps them; writes [CLS] first [SEP] second [SEP] into ids and token types (0 up to
 * the first [SEP], 1 after) into types (each of max_len room), *label = 1 when swapped. Returns the length. */
int al_sop_make_pair(const al_sop_docs *d, int run, al_rng *rng, int32_t *ids, int32_t *types, int *label);

/* ---------------------------------------------------------------- configuration */

typedef struct al_pretrain_config {
    char name[64];
    char vocab[512];       /* vocab.txt path */
    char train[512];       /* training text path */
    char heldout[512];     /* held-out text path ("" = no evaluation) */
    char out_dir[512];     /* the Hugging Face directory written at the end (checkpoints beneath) */
    int hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, max_position_embeddings;
    float hidden_dropout_prob, attention_probs_dropout_prob;
    int max_len;           /* sequence length of packing (<= max_position_embeddings) */
    int steps, batch_size, warmup_steps;
    float lr, weight_decay, max_grad_norm;
    float mask_prob;
    uint64_t seed;
    int eval_interval;     /* steps between evaluations (0: only at the end) */
    int eval_sequences;    /* held-out sequences evaluated (0: all) */
    uint64_t eval_seed;    /* the fixed masking of the evaluation */
    int checkpoint_interval; /* steps between checkpoints (0: none) */
    int log_interval;      /* steps between progress lines */
    int64_t max_train_lines; /* 0: all */
    int short_len;         /* > 0: BERT's two-phase recipe: the first short_steps steps train on sequences packed
                            * to this length (cheaper steps, few positions to learn), the rest on max_len */
    int short_steps;
    char position_init[16]; /* "normal" (BERT's N(0, 0.02)) or "sinusoidal" (Vaswani et al.'s sines and cosines
                            * scaled to the same per-element RMS, then learned like any weight) */
    int shards;            /* the batch is split into this many parts, each in its own thread (1..64); the
                            * numbers depend on it, not on the machine (pretrain_shards.c) */
    char sop_docs[512];    /* sentence order (ALBERT's SOP) in the long phase: the documents file ("" = off) */
    float sop_share;       /* share of a long-phase batch's sequences that are sentence-order pairs (0 = off);
                            * round(sop_share * batch_size) pairs, at least 1, spread evenly over the batch */
    char objective[8];     /* "mlm" (BERT's masked tokens, the default) or "clm": a GPT-2 decoder learns the next
                            * token (docs/decoder_pretraining.md; mask_prob, sentence order and short_len unused) */
    float repeat_share;    /* "clm": share of a step's sequences that get a repeated span (0 = off), from step
                            * repeat_from on (0-based; al_clm_plan_copies, docs/decoder_pretraining.md) */
    int repeat_from;
} al_pretrain_config;

al_pretrain_config al_pretrain_default_config(void);
/* Parses a training config JSON (the keys are the field names; unknown keys are an error). */
al_status al_pretrain_config_parse(const char *json, size_t len, const char *filename, al_pretrain_config *cfg,
                                   al_error *err);
/* The config as JSON (malloc'd; caller frees), every field written. */
char *al_pretrain_config_json(const al_pretrain_config *cfg);

/* ---------------------------------------------------------------- sharded MLM steps (pretrain_shards.c) */

/* The sets of training contexts (al_shards_new, al_shards_free, al_shards_ctx, AL_MAX_SHARDS) are the generic
 * sharded step's (shards.h); an MLM step is one client of al_shards_run. */

typedef struct al_shard_step {
    float loss;          /* mean cross-entropy over the batch's labelled positions */
    int n_labelled;
    int n_tokens;        /* real tokens of the batch */
    float *grads;        /* [n_params], valid until the next step (clipping may scale it in place) */
} al_shard_step;

/* Builds the step's batch from seq_index[0..batch_size) with mask_rng (one generator in sequence order, so
 * the masking is the same for any shard count), runs forward, MLM loss and backward per shard (shard i's
 * dropout from dropout_seed, or a seed derived from it and i for i > 0) and combines the gradients weighted
 * by the shards' labelled positions (the batch's mean loss). */
al_status al_shards_step(al_shard_set *set, const al_mlm_corpus *c, const int *seq_index, int batch_size,
                         const al_mlm_masking *mk, al_rng *mask_rng, uint64_t dropout_seed, al_shard_step *out,
                         al_error *err);

/* A causal LM step: the sequences seq_index[0..batch_size) (with copies[b]'s repeated span when copies is not NULL)
 * and their next-token labels (al_clm_make_batch), forward,
 * next-token loss and backward per shard, combined by the shards' labelled positions (the batch's mean loss). */
al_status al_shards_step_clm(al_shard_set *set, const al_mlm_corpus *c, const int *seq_index, int batch_size,
                             int pad_id, const al_clm_copy *copies, uint64_t dropout_seed, al_shard_step *out,
                             al_error *err);

/* A long-phase step with sentence order: n_mlm packed sequences (seq_index) and n_pairs pairs of runs
 * (run_index, split points and swaps drawn from pair_rng in batch order), the pairs at the batch positions b
 * where floor((b + 1) * n_pairs / B) > floor(b * n_pairs / B) (spread evenly, so every shard gets its share).
 * Masking over both segments, from mask_rng in batch order. Loss = MLM mean over the batch's labelled positions
 * + sentence-order mean over its pairs; head [al_sop_head_size(D)] is the pooler and classifier, its gradient
 * the set's extra buffer head_slot (al_shards_add_grads). Any shard count gives the same loss and gradients up
 * to float rounding: shard i's sentence-order gradient is scaled by (N / n_i) (p_i / P), so that weighting by
 * its labelled positions n_i / N leaves p_i / P (p_i of the P pairs in shard i). */
typedef struct al_sop_step {
    al_shard_step mlm;   /* loss: the combined loss; grads: the encoder's; n_labelled, n_tokens */
    float mlm_loss, sop_loss;
    int n_pairs, n_correct;
    float *head_grads;   /* [al_sop_head_size(D)], valid until the next step */
} al_sop_step;

al_status al_shards_step_sop(al_shard_set *set, const al_mlm_corpus *c, const int *seq_index, int n_mlm,
                             const al_sop_docs *docs, const int *run_index, int n_pairs, al_rng *pair_rng,
                             const al_mlm_masking *mk, al_rng *mask_rng, uint64_t dropout_seed, const float *head,
                             int head_slot, al_sop_step *out, al_error *err);

/* ---------------------------------------------------------------- checkpoints and HF files (checkpoint.c) */

/* config.json text of a BertForMaskedLM (malloc'd). */
char *al_bert_config_json(const al_config *c, float hidden_dropout, float attention_dropout);
/* config.json text of a GPT2LMHeadModel (malloc'd): the decoder attnlab pretrains (train_decoder.c), its eos, bos
 * and pad ids the config's pad_token_id (the vocabulary's [SEP], which ends every line). */
char *al_gpt2_config_json(const al_config *c, float hidden_dropout, float attention_dropout);
/* A GPT-2 config of that shape (gelu_new, eps 1e-5, tied LM head), through the text al_gpt2_config_json writes, so
 * the model trained is the one the final directory loads. */
al_status al_gpt2_config(int vocab_size, int hidden_size, int n_layers, int n_heads, int intermediate_size,
                         int n_positions, int eos_id, al_config *out, al_error *err);
/* Writes config.json, model.safetensors, vocab.txt (a copy of vocab_path when not NULL) and
 * tokenizer_config.json / special_tokens_map.json into dir (created when missing). sop_head (may be NULL: a
 * BertForMaskedLM) adds the sentence-order head (train.h: al_sop_head) as bert.pooler.dense.* and
 * cls.seq_relationship.*, and the config names BertForPreTraining. attnlab's loader keeps the encoder and the
 * MLM head and skips those four tensors (so `attnlab export` does not carry them). */
/* A causal model's tokenizer files into dir: the WordPiece vocabulary vocab_path (NULL: none) as tokenizer.json with
 * no post-processor, tokenizer_config.json and special_tokens_map.json with [SEP] as end of text and pad
 * (docs/decoder_pretraining.md, "Data and tokenizer"). al_save_hf_model writes them for a causal model. */
al_status al_save_decoder_tokenizer(const char *dir, const al_model *model, const char *vocab_path, al_error *err);
al_status al_save_hf_model(const char *dir, const al_model *model, const char *vocab_path, float hidden_dropout,
                           float attention_dropout, float *sop_head, al_error *err);
/* A checkpoint: the HF files (config.json with the run's dropouts, as the final files have them) plus
 * optimizer.safetensors (AdamW moments, step, the metadata given). With sop_head, also the head's tensors
 * and its optimizer (sop.adam.m, sop.adam.v, sop.adam.step). */
al_status al_checkpoint_save(const char *dir, const al_model *model, float hidden_dropout, float attention_dropout,
                             al_adamw *opt, int step, const char *const *metadata_kv, int n_metadata, float *sop_head,
                             al_adamw *sop_opt, al_error *err);
/* Loads weights into model (same shape) and the AdamW state into opt; *step gets the step. When sop_head is
 * not NULL and the checkpoint has the sentence-order head, loads it and its optimizer into sop_opt and sets
 * *has_sop (may be NULL) to 1. *train_config (may be NULL) gets the metadata "train_config" (malloc'd; NULL
 * when the checkpoint has none). */
al_status al_checkpoint_load(const char *dir, al_model *model, al_adamw *opt, int *step, float *sop_head,
                             al_adamw *sop_opt, int *has_sop, char **train_config, al_error *err);
/* mkdir -p; 0 or -1. */
int al_make_dirs(const char *path);
/* Writes the model's weights into dir under BertForMaskedLM names (src/train/export.c), as "F32" or "F16"
 * (round to nearest even): one model.safetensors, or shards of at most max_shard_bytes (0: no limit)
 * named model-0000k-of-0000n.safetensors with a model.safetensors.index.json. BERT layout only. */
al_status al_export_weights(const char *dir, const al_model *model, const char *dtype, size_t max_shard_bytes,
                            al_error *err);

/* ---------------------------------------------------------------- the loop (pretrain.c) */

typedef void (*al_pretrain_log_fn)(void *user, const char *line);

typedef struct al_pretrain_hooks {
    al_pretrain_log_fn log;    /* progress lines (may be NULL) */
    void *log_user;
    int stop_after;            /* > 0: stop (with a checkpoint) after this step, as if interrupted */
    float *losses;             /* may be NULL: losses[step] for every step run ([cfg.steps]) */
    const volatile int *cancel;
    double max_seconds;        /* > 0: stop after this much training time (checkpoint and HF files) */
} al_pretrain_hooks;

typedef struct al_pretrain_result {
    int steps_done;
    double train_seconds;
    double tokens_per_second;
    int64_t tokens_seen;
    size_t n_params;
    /* final held-out evaluation (NAN when not run) */
    double eval_loss, eval_accuracy, eval_perplexity;
    double baseline_accuracy;   /* most frequent training token at every masked position */
    double unigram_perplexity;  /* add-one unigram model of the training tokens */
    double bigram_perplexity;   /* the causal objective's Witten-Bell bigram model (clm_data.c); NAN for MLM */
    int64_t eval_positions;
    double heldout_unk_rate;
    int64_t train_sequences, train_tokens;
    /* final evaluation's best heads (layer * H + head, -1 when not run) and their mean attention to the
     * previous token, the next token and [CLS]/[SEP] */
    double pattern[3];
    int pattern_head[3];
} al_pretrain_result;

/* Runs (or resumes, when resume_dir is not NULL) the training described by cfg. */
al_status al_pretrain_run(const al_pretrain_config *cfg, const char *resume_dir, const al_pretrain_hooks *hooks,
                          al_pretrain_result *result, al_error *err);

#endif
