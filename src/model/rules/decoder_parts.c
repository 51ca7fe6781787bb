/* decoder_parts.c: the pieces the decoder layer rules share (decoder_parts.h, docs/decoders.md): the family's norm
 * (LayerNorm with bias, or RMSNorm), its feed-forward (act(x W_in + b) W_out + b, or Llama's down(act(gate x) *
 * up x)), and the attention's output projection from the heads' width A back to D. Row by row or elementwise
 * besides the GEMMs, so any cut into chunks or threads gives the same bits. */
#include "decoder_parts.h"

#include "../../kernels/kernels.h"
#include "../family_params.h"

void al_dec_norm(const al_config *c, const float *g, const float *b, const float *x, float *y, int rows) {
    if (al_decoder(c)->norm == AL_DEC_RMSNORM) al_rmsnorm(x, y, rows, c->hidden_size, g, c->layer_norm_eps);
    else al_layernorm(x, y, rows, c->hidden_size, g, b, c->layer_norm_eps);
}

void al_dec_mlp(const al_model *m, int l, al_threadpool *pool, const float *in, float *out, int rows, float *wide) {
    const al_config *c = &m->config;
    const al_layer_weights *lw = &m->w.layers[l];
    const int D = c->hidden_size, I = c->intermediate_size;
    if (al_decoder(c)->mlp == AL_DEC_GLU) {
        /* gate into the first I columns, up into the next I: act(gate) * up, then down */
        al_gemm_nt_pool(pool, rows, I, D, 1.0f, in, D, lw->ff_in_w, D, wide, 2 * I, 0);
        al_gemm_nt_pool(pool, rows, I, D, 1.0f, in, D, lw->ff_up_w, D, wide + I, 2 * I, 0);
        al_fwd_glu_pool(pool, c->act, wide, rows, I);
        al_gemm_nt_pool(pool, rows, D, I, 1.0f, wide, 2 * I, lw->ff_out_w, I, out, D, 0);
        if (lw->ff_out_b)
            for (int r = 0; r < rows; r++)
                for (int d = 0; d < D; d++) out[(size_t)r * D + d] += lw->ff_out_b[d];
        return;
    }
    al_linear_pool(pool, rows, I, D, in, lw->ff_in_w, lw->ff_in_b, wide);
    al_fwd_activate_pool(pool, c->act, wide, (size_t)rows * I);
    al_linear_pool(pool, rows, D, I, wide, lw->ff_out_w, lw->ff_out_b, out);
}

void al_dec_attn_out(const al_model *m, int l, al_threadpool *pool, const float *ctx, float *out, int rows) {
    const al_config *c = &m->config;
    const al_layer_weights *lw = &m->w.layers[l];
    al_linear_pool(pool, rows, c->hidden_size, al_attn_width(c), ctx, lw->o_w, lw->o_b, out);
}

void al_dec_final_norm(const al_model *m, int l, float *x, int rows) {
    if (l == m->config.n_layers - 1) al_dec_norm(&m->config, m->w.final_ln_g, m->w.final_ln_b, x, x, rows);
}
