/* lm_heads.h: what the ops that measure a causal language model's heads over a corpus share (head_stats and
 * head_agreement with "corpus"; the papa op's sweep reads the same fields: docs/papa-op.md, "A causal language
 * model"): the scored text ("corpus") and the text the constants, the lambdas and the gradient come from
 * ("constants_corpus"), cut into windows of L; the warning when the two share documents; PAPA's causal constants
 * and learned lambdas through the session cache (papa_cache.h, the names the papa op leaves them under); and the
 * reply's identity with the two texts' hashes. Not public. */
#ifndef AL_API_LM_HEADS_H
#define AL_API_LM_HEADS_H

#include "../methods/lm/lm_corpus.h"
#include "../methods/papa/papa.h"
#include "../methods/papa/papa_sweep.h"
#include "api_internal.h"

/* "constants_corpus", "constants_corpus_name", "min_windows": the text a causal model's constants come from. */
extern const al_req_field al_fields_lm_constants[];

typedef struct al_lm_heads {
    const al_api_model *m;
    al_papa_sweep_request q;        /* every sweep field, no preset (al_experiment_read_fields) */
    const char *corpus, *averaged_text; /* the request's texts (not owned) */
    const char *label, *alabel;     /* their names: corpus_name or "corpus", constants_corpus_name or
                                     * "constants_corpus" */
    int min_windows;
    al_lm_corpus scored, averaged;  /* windows of q.L */
    al_papa_inputs val;             /* the scored windows as a sweep's inputs (right padded, every window) */
    char model_hash[65];            /* hex */
    char corpus_hash[72], averaged_hash[72]; /* the texts', "sha256:..." */
    char c_name[64], t_name[64];    /* the session names of the constants and the lambdas */
} al_lm_heads;

/* The request's texts and fields for `who`, checked as the papa op checks them: a task beside the corpus, an
 * encoder, a model without a tokenizer and an L outside [4, positions] are refused by field; "constants_corpus"
 * is required (the lambdas never train on the scored text: the papa op's refusal of a lambda order without it).
 * Both texts built into windows, their shared documents warned about, the scored windows laid out in x->val and
 * the cache names set. On failure nothing is held. */
al_status al_lm_heads_open(al_op_ctx *ctx, const char *who, al_lm_heads *x, al_error *err);
void al_lm_heads_free(al_lm_heads *x);

/* The warning the papa op gives when documents of the scored text occur word for word in the averaged one. */
al_status al_lm_warn_shared_documents(al_reply_builder *rb, const char *scored, const char *averaged, int n_docs,
                                      const char *label, const char *alabel, al_error *err);

/* The warning for each field of a task's probes the request gives ("seeds", "probe", "mlm", "layout", "max_train",
 * "max_validation", "constants_examples", "preset"): read by the op's table, meaningless on a corpus; what names
 * the op's work ("sweep", "corpus"). */
void al_lm_warn_task_fields(const al_op_ctx *ctx, const char *what);

/* PAPA's causal constants over the averaged windows (al_papa_causal_constants, as the papa op's sweep averages
 * them): the session's tensor c_name or computed and left there. *C points at the session's copy or *owned. */
al_status al_lm_heads_constants(const al_op_ctx *ctx, const al_lm_heads *x, const float **C, float **owned, int *reused,
                                al_error *err);

/* The lambda logits theta [NL * H] learned against the next-token loss (al_papa_lm_rank on the averaged windows
 * with the constants C, as the papa op's lambda order learns them): the session's or learned and left there. */
al_status al_lm_heads_theta(const al_op_ctx *ctx, al_lm_heads *x, const float *C, float *theta, int *reused,
                            al_error *err);

/* The gradient importance with the language-model loss over the first max_examples windows of the averaged text
 * (al_papa_lm_importance, as the papa op's gradient order measures it). */
struct al_head_importance;
al_status al_lm_heads_importance(const al_op_ctx *ctx, const al_lm_heads *x, int max_examples,
                                 struct al_head_importance *out, al_error *err);

/* The reply's identity: "model", "engine", "shape", "hashes" {model, corpus, constants_corpus}. */
void al_lm_heads_reply_identity(al_reply_builder *rb, const al_lm_heads *x);

/* Under parent: corpus_name, constants_corpus_name, L, min_windows, batch_size. */
void al_lm_heads_reply_texts(al_reply_builder *rb, cJSON *parent, const al_lm_heads *x);

#endif
