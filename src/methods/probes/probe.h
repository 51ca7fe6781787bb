/* probe.h: the probing classifiers of PAPA (Hassid et al. 2022) over a frozen encoder's hidden states,
 * and their training on cached features. Internal to the core (the sweep, tools and tests include it).
 * The architectures, initialisation, dropout rule and loss are described in docs/probes.md.
 *
 * A probe reads "rows": one row per real (mask 1) token, holding that token's hidden states of all
 * n_states = NL + 1 layers (embedding output first, then layers 1..NL). Padding never reaches a probe,
 * so the output cannot depend on pad positions (docs/probes.md, "Rows").
 *
 *   SEQUENCE (FreezeExtractPoller): per example and layer k, p_k = sum over its rows of w[k, t] h_k[t];
 *            z = tanh(W1 [p_0; ...; p_NL] + b1); logits = W2 dropout(z) + b2. One prediction per example.
 *   TOKEN    (FreezeExtractPollerTokenClassification): logits = W2 tanh(W1 [h_0; ...; h_NL] + b1) + b2
 *            per row, no dropout. One prediction per row; rows labelled AL_IGNORE_INDEX are not in the loss.
 *
 * The loss is the mean cross-entropy over the labelled items of a batch (examples or rows).
 *
 * Typical use with an encoder in the loop (lambda ranking):
 *   al_probe_new(&cfg, seed, &probe, &err);
 *   per batch: al_train_forward(...); al_probe_gather(&dense, ...) -> rows;
 *              al_probe_zero_grads(probe); al_probe_forward_backward(probe, &rows, 1, &rng, &loss, d_feats, &err);
 *              al_probe_scatter(d_feats, ..., d_hidden); al_train_backward(ctx, d_hidden, &err);
 *              al_adamw_step(opt, al_probe_params(probe), al_probe_grads(probe), ...);
 * With the encoder frozen and fixed (probe-only training on cached features): al_probe_data + al_probe_fit. */
#ifndef AL_METHODS_PROBE_H
#define AL_METHODS_PROBE_H

#include <stddef.h>
#include <stdint.h>

#include "../../attnlab.h"
#include "../../core/rng.h"
#include "../../train/adamw.h"
#include "../../train/train.h" /* AL_IGNORE_INDEX */

typedef enum al_probe_kind {
    AL_PROBE_SEQUENCE = 0, /* one label per example (GLUE) */
    AL_PROBE_TOKEN = 1,    /* one label per token (NER, POS) */
} al_probe_kind;

typedef struct al_probe_config {
    al_probe_kind kind;
    int n_states;  /* NL + 1 hidden states per token */
    int hidden;    /* D */
    int max_len;   /* L, the padded length; positions t are in [0, L) (w has L columns) */
    int n_labels;  /* C >= 2 */
    float dropout; /* SEQUENCE: dropout before the output layer (BERT hidden_dropout_prob 0.1, RoBERTa 0);
                    * TOKEN: must be 0 (that probe has no dropout) */
    int max_batch; /* examples per call */
    int max_rows;  /* rows per call; 0 means max_batch * max_len */
} al_probe_config;

/* kind SEQUENCE, dropout 0.1, max_batch 32, max_rows 0; n_states, hidden, max_len, n_labels must be set. */
al_probe_config al_probe_default_config(void);

/* A batch of rows. Rows of one example are contiguous and examples come in order (row_example is
 * non-decreasing); an example may have no rows (SEQUENCE: its pooled vector is 0). */
typedef struct al_probe_batch {
    int B;                     /* examples in this batch */
    int n_rows;                /* token rows */
    const float *feats;        /* [n_rows, n_states, D] */
    const int32_t *row_example; /* [n_rows] example index in [0, B) */
    const int32_t *row_pos;    /* [n_rows] position t in [0, L) of the row's token */
    const int32_t *labels;     /* SEQUENCE [B], TOKEN [n_rows]; AL_IGNORE_INDEX = no label; may be NULL
                                * for al_probe_predict */
} al_probe_batch;

typedef struct al_probe al_probe;

/* Parameters in one flat buffer, in this order (each tensor row-major as its nn.Linear / nn.Parameter):
 *   w  [n_states, L]         SEQUENCE only, initialised to 1/L
 *   W1 [D, n_states * D]     normal(0, 0.02)
 *   b1 [D]                   0
 *   W2 [C, D]                normal(0, 0.02)
 *   b2 [C]                   0
 * W1 is drawn before W2, row-major, from al_rng seeded with `seed`. */
al_status al_probe_new(const al_probe_config *cfg, uint64_t seed, al_probe **out, al_error *err);
/* A probe whose parameters are a copy of params [al_probe_n_params of a probe of this config]: one that
 * starts where an earlier al_probe_new(cfg, seed) started, without drawing its parameters again (a token
 * probe at bert-base width draws 7.7 million normals, as long as its training on a small cut takes). */
al_status al_probe_new_from(const al_probe_config *cfg, const float *params, al_probe **out, al_error *err);
void al_probe_free(al_probe *p);
const al_probe_config *al_probe_get_config(const al_probe *p);
/* Splits the probe's matrix products over pool (NULL: the calling thread only). The bits are the same for
 * any pool (docs/threads.md); a probe trained inside a pool task leaves it NULL. */
void al_probe_set_pool(al_probe *p, al_threadpool *pool);

size_t al_probe_n_params(const al_probe *p);
float *al_probe_params(al_probe *p);  /* [n_params] */
float *al_probe_grads(al_probe *p);   /* [n_params], same layout */
void al_probe_zero_grads(al_probe *p);

/* Pointers into the parameter (or gradient) buffer; w is NULL for a TOKEN probe. */
typedef struct al_probe_tensors {
    float *w, *W1, *b1, *W2, *b2;
} al_probe_tensors;
al_probe_tensors al_probe_param_tensors(al_probe *p);
al_probe_tensors al_probe_grad_tensors(al_probe *p);

/* Which parameters take decoupled weight decay under Hugging Face's rule (not biases): w, W1, W2 get 1,
 * b1, b2 get 0. decay has n_params entries. */
void al_probe_decay_mask(const al_probe *p, uint8_t *decay);

/* Forward pass, mean cross-entropy over the labelled items, backward pass. Parameter gradients are
 * accumulated (al_probe_zero_grads resets them). training != 0 applies the SEQUENCE probe's dropout with
 * masks drawn from dropout_rng (one uniform per element of z, example-major); dropout_rng may be NULL
 * when no dropout applies. *loss is 0 and no gradient flows when nothing is labelled. d_feats
 * [n_rows, n_states, D] (may be NULL) receives the gradient of the loss with respect to batch->feats. */
al_status al_probe_forward_backward(al_probe *p, const al_probe_batch *batch, int training, al_rng *dropout_rng,
                                    float *loss, float *d_feats, al_error *err);

/* Eval-mode forward pass (no dropout) and argmax per item (the first maximum): preds [B] (SEQUENCE) or
 * [n_rows] (TOKEN). batch->labels is not read. */
al_status al_probe_predict(al_probe *p, const al_probe_batch *batch, int32_t *preds, al_error *err);

/* Logits of the last forward pass, [n_items, C] (n_items = B or n_rows), valid until the next call. */
const float *al_probe_logits(const al_probe *p, int *n_items);
/* SEQUENCE: pooled vectors [p_0; ...; p_NL] of the last forward pass, [B, n_states * D]; NULL for TOKEN. */
const float *al_probe_pooled(const al_probe *p, int *n_examples);

/* ---------------------------------------------------------------- between the encoder's layout and rows */

/* A padded batch as the encoder produces it. */
typedef struct al_probe_dense {
    int n_states, B, L, D;
    const float *const *hidden;  /* [n_states] pointers, each [B, L, D] (al_train_hidden(ctx, k)) */
    const int32_t *mask;         /* [B, L] 1 real token, 0 padding */
    const int32_t *token_labels; /* [B, L] or NULL: TOKEN labels, AL_IGNORE_INDEX where none */
} al_probe_dense;

/* Rows that al_probe_gather would produce (mask 1, and a label other than AL_IGNORE_INDEX when
 * labelled_only). */
al_status al_probe_count_rows(const al_probe_dense *in, int labelled_only, int *n_rows, al_error *err);

/* Gathers the rows of `in` in (example, position) order into feats [n_rows, n_states, D], row_example and
 * row_pos [n_rows]; row_labels [n_rows] (may be NULL) gets token_labels at each row. labelled_only != 0
 * keeps only rows with a label (needs token_labels). Refuses when more than max_rows rows would result. */
al_status al_probe_gather(const al_probe_dense *in, int labelled_only, int max_rows, float *feats,
                          int32_t *row_example, int32_t *row_pos, int32_t *row_labels, int *n_rows, al_error *err);

/* The reverse for gradients: zeroes d_hidden (n_states pointers, each [B, L, D]) and adds each row of
 * d_feats [n_rows, n_states, D] at its (example, position). Pads and filtered rows stay 0. */
al_status al_probe_scatter(const float *d_feats, int n_rows, const int32_t *row_example, const int32_t *row_pos,
                           int n_states, int B, int L, int D, float *const *d_hidden, al_error *err);

/* ---------------------------------------------------------------- cached features */

/* Every example's rows of one frozen encoder configuration, in float32, for probe-only training. */
typedef struct al_probe_data al_probe_data;

/* Bytes al_probe_data_new allocates for these capacities (SIZE_MAX when it does not fit in size_t). */
size_t al_probe_data_bytes(al_probe_kind kind, int n_states, int D, int64_t max_examples, int64_t max_rows);

/* Room for max_examples examples and max_rows rows of n_states x D features, with positions in [0, L).
 * mem_limit > 0 refuses (AL_ERR_OOM, naming the size) when al_probe_data_bytes exceeds it. */
al_status al_probe_data_new(al_probe_kind kind, int n_states, int D, int L, int64_t max_examples, int64_t max_rows,
                            size_t mem_limit, al_probe_data **out, al_error *err);
void al_probe_data_free(al_probe_data *d);

/* Appends the B examples of a padded batch. SEQUENCE: seq_labels [B] (in [0, C) or AL_IGNORE_INDEX) and
 * in->token_labels unused; TOKEN: in->token_labels [B, L] required, seq_labels unused, labelled_only keeps
 * only labelled rows (enough for training and for every token metric). */
al_status al_probe_data_add(al_probe_data *d, const al_probe_dense *in, const int32_t *seq_labels,
                            int labelled_only, al_error *err);

int al_probe_data_n_examples(const al_probe_data *d);
int al_probe_data_n_rows(const al_probe_data *d);
/* SEQUENCE: [n_examples]; TOKEN: [n_rows]. */
const int32_t *al_probe_data_labels(const al_probe_data *d);
/* [n_examples + 1]: example e owns rows [off[e], off[e + 1]) (sentence boundaries for entity F1). */
const int32_t *al_probe_data_example_offsets(const al_probe_data *d);

typedef struct al_probe_fit_options {
    int epochs;
    int batch_size;          /* examples per step, <= the probe's max_batch; the last batch may be short */
    float lr;
    float weight_decay;      /* 0 in PAPA */
    float beta1, beta2, eps; /* 0.9, 0.999, 1e-8 */
    float max_grad_norm;     /* 1.0; <= 0 turns clipping off */
    al_lr_schedule schedule; /* AL_LR_CONSTANT (PAPA) or AL_LR_LINEAR (no warm-up) */
    uint64_t seed;           /* shuffling and dropout: al_rng seeded from (seed, epoch) */
    al_progress_fn progress; /* may be NULL; stage "probe_fit", fraction of steps done */
    void *progress_user;
    const volatile int *cancel; /* may be NULL; nonzero stops with AL_ERR_CANCELLED */
} al_probe_fit_options;

/* PAPA's README run (CoLA): 15 epochs, batch 16, lr 2e-5, constant schedule, seed 42. */
al_probe_fit_options al_probe_fit_default_options(void);

typedef struct al_probe_fit_report {
    int steps;
    double first_epoch_loss; /* mean of the step losses of the first and last epochs */
    double last_epoch_loss;
} al_probe_fit_report;

/* Trains the probe from its current parameters: per epoch a shuffle of the examples, minibatches of
 * batch_size examples, one AdamW step each (src/train/adamw.h). report may be NULL. */
al_status al_probe_fit(al_probe *p, const al_probe_data *train, const al_probe_fit_options *opt,
                       al_probe_fit_report *report, al_error *err);

/* Eval-mode predictions for every item of data, in order: preds [n_examples] (SEQUENCE) or [n_rows]. */
al_status al_probe_evaluate(al_probe *p, const al_probe_data *data, int32_t *preds, al_error *err);

#endif
