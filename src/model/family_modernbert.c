/* family_modernbert.c: ModernBERT (docs/families.md). Pre-norm layers without biases, a fused query-key-value
 * projection, rotary positions with a global and a local base, a sliding window on every layer but each
 * global_attn_every_n_layers-th, a GeGLU feed-forward, an embedding norm and a final norm, and an MLM head
 * (dense, activation, norm, decoder tied to the embeddings plus a bias). Tensor names as Hugging Face's
 * ModernBertForMaskedLM. */
#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "family.h"
#include "family_params.h"
#include "layer_rule.h"
#include "score_rule.h"

/* A true/false field: absent or null gives def; the value `refused` is refused naming the field and why. */
static al_status cfg_flag(const cJSON *root, const char *file, const char *field, int def, int refused,
                          const char *why, al_error *err) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, field);
    int v = def;
    if (item && !cJSON_IsNull(item)) {
        if (!cJSON_IsBool(item)) return al_err(err, AL_ERR_FORMAT, "%s: field '%s' must be true or false", file, field);
        v = cJSON_IsTrue(item);
    }
    if (v == refused)
        return al_err(err, AL_ERR_UNSUPPORTED, "%s: field '%s' = %s is not supported (%s)", file, field,
                      v ? "true" : "false", why);
    return AL_OK;
}

/* A rotary base: a positive finite number, def when absent or null. */
static al_status cfg_theta(const cJSON *root, const char *file, const char *field, double def, double *out,
                           al_error *err) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, field);
    if (!item || cJSON_IsNull(item)) {
        *out = def;
        return AL_OK;
    }
    if (!cJSON_IsNumber(item) || !(item->valuedouble > 1.0) || !isfinite(item->valuedouble))
        return al_err(err, AL_ERR_FORMAT, "%s: field '%s' must be a finite number above 1", file, field);
    *out = item->valuedouble;
    return AL_OK;
}

static al_status read_config(const cJSON *root, const char *file, al_config *c, al_error *err) {
    const int M = AL_CONFIG_MAX_DIM;
    al_modernbert_params *mb = al_modernbert_mut(c);
    al_status st;
    al_act head_act;
    if ((st = al_cfg_int(root, file, "hidden_size", 0, 0, 1, M, &c->hidden_size, err)) ||
        (st = al_cfg_int(root, file, "num_hidden_layers", 0, 0, 1, 1024, &c->n_layers, err)) ||
        (st = al_cfg_int(root, file, "num_attention_heads", 0, 0, 1, 4096, &c->n_heads, err)) ||
        (st = al_cfg_int(root, file, "intermediate_size", 0, 0, 1, M, &c->intermediate_size, err)) ||
        (st = al_cfg_act(root, file, "hidden_activation", &c->act, err)) ||
        (st = al_cfg_act(root, file, "classifier_activation", &head_act, err)) ||
        (st = al_cfg_int(root, file, "pad_token_id", 1, 50283, 0, M, &c->pad_token_id, err)) ||
        (st = al_cfg_eps(root, file, "norm_eps", 1e-5f, &c->layer_norm_eps, err)) ||
        (st = al_cfg_int(root, file, "global_attn_every_n_layers", 1, 3, 1, 1024, &mb->global_attn_every_n_layers,
                         err)) ||
        (st = al_cfg_int(root, file, "local_attention", 1, 128, 0, M, &mb->local_attention, err)) ||
        (st = cfg_theta(root, file, "global_rope_theta", 160000.0, &mb->global_rope_theta, err)) ||
        (st = cfg_theta(root, file, "local_rope_theta", 10000.0, &mb->local_rope_theta, err)))
        return st;
    /* ModernBertConfig's local_rope_theta is 10000 when absent; null means the global base */
    if (cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(root, "local_rope_theta"))) mb->local_rope_theta = mb->global_rope_theta;
    /* Every published ModernBERT has none of these biases; attnlab computes the models without them. */
    const char *no_bias = "attnlab computes ModernBERT without this bias";
    if ((st = cfg_flag(root, file, "norm_bias", 0, 1, no_bias, err)) ||
        (st = cfg_flag(root, file, "attention_bias", 0, 1, no_bias, err)) ||
        (st = cfg_flag(root, file, "mlp_bias", 0, 1, no_bias, err)) ||
        (st = cfg_flag(root, file, "classifier_bias", 0, 1, no_bias, err)) ||
        (st = cfg_flag(root, file, "decoder_bias", 1, 0, "attnlab computes the MLM decoder with its bias", err)))
        return st;
    /* The MLM head's activation is classifier_activation; attnlab's head uses the layers' one. */
    if (head_act != c->act)
        return al_err(err, AL_ERR_UNSUPPORTED,
                      "%s: field 'classifier_activation' differs from 'hidden_activation', which is not supported "
                      "(the MLM head uses the layers' activation)", file);
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "rope_scaling");
    if (item && !cJSON_IsNull(item))
        return al_err(err, AL_ERR_UNSUPPORTED, "%s: field 'rope_scaling' is not supported (only the default rotary "
                      "embeddings are implemented)", file);
    if (c->hidden_size % c->n_heads == 0 && (c->hidden_size / c->n_heads) % 2 != 0)
        return al_err(err, AL_ERR_FORMAT,
                      "%s: fields 'hidden_size' %d / 'num_attention_heads' %d give an odd head size, which rotary "
                      "embeddings cannot split in halves", file, c->hidden_size, c->n_heads);
    const cJSON *mp = cJSON_GetObjectItemCaseSensitive(root, "max_position_embeddings");
    if (!mp || cJSON_IsNull(mp)) c->max_position_embeddings = 8192; /* ModernBertConfig's default */
    c->type_vocab_size = 0;
    c->embedding_size = c->hidden_size;
    return AL_OK;
}

static const char *const model_types[] = {"modernbert", NULL};
static const char *const class_prefixes[] = {"ModernBert", NULL};

/* The final norm is listed with the embeddings: it is a model-level weight under the same prefix. */
static const al_tensor_name embedding_rows[] = {
    {"embeddings.tok_embeddings.weight", NULL, AL_W_WORD_EMB, {AL_DIM_V, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"embeddings.norm.weight", NULL, AL_W_EMB_LN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"final_norm.weight", NULL, AL_W_FINAL_LN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows embedding_part = AL_ROWS(embedding_rows);

/* Wqkv first: the registry recognises a bare encoder by its first layer row in layer 0, which has no
 * attn_norm. */
static const al_tensor_name layer_rows[] = {
    {"layers.{layer}.attn.Wqkv.weight", NULL, AL_W_QKV_W, {AL_DIM_3D, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.attn.Wo.weight", NULL, AL_W_O_W, {AL_DIM_D, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.attn_norm.weight", NULL, AL_W_LN_ATTN_G, {AL_DIM_D}, AL_WHEN_NOT_FIRST_LAYER, AL_LAYOUT_AS_IS},
    {"layers.{layer}.mlp_norm.weight", NULL, AL_W_LN_FFN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.mlp.Wi.weight", NULL, AL_W_FF_IN_W, {AL_DIM_2I, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.mlp.Wo.weight", NULL, AL_W_FF_OUT_W, {AL_DIM_D, AL_DIM_I}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows layer_part = AL_ROWS(layer_rows);

static const al_tensor_name mlm_rows[] = {
    {"head.dense.weight", NULL, AL_W_MLM_DENSE_W, {AL_DIM_M, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"head.norm.weight", NULL, AL_W_MLM_LN_G, {AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"decoder.weight", NULL, AL_W_MLM_DECODER_W, {AL_DIM_V, AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"decoder.bias", NULL, AL_W_MLM_DECODER_B, {AL_DIM_V}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows mlm_part = AL_ROWS(mlm_rows);

const al_family al_family_modernbert = {
    .name = "modernbert",
    .model_types = model_types,
    .class_prefixes = class_prefixes,
    .prefix = "model.",
    .read_config = read_config,
    .tensors = {&embedding_part, &layer_part, &mlm_part},
    .token_types = 0,
    .projection = 0,
    .positions = AL_POS_ROTARY,
    .scores = &al_rule_rotary_window,
    .mlm_act = AL_MLM_ACT_CONFIG,
    .mlm_width = AL_MLM_WIDTH_HIDDEN,
    .layers = &al_layer_pre_ln_glu,
};
