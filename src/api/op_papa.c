/* op_papa.c: the "papa" op, the PAPA experiment as one JSON request (docs/papa-op.md): the request is
 * read into an al_papa_sweep_request (experiment_setup.h: presets first, then every field the user gives),
 * the sweep runs (src/methods/papa/papa_sweep.c) with the session's constants and lambdas when a request
 * before left them (papa_cache.h), and the reply (papa_reply.h) holds the resolved configuration, the content
 * hashes of model and task, every run's score, the summaries with 95% intervals, relative drops and findings,
 * the lambdas, the head orders, the MLM scores, timings, and a digest of the numbers (reply_digest.h: a repeat
 * of the request must give the same digest on any build). papa_merge is op_papa_merge.c. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "experiment_setup.h"
#include "op_heads.h"
#include "papa_cache.h"
#include "papa_reply.h"

static const char *const k_papa_outputs[] = {"constants", "theta", NULL};

/* The papa op's own fields; its task and settings are the shared groups (request_fields.c). */
const al_req_field al_fields_papa_own[] = {
    AL_F_ARRAY("constants", AL_FIELD_ENUM, 1, 0, al_papa_constant_names, NULL,
               "the constant matrices that replace a head's attention (default: the preset's)"),
    AL_F_ARRAY("orders", AL_FIELD_ENUM, 1, 0, al_papa_order_names, NULL,
               "the orders in which heads become constant (default: the preset's)"),
    AL_F_ARRAY("fractions", AL_FIELD_NUMBER, 0.0, 1.0, NULL, NULL, "fractions of input-dependent heads kept (1 to 16)"),
    AL_F_ARRAY("k", AL_FIELD_INT, 0.0, 1e6, NULL, NULL, "numbers of constant heads (instead of 'fractions')"),
    AL_F_ARRAY("seeds", AL_FIELD_INT, 0.0, 2147483647.0, NULL, NULL, "the probes' seeds"),
    AL_F_BOOL("baselines", NULL, "also the baselines: right padding, embeddings only"),
    AL_F_BOOL("mlm", NULL, "also the MLM score of every configuration"),
    AL_F_STRING("shard", NULL, "'i/N': this part of a sharded sweep (papa_merge joins the parts)"),
    AL_F_ARRAY("outputs", AL_FIELD_ENUM, 1, 0, k_papa_outputs, NULL,
               "tensors to return: the averaged constants, the lambda logits"),
    /* a causal language model's sweep instead of a task's (op_papa_lm.c, docs/papa-op.md) */
    AL_F_STRING("corpus", NULL, "a causal model's held-out text (documents separated by blank lines, or JSONL lines "
                                "with \"text\"), scored in bits per token instead of a task's probes"),
    AL_F_STRING("corpus_name", NULL, "the held-out text's file name, for the reply"),
    AL_F_STRING("constants_corpus", NULL, "the text the causal constants and the gradient order are averaged over "
                                          "(kept apart from 'corpus': shared documents are named in a warning)"),
    AL_F_STRING("constants_corpus_name", NULL, "its file name, for the reply"),
    AL_F_INT("min_windows", 1, 1 << 20, "4", "a causal constant's row reached by fewer windows is the uniform prefix"),
    AL_F_END,
};

al_status al_op_papa(al_op_ctx *ctx, al_error *err) {
    if (al_papa_is_lm_request(ctx->req)) return al_op_papa_lm(ctx, err);
    al_experiment x;
    al_status st = al_experiment_open(ctx, NULL, &x, err);
    if (st) return st;
    al_papa_sweep_request *q = &x.q;
    int outputs = 0;
    static const char *const out_names[] = {"constants", "theta"};
    st = al_req_flags(ctx->req, "outputs", out_names, 2, 0, &outputs, err);
    if (!st && (outputs & 2)) { /* only the lambda orders train the logits: say so rather than return nothing */
        int learns = 0;
        for (int i = 0; i < q->plan.n_orders; i++)
            learns |= q->plan.orders[i] == AL_ORDER_LAMBDA || q->plan.orders[i] == AL_ORDER_REVERSED_LAMBDA;
        if (!learns)
            st = al_err(err, AL_ERR_INVALID, "request: field 'outputs' asks for 'theta', which only a sweep with the "
                        "lambda (or reversed_lambda) order in 'orders' learns");
    }
    if (st) {
        al_experiment_free(&x);
        return st;
    }
    al_op_warn_unknown(ctx);
    const al_config *cfg = al_model_config(x.m->model);
    const int NL = cfg->n_layers, H = cfg->n_heads;
    al_experiment_cache_names(&x);
    const al_api_tensor *c_cached = al_api_find_tensor(ctx->session, x.c_name);
    const al_api_tensor *t_cached = al_api_find_tensor(ctx->session, x.t_name);
    if (c_cached) q->constants = c_cached->data;
    if (t_cached) q->theta = t_cached->data;
    q->progress = ctx->params->progress;
    q->plan_progress = ctx->params->plan_progress;
    q->progress_user = ctx->params->progress_user;
    q->cancel = ctx->params->cancel;
    q->pool = ctx->session->pool;
    al_papa_sweep_result r;
    st = al_papa_sweep_run(x.m->model, x.task, q, &r, err);
    if (st) {
        al_experiment_free(&x);
        return st;
    }
    al_reply_builder *rb = ctx->rb;
    char dig[72];
    if (t_cached) r.rank_loss = t_cached->data[NL * H]; /* stored after the logits */
    const int64_t c_shape[4] = {NL, H, q->L, q->L}, t_shape[1] = {NL * H + 1};
    al_papa_cache_put(ctx->session, x.c_name, 4, c_shape, r.constants);
    if (r.theta && !t_cached) {
        float *tl = malloc(sizeof(float) * ((size_t)NL * H + 1));
        if (tl) {
            memcpy(tl, r.theta, sizeof(float) * (size_t)NL * H);
            tl[NL * H] = (float)r.rank_loss;
            al_papa_cache_put(ctx->session, x.t_name, 1, t_shape, tl);
            free(tl);
        }
    }
    cJSON *reused = al_rb_add(rb, rb->root, "reused", cJSON_CreateObject());
    al_rb_bool(rb, reused, "constants", c_cached != NULL);
    al_rb_bool(rb, reused, "ranking", t_cached != NULL);
    al_papa_canonical_results(&r);
    al_papa_reply_digest(&r, NL * H, dig);
    al_heads_reply_identity(rb, x.m->id, NL, H, x.model_hash, x.task->hash);
    al_papa_reply_config(rb, q, x.preset, x.task);
    st = al_papa_reply_results(rb, &r, NL, H, x.task->metric, r.n_validation, err);
    al_papa_reply_task(rb, &r, x.task);
    al_rb_str(rb, rb->root, "digest", dig);
    if (!st && (outputs & 1) && r.constants) {
        int64_t shape[4] = {NL, H, q->L, q->L};
        void *data;
        st = al_rb_tensor(rb, "constants", "F32", 4, shape, &data, err);
        if (!st) memcpy(data, r.constants, sizeof(float) * (size_t)NL * H * q->L * q->L);
    }
    if (!st && (outputs & 2) && !r.theta)
        al_rb_warn(rb, "outputs: 'theta' is not returned: no configuration replaced some but not all heads in the "
                   "lambda order, so no lambdas were learned (add a fraction between 0 and 1)");
    if (!st && (outputs & 2) && r.theta) {
        int64_t shape[2] = {NL, H};
        void *data;
        st = al_rb_tensor(rb, "theta", "F32", 2, shape, &data, err);
        if (!st) memcpy(data, r.theta, sizeof(float) * (size_t)NL * H);
    }
    al_papa_sweep_result_free(&r);
    al_experiment_free(&x);
    return st;
}
