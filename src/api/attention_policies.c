/* attention_policies.c: reading the "policies" field of an attention request into one
 * al_head_policy per (layer, head). Later entries override earlier ones, so "every head constant,
 * then head 3 of layer 0 standard" is two entries. Mode names, lambda's range and which modes need a
 * constant come from src/model/head_policy.h (docs/head_policies.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../model/head_policy.h"
#include "attention_parts.h"

static al_status read_mode(const cJSON *entry, const char *path, al_head_mode *mode, al_error *err) {
    const char *name;
    al_status st = al_req_string(entry, "mode", path, 1, &name, err);
    if (st) return st;
    if (al_head_mode_parse(name, mode)) return AL_OK;
    char names[64];
    al_head_mode_list(names, sizeof names);
    return al_err(err, AL_ERR_INVALID, "request: field '%s' is '%.60s', not one of %s", path, name, names);
}

/* The constant tensor for (layer, head): [N, N] shared, or [NL, H, N, N] per head. */
static al_status find_constant(const al_op_ctx *ctx, const al_config *cfg, const cJSON *entry,
                               const char *path, const al_api_tensor **out, int *size,
                               al_error *err) {
    const char *name;
    al_status st = al_req_string(entry, "constant", path, 1, &name, err);
    if (st) return st;
    const al_api_tensor *t = al_api_find_tensor(ctx->session, name);
    if (!t)
        return al_err(err, AL_ERR_INVALID,
                      "request: field '%s': no input tensor '%.63s' (attach it before the run: "
                      "al_session_set_tensor)",
                      path, name);
    int square2 = t->ndim == 2 && t->shape[0] == t->shape[1];
    int square4 = t->ndim == 4 && t->shape[0] == cfg->n_layers && t->shape[1] == cfg->n_heads &&
                  t->shape[2] == t->shape[3];
    if (!square2 && !square4)
        return al_err(err, AL_ERR_INVALID,
                      "request: field '%s': tensor '%s' must be [L, L] or [%d, %d, L, L] (got %d dims)",
                      path, name, cfg->n_layers, cfg->n_heads, t->ndim);
    int64_t n = t->shape[t->ndim - 1];
    if (n < 1 || n > (1 << 16))
        return al_err(err, AL_ERR_INVALID, "request: field '%s': tensor '%s' has L = %lld", path,
                      name, (long long)n);
    *out = t;
    *size = (int)n;
    return AL_OK;
}

al_status al_api_read_policies(const al_op_ctx *ctx, const al_config *cfg, al_api_policy_set *out,
                               al_error *err) {
    memset(out, 0, sizeof *out);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(ctx->req, "policies");
    if (!list || cJSON_IsNull(list)) return AL_OK;
    if (!cJSON_IsArray(list))
        return al_err(err, AL_ERR_INVALID, "request: field 'policies' must be an array");
    const int NL = cfg->n_layers, H = cfg->n_heads;
    out->heads = calloc((size_t)NL * H + 1, sizeof *out->heads);
    if (!out->heads) return al_err(err, AL_ERR_OOM, "request: out of memory for policies");
    for (int i = 0; i < NL * H; i++) out->heads[i].mode = AL_HEAD_STANDARD;

    al_status st = AL_OK;
    int index = 0;
    char path[96];
    for (const cJSON *entry = list->child; entry && !st; entry = entry->next, index++) {
        if (!cJSON_IsObject(entry)) {
            st = al_err(err, AL_ERR_INVALID, "request: field 'policies[%d]' must be an object", index);
            break;
        }
        int layer, head;
        al_head_mode mode = AL_HEAD_STANDARD;
        float lambda = 0.0f;
        const al_api_tensor *constant = NULL;
        int size = 0;
        snprintf(path, sizeof path, "policies[%d].layer", index);
        st = al_req_int(entry, "layer", path, 0, -1, -1, NL - 1, &layer, err);
        snprintf(path, sizeof path, "policies[%d].head", index);
        if (!st) st = al_req_int(entry, "head", path, 0, -1, -1, H - 1, &head, err);
        snprintf(path, sizeof path, "policies[%d].mode", index);
        if (!st) st = read_mode(entry, path, &mode, err);
        if (!st && mode == AL_HEAD_MIX) {
            snprintf(path, sizeof path, "policies[%d].lambda", index);
            st = al_req_float(entry, "lambda", path, 1, 0.0f, AL_HEAD_LAMBDA_MIN, AL_HEAD_LAMBDA_MAX,
                              &lambda, err);
        }
        if (!st && al_head_mode_needs_constant(mode)) {
            snprintf(path, sizeof path, "policies[%d].constant", index);
            st = find_constant(ctx, cfg, entry, path, &constant, &size, err);
            if (!st && out->const_size && size != out->const_size)
                st = al_err(err, AL_ERR_INVALID,
                            "request: field '%s': tensor '%s' has L = %d but '%s' has L = %d", path,
                            constant->name, size, out->const_name, out->const_size);
            if (!st && !out->const_size) {
                out->const_size = size;
                snprintf(out->const_name, sizeof out->const_name, "%s", constant->name);
            }
        }
        for (int l = 0; !st && l < NL; l++) {
            if (layer >= 0 && l != layer) continue;
            for (int h = 0; h < H; h++) {
                if (head >= 0 && h != head) continue;
                al_head_policy *p = &out->heads[l * H + h];
                p->mode = mode;
                p->lambda = lambda;
                p->constant = NULL;
                if (constant) {
                    size_t per_head = (size_t)size * (size_t)size;
                    p->constant = constant->ndim == 4
                                      ? constant->data + ((size_t)l * H + h) * per_head
                                      : constant->data;
                }
            }
        }
    }
    if (st) al_api_policies_free(out);
    return st;
}

void al_api_policies_free(al_api_policy_set *p) {
    free(p->heads);
    memset(p, 0, sizeof *p);
}
