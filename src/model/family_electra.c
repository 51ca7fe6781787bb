/* family_electra.c: ELECTRA, discriminator or generator. BERT's config fields and encoder names under
 * "electra.", plus embedding_size (128 by default): when it differs from hidden_size the embeddings are
 * projected (embeddings_project). The generator's MLM head is as wide as the embeddings, with exact GELU. */
#include "family.h"
#include "layer_rule.h"
#include "score_rule.h"

static al_status read_config(const cJSON *root, const char *file, al_config *c, al_error *err) {
    al_status st = al_family_bert_fields(root, file, c, 0, err);
    if (!st) st = al_cfg_int(root, file, "embedding_size", 1, 128, 1, AL_CONFIG_MAX_DIM, &c->embedding_size, err);
    return st ? st : al_family_bert_refusals(root, file, err);
}

static const char *const model_types[] = {"electra", NULL};
static const char *const class_prefixes[] = {"Electra", NULL};

static const al_tensor_name projection_rows[] = {
    {"embeddings_project.weight", NULL, AL_W_EMB_PROJ_W, {AL_DIM_D, AL_DIM_E}, AL_WHEN_PROJECTED, AL_LAYOUT_AS_IS},
    {"embeddings_project.bias", NULL, AL_W_EMB_PROJ_B, {AL_DIM_D}, AL_WHEN_PROJECTED, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows projection_part = AL_ROWS(projection_rows);

static const al_tensor_name mlm_rows[] = {
    {"generator_predictions.dense.weight", NULL, AL_W_MLM_DENSE_W, {AL_DIM_M, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"generator_predictions.dense.bias", NULL, AL_W_MLM_DENSE_B, {AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"generator_predictions.LayerNorm.weight", NULL, AL_W_MLM_LN_G, {AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"generator_predictions.LayerNorm.bias", NULL, AL_W_MLM_LN_B, {AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"generator_lm_head.weight", NULL, AL_W_MLM_DECODER_W, {AL_DIM_V, AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"generator_lm_head.bias", NULL, AL_W_MLM_DECODER_B, {AL_DIM_V}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows mlm_part = AL_ROWS(mlm_rows);

const al_family al_family_electra = {
    .name = "electra",
    .model_types = model_types,
    .class_prefixes = class_prefixes,
    .prefix = "electra.",
    .read_config = read_config,
    .tensors = {&al_bert_embedding_rows, &projection_part, &al_bert_self_attention_rows, &al_bert_layer_tail_rows, &mlm_part},
    .token_types = 1,
    .projection = 1,
    .positions = AL_POS_ABSOLUTE,
    .scores = &al_rule_scaled_dot,
    .layers = &al_layer_post_ln,
    .mlm_act = AL_MLM_ACT_GELU,
    .mlm_width = AL_MLM_WIDTH_EMBEDDING,
};
