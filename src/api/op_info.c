/* op_info.c: the "info" op: what a loaded model is (config, weights, tokenizer). */
#include "../core/error.h"
#include "api_internal.h"

al_status al_op_info(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (st) return st;
    al_op_warn_unknown(ctx);
    al_api_describe_model(ctx->rb, ctx->rb->root, m);
    return AL_OK;
}
