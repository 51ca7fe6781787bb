/* family_roberta.c: RoBERTa. BERT's config fields and encoder names under "roberta.", pad_token_id 1 by
 * default, positions counted after the padding index, and an MLM head (lm_head) with exact GELU. */
#include "family.h"
#include "layer_rule.h"
#include "score_rule.h"

static al_status read_config(const cJSON *root, const char *file, al_config *c, al_error *err) {
    al_status st = al_family_bert_fields(root, file, c, 1, err);
    return st ? st : al_family_bert_refusals(root, file, err);
}

static const char *const model_types[] = {"roberta", NULL};
static const char *const class_prefixes[] = {"Roberta", NULL};

static const al_tensor_name mlm_rows[] = {
    {"lm_head.dense.weight", NULL, AL_W_MLM_DENSE_W, {AL_DIM_M, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"lm_head.dense.bias", NULL, AL_W_MLM_DENSE_B, {AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"lm_head.layer_norm.weight", NULL, AL_W_MLM_LN_G, {AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"lm_head.layer_norm.bias", NULL, AL_W_MLM_LN_B, {AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"lm_head.decoder.weight", NULL, AL_W_MLM_DECODER_W, {AL_DIM_V, AL_DIM_M}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"lm_head.bias", "lm_head.decoder.bias", AL_W_MLM_DECODER_B, {AL_DIM_V}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows mlm_part = AL_ROWS(mlm_rows);

const al_family al_family_roberta = {
    .name = "roberta",
    .model_types = model_types,
    .class_prefixes = class_prefixes,
    .prefix = "roberta.",
    .read_config = read_config,
    .tensors = {&al_bert_embedding_rows, &al_bert_self_attention_rows, &al_bert_layer_tail_rows, &mlm_part},
    .token_types = 1,
    .projection = 0,
    .positions = AL_POS_AFTER_PADDING,
    .scores = &al_rule_scaled_dot,
    .layers = &al_layer_post_ln,
    .mlm_act = AL_MLM_ACT_GELU,
    .mlm_width = AL_MLM_WIDTH_HIDDEN,
};
