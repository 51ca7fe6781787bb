/* family_qwen2.c: Qwen2 (Qwen2.5-0.5B; docs/decoders.md "Qwen2"): Llama's layers with biases on the query, key and
 * value projections (always, whatever the config says), and a sliding window in the layers from max_window_layers
 * on when use_sliding_window is true. Tensor names as Hugging Face's Qwen2ForCausalLM. */
#include <string.h>

#include "../core/error.h"
#include "family.h"
#include "family_params.h"
#include "layer_rule.h"
#include "score_rule.h"

al_status al_family_llama_fields(const cJSON *root, const char *file, al_config *c, int positions_default,
                                 al_error *err);
extern const al_tensor_rows al_llama_embedding_rows, al_llama_layer_rows, al_llama_head_rows;

/* layer_types, when given, must say what use_sliding_window and max_window_layers say (full attention below the
 * first windowed layer, sliding from it on): another pattern is not built. */
static al_status check_layer_types(const cJSON *root, const char *file, const al_config *c, al_error *err) {
    const cJSON *types = cJSON_GetObjectItemCaseSensitive(root, "layer_types");
    if (!types || cJSON_IsNull(types)) return AL_OK;
    if (!cJSON_IsArray(types) || cJSON_GetArraySize(types) != c->n_layers)
        return al_err(err, AL_ERR_FORMAT, "%s: field 'layer_types' must be a list of %d strings", file, c->n_layers);
    const al_decoder_params *d = al_decoder(c);
    for (int l = 0; l < c->n_layers; l++) {
        const cJSON *t = cJSON_GetArrayItem(types, l);
        if (!cJSON_IsString(t))
            return al_err(err, AL_ERR_FORMAT, "%s: field 'layer_types' must be a list of %d strings", file, c->n_layers);
        const int sliding = d->window > 0 && l >= d->window_from_layer;
        if (strcmp(t->valuestring, sliding ? "sliding_attention" : "full_attention") != 0)
            return al_err(err, AL_ERR_UNSUPPORTED,
                          "%s: field 'layer_types'[%d] = '%.32s' is not supported (attnlab builds full attention below "
                          "max_window_layers and, with use_sliding_window, sliding attention from it on)",
                          file, l, t->valuestring);
    }
    return AL_OK;
}

static al_status read_config(const cJSON *root, const char *file, al_config *c, al_error *err) {
    const int M = AL_CONFIG_MAX_DIM;
    al_decoder_params *d = al_decoder_mut(c);
    al_status st = al_family_llama_fields(root, file, c, 32768, err);
    int use_window = 0, window = 0, from = 0;
    if (st ||
        (st = al_cfg_refuse_flag(root, file, "use_mrope", 0, 1, "multimodal rotary embeddings are not built", err)) ||
        (st = al_cfg_flag(root, file, "use_sliding_window", 0, &use_window, err)) ||
        (st = al_cfg_int(root, file, "sliding_window", 1, 4096, 0, M, &window, err)) ||
        (st = al_cfg_int(root, file, "max_window_layers", 1, 28, 0, 1 << 20, &from, err)))
        return st;
    /* Qwen2Config keeps sliding_window only with use_sliding_window (docs/decoders.md): Qwen2.5-0.5B has none */
    d->window = use_window ? window : 0;
    d->window_from_layer = from;
    if (use_window && window < 1)
        return al_err(err, AL_ERR_FORMAT, "%s: field 'sliding_window' must be at least 1 with use_sliding_window", file);
    return check_layer_types(root, file, c, err);
}

static const char *const model_types[] = {"qwen2", NULL};
static const char *const class_prefixes[] = {"Qwen2", NULL};

/* Llama's layer rows with the three biases after them. */
static const al_tensor_name bias_rows[] = {
    {"layers.{layer}.self_attn.q_proj.bias", NULL, AL_W_Q_B, {AL_DIM_A}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.self_attn.k_proj.bias", NULL, AL_W_K_B, {AL_DIM_KV}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
    {"layers.{layer}.self_attn.v_proj.bias", NULL, AL_W_V_B, {AL_DIM_KV}, AL_WHEN_ALWAYS, AL_LAYOUT_AS_IS},
};
static const al_tensor_rows bias_part = AL_ROWS(bias_rows);

const al_family al_family_qwen2 = {
    AL_DECODER_FAMILY_COMMON,
    .name = "qwen2",
    .model_types = model_types,
    .class_prefixes = class_prefixes,
    .prefix = "model.",
    .read_config = read_config,
    .tensors = {&al_llama_embedding_rows, &al_llama_layer_rows, &bias_part, &al_llama_head_rows},
    .positions = AL_POS_ROTARY,
    .scores = &al_rule_causal_rotary,
    .layers = &al_layer_decoder_sequential,
};
