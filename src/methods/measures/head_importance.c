/* head_importance.c: gradient head importance (see head_importance.h and docs/importance.md). Each example
 * runs alone in a one-example training context (the encoder frozen, eval mode), so its gradient is the
 * same whichever thread computes it; the per-example values are summed in example order afterwards. */
#include "head_importance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/threadpool.h"
#include "../../train/train.h"

const char *const al_importance_loss_names[] = {"probe", "mlm", "lm", NULL}; /* the field tables publish it (src/api) */

const char *al_importance_loss_name(al_importance_loss loss) {
    return (unsigned)loss < 3 ? al_importance_loss_names[loss] : "?";
}

int al_importance_loss_from_name(const char *name) {
    for (int i = 0; name && i < 3; i++)
        if (!strcmp(name, al_importance_loss_names[i])) return i;
    return -1;
}

void al_head_importance_free(al_head_importance *r) {
    free(r->raw);
    free(r->signed_sum);
    free(r->normalized);
    memset(r, 0, sizeof *r);
}

/* One thread's context, probe copy and scratch. */
typedef struct worker {
    al_train_ctx *ctx;
    al_probe *probe;
    float *feats, *d_feats, *d_hidden; /* [L rows, S, D], the same, [S, 1, L, D] */
    int32_t *next;                     /* [L] the LM loss's labels: the token after each position */
    int32_t *row_example, *row_pos, *row_labels;
} worker;

typedef struct job {
    al_model *model;
    const al_papa_inputs *in;
    al_importance_loss loss;
    worker *workers;
    int x0;             /* this block's first example */
    int NH, S, D, L;
    double *grads;      /* [n, NH] per example */
    float *losses;      /* [n] per example (NaN: no label, no loss) */
    al_status *status;  /* [block] */
    al_error *errors;   /* [block] */
} job;

static al_status one_example(job *j, worker *w, int x, al_error *err) {
    const al_papa_inputs *in = j->in;
    const int L = j->L, S = j->S, D = j->D;
    const size_t at = (size_t)x * L;
    j->losses[x] = NAN;
    memset(j->grads + (size_t)x * j->NH, 0, sizeof(double) * (size_t)j->NH);
    int labelled = 0;
    if (j->loss == AL_IMPORTANCE_LM) { /* the pretraining loss's labels (train_lm.c) */
        al_clm_labels(in->ids + at, in->mask + at, 1, L, w->next);
        for (int t = 0; t < L; t++) labelled += w->next[t] != AL_IGNORE_INDEX;
    } else if (j->loss == AL_IMPORTANCE_MLM || in->token_task) {
        for (int t = 0; t < L; t++) labelled += in->mask[at + t] && in->labels[at + t] != AL_IGNORE_INDEX;
    } else {
        labelled = in->labels[x] != AL_IGNORE_INDEX;
    }
    if (!labelled) return AL_OK; /* no loss, no gradient: the example is not counted */
    al_batch batch = {1, L, in->ids + at, in->mask + at, in->type_ids + at, NULL};
    al_train_zero_grads(w->ctx);
    al_status st = al_train_forward(w->ctx, &batch, err);
    float loss = 0.0f;
    if (!st && j->loss == AL_IMPORTANCE_MLM) {
        st = al_train_mlm_loss(w->ctx, in->labels + at, &loss, NULL, err);
        if (!st) st = al_train_backward(w->ctx, NULL, err);
    } else if (!st && j->loss == AL_IMPORTANCE_LM) {
        st = al_train_lm_loss(w->ctx, w->next, &loss, NULL, err);
        if (!st) st = al_train_backward(w->ctx, NULL, err);
    } else if (!st) {
        const float *states[64];
        for (int k = 0; k < S; k++) states[k] = al_train_hidden(w->ctx, k);
        al_probe_dense dense = {S, 1, L, D, states, in->mask + at, in->token_task ? in->labels + at : NULL};
        int n_rows = 0;
        st = al_probe_gather(&dense, in->token_task, L, w->feats, w->row_example, w->row_pos,
                             in->token_task ? w->row_labels : NULL, &n_rows, err);
        al_probe_batch pb = {1, n_rows, w->feats, w->row_example, w->row_pos,
                             in->token_task ? w->row_labels : in->labels + x};
        al_probe_zero_grads(w->probe);
        /* eval mode: no dropout, so the generator is never drawn */
        if (!st) st = al_probe_forward_backward(w->probe, &pb, 0, NULL, &loss, w->d_feats, err);
        float *d_ptrs[64];
        for (int k = 0; k < S; k++) d_ptrs[k] = w->d_hidden + (size_t)k * L * D;
        if (!st) st = al_probe_scatter(w->d_feats, n_rows, w->row_example, w->row_pos, S, 1, L, D, d_ptrs, err);
        if (!st) st = al_train_backward(w->ctx, w->d_hidden, err);
    }
    if (st) return st;
    memcpy(j->grads + (size_t)x * j->NH, al_train_lambda_value_grads(w->ctx), sizeof(double) * (size_t)j->NH);
    j->losses[x] = loss;
    return AL_OK;
}

static void example_task(void *arg, int t, int n_tasks, int thread) {
    (void)n_tasks;
    job *j = arg;
    j->status[t] = one_example(j, &j->workers[thread], j->x0 + t, &j->errors[t]);
}

static void free_workers(worker *w, int n) {
    for (int i = 0; w && i < n; i++) {
        al_train_ctx_free(w[i].ctx);
        al_probe_free(w[i].probe);
        free(w[i].feats), free(w[i].d_feats), free(w[i].d_hidden);
        free(w[i].row_example), free(w[i].row_pos), free(w[i].row_labels), free(w[i].next);
    }
    free(w);
}

al_status al_head_importance_measure(al_model *model, const al_papa_inputs *in, al_importance_loss loss,
                                     const al_probe *probe, const al_forward_params *params,
                                     al_head_importance *out, al_error *err) {
    memset(out, 0, sizeof *out);
    const al_config *cfg = al_model_config(model);
    const int NL = cfg->n_layers, H = cfg->n_heads, D = cfg->hidden_size, L = in->L, S = NL + 1, NH = NL * H;
    if (loss == AL_IMPORTANCE_MLM && !al_model_has_mlm_head(model))
        return al_err(err, AL_ERR_INVALID, "head importance: loss 'mlm' needs a model with an MLM head");
    if (loss == AL_IMPORTANCE_PROBE && !probe)
        return al_err(err, AL_ERR_INVALID, "head importance: loss 'probe' needs a probe");
    if (loss == AL_IMPORTANCE_LM && !al_model_is_causal(model))
        return al_err(err, AL_ERR_INVALID, "head importance: loss 'lm' needs a causal language model");
    if (loss == AL_IMPORTANCE_LM) { /* the decoder layers' backward (train_decoder.c) */
        al_status st = al_train_check_family(model, "head importance with the language-model loss",
                                             "; it runs on gpt2, llama, qwen2 and gpt_neox", err);
        if (st) return st;
    }
    if (in->n < 1) return al_err(err, AL_ERR_INVALID, "head importance: no examples");
    al_threadpool *pool = params ? params->pool : NULL;
    const int T = al_threadpool_size(pool);
    al_train_options opt = al_train_default_options();
    opt.training = 0;
    opt.weight_grads = 0; /* the encoder is frozen: gradients reach the head mask only */
    opt.mlm_head = loss == AL_IMPORTANCE_MLM || loss == AL_IMPORTANCE_LM; /* the LM head's rows and logits */
    /* every head MIX at lambda = 1 (a logit whose sigmoid is exactly 1.0f) with a zero constant: P = S */
    float *zeros = calloc((size_t)L * L, sizeof(float));
    al_head_policy *pol = calloc((size_t)NH, sizeof *pol);
    worker *w = calloc((size_t)T, sizeof *w);
    job j = {model, in, loss, w, 0, NH, S, D, L, malloc(sizeof(double) * (size_t)in->n * NH),
             malloc(sizeof(float) * (size_t)in->n), malloc(sizeof(al_status) * (size_t)T), calloc((size_t)T, sizeof(al_error))};
    al_status st = zeros && pol && w && j.grads && j.losses && j.status && j.errors
                       ? AL_OK : al_err(err, AL_ERR_OOM, "head importance: out of memory");
    for (int i = 0; i < NH && !st; i++) pol[i] = (al_head_policy){AL_HEAD_MIX, 1.0f, zeros};
    for (int i = 0; i < T && !st; i++) {
        st = al_train_ctx_new(model, 1, L, &opt, &w[i].ctx, err);
        if (!st) st = al_train_set_policies(w[i].ctx, pol, err);
        if (st) break;
        float *theta = al_train_lambda_logits(w[i].ctx);
        for (int h = 0; h < NH; h++) theta[h] = 40.0f;
        if (loss == AL_IMPORTANCE_LM && !(w[i].next = malloc(sizeof(int32_t) * (size_t)L))) {
            st = al_err(err, AL_ERR_OOM, "head importance: out of memory for the next-token labels");
            break;
        }
        if (loss == AL_IMPORTANCE_PROBE) {
            al_probe_config pc = *al_probe_get_config(probe);
            pc.max_batch = 1;
            pc.max_rows = L;
            st = al_probe_new(&pc, 0, &w[i].probe, err);
            if (st) break;
            memcpy(al_probe_params(w[i].probe), al_probe_params((al_probe *)probe),
                   sizeof(float) * al_probe_n_params(probe));
            w[i].feats = malloc(sizeof(float) * (size_t)L * S * D);
            w[i].d_feats = malloc(sizeof(float) * (size_t)L * S * D);
            w[i].d_hidden = malloc(sizeof(float) * (size_t)S * L * D);
            w[i].row_example = malloc(sizeof(int32_t) * (size_t)L);
            w[i].row_pos = malloc(sizeof(int32_t) * (size_t)L);
            w[i].row_labels = malloc(sizeof(int32_t) * (size_t)L);
            if (!w[i].feats || !w[i].d_feats || !w[i].d_hidden || !w[i].row_example || !w[i].row_pos || !w[i].row_labels)
                st = al_err(err, AL_ERR_OOM, "head importance: out of memory for the probe rows");
        }
    }
    for (int x0 = 0; x0 < in->n && !st; x0 += T) {
        if (params && params->cancel && *params->cancel) {
            st = al_err(err, AL_ERR_CANCELLED, "head importance: cancelled at example %d", x0);
            break;
        }
        const int nb = in->n - x0 < T ? in->n - x0 : T;
        j.x0 = x0;
        al_threadpool_for(pool, nb, example_task, &j);
        for (int t = 0; t < nb && !st; t++) /* the first failing example's error */
            if (j.status[t]) {
                *err = j.errors[t];
                st = j.status[t];
            }
        if (params && params->progress) params->progress(params->progress_user, "importance", (double)(x0 + nb) / in->n);
    }
    if (!st) {
        out->n_layers = NL, out->n_heads = H;
        out->raw = calloc((size_t)NH, sizeof(double));
        out->signed_sum = calloc((size_t)NH, sizeof(double));
        out->normalized = calloc((size_t)NH, sizeof(double));
        if (!out->raw || !out->signed_sum || !out->normalized) st = al_err(err, AL_ERR_OOM, "head importance: out of memory");
    }
    if (!st) {
        double loss_sum = 0.0;
        for (int x = 0; x < in->n; x++) { /* example order: the same sum at any thread count */
            if (isnan(j.losses[x])) continue;
            out->n_examples++;
            loss_sum += j.losses[x];
            for (int h = 0; h < NH; h++) {
                const double g = j.grads[(size_t)x * NH + h];
                out->raw[h] += fabs(g);
                out->signed_sum[h] += g;
            }
        }
        if (!out->n_examples) st = al_err(err, AL_ERR_INVALID, "head importance: no example has a label%s",
                                          loss == AL_IMPORTANCE_MLM ? " (no masked token)"
                                          : loss == AL_IMPORTANCE_LM ? " (no text of two tokens to predict from)" : "");
        for (int h = 0; h < NH && !st; h++) {
            out->raw[h] /= out->n_examples;
            out->signed_sum[h] /= out->n_examples;
        }
        out->mean_loss = out->n_examples ? loss_sum / out->n_examples : 0.0;
        for (int l = 0; l < NL && !st; l++) { /* Michel et al.: each layer's scores over their L2 norm */
            double sq = 0.0;
            for (int h = 0; h < H; h++) sq += out->raw[l * H + h] * out->raw[l * H + h];
            const double norm = sqrt(sq);
            for (int h = 0; h < H; h++) out->normalized[l * H + h] = norm > 0.0 ? out->raw[l * H + h] / norm : 0.0;
        }
    }
    if (st) al_head_importance_free(out);
    free_workers(w, T);
    free(zeros), free(pol), free(j.grads), free(j.losses), free(j.status), free(j.errors);
    return st;
}

al_status al_head_importance_probe(al_model *model, const al_task *task, const al_papa_inputs *train,
                                   const al_papa_probe_settings *ps, uint64_t seed, int batch_size,
                                   size_t mem_limit, const al_forward_params *params, al_probe **out,
                                   al_error *err) {
    *out = NULL;
    al_probe_data *features = NULL;
    al_forward_params fp = params ? *params : al_forward_default_params();
    fp.skip_pads = 1; /* as the sweep computes features */
    al_status st = al_papa_features(model, train, NULL, 0, batch_size, mem_limit, &fp, &features, err);
    const al_probe_config pc = al_papa_probe_config(model, task, train->L, ps, 0);
    al_probe *probe = NULL;
    if (!st) st = al_probe_new(&pc, seed, &probe, err);
    const al_probe_fit_options fo = al_papa_probe_fit_options(ps, seed, params ? params->cancel : NULL);
    if (!st) st = al_probe_fit(probe, features, &fo, NULL, err);
    al_probe_data_free(features);
    if (st) al_probe_free(probe);
    else *out = probe;
    return st;
}

al_status al_head_importance_task(al_model *model, const al_task *task, const al_papa_inputs *train,
                                  const al_papa_probe_settings *ps, uint64_t seed, int batch_size, size_t mem_limit,
                                  int max_examples, const al_forward_params *params, al_head_importance *out,
                                  al_error *err) {
    memset(out, 0, sizeof *out);
    al_probe *probe = NULL;
    al_status st = al_head_importance_probe(model, task, train, ps, seed, batch_size, mem_limit, params, &probe, err);
    al_papa_inputs part = *train;
    if (max_examples > 0 && part.n > max_examples) part.n = max_examples;
    if (!st) st = al_head_importance_measure(model, &part, AL_IMPORTANCE_PROBE, probe, params, out, err);
    al_probe_free(probe);
    return st;
}
