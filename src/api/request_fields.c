/* request_fields.c: the ops' field tables read by one checker (docs/api.md, "Fields"): the kinds, fixed ranges
 * and names of every field a request holds, the "unknown field" warnings, and the tables as JSON for the
 * "version" op. Also the groups of fields several ops share (an experiment's are in experiment_setup.c,
 * beside the code that reads them). The messages are the field readers' own
 * (api_request.c), so a request refused here reads as it did when each handler refused it. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "api_internal.h"

/* ------------------------------------------------------------ the shared groups */

const al_req_field al_fields_none[] = {AL_F_END};

const al_req_field al_fields_model[] = {
    AL_F_STRING("model", NULL, "the id of a loaded model"),
    AL_F_END,
};

const al_req_field al_fields_text[] = {
    AL_F_STRING("text", NULL, "the text (one sequence)"),
    AL_F_STRING("text_pair", NULL, "the second text of a pair"),
    AL_F_END,
};

const al_req_field al_fields_texts[] = {
    AL_F_ARRAY("texts", AL_FIELD_STRING, 1, 0, NULL, NULL, "a batch of texts (instead of 'text')"),
    AL_F_ARRAY("text_pairs", AL_FIELD_ANY, 1, 0, NULL, NULL,
               "the second texts of the batch's pairs (a string or null each), as long as 'texts'"),
    AL_F_END,
};

const al_req_field al_fields_ids[] = {
    AL_F_ARRAY("input_ids", AL_FIELD_ANY, 1, 0, NULL, NULL,
               "token ids instead of text: one sequence, or an array of sequences"),
    AL_F_END,
};

const al_req_field al_fields_encode[] = {
    AL_F_INT("max_length", 1, 1 << 24, NULL, "truncate to this many tokens (default: the model's positions)"),
    AL_F_BOOL("add_special_tokens", "true", "add [CLS], [SEP] (or the tokenizer's own) around the text"),
    AL_F_END,
};

const al_req_field al_fields_corpus[] = {
    AL_F_STRING("corpus", NULL, "a text file's contents (documents separated by blank lines, else one a line) or JSONL lines with "
                                "\"text\": the corpus to score (lm: instead of text)"),
    AL_F_STRING("corpus_name", NULL, "the corpus file's name, for the reply"),
    AL_F_END,
};

const al_req_field al_fields_pad[] = {
    AL_F_INT("pad_to", 1, 1 << 24, NULL, "pad every sequence to this many positions"),
    AL_F_END,
};

/* ------------------------------------------------------------ the checker */

static const cJSON *present(const cJSON *obj, const char *key) {
    const cJSON *item = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, key) : NULL;
    return item && !cJSON_IsNull(item) ? item : NULL; /* null counts as absent, as the readers have it */
}

static int has_range(const al_req_field *f) { return f->min <= f->max; }

/* "'a', 'b' or 'c'" */
static void quoted_names(const char *const *names, char *out, size_t size) {
    out[0] = 0;
    for (int i = 0; names[i]; i++)
        snprintf(out + strlen(out), size - strlen(out), "%s'%s'", i == 0 ? "" : names[i + 1] ? ", " : " or ", names[i]);
}

static int find_name(const char *const *names, const char *s) {
    for (int i = 0; names && names[i]; i++)
        if (!strcmp(names[i], s)) return i;
    return -1;
}

static al_status check_scalar(const cJSON *item, al_req_field_kind kind, const al_req_field *f, const char *path, al_error *err) {
    switch (kind) {
    case AL_FIELD_ANY:
        return AL_OK;
    case AL_FIELD_STRING:
        if (!cJSON_IsString(item)) return al_err(err, AL_ERR_INVALID, "request: field '%s' must be a string", path);
        return AL_OK;
    case AL_FIELD_BOOL:
        if (!cJSON_IsBool(item)) return al_err(err, AL_ERR_INVALID, "request: field '%s' must be true or false", path);
        return AL_OK;
    case AL_FIELD_OBJECT:
        if (!cJSON_IsObject(item)) return al_err(err, AL_ERR_INVALID, "request: field '%s' must be an object", path);
        return AL_OK;
    case AL_FIELD_ARRAY:
        if (!cJSON_IsArray(item)) return al_err(err, AL_ERR_INVALID, "request: field '%s' must be an array", path);
        return AL_OK;
    case AL_FIELD_ENUM: {
        if (!cJSON_IsString(item)) return al_err(err, AL_ERR_INVALID, "request: field '%s' must be a string", path);
        if (find_name(f->names, item->valuestring) >= 0) return AL_OK;
        char names[512];
        quoted_names(f->names, names, sizeof names);
        return al_err(err, AL_ERR_INVALID, "request: field '%s' is '%.40s', not %s", path, item->valuestring, names);
    }
    case AL_FIELD_INT: {
        const double v = item->valuedouble;
        if (!cJSON_IsNumber(item) || !isfinite(v) || v != floor(v))
            return al_err(err, AL_ERR_INVALID, "request: field '%s' must be an integer", path);
        if (has_range(f) && (v < f->min || v > f->max))
            return al_err(err, AL_ERR_INVALID, "request: field '%s' is %.0f, outside [%.0f, %.0f]", path, v, f->min, f->max);
        return AL_OK;
    }
    case AL_FIELD_NUMBER: {
        const double v = item->valuedouble;
        if (!cJSON_IsNumber(item) || !isfinite(v))
            return al_err(err, AL_ERR_INVALID, "request: field '%s' must be a number", path);
        /* the readers hold these fields as floats and compare with float bounds (al_req_float): so does this */
        if (has_range(f) && (v < (double)(float)f->min || v > (double)(float)f->max))
            return al_err(err, AL_ERR_INVALID, "request: field '%s' is %g, outside [%g, %g]", path, v, f->min, f->max);
        return AL_OK;
    }
    }
    return AL_OK;
}

/* An array's items: null items are left to the handler (some arrays allow them, e.g. 'text_pairs'). */
static al_status check_items(const cJSON *list, const al_req_field *f, al_error *err) {
    int index = 0;
    for (const cJSON *it = list->child; it; it = it->next, index++) {
        if (cJSON_IsNull(it) || f->item == AL_FIELD_ANY) continue;
        char path[160];
        snprintf(path, sizeof path, "%s[%d]", f->name, index);
        if (f->item == AL_FIELD_ENUM) { /* the wording of al_req_flags, which reads such lists */
            if (cJSON_IsString(it) && find_name(f->names, it->valuestring) >= 0) continue;
            char names[512] = "";
            for (int i = 0; f->names[i]; i++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", f->names[i]);
            return al_err(err, AL_ERR_INVALID, "request: field '%s' must be one of %s", path, names);
        }
        if ((f->item == AL_FIELD_INT || f->item == AL_FIELD_NUMBER) && has_range(f)) {
            const int integral = f->item == AL_FIELD_INT; /* the wording of the papa op's number lists */
            const double v = cJSON_IsNumber(it) ? it->valuedouble : NAN;
            if (!(v >= f->min && v <= f->max) || (integral && v != floor(v)))
                return al_err(err, AL_ERR_INVALID, "request: field '%s' must be %s in [%g, %g]", path,
                              integral ? "an integer" : "a number", f->min, f->max);
            continue;
        }
        al_req_field item = *f;
        item.kind = f->item;
        al_status st = check_scalar(it, f->item, &item, path, err);
        if (st) return st;
    }
    return AL_OK;
}

static al_status check_field(const cJSON *req, const al_req_field *f, al_error *err) {
    const char *dot = strchr(f->name, '.');
    const cJSON *item;
    if (dot) { /* "parent.key": checked when the parent is an object (the parent's own row checks that) */
        char parent[64];
        snprintf(parent, sizeof parent, "%.*s", (int)(dot - f->name), f->name);
        item = present(present(req, parent), dot + 1);
    } else {
        item = present(req, f->name);
    }
    if (!item) return AL_OK;
    al_status st = check_scalar(item, f->kind, f, f->name, err);
    if (!st && f->kind == AL_FIELD_ARRAY) st = check_items(item, f, err);
    return st;
}

al_status al_req_check_fields(const cJSON *req, const al_req_field *const *tables, al_error *err) {
    for (int t = 0; tables[t]; t++)
        for (const al_req_field *f = tables[t]; f->name; f++) {
            al_status st = check_field(req, f, err);
            if (st) return st;
        }
    return AL_OK;
}

/* A top-level key the tables name (a nested row, "probe.lr", names no top-level key). */
static int names_field(const al_req_field *const *tables, const char *key) {
    for (int t = 0; tables[t]; t++)
        for (const al_req_field *f = tables[t]; f->name; f++)
            if (!strchr(f->name, '.') && !strcmp(f->name, key)) return 1;
    return 0;
}

void al_req_warn_fields(al_reply_builder *rb, const cJSON *req, const al_req_field *const *tables) {
    for (const cJSON *item = req->child; item; item = item->next)
        if (item->string && strcmp(item->string, "op") && !names_field(tables, item->string))
            al_rb_warn(rb, "request: unknown field '%.200s' ignored", item->string);
}

/* ------------------------------------------------------------ the tables as JSON */

const char *al_req_field_kind_name(al_req_field_kind kind) {
    static const char *const names[] = {"any", "string", "int", "number", "bool", "enum", "array", "object"};
    return (unsigned)kind < sizeof names / sizeof names[0] ? names[kind] : "?";
}

cJSON *al_fields_json(al_reply_builder *rb, cJSON *obj, const char *key, const al_req_field *const *tables) {
    cJSON *list = al_rb_add(rb, obj, key, cJSON_CreateArray());
    for (int t = 0; list && tables[t]; t++)
        for (const al_req_field *f = tables[t]; f->name; f++) {
            cJSON *o = al_rb_add(rb, list, NULL, cJSON_CreateObject());
            if (!o) break;
            al_rb_str(rb, o, "name", f->name);
            al_rb_str(rb, o, "kind", al_req_field_kind_name(f->kind));
            if (f->kind == AL_FIELD_ARRAY) al_rb_str(rb, o, "items", al_req_field_kind_name(f->item));
            if (has_range(f)) {
                al_rb_num(rb, o, "min", f->min);
                al_rb_num(rb, o, "max", f->max);
            }
            if (f->names) {
                cJSON *names = al_rb_add(rb, o, "enum", cJSON_CreateArray());
                for (int i = 0; names && f->names[i]; i++) al_rb_add(rb, names, NULL, cJSON_CreateString(f->names[i]));
            }
            if (f->def) al_rb_add(rb, o, "default", cJSON_Parse(f->def));
            al_rb_str(rb, o, "help", f->help);
        }
    return list;
}
