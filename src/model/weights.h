/* weights.h: a model's weights from its family's tensor table (family.h): loaded from a state dict, drawn at
 * random, counted, and listed under Hugging Face names for writing. Not public. */
#ifndef AL_MODEL_WEIGHTS_H
#define AL_MODEL_WEIGHTS_H

#include "model_internal.h"
#include "tensor_list.h"

/* Fills model->w, storage, n_floats, layer_storage and weights_dtype from the tensors of a state dict
 * for model->config (already set). Tensors the model does not need are ignored; a missing or
 * mis-shaped required one is an error naming it. `weights_file` names the file in messages. */
al_status al_weights_load(al_model *model, const al_tensor_list *list, const char *weights_file,
                          al_error *err);
/* Fresh weights for model->config: normal(0, 0.02) matrices and embeddings (padding row zero), zero
 * biases, LayerNorm gain 1, drawn from al_rng(seed) in a fixed order; tied MLM decoder. */
al_status al_weights_random(al_model *model, uint64_t seed, int mlm_head, al_error *err);

/* The float32 weights of a model with this config (the MLM head counted when mlm_head). */
al_status al_weights_count(const al_config *config, int mlm_head, uint64_t *n_weights, al_error *err);
/* AL_OK when n_weights float32 weights plus file_bytes (the weight files not yet in memory) fit in
 * memory; else AL_ERR_OOM naming the config's sizes, the bytes needed and the limit (docs/memory.md). */
al_status al_weights_check_memory(const al_config *config, uint64_t n_weights, uint64_t file_bytes,
                                  al_error *err);

/* The model's weights under its family's Hugging Face names (the encoder with the family prefix, "bert."),
 * in table order, as float32 tensors pointing into the model (not copied): what `attnlab export` and
 * checkpoints write and the loader reads back. A decoder tied to the word embeddings is not listed. At most
 * max are written; returns the count. al_weights_n_tensors is an upper bound for max. */
int al_weights_tensors(const al_model *model, al_tensor_out *out, int max);
int al_weights_n_tensors(const al_model *model);
/* The same tensors as the files hold them (family.h's al_tensor_layout: GPT-2's Conv1D weights [in, out], GPT-NeoX's
 * fused rows per head), what export and checkpoints write so that the loader reads them back: a tensor whose file
 * layout differs is a turned copy (shape[5] == 1 marks it; al_weights_file_tensors_free frees those), the others
 * point into the model. Returns the count, or -1 when out of memory. */
int al_weights_file_tensors(const al_model *model, al_tensor_out *out, int max);
void al_weights_file_tensors_free(al_tensor_out *t, int n);

#endif
