/* op_analysis_common.c: what the analysis ops share: their common request fields and the batch
 * runner's settings for them. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "op_analysis.h"

/* The analyses' fields besides the sequences (their tables: ops.c). */
static const char *const k_modes[] = {"exact", "paper", NULL};
const al_req_field al_fields_an_mode[] = {
    AL_F_ENUM("mode", k_modes, "\"exact\"", "effective attention exactly, or as the paper computes it (docs/effective.md)"),
    AL_F_END,
};
const al_req_field al_fields_an_average[] = {
    AL_F_ENUM("average", k_modes, NULL, "the average over tokens exactly, or as the paper takes it (default: 'mode')"),
    AL_F_END,
};
const al_req_field al_fields_an_batch[] = {
    AL_F_INT("batch_size", 1, 1 << 20, NULL, "sequences per forward batch"),
    AL_F_END,
};

static al_status read_choice(const cJSON *req, const char *key, const char *a, const char *b,
                             int def, int *out, al_error *err) {
    const char *v;
    al_status st = al_req_string(req, key, key, 0, &v, err);
    if (st) return st;
    *out = def;
    if (!v) return AL_OK;
    if (strcmp(v, a) == 0) *out = 0;
    else if (strcmp(v, b) == 0) *out = 1;
    else
        return al_err(err, AL_ERR_INVALID, "request: field '%s' must be \"%s\" or \"%s\", not '%.60s'",
                      key, a, b, v);
    return AL_OK;
}

al_status al_an_read_opts(const al_op_ctx *ctx, int default_batch, al_an_opts *o, al_error *err) {
    memset(o, 0, sizeof *o);
    int mode = 0, average = 0;
    al_status st = read_choice(ctx->req, "mode", "exact", "paper", 0, &mode, err);
    if (!st) st = read_choice(ctx->req, "average", "exact", "paper", mode, &average, err);
    if (!st) st = al_req_bool(ctx->req, "add_special_tokens", "add_special_tokens", 1, &o->add_special, err);
    if (!st) st = al_req_int(ctx->req, "pad_to", "pad_to", 0, 0, 1, 1 << 24, &o->pad_to, err);
    if (!st) st = al_req_int(ctx->req, "max_length", "max_length", 0, 0, 1, 1 << 24, &o->max_length, err);
    if (!st)
        st = al_req_int(ctx->req, "batch_size", "batch_size", 0, default_batch, 1, 1 << 20,
                        &o->batch_size, err);
    o->mode = mode ? AL_EFFECTIVE_PAPER : AL_EFFECTIVE_EXACT;
    o->average = average ? AL_AVERAGE_PAPER : AL_AVERAGE_EXACT;
    return st;
}

al_status al_an_begin(const al_op_ctx *ctx, int default_batch,
                      const al_api_model **model, al_an_opts *o, al_api_inputs *in, al_error *err) {
    al_status st = al_req_model(ctx->session, ctx->req, model, err);
    if (!st) st = al_an_read_opts(ctx, default_batch, o, err);
    if (st) return st;
    al_op_warn_unknown(ctx);
    return al_an_read_inputs(ctx, (*model)->model, o, in, err);
}

al_status al_an_read_inputs(const al_op_ctx *ctx, const al_model *model, const al_an_opts *o,
                            al_api_inputs *in, al_error *err) {
    al_api_limits lim;
    al_status st = al_api_limits_make(model, o->pad_to, o->max_length, 0, NULL, &lim, err);
    if (st) return st;
    return al_api_read_inputs(ctx, model, o->add_special, &lim, in, err);
}

int al_an_length(const al_api_inputs *in, const al_an_opts *o) {
    return al_batch_run_length(in->examples, in->n_seqs, o->pad_to);
}

cJSON *al_an_matrix(al_reply_builder *rb, cJSON *obj, const char *key, const double *v, int rows,
                    int cols, double div) {
    cJSON *m = al_rb_add(rb, obj, key, cJSON_CreateArray());
    for (int i = 0; m && i < rows; i++) {
        cJSON *row = al_rb_add(rb, m, NULL, cJSON_CreateArray());
        for (int j = 0; row && j < cols; j++)
            al_rb_add(rb, row, NULL, cJSON_CreateNumber(div ? v[(size_t)i * cols + j] / div
                                                            : v[(size_t)i * cols + j]));
    }
    return m;
}

/* The runner reports per batch ("batches") and per layer ("forward"); analyses show the batches. */
static void report_batches(void *user, const char *stage, double fraction) {
    if (strcmp(stage, "batches") == 0) al_api_progress(user, "analysis", fraction);
}

al_status al_an_run(const al_op_ctx *ctx, const al_model *model, const al_model *model_b,
                    const al_api_inputs *in, const al_an_opts *o, al_batch_run_fn fn, void *user,
                    al_error *err) {
    return al_an_run_outputs(ctx, model, model_b, in, o, AL_RUN_ATTENTIONS | AL_RUN_VALUES, 1, fn, user, err);
}

al_status al_an_run_outputs(const al_op_ctx *ctx, const al_model *model, const al_model *model_b,
                            const al_api_inputs *in, const al_an_opts *o, int outputs, int effective,
                            al_batch_run_fn fn, void *user, al_error *err) {
    al_batch_run_params p = al_batch_run_default_params();
    p.outputs = outputs;
    p.effective = effective;
    p.effective_mode = o->mode;
    p.batch_size = o->batch_size;
    p.pad_to = o->pad_to;
    p.model_b = model_b;
    p.progress = ctx->params->progress ? report_batches : NULL;
    p.progress_user = (void *)ctx->params;
    p.cancel = ctx->params->cancel;
    p.who = "analysis";
    p.pool = ctx->session->pool;
    return al_batch_run(model, in->examples, in->n_seqs, &p, fn, user, err);
}
