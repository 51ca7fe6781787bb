/* family_llama.c: Llama (SmolLM2, TinyLlama; docs/decoders.md "Llama"), and the config fields Qwen2 shares with it.
 * RMSNorm, SwiGLU, rotary embeddings on every head column (rotate-half, rope_theta), grouped-query attention
 * (num_key_value_heads, head_dim), an LM head tied or not. Tensor names as Hugging Face's LlamaForCausalLM, with
 * or without "model.". */
#include <string.h>

#include "../core/error.h"
#include "family.h"
#include "family_params.h"
#include "layer_rule.h"
#include "score_rule.h"

al_status al_family_llama_fields(const cJSON *root, const char *file, al_config *c, int positions_default,
                                 al_error *err) {
    const int M = AL_CONFIG_MAX_DIM;
    al_decoder_params *d = al_decoder_mut(c);
    al_status st;
    if ((st = al_cfg_int(root, file, "hidden_size", 0, 0, 1, M, &c->hidden_size, err)) ||
        (st = al_cfg_int(root, file, "num_hidden_layers", 0, 0, 1, 1024, &c->n_layers, err)) ||
        (st = al_cfg_int(root, file, "num_attention_heads", 0, 0, 1, 4096, &c->n_heads, err)) ||
        (st = al_cfg_int(root, file, "intermediate_size", 0, 0, 1, M, &c->intermediate_size, err)) ||
        (st = al_cfg_int(root, file, "num_key_value_heads", 1, c->n_heads, 1, 4096, &d->n_kv_heads, err)) ||
        (st = al_cfg_int(root, file, "head_dim", 1, 0, 2, 4096, &c->head_dim, err)) ||
        (st = al_cfg_int(root, file, "max_position_embeddings", 1, positions_default, 1, M,
                         &c->max_position_embeddings, err)) ||
        (st = al_cfg_eps(root, file, "rms_norm_eps", 1e-6f, &c->layer_norm_eps, err)) ||
        (st = al_cfg_number(root, file, "rope_theta", 10000.0, 1.000001, 1e12, &d->rope_theta, err)) ||
        (st = al_cfg_refuse_flag(root, file, "mlp_bias", 0, 1, "the feed-forward's biases are not built", err)))
        return st;
    double partial = 1.0;
    if ((st = al_cfg_number(root, file, "partial_rotary_factor", 1.0, 0.0, 1.0, &partial, err))) return st;
    if (partial != 1.0)
        return al_err(err, AL_ERR_UNSUPPORTED, "%s: field 'partial_rotary_factor' = %g is not supported (Llama and Qwen2 "
                      "turn every column of a head)", file, partial);
    c->act = AL_ACT_SILU;
    if (cJSON_GetObjectItemCaseSensitive(root, "hidden_act") && (st = al_cfg_act(root, file, "hidden_act", &c->act, err)))
        return st;
    d->norm = AL_DEC_RMSNORM;
    d->mlp = AL_DEC_GLU;
    c->tie_word_embeddings = 0; /* LlamaConfig's default: an lm_head of its own unless the config ties them */
    if ((st = al_decoder_common(root, file, c, err))) return st;
    if (c->head_dim % 2 != 0)
        return al_err(err, AL_ERR_FORMAT, "%s: the head size %d is odd, which rotary embeddings cannot split in halves",
                      file, c->head_dim);
    d->rotary_dims = c->head_dim;
    return AL_OK;
}

static al_status read_config(const cJSON *root, const char *file, al_config *c, al_error *err) {
    al_status st = al_family_llama_fields(root, file, c, 2048, err);
    if (st) return st;
    return al_cfg_refuse_flag(root, file, "attention_bias", 0, 1, "the attention projections' biases are not built for "
                              "Llama", err);
}

static const char *const model_types[] = {"llama", NULL};
static const char *const class_prefixes[] = {"Llama", NULL};

static const al_tensor_name embedding_rows[] = {
    {"embed_tokens.weight", NULL, AL_W_WORD_EMB, {AL_DIM_V, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"norm.weight", NULL, AL_W_FINAL_LN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
const al_tensor_rows al_llama_embedding_rows = AL_ROWS(embedding_rows);

static const al_tensor_name layer_rows[] = {
    {"layers.{layer}.input_layernorm.weight", NULL, AL_W_LN_ATTN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.self_attn.q_proj.weight", NULL, AL_W_Q_W, {AL_DIM_A, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.self_attn.k_proj.weight", NULL, AL_W_K_W, {AL_DIM_KV, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.self_attn.v_proj.weight", NULL, AL_W_V_W, {AL_DIM_KV, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.self_attn.o_proj.weight", NULL, AL_W_O_W, {AL_DIM_D, AL_DIM_A}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.post_attention_layernorm.weight", NULL, AL_W_LN_FFN_G, {AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.mlp.gate_proj.weight", NULL, AL_W_FF_IN_W, {AL_DIM_I, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.mlp.up_proj.weight", NULL, AL_W_FF_UP_W, {AL_DIM_I, AL_DIM_D}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.mlp.down_proj.weight", NULL, AL_W_FF_OUT_W, {AL_DIM_D, AL_DIM_I}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
const al_tensor_rows al_llama_layer_rows = AL_ROWS(layer_rows);

static const al_tensor_name head_rows[] = {
    {"lm_head.weight", NULL, AL_W_LM_HEAD_W, {AL_DIM_V, AL_DIM_D}, AL_WHEN_UNTIED, AL_LAYOUT_AS_IS},
};
const al_tensor_rows al_llama_head_rows = AL_ROWS(head_rows);

const al_family al_family_llama = {
    AL_DECODER_FAMILY_COMMON,
    .name = "llama",
    .model_types = model_types,
    .class_prefixes = class_prefixes,
    .prefix = "model.",
    .read_config = read_config,
    .tensors = {&al_llama_embedding_rows, &al_llama_layer_rows, &al_llama_head_rows},
    .positions = AL_POS_ROTARY,
    .scores = &al_rule_causal_rotary,
    .layers = &al_layer_decoder_sequential,
};
