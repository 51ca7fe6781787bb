/* task_import_conll.c: CoNLL-2003 files (docs/tasks.md, "CoNLL-2003"): one word a line with four
 * space-separated columns (word, POS, chunk, NER), blank lines between sentences, "-DOCSTART-" lines
 * between documents. One sentence is one example of a token task; a malformed line makes its whole
 * sentence a bad row (counted once). */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "task_import.h"

enum { CONLL_FIELDS = 4 };

int al_conll_column(const char *name) {
    if (!name || strcmp(name, "ner") == 0) return 3;
    if (strcmp(name, "pos") == 0) return 1;
    if (strcmp(name, "chunk") == 0) return 2;
    return -1;
}

int al_conll_looks_like(const char *line, size_t n) {
    al_field f[CONLL_FIELDS + 1];
    int nf = al_split_blanks(line, n, f, CONLL_FIELDS + 1);
    if (nf >= 1 && al_field_is(f[0], "-DOCSTART-")) return 1;
    return nf == CONLL_FIELDS && !memchr(line, ',', n) && !memchr(line, '\t', n);
}

al_status al_conll_prepare(al_task *task, const al_task_import_options *opt, al_error *err) {
    int col = al_conll_column(opt->conll_column);
    if (col < 0)
        return al_err(err, AL_ERR_INVALID, "conll_column '%.40s' is not ner, pos or chunk", opt->conll_column);
    al_status st = AL_OK;
    if (opt->labels) st = al_task_fix_labels(task, opt->labels, opt->n_labels, err);
    if (st == AL_OK) st = al_task_set_metric(task, opt->metric ? opt->metric : col == 1 ? "token_accuracy" : "entity_f1", err);
    return st;
}

/* The words of the sentence being read, as offsets into the file, and their label indices. */
typedef struct sentence {
    al_field *words;
    int *labels;
    int n, cap;
    int bad; /* a malformed line was seen: the rest of the sentence is skipped */
} sentence;

static int sentence_push(sentence *s, al_field w, int label) {
    if (s->n == s->cap) {
        int cap = s->cap ? s->cap * 2 : 64;
        al_field *words = realloc(s->words, (size_t)cap * sizeof *words);
        if (!words) return -1;
        s->words = words;
        int *labels = realloc(s->labels, (size_t)cap * sizeof *labels);
        if (!labels) return -1;
        s->labels = labels;
        s->cap = cap;
    }
    s->words[s->n] = w;
    s->labels[s->n++] = label;
    return 0;
}

/* Adds the sentence read so far (unless empty or bad) and starts a new one. */
static al_status flush(al_task_reader *rd, sentence *s, al_error *err) {
    al_status st = AL_OK;
    if (s->n && !s->bad) {
        al_task *t = rd->task;
        const char **words = al_task_alloc(t, (size_t)s->n * sizeof *words);
        int *labels = al_task_alloc(t, (size_t)s->n * sizeof *labels);
        if (!words || !labels) return al_reader_oom(rd, err);
        for (int i = 0; i < s->n; i++) {
            if (!(words[i] = al_task_copy(t, s->words[i].s, s->words[i].n))) return al_reader_oom(rd, err);
            labels[i] = s->labels[i];
        }
        al_task_example ex = {0};
        ex.label = -1;
        ex.n_words = s->n;
        ex.words = words;
        ex.word_labels = labels;
        ex.group = AL_TASK_NO_GROUP;
        st = al_task_add(t, rd->split, &ex, err);
        if (st == AL_OK) rd->report->n_rows++;
    }
    s->n = 0;
    s->bad = 0;
    return st;
}

/* The text check of each column, so that a message names the column and counts bytes from its start:
 * "column 4 (NER): invalid UTF-8 at byte 2 of the field (0xE9)". 0 ok, 1 bad (why), -1 out of memory. */
static int check_columns(al_task_reader *rd, const al_field *f, char *why, size_t why_len) {
    static const char *const names[CONLL_FIELDS] = {"word", "POS", "chunk", "NER"};
    char one[96];
    for (int k = 0; k < CONLL_FIELDS; k++) {
        int rc = al_reader_text_check(rd, f[k].s, f[k].n, one, sizeof one);
        if (rc < 0) return rc;
        if (rc) {
            snprintf(why, why_len, "column %d (%s): %s", k + 1, names[k], one);
            return 1;
        }
    }
    return 0;
}

static al_status read_lines(al_task_reader *rd, sentence *snt, int col, al_error *err) {
    const char *s;
    size_t n;
    char why[128];
    while (al_reader_line(rd, &s, &n)) {
        if (al_blank(s, n)) {
            al_status st = flush(rd, snt, err);
            if (st) return st;
            continue;
        }
        al_field f[CONLL_FIELDS + 1];
        int nf = al_split_blanks(s, n, f, CONLL_FIELDS + 1);
        if (al_field_is(f[0], "-DOCSTART-")) {
            al_status st = flush(rd, snt, err);
            if (st) return st;
            continue;
        }
        if (snt->bad) continue;
        al_status st = AL_OK;
        int rc = 0;
        if (nf != CONLL_FIELDS) {
            st = al_reader_bad(rd, rd->line, err, "expected 4 space-separated columns (word, POS, chunk, NER), found %d", nf);
        } else if ((rc = check_columns(rd, f, why, sizeof why)) != 0) {
            if (rc < 0) return al_reader_oom(rd, err);
            st = al_reader_bad(rd, rd->line, err, "%s", why);
        } else {
            int k;
            st = al_reader_label(rd, rd->line, f[col].s, f[col].n, &k, err);
            if (st == AL_OK && k >= 0) {
                if (sentence_push(snt, f[0], k)) return al_reader_oom(rd, err);
                continue;
            }
        }
        if (st) return st;
        snt->bad = 1; /* skip mode: this sentence is the bad row, counted once */
    }
    return flush(rd, snt, err);
}

al_status al_conll_read(al_task_reader *rd, al_error *err) {
    int col = al_conll_column(rd->opt->conll_column);
    if (col < 0)
        return al_err(err, AL_ERR_INVALID, "conll_column '%.40s' is not ner, pos or chunk", rd->opt->conll_column);
    sentence snt = {0};
    al_status st = read_lines(rd, &snt, col, err);
    free(snt.words);
    free(snt.labels);
    return st;
}
