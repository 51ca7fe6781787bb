/* op_measures.c: the "norm_attention" and "attention_rollout" ops (docs/measures.md).
 *
 *   {"op": "norm_attention", "model", "text" | "texts" | "input_ids", "text_pair"? | "text_pairs"?,
 *    "pad_to"?, "max_length"?, "add_special_tokens"?, "batch_size"?,
 *    "outputs"?: any of "norms" (default), "layer_norms", "res_ln" (default), "value_norms"}
 *   -> tensors "norm_attentions" [NL,B,H,L,L] (alpha_h[i,j] ||f_h(x_j)||), "layer_norms" [NL,B,L,L],
 *      "res_ln_norms" [NL,B,L,L] (with the residual and the LayerNorm), "value_norms" [NL,B,H,L];
 *      JSON: per head "norm_mass" [NL][H] (mean over examples of the mean over real queries of
 *      sum_j alpha ||f||) and "value_norm_mean" [NL][H], sequences, digest.
 *   {"op": "attention_rollout", ...the same input fields, "source"?: "raw" (default) | "effective" | "norm",
 *    "mode"?: "exact" | "paper" (effective attention's)}
 *   -> tensor "rollout" [NL,B,L,L] (the rollout up to each layer); JSON: source, sequences, digest.
 * The digest (reply_digest.h) covers the returned tensors and the per-head numbers. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../methods/measures/measures.h"
#include "../model/family.h"
#include "../model/layer_rule.h"
#include "op_analysis.h"
#include "reply_digest.h"

static void reply_sequences(al_reply_builder *rb, const al_model *model, const al_api_inputs *in) {
    cJSON *seqs = al_rb_add(rb, rb->root, "sequences", cJSON_CreateArray());
    const al_tokenizer *tok = al_model_tokenizer(model);
    for (int b = 0; seqs && b < in->n_seqs; b++) {
        cJSON *obj = al_rb_add(rb, seqs, NULL, cJSON_CreateObject());
        if (!obj) break;
        const al_api_seq *seq = &in->seqs[b];
        al_rb_num(rb, obj, "n_tokens", seq->n_tokens);
        al_rb_bool(rb, obj, "truncated", seq->truncated);
        al_rb_add(rb, obj, "tokens", al_api_token_strings(tok, in->from_text ? seq->enc.ids : seq->raw_ids, seq->n_tokens));
    }
}

static void reply_shape(al_reply_builder *rb, const al_api_model *m, int B, int L) {
    const al_config *cfg = al_model_config(m->model);
    al_rb_str(rb, rb->root, "model", m->id);
    al_rb_num(rb, rb->root, "n_seqs", B);
    al_rb_num(rb, rb->root, "seq_len", L);
    al_rb_num(rb, rb->root, "n_layers", cfg->n_layers);
    al_rb_num(rb, rb->root, "n_heads", cfg->n_heads);
}

/* ------------------------------------------------------------ norm_attention */

enum { OUT_NORMS = 1, OUT_LAYER = 2, OUT_RES_LN = 4, OUT_VALUE_NORMS = 8 };

typedef struct norm_state {
    const al_model *model;
    int NL, H, D, dh, B;
    float *norms, *layer, *res_ln, *value_norms; /* the reply's tensors, or NULL */
    float *head_tmp, *vn_tmp;                    /* one layer of one example when not returned */
    double *mass, *vmean;                        /* [NL, H] sums over examples */
} norm_state;

static al_status norm_chunk(void *user, const al_run_chunk *c, al_error *err) {
    norm_state *s = user;
    const int L = c->L, H = s->H;
    const size_t LL = (size_t)L * L;
    for (int l = 0; l < s->NL; l++)
        for (int b = 0; b < c->B; b++) {
            const size_t eb = (size_t)l * s->B + c->first + b; /* this layer and example in the reply */
            const int32_t *mask = c->mask + (size_t)b * L;
            al_norm_outputs o = {s->norms ? s->norms + eb * H * LL : s->head_tmp,
                                 s->layer ? s->layer + eb * LL : NULL, s->res_ln ? s->res_ln + eb * LL : NULL,
                                 s->value_norms ? s->value_norms + eb * H * L : s->vn_tmp};
            const float *x = c->hidden_states + ((size_t)l * c->B + b) * L * s->D;
            const float *a = c->attentions + ((size_t)l * c->B + b) * H * LL;
            const float *v = c->values + ((size_t)l * c->B + b) * H * L * s->dh;
            al_status st = al_norm_attention_layer(s->model, l, x, a, v, mask, L, &o, err);
            if (st) return st;
            al_norm_head_mass(o.head_norms, o.value_norms, mask, L, H, s->mass + (size_t)l * H, s->vmean + (size_t)l * H);
        }
    return AL_OK;
}

static const char *const k_norm_outputs[] = {"norms", "layer_norms", "res_ln", "value_norms", NULL};
const al_req_field al_fields_norm_own[] = {
    AL_F_ARRAY("outputs", AL_FIELD_ENUM, 1, 0, k_norm_outputs, "[\"norms\", \"res_ln\"]",
               "the measures to return (res_ln only after post-LayerNorm layers)"),
    AL_F_END,
};

al_status al_op_norm_attention(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    al_an_opts o;
    al_api_inputs in;
    int flags = 0;
    al_status st = al_req_flags(ctx->req, "outputs", k_norm_outputs, 4, OUT_NORMS | OUT_RES_LN, &flags, err);
    if (!st) st = al_an_begin(ctx, 8, &m, &o, &in, err);
    if (st) return st;
    const al_config *cfg = al_model_config(m->model);
    /* the residual + LayerNorm variant follows a post-LayerNorm layer (docs/measures.md): a pre-norm family
     * (ModernBERT) has none, so it is left out by default and refused when asked for */
    if (!al_layer_rule_of(cfg)->res_ln && (flags & OUT_RES_LN)) {
        if (cJSON_GetObjectItemCaseSensitive(ctx->req, "outputs")) {
            al_api_inputs_free(&in);
            return al_err(err, AL_ERR_UNSUPPORTED,
                          "norm_attention: field 'outputs': \"res_ln\" (the residual and post-LayerNorm variant) does "
                          "not apply to %s's pre-norm layers",
                          al_arch_name(cfg->arch));
        }
        flags &= ~OUT_RES_LN;
    }
    const int L = al_an_length(&in, &o), B = in.n_seqs, NL = cfg->n_layers, H = cfg->n_heads;
    norm_state s = {m->model, NL, H, cfg->hidden_size, cfg->head_dim, B, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    al_reply_builder *rb = ctx->rb;
    void *data;
    const int64_t shape_h[5] = {NL, B, H, L, L}, shape_l[4] = {NL, B, L, L}, shape_v[4] = {NL, B, H, L};
    if (!st && (flags & OUT_NORMS) && !(st = al_rb_tensor(rb, "norm_attentions", "F32", 5, shape_h, &data, err))) s.norms = data;
    if (!st && (flags & OUT_LAYER) && !(st = al_rb_tensor(rb, "layer_norms", "F32", 4, shape_l, &data, err))) s.layer = data;
    if (!st && (flags & OUT_RES_LN) && !(st = al_rb_tensor(rb, "res_ln_norms", "F32", 4, shape_l, &data, err))) s.res_ln = data;
    if (!st && (flags & OUT_VALUE_NORMS) && !(st = al_rb_tensor(rb, "value_norms", "F32", 4, shape_v, &data, err)))
        s.value_norms = data;
    s.head_tmp = malloc(sizeof(float) * (size_t)H * L * L);
    s.vn_tmp = malloc(sizeof(float) * (size_t)H * L);
    s.mass = calloc((size_t)NL * H, sizeof(double));
    s.vmean = calloc((size_t)NL * H, sizeof(double));
    if (!st && (!s.head_tmp || !s.vn_tmp || !s.mass || !s.vmean)) st = al_err(err, AL_ERR_OOM, "norm_attention: out of memory");
    if (!st) st = al_an_run_outputs(ctx, m->model, NULL, &in, &o, AL_RUN_ATTENTIONS | AL_RUN_VALUES | AL_RUN_HIDDEN, 0,
                                    norm_chunk, &s, err);
    if (!st) {
        reply_shape(rb, m, B, L);
        for (int i = 0; i < NL * H; i++) s.mass[i] = al_json_canonical(s.mass[i] / B), s.vmean[i] = al_json_canonical(s.vmean[i] / B);
        al_an_matrix(rb, rb->root, "norm_mass", s.mass, NL, H, 0);
        al_an_matrix(rb, rb->root, "value_norm_mean", s.vmean, NL, H, 0);
        reply_sequences(rb, m->model, &in);
        al_sha256 d;
        char dig[72];
        al_digest_begin(&d);
        for (int i = 0; i < NL * H; i++) al_digest_line(&d, "norm_mass %.0f %.17g\n", i, s.mass[i]);
        for (int i = 0; i < NL * H; i++) al_digest_line(&d, "value_norm_mean %.0f %.17g\n", i, s.vmean[i]);
        const size_t nh = (size_t)NL * B * H * L * L, nl = (size_t)NL * B * L * L;
        if (s.norms) al_digest_floats(&d, "norm_attentions", s.norms, nh);
        if (s.layer) al_digest_floats(&d, "layer_norms", s.layer, nl);
        if (s.res_ln) al_digest_floats(&d, "res_ln_norms", s.res_ln, nl);
        if (s.value_norms) al_digest_floats(&d, "value_norms", s.value_norms, (size_t)NL * B * H * L);
        al_digest_end(&d, dig);
        al_rb_str(rb, rb->root, "digest", dig);
    }
    free(s.head_tmp), free(s.vn_tmp), free(s.mass), free(s.vmean);
    al_api_inputs_free(&in);
    return st;
}

/* ------------------------------------------------------------ attention_rollout */

enum { SRC_RAW = 0, SRC_EFFECTIVE = 1, SRC_NORM = 2 };

typedef struct rollout_state {
    const al_model *model;
    int NL, H, D, dh, B, source;
    float *rollout; /* [NL, B, L, L] */
    float *norms;   /* [NL, H, L, L] one example's norm-based maps (source "norm") */
} rollout_state;

static al_status rollout_chunk(void *user, const al_run_chunk *c, al_error *err) {
    rollout_state *s = user;
    const int L = c->L, H = s->H, NL = s->NL;
    const size_t LL = (size_t)L * L;
    const float *maps[512];
    float *one = malloc(sizeof(float) * (size_t)NL * LL);
    if (!one) return al_err(err, AL_ERR_OOM, "attention_rollout: out of memory");
    al_status st = AL_OK;
    for (int b = 0; !st && b < c->B; b++) {
        const int32_t *mask = c->mask + (size_t)b * L;
        for (int l = 0; !st && l < NL; l++) {
            const size_t at = ((size_t)l * c->B + b) * H * LL;
            if (s->source == SRC_NORM) {
                al_norm_outputs o = {s->norms + (size_t)l * H * LL, NULL, NULL, NULL};
                st = al_norm_attention_layer(s->model, l, c->hidden_states + ((size_t)l * c->B + b) * L * s->D,
                                             c->attentions + at, c->values + ((size_t)l * c->B + b) * H * L * s->dh,
                                             mask, L, &o, err);
                maps[l] = o.head_norms;
            } else {
                maps[l] = (s->source == SRC_EFFECTIVE ? c->effective : c->attentions) + at;
            }
        }
        if (!st) st = al_rollout(maps, NL, H, L, mask, s->source == SRC_NORM, one, err);
        for (int l = 0; !st && l < NL; l++)
            memcpy(s->rollout + ((size_t)l * s->B + c->first + b) * LL, one + (size_t)l * LL, sizeof(float) * LL);
    }
    free(one);
    return st;
}

static const char *const k_rollout_sources[] = {"raw", "effective", "norm", NULL};
const al_req_field al_fields_rollout_own[] = {
    AL_F_ENUM("source", k_rollout_sources, "\"raw\"", "the attention rolled out: raw, effective or norm-based"),
    AL_F_END,
};

al_status al_op_attention_rollout(al_op_ctx *ctx, al_error *err) {
    const char *src = NULL;
    al_status st = al_req_string(ctx->req, "source", "source", 0, &src, err);
    if (st) return st;
    int source = !src || !strcmp(src, "raw") ? SRC_RAW : !strcmp(src, "effective") ? SRC_EFFECTIVE
               : !strcmp(src, "norm") ? SRC_NORM : -1;
    if (source < 0)
        return al_err(err, AL_ERR_INVALID, "request: field 'source' must be \"raw\", \"effective\" or \"norm\", not '%.40s'", src);
    const al_api_model *m;
    al_an_opts o;
    al_api_inputs in;
    st = al_an_begin(ctx, 8, &m, &o, &in, err);
    if (st) return st;
    const al_config *cfg = al_model_config(m->model);
    const int L = al_an_length(&in, &o), B = in.n_seqs, NL = cfg->n_layers, H = cfg->n_heads;
    if (NL > 512) {
        al_api_inputs_free(&in);
        return al_err(err, AL_ERR_INVALID, "attention_rollout: %d layers (at most 512)", NL);
    }
    rollout_state s = {m->model, NL, H, cfg->hidden_size, cfg->head_dim, B, source, NULL, NULL};
    al_reply_builder *rb = ctx->rb;
    void *data;
    const int64_t shape[4] = {NL, B, L, L};
    if (!(st = al_rb_tensor(rb, "rollout", "F32", 4, shape, &data, err))) s.rollout = data;
    if (!st && source == SRC_NORM && !(s.norms = malloc(sizeof(float) * (size_t)NL * H * L * L)))
        st = al_err(err, AL_ERR_OOM, "attention_rollout: out of memory");
    const int outputs = AL_RUN_ATTENTIONS | AL_RUN_VALUES | (source == SRC_NORM ? AL_RUN_HIDDEN : 0);
    if (!st) st = al_an_run_outputs(ctx, m->model, NULL, &in, &o, outputs, source == SRC_EFFECTIVE, rollout_chunk, &s, err);
    if (!st) {
        reply_shape(rb, m, B, L);
        al_rb_str(rb, rb->root, "source", source == SRC_RAW ? "raw" : source == SRC_EFFECTIVE ? "effective" : "norm");
        if (source == SRC_EFFECTIVE) al_rb_str(rb, rb->root, "mode", o.mode == AL_EFFECTIVE_PAPER ? "paper" : "exact");
        reply_sequences(rb, m->model, &in);
        al_sha256 d;
        char dig[72];
        al_digest_begin(&d);
        al_digest_floats(&d, "rollout", s.rollout, (size_t)NL * B * L * L);
        al_digest_end(&d, dig);
        al_rb_str(rb, rb->root, "digest", dig);
    }
    free(s.norms);
    al_api_inputs_free(&in);
    return st;
}
