/* api.c: the JSON API's dispatcher: parses a request, finds its op in the op table (ops.c) and turns
 * a failure into the error reply.
 *
 * One request object in, one reply object plus binary tensors out; the same requests run in the
 * native CLI (tools/attnlab.c) and in the browser worker (wasm/exports.c). Ops (the table in ops.c
 * holds them; "version" lists them):
 *
 *   {"op": "load_model", "model": ID, "path": DIR}      native only: loads a directory under ID
 *   {"op": "unload_model", "model": ID}
 *   {"op": "models"}                                    -> {"models": [ID, ...]}
 *   {"op": "version"}                                   -> {"version", "kernels", "threads", "ops", "tasks", "metrics"}
 *   {"op": "info", "model": ID}                         -> config, arch, parameter count, weights
 *                                                          file and dtype, tokenizer, special ids,
 *                                                          family_rule (what decided the family), unused_files
 *                                                          [{file, reason}] (docs/families.md)
 *   {"op": "tokenize", "model", "text", "text_pair"?, "max_length"?, "add_special_tokens"?}
 *                                                       -> tokens, ids, type_ids, word_ids, offsets,
 *                                                          attention_mask, special_tokens_mask, added (the
 *                                                          special tokens the template added)
 *   {"op": "attention" (or "forward"), "model", "text" | "texts" | "input_ids", "text_pair"? |
 *    "text_pairs"?, "max_length"?, "pad_to"?, "add_special_tokens"?, "policies"?, "outputs"?}
 *                                                       -> tokens per sequence + tensors
 *      policies: [{"layer"?, "head"?, "mode": "standard|constant|mix|zero", "lambda"?,
 *                  "constant"?: NAME}] applied in order (later entries win); a missing layer or head
 *                  means every layer or head. NAME is a tensor attached with al_session_set_tensor,
 *                  [L, L] or [NL, H, L, L]; its L pads the batch when "pad_to" is absent.
 *      outputs: any of "attentions" [NL,B,H,L,L], "hidden_states" [NL+1,B,L,D],
 *               "values" [NL,B,H,L,head_dim], "mlm_logits" [B,L,V], "last_hidden_state" [B,L,D]
 *               (hidden_states[NL] alone); default ["attentions"].
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
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/json_nul.h"
#include "api_internal.h"

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
    size_t nul_at = 0;
    char nul_key[64];
    if (al_json_find_nul(request_json, strlen(request_json), &nul_at, nul_key, sizeof nul_key))
        return al_err(err, AL_ERR_INVALID,
                      "request: %s%s%s holds \\u0000 (a NUL character) at byte %zu; texts cannot contain NUL",
                      nul_key[0] ? "field '" : "a string", nul_key, nul_key[0] ? "'" : "", nul_at);
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
    const al_api_op *entry = NULL;
    if (!st) {
        entry = al_api_find_op(op);
        if (!entry) st = al_api_unknown_op(op, err);
    }
    if (!st) st = al_req_check_fields(req, entry->fields, err); /* kinds and fixed ranges, from the op's tables */
    al_reply_builder rb;
    if (!st) st = al_rb_init(&rb, op, err);
    if (!st) {
        al_op_ctx ctx = {s, req, &rb, params, entry};
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
    al_run_params none = {NULL, NULL, NULL, NULL};
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
