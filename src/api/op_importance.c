/* op_importance.c: the "head_importance" and "value_zeroing" ops (docs/importance.md).
 *
 *   {"op": "head_importance", "model", "task" | "task_jsonl" | "import", "loss"?: "probe" (default) | "mlm" | "lm"
 *    (a causal model's, and its default: the next-token cross-entropy; docs/importance.md),
 *    "max_examples"? (training examples the gradient averages over; default 1000), and papa's settings
 *    ("preset", "L", "layout", "max_train", "batch_size", "probe", "ranking" (its seed seeds the probe),
 *    "memory_mb")}
 *   -> "importance" [NL][H] (each layer's |dL/dxi| over its L2 norm, Michel et al.), "raw" [NL][H] (mean over
 *      examples of |dL(x)/dxi_h|), "signed" [NL][H] (mean of dL(x)/dxi_h), "order" [[layer, head], ...] (the
 *      pruning order: ascending importance), "n_examples", "mean_loss", "loss", "config", "seconds".
 *      The same request as papa with "orders": ["gradient"] orders heads by exactly these numbers.
 *   {"op": "value_zeroing", "model", "text" | "texts" | "input_ids" (+ pairs), "pad_to"?, "max_length"?,
 *    "add_special_tokens"?}
 *   -> tensors "value_zeroing" [B, NL, L, L] (rows normalised to sum 1) and "distances" [B, NL, L, L] (cosine
 *      distances); JSON n_seqs, seq_len, n_layers, sequences (tokens). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../methods/measures/head_importance.h"
#include "../methods/measures/value_zeroing.h"
#include "../train/train.h"
#include "experiment_setup.h"
#include "op_analysis.h"

static void head_matrix(al_reply_builder *rb, const char *key, const double *v, int NL, int H) {
    al_an_matrix(rb, rb->root, key, v, NL, H, 0);
}

const al_req_field al_fields_importance_own[] = {
    AL_F_ENUM("loss", al_importance_loss_names, "\"probe\"", "the loss whose gradient ranks the heads (a causal model: \"lm\", its default)"),
    AL_F_INT("max_examples", 0, 1 << 30, NULL, "training examples the gradient averages over (default: the preset's)"),
    AL_F_END,
};

al_status al_op_head_importance(al_op_ctx *ctx, al_error *err) {
    al_experiment x;
    memset(&x, 0, sizeof x);
    al_status st = al_req_model(ctx->session, ctx->req, &x.m, err);
    if (st) return st;
    const al_api_model *m = x.m;
    const char *loss_name = NULL;
    st = al_req_string(ctx->req, "loss", "loss", 0, &loss_name, err);
    const int causal = al_model_is_causal(m->model);
    const int loss = loss_name ? al_importance_loss_from_name(loss_name) : causal ? AL_IMPORTANCE_LM : AL_IMPORTANCE_PROBE;
    if (!st && loss < 0)
        st = al_err(err, AL_ERR_INVALID, "request: field 'loss' is '%.40s', not 'probe', 'mlm' or 'lm'", loss_name);
    /* a causal model's loss is the language model's (docs/importance.md, "Causal language models") */
    if (!st && causal && loss != AL_IMPORTANCE_LM)
        st = al_err(err, AL_ERR_INVALID, "request: field 'loss' is '%s' but model '%s' is %s, a causal language model: "
                    "its loss is 'lm' (the next-token cross-entropy)", loss_name, m->id,
                    al_arch_name(al_model_config(m->model)->arch));
    if (!st && !causal && loss == AL_IMPORTANCE_LM)
        st = al_err(err, AL_ERR_INVALID, "request: field 'loss' is 'lm' but model '%s' is not a causal language model",
                    m->id);
    if (!st && causal) /* the gradient runs through the decoder layers' backward (src/train/train_decoder.c) */
        st = al_train_check_family(m->model, "head_importance: field 'model': the language-model loss's gradient "
                                   "(the decoder layers' backward)", "; the families that run: gpt2, llama, qwen2, gpt_neox", err);
    if (!st && loss == AL_IMPORTANCE_MLM && !al_model_has_mlm_head(m->model))
        st = al_err(err, AL_ERR_INVALID, "request: field 'loss' is 'mlm' but model '%s' has no MLM head", m->id);
    if (!st) st = al_experiment_read(ctx, &x, err);
    if (st) return st;
    const al_papa_sweep_request *q = &x.q;
    int max_examples = q->importance_examples;
    st = al_req_int(ctx->req, "max_examples", "max_examples", 0, q->importance_examples, 0, 1 << 30, &max_examples, err);
    if (st) {
        al_experiment_free(&x);
        return st;
    }
    al_op_warn_unknown(ctx);
    const al_config *cfg = al_model_config(m->model);
    const int NL = cfg->n_layers, H = cfg->n_heads, NH = NL * H;
    const al_tokenizer *tok = al_model_tokenizer(m->model);
    al_forward_params fp = al_forward_default_params();
    fp.progress = ctx->params->progress;
    fp.progress_user = ctx->params->progress_user;
    fp.cancel = ctx->params->cancel;
    fp.pool = ctx->session->pool;
    const double t0 = al_now_seconds();
    al_papa_inputs mlm;
    memset(&mlm, 0, sizeof mlm);
    al_head_importance r;
    memset(&r, 0, sizeof r);
    if (!tok) st = al_err(err, AL_ERR_INVALID, "head_importance: model '%s' has no tokenizer files", m->id);
    if (!st) st = al_experiment_check_length(&x, err);
    if (!st && loss == AL_IMPORTANCE_PROBE) {
        st = al_experiment_inputs(&x, 0, "head_importance", err);
        if (!st) st = al_head_importance_task(m->model, x.task, &x.train, &q->probe, q->rank.seed, q->batch_size, q->mem_limit,
                                              max_examples, &fp, &r, err);
    } else if (!st && loss == AL_IMPORTANCE_LM) {
        /* the task's training text as the language model reads it (al_experiment_inputs: right padded) */
        st = al_experiment_inputs(&x, 0, "head_importance", err);
        al_papa_inputs part = x.train;
        if (max_examples > 0 && part.n > max_examples) part.n = max_examples;
        if (!st) st = al_head_importance_measure(m->model, &part, AL_IMPORTANCE_LM, NULL, &fp, &r, err);
    } else if (!st) {
        /* the task's training text, masked as the MLM score masks it (docs/papa.md#mlm-score) */
        st = al_papa_mlm_task_examples(tok, x.task, AL_TASK_TRAIN, max_examples > 0 ? max_examples : -1, q->layout, q->L, 4321,
                                       &mlm, err);
        if (!st) st = al_head_importance_measure(m->model, &mlm, AL_IMPORTANCE_MLM, NULL, &fp, &r, err);
    }
    int *order = st ? NULL : malloc(sizeof(int) * (size_t)NH);
    float *scores = st ? NULL : malloc(sizeof(float) * (size_t)NH);
    if (!st && (!order || !scores)) st = al_err(err, AL_ERR_OOM, "head_importance: out of memory");
    for (int i = 0; !st && i < NH; i++) scores[i] = (float)r.normalized[i];
    if (!st) st = al_papa_head_order(AL_ORDER_GRADIENT, NL, H, scores, 0, order, err); /* the sweep's own rule */
    if (!st) {
        al_reply_builder *rb = ctx->rb;
        al_rb_str(rb, rb->root, "model", m->id);
        al_rb_str(rb, rb->root, "task", x.task->id);
        al_rb_str(rb, rb->root, "loss", al_importance_loss_name((al_importance_loss)loss));
        al_rb_str(rb, rb->root, "normalisation", "per layer: |dL/dxi| over the layer's L2 norm (Michel et al. 2019)");
        al_rb_num(rb, rb->root, "n_layers", NL);
        al_rb_num(rb, rb->root, "n_heads", H);
        al_rb_num(rb, rb->root, "n_examples", r.n_examples);
        al_rb_num(rb, rb->root, "mean_loss", r.mean_loss);
        head_matrix(rb, "importance", r.normalized, NL, H);
        head_matrix(rb, "raw", r.raw, NL, H);
        head_matrix(rb, "signed", r.signed_sum, NL, H);
        cJSON *list = al_rb_add(rb, rb->root, "order", cJSON_CreateArray());
        for (int i = 0; list && i < NH; i++) {
            cJSON *pair = al_rb_add(rb, list, NULL, cJSON_CreateArray());
            al_rb_add(rb, pair, NULL, cJSON_CreateNumber(order[i] / H));
            al_rb_add(rb, pair, NULL, cJSON_CreateNumber(order[i] % H));
        }
        cJSON *c = al_rb_add(rb, rb->root, "config", cJSON_CreateObject());
        al_rb_str(rb, c, "preset", x.preset);
        al_rb_num(rb, c, "L", q->L);
        al_rb_str(rb, c, "layout", al_papa_layout_name(q->layout));
        al_rb_num(rb, c, "max_train", q->max_train);
        al_rb_num(rb, c, "max_examples", max_examples);
        al_rb_num(rb, c, "seed", (double)q->rank.seed);
        if (loss == AL_IMPORTANCE_PROBE) {
            cJSON *p = al_rb_add(rb, c, "probe", cJSON_CreateObject());
            al_rb_num(rb, p, "epochs", q->probe.epochs);
            al_rb_num(rb, p, "batch_size", q->probe.batch_size);
            al_rb_num(rb, p, "lr", q->probe.lr);
            al_rb_num(rb, p, "dropout", x.task->kind == AL_TASK_TOKEN ? 0.0 : q->probe.dropout);
        }
        al_rb_num(rb, rb->root, "seconds", al_now_seconds() - t0);
    }
    free(order), free(scores);
    al_head_importance_free(&r);
    al_papa_inputs_free(&mlm);
    al_experiment_free(&x);
    return st;
}

al_status al_op_value_zeroing(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    al_an_opts o;
    al_api_inputs in;
    al_status st = al_an_begin(ctx, 8, &m, &o, &in, err);
    if (st) return st;
    const al_config *cfg = al_model_config(m->model);
    const int L = al_an_length(&in, &o), B = in.n_seqs, NL = cfg->n_layers;
    const size_t BL = (size_t)B * L;
    int32_t *ids = malloc(sizeof(int32_t) * BL), *mask = calloc(BL, sizeof(int32_t)), *types = calloc(BL, sizeof(int32_t));
    int32_t *pos = NULL;
    if (!ids || !mask || !types) st = al_err(err, AL_ERR_OOM, "value_zeroing: out of memory");
    for (int b = 0; b < B && !st; b++) {
        const al_run_example *e = &in.examples[b];
        for (int i = 0; i < L; i++) ids[(size_t)b * L + i] = cfg->pad_token_id;
        for (int i = 0; i < e->n; i++) {
            ids[(size_t)b * L + i] = e->ids[i];
            mask[(size_t)b * L + i] = e->mask ? e->mask[i] != 0 : 1;
            if (e->type_ids) types[(size_t)b * L + i] = e->type_ids[i];
        }
        if (e->position_ids) { /* given positions (a laid-out row); the padding beyond it is never attended to */
            if (!pos) pos = calloc(BL, sizeof(int32_t));
            if (!pos) st = al_err(err, AL_ERR_OOM, "value_zeroing: out of memory");
            for (int i = 0; pos && i < e->n; i++) pos[(size_t)b * L + i] = e->position_ids[i];
        }
    }
    al_reply_builder *rb = ctx->rb;
    const int64_t shape[4] = {B, NL, L, L};
    void *norm = NULL, *dist = NULL;
    if (!st) st = al_rb_tensor(rb, "value_zeroing", "F32", 4, shape, &norm, err);
    if (!st) st = al_rb_tensor(rb, "distances", "F32", 4, shape, &dist, err);
    if (!st) {
        al_batch batch = {B, L, ids, mask, types, pos};
        al_forward_params fp = al_forward_default_params();
        fp.progress = ctx->params->progress;
        fp.progress_user = ctx->params->progress_user;
        fp.cancel = ctx->params->cancel;
        fp.pool = ctx->session->pool;
        st = al_value_zeroing(m->model, &batch, &fp, dist, norm, err);
    }
    if (!st) {
        al_rb_str(rb, rb->root, "model", m->id);
        al_rb_str(rb, rb->root, "normalisation", "each row over its sum (Mohebbi et al. 2023)");
        al_rb_num(rb, rb->root, "n_seqs", B);
        al_rb_num(rb, rb->root, "seq_len", L);
        al_rb_num(rb, rb->root, "n_layers", NL);
        cJSON *seqs = al_rb_add(rb, rb->root, "sequences", cJSON_CreateArray());
        const al_tokenizer *tok = al_model_tokenizer(m->model);
        for (int b = 0; seqs && b < B; b++) {
            cJSON *obj = al_rb_add(rb, seqs, NULL, cJSON_CreateObject());
            if (!obj) break;
            const al_api_seq *seq = &in.seqs[b];
            al_rb_num(rb, obj, "n_tokens", seq->n_tokens);
            al_rb_bool(rb, obj, "truncated", seq->truncated);
            al_rb_add(rb, obj, "tokens", al_api_token_strings(tok, in.from_text ? seq->enc.ids : seq->raw_ids, seq->n_tokens));
        }
    }
    free(ids), free(mask), free(types), free(pos);
    al_api_inputs_free(&in);
    return st;
}
