/* op_papa_lm.c: the "papa" op on a causal language model's corpus (docs/papa-op.md, "A causal language model"):
 * the request gives "corpus" (the held-out text scored) instead of a task, and "constants_corpus" (the text the
 * constants and the gradient order are averaged over); the sweep is src/methods/papa/papa_lm.c, the score the
 * model's own next-token loss in bits per token (lower is better), the findings papa_findings.c's rule with the
 * direction turned. The reply keeps the encoder reply's shape where it can (configs, runs, summary, findings,
 * orders, digest) and adds the perplexity, the loss by position and the corpora's sizes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/det_math.h"
#include "../core/error.h"
#include "../methods/lm/lm_corpus.h"
#include "../methods/measures/agreement_finding.h"
#include "../methods/papa/papa_findings.h"
#include "../methods/papa/papa_lm.h"
#include "experiment_setup.h"
#include "op_heads.h"
#include "papa_reply.h"
#include "reply_digest.h"

#define LN2 0.69314718055994530942
#define SCORE_NAME "bits per token"

int al_papa_is_lm_request(const cJSON *req) {
    return cJSON_GetObjectItemCaseSensitive(req, "corpus") != NULL;
}

static void text_hash(const char *text, char out[72]) {
    char hex[65];
    al_sha256_hex_of(text, strlen(text), hex);
    snprintf(out, 72, "sha256:%s", hex);
}

/* How many documents of the scored text occur, verbatim, among the averaged text's: the two must not overlap
 * silently (docs/papa.md, "Causal language models"). */
static al_status count_shared_documents(const char *scored, const char *averaged, int *shared, al_error *err) {
    char **a = NULL, **b = NULL;
    int na = 0, nb = 0;
    *shared = 0;
    al_status st = al_lm_split_documents(scored, "corpus", &a, &na, err);
    if (!st) st = al_lm_split_documents(averaged, "constants_corpus", &b, &nb, err);
    for (int i = 0; !st && i < na; i++)
        for (int j = 0; j < nb; j++)
            if (!strcmp(a[i], b[j])) {
                ++*shared;
                break;
            }
    al_lm_documents_free(a, na);
    al_lm_documents_free(b, nb);
    return st;
}

static cJSON *bits_or_null(double nats) { return isfinite(nats) ? cJSON_CreateNumber(al_json_canonical(nats / LN2)) : cJSON_CreateNull(); }

/* Order lambda's learned weights, as the encoder's reply gives them ("lambdas" [NL][H], "ranking_loss", "theta"), and
 * "ranking": the windows trained on, the mixed model's loss there before and after (bits per token), and whether
 * lambda moved (docs/findings.md: its span over the heads against AL_FINDING_LAMBDA_FLOOR). */
static void put_lambdas(al_reply_builder *rb, const al_papa_lm_result *r, int NL, int H) {
    double lo = INFINITY, hi = -INFINITY;
    cJSON *lam = al_rb_add(rb, rb->root, "lambdas", cJSON_CreateArray());
    for (int l = 0; l < NL; l++) {
        cJSON *row = lam ? al_rb_add(rb, lam, NULL, cJSON_CreateArray()) : NULL;
        for (int h = 0; h < H; h++) {
            const double v = al_heads_lambda(r->theta[l * H + h]);
            lo = v < lo ? v : lo, hi = v > hi ? v : hi;
            if (row) al_rb_add(rb, row, NULL, cJSON_CreateNumber(v));
        }
    }
    al_rb_num(rb, rb->root, "ranking_loss", r->rank_loss);
    cJSON *th = al_rb_add(rb, rb->root, "theta", cJSON_CreateArray());
    for (int i = 0; th && i < NL * H; i++) al_rb_add(rb, th, NULL, cJSON_CreateNumber(r->theta[i]));
    cJSON *rk = al_rb_add(rb, rb->root, "ranking", cJSON_CreateObject());
    al_rb_str(rb, rk, "loss", "next-token cross-entropy on the constants corpus's windows, the model frozen");
    al_rb_num(rb, rk, "windows", r->rank_windows);
    al_rb_num(rb, rk, "bits_before", al_json_canonical(r->rank_before / LN2));
    al_rb_num(rb, rk, "bits_after", al_json_canonical(r->rank_after / LN2));
    cJSON *mv = al_rb_add(rb, rk, "lambda", cJSON_CreateObject());
    al_rb_num(rb, mv, "range", al_json_canonical(hi - lo));
    al_rb_num(rb, mv, "floor", AL_FINDING_LAMBDA_FLOOR);
    al_rb_bool(rb, mv, "learned", hi - lo >= AL_FINDING_LAMBDA_FLOOR);
}

/* Every number of the reply that a reader compares, canonical, then the digest and the findings. */
static al_status put_results(al_reply_builder *rb, const al_papa_lm_result *r, int NL, int H, al_error *err) {
    const int nc = r->plan.n_configs, D = r->n_docs, W = r->window, n_total = NL * H;
    al_papa_config_summary *cs = calloc((size_t)nc, sizeof *cs);
    double *scores = malloc(sizeof(double) * (size_t)nc * (D ? D : 1));
    if (!cs || !scores) {
        free(cs), free(scores);
        return al_err(err, AL_ERR_OOM, "papa: out of memory for the summary");
    }
    int full = -1, docs_with_tokens = 0;
    for (int d = 0; d < D; d++) docs_with_tokens += r->doc_tokens[d] > 0;
    for (int c = 0; c < nc; c++) {
        const al_lm_summary *s = &r->summary[c];
        cs[c].has = r->ran[c];
        cs[c].mean = al_json_canonical(s->nats / LN2);
        cs[c].ci95 = s->documents >= 2 && isfinite(s->lo) ? al_json_canonical((s->hi - s->lo) / 2.0 / LN2) : NAN;
        for (int d = 0; d < D; d++) scores[(size_t)c * D + d] = al_json_canonical(r->doc_bits[(size_t)c * D + d]);
        if (r->ran[c] && r->plan.configs[c].k == 0 && full < 0) full = c;
    }
    cJSON *cfgs = al_rb_add(rb, rb->root, "configs", cJSON_CreateArray());
    for (int c = 0; cfgs && c < nc; c++) {
        cJSON *o = al_papa_reply_config_entry(rb, cfgs, &r->plan.configs[c], n_total);
        if (!o || !r->ran[c]) continue;
        const al_lm_summary *s = &r->summary[c];
        al_rb_num(rb, o, "perplexity", al_json_canonical(al_det_exp(s->nats)));
        if (s->documents >= 2 && isfinite(s->lo)) {
            cJSON *pi = al_rb_add(rb, o, "perplexity_ci95", cJSON_CreateArray());
            al_rb_add(rb, pi, NULL, cJSON_CreateNumber(al_json_canonical(al_det_exp(s->lo))));
            al_rb_add(rb, pi, NULL, cJSON_CreateNumber(al_json_canonical(al_det_exp(s->hi))));
        }
        cJSON *pos = al_rb_add(rb, o, "bits_by_position", cJSON_CreateArray());
        for (int i = 0; pos && i < W; i++) al_rb_add(rb, pos, NULL, bits_or_null(r->pos_bits[(size_t)c * W + i] * LN2));
    }
    /* one run per configuration (the encoder's runs are one per probe seed): its score in bits per token */
    cJSON *runs = al_rb_add(rb, rb->root, "runs", cJSON_CreateArray());
    for (int c = 0; runs && c < nc; c++) {
        if (!r->ran[c]) continue;
        cJSON *o = al_rb_add(rb, runs, NULL, cJSON_CreateObject());
        al_rb_num(rb, o, "config", c);
        al_rb_num(rb, o, "seed_index", 0);
        al_rb_num(rb, o, "score", cs[c].mean);
    }
    cJSON *sum = al_rb_add(rb, rb->root, "summary", cJSON_CreateArray());
    for (int c = 0; sum && c < nc; c++) {
        if (!r->ran[c]) continue;
        cJSON *o = al_rb_add(rb, sum, NULL, cJSON_CreateObject());
        al_rb_num(rb, o, "config", c);
        al_rb_num(rb, o, "n", r->summary[c].documents);
        al_rb_num(rb, o, "tokens", (double)r->summary[c].tokens);
        al_rb_num(rb, o, "mean", cs[c].mean);
        cJSON_AddItemToObject(o, "ci95", isfinite(cs[c].ci95) ? cJSON_CreateNumber(cs[c].ci95) : cJSON_CreateNull());
        /* the rise of the loss relative to the full model's (positive: the configuration costs) */
        const double rise = full >= 0 ? (cs[c].mean - cs[full].mean) / fabs(cs[full].mean) : NAN;
        cJSON_AddItemToObject(o, "drop", isfinite(rise) ? cJSON_CreateNumber(rise) : cJSON_CreateNull());
        al_papa_paired p = {0, NAN, NAN};
        if (c != full) p = al_papa_paired_of(scores, D, full, c);
        al_papa_reply_paired(rb, o, "paired", &p);
    }
    al_papa_findings_input in = {&r->plan, cs, scores, D, docs_with_tokens, n_total, SCORE_NAME, 1};
    al_papa_findings fd;
    al_papa_findings_of(&in, &fd);
    al_papa_reply_findings(rb, &fd, 0);
    if (r->theta) put_lambdas(rb, r, NL, H);
    al_papa_reply_orders(rb, r->orders, NL, H);
    if (r->importance) {
        cJSON *imp = al_rb_add(rb, rb->root, "importance", cJSON_CreateArray());
        for (int i = 0; imp && i < n_total; i++) al_rb_add(rb, imp, NULL, cJSON_CreateNumber(r->importance[i]));
    }
    /* the digest: every configuration's bits per token, each document's and each position's */
    al_sha256 s;
    char dig[72];
    al_digest_begin(&s);
    for (int c = 0; c < nc; c++) {
        if (!r->ran[c]) continue;
        al_digest_line(&s, "lm %.0f %.17g\n", c, cs[c].mean);
        for (int d = 0; d < D; d++)
            if (isfinite(scores[(size_t)c * D + d])) al_digest_line(&s, "doc %.0f %.17g\n", c * 100000.0 + d, scores[(size_t)c * D + d]);
        for (int i = 0; i < W; i++)
            if (isfinite(r->pos_bits[(size_t)c * W + i]))
                al_digest_line(&s, "pos %.0f %.17g\n", c * 100000.0 + i, al_json_canonical(r->pos_bits[(size_t)c * W + i]));
    }
    for (int i = 0; r->theta && i < n_total; i++) al_digest_line(&s, "theta %.0f %.9g\n", i, r->theta[i]);
    al_digest_end(&s, dig);
    al_rb_str(rb, rb->root, "digest", dig);
    free(cs), free(scores);
    return AL_OK;
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
    static const char *const probe_fields[] = {"seeds", "probe", "mlm", "layout", "max_train", "max_validation",
                                               "constants_examples", "preset", NULL};
    for (int i = 0; probe_fields[i]; i++) /* a task's fields, read by the table, mean nothing here: say so */
        if (cJSON_GetObjectItemCaseSensitive(ctx->req, probe_fields[i]))
            al_rb_warn(ctx->rb, "field '%s' applies to a task's probes, not to a language model's sweep: ignored",
                       probe_fields[i]);
    const char *label = corpus_name ? corpus_name : "corpus";
    const char *alabel = averaged_name ? averaged_name : "constants_corpus";
    al_lm_corpus scored = {0}, averaged = {0};
    if ((st = al_lm_corpus_build(m->model, corpus, label, q.L, &scored, err))) return st;
    if (averaged_text) st = al_lm_corpus_build(m->model, averaged_text, alabel, q.L, &averaged, err);
    int shared = 0;
    if (!st && averaged_text) st = count_shared_documents(corpus, averaged_text, &shared, err);
    al_reply_builder *rb = ctx->rb;
    if (!st && shared)
        al_rb_warn(rb, "constants_corpus: %d of the %d documents of '%s' are also in '%s': the constants were averaged "
                   "over text the sweep scores", shared, scored.n_docs, label, alabel);
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
        al_model_content_hash(m->model, model_hash);
        text_hash(corpus, ch);
        al_heads_reply_identity(rb, m->id, NL, H, model_hash, ch + 7);
        cJSON *hashes = cJSON_GetObjectItemCaseSensitive(rb->root, "hashes");
        cJSON_DeleteItemFromObjectCaseSensitive(hashes, "task");
        al_rb_str(rb, hashes, "corpus", ch);
        if (averaged_text) {
            text_hash(averaged_text, ch);
            al_rb_str(rb, hashes, "constants_corpus", ch);
        }
        cJSON *score = al_rb_add(rb, rb->root, "score", cJSON_CreateObject());
        al_rb_str(rb, score, "name", "bits_per_token");
        al_rb_str(rb, score, "direction", "lower is better");
        al_rb_str(rb, score, "interval", "95%, ratio estimator over documents, Student t");
        put_config(rb, &q, min_windows, label, averaged_text ? alabel : NULL);
        st = put_results(rb, &r, NL, H, err);
        cJSON *co = al_rb_add(rb, rb->root, "corpus", cJSON_CreateObject());
        al_rb_num(rb, co, "documents", scored.n_docs);
        al_rb_num(rb, co, "windows", scored.n_windows);
        cJSON *pt = al_rb_add(rb, co, "tokens_by_position", cJSON_CreateArray());
        for (int i = 0; pt && i < r.window; i++) al_rb_add(rb, pt, NULL, cJSON_CreateNumber((double)r.pos_tokens[i]));
        if (r.constants) {
            cJSON *cc = al_rb_add(rb, rb->root, "constants", cJSON_CreateObject());
            al_rb_num(rb, cc, "documents", r.constants_docs);
            al_rb_num(rb, cc, "windows", r.constants_windows);
            al_rb_num(rb, cc, "rows_uniform_prefix", r.rows_filled);
            if (r.rows_filled)
                al_rb_warn(rb, "constants: %d of the %d rows were reached by fewer than %d windows of '%s' and are "
                           "the uniform prefix (docs/papa.md, \"Causal language models\")", r.rows_filled, q.L,
                           min_windows, alabel);
        }
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
