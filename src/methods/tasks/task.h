/* task.h: labelled tasks for probing classifiers on a frozen encoder (PAPA, Hassid et al. 2022).
 * Internal module (not in attnlab.h): the sweep and the JSON ops call it. docs/tasks.md describes the
 * built-in tasks, the task file format, the import formats and the content hash.
 *
 * A task is a kind (one label per sequence or pair, or one label per word), a list of label names, a
 * default metric and two splits of examples. Everything a task points to is owned by it (copied out
 * of the caller's buffers) and freed by al_task_free.
 *
 * Files:  task.c (lifecycle, labels, splits)   task_hash.c (content hash)
 *         task_jsonl.c (attnlab's task file: load, write, built-in tasks)
 *         task_import.c (formats, detection, the two-file / one-file flow, fuzz entry points)
 *         task_import_glue.c, task_import_conll.c, task_import_csv.c, task_import_jsonl.c (readers)
 *         task_import_rows.c (lines, fields, UTF-8 and the bad-row rule shared by the readers) */
#ifndef AL_METHODS_TASK_H
#define AL_METHODS_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "../../attnlab.h"

typedef enum { AL_TASK_SEQUENCE = 0, AL_TASK_TOKEN = 1 } al_task_kind;
typedef enum { AL_TASK_TRAIN = 0, AL_TASK_VALIDATION = 1 } al_task_split;

#define AL_TASK_MAX_LABELS 1000 /* more distinct labels than this: most likely the wrong column */
#define AL_TASK_NO_GROUP (-1)
#define AL_TASK_NO_LABEL (-1) /* token tasks: a word that is context only, with no label to predict */

typedef struct al_task_example {
    const char *text;              /* sequence tasks: the sentence (segment A); NULL for token tasks */
    const char *text_pair;         /* segment B, NULL for single sentences */
    int label;                     /* sequence tasks: index into label_names; token tasks: -1 */
    int n_words;                   /* token tasks: >= 1; sequence tasks: 0 */
    const char *const *words;      /* [n_words] */
    const int *word_labels;        /* [n_words] indices into label_names, or AL_TASK_NO_LABEL (at least
                                      one word of an example is labelled) */
    int group;                     /* AL_TASK_NO_GROUP, or a subgroup to split results by
                                      (agreement: nouns of the other number between subject and verb) */
} al_task_example;

typedef struct al_task {
    char id[64];
    al_task_kind kind;
    int n_labels;
    char **label_names;            /* [n_labels]; index = the label's class id */
    char metric[16];               /* a name of al_task_metrics */
    al_task_example *train;
    int n_train;
    al_task_example *validation;
    int n_validation;
    char hash[65];                 /* SHA-256 of the content, hex (task_hash.c, docs/tasks.md) */
    struct al_task_store *store;   /* private: the memory behind every pointer above */
} al_task;

void al_task_free(al_task *task);

/* ---- names */
const char *al_task_kind_name(al_task_kind kind);           /* "sequence" / "token" */
int al_task_kind_from_name(const char *name);                /* -1 when unknown */
int al_task_metric_valid(const char *name);                  /* 1 for a name of al_task_metrics */
const char *al_task_split_name(al_task_split split);        /* "train" / "validation" */

/* ---- content hash: SHA-256 of the canonical serialisation of kind, labels and both splits (not the
 * id, not the metric): docs/tasks.md, "Content hash". Writes 64 hex digits and a NUL. */
void al_task_hash(const al_task *task, char hex[65]);

/* ---- attnlab's task file (JSONL: a header line, then one example a line; docs/tasks.md) */

/* Parses a task file. `filename` names the file in messages. When the header carries "sha256" it
 * must equal the computed content hash. */
al_status al_task_load_jsonl(const char *data, size_t len, const char *filename, al_task **out,
                             al_error *err);
/* Reads <dir>/<id>.jsonl (the built-in tasks live in build/data/tasks). */
al_status al_task_load_builtin(const char *dir, const char *id, al_task **out, al_error *err);
/* The built-in tasks (task_jsonl.c), one row each, ended by a row with id NULL: the one list of them.
 * The "version" reply publishes it (src/api/ops.c): the page's task choices and the scripts read it there.
 * label: what the page shows, with the metric in brackets. */
typedef struct al_task_builtin {
    const char *id, *label;
} al_task_builtin;
extern const al_task_builtin al_task_builtins[];

/* The task metrics (task.c), one row each, ended by a row with name NULL: the one list of their names,
 * published by the "version" reply as the built-in tasks are. [min, max]: the values a score can take
 * (a chart's axis stays inside them). */
typedef struct al_task_metric {
    const char *name, *summary;
    double min, max;
} al_task_metric;
extern const al_task_metric al_task_metrics[];
/* Writes the task in the same format (header with "sha256"; examples train first), malloc'd and
 * NUL-terminated; *len excludes the NUL. */
al_status al_task_write_jsonl(const al_task *task, char **out, size_t *len, al_error *err);

/* ---- import (task_import*.c) */

#define AL_TASK_REPORT_MESSAGES 5

typedef struct al_task_import_options {
    const char *format;       /* NULL or "auto": detected from the content (docs/tasks.md); else
                                 "attnlab", "cola", "sst2", "mrpc", "mnli", "rte", "qnli", "qqp",
                                 "conll2003", "csv", "jsonl" */
    const char *id;           /* task id; NULL: the format's name */
    const char *metric;       /* NULL: the format's default */
    /* csv and jsonl: the columns (keys) to read; text and label are required */
    const char *text_column, *text_pair_column, *label_column;
    char delimiter;           /* csv: ',' (or '\t', ';') */
    /* csv, jsonl, conll2003: a fixed label list (a label outside it is a bad row); NULL: labels get
     * their index in first-seen order (train file first) */
    const char *const *labels;
    int n_labels;
    const char *conll_column; /* conll2003: "ner" (default), "pos" or "chunk" */
    int skip_bad_rows;        /* 0: the first malformed row stops the import with its error;
                                 1: malformed rows are skipped and counted in the report */
    double validation_fraction; /* one file only: the share moved to validation, in (0, 1) */
    uint64_t seed;            /* one file only: seeds that choice */
} al_task_import_options;

al_task_import_options al_task_import_default_options(void); /* auto, ',', ner, 0.1, seed 0 */

typedef struct al_task_import_report {
    int n_rows;       /* examples kept, both files */
    int n_bad;        /* malformed rows skipped (skip mode); a bad sentence of CoNLL counts once */
    int n_messages;   /* the first AL_TASK_REPORT_MESSAGES bad-row messages, "file: line N: why" */
    char messages[AL_TASK_REPORT_MESSAGES][256];
} al_task_import_report;

/* Imports a task from a train file and a validation file, or (val_data NULL) from one file split by
 * opt->validation_fraction and opt->seed. Names are for messages. report may be NULL. The buffers
 * need no NUL and are not kept. */
al_status al_task_import(const al_task_import_options *opt, const char *train_name,
                         const char *train_data, size_t train_len, const char *val_name,
                         const char *val_data, size_t val_len, al_task **out,
                         al_task_import_report *report, al_error *err);

/* The format auto-detection would choose for these bytes, or NULL (the error says why). */
const char *al_task_detect_format(const char *data, size_t len, const char *filename, al_error *err);

/* Fuzz entry points, one per reader: bytes in, everything freed, the status out (of the skip-mode
 * run). Each imports the bytes as one file (validation fraction 0.5) strictly and then in skip mode;
 * csv and jsonl read the columns "text" and "label". */
al_status al_task_fuzz_attnlab(const uint8_t *data, size_t size);
al_status al_task_fuzz_glue(const uint8_t *data, size_t size); /* format detected from the header */
al_status al_task_fuzz_conll(const uint8_t *data, size_t size);
al_status al_task_fuzz_csv(const uint8_t *data, size_t size);
al_status al_task_fuzz_jsonl(const uint8_t *data, size_t size);

#endif
