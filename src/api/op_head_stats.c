/* op_head_stats.c: the "head_stats" op, head statistics over a task's examples (docs/measures.md).
 *
 *   {"op": "head_stats", "model", "task" | "task_jsonl" | "import" (as papa), "preset"?, "L"?, "layout"?,
 *    "max_train"?, "max_validation"?, "constants_examples"?, "batch_size"?, "memory_mb"?,
 *    "confidence"?: "max" (default) | "voita" (the largest weight over the keys that are not [SEP])}
 *   -> JSON: "stats" {entropy, confidence, cls, sep, first, punct, js, sink}: each [NL][H], the mean over the
 *      validation examples of each example's mean over its real query rows; "ci95" the same keys, the 95%
 *      Student-t half-width over examples (src/methods/probes/metrics_stats.c, as PAPA's summaries); "n_examples";
 *      config, hashes, reused, digest; for a causal model "row_rule" (how rows of i + 1 keys are made comparable:
 *      docs/measures.md, "Causal decoders").
 * The examples are laid out as a PAPA sweep lays them out (the same presets and fields); the constant
 * matrices are PAPA's averaged ones over the training examples, taken from (and left in) the session cache
 * a papa request of the same model, task and fields uses. A causal model reads the task's text right padded
 * (al_experiment_inputs) and each example's rows by al_causal_head_stats_example; or, with "corpus" and
 * "constants_corpus" (the papa op's corpus fields, lm_heads.h), every window of the corpus against the causal
 * constants of the other text. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../methods/batches/batch_runner.h"
#include "../methods/measures/measures.h"
#include "../methods/probes/metrics.h"
#include "../methods/papa/papa.h"
#include "op_analysis.h"
#include "experiment_setup.h"
#include "lm_heads.h"
#include "op_heads.h"
#include "reply_digest.h"

/* "stats" and "ci95" {name: [NL][H]} and the digest of the means. */
static void reply_stats(al_reply_builder *rb, const double *mean, const double *ci, int NL, int H) {
    cJSON *so = al_rb_add(rb, rb->root, "stats", cJSON_CreateObject());
    cJSON *co = al_rb_add(rb, rb->root, "ci95", cJSON_CreateObject());
    al_sha256 d;
    char dig[72];
    al_digest_begin(&d);
    for (int k = 0; k < AL_HS_N; k++) {
        cJSON *ms = al_rb_add(rb, so, al_head_stat_names[k], cJSON_CreateArray());
        cJSON *cs = al_rb_add(rb, co, al_head_stat_names[k], cJSON_CreateArray());
        for (int l = 0; l < NL; l++) {
            cJSON *mr = al_rb_add(rb, ms, NULL, cJSON_CreateArray()), *cr = al_rb_add(rb, cs, NULL, cJSON_CreateArray());
            for (int h = 0; h < H; h++) {
                const size_t at = ((size_t)l * H + h) * AL_HS_N + k;
                al_rb_add(rb, mr, NULL, isnan(mean[at]) ? cJSON_CreateNull() : cJSON_CreateNumber(mean[at]));
                al_rb_add(rb, cr, NULL, isnan(ci[at]) ? cJSON_CreateNull() : cJSON_CreateNumber(ci[at]));
                al_digest_line(&d, "stat %.0f %.17g\n", (double)at, mean[at]);
            }
        }
    }
    al_digest_end(&d, dig);
    al_rb_str(rb, rb->root, "digest", dig);
}

/* head_stats on a causal model's corpus (lm_heads.h): the statistics over every window of "corpus", the constants
 * averaged over "constants_corpus" as the papa op's corpus sweep averages them (docs/measures.md, "Causal
 * decoders"). */
static al_status head_stats_lm(al_op_ctx *ctx, al_error *err) {
    al_lm_heads x;
    al_status st = al_lm_heads_open(ctx, "head_stats", &x, err);
    if (st) return st;
    al_confidence_kind confidence = AL_CONFIDENCE_MAX;
    st = al_heads_read_confidence(ctx, &confidence, err);
    const al_config *cfg = al_model_config(x.m->model);
    const int NL = cfg->n_layers, H = cfg->n_heads, per = NL * H * AL_HS_N;
    if (!st) {
        al_op_warn_unknown(ctx);
        al_lm_warn_task_fields(ctx, "corpus");
    }
    const float *C = NULL;
    float *owned = NULL;
    int reused = 0;
    if (!st) st = al_lm_heads_constants(ctx, &x, &C, &owned, &reused, err);
    double *mean = malloc(sizeof(double) * (size_t)per), *ci = malloc(sizeof(double) * (size_t)per);
    if (!st && (!mean || !ci)) st = al_err(err, AL_ERR_OOM, "head_stats: out of memory");
    if (!st) st = al_heads_stats(ctx, x.m->model, &x.val, C, x.q.batch_size, confidence, "head_stats", mean, ci, NULL, err);
    if (!st) {
        al_reply_builder *rb = ctx->rb;
        al_lm_heads_reply_identity(rb, &x);
        cJSON *c = al_rb_add(rb, rb->root, "config", cJSON_CreateObject());
        al_lm_heads_reply_texts(rb, c, &x);
        al_rb_str(rb, c, "confidence", al_confidence_names[confidence]);
        al_rb_str(rb, rb->root, "row_rule", AL_CAUSAL_ROW_RULE);
        al_rb_num(rb, rb->root, "n_examples", x.val.n);
        al_rb_num(rb, rb->root, "n_documents", x.scored.n_docs);
        cJSON *reused_o = al_rb_add(rb, rb->root, "reused", cJSON_CreateObject());
        al_rb_bool(rb, reused_o, "constants", reused);
        reply_stats(rb, mean, ci, NL, H);
    }
    free(mean), free(ci), free(owned);
    al_lm_heads_free(&x);
    return st;
}

al_status al_op_head_stats(al_op_ctx *ctx, al_error *err) {
    if (al_papa_is_lm_request(ctx->req)) return head_stats_lm(ctx, err);
    al_experiment x;
    al_status st = al_experiment_open(ctx, "head_stats", &x, err);
    if (st) return st;
    const al_papa_sweep_request *q = &x.q;
    const al_config *cfg = al_model_config(x.m->model);
    const int NL = cfg->n_layers, H = cfg->n_heads, L = q->L;
    if (NL > 512) st = al_err(err, AL_ERR_INVALID, "head_stats: %d layers (at most 512)", NL);
    al_confidence_kind confidence = AL_CONFIDENCE_MAX;
    if (!st) st = al_heads_read_confidence(ctx, &confidence, err);
    if (!st) st = al_experiment_check_length(&x, err);
    if (st) {
        al_experiment_free(&x);
        return st;
    }
    al_op_warn_unknown(ctx);
    st = al_experiment_inputs(&x, 1, "head_stats", err);
    /* PAPA's constants: the session's (a papa request with these fields left them) or averaged here */
    al_experiment_cache_names(&x);
    const float *C = NULL;
    float *owned = NULL;
    int reused = 0;
    if (!st) st = al_heads_constants(ctx, x.m->model, q, &x.train, x.c_name, &C, &owned, &reused, err);
    const int per = NL * H * AL_HS_N;
    double *mean = malloc(sizeof(double) * (size_t)per), *ci = malloc(sizeof(double) * (size_t)per);
    if (!st && (!mean || !ci)) st = al_err(err, AL_ERR_OOM, "head_stats: out of memory");
    if (!st) st = al_heads_stats(ctx, x.m->model, &x.val, C, q->batch_size, confidence, "head_stats", mean, ci, NULL, err);
    if (!st) {
        al_reply_builder *rb = ctx->rb;
        if (!st) {
            al_heads_reply_identity(rb, x.m->id, NL, H, x.model_hash, x.task->hash);
            cJSON *c = al_rb_add(rb, rb->root, "config", cJSON_CreateObject());
            al_rb_str(rb, c, "preset", x.preset);
            al_rb_str(rb, c, "task", x.task->id);
            al_rb_num(rb, c, "L", L);
            al_rb_str(rb, c, "layout", al_papa_layout_name(q->layout));
            al_rb_num(rb, c, "max_train", q->max_train);
            al_rb_num(rb, c, "max_validation", q->max_validation);
            al_rb_num(rb, c, "constants_examples", q->constants_examples);
            al_rb_str(rb, c, "confidence", al_confidence_names[confidence]);
            if (al_model_is_causal(x.m->model))
                al_rb_str(rb, rb->root, "row_rule", AL_CAUSAL_ROW_RULE);
            al_rb_num(rb, rb->root, "n_examples", x.val.n);
            al_rb_num(rb, rb->root, "n_train", x.train.n);
            cJSON *reused_o = al_rb_add(rb, rb->root, "reused", cJSON_CreateObject());
            al_rb_bool(rb, reused_o, "constants", reused);
            reply_stats(rb, mean, ci, NL, H);
        }
    }
    free(mean), free(ci), free(owned);
    al_experiment_free(&x);
    return st;
}
