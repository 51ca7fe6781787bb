/* session.c: the session: models loaded under ids and the named input tensors requests refer to. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/memory.h"
#include "api_internal.h"

al_session_params al_session_default_params(void) {
    al_session_params p;
    memset(&p, 0, sizeof p);
    p.n_threads = al_threads_default();
    return p;
}

al_session *al_session_new_params(const al_session_params *params) {
    al_session_params p = params ? *params : al_session_default_params();
    al_session *s = calloc(1, sizeof(al_session));
    if (!s) return NULL;
    if (al_threadpool_new(p.n_threads, &s->pool, NULL) != AL_OK) {
        free(s);
        return NULL;
    }
    return s;
}

al_session *al_session_new(void) { return al_session_new_params(NULL); }

int al_session_threads(const al_session *s) { return s ? al_threadpool_size(s->pool) : 1; }

static void free_tensor(al_api_tensor *t) { free(t->data); }

void al_session_free(al_session *s) {
    if (!s) return;
    for (int i = 0; i < s->n_models; i++) al_model_free(s->models[i].model);
    free(s->models);
    for (int i = 0; i < s->n_inputs; i++) free_tensor(&s->inputs[i]);
    free(s->inputs);
    al_threadpool_free(s->pool);
    free(s);
}

const al_api_model *al_api_find_model(const al_session *s, const char *id) {
    for (int i = 0; i < s->n_models; i++)
        if (strcmp(s->models[i].id, id) == 0) return &s->models[i];
    return NULL;
}

const char *al_api_model_hash(const al_api_model *m) {
    al_api_model *entry = (al_api_model *)m; /* the session's own entry, handed to ops as const */
    if (!entry->hash[0]) al_model_content_hash(entry->model, entry->hash);
    return entry->hash;
}

const al_api_tensor *al_api_find_tensor(const al_session *s, const char *name) {
    for (int i = 0; i < s->n_inputs; i++)
        if (strcmp(s->inputs[i].name, name) == 0) return &s->inputs[i];
    return NULL;
}

al_status al_api_check_model_id(const char *id, al_error *err) {
    if (!id || !id[0]) return al_err(err, AL_ERR_INVALID, "model id: must be a non-empty string");
    if (strlen(id) >= sizeof(((al_api_model *)0)->id))
        return al_err(err, AL_ERR_INVALID, "model id: longer than %zu bytes",
                      sizeof(((al_api_model *)0)->id) - 1);
    return AL_OK;
}

al_status al_api_put_model(al_session *s, const char *id, al_model *model, al_error *err) {
    al_status st = al_api_check_model_id(id, err);
    if (st) return st;
    for (int i = 0; i < s->n_models; i++) {
        if (strcmp(s->models[i].id, id) == 0) {
            al_model_free(s->models[i].model);
            s->models[i].model = model;
            s->models[i].hash[0] = '\0';
            return AL_OK;
        }
    }
    if (s->n_models == s->cap_models) {
        int cap = s->cap_models ? s->cap_models * 2 : 4;
        al_api_model *grown = realloc(s->models, (size_t)cap * sizeof *grown);
        if (!grown) return al_err(err, AL_ERR_OOM, "session: out of memory adding model '%s'", id);
        s->models = grown;
        s->cap_models = cap;
    }
    al_api_model *m = &s->models[s->n_models++];
    memset(m, 0, sizeof *m);
    snprintf(m->id, sizeof m->id, "%s", id);
    m->model = model;
    return AL_OK;
}

al_status al_session_add_model(al_session *s, const char *model_id, al_fileset *files,
                               al_error *err) {
    al_error_clear(err);
    al_status st = AL_OK;
    al_model *model = NULL;
    if (!s || !files) st = al_err(err, AL_ERR_INVALID, "session: NULL session or fileset");
    if (!st) st = al_api_check_model_id(model_id, err);
    if (!st) st = al_model_load(files, &model, err);
    al_fileset_free(files);
    if (!st) st = al_api_put_model(s, model_id, model, err);
    if (st) al_model_free(model);
    return st;
}

al_status al_session_set_tensor(al_session *s, const char *name, int ndim, const int64_t *shape,
                                const float *data, al_error *err) {
    al_error_clear(err);
    if (!s || !name || !shape || !data)
        return al_err(err, AL_ERR_INVALID, "session: set_tensor needs a session, name, shape and data");
    if (!name[0] || strlen(name) >= sizeof(((al_api_tensor *)0)->name))
        return al_err(err, AL_ERR_INVALID, "tensor '%.80s': name must be 1 to 63 bytes", name);
    if (ndim < 1 || ndim > 6)
        return al_err(err, AL_ERR_INVALID, "tensor '%s': ndim %d is outside [1, 6]", name, ndim);
    size_t count = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0 || (shape[d] > 0 && count > SIZE_MAX / sizeof(float) / (size_t)shape[d]))
            return al_err(err, AL_ERR_INVALID, "tensor '%s': dim %d (%lld) is invalid", name, d,
                          (long long)shape[d]);
        count *= (size_t)shape[d];
    }
    char what[96];
    snprintf(what, sizeof what, "tensor '%s'", name);
    al_status st = al_memory_check((uint64_t)count * sizeof(float), what, err);
    if (st != AL_OK) return st;
    al_api_tensor t;
    memset(&t, 0, sizeof t);
    snprintf(t.name, sizeof t.name, "%s", name);
    t.ndim = ndim;
    for (int d = 0; d < ndim; d++) t.shape[d] = shape[d];
    t.count = count;
    t.data = malloc(count ? count * sizeof(float) : 1);
    if (!t.data) return al_err(err, AL_ERR_OOM, "tensor '%s': out of memory (%zu floats)", name, count);
    if (count) memcpy(t.data, data, count * sizeof(float));
    for (int i = 0; i < s->n_inputs; i++) {
        if (strcmp(s->inputs[i].name, name) == 0) {
            free_tensor(&s->inputs[i]);
            s->inputs[i] = t;
            return AL_OK;
        }
    }
    if (s->n_inputs == s->cap_inputs) {
        int cap = s->cap_inputs ? s->cap_inputs * 2 : 4;
        al_api_tensor *grown = realloc(s->inputs, (size_t)cap * sizeof *grown);
        if (!grown) {
            free(t.data);
            return al_err(err, AL_ERR_OOM, "tensor '%s': out of memory", name);
        }
        s->inputs = grown;
        s->cap_inputs = cap;
    }
    s->inputs[s->n_inputs++] = t;
    return AL_OK;
}

void al_session_clear_tensors(al_session *s) {
    if (!s) return;
    for (int i = 0; i < s->n_inputs; i++) free_tensor(&s->inputs[i]);
    s->n_inputs = 0;
}
