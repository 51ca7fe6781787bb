/* family_bert.c: BERT (also MiniLM and TinyBERT, which are BERT checkpoints), and the config fields that
 * RoBERTa and ELECTRA share with it. Tensor names as Hugging Face's BertForMaskedLM. */
#include <string.h>

#include "../core/error.h"
#include "family.h"
#include "layer_rule.h"
#include "score_rule.h"

/* position_embedding_type relative_key / relative_key_query add learned distance embeddings to the scores,
 * and a decoder attends causally (each token only to earlier ones): neither is implemented, so a config that
 * asks for one is refused by name and never run as something it is not. */
al_status al_family_bert_refusals(const cJSON *root, const char *file, al_error *err) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "position_embedding_type");
    if (item && !cJSON_IsNull(item)) {
        if (!cJSON_IsString(item))
            return al_err(err, AL_ERR_FORMAT, "%s: field 'position_embedding_type' must be a string", file);
        if (strcmp(item->valuestring, "absolute") != 0)
            return al_err(err, AL_ERR_UNSUPPORTED,
                          "%s: field 'position_embedding_type' = '%.64s' is not supported (only 'absolute'; "
                          "relative position embeddings are not implemented)",
                          file, item->valuestring);
    }
    item = cJSON_GetObjectItemCaseSensitive(root, "is_decoder");
    if (item && !cJSON_IsNull(item)) {
        if (!cJSON_IsBool(item))
            return al_err(err, AL_ERR_FORMAT, "%s: field 'is_decoder' must be true or false", file);
        if (cJSON_IsTrue(item))
            return al_err(err, AL_ERR_UNSUPPORTED,
                          "%s: field 'is_decoder' = true is not supported (causal attention is not implemented)",
                          file);
    }
    return AL_OK;
}

al_status al_family_bert_fields(const cJSON *root, const char *file, al_config *c, int pad_default, al_error *err) {
    const int M = AL_CONFIG_MAX_DIM;
    al_status st;
    if ((st = al_cfg_int(root, file, "hidden_size", 0, 0, 1, M, &c->hidden_size, err)) ||
        (st = al_cfg_int(root, file, "num_hidden_layers", 0, 0, 1, 1024, &c->n_layers, err)) ||
        (st = al_cfg_int(root, file, "num_attention_heads", 0, 0, 1, 4096, &c->n_heads, err)) ||
        (st = al_cfg_int(root, file, "intermediate_size", 0, 0, 1, M, &c->intermediate_size, err)) ||
        (st = al_cfg_act(root, file, "hidden_act", &c->act, err)) ||
        (st = al_cfg_int(root, file, "type_vocab_size", 1, 2, 0, M, &c->type_vocab_size, err)) ||
        (st = al_cfg_int(root, file, "pad_token_id", 1, pad_default, 0, M, &c->pad_token_id, err)) ||
        (st = al_cfg_eps(root, file, "layer_norm_eps", 1e-12f, &c->layer_norm_eps, err)))
        return st;
    c->embedding_size = c->hidden_size;
    return AL_OK;
}

static al_status read_config(const cJSON *root, const char *file, al_config *c, al_error *err) {
    al_status st = al_family_bert_fields(root, file, c, 0, err);
    return st ? st : al_family_bert_refusals(root, file, err);
}

static const char *const model_types[] = {"bert", NULL};
static const char *const class_prefixes[] = {"Bert", NULL};

/* Old TensorFlow-converted checkpoints name LayerNorm parameters gamma and beta: weights.c accepts those
 * for every "LayerNorm.weight" / "LayerNorm.bias" row. */
static const al_tensor_name embedding_rows[] = {
    {"embeddings.word_embeddings.weight", NULL, AL_W_WORD_EMB, {AL_DIM_V, AL_DIM_E}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"embeddings.position_embeddings.weight", NULL, AL_W_POS_EMB, {AL_DIM_P, AL_DIM_E}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"embeddings.token_type_embeddings.weight", NULL, AL_W_TYPE_EMB, {AL_DIM_T, AL_DIM_E}, AL_WHEN_TYPES, AL_LAYOUT_AS_IS},
    {"embeddings.LayerNorm.weight", NULL, AL_W_EMB_LN_G, {AL_DIM_E}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"embeddings.LayerNorm.bias", NULL, AL_W_EMB_LN_B, {AL_DIM_E}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};

static const al_tensor_name self_attention_rows[] = {
    {"encoder.layer.{layer}.attention.self.query.weight", NULL, AL_W_Q_W, {AL_DIM_D, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.attention.self.query.bias", NULL, AL_W_Q_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.attention.self.key.weight", NULL, AL_W_K_W, {AL_DIM_D, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.attention.self.key.bias", NULL, AL_W_K_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.attention.self.value.weight", NULL, AL_W_V_W, {AL_DIM_D, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.attention.self.value.bias", NULL, AL_W_V_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};

/* A layer after its query, key and value projections: shared with DeBERTa, whose projections are named
 * query_proj, key_proj, value_proj. */
static const al_tensor_name layer_tail_rows[] = {
    {"encoder.layer.{layer}.attention.output.dense.weight", NULL, AL_W_O_W, {AL_DIM_D, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.attention.output.dense.bias", NULL, AL_W_O_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.attention.output.LayerNorm.weight", NULL, AL_W_LN_ATTN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.attention.output.LayerNorm.bias", NULL, AL_W_LN_ATTN_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.intermediate.dense.weight", NULL, AL_W_FF_IN_W, {AL_DIM_I, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.intermediate.dense.bias", NULL, AL_W_FF_IN_B, {AL_DIM_I}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.output.dense.weight", NULL, AL_W_FF_OUT_W, {AL_DIM_D, AL_DIM_I}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.output.dense.bias", NULL, AL_W_FF_OUT_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.output.LayerNorm.weight", NULL, AL_W_LN_FFN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"encoder.layer.{layer}.output.LayerNorm.bias", NULL, AL_W_LN_FFN_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};

static const al_tensor_name mlm_rows[] = {
    {"cls.predictions.transform.dense.weight", NULL, AL_W_MLM_DENSE_W, {AL_DIM_M, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"cls.predictions.transform.dense.bias", NULL, AL_W_MLM_DENSE_B, {AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"cls.predictions.transform.LayerNorm.weight", NULL, AL_W_MLM_LN_G, {AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"cls.predictions.transform.LayerNorm.bias", NULL, AL_W_MLM_LN_B, {AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"cls.predictions.decoder.weight", NULL, AL_W_MLM_DECODER_W, {AL_DIM_V, AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"cls.predictions.bias", "cls.predictions.decoder.bias", AL_W_MLM_DECODER_B, {AL_DIM_V}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};

const al_tensor_rows al_bert_embedding_rows = AL_ROWS(embedding_rows);
const al_tensor_rows al_bert_self_attention_rows = AL_ROWS(self_attention_rows);
const al_tensor_rows al_bert_layer_tail_rows = AL_ROWS(layer_tail_rows);
static const al_tensor_rows mlm_part = AL_ROWS(mlm_rows);

const al_family al_family_bert = {
    .name = "bert",
    .model_types = model_types,
    .class_prefixes = class_prefixes,
    .prefix = "bert.",
    .read_config = read_config,
    .tensors = {&al_bert_embedding_rows, &al_bert_self_attention_rows, &al_bert_layer_tail_rows, &mlm_part},
    .token_types = 1,
    .projection = 0,
    .positions = AL_POS_ABSOLUTE,
    .scores = &al_rule_scaled_dot,
    .layers = &al_layer_post_ln,
    .mlm_act = AL_MLM_ACT_CONFIG,
    .mlm_width = AL_MLM_WIDTH_HIDDEN,
};
