/* family_distilbert.c: DistilBERT. Its own config names (dim, n_layers, n_heads, hidden_dim, activation),
 * no token types, LayerNorm eps fixed at 1e-12 as in Hugging Face, and its own tensor names. */
#include "family.h"
#include "layer_rule.h"
#include "score_rule.h"

static al_status read_config(const cJSON *root, const char *file, al_config *c, al_error *err) {
    const int M = AL_CONFIG_MAX_DIM;
    al_status st;
    if ((st = al_cfg_int(root, file, "dim", 0, 0, 1, M, &c->hidden_size, err)) ||
        (st = al_cfg_int(root, file, "n_layers", 0, 0, 1, 1024, &c->n_layers, err)) ||
        (st = al_cfg_int(root, file, "n_heads", 0, 0, 1, 4096, &c->n_heads, err)) ||
        (st = al_cfg_int(root, file, "hidden_dim", 0, 0, 1, M, &c->intermediate_size, err)) ||
        (st = al_cfg_act(root, file, "activation", &c->act, err)) ||
        (st = al_cfg_int(root, file, "pad_token_id", 1, 0, 0, M, &c->pad_token_id, err)))
        return st;
    c->type_vocab_size = 0;
    c->layer_norm_eps = 1e-12f; /* hard-coded in Hugging Face's DistilBERT */
    c->embedding_size = c->hidden_size;
    return AL_OK; /* DistilBertConfig has no position_embedding_type or is_decoder to refuse */
}

static const char *const model_types[] = {"distilbert", NULL};
static const char *const class_prefixes[] = {"DistilBert", NULL};

static const al_tensor_name embedding_rows[] = {
    {"embeddings.word_embeddings.weight", NULL, AL_W_WORD_EMB, {AL_DIM_V, AL_DIM_E}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"embeddings.position_embeddings.weight", NULL, AL_W_POS_EMB, {AL_DIM_P, AL_DIM_E}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"embeddings.LayerNorm.weight", NULL, AL_W_EMB_LN_G, {AL_DIM_E}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"embeddings.LayerNorm.bias", NULL, AL_W_EMB_LN_B, {AL_DIM_E}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows embedding_part = AL_ROWS(embedding_rows);

static const al_tensor_name layer_rows[] = {
    {"transformer.layer.{layer}.attention.q_lin.weight", NULL, AL_W_Q_W, {AL_DIM_D, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"transformer.layer.{layer}.attention.q_lin.bias", NULL, AL_W_Q_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"transformer.layer.{layer}.attention.k_lin.weight", NULL, AL_W_K_W, {AL_DIM_D, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"transformer.layer.{layer}.attention.k_lin.bias", NULL, AL_W_K_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"transformer.layer.{layer}.attention.v_lin.weight", NULL, AL_W_V_W, {AL_DIM_D, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"transformer.layer.{layer}.attention.v_lin.bias", NULL, AL_W_V_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"transformer.layer.{layer}.attention.out_lin.weight", NULL, AL_W_O_W, {AL_DIM_D, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"transformer.layer.{layer}.attention.out_lin.bias", NULL, AL_W_O_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"transformer.layer.{layer}.sa_layer_norm.weight", NULL, AL_W_LN_ATTN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"transformer.layer.{layer}.sa_layer_norm.bias", NULL, AL_W_LN_ATTN_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"transformer.layer.{layer}.ffn.lin1.weight", NULL, AL_W_FF_IN_W, {AL_DIM_I, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"transformer.layer.{layer}.ffn.lin1.bias", NULL, AL_W_FF_IN_B, {AL_DIM_I}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"transformer.layer.{layer}.ffn.lin2.weight", NULL, AL_W_FF_OUT_W, {AL_DIM_D, AL_DIM_I}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"transformer.layer.{layer}.ffn.lin2.bias", NULL, AL_W_FF_OUT_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"transformer.layer.{layer}.output_layer_norm.weight", NULL, AL_W_LN_FFN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"transformer.layer.{layer}.output_layer_norm.bias", NULL, AL_W_LN_FFN_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows layer_part = AL_ROWS(layer_rows);

static const al_tensor_name mlm_rows[] = {
    {"vocab_transform.weight", NULL, AL_W_MLM_DENSE_W, {AL_DIM_M, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"vocab_transform.bias", NULL, AL_W_MLM_DENSE_B, {AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"vocab_layer_norm.weight", NULL, AL_W_MLM_LN_G, {AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"vocab_layer_norm.bias", NULL, AL_W_MLM_LN_B, {AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"vocab_projector.weight", NULL, AL_W_MLM_DECODER_W, {AL_DIM_V, AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"vocab_projector.bias", NULL, AL_W_MLM_DECODER_B, {AL_DIM_V}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows mlm_part = AL_ROWS(mlm_rows);

const al_family al_family_distilbert = {
    .name = "distilbert",
    .model_types = model_types,
    .class_prefixes = class_prefixes,
    .prefix = "distilbert.",
    .read_config = read_config,
    .tensors = {&embedding_part, &layer_part, &mlm_part},
    .token_types = 0,
    .projection = 0,
    .positions = AL_POS_ABSOLUTE,
    .scores = &al_rule_scaled_dot,
    .layers = &al_layer_post_ln,
    .mlm_act = AL_MLM_ACT_CONFIG,
    .mlm_width = AL_MLM_WIDTH_HIDDEN,
};
