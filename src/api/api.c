/* api.c: the JSON API's session and dispatcher.
 *
 * One request object in, one reply object plus binary tensors out; the same requests run in the
 * native CLI (tools/attnlab.c) and in the browser worker (wasm/exports.c). Ops:
 *
 *   {"op": "load_model", "model": ID, "path": DIR}      native only: loads a directory under ID
 *   {"op": "unload_model", "model": ID}
 *   {"op": "models"}                                    -> {"models": [ID, ...]}
 *   {"op": "version"}                                   -> {"version", "kernels"}
 *   {"op": "info", "model": ID}                         -> config, arch, parameter count, weights
 *                                                          file and dtype, tokenizer, special ids
 *   {"op": "tokenize", "model", "text", "text_pair"?, "max_length"?, "add_special_tokens"?}
 *                                                       -> tokens, ids, type_ids, word_ids, offsets,
 *                                                          attention_mask, special_tokens_mask
 *   {"op": "attention" (or "forward"), "model", "text" | "texts" | "input_ids", "text_pair"? |
 *    "text_pairs"?, "max_length"?, "pad_to"?, "add_special_tokens"?, "policies"?, "outputs"?}
 *                                                       -> tokens per sequence + tensors
 *      policies: [{"layer"?, "head"?, "mode": "standard|constant|mix|zero", "lambda"?,
 *                  "constant"?: NAME}] applied in order (later entries win); a missing layer or head
 *                  means every layer or head. NAME is a tensor attached with al_session_set_tensor,
 *                  [L, L] or [NL, H, L, L]; its L pads the batch when "pad_to" is absent.
 *      outputs: any of "attentions" [NL,B,H,L,L], "hidden_states" [NL+1,B,L,D],
 *               "values" [NL,B,H,L,head_dim], "mlm_logits" [B,L,V]; default ["attentions"].
 *               "input_ids" and "attention_mask" [B,L] (I32) always come back.
 *
 *   Effective attention and its analyses: "effective_attention", "attention_diff",
 *   "attention_stats", "attention_patterns", "attention_by_pos", "attention_similarity"; their
 *   fields are described at the top of src/api/op_effective.c and op_analysis_*.c.
 *
 * Every reply has "op" and "warnings" (e.g. unknown fields, truncation to the model's positions) and
 * "tensors" (name, dtype, shape of each binary tensor). Errors: {"error": {"code", "message"}} with
 * the message naming the request field at fault. The dispatcher reads JSON once per request and
 * hands typed arrays to the core; nothing here runs inside the forward pass's loops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../kernels/kernels.h"
#include "api_internal.h"
#include "op_analysis.h"

al_session *al_session_new(void) { return calloc(1, sizeof(al_session)); }

static void free_tensor(al_api_tensor *t) { free(t->data); }

void al_session_free(al_session *s) {
    if (!s) return;
    for (int i = 0; i < s->n_models; i++) al_model_free(s->models[i].model);
    free(s->models);
    for (int i = 0; i < s->n_inputs; i++) free_tensor(&s->inputs[i]);
    free(s->inputs);
    free(s);
}

const al_api_model *al_api_find_model(const al_session *s, const char *id) {
    for (int i = 0; i < s->n_models; i++)
        if (strcmp(s->models[i].id, id) == 0) return &s->models[i];
    return NULL;
}

const al_api_tensor *al_api_find_tensor(const al_session *s, const char *name) {
    for (int i = 0; i < s->n_inputs; i++)
        if (strcmp(s->inputs[i].name, name) == 0) return &s->inputs[i];
    return NULL;
}

static al_status check_id(const char *id, al_error *err) {
    if (!id || !id[0]) return al_err(err, AL_ERR_INVALID, "model id: must be a non-empty string");
    if (strlen(id) >= sizeof(((al_api_model *)0)->id))
        return al_err(err, AL_ERR_INVALID, "model id: longer than %zu bytes",
                      sizeof(((al_api_model *)0)->id) - 1);
    return AL_OK;
}

al_status al_api_put_model(al_session *s, const char *id, al_model *model, al_error *err) {
    al_status st = check_id(id, err);
    if (st) return st;
    for (int i = 0; i < s->n_models; i++) {
        if (strcmp(s->models[i].id, id) == 0) {
            al_model_free(s->models[i].model);
            s->models[i].model = model;
            return AL_OK;
        }
    }
    if (s->n_models == s->cap_models) {
        int cap = s->cap_models ? s->cap_models * 2 : 4;
        al_api_model *grown = realloc(s->models, (size_t)cap * sizeof *grown);
        if (!grown) return al_err(err, AL_ERR_OOM, "session: out of memory adding model '%s'", id);
        s->models = grown;
        s->cap_models = cap;
    }
    al_api_model *m = &s->models[s->n_models++];
    memset(m, 0, sizeof *m);
    snprintf(m->id, sizeof m->id, "%s", id);
    m->model = model;
    return AL_OK;
}

al_status al_session_add_model(al_session *s, const char *model_id, al_fileset *files,
                               al_error *err) {
    al_error_clear(err);
    al_status st = AL_OK;
    al_model *model = NULL;
    if (!s || !files) st = al_err(err, AL_ERR_INVALID, "session: NULL session or fileset");
    if (!st) st = check_id(model_id, err);
    if (!st) st = al_model_load(files, &model, err);
    al_fileset_free(files);
    if (!st) st = al_api_put_model(s, model_id, model, err);
    if (st) al_model_free(model);
    return st;
}

al_status al_session_set_tensor(al_session *s, const char *name, int ndim, const int64_t *shape,
                                const float *data, al_error *err) {
    al_error_clear(err);
    if (!s || !name || !shape || !data)
        return al_err(err, AL_ERR_INVALID, "session: set_tensor needs a session, name, shape and data");
    if (!name[0] || strlen(name) >= sizeof(((al_api_tensor *)0)->name))
        return al_err(err, AL_ERR_INVALID, "tensor '%.80s': name must be 1 to 63 bytes", name);
    if (ndim < 1 || ndim > 6)
        return al_err(err, AL_ERR_INVALID, "tensor '%s': ndim %d is outside [1, 6]", name, ndim);
    size_t count = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0 || (shape[d] > 0 && count > SIZE_MAX / sizeof(float) / (size_t)shape[d]))
            return al_err(err, AL_ERR_INVALID, "tensor '%s': dim %d (%lld) is invalid", name, d,
                          (long long)shape[d]);
        count *= (size_t)shape[d];
    }
    al_api_tensor t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "%s", name);
    t.ndim = ndim;
    for (int d = 0; d < ndim; d++) t.shape[d] = shape[d];
    t.count = count;
    t.data = malloc(count ? count * sizeof(float) : 1);
    if (!t.data) return al_err(err, AL_ERR_OOM, "tensor '%s': out of memory (%zu floats)", name, count);
    if (count) memcpy(t.data, data, count * sizeof(float));
    for (int i = 0; i < s->n_inputs; i++) {
        if (strcmp(s->inputs[i].name, name) == 0) {
            free_tensor(&s->inputs[i]);
            s->inputs[i] = t;
            return AL_OK;
        }
    }
    if (s->n_inputs == s->cap_inputs) {
        int cap = s->cap_inputs ? s->cap_inputs * 2 : 4;
        al_api_tensor *grown = realloc(s->inputs, (size_t)cap * sizeof *grown);
        if (!grown) {
            free(t.data);
            return al_err(err, AL_ERR_OOM, "tensor '%s': out of memory", name);
        }
        s->inputs = grown;
        s->cap_inputs = cap;
    }
    s->inputs[s->n_inputs++] = t;
    return AL_OK;
}

void al_session_clear_tensors(al_session *s) {
    if (!s) return;
    for (int i = 0; i < s->n_inputs; i++) free_tensor(&s->inputs[i]);
    s->n_inputs = 0;
}

void al_reply_free(al_reply *reply) {
    if (!reply) return;
    free(reply->json);
    for (int i = 0; i < reply->n_tensors; i++) free(reply->tensors[i].data);
    free(reply->tensors);
    memset(reply, 0, sizeof *reply);
}

/* ------------------------------------------------------------ small ops */

al_status al_op_load_model(al_op_ctx *ctx, al_error *err) {
    static const char *const known[] = {"op", "model", "path", NULL};
    const char *id, *path;
    al_status st = al_req_string(ctx->req, "model", "model", 1, &id, err);
    if (!st) st = al_req_string(ctx->req, "path", "path", 1, &path, err);
    if (!st) st = check_id(id, err);
    if (st) return st;
    al_req_warn_unknown(ctx->rb, ctx->req, known);
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
    static const char *const known[] = {"op", "model", NULL};
    const al_api_model *m;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (st) return st;
    al_req_warn_unknown(ctx->rb, ctx->req, known);
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
    static const char *const known[] = {"op", NULL};
    al_req_warn_unknown(ctx->rb, ctx->req, known);
    cJSON *list = al_rb_add(ctx->rb, ctx->rb->root, "models", cJSON_CreateArray());
    for (int i = 0; list && i < ctx->session->n_models; i++)
        al_rb_add(ctx->rb, list, NULL, cJSON_CreateString(ctx->session->models[i].id));
    return AL_OK;
}

static al_status op_version(al_op_ctx *ctx, al_error *err) {
    static const char *const known[] = {"op", NULL};
    al_req_warn_unknown(ctx->rb, ctx->req, known);
    al_rb_str(ctx->rb, ctx->rb->root, "version", AL_VERSION);
    al_rb_str(ctx->rb, ctx->rb->root, "kernels", al_kernels_path());
    return AL_OK;
}

/* ------------------------------------------------------------ dispatcher */

typedef struct op_entry {
    const char *name;
    al_status (*run)(al_op_ctx *ctx, al_error *err);
} op_entry;

static const op_entry k_ops[] = {
    {"load_model", al_op_load_model}, {"unload_model", al_op_unload_model},
    {"models", al_op_models},         {"version", op_version},
    {"info", al_op_info},             {"tokenize", al_op_tokenize},
    {"attention", al_op_attention},   {"forward", al_op_attention},
    {"effective_attention", al_op_effective},
    {"attention_diff", al_op_attention_diff},
    {"attention_stats", al_op_attention_stats},
    {"attention_patterns", al_op_attention_patterns},
    {"attention_by_pos", al_op_attention_by_pos},
    {"attention_similarity", al_op_attention_similarity},
};

/* The error reply: {"error": {"code": "invalid", "message": "..."}}. */
static void error_reply(const al_error *e, al_reply *reply) {
    cJSON *root = cJSON_CreateObject();
    cJSON *obj = root ? cJSON_AddObjectToObject(root, "error") : NULL;
    if (obj) {
        cJSON_AddStringToObject(obj, "code", al_status_name(e->code));
        cJSON_AddStringToObject(obj, "message", e->message);
    }
    reply->json = obj ? cJSON_PrintUnformatted(root) : NULL;
    cJSON_Delete(root);
    if (!reply->json) {
        /* Out of memory even for the error: a fixed text the caller can still parse (or NULL). */
        static const char fixed[] = "{\"error\":{\"code\":\"out_of_memory\",\"message\":\"reply: out of memory\"}}";
        reply->json = malloc(sizeof fixed);
        if (reply->json) memcpy(reply->json, fixed, sizeof fixed);
    }
}

static al_status dispatch(al_session *s, const char *request_json, const al_run_params *params,
                          al_reply *reply, al_error *err) {
    if (!s) return al_err(err, AL_ERR_INVALID, "session: NULL");
    if (!request_json) return al_err(err, AL_ERR_INVALID, "request: NULL");
    cJSON *req = cJSON_Parse(request_json);
    if (!req) {
        const char *at = cJSON_GetErrorPtr();
        long offset = at && at >= request_json ? (long)(at - request_json) : -1;
        return al_err(err, AL_ERR_FORMAT, "request: malformed JSON near byte %ld", offset);
    }
    al_status st = AL_OK;
    const char *op = NULL;
    if (!cJSON_IsObject(req)) st = al_err(err, AL_ERR_INVALID, "request: must be a JSON object");
    if (!st) st = al_req_string(req, "op", "op", 1, &op, err);
    const op_entry *entry = NULL;
    for (size_t i = 0; !st && i < sizeof k_ops / sizeof k_ops[0] && !entry; i++)
        if (strcmp(k_ops[i].name, op) == 0) entry = &k_ops[i];
    if (!st && !entry)
        st = al_err(err, AL_ERR_INVALID,
                    "request: field 'op': unknown op '%.100s' (ops: load_model, unload_model, "
                    "models, version, info, tokenize, attention, forward, effective_attention, "
                    "attention_diff, attention_stats, attention_patterns, attention_by_pos, "
                    "attention_similarity)",
                    op);
    al_reply_builder rb;
    if (!st) st = al_rb_init(&rb, op, err);
    if (!st) {
        al_op_ctx ctx = {s, req, &rb, params};
        st = entry->run(&ctx, err);
        if (!st) st = al_rb_finish(&rb, reply, err);
        else al_rb_discard(&rb);
    }
    cJSON_Delete(req);
    return st;
}

al_status al_session_run(al_session *s, const char *request_json, const al_run_params *params,
                         al_reply *reply) {
    if (!reply) return AL_ERR_INVALID;
    memset(reply, 0, sizeof *reply);
    al_run_params none = {NULL, NULL, NULL};
    al_error err;
    al_error_clear(&err);
    al_status st = dispatch(s, request_json, params ? params : &none, reply, &err);
    if (st) {
        if (err.code == AL_OK) {
            /* A callee returned a status without a message: still say something useful. */
            al_err(&err, st, "request failed (%s)", al_status_name(st));
        }
        err.code = st;
        al_reply_free(reply);
        error_reply(&err, reply);
    }
    return st;
}
