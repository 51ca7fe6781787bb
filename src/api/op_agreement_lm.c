/* op_agreement_lm.c: the "head_agreement" op on a causal language model's corpus (docs/agreement.md, "Causal language
 * models"):
 *
 *   {"op": "head_agreement", "model", "corpus", "corpus_name"?, "constants_corpus", "constants_corpus_name"?,
 *    "min_windows"?, the papa op's settings ("L", "batch_size", "ranking", "memory_mb"), "max_examples"? (the
 *    gradient's windows, default ranking.max_examples), "least_k"?, "confidence"?}
 *   -> the encoder reply's measures (and the head roles' three), grids, spearman, least, spearman_importance, finding, findings and digest
 *      (op_agreement.h), with "hashes" {model, corpus, constants_corpus}, "config", "n_examples" (windows the
 *      gradient averaged over), "n_validation" (scored windows of the statistics), "n_train" (windows of the
 *      constants' text), "reused", "seconds".
 * Every grid is the number the single op gives for the same request: lambda the papa op's corpus sweep's (its lambda
 * order), gradient the same sweep's "importance" (its gradient order; max_examples = ranking.max_examples), the
 * statistics and norm_mass head_stats' on the same corpus (its "first" as the sink mass), norm_mass norm_attention's
 * over the scored windows, and the head roles' previous_token, induction and duplicate_token head_roles' repeat scores
 * at its defaults (16 repeated random sequences, seed 0). The constants and lambdas go through the session cache the
 * papa op fills (lm_heads.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../methods/measures/head_importance.h"
#include "../methods/papa/papa_lm.h"
#include "../methods/roles/head_roles.h"
#include "../train/train.h"
#include "lm_heads.h"
#include "op_agreement.h"
#include "op_heads.h"
#include "reply_digest.h"

static void reply_config(al_reply_builder *rb, const al_lm_heads *x, int max_examples, int k,
                         al_confidence_kind confidence) {
    cJSON *c = al_rb_add(rb, rb->root, "config", cJSON_CreateObject());
    al_lm_heads_reply_texts(rb, c, x);
    al_rb_num(rb, c, "max_examples", max_examples);
    al_rb_num(rb, c, "least_k", k);
    al_rb_str(rb, c, "confidence", al_confidence_names[confidence]);
    al_rb_str(rb, c, "sink_mass", "first"); /* head_stats' mass on the first token */
    al_rb_str(rb, c, "roles", "head_roles at its defaults: 16 repeated random sequences, seed 0");
    al_heads_reply_ranking(rb, c, &x->q.rank);
}

al_status al_op_head_agreement_lm(al_op_ctx *ctx, al_error *err) {
    al_lm_heads x;
    al_status st = al_lm_heads_open(ctx, "head_agreement", &x, err);
    if (st) return st;
    al_model *model = x.m->model;
    const al_config *cfg = al_model_config(model);
    const int NL = cfg->n_layers, H = cfg->n_heads, NH = NL * H;
    int max_examples = x.q.importance_examples, k = NH / 4 > 1 ? NH / 4 : 1;
    st = al_req_int(ctx->req, "max_examples", "max_examples", 0, max_examples, 0, 1 << 30, &max_examples, err);
    if (!st) st = al_req_int(ctx->req, "least_k", "least_k", 0, k, 1, NH, &k, err);
    al_confidence_kind confidence = AL_CONFIDENCE_MAX;
    if (!st) st = al_heads_read_confidence(ctx, &confidence, err);
    if (!st) /* lambda and the gradient run back through the decoder: the training path's families */
        st = al_train_check_family(model, "head_agreement: field 'model': lambda and the gradient (the language-model "
                                   "loss)", "", err);
    if (st) {
        al_lm_heads_free(&x);
        return st;
    }
    al_op_warn_unknown(ctx);
    al_lm_warn_task_fields(ctx, "corpus");
    const double t0 = al_now_seconds();
    al_agreement *a = al_agreement_new(NL, H, k, 1);
    const int per = NH * AL_HS_N;
    double *mean = malloc(sizeof(double) * (size_t)per), *ci = malloc(sizeof(double) * (size_t)per);
    double *norm_mass = malloc(sizeof(double) * (size_t)NH);
    float *theta = malloc(sizeof(float) * (size_t)NH);
    double *roles = malloc(sizeof(double) * AL_ROLE_N * (size_t)NH);
    if (!a || !mean || !ci || !norm_mass || !theta || !roles) st = al_err(err, AL_ERR_OOM, "head_agreement: out of memory");
    /* 1. the causal constants and lambda against the next-token loss, shared with papa and head_stats */
    const float *C = NULL;
    float *owned = NULL;
    int reused_c = 0, reused_t = 0;
    if (!st) st = al_lm_heads_constants(ctx, &x, &C, &owned, &reused_c, err);
    if (!st) st = al_lm_heads_theta(ctx, &x, C, theta, &reused_t, err);
    /* 2. gradient importance with the language-model loss, as the papa op's gradient order measures it */
    al_head_importance imp;
    memset(&imp, 0, sizeof imp);
    if (!st) st = al_lm_heads_importance(ctx, &x, max_examples, &imp, err);
    /* 3. head statistics and norm mass over the scored windows, as head_stats reads them */
    if (!st) st = al_heads_stats(ctx, model, &x.val, C, x.q.batch_size, confidence, "stats", mean, ci, norm_mass, err);
    /* 4. the head roles' scores on repeated random sequences, as head_roles gives them at its defaults */
    if (!st) st = al_head_roles_default_scores(ctx, model, roles, err);
    if (!st) {
        al_agreement_fill_shared(a, NH, theta, imp.normalized, mean, AL_HS_FIRST, norm_mass);
        for (int i = 0; i < NH; i++) {
            al_agreement_grid(a, AL_AG_PREVIOUS)[i] = roles[(size_t)AL_ROLE_PREVIOUS * NH + i];
            al_agreement_grid(a, AL_AG_INDUCTION)[i] = roles[(size_t)AL_ROLE_INDUCTION * NH + i];
            al_agreement_grid(a, AL_AG_DUPLICATE)[i] = roles[(size_t)AL_ROLE_DUPLICATE * NH + i];
        }
        if (al_agreement_compare(a, &x.q.rank)) st = al_err(err, AL_ERR_OOM, "head_agreement: out of memory");
    }
    if (!st) {
        al_reply_builder *rb = ctx->rb;
        al_lm_heads_reply_identity(rb, &x);
        reply_config(rb, &x, max_examples, k, confidence);
        al_rb_str(rb, rb->root, "row_rule", AL_CAUSAL_ROW_RULE);
        al_agreement_reply(rb, a);
        al_agreement_reply_counts(rb, imp.n_examples, x.val.n, x.averaged.n_windows, reused_c, reused_t, t0);
    }
    al_head_importance_free(&imp);
    al_agreement_free(a);
    free(mean), free(ci), free(norm_mass), free(theta), free(roles), free(owned);
    al_lm_heads_free(&x);
    return st;
}
