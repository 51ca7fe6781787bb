/* family_gpt2.c: GPT-2 (gpt2, distilgpt2, gpt2-medium; docs/decoders.md "GPT-2"). Learned positions, pre-LayerNorm
 * layers with a fused Conv1D query-key-value projection (stored [in, out]), gelu_new, a final ln_f and an LM head
 * tied to the word embeddings. Tensor names as Hugging Face's GPT2LMHeadModel, with or without "transformer.". */
#include <string.h>

#include "../core/error.h"
#include "family.h"
#include "family_params.h"
#include "layer_rule.h"
#include "score_rule.h"

static al_status read_config(const cJSON *root, const char *file, al_config *c, al_error *err) {
    const int M = AL_CONFIG_MAX_DIM;
    al_decoder_params *d = al_decoder_mut(c);
    al_status st;
    if ((st = al_cfg_int(root, file, "n_embd", 0, 0, 1, M, &c->hidden_size, err)) ||
        (st = al_cfg_int(root, file, "n_layer", 0, 0, 1, 1024, &c->n_layers, err)) ||
        (st = al_cfg_int(root, file, "n_head", 0, 0, 1, 4096, &c->n_heads, err)) ||
        (st = al_cfg_int(root, file, "n_inner", 1, 4 * c->hidden_size, 1, M, &c->intermediate_size, err)) ||
        (st = al_cfg_int(root, file, "n_positions", 1, 1024, 1, M, &c->max_position_embeddings, err)) ||
        (st = al_cfg_eps(root, file, "layer_norm_epsilon", 1e-5f, &c->layer_norm_eps, err)))
        return st;
    c->act = AL_ACT_GELU_TANH; /* gelu_new, GPT2Config's default */
    if (cJSON_GetObjectItemCaseSensitive(root, "activation_function") &&
        (st = al_cfg_act(root, file, "activation_function", &c->act, err)))
        return st;
    if ((st = al_cfg_refuse_flag(root, file, "scale_attn_weights", 1, 0, "attnlab scales the scores by 1/sqrt(head size)",
                                 err)) ||
        (st = al_cfg_refuse_flag(root, file, "scale_attn_by_inverse_layer_idx", 0, 1,
                                 "scores divided by the layer index are not built", err)) ||
        (st = al_cfg_refuse_flag(root, file, "add_cross_attention", 0, 1, "cross-attention is not built", err)))
        return st;
    /* reorder_and_upcast_attn computes the same numbers in float32 (docs/decoders.md): nothing to change */
    d->norm = AL_DEC_LAYERNORM;
    d->mlp = AL_DEC_MLP;
    return al_decoder_common(root, file, c, err);
}

static const char *const model_types[] = {"gpt2", NULL};
static const char *const class_prefixes[] = {"GPT2", NULL};

/* The final norm is listed with the embeddings: a model-level weight under the same prefix. */
static const al_tensor_name embedding_rows[] = {
    {"wte.weight", NULL, AL_W_WORD_EMB, {AL_DIM_V, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"wpe.weight", NULL, AL_W_POS_EMB, {AL_DIM_P, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"ln_f.weight", NULL, AL_W_FINAL_LN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"ln_f.bias", NULL, AL_W_FINAL_LN_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows embedding_part = AL_ROWS(embedding_rows);

/* Conv1D weights are stored [in, out]: shape[] gives attnlab's [out, in], the loader transposes. */
static const al_tensor_name layer_rows[] = {
    {"h.{layer}.ln_1.weight", NULL, AL_W_LN_ATTN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"h.{layer}.ln_1.bias", NULL, AL_W_LN_ATTN_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"h.{layer}.attn.c_attn.weight", NULL, AL_W_QKV_W, {AL_DIM_3D, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_CONV1D},
    {"h.{layer}.attn.c_attn.bias", NULL, AL_W_QKV_B, {AL_DIM_3D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"h.{layer}.attn.c_proj.weight", NULL, AL_W_O_W, {AL_DIM_D, AL_DIM_A}, AL_WHEN_ALWAYS, AL_LAYOUT_CONV1D},
    {"h.{layer}.attn.c_proj.bias", NULL, AL_W_O_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"h.{layer}.ln_2.weight", NULL, AL_W_LN_FFN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"h.{layer}.ln_2.bias", NULL, AL_W_LN_FFN_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"h.{layer}.mlp.c_fc.weight", NULL, AL_W_FF_IN_W, {AL_DIM_I, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_CONV1D},
    {"h.{layer}.mlp.c_fc.bias", NULL, AL_W_FF_IN_B, {AL_DIM_I}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"h.{layer}.mlp.c_proj.weight", NULL, AL_W_FF_OUT_W, {AL_DIM_D, AL_DIM_I}, AL_WHEN_ALWAYS, AL_LAYOUT_CONV1D},
    {"h.{layer}.mlp.c_proj.bias", NULL, AL_W_FF_OUT_B, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows layer_part = AL_ROWS(layer_rows);

/* Present in a tied model too at times: Hugging Face re-ties it to wte, and so does attnlab (not read). */
static const al_tensor_name head_rows[] = {
    {"lm_head.weight", NULL, AL_W_LM_HEAD_W, {AL_DIM_V, AL_DIM_D}, AL_WHEN_UNTIED, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows head_part = AL_ROWS(head_rows);

const al_family al_family_gpt2 = {
    AL_DECODER_FAMILY_COMMON,
    .name = "gpt2",
    .model_types = model_types,
    .class_prefixes = class_prefixes,
    .prefix = "transformer.",
    .read_config = read_config,
    .tensors = {&embedding_part, &layer_part, &head_part},
    .positions = AL_POS_ABSOLUTE,
    .scores = &al_rule_causal_dot,
    .layers = &al_layer_decoder_sequential,
};
