/* task_import_jsonl.c: JSON lines with chosen keys (docs/tasks.md, "JSON lines"): one object a line,
 * text (and pair) as strings, the label as a string, an integer (written in decimal) or a boolean.
 * Empty lines are not rows. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cJSON.h"
#include "task_import.h"

/* The label's text: a string as is, an integer in decimal, true / false. 0 when it has no text. */
static int label_text(const cJSON *v, char *buf, size_t cap, const char **s) {
    if (cJSON_IsString(v)) {
        *s = v->valuestring;
        return 1;
    }
    if (cJSON_IsBool(v)) {
        *s = cJSON_IsTrue(v) ? "true" : "false";
        return 1;
    }
    if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 1e15) {
        snprintf(buf, cap, "%lld", (long long)v->valuedouble);
        *s = buf;
        return 1;
    }
    return 0;
}

static al_status read_object(al_task_reader *rd, const cJSON *obj, al_error *err) {
    const al_task_import_options *opt = rd->opt;
    int line = rd->line;
    const cJSON *text = cJSON_GetObjectItemCaseSensitive(obj, opt->text_column);
    const char *pair_key = opt->text_pair_column && opt->text_pair_column[0] ? opt->text_pair_column : NULL;
    const cJSON *pair = pair_key ? cJSON_GetObjectItemCaseSensitive(obj, pair_key) : NULL;
    const cJSON *label = cJSON_GetObjectItemCaseSensitive(obj, opt->label_column);
    if (!cJSON_IsString(text))
        return al_reader_bad(rd, line, err, "\"%.60s\" is %s", opt->text_column, text ? "not a string" : "missing");
    if (pair_key && !cJSON_IsString(pair))
        return al_reader_bad(rd, line, err, "\"%.60s\" is %s", pair_key, pair ? "not a string" : "missing");
    char buf[32];
    const char *lab;
    if (!label) return al_reader_bad(rd, line, err, "\"%.60s\" is missing", opt->label_column);
    if (!label_text(label, buf, sizeof buf, &lab))
        return al_reader_bad(rd, line, err, "\"%.60s\" is not a string, an integer or a boolean", opt->label_column);
    return al_reader_sequence(rd, line, text->valuestring, strlen(text->valuestring),
                              pair_key ? pair->valuestring : NULL, pair_key ? strlen(pair->valuestring) : 0, lab,
                              strlen(lab), AL_TASK_NO_GROUP, opt->text_column, pair_key ? pair_key : "", err);
}

al_status al_jsonl_read(al_task_reader *rd, al_error *err) {
    const char *s;
    size_t n;
    char why[96];
    while (al_reader_line(rd, &s, &n)) {
        if (al_blank(s, n)) continue;
        al_status st;
        int rc = al_reader_json_check(rd, s, n, why, sizeof why);
        if (rc < 0) return al_reader_oom(rd, err);
        if (rc) {
            if ((st = al_reader_bad(rd, rd->line, err, "%s", why))) return st;
            continue;
        }
        cJSON *obj = al_json_line(s, n);
        if (!cJSON_IsObject(obj)) {
            cJSON_Delete(obj);
            if ((st = al_reader_bad(rd, rd->line, err, "not a JSON object")) != AL_OK) return st;
            continue;
        }
        st = read_object(rd, obj, err);
        cJSON_Delete(obj);
        if (st) return st;
    }
    return AL_OK;
}
