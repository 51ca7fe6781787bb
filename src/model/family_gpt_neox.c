/* family_gpt_neox.c: GPT-NeoX (Pythia-70m/160m/410m; docs/decoders.md "GPT-NeoX"). Pre-LayerNorm layers whose
 * attention and feed-forward read the same input (use_parallel_residual, the default) or follow each other, partial
 * rotary embeddings (the first int(head_dim * rotary_pct) columns of each head), a fused query-key-value projection
 * laid out per head, and an untied LM head (embed_out). Tensor names as Hugging Face's GPTNeoXForCausalLM. */
#include <string.h>

#include "../core/error.h"
#include "family.h"
#include "family_params.h"
#include "layer_rule.h"
#include "score_rule.h"

static al_status read_config(const cJSON *root, const char *file, al_config *c, al_error *err) {
    const int M = AL_CONFIG_MAX_DIM;
    al_decoder_params *d = al_decoder_mut(c);
    double pct = 0.25;
    al_status st;
    if ((st = al_cfg_int(root, file, "hidden_size", 0, 0, 1, M, &c->hidden_size, err)) ||
        (st = al_cfg_int(root, file, "num_hidden_layers", 0, 0, 1, 1024, &c->n_layers, err)) ||
        (st = al_cfg_int(root, file, "num_attention_heads", 0, 0, 1, 4096, &c->n_heads, err)) ||
        (st = al_cfg_int(root, file, "intermediate_size", 0, 0, 1, M, &c->intermediate_size, err)) ||
        (st = al_cfg_int(root, file, "max_position_embeddings", 1, 2048, 1, M, &c->max_position_embeddings, err)) ||
        (st = al_cfg_eps(root, file, "layer_norm_eps", 1e-5f, &c->layer_norm_eps, err)) ||
        (st = al_cfg_number(root, file, "rotary_pct", 0.25, 0.0, 1.0, &pct, err)) ||
        (st = al_cfg_number(root, file, "rotary_emb_base", 10000.0, 1.000001, 1e12, &d->rope_theta, err)) ||
        (st = al_cfg_flag(root, file, "use_parallel_residual", 1, &d->parallel_residual, err)) ||
        (st = al_cfg_refuse_flag(root, file, "attention_bias", 1, 0, "the attention projections without biases are not "
                                 "built for GPT-NeoX", err)))
        return st;
    double theta = d->rope_theta;
    if ((st = al_cfg_number(root, file, "rope_theta", d->rope_theta, 1.000001, 1e12, &theta, err))) return st;
    if (theta != d->rope_theta)
        return al_err(err, AL_ERR_UNSUPPORTED, "%s: field 'rope_theta' = %g differs from 'rotary_emb_base' = %g: "
                      "ambiguous (GPT-NeoX reads rotary_emb_base)", file, theta, d->rope_theta);
    c->act = AL_ACT_GELU;
    if (cJSON_GetObjectItemCaseSensitive(root, "hidden_act") && (st = al_cfg_act(root, file, "hidden_act", &c->act, err)))
        return st;
    d->norm = AL_DEC_LAYERNORM;
    d->mlp = AL_DEC_MLP;
    c->tie_word_embeddings = 0; /* GPTNeoXConfig's default */
    if ((st = al_decoder_common(root, file, c, err))) return st;
    d->rotary_dims = (int)(c->head_dim * pct); /* int(head_size * rotary_pct), as GPTNeoXAttention */
    if (d->rotary_dims < 2 || d->rotary_dims % 2 != 0)
        return al_err(err, AL_ERR_UNSUPPORTED,
                      "%s: field 'rotary_pct' = %g turns %d of the %d columns of a head; attnlab needs an even number, "
                      "at least 2", file, pct, d->rotary_dims, c->head_dim);
    return AL_OK;
}

static const al_layer_rule *layers_of(const al_config *c) {
    return al_decoder(c)->parallel_residual ? &al_layer_decoder_parallel : &al_layer_decoder_sequential;
}

static const char *const model_types[] = {"gpt_neox", NULL};
static const char *const class_prefixes[] = {"GPTNeoX", NULL};

static const al_tensor_name embedding_rows[] = {
    {"embed_in.weight", NULL, AL_W_WORD_EMB, {AL_DIM_V, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"final_layer_norm.weight", NULL, AL_W_FINAL_LN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"final_layer_norm.bias", NULL, AL_W_FINAL_LN_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows embedding_part = AL_ROWS(embedding_rows);

/* query_key_value holds each head's q, k, v rows side by side: the loader regroups them as q, k, v blocks. */
static const al_tensor_name layer_rows[] = {
    {"layers.{layer}.input_layernorm.weight", NULL, AL_W_LN_ATTN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.input_layernorm.bias", NULL, AL_W_LN_ATTN_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.attention.query_key_value.weight", NULL, AL_W_QKV_W, {AL_DIM_3D, AL_DIM_D}, AL_WHEN_ALWAYS,
     AL_LAYOUT_QKV_PER_HEAD},
    {"layers.{layer}.attention.query_key_value.bias", NULL, AL_W_QKV_B, {AL_DIM_3D}, AL_WHEN_ALWAYS,
     AL_LAYOUT_QKV_PER_HEAD},
    {"layers.{layer}.attention.dense.weight", NULL, AL_W_O_W, {AL_DIM_D, AL_DIM_A}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.attention.dense.bias", NULL, AL_W_O_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.post_attention_layernorm.weight", NULL, AL_W_LN_FFN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.post_attention_layernorm.bias", NULL, AL_W_LN_FFN_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.mlp.dense_h_to_4h.weight", NULL, AL_W_FF_IN_W, {AL_DIM_I, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.mlp.dense_h_to_4h.bias", NULL, AL_W_FF_IN_B, {AL_DIM_I}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.mlp.dense_4h_to_h.weight", NULL, AL_W_FF_OUT_W, {AL_DIM_D, AL_DIM_I}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.mlp.dense_4h_to_h.bias", NULL, AL_W_FF_OUT_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows layer_part = AL_ROWS(layer_rows);

static const al_tensor_name head_rows[] = {
    {"embed_out.weight", NULL, AL_W_LM_HEAD_W, {AL_DIM_V, AL_DIM_D}, AL_WHEN_UNTIED, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows head_part = AL_ROWS(head_rows);

const al_family al_family_gpt_neox = {
    AL_DECODER_FAMILY_COMMON,
    .name = "gpt_neox",
    .model_types = model_types,
    .class_prefixes = class_prefixes,
    .prefix = "gpt_neox.",
    .read_config = read_config,
    .tensors = {&embedding_part, &layer_part, &head_part},
    .positions = AL_POS_ROTARY,
    .scores = &al_rule_causal_rotary,
    .layers = &al_layer_decoder_sequential,
    .layers_of = layers_of,
};
