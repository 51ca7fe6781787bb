/* task_import_csv.c: CSV after RFC 4180 (docs/tasks.md, "CSV"): a header row, fields separated by the
 * delimiter (',' unless chosen), a field in double quotes may hold delimiters, line breaks and "" for
 * a quote; a quote inside an unquoted field or text after a closing quote is malformed. The text,
 * pair and label columns are chosen by their header names. Also the column setup shared with the
 * JSON-lines reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task_import.h"

al_status al_columns_prepare(al_task *task, const al_task_import_options *opt, al_error *err) {
    if (!opt->text_column || !opt->text_column[0] || !opt->label_column || !opt->label_column[0])
        return al_err(err, AL_ERR_INVALID, "csv and jsonl imports need text_column and label_column");
    al_status st = AL_OK;
    if (opt->labels) st = al_task_fix_labels(task, opt->labels, opt->n_labels, err);
    if (st == AL_OK) st = al_task_set_metric(task, opt->metric ? opt->metric : "accuracy", err);
    return st;
}

/* One record: the unescaped bytes of its fields, one after another, and where each starts. */
typedef struct record {
    char *buf;
    size_t len, cap;
    size_t *start;
    int n, cap_fields;
} record;

static int rec_byte(record *r, char c) {
    if (r->len == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 256;
        char *b = realloc(r->buf, cap);
        if (!b) return -1;
        r->buf = b;
        r->cap = cap;
    }
    r->buf[r->len++] = c;
    return 0;
}

static int rec_field(record *r) {
    if (r->n == r->cap_fields) {
        int cap = r->cap_fields ? r->cap_fields * 2 : 16;
        size_t *s = realloc(r->start, (size_t)(cap + 1) * sizeof *s);
        if (!s) return -1;
        r->start = s;
        r->cap_fields = cap;
    }
    r->start[r->n++] = r->len;
    return 0;
}

static al_field rec_get(const record *r, int i) {
    size_t end = i + 1 < r->n ? r->start[i + 1] : r->len;
    return (al_field){r->buf + r->start[i], end - r->start[i]};
}

enum { REC_END = 0, REC_OK = 1, REC_BAD = 2, REC_OOM = 3 };

/* Parses the record at rd->pos. REC_BAD leaves the reason in `why` and rd->pos after the line where
 * the error was found. *first_line receives the line the record starts on. */
static int parse_record(al_task_reader *rd, char delim, record *r, int *first_line, char *why, size_t why_len) {
    const char *d = rd->data;
    size_t n = rd->len, i = rd->pos;
    r->len = 0;
    r->n = 0;
    if (i >= n) return REC_END;
    *first_line = rd->line + 1;
    int line = rd->line + 1;
    if (rec_field(r)) return REC_OOM;
    for (;;) {
        if (i < n && d[i] == '"') { /* quoted field */
            int open_line = line;
            i++;
            for (;;) {
                if (i >= n) {
                    snprintf(why, why_len, "quoted field opened on line %d is never closed", open_line);
                    rd->pos = n;
                    rd->line = line;
                    return REC_BAD;
                }
                if (d[i] == '"') {
                    if (i + 1 < n && d[i + 1] == '"') {
                        if (rec_byte(r, '"')) return REC_OOM;
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                if (d[i] == '\n') line++;
                if (rec_byte(r, d[i])) return REC_OOM;
                i++;
            }
            int at_end = i == n || d[i] == delim || d[i] == '\n' || (d[i] == '\r' && (i + 1 == n || d[i + 1] == '\n'));
            if (!at_end) {
                snprintf(why, why_len, "text after the closing quote of a quoted field");
                goto bad;
            }
        } else { /* unquoted field: up to the delimiter or the line end */
            while (i < n && d[i] != delim && d[i] != '\n') {
                if (d[i] == '"') {
                    snprintf(why, why_len, "a quote inside an unquoted field (quote the whole field and double the quote)");
                    goto bad;
                }
                if (d[i] == '\r' && (i + 1 == n || d[i + 1] == '\n')) break;
                if (rec_byte(r, d[i])) return REC_OOM;
                i++;
            }
        }
        if (i < n && d[i] == delim) {
            i++;
            if (rec_field(r)) return REC_OOM;
            continue;
        }
        /* the record's end: "\r\n", "\n", "\r" at the very end, or the end of the data */
        if (i < n && d[i] == '\r') i++;
        if (i < n && d[i] == '\n') i++;
        rd->pos = i;
        rd->line = line;
        return REC_OK;
    }
bad:;
    const char *nl = memchr(d + i, '\n', n - i);
    rd->pos = nl ? (size_t)(nl - d) + 1 : n;
    rd->line = line;
    return REC_BAD;
}

static int find_column(const record *r, const char *name) {
    for (int i = 0; i < r->n; i++)
        if (al_field_is(rec_get(r, i), name)) return i;
    return -1;
}

static al_status read_records(al_task_reader *rd, record *r, al_error *err) {
    const al_task_import_options *opt = rd->opt;
    char delim = opt->delimiter ? opt->delimiter : ',';
    if (delim == '"' || delim == '\n' || delim == '\r')
        return al_err(err, AL_ERR_INVALID, "csv: the delimiter cannot be a quote or a line break");
    char why[160];
    int line = 0;
    int rc;
    while ((rc = parse_record(rd, delim, r, &line, why, sizeof why)) == REC_OK && r->n == 1 && r->len == 0) {
    } /* blank lines before the header */
    if (rc == REC_OOM) return al_reader_oom(rd, err);
    if (rc == REC_END) return al_err(err, AL_ERR_FORMAT, "%s: empty file (a header row is needed)", rd->filename);
    if (rc == REC_BAD) return al_err(err, AL_ERR_FORMAT, "%s: line %d: header row: %s", rd->filename, line, why);
    int n_cols = r->n;
    int c_text = find_column(r, opt->text_column);
    int c_pair = opt->text_pair_column && opt->text_pair_column[0] ? find_column(r, opt->text_pair_column) : -2;
    int c_label = find_column(r, opt->label_column);
    if (c_text < 0 || c_pair == -1 || c_label < 0) {
        const char *missing = c_text < 0 ? opt->text_column : c_pair == -1 ? opt->text_pair_column : opt->label_column;
        char cols[200] = "";
        size_t used = 0;
        for (int i = 0; i < r->n; i++) {
            al_field f = rec_get(r, i);
            int w = snprintf(cols + used, sizeof cols - used, "%s%.*s", i ? ", " : "", (int)(f.n > 40 ? 40 : f.n), f.s);
            if (w < 0 || (size_t)w >= sizeof cols - used) break;
            used += (size_t)w;
        }
        return al_err(err, AL_ERR_FORMAT, "%s: line %d: no column '%.60s' in the header (columns: %s)", rd->filename,
                      line, missing, cols);
    }
    while ((rc = parse_record(rd, delim, r, &line, why, sizeof why)) != REC_END) {
        al_status st;
        if (rc == REC_OOM) return al_reader_oom(rd, err);
        if (rc == REC_BAD) {
            if ((st = al_reader_bad(rd, line, err, "%s", why))) return st;
            continue;
        }
        if (r->n == 1 && r->len == 0) continue; /* an empty line is not a row */
        if (r->n != n_cols) {
            if ((st = al_reader_bad(rd, line, err, "expected %d fields (as the header), found %d", n_cols, r->n)))
                return st;
            continue;
        }
        al_field text = rec_get(r, c_text), label = rec_get(r, c_label);
        al_field pair = c_pair >= 0 ? rec_get(r, c_pair) : (al_field){NULL, 0};
        st = al_reader_sequence(rd, line, text.s, text.n, c_pair >= 0 ? (pair.s ? pair.s : "") : NULL, pair.n, label.s, label.n, AL_TASK_NO_GROUP,
                                opt->text_column, c_pair >= 0 ? opt->text_pair_column : "", err);
        if (st) return st;
    }
    return AL_OK;
}

al_status al_csv_read(al_task_reader *rd, al_error *err) {
    record r = {0};
    al_status st = read_records(rd, &r, err);
    free(r.buf);
    free(r.start);
    return st;
}
