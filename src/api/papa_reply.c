/* papa_reply.c: the papa reply from a sweep's result (papa_reply.h): summaries with 95% intervals, relative
 * drops and findings computed by src/methods/papa/papa_summary.c, and the digest. */
#include "papa_reply.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../methods/papa/papa_findings.h"
#include "../methods/papa/papa_summary.h"
#include "op_heads.h"
#include "reply_digest.h"

/* The digest covers every number a reader compares: scores, accuracies, lambda logits, MLM scores
 * (the replies' digest rule: reply_digest.h). */
void al_papa_reply_digest(const al_papa_sweep_result *r, int n_heads, char out[72]) {
    al_sha256 s;
    al_digest_begin(&s);
    for (int i = 0; i < r->n_runs; i++) {
        const al_papa_run_result *x = &r->runs[i];
        al_digest_line(&s, "run %.0f %.17g\n", x->config * 1000.0 + x->seed_index, x->score);
        al_digest_line(&s, "acc %.0f %.17g\n", x->config * 1000.0 + x->seed_index, x->accuracy);
    }
    for (int i = 0; r->theta && i < n_heads; i++) al_digest_line(&s, "theta %.0f %.9g\n", i, r->theta[i]);
    for (int c = 0; c < r->plan.n_configs; c++)
        if (!isnan(r->mlm_score[c])) al_digest_line(&s, "mlm %.0f %.17g\n", c, r->mlm_score[c]);
    al_digest_end(&s, out);
}

/* Summaries and the digest are computed from the values the reply prints (al_json_canonical). */
void al_papa_canonical_results(al_papa_sweep_result *r) {
    for (int i = 0; i < r->n_runs; i++) {
        r->runs[i].score = al_json_canonical(r->runs[i].score);
        r->runs[i].accuracy = al_json_canonical(r->runs[i].accuracy);
        for (int k = 0; k < AL_PAPA_MAX_GROUPS; k++) r->runs[i].group_accuracy[k] = al_json_canonical(r->runs[i].group_accuracy[k]);
    }
    for (int c = 0; c < r->plan.n_configs; c++) {
        r->mlm_score[c] = al_json_canonical(r->mlm_score[c]);
        r->mlm_accuracy[c] = al_json_canonical(r->mlm_accuracy[c]);
    }
}

static cJSON *number_or_null(double v) { return isnan(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v); }

void al_papa_reply_plan_lists(al_reply_builder *rb, cJSON *c, const al_papa_sweep_request *q) {
    cJSON *a = al_rb_add(rb, c, "constants", cJSON_CreateArray());
    for (int i = 0; a && i < q->plan.n_constants; i++)
        al_rb_add(rb, a, NULL, cJSON_CreateString(al_papa_constant_name(q->plan.constants[i])));
    a = al_rb_add(rb, c, "orders", cJSON_CreateArray());
    for (int i = 0; a && i < q->plan.n_orders; i++) al_rb_add(rb, a, NULL, cJSON_CreateString(al_papa_order_name(q->plan.orders[i])));
    a = al_rb_add(rb, c, "fractions", cJSON_CreateArray());
    for (int i = 0; a && q->plan.n_k == 0 && i < q->n_fractions; i++) al_rb_add(rb, a, NULL, cJSON_CreateNumber(q->fractions[i]));
}

void al_papa_reply_config(al_reply_builder *rb, const al_papa_sweep_request *q, const char *preset, const al_task *task) {
    cJSON *c = al_rb_add(rb, rb->root, "config", cJSON_CreateObject());
    if (!c) return;
    al_rb_str(rb, c, "preset", preset);
    al_rb_str(rb, c, "task", task->id);
    al_rb_num(rb, c, "L", q->L);
    al_rb_str(rb, c, "layout", al_papa_layout_name(q->layout));
    al_papa_reply_plan_lists(rb, c, q);
    cJSON *a = al_rb_add(rb, c, "seeds", cJSON_CreateArray());
    for (int i = 0; a && i < q->plan.n_seeds; i++) al_rb_add(rb, a, NULL, cJSON_CreateNumber((double)q->seeds[i]));
    al_rb_num(rb, c, "max_train", q->max_train);
    al_rb_num(rb, c, "max_validation", q->max_validation);
    al_rb_num(rb, c, "constants_examples", q->constants_examples);
    al_rb_num(rb, c, "batch_size", q->batch_size);
    al_rb_bool(rb, c, "baselines", q->plan.baselines);
    al_rb_bool(rb, c, "mlm", q->mlm);
    cJSON *p = al_rb_add(rb, c, "probe", cJSON_CreateObject());
    if (p) {
        al_rb_num(rb, p, "epochs", q->probe.epochs);
        al_rb_num(rb, p, "batch_size", q->probe.batch_size);
        al_rb_num(rb, p, "lr", q->probe.lr);
        al_rb_num(rb, p, "dropout", task->kind == AL_TASK_TOKEN ? 0.0 : q->probe.dropout);
        al_rb_str(rb, p, "schedule", "constant");
    }
    al_heads_reply_ranking(rb, c, &q->rank);
    if (q->n_shards > 1) {
        char shard[32];
        snprintf(shard, sizeof shard, "%d/%d", q->shard_index, q->n_shards);
        al_rb_str(rb, c, "shard", shard);
    }
}

void al_papa_reply_paired(al_reply_builder *rb, cJSON *parent, const char *key, const al_papa_paired *p) {
    if (!parent) return;
    if (p->n < 1) {
        cJSON_AddItemToObject(parent, key, cJSON_CreateNull());
        return;
    }
    cJSON *o = al_rb_add(rb, parent, key, cJSON_CreateObject());
    al_rb_num(rb, o, "n", p->n);
    al_rb_num(rb, o, "mean", p->mean);
    if (o) cJSON_AddItemToObject(o, "ci95", number_or_null(p->ci95));
}

al_status al_papa_reply_results(al_reply_builder *rb, const al_papa_sweep_result *r, int NL, int H, const char *metric,
                                int n_validation, al_error *err) {
    al_papa_summary *sm = malloc(sizeof *sm);
    if (!sm) return al_err(err, AL_ERR_OOM, "papa: out of memory for the summary");
    al_status st = al_papa_summarize(r, NL * H, metric, n_validation, sm, err);
    if (st) {
        free(sm);
        return st;
    }
    const int n_total = NL * H;
    cJSON *cfgs = al_rb_add(rb, rb->root, "configs", cJSON_CreateArray());
    for (int c = 0; cfgs && c < r->plan.n_configs; c++) {
        cJSON *o = al_papa_reply_config_entry(rb, cfgs, &r->plan.configs[c], n_total);
        if (o) cJSON_AddItemToObject(o, "mlm_score", number_or_null(r->mlm_score[c]));
        if (o) cJSON_AddItemToObject(o, "mlm_accuracy", number_or_null(r->mlm_accuracy[c]));
    }
    cJSON *runs = al_rb_add(rb, rb->root, "runs", cJSON_CreateArray());
    for (int i = 0; runs && i < r->n_runs; i++) {
        const al_papa_run_result *x = &r->runs[i];
        cJSON *o = al_rb_add(rb, runs, NULL, cJSON_CreateObject());
        al_rb_num(rb, o, "config", x->config);
        al_rb_num(rb, o, "seed_index", x->seed_index);
        al_rb_num(rb, o, "score", x->score);
        al_rb_num(rb, o, "accuracy", x->accuracy);
        if (x->group_count[0] + x->group_count[1] + x->group_count[2] + x->group_count[3] > 0) {
            cJSON *g = al_rb_add(rb, o, "group_accuracy", cJSON_CreateArray());
            for (int k = 0; g && k < AL_PAPA_MAX_GROUPS; k++) al_rb_add(rb, g, NULL, number_or_null(x->group_accuracy[k]));
        }
    }
    /* summaries: mean over seeds with a 95% interval; drop relative to the full model's mean; beside the
     * drop, the full model minus this configuration seed by seed (src/methods/papa/papa_summary.c) */
    cJSON *sum = al_rb_add(rb, rb->root, "summary", cJSON_CreateArray());
    for (int i = 0; i < sm->n_rows; i++) {
        const al_papa_summary_row *row = &sm->rows[i];
        cJSON *o = al_rb_add(rb, sum, NULL, cJSON_CreateObject());
        al_rb_num(rb, o, "config", row->config);
        al_rb_num(rb, o, "n", row->n);
        al_rb_num(rb, o, "mean", row->mean);
        al_rb_num(rb, o, "sd", row->sd);
        if (o) cJSON_AddItemToObject(o, "ci95", number_or_null(row->ci95));
        if (o) cJSON_AddItemToObject(o, "drop", number_or_null(row->drop));
        al_papa_reply_paired(rb, o, "paired", &row->paired);
    }
    al_papa_reply_findings(rb, &sm->findings, 1);
    if (r->theta) {
        cJSON *lam = al_rb_add(rb, rb->root, "lambdas", cJSON_CreateArray());
        for (int l = 0; lam && l < NL; l++) {
            cJSON *row = al_rb_add(rb, lam, NULL, cJSON_CreateArray());
            for (int h = 0; row && h < H; h++)
                al_rb_add(rb, row, NULL, cJSON_CreateNumber(al_heads_lambda(r->theta[l * H + h])));
        }
        al_rb_num(rb, rb->root, "ranking_loss", r->rank_loss);
        cJSON *th = al_rb_add(rb, rb->root, "theta", cJSON_CreateArray());
        for (int i = 0; th && i < n_total; i++) al_rb_add(rb, th, NULL, cJSON_CreateNumber(r->theta[i]));
    }
    al_papa_reply_orders(rb, r->orders, NL, H);
    free(sm);
    return AL_OK;
}

void al_papa_reply_findings(al_reply_builder *rb, const al_papa_findings *fd, int has_embeddings) {
    cJSON *fo = al_rb_add(rb, rb->root, "findings", cJSON_CreateObject());
    al_rb_str(rb, fo, "informative", al_papa_verdict_codes[fd->informative]);
    al_rb_str(rb, fo, "constant_costs", al_papa_verdict_codes[fd->constant_costs]);
    const int compared[3] = {fd->full, has_embeddings ? fd->embeddings : -1, fd->all_constant};
    static const char *const compared_names[3] = {"full", "embeddings_only", "all_constant"};
    for (int i = 0; i < 3; i++)
        if (fo) cJSON_AddItemToObject(fo, compared_names[i], compared[i] < 0 ? cJSON_CreateNull() : cJSON_CreateNumber(compared[i]));
    if (has_embeddings) al_papa_reply_paired(rb, fo, "full_minus_embeddings", &fd->full_minus_embeddings);
    al_papa_reply_paired(rb, fo, "full_minus_constant", &fd->full_minus_constant);
    /* the one vocabulary of verdicts: code -> the word a reader sees (docs/papa.md) */
    cJSON *words = al_rb_add(rb, fo, "words", cJSON_CreateObject());
    for (int v = 0; words && v < AL_N_VERDICTS; v++) al_rb_str(rb, words, al_papa_verdict_codes[v], al_papa_verdict_words[v]);
    al_rb_str(rb, fo, "text", fd->text);
}

cJSON *al_papa_reply_config_entry(al_reply_builder *rb, cJSON *list, const al_papa_config *x, int n_total) {
    cJSON *o = al_rb_add(rb, list, NULL, cJSON_CreateObject());
    char label[64];
    al_papa_config_label(x, n_total, label, sizeof label);
    al_rb_str(rb, o, "label", label);
    al_rb_str(rb, o, "what", x->what == AL_CFG_SWEEP ? "sweep" : x->what == AL_CFG_RIGHT_PAD ? "right_pad" : "embeddings_only");
    if (x->what == AL_CFG_SWEEP) {
        al_rb_num(rb, o, "k", x->k);
        al_rb_num(rb, o, "fraction_kept", (double)(n_total - x->k) / n_total);
        if (x->k > 0) al_rb_str(rb, o, "constant", al_papa_constant_name(x->constant));
        if (x->k > 0 && x->k < n_total) al_rb_str(rb, o, "order", al_papa_order_name(x->order));
    }
    return o;
}

void al_papa_reply_orders(al_reply_builder *rb, const int *orders_of, int NL, int H) {
    const int n_total = NL * H;
    cJSON *orders = al_rb_add(rb, rb->root, "orders", cJSON_CreateObject());
    for (int o = 0; orders && o < AL_N_ORDERS; o++) {
        if (orders_of[(size_t)o * n_total] < 0) continue;
        cJSON *list = al_rb_add(rb, orders, al_papa_order_name((al_papa_order)o), cJSON_CreateArray());
        for (int i = 0; list && i < n_total; i++) {
            const int lh = orders_of[(size_t)o * n_total + i];
            cJSON *pair = al_rb_add(rb, list, NULL, cJSON_CreateArray());
            al_rb_add(rb, pair, NULL, cJSON_CreateNumber(lh / H));
            al_rb_add(rb, pair, NULL, cJSON_CreateNumber(lh % H));
        }
    }
}

void al_papa_reply_task(al_reply_builder *rb, const al_papa_sweep_result *r, const al_task *task) {
    cJSON *t = al_rb_add(rb, rb->root, "task", cJSON_CreateObject());
    al_rb_str(rb, t, "id", task->id);
    al_rb_str(rb, t, "kind", al_task_kind_name(task->kind));
    al_rb_str(rb, t, "metric", task->metric);
    al_rb_num(rb, t, "n_train", r->n_train);
    al_rb_num(rb, t, "n_validation", r->n_validation);
    al_rb_num(rb, t, "truncated_train", r->truncated_train);
    al_rb_num(rb, t, "truncated_validation", r->truncated_validation);
    cJSON *labels = al_rb_add(rb, t, "labels", cJSON_CreateArray());
    for (int i = 0; labels && i < task->n_labels; i++) al_rb_add(rb, labels, NULL, cJSON_CreateString(task->label_names[i]));
    al_rb_num(rb, rb->root, "mlm_tokens", (double)r->mlm_tokens);
    cJSON *tm = al_rb_add(rb, rb->root, "seconds", cJSON_CreateObject());
    al_rb_num(rb, tm, "constants", r->seconds_constants);
    al_rb_num(rb, tm, "ranking", r->seconds_rank);
    al_rb_num(rb, tm, "features", r->seconds_features);
    al_rb_num(rb, tm, "probes", r->seconds_probe);
    al_rb_num(rb, tm, "mlm", r->seconds_mlm);
}
