/* op_papa_lm.c: the "papa" op on a causal language model's corpus (docs/papa-op.md, "A causal language model"):
 * the request gives "corpus" (the held-out text scored) instead of a task, and "constants_corpus" (the text the
 * constants and the gradient order are averaged over); the sweep is src/methods/papa/papa_lm.c, the score the
 * model's own next-token loss in bits per token (lower is better), the findings papa_findings.c's rule with the
 * direction turned. The reply keeps the encoder reply's shape where it can (configs, runs, summary, findings,
 * orders, digest) and adds the perplexity, the loss by position and the corpora's sizes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../methods/lm/lm_corpus.h"
#include "../methods/measures/agreement_finding.h"
#include "../methods/papa/papa_lm.h"
#include "experiment_setup.h"
#include "op_heads.h"
#include "lm_heads.h"
#include "papa_cache.h"
#include "papa_lm_reply.h"
#include "papa_reply.h"
#include "reply_digest.h"

int al_papa_is_lm_request(const cJSON *req) {
    return cJSON_GetObjectItemCaseSensitive(req, "corpus") != NULL;
}

static void text_hash(const char *text, char out[72]) {
    char hex[65];
    al_sha256_hex_of(text, strlen(text), hex);
    snprintf(out, 72, "sha256:%s", hex);
}

static void put_config(al_reply_builder *rb, const al_papa_sweep_request *q, int min_windows, const char *corpus_name,
                       const char *constants_name) {
    cJSON *c = al_rb_add(rb, rb->root, "config", cJSON_CreateObject());
    if (!c) return;
    al_rb_str(rb, c, "corpus_name", corpus_name);
    if (constants_name) al_rb_str(rb, c, "constants_corpus_name", constants_name);
    al_rb_num(rb, c, "L", q->L);
    al_rb_num(rb, c, "min_windows", min_windows);
    al_papa_reply_plan_lists(rb, c, q);
    cJSON *a = al_rb_add(rb, c, "k", cJSON_CreateArray());
    for (int i = 0; a && i < q->plan.n_k; i++) al_rb_add(rb, a, NULL, cJSON_CreateNumber(q->plan.k[i]));
    al_rb_bool(rb, c, "baselines", q->plan.baselines);
    al_rb_num(rb, c, "random_seed", (double)q->rank.seed);
    al_rb_num(rb, c, "importance_examples", q->importance_examples); /* ranking.max_examples */
    if (q->n_shards > 1) {
        char shard[32];
        snprintf(shard, sizeof shard, "%d/%d", q->shard_index, q->n_shards);
        al_rb_str(rb, c, "shard", shard);
    }
}

/* The averaged constants and the learned lambdas left in the session cache, under the names head_stats and
 * head_agreement on a corpus look them up by (papa_cache.h), so those ops reuse what a sweep learned. */
static void put_cache(const al_op_ctx *ctx, const al_papa_sweep_request *q, const al_papa_lm_result *r,
                      const char *model_hash, const char *averaged_hash, int min_windows, int NL, int H) {
    char c_name[64], t_name[64];
    al_papa_lm_cache_keys(model_hash, averaged_hash, q, min_windows, c_name, t_name);
    const int64_t c_shape[4] = {NL, H, q->L, q->L}, t_shape[1] = {NL * H + 1};
    if (r->averaged && !q->constants) al_papa_cache_put(ctx->session, c_name, 4, c_shape, r->constants);
    float *tl = r->theta ? malloc(sizeof(float) * ((size_t)NL * H + 1)) : NULL;
    if (tl) { /* the logits, then the ranking loss, as the encoder's papa op keeps them */
        memcpy(tl, r->theta, sizeof(float) * (size_t)NL * H);
        tl[NL * H] = (float)r->rank_loss;
        al_papa_cache_put(ctx->session, t_name, 1, t_shape, tl);
        free(tl);
    }
}

al_status al_op_papa_lm(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    const char *corpus = NULL, *corpus_name = NULL, *averaged_text = NULL, *averaged_name = NULL, *task = NULL;
    int min_windows;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (!st) st = al_req_string(ctx->req, "corpus", "corpus", 1, &corpus, err);
    if (!st) st = al_req_string(ctx->req, "corpus_name", "corpus_name", 0, &corpus_name, err);
    if (!st) st = al_req_string(ctx->req, "constants_corpus", "constants_corpus", 0, &averaged_text, err);
    if (!st) st = al_req_string(ctx->req, "constants_corpus_name", "constants_corpus_name", 0, &averaged_name, err);
    if (!st) st = al_req_int(ctx->req, "min_windows", "min_windows", 0, AL_PAPA_LM_MIN_WINDOWS, 1, 1 << 20,
                             &min_windows, err);
    if (!st) st = al_req_string(ctx->req, "task", "task", 0, &task, err);
    if (st) return st;
    if (task || cJSON_GetObjectItemCaseSensitive(ctx->req, "task_jsonl") || cJSON_GetObjectItemCaseSensitive(ctx->req, "import"))
        return al_err(err, AL_ERR_INVALID, "request: field 'corpus': give a task (probes on the hidden states) or a "
                      "corpus (the language-model score), not both");
    if (!al_model_is_causal(m->model))
        return al_err(err, AL_ERR_INVALID, "request: field 'corpus': model '%s' is %s, not a causal language model "
                      "(the papa op scores an encoder with probes on a task)", m->id,
                      al_arch_name(al_model_config(m->model)->arch));
    if (!al_model_tokenizer(m->model))
        return al_err(err, AL_ERR_INVALID, "request: field 'corpus': model '%s' has no tokenizer files", m->id);
    al_papa_sweep_request q;
    if ((st = al_experiment_read_fields(ctx->req, &q, err))) return st;
    if (!cJSON_GetObjectItemCaseSensitive(ctx->req, "orders")) { /* the encoder's default lambda trains: asked by name */
        static const al_papa_order lm_orders[] = {AL_ORDER_FIRST_TO_LAST, AL_ORDER_LAST_TO_FIRST, AL_ORDER_RANDOM};
        q.plan.n_orders = 3;
        memcpy(q.plan.orders, lm_orders, sizeof lm_orders);
    }
    q.importance_examples = q.rank.max_examples; /* the gradient order's windows: the ranking's examples */
    const al_config *cfg = al_model_config(m->model);
    const int L_max = cfg->max_position_embeddings - cfg->position_offset;
    if (q.L < 4 || q.L > L_max)
        return al_err(err, AL_ERR_INVALID, "request: field 'L' = %d must be in [4, %d] for this model", q.L, L_max);
    al_op_warn_unknown(ctx);
    al_lm_warn_task_fields(ctx, "sweep");
    const char *label = corpus_name ? corpus_name : "corpus";
    const char *alabel = averaged_name ? averaged_name : "constants_corpus";
    al_lm_corpus scored = {0}, averaged = {0};
    if ((st = al_lm_corpus_build(m->model, corpus, label, q.L, &scored, err))) return st;
    if (averaged_text) st = al_lm_corpus_build(m->model, averaged_text, alabel, q.L, &averaged, err);
    al_reply_builder *rb = ctx->rb;
    if (!st && averaged_text) st = al_lm_warn_shared_documents(rb, corpus, averaged_text, scored.n_docs, label, alabel, err);
    q.progress = ctx->params->progress;
    q.plan_progress = ctx->params->plan_progress;
    q.progress_user = ctx->params->progress_user;
    q.cancel = ctx->params->cancel;
    q.pool = ctx->session->pool;
    al_papa_lm_result r;
    memset(&r, 0, sizeof r);
    if (!st) st = al_papa_lm_run(m->model, &scored, averaged_text ? &averaged : NULL, &q, min_windows, &r, err);
    if (!st) {
        const int NL = cfg->n_layers, H = cfg->n_heads;
        char model_hash[65], ch[72];
        snprintf(model_hash, sizeof model_hash, "%s", al_api_model_hash(m));
        text_hash(corpus, ch);
        al_heads_reply_identity(rb, m->id, NL, H, model_hash, ch + 7);
        cJSON *hashes = cJSON_GetObjectItemCaseSensitive(rb->root, "hashes");
        cJSON_DeleteItemFromObjectCaseSensitive(hashes, "task");
        al_rb_str(rb, hashes, "corpus", ch);
        if (averaged_text) {
            text_hash(averaged_text, ch);
            al_rb_str(rb, hashes, "constants_corpus", ch);
            put_cache(ctx, &q, &r, model_hash, ch, min_windows, NL, H);
        }
        al_papa_lm_reply_score(rb);
        put_config(rb, &q, min_windows, label, averaged_text ? alabel : NULL);
        st = al_papa_lm_reply_results(rb, &r, NL, H, err);
        if (!st && q.n_shards > 1) st = al_papa_lm_reply_shard(rb, &r, err); /* what papa_merge rebuilds from */
        const double range = al_papa_lm_lambda_range(&r, NL * H);
        if (r.theta && range < AL_FINDING_LAMBDA_FLOOR) /* docs/findings.md, "lambda did not learn a ranking" */
            al_rb_warn(rb, "ranking: PAPA's lambda did not learn a ranking (its span over the heads is %.2g, below %g); "
                       "raise ranking.lr (now %g) or ranking.epochs (now %d)", range, AL_FINDING_LAMBDA_FLOOR,
                       (double)q.rank.lr, q.rank.epochs);
        if (r.theta && r.rank_batch < q.rank.batch_size && r.rank_batch < r.rank_windows)
            al_rb_warn(rb, "ranking: batch %d instead of ranking.batch_size %d, the largest whose training contexts fit "
                       "memory_mb (%g MB); raise memory_mb for the batch asked for", r.rank_batch, q.rank.batch_size,
                       (double)q.rank.mem_limit / (1024.0 * 1024.0));
        if (r.averaged && r.rows_filled)
            al_rb_warn(rb, "constants: %d of the %d rows were reached by fewer than %d windows of '%s' and are "
                       "the uniform prefix (docs/papa.md, \"Causal language models\")", r.rows_filled, q.L,
                       min_windows, alabel);
        cJSON *tm = al_rb_add(rb, rb->root, "seconds", cJSON_CreateObject());
        al_rb_num(rb, tm, "constants", r.seconds_constants);
        al_rb_num(rb, tm, "importance", r.seconds_importance);
        al_rb_num(rb, tm, "lm", r.seconds_score);
        if (r.theta) al_rb_num(rb, tm, "ranking", r.seconds_rank);
    }
    const cJSON *outputs = cJSON_GetObjectItemCaseSensitive(ctx->req, "outputs");
    for (const cJSON *it = outputs ? outputs->child : NULL; !st && it; it = it->next) {
        if (!cJSON_IsString(it) || strcmp(it->valuestring, "constants")) {
            st = al_err(err, AL_ERR_INVALID, "request: field 'outputs': a language model's sweep returns 'constants' "
                        "only (learned lambdas are in the reply's 'lambdas' and 'theta')");
        } else if (r.constants) {
            const int64_t shape[4] = {cfg->n_layers, cfg->n_heads, q.L, q.L};
            void *data;
            st = al_rb_tensor(rb, "constants", "F32", 4, shape, &data, err);
            if (!st) memcpy(data, r.constants, sizeof(float) * (size_t)cfg->n_layers * cfg->n_heads * q.L * q.L);
        }
    }
    al_papa_lm_result_free(&r);
    al_lm_corpus_free(&scored);
    al_lm_corpus_free(&averaged);
    return st;
}
