/* experiment_setup.c: the setup the ops that run an experiment over a task share (experiment_setup.h):
 * reading the task and the sweep's fields (docs/papa-op.md for every field, docs/tasks.md for "import"),
 * the length check, the inputs and the cache names. */
#include "experiment_setup.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../methods/lm/lm_task_inputs.h"
#include "papa_cache.h"

/* ------------------------------------------------------------ the fields (checked by request_fields.c) */

/* The experiments' task (load_task, below; docs/tasks.md). */
const al_req_field al_fields_task[] = {
    AL_F_STRING("task", NULL, "a built-in task's id (the version reply's 'tasks')"),
    AL_F_STRING("task_jsonl", NULL, "a task file's text (attnlab's JSONL, docs/tasks.md)"),
    AL_F_STRING("task_jsonl_name", NULL, "the task file's name, for messages"),
    AL_F_STRING("tasks_dir", "\"build/data/tasks\"", "where the built-in tasks' files are"),
    AL_F_OBJECT("import", "a GLUE TSV, CoNLL-2003, CSV or JSONL file read by the task importers"),
    AL_F_STRING("import.train", NULL, "the training file's text"),
    AL_F_STRING("import.validation", NULL, "the validation file's text (default: a split of the training file)"),
    AL_F_STRING("import.train_name", "\"train\"", "the training file's name, for messages"),
    AL_F_STRING("import.validation_name", "\"validation\"", "the validation file's name, for messages"),
    AL_F_STRING("import.format", "\"auto\"", "the file's format: auto, attnlab, a GLUE task's name (cola, sst2, ...), "
                "conll2003, csv or jsonl"),
    AL_F_STRING("import.id", NULL, "the task's id in the reply"),
    AL_F_STRING("import.text_column", NULL, "the column of the text (CSV, JSONL)"),
    AL_F_STRING("import.text_pair_column", NULL, "the column of the second text (CSV, JSONL)"),
    AL_F_STRING("import.label_column", NULL, "the column of the label (CSV, JSONL)"),
    AL_F_ARRAY("import.labels", AL_FIELD_STRING, 1, 0, NULL, NULL,
               "the label set, fixed: a label outside it is a bad row"),
    AL_F_STRING("import.conll_column", "\"ner\"", "the CoNLL column of the tags: ner, pos or chunk"),
    AL_F_STRING("import.delimiter", NULL, "the CSV delimiter (one character)"),
    AL_F_BOOL("import.skip_bad_rows", "false", "skip rows that do not parse instead of failing"),
    AL_F_NUMBER("import.validation_fraction", 0.001, 0.999, "0.2", "the share of the training file held out"),
    AL_F_INT("import.seed", 0, 2147483647, "0", "the seed of the held-out split"),
    AL_F_END,
};

/* The sweep's settings (read_request, below; docs/papa-op.md); defaults come from the preset. */
const al_req_field al_fields_sweep[] = {
    AL_F_ENUM("preset", al_papa_preset_names, "\"quick\"", "the settings every other field starts from"),
    AL_F_INT("L", 4, 4096, NULL, "the positions of the PAPA layout (default: the preset's)"),
    AL_F_ENUM("layout", al_papa_layout_names, "\"papa\"", "the input layout"),
    AL_F_INT("max_train", 0, 1 << 30, NULL, "training examples at most (default: the preset's)"),
    AL_F_INT("batch_size", 1, 4096, NULL, "sequences per forward batch (default: the preset's)"),
    AL_F_INT("memory_mb", 1, 1 << 20, "1024", "the memory the cached features may take"),
    AL_F_END,
};

const al_req_field al_fields_sweep_data[] = {
    AL_F_INT("max_validation", 0, 1 << 30, NULL, "validation examples at most (default: the preset's)"),
    AL_F_INT("constants_examples", 0, 1 << 30, "0", "examples the constant matrices average over (0: the training set)"),
    AL_F_END,
};

const al_req_field al_fields_training[] = {
    AL_F_OBJECT("probe", "the probe's training"),
    AL_F_INT("probe.epochs", 1, 1000, NULL, "probe epochs (default: the preset's)"),
    AL_F_INT("probe.batch_size", 1, 4096, NULL, "probe batch size"),
    AL_F_NUMBER("probe.lr", 1e-8, 10.0, NULL, "probe learning rate"),
    AL_F_NUMBER("probe.dropout", 0.0, 0.95, NULL, "probe dropout"),
    AL_F_OBJECT("ranking", "the training of the heads' lambdas that ranks them"),
    AL_F_INT("ranking.epochs", 1, 1000, NULL, "ranking epochs (default: the preset's)"),
    AL_F_INT("ranking.batch_size", 1, 4096, NULL, "ranking batch size"),
    AL_F_INT("ranking.max_examples", 0, 1 << 30, NULL, "ranking examples at most"),
    AL_F_INT("ranking.shards", 1, 64, NULL, "data-parallel shards of a ranking step"),
    AL_F_BOOL("ranking.train_mode", NULL, "dropout on while ranking"),
    AL_F_INT("ranking.seed", 0, 2147483647, NULL, "the ranking's seed"),
    AL_F_NUMBER("ranking.lr", 1e-8, 10.0, NULL, "ranking learning rate"),
    AL_F_END,
};

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

/* "preset" first (with a task), then every field a papa request may give. */
static al_status read_request(const cJSON *req, const al_task *task, al_papa_sweep_request *r, const char **preset,
                              al_error *err) {
    *r = al_papa_sweep_default_request();
    al_status st = al_req_string(req, "preset", "preset", 0, preset, err);
    if (!st && !*preset) *preset = "quick";
    if (!st && task) st = al_papa_sweep_preset(*preset, task, r, err);
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

/* The task of "task" (+ "tasks_dir"), "task_jsonl" (+ "task_jsonl_name") or "import". */
static al_status load_task(const cJSON *req, al_reply_builder *rb, al_task **task, al_error *err) {
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

/* ------------------------------------------------------------ the experiment */

al_status al_experiment_read_fields(const cJSON *req, al_papa_sweep_request *q, al_error *err) {
    const char *preset;
    return read_request(req, NULL, q, &preset, err);
}

al_status al_experiment_read(al_op_ctx *ctx, al_experiment *x, al_error *err) {
    const al_api_model *m = x->m;
    memset(x, 0, sizeof *x);
    x->m = m;
    al_status st = load_task(ctx->req, ctx->rb, &x->task, err);
    if (!st) st = read_request(ctx->req, x->task, &x->q, &x->preset, err);
    if (st) al_experiment_free(x);
    return st;
}

al_status al_experiment_open(al_op_ctx *ctx, const char *who, al_experiment *x, al_error *err) {
    memset(x, 0, sizeof *x);
    al_status st = al_req_model(ctx->session, ctx->req, &x->m, err);
    if (st) return st;
    if (who && !al_model_tokenizer(x->m->model))
        return al_err(err, AL_ERR_INVALID, "%s: model '%s' has no tokenizer to read a task with", who, x->m->id);
    return al_experiment_read(ctx, x, err);
}

al_status al_experiment_check_length(const al_experiment *x, al_error *err) {
    const al_config *cfg = al_model_config(x->m->model);
    const int L_max = cfg->max_position_embeddings - cfg->position_offset;
    if (x->q.L < 4 || x->q.L > L_max)
        return al_err(err, AL_ERR_INVALID, "request: field 'L' = %d must be in [4, %d] for this model", x->q.L, L_max);
    return AL_OK;
}

al_status al_experiment_inputs(al_experiment *x, int validation, const char *who, al_error *err) {
    const al_tokenizer *tok = al_model_tokenizer(x->m->model);
    const al_papa_sweep_request *q = &x->q;
    al_status st;
    if (al_model_is_causal(x->m->model)) { /* a decoder's text, right padded (lm_task_inputs.h) */
        const al_config *c = al_model_config(x->m->model);
        const int pad = c->pad_token_id >= 0 && c->pad_token_id < c->vocab_size ? c->pad_token_id : 0;
        x->q.layout = AL_LAYOUT_RIGHT_PAD;
        st = al_lm_task_inputs(tok, x->task, AL_TASK_TRAIN, q->max_train, q->L, pad, &x->train, err);
        if (!st && validation)
            st = al_lm_task_inputs(tok, x->task, AL_TASK_VALIDATION, q->max_validation, q->L, pad, &x->val, err);
    } else {
        st = al_papa_inputs_build(tok, x->task, AL_TASK_TRAIN, q->max_train, q->layout, q->L, &x->train, err);
        if (!st && validation)
            st = al_papa_inputs_build(tok, x->task, AL_TASK_VALIDATION, q->max_validation, q->layout, q->L, &x->val, err);
    }
    if (!st && validation && x->val.n < 1)
        st = al_err(err, AL_ERR_INVALID, "%s: task '%s' has no validation examples", who, x->task->id);
    return st;
}

void al_experiment_cache_names(al_experiment *x) {
    snprintf(x->model_hash, sizeof x->model_hash, "%s", al_api_model_hash(x->m));
    al_papa_cache_keys(x->model_hash, x->task, &x->q, x->c_name, x->t_name);
}

void al_experiment_free(al_experiment *x) {
    al_papa_inputs_free(&x->train);
    al_papa_inputs_free(&x->val);
    al_task_free(x->task);
    x->task = NULL;
}
