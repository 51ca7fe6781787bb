/* task_jsonl.c: attnlab's task file (docs/tasks.md, "Task files"): JSON lines, the first a header
 * {"task", "kind", "labels", "metric", optional "sha256"}, then one example a line with "split" and
 * either "text" [, "text_pair"], "label" [, "group"] or "words", "word_labels" [, "group"]. Other keys
 * (where an example came from) are ignored. The built-in tasks are written in it by
 * scripts/build_tasks.py; al_task_write_jsonl writes it too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cJSON.h"
#include "task_import.h"

/* scripts/build_tasks.py writes their files (build/data/tasks/<id>.jsonl); docs/tasks.md describes them. */
const al_task_builtin al_task_builtins[] = {
    {"pos", "Part of speech (Brown, token accuracy)"},
    {"agreement", "Subject-verb agreement at the [MASK] (token accuracy, by attractor count)"},
    {"definition", "Definitions (sequence accuracy)"},
    {"order", "Sentence order: two Brown sentences in order or swapped (pair accuracy)"},
    {NULL, NULL},
};

/* ---------------------------------------------------------------- reading */

static al_status header_error(const char *filename, int line, al_error *err, const char *why) {
    return al_err(err, AL_ERR_FORMAT, "%s: line %d: task header: %s", filename, line, why);
}

/* Creates the task from the header object. */
static al_status read_header(const cJSON *h, const char *filename, int line, const al_task_import_options *opt,
                             al_task **out, char sha[65], al_error *err) {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(h, "task");
    const cJSON *kind = cJSON_GetObjectItemCaseSensitive(h, "kind");
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(h, "labels");
    const cJSON *metric = cJSON_GetObjectItemCaseSensitive(h, "metric");
    const cJSON *hash = cJSON_GetObjectItemCaseSensitive(h, "sha256");
    if (!cJSON_IsString(id)) return header_error(filename, line, err, "\"task\" (the id) is missing or not a string");
    int k = cJSON_IsString(kind) ? al_task_kind_from_name(kind->valuestring) : -1;
    if (k < 0) return header_error(filename, line, err, "\"kind\" must be \"sequence\" or \"token\"");
    if (!cJSON_IsArray(labels) || cJSON_GetArraySize(labels) < 1)
        return header_error(filename, line, err, "\"labels\" must be a non-empty array of names");
    if (!cJSON_IsString(metric)) return header_error(filename, line, err, "\"metric\" is missing or not a string");
    sha[0] = '\0';
    if (hash) {
        int ok = cJSON_IsString(hash) && strlen(hash->valuestring) == 64;
        for (int i = 0; ok && i < 64; i++) {
            char c = hash->valuestring[i];
            ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
        }
        if (!ok) return header_error(filename, line, err, "\"sha256\" must be 64 lower-case hex digits");
        memcpy(sha, hash->valuestring, 65);
    }
    int n = cJSON_GetArraySize(labels);
    if (n > AL_TASK_MAX_LABELS) return header_error(filename, line, err, "more than 1000 labels");
    const char **names = malloc((size_t)n * sizeof *names);
    if (!names) return al_err(err, AL_ERR_OOM, "%s: out of memory", filename);
    int i = 0;
    for (const cJSON *v = labels->child; v; v = v->next, i++) {
        if (!cJSON_IsString(v)) {
            free(names);
            return header_error(filename, line, err, "every label must be a string");
        }
        names[i] = v->valuestring;
    }
    al_task *t = NULL;
    al_status st = al_task_new(opt && opt->id ? opt->id : id->valuestring, (al_task_kind)k, &t, err);
    if (st == AL_OK) st = al_task_fix_labels(t, names, n, err);
    if (st == AL_OK) st = al_task_set_metric(t, opt && opt->metric ? opt->metric : metric->valuestring, err);
    free(names);
    if (st) {
        al_task_free(t);
        return al_err_prefix(err, filename);
    }
    *out = t;
    return AL_OK;
}

static al_status read_group(al_task_reader *rd, const cJSON *row, int *group, int *ok, al_error *err) {
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(row, "group");
    *group = AL_TASK_NO_GROUP;
    *ok = 1;
    if (!g || cJSON_IsNull(g)) return AL_OK;
    if (!cJSON_IsNumber(g) || g->valuedouble != (double)(int)g->valuedouble || g->valuedouble < -1 ||
        g->valuedouble > 1e9) {
        *ok = 0;
        return al_reader_bad(rd, rd->line, err, "\"group\" must be an integer >= -1");
    }
    *group = (int)g->valuedouble;
    return AL_OK;
}

static al_status read_sequence(al_task_reader *rd, const cJSON *row, al_error *err) {
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(row, "text");
    const cJSON *pair = cJSON_GetObjectItemCaseSensitive(row, "text_pair");
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(row, "label");
    if (!cJSON_IsString(text)) return al_reader_bad(rd, rd->line, err, "\"text\" is missing or not a string");
    if (pair && !cJSON_IsNull(pair) && !cJSON_IsString(pair))
        return al_reader_bad(rd, rd->line, err, "\"text_pair\" must be a string or null");
    if (!cJSON_IsString(label)) return al_reader_bad(rd, rd->line, err, "\"label\" is missing or not a string");
    int group, ok;
    al_status st = read_group(rd, row, &group, &ok, err);
    if (st || !ok) return st;
    const char *p = cJSON_IsString(pair) ? pair->valuestring : NULL;
    return al_reader_sequence(rd, rd->line, text->valuestring, strlen(text->valuestring), p, p ? strlen(p) : 0,
                              label->valuestring, strlen(label->valuestring), group, "text", "text_pair", err);
}

static al_status read_token(al_task_reader *rd, const cJSON *row, al_error *err) {
    const cJSON *words = cJSON_GetObjectItemCaseSensitive(row, "words");
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(row, "word_labels");
    if (!cJSON_IsArray(words) || cJSON_GetArraySize(words) < 1)
        return al_reader_bad(rd, rd->line, err, "\"words\" must be a non-empty array of strings");
    int n = cJSON_GetArraySize(words);
    if (!cJSON_IsArray(labels) || cJSON_GetArraySize(labels) != n)
        return al_reader_bad(rd, rd->line, err, "\"word_labels\" must be an array of %d label names, one per word", n);
    int group, ok;
    al_status st = read_group(rd, row, &group, &ok, err);
    if (st || !ok) return st;
    al_task *t = rd->task;
    const char **w = al_task_alloc(t, (size_t)n * sizeof *w);
    int *lab = al_task_alloc(t, (size_t)n * sizeof *lab);
    if (!w || !lab) return al_reader_oom(rd, err);
    const cJSON *wv = words->child, *lv = labels->child;
    int n_labelled = 0;
    for (int i = 0; i < n; i++, wv = wv->next, lv = lv->next) {
        if (!cJSON_IsString(wv) || !wv->valuestring[0])
            return al_reader_bad(rd, rd->line, err, "word %d is not a non-empty string", i);
        if (cJSON_IsNull(lv)) { /* an unlabelled word: context only (docs/tasks.md, "Task files") */
            lab[i] = AL_TASK_NO_LABEL;
        } else {
            if (!cJSON_IsString(lv))
                return al_reader_bad(rd, rd->line, err, "word_labels[%d] is neither a string nor null", i);
            st = al_reader_label(rd, rd->line, lv->valuestring, strlen(lv->valuestring), &lab[i], err);
            if (st || lab[i] < 0) return st;
            n_labelled++;
        }
        if (!(w[i] = al_task_copy(t, wv->valuestring, strlen(wv->valuestring)))) return al_reader_oom(rd, err);
    }
    if (n_labelled == 0) return al_reader_bad(rd, rd->line, err, "\"word_labels\" are all null: no word to predict");
    al_task_example ex = {0};
    ex.label = -1;
    ex.n_words = n;
    ex.words = w;
    ex.word_labels = lab;
    ex.group = group;
    st = al_task_add(t, rd->split, &ex, err);
    if (st == AL_OK) rd->report->n_rows++;
    return st;
}

static al_status read_rows(al_task_reader *rd, al_error *err) {
    const char *s;
    size_t n;
    char why[96];
    while (al_reader_line(rd, &s, &n)) {
        if (al_blank(s, n)) continue;
        al_status st;
        int rc = al_reader_json_check(rd, s, n, why, sizeof why);
        if (rc < 0) return al_reader_oom(rd, err);
        cJSON *row = rc ? NULL : al_json_line(s, n);
        if (!cJSON_IsObject(row)) {
            cJSON_Delete(row);
            if ((st = al_reader_bad(rd, rd->line, err, "%s", rc ? why : "not a JSON object"))) return st;
            continue;
        }
        const cJSON *split = cJSON_GetObjectItemCaseSensitive(row, "split");
        const char *sp = cJSON_IsString(split) ? split->valuestring : "";
        if (strcmp(sp, "train") != 0 && strcmp(sp, "validation") != 0) {
            cJSON_Delete(row);
            if ((st = al_reader_bad(rd, rd->line, err, "\"split\" must be \"train\" or \"validation\""))) return st;
            continue;
        }
        rd->split = strcmp(sp, "train") == 0 ? AL_TASK_TRAIN : AL_TASK_VALIDATION;
        st = rd->task->kind == AL_TASK_SEQUENCE ? read_sequence(rd, row, err) : read_token(rd, row, err);
        cJSON_Delete(row);
        if (st) return st;
    }
    return AL_OK;
}

al_status al_attnlab_read(const char *data, size_t len, const char *filename, const al_task_import_options *opt,
                          al_task_import_report *report, al_task **out, al_error *err) {
    *out = NULL;
    al_task_import_options defaults = al_task_import_default_options();
    if (!opt) opt = &defaults;
    al_task_import_report local = {0};
    if (!report) report = &local;
    al_task_reader rd;
    al_reader_init(&rd, NULL, AL_TASK_TRAIN, filename, data, len, opt, report);
    const char *s;
    size_t n;
    int have = 0;
    while ((have = al_reader_line(&rd, &s, &n)) && al_blank(s, n)) {
    }
    if (!have) return al_err(err, AL_ERR_FORMAT, "%s: empty file (a task header line is needed)", rd.filename);
    char why[96], sha[65];
    int rc = al_reader_json_check(&rd, s, n, why, sizeof why);
    cJSON *h = rc ? NULL : al_json_line(s, n);
    al_status st;
    if (rc < 0) st = al_reader_oom(&rd, err);
    else if (!cJSON_IsObject(h)) st = header_error(rd.filename, rd.line, err, rc ? why : "not a JSON object");
    else st = read_header(h, rd.filename, rd.line, opt, &rd.task, sha, err);
    cJSON_Delete(h);
    if (st == AL_OK) st = read_rows(&rd, err);
    if (st == AL_OK) st = al_task_finish(rd.task, rd.filename, err);
    if (st == AL_OK && sha[0] && report->n_bad == 0 && strcmp(sha, rd.task->hash) != 0)
        st = al_err(err, AL_ERR_FORMAT, "%s: the content hash %.12s... differs from the header's sha256 %.12s...",
                    rd.filename, rd.task->hash, sha);
    al_reader_end(&rd);
    if (st) {
        al_task_free(rd.task);
        return st;
    }
    *out = rd.task;
    return AL_OK;
}

al_status al_task_load_jsonl(const char *data, size_t len, const char *filename, al_task **out, al_error *err) {
    return al_attnlab_read(data, len, filename, NULL, NULL, out, err);
}

al_status al_task_load_builtin(const char *dir, const char *id, al_task **out, al_error *err) {
    *out = NULL;
    if (!id || !id[0] || id[0] == '.' || strchr(id, '/') || strchr(id, '\\') || strlen(id) > 63)
        return al_err(err, AL_ERR_INVALID, "task id '%.80s' is not a file name", id ? id : "");
    char path[1024];
    int w = snprintf(path, sizeof path, "%s/%s.jsonl", dir && dir[0] ? dir : ".", id);
    if (w < 0 || (size_t)w >= sizeof path) return al_err(err, AL_ERR_INVALID, "task directory path too long");
    char *data = NULL;
    size_t len = 0;
    al_status st = al_read_file(path, &data, &len, err);
    if (st == AL_OK) st = al_task_load_jsonl(data, len, path, out, err);
    free(data);
    return st;
}

/* ---------------------------------------------------------------- writing */

typedef struct outbuf { char *s; size_t len, cap; int oom; } outbuf;

static void out_line(outbuf *o, cJSON *obj) {
    char *line = obj ? cJSON_PrintUnformatted(obj) : NULL;
    cJSON_Delete(obj);
    if (!line) {
        o->oom = 1;
        return;
    }
    size_t n = strlen(line);
    if (o->len + n + 2 > o->cap) {
        size_t cap = o->cap ? o->cap : 4096;
        while (cap < o->len + n + 2) cap *= 2;
        char *s = realloc(o->s, cap);
        if (!s) {
            o->oom = 1;
            free(line);
            return;
        }
        o->s = s;
        o->cap = cap;
    }
    memcpy(o->s + o->len, line, n);
    o->len += n;
    o->s[o->len++] = '\n';
    o->s[o->len] = '\0';
    free(line);
}

/* cJSON's adders return NULL when out of memory; one flag collects them. */
#define ADD(o, call) \
    do {             \
        if (!(call)) (o)->oom = 1; \
    } while (0)

static cJSON *example_json(const al_task *t, const al_task_example *e, const char *split, outbuf *o) {
    cJSON *row = cJSON_CreateObject();
    if (!row) return NULL;
    ADD(o, cJSON_AddStringToObject(row, "split", split));
    if (t->kind == AL_TASK_SEQUENCE) {
        ADD(o, cJSON_AddStringToObject(row, "text", e->text));
        if (e->text_pair) ADD(o, cJSON_AddStringToObject(row, "text_pair", e->text_pair));
        ADD(o, cJSON_AddStringToObject(row, "label", t->label_names[e->label]));
    } else {
        cJSON *w = cJSON_AddArrayToObject(row, "words"), *l = cJSON_AddArrayToObject(row, "word_labels");
        if (!w || !l) o->oom = 1;
        for (int i = 0; w && l && i < e->n_words; i++) {
            cJSON *a = cJSON_CreateString(e->words[i]);
            cJSON *b = e->word_labels[i] == AL_TASK_NO_LABEL ? cJSON_CreateNull()
                                                             : cJSON_CreateString(t->label_names[e->word_labels[i]]);
            if (!a || !b || !cJSON_AddItemToArray(w, a) || !cJSON_AddItemToArray(l, b)) o->oom = 1;
        }
    }
    if (e->group != AL_TASK_NO_GROUP) ADD(o, cJSON_AddNumberToObject(row, "group", e->group));
    return row;
}

al_status al_task_write_jsonl(const al_task *task, char **out, size_t *len, al_error *err) {
    *out = NULL;
    *len = 0;
    outbuf o = {0};
    char hash[65];
    al_task_hash(task, hash);
    cJSON *h = cJSON_CreateObject();
    if (h) {
        ADD(&o, cJSON_AddStringToObject(h, "task", task->id));
        ADD(&o, cJSON_AddStringToObject(h, "kind", al_task_kind_name(task->kind)));
        ADD(&o, cJSON_AddItemToObject(h, "labels",
                                      cJSON_CreateStringArray((const char *const *)task->label_names, task->n_labels)));
        ADD(&o, cJSON_AddStringToObject(h, "metric", task->metric));
        ADD(&o, cJSON_AddStringToObject(h, "sha256", hash));
        cJSON *counts = cJSON_AddObjectToObject(h, "counts");
        ADD(&o, counts);
        if (counts) {
            ADD(&o, cJSON_AddNumberToObject(counts, "train", task->n_train));
            ADD(&o, cJSON_AddNumberToObject(counts, "validation", task->n_validation));
        }
    }
    out_line(&o, h);
    for (int sp = 0; sp < 2 && !o.oom; sp++) {
        const al_task_example *ex = sp ? task->validation : task->train;
        int n = sp ? task->n_validation : task->n_train;
        for (int i = 0; i < n && !o.oom; i++) out_line(&o, example_json(task, &ex[i], sp ? "validation" : "train", &o));
    }
    if (o.oom) {
        free(o.s);
        return al_err(err, AL_ERR_OOM, "task %s: out of memory writing the task file", task->id);
    }
    *out = o.s;
    *len = o.len;
    return AL_OK;
}
