/* family_decoder.c: the config readers the decoder families share (family_gpt2.c, family_llama.c, family_qwen2.c,
 * family_gpt_neox.c; docs/decoders.md): flags, rotary bases, refusals of fields attnlab does not build, and the
 * token that pads a batch. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "family.h"
#include "family_params.h"

al_status al_cfg_flag(const cJSON *root, const char *file, const char *field, int def, int *out, al_error *err) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, field);
    *out = def;
    if (!item || cJSON_IsNull(item)) return AL_OK;
    if (!cJSON_IsBool(item)) return al_err(err, AL_ERR_FORMAT, "%s: field '%s' must be true or false", file, field);
    *out = cJSON_IsTrue(item);
    return AL_OK;
}

al_status al_cfg_refuse_flag(const cJSON *root, const char *file, const char *field, int def, int refused,
                             const char *why, al_error *err) {
    int v;
    al_status st = al_cfg_flag(root, file, field, def, &v, err);
    if (st) return st;
    if (v == refused)
        return al_err(err, AL_ERR_UNSUPPORTED, "%s: field '%s' = %s is not supported (%s)", file, field,
                      v ? "true" : "false", why);
    return AL_OK;
}

al_status al_cfg_refuse_present(const cJSON *root, const char *file, const char *field, const char *why,
                                al_error *err) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, field);
    if (item && !cJSON_IsNull(item))
        return al_err(err, AL_ERR_UNSUPPORTED, "%s: field '%s' is not supported (%s)", file, field, why);
    return AL_OK;
}

al_status al_cfg_number(const cJSON *root, const char *file, const char *field, double def, double min, double max,
                        double *out, al_error *err) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, field);
    if (!item || cJSON_IsNull(item)) {
        *out = def;
        return AL_OK;
    }
    if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble) || item->valuedouble < min || item->valuedouble > max)
        return al_err(err, AL_ERR_FORMAT, "%s: field '%s' must be a number in [%g, %g]", file, field, min, max);
    *out = item->valuedouble;
    return AL_OK;
}

al_status al_decoder_pad_id(const cJSON *root, const char *file, al_config *c, al_error *err) {
    const int M = AL_CONFIG_MAX_DIM;
    int pad = -1, eos = -1;
    al_status st;
    /* eos_token_id may be a list (Llama 3): the first one pads */
    const cJSON *e = cJSON_GetObjectItemCaseSensitive(root, "eos_token_id");
    if (cJSON_IsArray(e) && cJSON_GetArraySize(e) > 0 && cJSON_IsNumber(cJSON_GetArrayItem(e, 0)))
        eos = (int)cJSON_GetArrayItem(e, 0)->valuedouble;
    else if ((st = al_cfg_int(root, file, "eos_token_id", 1, -1, -1, M, &eos, err)))
        return st;
    if ((st = al_cfg_int(root, file, "pad_token_id", 1, -1, -1, M, &pad, err))) return st;
    /* Decoders have no pad token of their own as a rule: a batch's pads (masked, never read) take it, else the
     * end-of-text token, else 0. */
    c->pad_token_id = pad >= 0 ? pad : eos >= 0 ? eos : 0;
    return AL_OK;
}

al_status al_decoder_common(const cJSON *root, const char *file, al_config *c, al_error *err) {
    al_decoder_params *d = al_decoder_mut(c);
    al_status st;
    if ((st = al_cfg_refuse_present(root, file, "rope_scaling",
                                    "only the default rotary embeddings are built; scaled ones would give other numbers",
                                    err)) ||
        (st = al_cfg_refuse_flag(root, file, "is_encoder_decoder", 0, 1, "a decoder-only model is expected", err)) ||
        (st = al_cfg_refuse_flag(root, file, "is_causal", 1, 0, "a bidirectional decoder is not built", err)) ||
        (st = al_decoder_pad_id(root, file, c, err)))
        return st;
    if (d->n_kv_heads <= 0) d->n_kv_heads = c->n_heads;
    if (c->n_heads % d->n_kv_heads != 0)
        return al_err(err, AL_ERR_FORMAT, "%s: field 'num_key_value_heads' = %d must divide the %d attention heads",
                      file, d->n_kv_heads, c->n_heads);
    if (c->head_dim <= 0) {
        if (c->hidden_size % c->n_heads != 0)
            return al_err(err, AL_ERR_FORMAT, "%s: hidden size %d is not a multiple of the %d heads", file,
                          c->hidden_size, c->n_heads);
        c->head_dim = c->hidden_size / c->n_heads;
    }
    c->type_vocab_size = 0;
    c->embedding_size = c->hidden_size;
    return AL_OK;
}

int al_decoder_hash_fields(const al_config *c, char *buf, size_t size) {
    const al_decoder_params *d = al_decoder(c);
    return snprintf(buf, size, "decoder %d %d %d %.17g %d %d %d %d %d %d\n", d->n_kv_heads, c->head_dim, d->rotary_dims,
                    d->rope_theta, d->window, d->window_from_layer, d->parallel_residual, (int)d->norm, (int)d->mlp,
                    c->tie_word_embeddings);
}

cJSON *al_decoder_config_fields(const al_config *c) {
    const al_decoder_params *d = al_decoder(c);
    cJSON *o = cJSON_CreateObject();
    if (!o || !cJSON_AddBoolToObject(o, "causal", 1) || !cJSON_AddNumberToObject(o, "num_key_value_heads", d->n_kv_heads) ||
        !cJSON_AddNumberToObject(o, "rotary_dims", d->rotary_dims) ||
        !(d->rotary_dims > 0 ? cJSON_AddNumberToObject(o, "rope_theta", d->rope_theta) : cJSON_AddNullToObject(o, "rope_theta")) ||
        !cJSON_AddNumberToObject(o, "sliding_window", d->window) ||
        !cJSON_AddNumberToObject(o, "window_from_layer", d->window_from_layer) ||
        !cJSON_AddBoolToObject(o, "parallel_residual", d->parallel_residual) ||
        !cJSON_AddStringToObject(o, "norm", d->norm == AL_DEC_RMSNORM ? "rmsnorm" : "layernorm") ||
        !cJSON_AddStringToObject(o, "mlp", d->mlp == AL_DEC_GLU ? "glu" : "mlp") ||
        !cJSON_AddBoolToObject(o, "tie_word_embeddings", c->tie_word_embeddings)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}
