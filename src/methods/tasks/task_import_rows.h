/* task_import_rows.h: what every task reader shares (task_import_rows.c): a line cursor over the
 * caller's bytes, fields, the UTF-8 check, and the bad-row rule of docs/tasks.md: a malformed row
 * stops the import with "file: line N: why", or, in skip mode, is counted (with the first few
 * messages kept in the report) and skipped. Nothing is dropped silently. */
#ifndef AL_METHODS_TASK_IMPORT_ROWS_H
#define AL_METHODS_TASK_IMPORT_ROWS_H

#include "../../core/error.h"
#include "task_build.h"

typedef struct al_task_reader {
    al_task *task;
    al_task_split split;               /* where the rows go */
    const char *filename;              /* for messages */
    const al_task_import_options *opt;
    al_task_import_report *report;     /* never NULL */
    const char *data;                  /* the file, a UTF-8 byte order mark skipped */
    size_t len, pos;
    int line;                          /* number of the line last returned, 1-based */
    void *utf8;                        /* scratch of the UTF-8 check */
} al_task_reader;

void al_reader_init(al_task_reader *rd, al_task *task, al_task_split split, const char *filename,
                    const char *data, size_t len, const al_task_import_options *opt,
                    al_task_import_report *report);
void al_reader_end(al_task_reader *rd);

/* The next line without its "\n" or "\r\n"; returns 0 at the end of the data. */
int al_reader_line(al_task_reader *rd, const char **s, size_t *n);
/* Does a line hold only spaces and tabs? */
int al_blank(const char *s, size_t n);

/* A malformed row at `line`: strict mode sets err to "file: line N: why" and returns AL_ERR_FORMAT;
 * skip mode counts it and returns AL_OK (the caller then skips the row). */
al_status al_reader_bad(al_task_reader *rd, int line, al_error *err, const char *fmt, ...) AL_PRINTF(4, 5);
al_status al_reader_oom(al_task_reader *rd, al_error *err);

/* 0 when s[0, n) is valid UTF-8 without NUL bytes; 1 with the reason in `why`; -1 out of memory. */
int al_reader_text_check(al_task_reader *rd, const char *s, size_t n, char *why, size_t why_len);

/* The index of label s[0, n) into *index; a name outside a fixed list is a bad row (then *index is
 * -1 in skip mode); too many distinct labels stops the import. */
al_status al_reader_label(al_task_reader *rd, int line, const char *s, size_t n, int *index, al_error *err);

/* Adds one sequence example after checking it (non-empty text, and pair when not NULL; UTF-8; a known
 * label): a failed check is a bad row. `what_text` / `what_pair` name the columns in messages. */
al_status al_reader_sequence(al_task_reader *rd, int line, const char *text, size_t text_len,
                             const char *pair, size_t pair_len, const char *label, size_t label_len,
                             int group, const char *what_text, const char *what_pair, al_error *err);

/* Checks a JSON line before parsing: valid UTF-8 and no \u0000 escape (which would cut a C string
 * short). 0, 1 with the reason in `why`, or -1 out of memory. */
int al_reader_json_check(al_task_reader *rd, const char *s, size_t n, char *why, size_t why_len);

/* Parses one line as a JSON value; NULL when it is not JSON or has anything but blanks after it. */
struct cJSON *al_json_line(const char *s, size_t n);

typedef struct al_field { const char *s; size_t n; } al_field;
/* Splits s[0, n) at every `sep`; stores at most `max` fields and returns how many there are. */
int al_split_fields(const char *s, size_t n, char sep, al_field *out, int max);
/* Splits at runs of spaces and tabs (CoNLL); same contract. */
int al_split_blanks(const char *s, size_t n, al_field *out, int max);
int al_field_is(al_field f, const char *lit);

#endif
