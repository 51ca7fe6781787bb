/* op_analysis_stats.c: the "attention_stats" and "attention_patterns" ops.
 *
 *   {"op": "attention_stats", "model", "texts" | "text" | "input_ids" (+ pairs), "mode"?,
 *    "average"?: "exact" | "paper", "pad_to"?, "max_length"?, "batch_size"? (default 8), ...}
 *   -> "standard" and "effective": {"cls", "sep", "punct": [NL][H]}: attention to [CLS], [SEP] and
 *      punctuation keys per layer and head (Sun & Marasovic Figures 5, 6; al_attention_token_stats);
 *      for a causal model "standard" also has "entropy_normalised" [NL][H] (al_causal_entropy_example),
 *      "n_examples", "n_units" (examples, or batches for "average": "paper").
 *   {"op": "attention_patterns", same inputs}
 *   -> tensors "patterns_standard" / "patterns_effective" I32 [NL,B,H] (al_pattern index),
 *      "scores_standard" / "scores_effective" F32 [NL,B,H,3] (vertical, diagonal, block);
 *      JSON "patterns" (names by index), "standard" / "effective": {name: percent} (Table 2). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../methods/measures/measures.h"
#include "op_analysis.h"

typedef struct stats_state {
    int NL, H;
    al_average avg;
    double *sums[2]; /* standard, effective: [3, NL, H] */
    double count[2];
    int n_examples;
    double *entropy;   /* a causal model's [NL, H] sums of al_causal_entropy_example over examples, else NULL */
    int *entropy_n;    /* [NL, H] the examples that gave a value */
} stats_state;

static al_status stats_chunk(void *user, const al_run_chunk *c, al_error *err) {
    stats_state *s = user;
    const float *maps[2] = {c->attentions, c->effective};
    for (int k = 0; k < 2; k++) {
        al_status st = al_attention_token_stats(maps[k], s->NL, c->B, s->H, c->L, c->mask,
                                                c->classes, s->avg, s->sums[k], &s->count[k], err);
        if (st) return st;
    }
    for (int l = 0; s->entropy && l < s->NL; l++)
        for (int b = 0; b < c->B; b++) {
            double e[1024];
            al_causal_entropy_example(c->attentions + ((size_t)l * c->B + b) * s->H * c->L * c->L, s->H, c->L,
                                      c->mask + (size_t)b * c->L, e);
            for (int h = 0; h < s->H; h++)
                if (e[h] == e[h]) s->entropy[(size_t)l * s->H + h] += e[h], s->entropy_n[(size_t)l * s->H + h]++;
        }
    s->n_examples += c->B;
    return AL_OK;
}

al_status al_op_attention_stats(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    al_an_opts o;
    al_api_inputs in;
    al_status st = al_an_begin(ctx, 8, &m, &o, &in, err);
    if (st) return st;
    const al_config *cfg = al_model_config(m->model);
    const int NL = cfg->n_layers, H = cfg->n_heads;
    stats_state s = {NL, H, o.average, {NULL, NULL}, {0, 0}, 0, NULL, NULL};
    s.sums[0] = calloc((size_t)3 * NL * H, sizeof(double));
    s.sums[1] = calloc((size_t)3 * NL * H, sizeof(double));
    if (!s.sums[0] || !s.sums[1]) st = al_err(err, AL_ERR_OOM, "attention_stats: out of memory");
    if (!st && al_model_is_causal(m->model) && H > 1024)
        st = al_err(err, AL_ERR_INVALID, "attention_stats: %d heads (at most 1024)", H);
    if (!st && al_model_is_causal(m->model)) { /* rows of i + 1 keys: the normalised entropy (docs/measures.md) */
        s.entropy = calloc((size_t)NL * H, sizeof(double));
        s.entropy_n = calloc((size_t)NL * H, sizeof(int));
        if (!s.entropy || !s.entropy_n) st = al_err(err, AL_ERR_OOM, "attention_stats: out of memory");
    }
    if (!st) st = al_an_run(ctx, m->model, NULL, &in, &o, stats_chunk, &s, err);
    if (!st) {
        al_reply_builder *rb = ctx->rb;
        al_rb_str(rb, rb->root, "model", m->id);
        al_rb_str(rb, rb->root, "mode", o.mode == AL_EFFECTIVE_PAPER ? "paper" : "exact");
        al_rb_str(rb, rb->root, "average", o.average == AL_AVERAGE_PAPER ? "paper" : "exact");
        al_rb_num(rb, rb->root, "n_examples", s.n_examples);
        al_rb_num(rb, rb->root, "n_units", s.count[0]);
        static const char *const kinds[2] = {"standard", "effective"};
        static const char *const cls[3] = {"cls", "sep", "punct"};
        for (int k = 0; k < 2; k++) {
            cJSON *obj = al_rb_add(rb, rb->root, kinds[k], cJSON_CreateObject());
            for (int c = 0; obj && c < 3; c++)
                al_an_matrix(rb, obj, cls[c], s.sums[k] + (size_t)c * NL * H, NL, H, s.count[k]);
            if (obj && k == 0 && s.entropy) { /* mean over the examples with a row of two keys; null without one */
                for (int i = 0; i < NL * H; i++) s.entropy[i] = s.entropy_n[i] ? s.entropy[i] / s.entropy_n[i] : NAN;
                al_an_matrix(rb, obj, "entropy_normalised", s.entropy, NL, H, 0);
            }
        }
    }
    free(s.sums[0]), free(s.sums[1]), free(s.entropy), free(s.entropy_n);
    al_api_inputs_free(&in);
    return st;
}

typedef struct pattern_state {
    int NL, H, B;
    int32_t *labels[2];
    float *scores[2];
    double counts[2][AL_N_PATTERNS];
} pattern_state;

static al_status pattern_chunk(void *user, const al_run_chunk *c, al_error *err) {
    pattern_state *s = user;
    const float *maps[2] = {c->attentions, c->effective};
    const size_t LL = (size_t)c->L * c->L;
    for (int k = 0; k < 2; k++)
        for (int l = 0; l < s->NL; l++)
            for (int b = 0; b < c->B; b++)
                for (int h = 0; h < s->H; h++) {
                    const float *A = maps[k] + (((size_t)l * c->B + b) * s->H + h) * LL;
                    al_pattern_scores sc;
                    al_pattern p = al_attention_pattern(A, c->L, c->mask + (size_t)b * c->L,
                                                        c->classes + (size_t)b * c->L,
                                                        c->segments + (size_t)b * c->L, &sc);
                    const size_t out = ((size_t)l * s->B + c->first + b) * s->H + h;
                    s->labels[k][out] = (int32_t)p;
                    s->scores[k][out * 3 + 0] = sc.vertical;
                    s->scores[k][out * 3 + 1] = sc.diagonal;
                    s->scores[k][out * 3 + 2] = sc.block;
                    s->counts[k][p] += 1;
                }
    (void)err;
    return AL_OK;
}

al_status al_op_attention_patterns(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    al_an_opts o;
    al_api_inputs in;
    al_status st = al_an_begin(ctx, 8, &m, &o, &in, err);
    if (st) return st;
    const al_config *cfg = al_model_config(m->model);
    const int NL = cfg->n_layers, H = cfg->n_heads;
    const int B = in.n_seqs;
    pattern_state s;
    memset(&s, 0, sizeof s);
    s.NL = NL, s.H = H, s.B = B;
    al_reply_builder *rb = ctx->rb;
    static const char *const label_names[2] = {"patterns_standard", "patterns_effective"};
    static const char *const score_names[2] = {"scores_standard", "scores_effective"};
    const int64_t shape_l[3] = {NL, B, H}, shape_s[4] = {NL, B, H, 3};
    void *data;
    for (int k = 0; !st && k < 2; k++) {
        st = al_rb_tensor(rb, label_names[k], "I32", 3, shape_l, &data, err);
        s.labels[k] = data;
        if (!st) st = al_rb_tensor(rb, score_names[k], "F32", 4, shape_s, &data, err);
        s.scores[k] = data;
    }
    if (!st) st = al_an_run(ctx, m->model, NULL, &in, &o, pattern_chunk, &s, err);
    if (!st) {
        al_rb_str(rb, rb->root, "model", m->id);
        al_rb_str(rb, rb->root, "mode", o.mode == AL_EFFECTIVE_PAPER ? "paper" : "exact");
        cJSON *names = al_rb_add(rb, rb->root, "patterns", cJSON_CreateArray());
        for (int p = 0; names && p < AL_N_PATTERNS; p++)
            al_rb_add(rb, names, NULL, cJSON_CreateString(al_pattern_name((al_pattern)p)));
        static const char *const kinds[2] = {"standard", "effective"};
        const double total = (double)NL * B * H;
        for (int k = 0; k < 2; k++) {
            cJSON *obj = al_rb_add(rb, rb->root, kinds[k], cJSON_CreateObject());
            for (int p = 0; obj && p < AL_N_PATTERNS; p++)
                al_rb_num(rb, obj, al_pattern_name((al_pattern)p), 100.0 * s.counts[k][p] / total);
        }
    }
    al_api_inputs_free(&in);
    return st;
}
