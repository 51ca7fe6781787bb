/* op_effective.c: the "effective_attention" and "attention_diff" ops.
 *
 *   {"op": "effective_attention", "model", "text" | "texts" | "input_ids", "text_pair"? |
 *    "text_pairs"?, "mode"?: "exact" | "paper", "pad_to"?, "max_length"?, "add_special_tokens"?,
 *    "batch_size"?, "outputs"?: any of "effective" (default), "attentions", "values", "abs_diff"}
 *   -> tensors "effective_attentions" [NL,B,H,L,L], "ranks" I32 [NL,B,H] (paper: the layer's r*),
 *      "diff_norms" [NL,B,H] (Frobenius norm of effective - standard over the real tokens), and the
 *      requested "attentions", "values", "abs_diff"; JSON: mode, tolerance, "r_star" per layer,
 *      "diff_norm_mean" [NL][H] (mean over examples), "effective_min"/"effective_max" over the real
 *      tokens (a colour range: effective attention is not in [0, 1]), sequences.
 *   {"op": "attention_diff", ...the same fields} = effective_attention with outputs ["abs_diff"].
 * "paper" mode reproduces Sun & Marasovic's code; pad to 128 ("pad_to": 128) as they did. */
#include <float.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "op_analysis.h"

enum { OUT_EFF = 1, OUT_ATTN = 2, OUT_VALUES = 4, OUT_DIFF = 8 };
static const char *const k_output_names[] = {"effective", "attentions", "values", "abs_diff", NULL};

const al_req_field al_fields_effective_own[] = {
    AL_F_ARRAY("outputs", AL_FIELD_ENUM, 1, 0, k_output_names, NULL,
               "the tensors to return (default: effective_attention's \"effective\", attention_diff's \"abs_diff\")"),
    AL_F_END,
};

static al_status read_outputs(const cJSON *req, int def, int *flags, al_error *err) {
    return al_req_flags(req, "outputs", k_output_names, 4, def, flags, err);
}

typedef struct eff_state {
    int NL, H, dh, B;
    float *eff, *attn, *values, *diff, *norms;
    int32_t *ranks;
    double min, max;
} eff_state;

/* Copies a chunk's [NL, b, H, X] block into the whole request's [NL, B, H, X] tensor. */
static void put_block(float *dst, const float *src, const eff_state *s, const al_run_chunk *c,
                      size_t per_head) {
    if (!dst) return;
    const size_t block = (size_t)c->B * s->H * per_head;
    for (int l = 0; l < s->NL; l++)
        memcpy(dst + ((size_t)l * s->B + c->first) * s->H * per_head, src + (size_t)l * block,
               block * sizeof(float));
}

static al_status on_chunk(void *user, const al_run_chunk *c, al_error *err) {
    eff_state *s = user;
    const int L = c->L, B = c->B;
    const size_t LL = (size_t)L * L;
    put_block(s->eff, c->effective, s, c, LL);
    put_block(s->attn, c->attentions, s, c, LL);
    put_block(s->values, c->values, s, c, (size_t)L * s->dh);
    float *norms = malloc(sizeof(float) * (size_t)s->NL * B * s->H);
    float *diff = s->diff ? malloc(sizeof(float) * (size_t)s->NL * B * s->H * LL) : NULL;
    if (!norms || (s->diff && !diff)) {
        free(norms), free(diff);
        return al_err(err, AL_ERR_OOM, "effective_attention: out of memory for the differences");
    }
    al_status st = al_attention_diff(c->attentions, c->effective, s->NL, B, s->H, L, c->mask, diff, norms, err);
    if (!st) {
        put_block(s->norms, norms, s, c, 1);
        put_block(s->diff, diff, s, c, LL);
        for (int l = 0; l < s->NL; l++)
            for (int bh = 0; bh < B * s->H; bh++)
                s->ranks[((size_t)l * s->B + c->first) * s->H + bh] = c->ranks[(size_t)l * B * s->H + bh];
        for (int l = 0; l < s->NL; l++)
            for (int b = 0; b < B; b++) {
                const int32_t *m = c->mask + (size_t)b * L;
                for (int h = 0; h < s->H; h++) {
                    const float *E = c->effective + (((size_t)l * B + b) * s->H + h) * LL;
                    for (int i = 0; i < L; i++)
                        for (int j = 0; j < L; j++)
                            if (m[i] && m[j]) {
                                const float v = E[(size_t)i * L + j];
                                if (v < s->min) s->min = v;
                                if (v > s->max) s->max = v;
                            }
                }
            }
    }
    free(norms), free(diff);
    return st;
}

static al_status run_effective(al_op_ctx *ctx, int default_outputs, al_error *err) {
    const al_api_model *m;
    al_an_opts o;
    int flags;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (!st) st = al_an_read_opts(ctx, 1 << 20, &o, err);
    if (!st) st = read_outputs(ctx->req, default_outputs, &flags, err);
    if (st) return st;
    al_op_warn_unknown(ctx);
    const al_config *cfg = al_model_config(m->model);
    al_api_inputs in;
    st = al_an_read_inputs(ctx, m->model, &o, &in, err);
    if (st) return st;
    const int L = al_an_length(&in, &o), B = in.n_seqs, NL = cfg->n_layers, H = cfg->n_heads;
    eff_state s = {NL, H, cfg->head_dim, B, NULL, NULL, NULL, NULL, NULL, NULL, DBL_MAX, -DBL_MAX};
    al_reply_builder *rb = ctx->rb;
    void *data;
    const int64_t shape_a[5] = {NL, B, H, L, L}, shape_v[5] = {NL, B, H, L, cfg->head_dim};
    const int64_t shape_r[3] = {NL, B, H};
    if (!st && (flags & OUT_EFF)) {
        st = al_rb_tensor(rb, "effective_attentions", "F32", 5, shape_a, &data, err);
        s.eff = data;
    }
    if (!st && (flags & OUT_ATTN)) {
        st = al_rb_tensor(rb, "attentions", "F32", 5, shape_a, &data, err);
        s.attn = data;
    }
    if (!st && (flags & OUT_VALUES)) {
        st = al_rb_tensor(rb, "values", "F32", 5, shape_v, &data, err);
        s.values = data;
    }
    if (!st && (flags & OUT_DIFF)) {
        st = al_rb_tensor(rb, "abs_diff", "F32", 5, shape_a, &data, err);
        s.diff = data;
    }
    if (!st) {
        st = al_rb_tensor(rb, "ranks", "I32", 3, shape_r, &data, err);
        s.ranks = data;
    }
    if (!st) {
        st = al_rb_tensor(rb, "diff_norms", "F32", 3, shape_r, &data, err);
        s.norms = data;
    }
    if (!st) st = al_an_run(ctx, m->model, NULL, &in, &o, on_chunk, &s, err);
    if (!st) {
        al_rb_str(rb, rb->root, "model", m->id);
        al_rb_str(rb, rb->root, "mode", o.mode == AL_EFFECTIVE_PAPER ? "paper" : "exact");
        if (o.mode == AL_EFFECTIVE_PAPER)
            al_rb_num(rb, rb->root, "tolerance", al_effective_paper_tolerance(H));
        else
            al_rb_str(rb, rb->root, "tolerance", "sigma_max * max(n, head_dim) * 1.1920929e-07");
        al_rb_num(rb, rb->root, "n_seqs", B);
        al_rb_num(rb, rb->root, "seq_len", L);
        al_rb_num(rb, rb->root, "n_layers", NL);
        al_rb_num(rb, rb->root, "n_heads", H);
        al_rb_num(rb, rb->root, "head_dim", cfg->head_dim);
        if (o.mode == AL_EFFECTIVE_PAPER) {
            cJSON *rs = al_rb_add(rb, rb->root, "r_star", cJSON_CreateArray());
            for (int l = 0; rs && l < NL; l++)
                al_rb_add(rb, rs, NULL, cJSON_CreateNumber(s.ranks[(size_t)l * B * H]));
        }
        double *mean = calloc((size_t)NL * H, sizeof(double));
        if (!mean) st = al_err(err, AL_ERR_OOM, "effective_attention: out of memory");
        for (int l = 0; mean && l < NL; l++)
            for (int b = 0; b < B; b++)
                for (int h = 0; h < H; h++)
                    mean[(size_t)l * H + h] += s.norms[((size_t)l * B + b) * H + h];
        if (mean) al_an_matrix(rb, rb->root, "diff_norm_mean", mean, NL, H, B);
        free(mean);
        al_rb_num(rb, rb->root, "effective_min", s.min <= s.max ? s.min : 0);
        al_rb_num(rb, rb->root, "effective_max", s.min <= s.max ? s.max : 0);
        cJSON *seqs = al_rb_add(rb, rb->root, "sequences", cJSON_CreateArray());
        const al_tokenizer *tok = al_model_tokenizer(m->model);
        for (int b = 0; seqs && b < B; b++) {
            cJSON *obj = al_rb_add(rb, seqs, NULL, cJSON_CreateObject());
            if (!obj) break;
            const al_api_seq *seq = &in.seqs[b];
            al_rb_num(rb, obj, "n_tokens", seq->n_tokens);
            al_rb_bool(rb, obj, "truncated", seq->truncated);
            al_rb_add(rb, obj, "tokens", al_api_token_strings(tok, in.from_text ? seq->enc.ids
                                                                                : seq->raw_ids,
                                                              seq->n_tokens));
        }
    }
    al_api_inputs_free(&in);
    return st;
}

al_status al_op_effective(al_op_ctx *ctx, al_error *err) { return run_effective(ctx, OUT_EFF, err); }
al_status al_op_attention_diff(al_op_ctx *ctx, al_error *err) {
    return run_effective(ctx, OUT_DIFF, err);
}
