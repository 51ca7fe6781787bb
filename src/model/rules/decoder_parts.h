/* decoder_parts.h: the pieces the decoder layer rules share (decoder_parts.c). Not public. */
#ifndef AL_MODEL_RULES_DECODER_PARTS_H
#define AL_MODEL_RULES_DECODER_PARTS_H

#include "../forward_internal.h"

/* The family's norm of rows [rows, D] (gain g, bias b or NULL) into y (may be x). */
void al_dec_norm(const al_config *c, const float *g, const float *b, const float *x, float *y, int rows);
/* Layer l's feed-forward of in [rows, D] into out [rows, D] (may be in); wide [rows, 2I] scratch. */
void al_dec_mlp(const al_model *m, int l, al_threadpool *pool, const float *in, float *out, int rows, float *wide);
/* Layer l's output projection ctx [rows, A] -> out [rows, D] (with its bias when the layer has one). */
void al_dec_attn_out(const al_model *m, int l, al_threadpool *pool, const float *ctx, float *out, int rows);
/* After the last layer (l = n_layers - 1) the final norm of x in place; nothing in other layers. */
void al_dec_final_norm(const al_model *m, int l, float *x, int rows);

#endif
