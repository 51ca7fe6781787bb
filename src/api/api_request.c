/* api_request.c: reading request fields with errors that name the field at fault. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "api_internal.h"

static const cJSON *field(const cJSON *obj, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, key);
    /* An explicit null counts as absent, so clients can pass optional fields uniformly. */
    return (item && !cJSON_IsNull(item)) ? item : NULL;
}

static al_status missing(const char *path, al_error *err) {
    return al_err(err, AL_ERR_INVALID, "request: missing field '%s'", path);
}

al_status al_req_string(const cJSON *obj, const char *key, const char *path, int required,
                        const char **out, al_error *err) {
    const cJSON *item = field(obj, key);
    *out = NULL;
    if (!item) return required ? missing(path, err) : AL_OK;
    if (!cJSON_IsString(item) || !item->valuestring)
        return al_err(err, AL_ERR_INVALID, "request: field '%s' must be a string", path);
    *out = item->valuestring;
    return AL_OK;
}

al_status al_req_int(const cJSON *obj, const char *key, const char *path, int required, int def,
                     int min, int max, int *out, al_error *err) {
    const cJSON *item = field(obj, key);
    *out = def;
    if (!item) return required ? missing(path, err) : AL_OK;
    double v = item->valuedouble;
    if (!cJSON_IsNumber(item) || !isfinite(v) || v != floor(v))
        return al_err(err, AL_ERR_INVALID, "request: field '%s' must be an integer", path);
    if (v < min || v > max)
        return al_err(err, AL_ERR_INVALID, "request: field '%s' is %.0f, outside [%d, %d]", path, v,
                      min, max);
    *out = (int)v;
    return AL_OK;
}

al_status al_req_bool(const cJSON *obj, const char *key, const char *path, int def, int *out,
                      al_error *err) {
    const cJSON *item = field(obj, key);
    *out = def;
    if (!item) return AL_OK;
    if (!cJSON_IsBool(item))
        return al_err(err, AL_ERR_INVALID, "request: field '%s' must be true or false", path);
    *out = cJSON_IsTrue(item) ? 1 : 0;
    return AL_OK;
}

al_status al_req_float(const cJSON *obj, const char *key, const char *path, int required,
                       float def, float min, float max, float *out, al_error *err) {
    const cJSON *item = field(obj, key);
    *out = def;
    if (!item) return required ? missing(path, err) : AL_OK;
    if (!cJSON_IsNumber(item) || !isfinite(item->valuedouble))
        return al_err(err, AL_ERR_INVALID, "request: field '%s' must be a number", path);
    double v = item->valuedouble;
    if (v < min || v > max)
        return al_err(err, AL_ERR_INVALID, "request: field '%s' is %g, outside [%g, %g]", path, v,
                      (double)min, (double)max);
    *out = (float)v;
    return AL_OK;
}

al_status al_req_model(const al_session *s, const cJSON *req, const al_api_model **out,
                       al_error *err) {
    const char *id;
    al_status st = al_req_string(req, "model", "model", 1, &id, err);
    if (st) return st;
    *out = al_api_find_model(s, id);
    if (!*out) {
        if (s->n_models == 0)
            return al_err(err, AL_ERR_INVALID, "request: field 'model': no model '%s' (no model is loaded)", id);
        return al_err(err, AL_ERR_INVALID, "request: field 'model': no model '%s' (loaded: '%s'%s)", id,
                      s->models[0].id, s->n_models > 1 ? ", ..." : "");
    }
    return AL_OK;
}

al_status al_req_flags(const cJSON *obj, const char *key, const char *const *names, int n_names,
                       int def, int *flags, al_error *err) {
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(obj, key);
    *flags = def;
    if (!list || cJSON_IsNull(list)) return AL_OK;
    if (!cJSON_IsArray(list))
        return al_err(err, AL_ERR_INVALID, "request: field '%s' must be an array of names", key);
    *flags = 0;
    int index = 0;
    for (const cJSON *item = list->child; item; item = item->next, index++) {
        int bit = 0;
        for (int i = 0; i < n_names && !bit; i++)
            if (cJSON_IsString(item) && strcmp(item->valuestring, names[i]) == 0) bit = 1 << i;
        if (!bit) {
            char choices[256] = "";
            for (int i = 0; i < n_names; i++) al_names_append(choices, sizeof choices, names[i]);
            return al_err(err, AL_ERR_INVALID, "request: field '%s[%d]' must be one of %s", key,
                          index, choices);
        }
        *flags |= bit;
    }
    return AL_OK;
}
