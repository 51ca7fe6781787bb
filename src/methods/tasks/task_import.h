/* task_import.h: the readers behind al_task_import (task.h), one per file family. Each reads one
 * file into rd->split of rd->task, whose kind, labels and metric the caller has set up with the
 * reader's *_prepare function. Malformed rows follow the rule of task_import_rows.h. */
#ifndef AL_METHODS_TASK_IMPORT_H
#define AL_METHODS_TASK_IMPORT_H

#include "task_import_rows.h"

/* GLUE TSV (task_import_glue.c): "cola", "sst2", "mrpc", "mnli", "rte", "qnli", "qqp". */
int al_glue_known(const char *format);
/* The GLUE format a first line (header, or CoLA's first row) belongs to, or NULL. *is_test is set
 * when it is the header of a GLUE test file (no label column). */
const char *al_glue_detect(const char *line, size_t n, int *is_test);
al_status al_glue_prepare(al_task *task, const char *format, const char *metric, al_error *err);
al_status al_glue_read(al_task_reader *rd, const char *format, al_error *err);

/* CoNLL-2003 (task_import_conll.c): column "ner" (default), "pos" or "chunk". */
int al_conll_column(const char *name); /* 1 pos, 2 chunk, 3 ner; -1 when unknown */
al_status al_conll_prepare(al_task *task, const al_task_import_options *opt, al_error *err);
al_status al_conll_read(al_task_reader *rd, al_error *err);
int al_conll_looks_like(const char *line, size_t n);

/* CSV with a header row (task_import_csv.c) and JSON lines (task_import_jsonl.c), sequence tasks
 * with chosen columns. prepare fixes the label list when the options give one. */
al_status al_columns_prepare(al_task *task, const al_task_import_options *opt, al_error *err);
al_status al_csv_read(al_task_reader *rd, al_error *err);
al_status al_jsonl_read(al_task_reader *rd, al_error *err);

/* attnlab's task file (task_jsonl.c): reads the header into a new task, then the examples. */
al_status al_attnlab_read(const char *data, size_t len, const char *filename,
                          const al_task_import_options *opt, al_task_import_report *report,
                          al_task **out, al_error *err);

#endif
