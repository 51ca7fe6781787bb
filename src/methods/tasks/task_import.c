/* task_import.c: al_task_import (task.h): picks the reader for a format (given, or detected from the
 * first line), reads the train file and the validation file into one task (one label list, first-seen
 * order across train then validation unless fixed), or one file split with a seeded fraction; and the
 * fuzz entry points. docs/tasks.md, "Importing". */
#include <stdio.h>
#include <string.h>

#include "cJSON.h"
#include "task_import.h"

al_task_import_options al_task_import_default_options(void) {
    al_task_import_options o;
    memset(&o, 0, sizeof o);
    o.format = "auto";
    o.text_column = "text";
    o.label_column = "label";
    o.delimiter = ',';
    o.conll_column = "ner";
    o.validation_fraction = 0.1;
    return o;
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = s ? strlen(s) : 0, m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

const char *al_task_detect_format(const char *data, size_t len, const char *filename, al_error *err) {
    const char *name = filename && filename[0] ? filename : "(input)";
    al_task_import_options opt = al_task_import_default_options();
    al_task_import_report rep = {0};
    al_task_reader rd;
    al_reader_init(&rd, NULL, AL_TASK_TRAIN, name, data, len, &opt, &rep);
    const char *s = NULL;
    size_t n = 0;
    int have;
    while ((have = al_reader_line(&rd, &s, &n)) && al_blank(s, n)) {
    }
    const char *fmt = NULL;
    int reported = 0;
    if (!have) {
        reported = 1;
        al_err(err, AL_ERR_FORMAT, "%s: empty file", name);
    } else if (s[0] == '{') {
        cJSON *obj = al_json_line(s, n);
        fmt = cJSON_IsObject(obj) && cJSON_GetObjectItemCaseSensitive(obj, "task") &&
                      cJSON_GetObjectItemCaseSensitive(obj, "kind")
                  ? "attnlab"
                  : "jsonl";
        cJSON_Delete(obj);
    } else if (memchr(s, '\t', n)) {
        int is_test = 0;
        fmt = al_glue_detect(s, n, &is_test);
        if (is_test) {
            fmt = NULL;
            reported = 1;
            al_err(err, AL_ERR_FORMAT, "%s: line %d: a GLUE test file: it has no labels; use the train or dev file",
                   name, rd.line);
        } else if (!fmt && ends_with(name, ".csv")) {
            fmt = "csv";
        }
    } else if (al_conll_looks_like(s, n)) {
        fmt = "conll2003";
    } else if (ends_with(name, ".csv") || memchr(s, ',', n)) {
        fmt = "csv";
    }
    if (!fmt && !reported)
        al_err(err, AL_ERR_FORMAT,
               "%s: cannot tell the format from line %d: give one of attnlab, cola, sst2, mrpc, mnli, rte, qnli, "
               "qqp, conll2003, csv, jsonl",
               name, rd.line);
    al_reader_end(&rd);
    return fmt;
}

/* Sets up the task for a format: kind, fixed labels, metric. */
static al_status prepare(const char *fmt, const al_task_import_options *opt, al_task **out, al_error *err) {
    char id[64];
    int token = strcmp(fmt, "conll2003") == 0;
    if (opt->id && strlen(opt->id) >= sizeof id)
        return al_err(err, AL_ERR_INVALID, "task id '%.80s' is longer than 63 characters", opt->id);
    if (opt->id) snprintf(id, sizeof id, "%s", opt->id);
    else if (token) snprintf(id, sizeof id, "conll2003_%s", opt->conll_column ? opt->conll_column : "ner");
    else snprintf(id, sizeof id, "%s", fmt);
    al_status st = al_task_new(id, token ? AL_TASK_TOKEN : AL_TASK_SEQUENCE, out, err);
    if (st) return st;
    if (al_glue_known(fmt)) st = al_glue_prepare(*out, fmt, opt->metric, err);
    else if (token) st = al_conll_prepare(*out, opt, err);
    else st = al_columns_prepare(*out, opt, err);
    if (st) {
        al_task_free(*out);
        *out = NULL;
    }
    return st;
}

static al_status read_file(al_task *task, const char *fmt, al_task_split split, const char *name, const char *data,
                           size_t len, const al_task_import_options *opt, al_task_import_report *report,
                           al_error *err) {
    al_task_reader rd;
    al_reader_init(&rd, task, split, name, data, len, opt, report);
    al_status st;
    if (al_glue_known(fmt)) st = al_glue_read(&rd, fmt, err);
    else if (strcmp(fmt, "conll2003") == 0) st = al_conll_read(&rd, err);
    else if (strcmp(fmt, "csv") == 0) st = al_csv_read(&rd, err);
    else st = al_jsonl_read(&rd, err);
    al_reader_end(&rd);
    return st;
}

static int known_format(const char *fmt) {
    return al_glue_known(fmt) || strcmp(fmt, "conll2003") == 0 || strcmp(fmt, "csv") == 0 ||
           strcmp(fmt, "jsonl") == 0 || strcmp(fmt, "attnlab") == 0;
}

al_status al_task_import(const al_task_import_options *opt, const char *train_name, const char *train_data,
                         size_t train_len, const char *val_name, const char *val_data, size_t val_len,
                         al_task **out, al_task_import_report *report, al_error *err) {
    *out = NULL;
    al_task_import_options defaults = al_task_import_default_options();
    if (!opt) opt = &defaults;
    al_task_import_report local;
    if (!report) report = &local;
    memset(report, 0, sizeof *report);
    if (!train_data && train_len) return al_err(err, AL_ERR_INVALID, "import: no data for the train file");
    if (!val_data && val_len) return al_err(err, AL_ERR_INVALID, "import: no data for the validation file");
    const char *tname = train_name && train_name[0] ? train_name : "train";
    const char *vname = val_name && val_name[0] ? val_name : "validation";
    const char *fmt = opt->format && opt->format[0] && strcmp(opt->format, "auto") != 0 ? opt->format : NULL;
    if (!fmt && !(fmt = al_task_detect_format(train_data, train_len, tname, err))) return AL_ERR_FORMAT;
    if (!known_format(fmt))
        return al_err(err, AL_ERR_INVALID,
                      "import: unknown format '%.40s' (attnlab, cola, sst2, mrpc, mnli, rte, qnli, qqp, conll2003, csv, jsonl)",
                      fmt);
    if (strcmp(fmt, "attnlab") == 0) { /* one file holds both splits */
        if (val_data)
            return al_err(err, AL_ERR_INVALID, "import: %s is an attnlab task file, which holds both splits: give it alone",
                          tname);
        return al_attnlab_read(train_data, train_len, tname, opt, report, out, err);
    }
    if (!val_data && !(opt->validation_fraction > 0.0 && opt->validation_fraction < 1.0))
        return al_err(err, AL_ERR_INVALID, "import: one file needs a validation_fraction in (0, 1), not %g",
                      opt->validation_fraction);
    al_task *t = NULL;
    al_status st = prepare(fmt, opt, &t, err);
    if (st == AL_OK) st = read_file(t, fmt, AL_TASK_TRAIN, tname, train_data, train_len, opt, report, err);
    if (st == AL_OK && val_data)
        st = read_file(t, fmt, AL_TASK_VALIDATION, vname, val_data, val_len, opt, report, err);
    /* an empty file is named: "dev.conll: no validation examples", not "import: ...", and a train file too
     * small to split off a validation part is named too */
    if (st == AL_OK && t->n_train < 1) st = al_err(err, AL_ERR_FORMAT, "%s: no train examples", tname);
    if (st == AL_OK && val_data && t->n_validation < 1)
        st = al_err(err, AL_ERR_FORMAT, "%s: no validation examples", vname);
    if (st == AL_OK && !val_data && (st = al_task_split_off(t, opt->validation_fraction, opt->seed, err)))
        al_err_prefix(err, tname);
    if (st == AL_OK) st = al_task_finish(t, val_data ? "import" : tname, err);
    if (st) {
        al_task_free(t);
        return st;
    }
    *out = t;
    return AL_OK;
}

/* ---------------------------------------------------------------- fuzz entry points */

static al_status fuzz(const char *format, const uint8_t *data, size_t size) {
    al_task_import_options opt = al_task_import_default_options();
    opt.format = format;
    opt.validation_fraction = 0.5;
    opt.text_pair_column = NULL;
    al_status last = AL_OK;
    for (int skip = 0; skip < 2; skip++) {
        opt.skip_bad_rows = skip;
        al_task *t = NULL;
        al_task_import_report rep;
        al_error err = {0};
        last = al_task_import(&opt, "fuzz", (const char *)data, size, NULL, NULL, 0, &t, &rep, &err);
        al_task_free(t);
    }
    return last;
}

al_status al_task_fuzz_attnlab(const uint8_t *data, size_t size) { return fuzz("attnlab", data, size); }
al_status al_task_fuzz_glue(const uint8_t *data, size_t size) {
    al_error err = {0};
    const char *fmt = al_task_detect_format((const char *)data, size, "fuzz.tsv", &err);
    return fuzz(fmt && al_glue_known(fmt) ? fmt : "cola", data, size);
}
al_status al_task_fuzz_conll(const uint8_t *data, size_t size) { return fuzz("conll2003", data, size); }
al_status al_task_fuzz_csv(const uint8_t *data, size_t size) { return fuzz("csv", data, size); }
al_status al_task_fuzz_jsonl(const uint8_t *data, size_t size) { return fuzz("jsonl", data, size); }
