/* value_zeroing.c: value zeroing (see value_zeroing.h). One forward pass gives every layer's input, attention
 * weights and value vectors; each zeroed token then reruns the layer's tail (src/model/forward_internal.h) on
 * its own scratch, in a task of its own. */
#include "value_zeroing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/threadpool.h"
#include "../../kernels/kernels.h"
#include "../../model/family_params.h"
#include "../../model/forward_internal.h"

typedef struct scratch {
    float *v, *ctx, *tmp, *wide, *y; /* [L, dh] one head's values, [L, width] the heads' contexts, [L, D] x2,
                                      * [L, al_fwd_ffn_width] */
} scratch;

typedef struct layer_job {
    const al_model *m;
    int l, L, D, width, H, dh; /* width: the contexts', n_heads * head_dim (family_params.h) */
    const float *x;      /* [L, D] the layer's input */
    const float *A;      /* [H, L, L] attention weights */
    const float *V;      /* [H, L, dh] value vectors */
    const float *mask;   /* [L] */
    const int *real;     /* [n_real] positions of real tokens */
    int n_real;
    const float *base;   /* [L, D] the unaltered output */
    scratch *scr;        /* per thread */
    float *dist;         /* [L, L] this example's layer */
    const volatile int *cancel;
} layer_job;

/* The layer's output with token j's values zeroed (j < 0: none) into s->y. */
static void rerun(const layer_job *J, int j, scratch *s) {
    const int L = J->L, D = J->D, width = J->width, dh = J->dh;
    for (int h = 0; h < J->H; h++) {
        memcpy(s->v, J->V + (size_t)h * L * dh, sizeof(float) * (size_t)L * dh);
        if (j >= 0) memset(s->v + (size_t)j * dh, 0, sizeof(float) * (size_t)dh);
        al_gemm_nn(L, dh, L, 1.0f, J->A + (size_t)h * L * L, L, s->v, dh, s->ctx + (size_t)h * dh, width, 0);
    }
    memcpy(s->y, J->x, sizeof(float) * (size_t)L * D);
    al_fwd_layer_tail(J->m, J->l, NULL, s->ctx, s->y, L, s->tmp, s->wide);
}

static void token_task(void *arg, int t, int n_tasks, int thread) {
    (void)n_tasks;
    const layer_job *J = arg;
    if (J->cancel && *J->cancel) return; /* the layer is abandoned: checked after the loop */
    scratch *s = &J->scr[thread];
    const int j = J->real[t], D = J->D;
    rerun(J, j, s);
    for (int r = 0; r < J->n_real; r++) {
        const int i = J->real[r];
        const float *a = J->base + (size_t)i * D, *b = s->y + (size_t)i * D;
        double ab = 0.0, aa = 0.0, bb = 0.0;
        for (int d = 0; d < D; d++) ab += (double)a[d] * b[d], aa += (double)a[d] * a[d], bb += (double)b[d] * b[d];
        /* sqrt(aa * bb): an unchanged output (b == a) gives ab == den exactly, so distance 0, never a rounding
         * residue of +-2e-16; a cosine distance is never below 0 */
        const double den = sqrt(aa * bb), d = den > 0.0 ? 1.0 - ab / den : 0.0;
        J->dist[(size_t)i * J->L + j] = (float)(d > 0.0 ? d : 0.0);
    }
}

al_status al_value_zeroing(const al_model *model, const al_batch *batch, const al_forward_params *params,
                           float *distances, float *normalized, al_error *err) {
    const al_config *c = al_model_config(model);
    const int NL = c->n_layers, H = c->n_heads, D = c->hidden_size, dh = c->head_dim, width = al_attn_width(c);
    const int B = batch->n_seqs, L = batch->seq_len;
    if (params && params->policies)
        return al_err(err, AL_ERR_INVALID, "value zeroing: runs the unmodified model (no head policies)");
    al_forward_params fp = params ? *params : al_forward_default_params();
    fp.progress = NULL;
    fp.skip_pads = 0;
    al_threadpool *pool = fp.pool;
    const int T = al_threadpool_size(pool);
    const size_t LD = (size_t)L * D;
    float *hidden = malloc(sizeof(float) * (size_t)(NL + 1) * LD), *att = malloc(sizeof(float) * (size_t)NL * H * L * L);
    float *val = malloc(sizeof(float) * (size_t)NL * H * L * dh), *base = malloc(sizeof(float) * LD);
    float *mask = malloc(sizeof(float) * (size_t)L);
    int *real = malloc(sizeof(int) * (size_t)L);
    scratch *scr = calloc((size_t)T, sizeof *scr);
    al_status st = hidden && att && val && base && mask && real && scr ? AL_OK : al_err(err, AL_ERR_OOM, "value zeroing: out of memory");
    for (int t = 0; t < T && !st; t++) {
        scr[t].v = malloc(sizeof(float) * (size_t)L * dh);
        scr[t].ctx = malloc(sizeof(float) * (size_t)L * width), scr[t].tmp = malloc(sizeof(float) * LD), scr[t].y = malloc(sizeof(float) * LD);
        scr[t].wide = malloc(sizeof(float) * (size_t)L * al_fwd_ffn_width(c));
        if (!scr[t].v || !scr[t].ctx || !scr[t].tmp || !scr[t].y || !scr[t].wide) st = al_err(err, AL_ERR_OOM, "value zeroing: out of memory");
    }
    for (int b = 0; b < B && !st; b++) {
        const size_t at = (size_t)b * L;
        al_batch one = {1, L, batch->input_ids + at, batch->attention_mask ? batch->attention_mask + at : NULL,
                        batch->type_ids ? batch->type_ids + at : NULL,
                        batch->position_ids ? batch->position_ids + at : NULL};
        al_forward_outputs o = {0};
        o.hidden_states = hidden, o.attentions = att, o.values = val;
        st = al_forward(model, &one, &fp, &o, err);
        if (st) break;
        int n_real = 0;
        for (int i = 0; i < L; i++) {
            mask[i] = one.attention_mask ? (float)(one.attention_mask[i] != 0) : 1.0f;
            if (mask[i] != 0.0f) real[n_real++] = i;
        }
        for (int l = 0; l < NL && !st; l++) {
            if (fp.cancel && *fp.cancel) {
                st = al_err(err, AL_ERR_CANCELLED, "value zeroing: cancelled at layer %d", l);
                break;
            }
            float *dist = distances + ((size_t)b * NL + l) * L * L;
            memset(dist, 0, sizeof(float) * (size_t)L * L);
            layer_job J = {model, l, L, D, width, H, dh, hidden + (size_t)l * LD, att + (size_t)l * H * L * L,
                           val + (size_t)l * H * L * dh, mask, real, n_real, base, scr, dist, fp.cancel};
            rerun(&J, -1, &scr[0]);
            memcpy(base, scr[0].y, sizeof(float) * LD);
            al_threadpool_for(pool, n_real, token_task, &J);
            if (fp.cancel && *fp.cancel) {
                st = al_err(err, AL_ERR_CANCELLED, "value zeroing: cancelled at layer %d", l);
                break;
            }
            if (normalized) {
                float *nrm = normalized + ((size_t)b * NL + l) * L * L;
                for (int i = 0; i < L; i++) {
                    double sum = 0.0;
                    for (int j = 0; j < L; j++) sum += dist[(size_t)i * L + j];
                    for (int j = 0; j < L; j++) nrm[(size_t)i * L + j] = sum > 0.0 ? (float)(dist[(size_t)i * L + j] / sum) : 0.0f;
                }
            }
            if (params && params->progress)
                params->progress(params->progress_user, "value_zeroing", (double)(b * NL + l + 1) / ((double)B * NL));
        }
    }
    for (int t = 0; scr && t < T; t++) free(scr[t].v), free(scr[t].ctx), free(scr[t].tmp), free(scr[t].y), free(scr[t].wide);
    free(scr), free(hidden), free(att), free(val), free(base), free(mask), free(real);
    return st;
}
