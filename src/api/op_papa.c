/* op_papa.c: the "papa" op, the PAPA experiment as one JSON request (docs/papa-op.md): the request is
 * read into an al_papa_sweep_request (presets first, then every field the user gives), the sweep runs
 * (src/methods/papa/papa_sweep.c), and the reply holds the resolved configuration, the content hashes of model
 * and task, every run's score, the summaries with 95% intervals, relative drops and findings (computed by
 * src/methods/papa/papa_summary.c), the lambdas, the head orders, the MLM scores, timings, and a digest of the
 * numbers (reply_digest.h: a repeat of the request must give the same digest on any build). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../methods/probes/metrics.h"
#include "../methods/papa/papa_summary.h"
#include "../methods/papa/papa_findings.h"
#include "../methods/papa/papa_sweep.h"
#include "api_internal.h"
#include "op_heads.h"
#include "reply_digest.h"

/* ------------------------------------------------------------ reading the request */

static al_status read_names(const cJSON *req, const char *key, int (*from_name)(const char *), int max, int *out,
                            int *n, al_error *err) {
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(req, key);
    if (!list || cJSON_IsNull(list)) return AL_OK;
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) < 1 || cJSON_GetArraySize(list) > max)
        return al_err(err, AL_ERR_INVALID, "request: field '%s' must be a list of 1 to %d names", key, max);
    *n = 0;
    for (const cJSON *it = list->child; it; it = it->next) {
        int v = cJSON_IsString(it) ? from_name(it->valuestring) : -1;
        if (v < 0)
            return al_err(err, AL_ERR_INVALID, "request: field '%s[%d]' is not a known name", key, *n);
        for (int j = 0; j < *n; j++)
            if (out[j] == v) return al_err(err, AL_ERR_INVALID, "request: field '%s' names '%s' twice", key, it->valuestring);
        out[(*n)++] = v;
    }
    return AL_OK;
}

static al_status read_numbers(const cJSON *req, const char *key, int max, double lo, double hi, int integral,
                              double *out, int *n, al_error *err) {
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(req, key);
    if (!list || cJSON_IsNull(list)) return AL_OK;
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) < 1 || cJSON_GetArraySize(list) > max)
        return al_err(err, AL_ERR_INVALID, "request: field '%s' must be a list of 1 to %d numbers", key, max);
    *n = 0;
    for (const cJSON *it = list->child; it; it = it->next, (*n)++) {
        double v = cJSON_IsNumber(it) ? it->valuedouble : NAN;
        if (!(v >= lo && v <= hi) || (integral && v != floor(v)))
            return al_err(err, AL_ERR_INVALID, "request: field '%s[%d]' must be %s in [%g, %g]", key, *n,
                          integral ? "an integer" : "a number", lo, hi);
        out[*n] = v;
    }
    return AL_OK;
}

static int constant_from_name(const char *s) { return al_papa_constant_from_name(s); }
static int order_from_name(const char *s) { return al_papa_order_from_name(s); }

static al_status read_object_int(const cJSON *obj, const char *key, const char *path, int lo, int hi, int *v,
                                 al_error *err) {
    return al_req_int(obj, key, path, 0, *v, lo, hi, v, err);
}

static al_status read_object_float(const cJSON *obj, const char *key, const char *path, float lo, float hi, float *v,
                                   al_error *err) {
    return al_req_float(obj, key, path, 0, *v, lo, hi, v, err);
}

static al_status read_probe(const cJSON *req, al_papa_sweep_request *r, al_error *err) {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(req, "probe");
    if (!p || cJSON_IsNull(p)) return AL_OK;
    if (!cJSON_IsObject(p)) return al_err(err, AL_ERR_INVALID, "request: field 'probe' must be an object");
    al_status st = read_object_int(p, "epochs", "probe.epochs", 1, 1000, &r->probe.epochs, err);
    if (!st) st = read_object_int(p, "batch_size", "probe.batch_size", 1, 4096, &r->probe.batch_size, err);
    if (!st) st = read_object_float(p, "lr", "probe.lr", 1e-8f, 10.0f, &r->probe.lr, err);
    if (!st) st = read_object_float(p, "dropout", "probe.dropout", 0.0f, 0.95f, &r->probe.dropout, err);
    return st;
}

static al_status read_ranking(const cJSON *req, al_papa_sweep_request *r, al_error *err) {
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(req, "ranking");
    if (!p || cJSON_IsNull(p)) return AL_OK;
    if (!cJSON_IsObject(p)) return al_err(err, AL_ERR_INVALID, "request: field 'ranking' must be an object");
    int seed = (int)r->rank.seed;
    al_status st = read_object_int(p, "epochs", "ranking.epochs", 1, 1000, &r->rank.epochs, err);
    if (!st) st = read_object_int(p, "batch_size", "ranking.batch_size", 1, 4096, &r->rank.batch_size, err);
    if (!st) st = read_object_int(p, "max_examples", "ranking.max_examples", 0, 1 << 30, &r->rank.max_examples, err);
    if (!st) st = read_object_int(p, "shards", "ranking.shards", 1, 64, &r->rank.shards, err);
    if (!st) st = al_req_bool(p, "train_mode", "ranking.train_mode", r->rank.train_mode, &r->rank.train_mode, err);
    if (!st) st = read_object_int(p, "seed", "ranking.seed", 0, 2147483647, &seed, err);
    if (!st) st = read_object_float(p, "lr", "ranking.lr", 1e-8f, 10.0f, &r->rank.lr, err);
    r->rank.seed = (uint64_t)seed;
    return st;
}

static al_status read_shard(const cJSON *req, al_papa_sweep_request *r, al_error *err) {
    const char *s = NULL;
    al_status st = al_req_string(req, "shard", "shard", 0, &s, err);
    if (st || !s) return st;
    int i, n;
    char tail;
    if (sscanf(s, "%d/%d%c", &i, &n, &tail) != 2 || n < 1 || n > 4096 || i < 0 || i >= n)
        return al_err(err, AL_ERR_INVALID, "request: field 'shard' is '%.40s', not 'i/N' with 0 <= i < N", s);
    r->shard_index = i;
    r->n_shards = n;
    return AL_OK;
}

al_status al_papa_read_request(const cJSON *req, const al_task *task, al_papa_sweep_request *r, const char **preset,
                               al_error *err) {
    *r = al_papa_sweep_default_request();
    al_status st = al_req_string(req, "preset", "preset", 0, preset, err);
    if (!st && !*preset) *preset = "quick";
    if (!st) st = al_papa_sweep_preset(*preset, task, r, err);
    int v[AL_N_ORDERS], n = 0;
    if (!st) st = read_names(req, "constants", constant_from_name, AL_N_CONST_KINDS, v, &n, err);
    for (int i = 0; !st && n && i < n; i++) r->plan.constants[i] = (al_papa_constant_kind)v[i];
    if (!st && n) r->plan.n_constants = n;
    n = 0;
    if (!st) st = read_names(req, "orders", order_from_name, AL_N_ORDERS, v, &n, err);
    for (int i = 0; !st && n && i < n; i++) r->plan.orders[i] = (al_papa_order)v[i];
    if (!st && n) r->plan.n_orders = n;
    double nums[64];
    n = 0;
    if (!st) st = read_numbers(req, "fractions", 16, 0.0, 1.0, 0, nums, &n, err);
    if (!st && n) {
        r->n_fractions = n;
        memcpy(r->fractions, nums, sizeof(double) * (size_t)n);
    }
    n = 0;
    if (!st) st = read_numbers(req, "k", 64, 0.0, 1e6, 1, nums, &n, err);
    for (int i = 0; !st && i < n; i++) r->plan.k[i] = (int)nums[i];
    if (!st && n) {
        r->plan.n_k = n;
        for (int i = 1; i < n; i++) /* the plan wants them ascending and distinct */
            for (int j = i; j > 0 && r->plan.k[j - 1] > r->plan.k[j]; j--) {
                int t = r->plan.k[j];
                r->plan.k[j] = r->plan.k[j - 1];
                r->plan.k[j - 1] = t;
            }
        for (int i = 1; i < n; i++)
            if (r->plan.k[i] == r->plan.k[i - 1]) return al_err(err, AL_ERR_INVALID, "request: field 'k' repeats %d", r->plan.k[i]);
    }
    n = 0;
    if (!st) st = read_numbers(req, "seeds", AL_PAPA_MAX_SEEDS, 0.0, 2147483647.0, 1, nums, &n, err);
    for (int i = 0; !st && i < n; i++) r->seeds[i] = (uint64_t)nums[i];
    if (!st && n) r->plan.n_seeds = n;
    const char *layout = NULL;
    if (!st) st = al_req_string(req, "layout", "layout", 0, &layout, err);
    if (!st && layout) {
        int l = al_papa_layout_from_name(layout);
        if (l < 0) return al_err(err, AL_ERR_INVALID, "request: field 'layout' is '%.40s', not 'papa' or 'right_pad'", layout);
        r->layout = (al_papa_layout)l;
    }
    int memory_mb = 0;
    if (!st) st = al_req_int(req, "L", "L", 0, r->L, 4, 4096, &r->L, err);
    if (!st) st = al_req_int(req, "max_train", "max_train", 0, r->max_train, 0, 1 << 30, &r->max_train, err);
    if (!st) st = al_req_int(req, "max_validation", "max_validation", 0, r->max_validation, 0, 1 << 30, &r->max_validation, err);
    if (!st) st = al_req_int(req, "constants_examples", "constants_examples", 0, 0, 0, 1 << 30, &r->constants_examples, err);
    if (!st) st = al_req_int(req, "batch_size", "batch_size", 0, r->batch_size, 1, 4096, &r->batch_size, err);
    if (!st) st = al_req_bool(req, "baselines", "baselines", r->plan.baselines, &r->plan.baselines, err);
    if (!st) st = al_req_bool(req, "mlm", "mlm", r->mlm, &r->mlm, err);
    if (!st) st = al_req_int(req, "memory_mb", "memory_mb", 0, 1024, 1, 1 << 20, &memory_mb, err);
    r->mem_limit = (size_t)memory_mb << 20;
    r->rank.mem_limit = (uint64_t)memory_mb << 20;
    if (!st) st = read_probe(req, r, err);
    if (!st) st = read_ranking(req, r, err);
    if (!st) st = read_shard(req, r, err);
    return st;
}

/* ------------------------------------------------------------ the task */

/* "import": {"format", "train": text, "train_name", "validation": text, "validation_name", "text_column",
 * "text_pair_column", "label_column", "labels", "conll_column", "skip_bad_rows", "validation_fraction",
 * "seed"}: a GLUE TSV, CoNLL-2003, CSV or JSONL file read by the task importers (docs/tasks.md). */
static al_status import_task(const cJSON *imp, al_reply_builder *rb, al_task **task, al_error *err) {
    if (!cJSON_IsObject(imp)) return al_err(err, AL_ERR_INVALID, "request: field 'import' must be an object");
    al_task_import_options o = al_task_import_default_options();
    const char *train = NULL, *val = NULL, *train_name = NULL, *val_name = NULL, *delim = NULL;
    float fraction = (float)o.validation_fraction;
    int seed = 0;
    al_status st = al_req_string(imp, "train", "import.train", 1, &train, err);
    if (!st) st = al_req_string(imp, "validation", "import.validation", 0, &val, err);
    if (!st) st = al_req_string(imp, "train_name", "import.train_name", 0, &train_name, err);
    if (!st) st = al_req_string(imp, "validation_name", "import.validation_name", 0, &val_name, err);
    if (!st) st = al_req_string(imp, "format", "import.format", 0, &o.format, err);
    if (!st) st = al_req_string(imp, "id", "import.id", 0, &o.id, err);
    if (!st) st = al_req_string(imp, "text_column", "import.text_column", 0, &o.text_column, err);
    if (!st) st = al_req_string(imp, "text_pair_column", "import.text_pair_column", 0, &o.text_pair_column, err);
    if (!st) st = al_req_string(imp, "label_column", "import.label_column", 0, &o.label_column, err);
    if (!st) st = al_req_string(imp, "conll_column", "import.conll_column", 0, &o.conll_column, err);
    if (!st) st = al_req_string(imp, "delimiter", "import.delimiter", 0, &delim, err);
    if (!st) st = al_req_bool(imp, "skip_bad_rows", "import.skip_bad_rows", 0, &o.skip_bad_rows, err);
    if (!st) st = al_req_float(imp, "validation_fraction", "import.validation_fraction", 0, fraction, 0.001f, 0.999f,
                               &fraction, err);
    if (!st) st = al_req_int(imp, "seed", "import.seed", 0, 0, 0, 2147483647, &seed, err);
    if (st) return st;
    /* the label set, fixed: a label outside it is a bad row, not a new class (docs/tasks.md) */
    const char *labels[AL_TASK_MAX_LABELS];
    const cJSON *lj = cJSON_GetObjectItemCaseSensitive(imp, "labels");
    if (lj && !cJSON_IsNull(lj)) {
        if (!cJSON_IsArray(lj) || cJSON_GetArraySize(lj) < 1 || cJSON_GetArraySize(lj) > AL_TASK_MAX_LABELS)
            return al_err(err, AL_ERR_INVALID, "request: field 'import.labels' must be a list of 1 to %d label names",
                          AL_TASK_MAX_LABELS);
        for (const cJSON *it = lj->child; it; it = it->next) {
            if (!cJSON_IsString(it) || !it->valuestring[0])
                return al_err(err, AL_ERR_INVALID, "request: field 'import.labels[%d]' is not a non-empty string", o.n_labels);
            for (int j = 0; j < o.n_labels; j++)
                if (!strcmp(labels[j], it->valuestring))
                    return al_err(err, AL_ERR_INVALID, "request: field 'import.labels' names '%.40s' twice", it->valuestring);
            labels[o.n_labels++] = it->valuestring;
        }
        o.labels = labels;
    }
    if (delim && strlen(delim) != 1) return al_err(err, AL_ERR_INVALID, "request: field 'import.delimiter' must be one character");
    if (delim) o.delimiter = delim[0];
    if (!o.conll_column) o.conll_column = "ner";
    o.validation_fraction = fraction;
    o.seed = (uint64_t)seed;
    al_task_import_report rep;
    memset(&rep, 0, sizeof rep);
    st = al_task_import(&o, train_name ? train_name : "train", train, strlen(train), val_name ? val_name : "validation",
                        val, val ? strlen(val) : 0, task, &rep, err);
    if (st) return st;
    cJSON *r = al_rb_add(rb, rb->root, "import", cJSON_CreateObject());
    al_rb_num(rb, r, "rows", rep.n_rows);
    al_rb_num(rb, r, "bad_rows", rep.n_bad);
    cJSON *msgs = al_rb_add(rb, r, "messages", cJSON_CreateArray());
    for (int i = 0; msgs && i < rep.n_messages; i++) al_rb_add(rb, msgs, NULL, cJSON_CreateString(rep.messages[i]));
    return AL_OK;
}

al_status al_papa_load_task(const cJSON *req, al_reply_builder *rb, al_task **task, al_error *err) {
    const char *id = NULL, *jsonl = NULL, *dir = NULL;
    al_status st = al_req_string(req, "task", "task", 0, &id, err);
    if (!st) st = al_req_string(req, "task_jsonl", "task_jsonl", 0, &jsonl, err);
    if (!st) st = al_req_string(req, "tasks_dir", "tasks_dir", 0, &dir, err);
    if (st) return st;
    const cJSON *imp = cJSON_GetObjectItemCaseSensitive(req, "import");
    if (imp && !cJSON_IsNull(imp)) return import_task(imp, rb, task, err);
    if (jsonl) {
        const char *name = NULL; /* the file's name, for messages (the CLI's --task-file gives it) */
        st = al_req_string(req, "task_jsonl_name", "task_jsonl_name", 0, &name, err);
        if (!st) st = al_task_load_jsonl(jsonl, strlen(jsonl), name ? name : id ? id : "task_jsonl", task, err);
        if (st && strstr(err->message, "task header")) {
            /* most often another format given as a task file */
            const size_t n = strlen(err->message);
            snprintf(err->message + n, sizeof err->message - n, " (a task file is attnlab's JSONL, docs/tasks.md; a GLUE "
                     "TSV, CoNLL, CSV or JSONL file goes in through 'import', in the CLI --train-file)");
        }
        if (st) al_err_prefix(err, "request: field 'task_jsonl'");
        return st;
    }
    if (!id) {
        char ids[128] = "";
        for (int k = 0; al_task_builtins[k].id; k++) /* the one list of built-in tasks (task_jsonl.c) */
            snprintf(ids + strlen(ids), sizeof ids - strlen(ids), "%s%s", k ? ", " : "", al_task_builtins[k].id);
        return al_err(err, AL_ERR_INVALID, "request: field 'task' (a built-in id: %s), "
                      "'task_jsonl' (a task file's text) or 'import' (a GLUE, CoNLL, CSV or JSONL file) is required", ids);
    }
    st = al_task_load_builtin(dir ? dir : "build/data/tasks", id, task, err);
    if (st) al_err_prefix(err, "request: field 'task'");
    return st;
}

/* ------------------------------------------------------------ the reply */

/* The digest covers every number a reader compares: scores, accuracies, lambda logits, MLM scores
 * (the replies' digest rule: reply_digest.h). */
static void digest(const al_papa_sweep_result *r, int n_heads, char out[72]) {
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
static void canonical_results(al_papa_sweep_result *r) {
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

static void reply_config(al_reply_builder *rb, const al_papa_sweep_request *q, const char *preset, const al_task *task) {
    cJSON *c = al_rb_add(rb, rb->root, "config", cJSON_CreateObject());
    if (!c) return;
    al_rb_str(rb, c, "preset", preset);
    al_rb_str(rb, c, "task", task->id);
    al_rb_num(rb, c, "L", q->L);
    al_rb_str(rb, c, "layout", al_papa_layout_name(q->layout));
    cJSON *a = al_rb_add(rb, c, "constants", cJSON_CreateArray());
    for (int i = 0; a && i < q->plan.n_constants; i++)
        al_rb_add(rb, a, NULL, cJSON_CreateString(al_papa_constant_name(q->plan.constants[i])));
    a = al_rb_add(rb, c, "orders", cJSON_CreateArray());
    for (int i = 0; a && i < q->plan.n_orders; i++) al_rb_add(rb, a, NULL, cJSON_CreateString(al_papa_order_name(q->plan.orders[i])));
    a = al_rb_add(rb, c, "fractions", cJSON_CreateArray());
    for (int i = 0; a && q->plan.n_k == 0 && i < q->n_fractions; i++) al_rb_add(rb, a, NULL, cJSON_CreateNumber(q->fractions[i]));
    a = al_rb_add(rb, c, "seeds", cJSON_CreateArray());
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

/* A paired difference as {"n", "mean", "ci95"} (ci95 null with fewer than 2 shared seeds), or null. */
static void paired_json(al_reply_builder *rb, cJSON *parent, const char *key, const al_papa_paired *p) {
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

static al_status reply_results(al_reply_builder *rb, const al_papa_sweep_result *r, int NL, int H, const char *metric,
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
        const al_papa_config *x = &r->plan.configs[c];
        cJSON *o = al_rb_add(rb, cfgs, NULL, cJSON_CreateObject());
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
        paired_json(rb, o, "paired", &row->paired);
    }
    const al_papa_findings *fd = &sm->findings;
    cJSON *fo = al_rb_add(rb, rb->root, "findings", cJSON_CreateObject());
    al_rb_str(rb, fo, "informative", al_papa_verdict_codes[fd->informative]);
    al_rb_str(rb, fo, "constant_costs", al_papa_verdict_codes[fd->constant_costs]);
    const int compared[3] = {fd->full, fd->embeddings, fd->all_constant};
    static const char *const compared_names[3] = {"full", "embeddings_only", "all_constant"};
    for (int i = 0; i < 3; i++)
        if (fo) cJSON_AddItemToObject(fo, compared_names[i], compared[i] < 0 ? cJSON_CreateNull() : cJSON_CreateNumber(compared[i]));
    paired_json(rb, fo, "full_minus_embeddings", &fd->full_minus_embeddings);
    paired_json(rb, fo, "full_minus_constant", &fd->full_minus_constant);
    /* the one vocabulary of verdicts: code -> the word a reader sees (docs/papa.md) */
    cJSON *words = al_rb_add(rb, fo, "words", cJSON_CreateObject());
    for (int v = 0; words && v < AL_N_VERDICTS; v++) al_rb_str(rb, words, al_papa_verdict_codes[v], al_papa_verdict_words[v]);
    al_rb_str(rb, fo, "text", fd->text);
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
    cJSON *orders = al_rb_add(rb, rb->root, "orders", cJSON_CreateObject());
    for (int o = 0; orders && o < AL_N_ORDERS; o++) {
        if (r->orders[(size_t)o * n_total] < 0) continue;
        cJSON *list = al_rb_add(rb, orders, al_papa_order_name((al_papa_order)o), cJSON_CreateArray());
        for (int i = 0; list && i < n_total; i++) {
            const int lh = r->orders[(size_t)o * n_total + i];
            cJSON *pair = al_rb_add(rb, list, NULL, cJSON_CreateArray());
            al_rb_add(rb, pair, NULL, cJSON_CreateNumber(lh / H));
            al_rb_add(rb, pair, NULL, cJSON_CreateNumber(lh % H));
        }
    }
    free(sm);
    return AL_OK;
}

static void reply_task(al_reply_builder *rb, const al_papa_sweep_result *r, const al_task *task) {
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

/* ------------------------------------------------------------ reuse within a session
 * The averaged constants and the learned lambdas depend only on the model, the task and a few options;
 * a page that reruns a sweep with other fractions, orders or seeds reuses them. They are kept as session
 * tensors named by a hash of everything they depend on (al_session_clear_tensors drops them). */

static void cache_name(const char *what, const char *key, char name[64]) {
    al_sha256 s;
    uint8_t d[32];
    char hex[65];
    al_sha256_init(&s);
    al_sha256_update(&s, key, strlen(key));
    al_sha256_final(&s, d);
    al_sha256_hex(d, hex);
    snprintf(name, 64, "papa:%s:%.32s", what, hex);
}

void al_papa_cache_keys(const char *model_hash, const al_task *task, const al_papa_sweep_request *q, char c_name[64],
                       char t_name[64]) {
    char key[1024];
    int n = snprintf(key, sizeof key, "constants %s %s L=%d layout=%d max_train=%d examples=%d", model_hash, task->hash,
                     q->L, (int)q->layout, q->max_train, q->constants_examples);
    cache_name("constants", key, c_name);
    snprintf(key + n, sizeof key - (size_t)n, " ranking %d %d %d %.9g %d %d %llu %.9g", q->rank.epochs, q->rank.batch_size,
             q->rank.max_examples, (double)q->rank.lr, q->rank.shards, q->rank.train_mode,
             (unsigned long long)q->rank.seed, (double)q->probe.dropout);
    cache_name("theta", key, t_name);
}

void al_papa_cache_put(al_session *session, const char *name, int ndim, const int64_t *shape, const float *data) {
    al_error ignored;
    if (data && !al_api_find_tensor(session, name)) al_session_set_tensor(session, name, ndim, shape, data, &ignored);
}

static const char *const k_papa_outputs[] = {"constants", "theta", NULL};

/* The papa op's own fields; its task and settings are the shared groups (request_fields.c). */
const al_req_field al_fields_papa_own[] = {
    AL_F_ARRAY("constants", AL_FIELD_ENUM, 1, 0, al_papa_constant_names, NULL,
               "the constant matrices that replace a head's attention (default: the preset's)"),
    AL_F_ARRAY("orders", AL_FIELD_ENUM, 1, 0, al_papa_order_names, NULL,
               "the orders in which heads become constant (default: the preset's)"),
    AL_F_ARRAY("fractions", AL_FIELD_NUMBER, 0.0, 1.0, NULL, NULL, "fractions of input-dependent heads kept (1 to 16)"),
    AL_F_ARRAY("k", AL_FIELD_INT, 0.0, 1e6, NULL, NULL, "numbers of constant heads (instead of 'fractions')"),
    AL_F_ARRAY("seeds", AL_FIELD_INT, 0.0, 2147483647.0, NULL, NULL, "the probes' seeds"),
    AL_F_BOOL("baselines", NULL, "also the baselines: right padding, embeddings only"),
    AL_F_BOOL("mlm", NULL, "also the MLM score of every configuration"),
    AL_F_STRING("shard", NULL, "'i/N': this part of a sharded sweep (papa_merge joins the parts)"),
    AL_F_ARRAY("outputs", AL_FIELD_ENUM, 1, 0, k_papa_outputs, NULL,
               "tensors to return: the averaged constants, the lambda logits"),
    AL_F_END,
};

al_status al_op_papa(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (st) return st;
    al_task *task = NULL;
    st = al_papa_load_task(ctx->req, ctx->rb, &task, err);
    if (st) return st;
    al_papa_sweep_request q;
    const char *preset = NULL;
    st = al_papa_read_request(ctx->req, task, &q, &preset, err);
    int outputs = 0;
    if (!st) st = al_req_flags(ctx->req, "outputs", k_papa_outputs, 2, 0, &outputs, err);
    if (!st && (outputs & 2)) { /* only the lambda orders train the logits: say so rather than return nothing */
        int learns = 0;
        for (int i = 0; i < q.plan.n_orders; i++)
            learns |= q.plan.orders[i] == AL_ORDER_LAMBDA || q.plan.orders[i] == AL_ORDER_REVERSED_LAMBDA;
        if (!learns)
            st = al_err(err, AL_ERR_INVALID, "request: field 'outputs' asks for 'theta', which only a sweep with the "
                        "lambda (or reversed_lambda) order in 'orders' learns");
    }
    if (st) {
        al_task_free(task);
        return st;
    }
    al_op_warn_unknown(ctx);
    const al_config *cfg = al_model_config(m->model);
    const int NL = cfg->n_layers, H = cfg->n_heads;
    char model_hash[65], c_name[64], t_name[64];
    al_model_content_hash(m->model, model_hash);
    al_papa_cache_keys(model_hash, task, &q, c_name, t_name);
    const al_api_tensor *c_cached = al_api_find_tensor(ctx->session, c_name);
    const al_api_tensor *t_cached = al_api_find_tensor(ctx->session, t_name);
    if (c_cached) q.constants = c_cached->data;
    if (t_cached) q.theta = t_cached->data;
    q.progress = ctx->params->progress;
    q.progress_user = ctx->params->progress_user;
    q.cancel = ctx->params->cancel;
    q.pool = ctx->session->pool;
    al_papa_sweep_result r;
    st = al_papa_sweep_run(m->model, task, &q, &r, err);
    if (st) {
        al_task_free(task);
        return st;
    }
    al_reply_builder *rb = ctx->rb;
    char dig[72];
    if (t_cached) r.rank_loss = t_cached->data[NL * H]; /* stored after the logits */
    const int64_t c_shape[4] = {NL, H, q.L, q.L}, t_shape[1] = {NL * H + 1};
    al_papa_cache_put(ctx->session, c_name, 4, c_shape, r.constants);
    if (r.theta && !t_cached) {
        float *tl = malloc(sizeof(float) * ((size_t)NL * H + 1));
        if (tl) {
            memcpy(tl, r.theta, sizeof(float) * (size_t)NL * H);
            tl[NL * H] = (float)r.rank_loss;
            al_papa_cache_put(ctx->session, t_name, 1, t_shape, tl);
            free(tl);
        }
    }
    cJSON *reused = al_rb_add(rb, rb->root, "reused", cJSON_CreateObject());
    al_rb_bool(rb, reused, "constants", c_cached != NULL);
    al_rb_bool(rb, reused, "ranking", t_cached != NULL);
    canonical_results(&r);
    digest(&r, NL * H, dig);
    al_heads_reply_identity(rb, m->id, NL, H, model_hash, task->hash);
    reply_config(rb, &q, preset, task);
    st = reply_results(rb, &r, NL, H, task->metric, r.n_validation, err);
    reply_task(rb, &r, task);
    al_rb_str(rb, rb->root, "digest", dig);
    if (!st && (outputs & 1) && r.constants) {
        int64_t shape[4] = {NL, H, q.L, q.L};
        void *data;
        st = al_rb_tensor(rb, "constants", "F32", 4, shape, &data, err);
        if (!st) memcpy(data, r.constants, sizeof(float) * (size_t)NL * H * q.L * q.L);
    }
    if (!st && (outputs & 2) && !r.theta)
        al_rb_warn(rb, "outputs: 'theta' is not returned: no configuration replaced some but not all heads in the "
                   "lambda order, so no lambdas were learned (add a fraction between 0 and 1)");
    if (!st && (outputs & 2) && r.theta) {
        int64_t shape[2] = {NL, H};
        void *data;
        st = al_rb_tensor(rb, "theta", "F32", 2, shape, &data, err);
        if (!st) memcpy(data, r.theta, sizeof(float) * (size_t)NL * H);
    }
    al_papa_sweep_result_free(&r);
    al_task_free(task);
    return st;
}

/* ------------------------------------------------------------ papa_merge: shards back into one sweep */

/* A whole number in [-1e9, 1e9] as an int, else def: a part is a reply attnlab wrote, but the request may hold
 * anything, and casting a double outside int's range is undefined behaviour. */
static int int_value(const cJSON *v, int def) {
    if (!cJSON_IsNumber(v)) return def;
    const double d = v->valuedouble;
    return d >= -1e9 && d <= 1e9 && d == floor(d) ? (int)d : def;
}

static int json_int(const cJSON *o, const char *key, int def) {
    return int_value(cJSON_GetObjectItemCaseSensitive(o, key), def);
}

static double json_num(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *json_text(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* The configuration list a part's "configs" describes, as the plan listed it. */
static al_status read_configs(const cJSON *part, al_papa_plan *plan, al_error *err) {
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(part, "configs");
    memset(plan, 0, sizeof *plan);
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > AL_PAPA_MAX_CONFIGS)
        return al_err(err, AL_ERR_INVALID, "request: field 'parts[0].configs' must be a list of configurations");
    for (const cJSON *o = list->child; o; o = o->next) {
        al_papa_config *c = &plan->configs[plan->n_configs++];
        memset(c, 0, sizeof *c);
        const char *what = json_text(o, "what");
        c->what = !strcmp(what, "right_pad") ? AL_CFG_RIGHT_PAD : !strcmp(what, "embeddings_only") ? AL_CFG_EMBEDDINGS_ONLY : AL_CFG_SWEEP;
        c->k = json_int(o, "k", 0);
        int kind = al_papa_constant_from_name(json_text(o, "constant")), order = al_papa_order_from_name(json_text(o, "order"));
        c->constant = kind < 0 ? AL_CONST_AVERAGE : (al_papa_constant_kind)kind;
        c->order = order < 0 ? AL_ORDER_FIRST_TO_LAST : (al_papa_order)order;
    }
    return AL_OK;
}

/* A part's "config" without its "shard", as text, to check that parts come from one request. */
static char *config_text(const cJSON *part) {
    cJSON *c = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(part, "config"), 1);
    if (!c) return NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(c, "shard");
    char *t = cJSON_PrintUnformatted(c);
    cJSON_Delete(c);
    return t;
}

static int run_order(const void *a, const void *b) {
    const al_papa_run_result *x = a, *y = b;
    return x->config != y->config ? x->config - y->config : x->seed_index - y->seed_index;
}

static al_status merge_parts(const cJSON *parts, al_papa_sweep_result *r, int *NL, int *H, al_error *err) {
    const cJSON *p0 = parts->child;
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(p0, "shape");
    *NL = json_int(shape, "n_layers", 0);
    *H = json_int(shape, "n_heads", 0);
    if (*NL < 1 || *H < 1 || *NL > 100000 || *H > 100000 || (long long)*NL * *H > 100000)
        return al_err(err, AL_ERR_INVALID, "request: field 'parts[0].shape' is missing or out of range");
    const int n_heads = *NL * *H;
    al_status st = read_configs(p0, &r->plan, err);
    if (st) return st;
    const int n_cfg = r->plan.n_configs;
    int max_runs = 0;
    for (const cJSON *p = parts->child; p; p = p->next) max_runs += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(p, "runs"));
    r->runs = calloc((size_t)max_runs + 1, sizeof *r->runs);
    r->mlm_score = malloc(sizeof(double) * (size_t)(n_cfg + 1));
    r->mlm_accuracy = malloc(sizeof(double) * (size_t)(n_cfg + 1));
    r->orders = malloc(sizeof(int) * AL_N_ORDERS * (size_t)n_heads);
    if (!r->runs || !r->mlm_score || !r->mlm_accuracy || !r->orders) return al_err(err, AL_ERR_OOM, "papa_merge: out of memory");
    for (int c = 0; c < n_cfg; c++) r->mlm_score[c] = r->mlm_accuracy[c] = NAN;
    char *cfg0 = config_text(p0);
    const char *model0 = json_text(cJSON_GetObjectItemCaseSensitive(p0, "hashes"), "model");
    const char *task0 = json_text(cJSON_GetObjectItemCaseSensitive(p0, "hashes"), "task");
    int index = 0;
    for (const cJSON *p = parts->child; p && !st; p = p->next, index++) {
        char *cfg = config_text(p);
        const cJSON *hashes = cJSON_GetObjectItemCaseSensitive(p, "hashes");
        if (!cfg || !cfg0 || strcmp(cfg, cfg0) || strcmp(json_text(hashes, "model"), model0) ||
            strcmp(json_text(hashes, "task"), task0))
            st = al_err(err, AL_ERR_INVALID, "request: field 'parts[%d]' comes from another request (config, model or "
                        "task differ from parts[0])", index);
        free(cfg);
        const cJSON *runs = cJSON_GetObjectItemCaseSensitive(p, "runs");
        for (const cJSON *o = runs ? runs->child : NULL; o && !st; o = o->next) {
            al_papa_run_result *x = &r->runs[r->n_runs++];
            x->config = json_int(o, "config", -1);
            x->seed_index = json_int(o, "seed_index", -1);
            x->score = json_num(o, "score");
            x->accuracy = json_num(o, "accuracy");
            const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "group_accuracy");
            for (int k = 0; k < AL_PAPA_MAX_GROUPS; k++) {
                const cJSON *v = cJSON_GetArrayItem(g, k);
                x->group_accuracy[k] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
                x->group_count[k] = cJSON_IsNumber(v);
            }
            if (x->config < 0 || x->config >= n_cfg || x->seed_index < 0)
                st = al_err(err, AL_ERR_INVALID, "request: field 'parts[%d].runs' names configuration %d", index, x->config);
            else {
                const cJSON *co = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p, "configs"), x->config);
                double ms = json_num(co, "mlm_score");
                if (!isnan(ms)) r->mlm_score[x->config] = ms, r->mlm_accuracy[x->config] = json_num(co, "mlm_accuracy");
            }
        }
    }
    free(cfg0);
    if (st) return st;
    qsort(r->runs, (size_t)r->n_runs, sizeof *r->runs, run_order);
    for (int i = 1; i < r->n_runs; i++)
        if (!run_order(&r->runs[i - 1], &r->runs[i]))
            return al_err(err, AL_ERR_INVALID, "request: field 'parts': configuration %d seed %d appears in two parts",
                          r->runs[i].config, r->runs[i].seed_index);
    const cJSON *theta = cJSON_GetObjectItemCaseSensitive(p0, "theta");
    if (cJSON_IsArray(theta)) {
        if (cJSON_GetArraySize(theta) != n_heads) return al_err(err, AL_ERR_INVALID, "request: field 'parts[0].theta' has the wrong length");
        r->theta = malloc(sizeof(float) * (size_t)n_heads);
        if (!r->theta) return al_err(err, AL_ERR_OOM, "papa_merge: out of memory");
        int i = 0;
        for (const cJSON *v = theta->child; v; v = v->next, i++) {
            if (!cJSON_IsNumber(v) || !(fabs(v->valuedouble) <= FLT_MAX))
                return al_err(err, AL_ERR_INVALID, "request: field 'parts[0].theta[%d]' is not a float32 number", i);
            r->theta[i] = (float)v->valuedouble;
        }
        r->rank_loss = json_num(p0, "ranking_loss");
    }
    const cJSON *orders = cJSON_GetObjectItemCaseSensitive(p0, "orders");
    for (int o = 0; o < AL_N_ORDERS; o++) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(orders, al_papa_order_name((al_papa_order)o));
        for (int i = 0; i < n_heads; i++) {
            const cJSON *pair = list ? cJSON_GetArrayItem(list, i) : NULL;
            const cJSON *l = cJSON_GetArrayItem(pair, 0), *h = cJSON_GetArrayItem(pair, 1);
            const int li = int_value(l, -1), hi = int_value(h, -1);
            r->orders[(size_t)o * n_heads + i] = li >= 0 && li < *NL && hi >= 0 && hi < *H ? li * *H + hi : -1;
        }
    }
    return AL_OK;
}

const al_req_field al_fields_papa_merge_own[] = {
    AL_F_ARRAY("parts", AL_FIELD_ANY, 1, 0, NULL, NULL, "the papa replies of a sharded sweep, one per shard"),
    AL_F_END,
};

al_status al_op_papa_merge(al_op_ctx *ctx, al_error *err) {
    const cJSON *parts = cJSON_GetObjectItemCaseSensitive(ctx->req, "parts");
    if (!cJSON_IsArray(parts) || cJSON_GetArraySize(parts) < 1)
        return al_err(err, AL_ERR_INVALID, "request: field 'parts' must be a list of papa replies (one per shard)");
    /* a merged reply is a whole sweep too: merging it alone recomputes its summary and findings (docs/papa-op.md) */
    for (const cJSON *p = parts->child; p; p = p->next)
        if (!cJSON_IsObject(p) || (strcmp(json_text(p, "op"), "papa") && strcmp(json_text(p, "op"), "papa_merge")))
            return al_err(err, AL_ERR_INVALID, "request: field 'parts' holds something other than a papa or papa_merge reply");
    al_op_warn_unknown(ctx);
    al_papa_sweep_result r;
    memset(&r, 0, sizeof r);
    int NL = 0, H = 0;
    al_status st = merge_parts(parts, &r, &NL, &H, err);
    if (!st) {
        al_reply_builder *rb = ctx->rb;
        const cJSON *p0 = parts->child;
        static const char *const copied[] = {"model", "engine", "shape", "hashes", "config", "task", "mlm_tokens"};
        for (size_t i = 0; i < sizeof copied / sizeof copied[0]; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(p0, copied[i]);
            if (v) al_rb_add(rb, rb->root, copied[i], cJSON_Duplicate(v, 1));
        }
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(rb->root, "config"), "shard");
        al_rb_num(rb, rb->root, "merged_parts", cJSON_GetArraySize(parts));
        const cJSON *task0 = cJSON_GetObjectItemCaseSensitive(p0, "task");
        st = reply_results(rb, &r, NL, H, json_text(task0, "metric"), json_int(task0, "n_validation", -1), err);
        char dig[72];
        digest(&r, NL * H, dig);
        al_rb_str(rb, rb->root, "digest", dig);
    }
    al_papa_sweep_result_free(&r);
    return st;
}
