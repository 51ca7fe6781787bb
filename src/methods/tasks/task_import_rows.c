/* task_import_rows.c: the line cursor, fields, UTF-8 check and bad-row rule shared by the task readers
 * (task_import_rows.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/json_nul.h"
#include "../../text/tok_internal.h"
#include "cJSON.h"
#include "task_import_rows.h"

void al_reader_init(al_task_reader *rd, al_task *task, al_task_split split, const char *filename,
                    const char *data, size_t len, const al_task_import_options *opt,
                    al_task_import_report *report) {
    memset(rd, 0, sizeof *rd);
    rd->task = task;
    rd->split = split;
    rd->filename = filename && filename[0] ? filename : "(input)";
    rd->opt = opt;
    rd->report = report;
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0) { /* byte order mark */
        data += 3;
        len -= 3;
    }
    rd->data = data ? data : "";
    rd->len = data ? len : 0;
}

void al_reader_end(al_task_reader *rd) {
    if (rd->utf8) {
        al_ntext_free(rd->utf8);
        free(rd->utf8);
        rd->utf8 = NULL;
    }
}

int al_reader_line(al_task_reader *rd, const char **s, size_t *n) {
    if (rd->pos >= rd->len) return 0;
    const char *start = rd->data + rd->pos;
    const char *nl = memchr(start, '\n', rd->len - rd->pos);
    size_t len = nl ? (size_t)(nl - start) : rd->len - rd->pos;
    rd->pos += len + (nl != NULL);
    if (len && start[len - 1] == '\r') len--;
    rd->line++;
    *s = start;
    *n = len;
    return 1;
}

int al_blank(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t') return 0;
    return 1;
}

al_status al_reader_bad(al_task_reader *rd, int line, al_error *err, const char *fmt, ...) {
    char why[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (!rd->opt->skip_bad_rows)
        return al_err(err, AL_ERR_FORMAT, "%.100s: line %d: %.360s", rd->filename, line, why);
    al_task_import_report *r = rd->report;
    if (r->n_messages < AL_TASK_REPORT_MESSAGES)
        snprintf(r->messages[r->n_messages++], sizeof r->messages[0], "%.60s: line %d: %.170s", rd->filename, line,
                 why);
    r->n_bad++;
    return AL_OK;
}

al_status al_reader_oom(al_task_reader *rd, al_error *err) {
    return al_err(err, AL_ERR_OOM, "%s: out of memory at line %d", rd->filename, rd->line);
}

/* al_reader_text_check, bytes counted in `unit` ("field", or "line" for a JSON line). */
static int check_text(al_task_reader *rd, const char *s, size_t n, const char *unit, char *why, size_t why_len) {
    const char *nul = memchr(s, '\0', n);
    if (nul) {
        snprintf(why, why_len, "NUL byte at byte %zu of the %s", (size_t)(nul - s), unit);
        return 1;
    }
    if (n > 0x7fffffff) {
        snprintf(why, why_len, "text of %zu bytes is too long", n);
        return 1;
    }
    if (!rd->utf8 && !(rd->utf8 = calloc(1, sizeof(al_ntext)))) return -1;
    al_ntext *t = rd->utf8;
    t->n = 0; /* reuse the buffers */
    int32_t bad = 0;
    int rc = al_utf8_decode(s, n, t, &bad);
    if (rc == -2) return -1;
    if (rc == -1) {
        /* the decoder names the first byte that cannot continue a sequence; a reader looks for the
         * sequence's lead byte (a Latin-1 "\xe9" before a space fails at the space) */
        const unsigned char *u = (const unsigned char *)s;
        size_t at = (size_t)bad, j = at;
        while (j > 0 && at - j < 3 && (u[j - 1] & 0xC0) == 0x80) j--;
        if (j > 0) {
            const unsigned lead = u[j - 1];
            const size_t len = lead >= 0xF0 && lead <= 0xF4 ? 4 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xC2 && lead <= 0xDF ? 2 : 0;
            if (len > at - (j - 1)) at = j - 1;
        }
        snprintf(why, why_len, "invalid UTF-8 at byte %zu of the %s (0x%02X)", at, unit, u[at]);
        return 1;
    }
    return 0;
}

int al_reader_text_check(al_task_reader *rd, const char *s, size_t n, char *why, size_t why_len) {
    return check_text(rd, s, n, "field", why, why_len);
}

int al_reader_json_check(al_task_reader *rd, const char *s, size_t n, char *why, size_t why_len) {
    int rc = check_text(rd, s, n, "line", why, why_len);
    if (rc) return rc;
    size_t at = 0;
    if (al_json_find_nul(s, n, &at, NULL, 0)) {
        snprintf(why, why_len, "\\u0000 (a NUL character) at byte %zu", at);
        return 1;
    }
    return 0;
}

struct cJSON *al_json_line(const char *s, size_t n) {
    const char *end = NULL;
    cJSON *v = cJSON_ParseWithLengthOpts(s, n, &end, 0);
    if (!v) return NULL;
    for (; end && end < s + n; end++)
        if (*end != ' ' && *end != '\t' && *end != '\r') {
            cJSON_Delete(v);
            return NULL;
        }
    return v;
}

al_status al_reader_label(al_task_reader *rd, int line, const char *s, size_t n, int *index, al_error *err) {
    *index = -1;
    if (n == 0) return al_reader_bad(rd, line, err, "empty label");
    char why[96];
    int rc = al_reader_text_check(rd, s, n, why, sizeof why);
    if (rc < 0) return al_reader_oom(rd, err);
    if (rc) return al_reader_bad(rd, line, err, "label: %s", why);
    int k = al_task_label_index(rd->task, s, n);
    if (k >= 0) {
        *index = k;
        return AL_OK;
    }
    if (k == AL_LABEL_OOM) return al_reader_oom(rd, err);
    if (k == AL_LABEL_TOO_MANY)
        return al_err(err, AL_ERR_FORMAT,
                      "%s: line %d: more than %d distinct labels: is '%.*s' from the label column?",
                      rd->filename, line, AL_TASK_MAX_LABELS, (int)(n > 60 ? 60 : n), s);
    /* not in the fixed list: name them (up to a few) */
    char list[160] = "";
    size_t used = 0;
    for (int i = 0; i < rd->task->n_labels && used + 1 < sizeof list; i++) {
        int w = snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", rd->task->label_names[i]);
        if (w < 0) break;
        used += (size_t)w;
    }
    return al_reader_bad(rd, line, err, "label '%.*s' is not one of: %s", (int)(n > 60 ? 60 : n), s, list);
}

al_status al_reader_sequence(al_task_reader *rd, int line, const char *text, size_t text_len,
                             const char *pair, size_t pair_len, const char *label, size_t label_len,
                             int group, const char *what_text, const char *what_pair, al_error *err) {
    char why[96];
    const char *parts[2] = {text, pair};
    size_t lens[2] = {text_len, pair_len};
    const char *names[2] = {what_text, what_pair};
    for (int i = 0; i < 2; i++) {
        if (i == 1 && !pair) break;
        if (al_blank(parts[i], lens[i])) return al_reader_bad(rd, line, err, "empty %s", names[i]);
        int rc = al_reader_text_check(rd, parts[i], lens[i], why, sizeof why);
        if (rc < 0) return al_reader_oom(rd, err);
        if (rc) return al_reader_bad(rd, line, err, "%s: %s", names[i], why);
    }
    int k;
    al_status st = al_reader_label(rd, line, label, label_len, &k, err);
    if (st || k < 0) return st;
    al_task_example ex = {0};
    ex.text = al_task_copy(rd->task, text, text_len);
    ex.text_pair = pair ? al_task_copy(rd->task, pair, pair_len) : NULL;
    ex.label = k;
    ex.group = group;
    if (!ex.text || (pair && !ex.text_pair)) return al_reader_oom(rd, err);
    st = al_task_add(rd->task, rd->split, &ex, err);
    if (st == AL_OK) rd->report->n_rows++;
    return st;
}

int al_split_fields(const char *s, size_t n, char sep, al_field *out, int max) {
    int count = 0;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == sep) {
            if (count < max) out[count] = (al_field){s + start, i - start};
            count++;
            start = i + 1;
        }
    }
    return count;
}

int al_split_blanks(const char *s, size_t n, al_field *out, int max) {
    int count = 0;
    size_t i = 0;
    while (i < n) {
        while (i < n && (s[i] == ' ' || s[i] == '\t')) i++;
        if (i == n) break;
        size_t start = i;
        while (i < n && s[i] != ' ' && s[i] != '\t') i++;
        if (count < max) out[count] = (al_field){s + start, i - start};
        count++;
    }
    return count;
}

int al_field_is(al_field f, const char *lit) {
    size_t n = strlen(lit);
    return f.n == n && memcmp(f.s, lit, n) == 0;
}
