/* family_deberta_v2.c: DeBERTa-v2 and v3 (model_type "deberta-v2"). BERT's config names with DeBERTa's
 * defaults (no token types, eps 1e-7), the disentangled attention fields (relative_attention, pos_att_type,
 * position_buckets, max_relative_positions, share_att_key, norm_rel_ebd, position_biased_input), and the
 * tensor names of Hugging Face's DebertaV2ForMaskedLM: the legacy MLM head (cls.predictions.*) is written, the
 * newer one (lm_predictions.lm_head.*) is read too. What attnlab does not compute is refused by name: the
 * v2-xlarge convolution (conv_kernel_size), share_att_key false, pos_att_type values other than c2p and p2c.
 * DeBERTa v1 (model_type "deberta") names no family and is refused as such (docs/families.md). */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "family.h"
#include "family_params.h"
#include "layer_rule.h"
#include "score_rule.h"

/* One '|'-separated item of a string field, lowercased and stripped as Hugging Face does, into buf. */
static void clean_item(const char *s, size_t n, char *buf, size_t size) {
    while (n && isspace((unsigned char)*s)) s++, n--;
    while (n && isspace((unsigned char)s[n - 1])) n--;
    size_t k = 0;
    for (; k < n && k + 1 < size; k++) buf[k] = (char)tolower((unsigned char)s[k]);
    buf[k] = 0;
}

/* One pos_att_type entry into the bits of pos_att (family_params.h). */
static al_status pos_att_item(const char *file, const char *s, size_t n, int *bits, al_error *err) {
    char item[32];
    clean_item(s, n, item, sizeof item);
    if (strcmp(item, "c2p") == 0) *bits |= 1;
    else if (strcmp(item, "p2c") == 0) *bits |= 2;
    else
        return al_err(err, AL_ERR_UNSUPPORTED,
                      "%s: field 'pos_att_type' value '%.*s' is not supported (only 'c2p' and 'p2c')", file,
                      (int)(n < 64 ? n : 64), s);
    return AL_OK;
}

/* pos_att_type: a list of names or one "p2c|c2p" string; absent or null means none. */
static al_status read_pos_att(const cJSON *root, const char *file, int *bits, al_error *err) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "pos_att_type");
    *bits = 0;
    if (!item || cJSON_IsNull(item)) return AL_OK;
    if (cJSON_IsString(item)) {
        const char *s = item->valuestring;
        while (1) {
            const char *bar = strchr(s, '|');
            size_t n = bar ? (size_t)(bar - s) : strlen(s);
            al_status st = pos_att_item(file, s, n, bits, err);
            if (st) return st;
            if (!bar) return AL_OK;
            s = bar + 1;
        }
    }
    if (!cJSON_IsArray(item))
        return al_err(err, AL_ERR_FORMAT, "%s: field 'pos_att_type' must be a list of strings or a string", file);
    const cJSON *a;
    cJSON_ArrayForEach(a, item) {
        if (!cJSON_IsString(a))
            return al_err(err, AL_ERR_FORMAT, "%s: field 'pos_att_type' must hold strings", file);
        al_status st = pos_att_item(file, a->valuestring, strlen(a->valuestring), bits, err);
        if (st) return st;
    }
    return AL_OK;
}

/* norm_rel_ebd: "layer_norm" or "none" ('|'-separated items; "none" by default). */
static al_status read_norm_rel(const cJSON *root, const char *file, int *on, al_error *err) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "norm_rel_ebd");
    *on = 0;
    if (!item || cJSON_IsNull(item)) return AL_OK;
    if (!cJSON_IsString(item)) return al_err(err, AL_ERR_FORMAT, "%s: field 'norm_rel_ebd' must be a string", file);
    const char *s = item->valuestring;
    while (1) {
        const char *bar = strchr(s, '|');
        size_t n = bar ? (size_t)(bar - s) : strlen(s);
        char v[32];
        clean_item(s, n, v, sizeof v);
        if (strcmp(v, "layer_norm") == 0) *on = 1;
        else if (strcmp(v, "none") != 0)
            return al_err(err, AL_ERR_UNSUPPORTED,
                          "%s: field 'norm_rel_ebd' value '%.*s' is not supported (only 'layer_norm' or 'none')", file,
                          (int)(n < 64 ? n : 64), s);
        if (!bar) return AL_OK;
        s = bar + 1;
    }
}

static al_status read_bool(const cJSON *root, const char *file, const char *field, int def, int *out, al_error *err) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, field);
    if (!item || cJSON_IsNull(item)) {
        *out = def;
        return AL_OK;
    }
    if (!cJSON_IsBool(item)) return al_err(err, AL_ERR_FORMAT, "%s: field '%s' must be true or false", file, field);
    *out = cJSON_IsTrue(item);
    return AL_OK;
}

static al_status read_config(const cJSON *root, const char *file, al_config *c, al_error *err) {
    const int M = AL_CONFIG_MAX_DIM;
    al_deberta_params *d = al_deberta_mut(c);
    int relative = 0, share_key = 0, conv = 0, head_size = 0;
    al_status st;
    if ((st = al_cfg_int(root, file, "hidden_size", 0, 0, 1, M, &c->hidden_size, err)) ||
        (st = al_cfg_int(root, file, "num_hidden_layers", 0, 0, 1, 1024, &c->n_layers, err)) ||
        (st = al_cfg_int(root, file, "num_attention_heads", 0, 0, 1, 4096, &c->n_heads, err)) ||
        (st = al_cfg_int(root, file, "intermediate_size", 0, 0, 1, M, &c->intermediate_size, err)) ||
        (st = al_cfg_act(root, file, "hidden_act", &c->act, err)) ||
        (st = al_cfg_int(root, file, "type_vocab_size", 1, 0, 0, M, &c->type_vocab_size, err)) ||
        (st = al_cfg_int(root, file, "pad_token_id", 1, 0, 0, M, &c->pad_token_id, err)) ||
        (st = al_cfg_eps(root, file, "layer_norm_eps", 1e-7f, &c->layer_norm_eps, err)) ||
        (st = al_cfg_int(root, file, "embedding_size", 1, c->hidden_size, 1, M, &c->embedding_size, err)) ||
        (st = read_bool(root, file, "relative_attention", 0, &relative, err)) ||
        (st = read_bool(root, file, "share_att_key", 0, &share_key, err)) ||
        (st = read_bool(root, file, "position_biased_input", 1, &d->position_biased_input, err)) ||
        (st = al_cfg_int(root, file, "position_buckets", 1, -1, -1, M, &d->position_buckets, err)) ||
        (st = al_cfg_int(root, file, "max_relative_positions", 1, -1, -1, M, &d->max_relative_positions, err)) ||
        (st = al_cfg_int(root, file, "conv_kernel_size", 1, 0, 0, M, &conv, err)) ||
        (st = al_cfg_int(root, file, "attention_head_size", 1, 0, 0, M, &head_size, err)) ||
        (st = read_pos_att(root, file, &d->pos_att, err)) || (st = read_norm_rel(root, file, &d->norm_rel_ebd, err)))
        return st;
    if (conv > 0)
        return al_err(err, AL_ERR_UNSUPPORTED,
                      "%s: field 'conv_kernel_size' = %d is not supported (the convolution after the first layer of "
                      "DeBERTa-v2 xlarge and xxlarge is not implemented)",
                      file, conv);
    if (head_size && c->n_heads && head_size * c->n_heads != c->hidden_size)
        return al_err(err, AL_ERR_UNSUPPORTED,
                      "%s: field 'attention_head_size' = %d is not supported (only hidden_size / num_attention_heads)",
                      file, head_size);
    if (relative && d->pos_att && !share_key)
        return al_err(err, AL_ERR_UNSUPPORTED,
                      "%s: field 'share_att_key' = false is not supported (separate position projections "
                      "pos_key_proj / pos_query_proj are not implemented)",
                      file);
    d->position_buckets = d->position_buckets > 0 ? d->position_buckets : 0;
    /* -1 (or any value below 1) means max_position_embeddings, which config.c has read already */
    if (d->max_relative_positions < 1) d->max_relative_positions = c->max_position_embeddings;
    d->rel_span = relative ? (d->position_buckets ? d->position_buckets : d->max_relative_positions) : 0;
    /* the log buckets divide by position_buckets / 2 and by log((max_relative_positions - 1) / that) */
    if (relative && d->position_buckets &&
        (d->position_buckets < 2 || d->max_relative_positions - 1 <= d->position_buckets / 2))
        return al_err(err, AL_ERR_FORMAT,
                      "%s: field 'position_buckets' = %d needs at least 2 buckets and max_relative_positions %d above "
                      "position_buckets / 2 + 1",
                      file, d->position_buckets, d->max_relative_positions);
    /* DebertaV2Config has neither field; refusing BERT's meanings keeps a BERT config that names no family and
     * asks for relative_key or a decoder from being taken for DeBERTa by its config fields (config.c) */
    return al_family_bert_refusals(root, file, err);
}

static const char *const model_types[] = {"deberta-v2", NULL};
static const char *const class_prefixes[] = {"DebertaV2", NULL};

static const al_tensor_name embedding_rows[] = {
    {"embeddings.word_embeddings.weight", NULL, AL_W_WORD_EMB, {AL_DIM_V, AL_DIM_E}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"embeddings.position_embeddings.weight", NULL, AL_W_POS_EMB, {AL_DIM_P, AL_DIM_E}, AL_WHEN_ABS_POSITIONS, AL_LAYOUT_AS_IS},
    {"embeddings.token_type_embeddings.weight", NULL, AL_W_TYPE_EMB, {AL_DIM_T, AL_DIM_E}, AL_WHEN_TYPES, AL_LAYOUT_AS_IS},
    {"embeddings.embed_proj.weight", NULL, AL_W_EMB_PROJ_W, {AL_DIM_D, AL_DIM_E}, AL_WHEN_PROJECTED, AL_LAYOUT_AS_IS},
    {"embeddings.LayerNorm.weight", NULL, AL_W_EMB_LN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"embeddings.LayerNorm.bias", NULL, AL_W_EMB_LN_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.rel_embeddings.weight", NULL, AL_W_REL_EMB, {AL_DIM_R, AL_DIM_D}, AL_WHEN_RELATIVE, AL_LAYOUT_AS_IS},
    {"encoder.LayerNorm.weight", NULL, AL_W_REL_LN_G, {AL_DIM_D}, AL_WHEN_REL_NORM, AL_LAYOUT_AS_IS},
    {"encoder.LayerNorm.bias", NULL, AL_W_REL_LN_B, {AL_DIM_D}, AL_WHEN_REL_NORM, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows embedding_part = AL_ROWS(embedding_rows);

/* the query, key and value projections; the rest of a layer is named as BERT's */
static const al_tensor_name layer_rows[] = {
    {"encoder.layer.{layer}.attention.self.query_proj.weight", NULL, AL_W_Q_W, {AL_DIM_D, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.attention.self.query_proj.bias", NULL, AL_W_Q_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.attention.self.key_proj.weight", NULL, AL_W_K_W, {AL_DIM_D, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.attention.self.key_proj.bias", NULL, AL_W_K_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.attention.self.value_proj.weight", NULL, AL_W_V_W, {AL_DIM_D, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.attention.self.value_proj.bias", NULL, AL_W_V_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows layer_part = AL_ROWS(layer_rows);

/* The legacy head (DebertaV2ForMaskedLM with legacy true, the default) is written; the newer
 * lm_predictions.lm_head, whose decoder is always the word embeddings, is read as its alternative. */
static const al_tensor_name mlm_rows[] = {
    {"cls.predictions.transform.dense.weight", "lm_predictions.lm_head.dense.weight", AL_W_MLM_DENSE_W,
     {AL_DIM_M, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"cls.predictions.transform.dense.bias", "lm_predictions.lm_head.dense.bias", AL_W_MLM_DENSE_B, {AL_DIM_M},
     AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"cls.predictions.transform.LayerNorm.weight", "lm_predictions.lm_head.LayerNorm.weight", AL_W_MLM_LN_G,
     {AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"cls.predictions.transform.LayerNorm.bias", "lm_predictions.lm_head.LayerNorm.bias", AL_W_MLM_LN_B, {AL_DIM_M},
     AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"cls.predictions.decoder.weight", NULL, AL_W_MLM_DECODER_W, {AL_DIM_V, AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"cls.predictions.bias", "lm_predictions.lm_head.bias", AL_W_MLM_DECODER_B, {AL_DIM_V}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows mlm_part = AL_ROWS(mlm_rows);

static int hash_fields(const al_config *c, char *buf, size_t size) {
    const al_deberta_params *d = al_deberta(c);
    return snprintf(buf, size, "disentangled %d %d %d %d %d %d\n", d->rel_span, d->position_buckets,
                    d->max_relative_positions, d->pos_att, d->position_biased_input, d->norm_rel_ebd);
}

static cJSON *config_fields(const al_config *c) {
    const al_deberta_params *d = al_deberta(c);
    cJSON *o = cJSON_CreateObject(), *terms = cJSON_CreateArray();
    if (!o || !terms || !cJSON_AddBoolToObject(o, "relative_attention", d->rel_span > 0) ||
        !cJSON_AddNumberToObject(o, "position_buckets", d->position_buckets) ||
        !cJSON_AddNumberToObject(o, "max_relative_positions", d->max_relative_positions) ||
        !cJSON_AddItemToObject(o, "pos_att_type", terms)) {
        cJSON_Delete(o), cJSON_Delete(terms);
        return NULL;
    }
    if (((d->pos_att & 1) && !cJSON_AddItemToArray(terms, cJSON_CreateString("c2p"))) ||
        ((d->pos_att & 2) && !cJSON_AddItemToArray(terms, cJSON_CreateString("p2c"))) ||
        !cJSON_AddBoolToObject(o, "position_biased_input", d->position_biased_input) ||
        !cJSON_AddStringToObject(o, "norm_rel_ebd", d->norm_rel_ebd ? "layer_norm" : "none")) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

const al_family al_family_deberta_v2 = {
    .name = "deberta-v2",
    .model_types = model_types,
    .class_prefixes = class_prefixes,
    .prefix = "deberta.",
    .read_config = read_config,
    .tensors = {&embedding_part, &layer_part, &al_bert_layer_tail_rows, &mlm_part},
    .token_types = 1,
    .projection = 1,
    .positions = AL_POS_RELATIVE,
    .scores = &al_rule_disentangled,
    .layers = &al_layer_post_ln,
    .hash_fields = hash_fields,
    .config_fields = config_fields,
    .mlm_act = AL_MLM_ACT_CONFIG,
    .mlm_width = AL_MLM_WIDTH_EMBEDDING,
};
