/* task_import_glue.c: GLUE's TSV files (docs/tasks.md, "GLUE"). Tab-separated, no quoting (GLUE reads
 * them with quoting off), one row a line, a header row except CoLA. Columns are found by their header
 * names, so MNLI's train and dev files (different numbers of annotator columns) both read. Test files
 * have no label column and are refused. */
#include <stdio.h>
#include <string.h>

#include "task_import.h"

enum { MAX_COLUMNS = 32 };

typedef struct glue_spec {
    const char *name;
    const char *text, *pair, *label; /* header names; CoLA (no header) uses fixed positions */
    int n_labels;
    const char *raw[3];              /* label values as written in the file */
    const char *names[3];            /* the task's label names, same order */
    const char *metric;
} glue_spec;

static const glue_spec SPECS[] = {
    {"cola", NULL, NULL, NULL, 2, {"0", "1"}, {"unacceptable", "acceptable"}, "mcc"},
    {"sst2", "sentence", NULL, "label", 2, {"0", "1"}, {"negative", "positive"}, "accuracy"},
    {"mrpc", "#1 String", "#2 String", "Quality", 2, {"0", "1"}, {"not_equivalent", "equivalent"}, "f1"},
    {"mnli", "sentence1", "sentence2", "gold_label", 3, {"entailment", "neutral", "contradiction"},
     {"entailment", "neutral", "contradiction"}, "accuracy"},
    {"rte", "sentence1", "sentence2", "label", 2, {"entailment", "not_entailment"},
     {"entailment", "not_entailment"}, "accuracy"},
    {"qnli", "question", "sentence", "label", 2, {"entailment", "not_entailment"},
     {"entailment", "not_entailment"}, "accuracy"},
    {"qqp", "question1", "question2", "is_duplicate", 2, {"0", "1"}, {"not_duplicate", "duplicate"}, "f1"},
};
enum { COLA_FIELDS = 4, COLA_LABEL = 1, COLA_TEXT = 3 };

static const glue_spec *find_spec(const char *format) {
    for (size_t i = 0; format && i < sizeof SPECS / sizeof SPECS[0]; i++)
        if (strcmp(SPECS[i].name, format) == 0) return &SPECS[i];
    return NULL;
}

int al_glue_known(const char *format) { return find_spec(format) != NULL; }

static int column(const al_field *f, int n, const char *name) {
    for (int i = 0; i < n && i < MAX_COLUMNS; i++)
        if (al_field_is(f[i], name)) return i;
    return -1;
}

static int is_01(al_field f) { return al_field_is(f, "0") || al_field_is(f, "1"); }

const char *al_glue_detect(const char *line, size_t n, int *is_test) {
    al_field f[MAX_COLUMNS];
    int nf = al_split_fields(line, n, '\t', f, MAX_COLUMNS);
    *is_test = 0;
#define HAS(name) (column(f, nf, name) >= 0)
    const char *fmt = NULL;
    const char *label = NULL;
    if (HAS("sentence1") && HAS("sentence2") && (HAS("gold_label") || HAS("genre"))) fmt = "mnli", label = "gold_label";
    else if (HAS("#1 String") && HAS("#2 String")) fmt = "mrpc", label = "Quality";
    else if (HAS("question1") && HAS("question2")) fmt = "qqp", label = "is_duplicate";
    else if (HAS("question") && HAS("sentence")) fmt = "qnli", label = "label";
    else if (HAS("sentence1") && HAS("sentence2")) fmt = "rte", label = "label";
    else if (HAS("sentence")) fmt = "sst2", label = "label";
    else if (nf == COLA_FIELDS && is_01(f[COLA_LABEL])) return "cola";
    if (fmt && !HAS(label)) *is_test = 1;
#undef HAS
    return fmt;
}

al_status al_glue_prepare(al_task *task, const char *format, const char *metric, al_error *err) {
    const glue_spec *sp = find_spec(format);
    if (!sp) return al_err(err, AL_ERR_INVALID, "'%s' is not a GLUE format", format ? format : "");
    al_status st = al_task_fix_labels(task, sp->names, sp->n_labels, err);
    if (st == AL_OK) st = al_task_set_metric(task, metric ? metric : sp->metric, err);
    return st;
}

/* "a, b, c" of the header's fields, each cut at 40 bytes, the whole cut to cap. */
static void list_fields(const al_field *f, int nf, char *out, size_t cap) {
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < nf && i < MAX_COLUMNS; i++) {
        int w = snprintf(out + used, cap - used, "%s%.*s", i ? ", " : "", (int)(f[i].n > 40 ? 40 : f[i].n), f[i].s);
        if (w < 0 || (size_t)w >= cap - used) break;
        used += (size_t)w;
    }
}

al_status al_glue_read(al_task_reader *rd, const char *format, al_error *err) {
    const glue_spec *sp = find_spec(format);
    if (!sp) return al_err(err, AL_ERR_INVALID, "'%s' is not a GLUE format", format ? format : "");
    al_field f[MAX_COLUMNS];
    const char *s;
    size_t n;
    int n_cols = COLA_FIELDS, c_text = COLA_TEXT, c_pair = -1, c_label = COLA_LABEL;
    int have_line = al_reader_line(rd, &s, &n);
    if (!have_line) return al_err(err, AL_ERR_FORMAT, "%s: empty file", rd->filename);
    int is_test = 0;
    const char *seen = al_glue_detect(s, n, &is_test);
    int nf = al_split_fields(s, n, '\t', f, MAX_COLUMNS);
    char cols[200];
    list_fields(f, nf, cols, sizeof cols);
    if (is_test)
        return al_err(err, AL_ERR_FORMAT,
                      "%s: line 1: a GLUE test file (columns: %s): it has no labels; use the train or dev file",
                      rd->filename, cols);
    if (sp->text) { /* a header row names the columns */
        c_text = column(f, nf, sp->text);
        c_pair = sp->pair ? column(f, nf, sp->pair) : -1;
        c_label = column(f, nf, sp->label);
        if (c_text < 0 || c_label < 0 || (sp->pair && c_pair < 0) || nf > MAX_COLUMNS)
            return al_err(err, AL_ERR_FORMAT, "%s: line 1: not a GLUE %s header: expected the columns %s%s%s and %s, found: %s",
                          rd->filename, sp->name, sp->text, sp->pair ? ", " : "", sp->pair ? sp->pair : "",
                          sp->label, cols);
        n_cols = nf;
        have_line = al_reader_line(rd, &s, &n);
    } else if (seen && strcmp(seen, "cola") != 0) {
        return al_err(err, AL_ERR_FORMAT, "%s: line 1: CoLA files have no header, but this is a GLUE %s header (%s)",
                      rd->filename, seen, cols);
    }
    for (; have_line; have_line = al_reader_line(rd, &s, &n)) {
        if (n == 0) continue; /* an empty line is not a row */
        nf = al_split_fields(s, n, '\t', f, MAX_COLUMNS);
        al_status st;
        if (nf != n_cols) {
            st = al_reader_bad(rd, rd->line, err, "expected %d tab-separated fields%s, found %d", n_cols,
                               sp->text ? " (as the header)" : " (source, label, original label, sentence)", nf);
            if (st) return st;
            continue;
        }
        int k = -1;
        for (int i = 0; i < sp->n_labels; i++)
            if (al_field_is(f[c_label], sp->raw[i])) k = i;
        if (k < 0) {
            char allowed[64];
            snprintf(allowed, sizeof allowed, "%s, %s%s%s", sp->raw[0], sp->raw[1], sp->n_labels > 2 ? ", " : "",
                     sp->n_labels > 2 ? sp->raw[2] : "");
            st = al_reader_bad(rd, rd->line, err, "label '%.*s' (column %s) is not one of %s",
                               (int)(f[c_label].n > 40 ? 40 : f[c_label].n), f[c_label].s,
                               sp->label ? sp->label : "2", allowed);
            if (st) return st;
            continue;
        }
        const char *name = sp->names[k];
        st = al_reader_sequence(rd, rd->line, f[c_text].s, f[c_text].n, c_pair >= 0 ? f[c_pair].s : NULL,
                                c_pair >= 0 ? f[c_pair].n : 0, name, strlen(name), AL_TASK_NO_GROUP,
                                sp->text ? sp->text : "sentence", sp->pair ? sp->pair : "", err);
        if (st) return st;
    }
    return AL_OK;
}
