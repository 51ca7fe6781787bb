/* op_session.c: the ops that manage the session's models: "load_model" (native: a directory),
 * "unload_model" and "models". */
#include <string.h>

#include "../core/error.h"
#include "api_internal.h"

const al_req_field al_fields_load_model[] = {
    AL_F_STRING("model", NULL, "the id to load the model under"),
    AL_F_STRING("path", NULL, "the model's directory (Hugging Face layout)"),
    AL_F_END,
};

al_status al_op_load_model(al_op_ctx *ctx, al_error *err) {
    const char *id, *path;
    al_status st = al_req_string(ctx->req, "model", "model", 1, &id, err);
    if (!st) st = al_req_string(ctx->req, "path", "path", 1, &path, err);
    if (!st) st = al_api_check_model_id(id, err);
    if (st) return st;
    al_op_warn_unknown(ctx);
    al_api_progress(ctx->params, "load", 0.0);
    al_fileset *files = al_fileset_new();
    if (!files) return al_err(err, AL_ERR_OOM, "load_model: out of memory");
    st = al_fileset_add_dir(files, path, err);
    /* An empty result also covers WebAssembly builds without a file system, where opening any
     * directory "succeeds" with nothing in it. */
    if (!st && al_fileset_count(files) == 0)
        st = al_err(err, AL_ERR_IO,
                    "%s: no files found (in a WebAssembly build without a file system, hand the files "
                    "over with al_session_add_model)",
                    path);
    if (st) {
        al_fileset_free(files);
        return st;
    }
    st = al_session_add_model(ctx->session, id, files, err);
    if (st) return st;
    al_api_progress(ctx->params, "load", 1.0);
    al_api_describe_model(ctx->rb, ctx->rb->root, al_api_find_model(ctx->session, id));
    return AL_OK;
}

al_status al_op_unload_model(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (st) return st;
    al_op_warn_unknown(ctx);
    al_session *s = ctx->session;
    int index = (int)(m - s->models);
    al_rb_str(ctx->rb, ctx->rb->root, "model", m->id);
    al_model_free(s->models[index].model);
    memmove(&s->models[index], &s->models[index + 1],
            (size_t)(s->n_models - index - 1) * sizeof *s->models);
    s->n_models--;
    return AL_OK;
}

al_status al_op_models(al_op_ctx *ctx, al_error *err) {
    al_op_warn_unknown(ctx);
    cJSON *list = al_rb_add(ctx->rb, ctx->rb->root, "models", cJSON_CreateArray());
    for (int i = 0; list && i < ctx->session->n_models; i++)
        al_rb_add(ctx->rb, list, NULL, cJSON_CreateString(ctx->session->models[i].id));
    return AL_OK;
}
