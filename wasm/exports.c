/* exports.c: the C boundary the Web Worker calls (wasm/attnlab.mjs wraps it), in the style of
 * ONNX Runtime's WASM API: every call returns a plain int status or a handle, the last error is
 * fetched with a separate call, and every handle is released explicitly.
 *
 *   session = al_wasm_session_new()                     ... al_wasm_session_free(session)
 *   session = al_wasm_session_new_threads(n)            n threads (attnlab_wasm_mt; 1 in attnlab_wasm)
 *   al_wasm_session_threads(session)                    the threads the session's pool really has
 *   al_wasm_set_kernels(name) / al_wasm_kernels()       the kernel path for every later run (src/kernels/path.h:
 *                                                       the host that knows its engine picks the GEMM's tile)
 *   fs = al_wasm_fileset_new(); al_wasm_fileset_add(fs, name, ptr, size)   (copies the bytes)
 *   al_wasm_add_model(session, id, fs)                  (always takes fs, whatever the outcome)
 *   al_wasm_set_tensor(session, name, ndim, shape_i32, data_f32) / al_wasm_clear_tensors(session)
 *   reply = al_wasm_run(session, request_json)          (NULL only when out of memory)
 *     al_wasm_reply_status / _json / _n_tensors / _tensor_{name,dtype,ndim,dim,data,nbytes}
 *   al_wasm_reply_free(reply)
 *   al_wasm_last_error_code() / al_wasm_last_error_message()
 *   al_wasm_memory_error(bytes, what): sets the last error to "<what>: needs <bytes> of memory; memory
 *     limit ..., ... in use" (src/core/memory.h), for an allocation JavaScript could not make
 *   al_wasm_cancel_flag_ptr(): an int in linear memory; nonzero cancels the running forward pass at
 *     its next check. The worker runs requests synchronously, so JavaScript can raise it from
 *     Module.onProgress (called at every progress step) or, with shared memory, from another thread.
 *   Module.onProgress(stage, fraction, step, n_steps): optional, set by JavaScript; called during runs. step and
 *     n_steps (configuration step of n_steps, 1-based, 0 before the first) come with the reports of an op that
 *     works through a plan (a PAPA sweep), else undefined.
 * Strings are NUL-terminated UTF-8 in linear memory. Sizes and dims are int32 (a wasm32 heap is at
 * most 4 GB and no dim reaches 2^31). */
#include <emscripten.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "core/error.h"
#include "core/memory.h"
#include "kernels/kernels.h"

typedef struct wasm_reply {
    al_reply reply;
    int status;
} wasm_reply;

static al_error g_last_error;
static volatile int g_cancel;
static int g_live_handles; /* sessions + filesets + replies not yet released (for leak tests) */

static int set_status(al_status st, const al_error *err) {
    if (st == AL_OK) {
        g_last_error.code = AL_OK;
        g_last_error.message[0] = '\0';
    } else if (err && err != &g_last_error) {
        g_last_error = *err;
        g_last_error.code = st;
    } else if (!err) {
        g_last_error.code = st;
        strcpy(g_last_error.message, al_status_name(st));
    }
    return (int)st;
}

EM_JS(void, al_wasm_js_progress, (const char *stage, double fraction), {
    if (typeof Module !== 'undefined' && Module.onProgress) Module.onProgress(UTF8ToString(stage), fraction);
});

EM_JS(void, al_wasm_js_plan_progress, (const char *stage, double fraction, int step, int n_steps), {
    if (typeof Module !== 'undefined' && Module.onProgress) Module.onProgress(UTF8ToString(stage), fraction, step, n_steps);
});

static void progress_to_js(void *user, const char *stage, double fraction) {
    (void)user;
    al_wasm_js_progress(stage, fraction);
}

static void plan_progress_to_js(void *user, const char *stage, double fraction, int step, int n_steps) {
    (void)user;
    al_wasm_js_plan_progress(stage, fraction, step, n_steps);
}

EMSCRIPTEN_KEEPALIVE const char *al_wasm_version(void) { return AL_VERSION; }
EMSCRIPTEN_KEEPALIVE int al_wasm_last_error_code(void) { return (int)g_last_error.code; }
EMSCRIPTEN_KEEPALIVE const char *al_wasm_last_error_message(void) { return g_last_error.message; }
EMSCRIPTEN_KEEPALIVE const char *al_wasm_status_name(int code) { return al_status_name((al_status)code); }
EMSCRIPTEN_KEEPALIVE volatile int *al_wasm_cancel_flag_ptr(void) { return &g_cancel; }
EMSCRIPTEN_KEEPALIVE int al_wasm_live_handles(void) { return g_live_handles; }

EMSCRIPTEN_KEEPALIVE int al_wasm_memory_error(double bytes, const char *what) {
    al_error err = {0};
    return set_status(al_memory_refuse(bytes > 0 ? (uint64_t)bytes : 0, what, NULL, &err), &err);
}

EMSCRIPTEN_KEEPALIVE al_session *al_wasm_session_new(void) {
    al_session *s = al_session_new();
    if (!s) set_status(AL_ERR_OOM, NULL);
    else g_live_handles++;
    return s;
}

EMSCRIPTEN_KEEPALIVE al_session *al_wasm_session_new_threads(int n_threads) {
    al_session_params p = al_session_default_params();
    if (n_threads >= 1 && n_threads <= al_threads_max()) p.n_threads = n_threads;
    al_session *s = al_session_new_params(&p);
    if (!s) set_status(AL_ERR_OOM, NULL);
    else g_live_handles++;
    return s;
}

EMSCRIPTEN_KEEPALIVE int al_wasm_session_threads(const al_session *s) { return al_session_threads(s); }

EMSCRIPTEN_KEEPALIVE const char *al_wasm_kernels(void) { return al_kernels_path(); }

/* Every path gives the same bits (docs/kernels.md), so this changes the speed only. Not while a run is going. */
EMSCRIPTEN_KEEPALIVE int al_wasm_set_kernels(const char *name) {
    if (name && al_kernels_set_path(name) == 0) return set_status(AL_OK, NULL);
    const char *paths[8];
    const int n = al_kernels_paths(paths, 8);
    char list[256] = "";
    for (int i = 0; i < n && i < 8; i++) al_names_append(list, sizeof list, paths[i]);
    al_error err = {0};
    return set_status(al_err(&err, AL_ERR_INVALID, "kernels: no path '%.60s' in this build (paths: %s)",
                             name ? name : "(null)", list), &err);
}

EMSCRIPTEN_KEEPALIVE void al_wasm_session_free(al_session *s) {
    if (!s) return;
    al_session_free(s);
    g_live_handles--;
}

EMSCRIPTEN_KEEPALIVE al_fileset *al_wasm_fileset_new(void) {
    al_fileset *fs = al_fileset_new();
    if (!fs) set_status(AL_ERR_OOM, NULL);
    else g_live_handles++;
    return fs;
}

EMSCRIPTEN_KEEPALIVE void al_wasm_fileset_free(al_fileset *fs) {
    if (!fs) return;
    al_fileset_free(fs);
    g_live_handles--;
}

EMSCRIPTEN_KEEPALIVE int al_wasm_fileset_add(al_fileset *fs, const char *name, const void *data,
                                             int size) {
    al_error err = {0};
    if (!fs || size < 0) {
        al_status st = AL_ERR_INVALID;
        strcpy(err.message, "fileset_add: NULL fileset or negative size");
        return set_status(st, &err);
    }
    return set_status(al_fileset_add(fs, name, data, (size_t)size, 1, &err), &err);
}

EMSCRIPTEN_KEEPALIVE int al_wasm_add_model(al_session *s, const char *id, al_fileset *fs) {
    al_error err = {0};
    if (fs) g_live_handles--; /* the session owns (and frees) it from here, whatever the outcome */
    return set_status(al_session_add_model(s, id, fs, &err), &err);
}

EMSCRIPTEN_KEEPALIVE int al_wasm_set_tensor(al_session *s, const char *name, int ndim,
                                            const int32_t *shape, const float *data) {
    al_error err = {0};
    int64_t dims[6];
    if (ndim < 1 || ndim > 6 || !shape) {
        strcpy(err.message, "set_tensor: ndim must be 1 to 6");
        return set_status(AL_ERR_INVALID, &err);
    }
    for (int d = 0; d < ndim; d++) dims[d] = shape[d];
    return set_status(al_session_set_tensor(s, name, ndim, dims, data, &err), &err);
}

EMSCRIPTEN_KEEPALIVE void al_wasm_clear_tensors(al_session *s) { al_session_clear_tensors(s); }

EMSCRIPTEN_KEEPALIVE wasm_reply *al_wasm_run(al_session *s, const char *request_json) {
    wasm_reply *r = calloc(1, sizeof *r);
    if (!r) {
        set_status(AL_ERR_OOM, NULL);
        return NULL;
    }
    g_live_handles++;
    al_run_params params = {progress_to_js, NULL, &g_cancel, plan_progress_to_js};
    al_status st = al_session_run(s, request_json, &params, &r->reply);
    r->status = (int)st;
    if (st == AL_OK) {
        set_status(AL_OK, NULL);
    } else {
        /* The reply's {"error": {...}} carries the message; keep it for last_error too. */
        al_error err = {0};
        cJSON *root = r->reply.json ? cJSON_Parse(r->reply.json) : NULL;
        const cJSON *msg = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "error"), "message");
        snprintf(err.message, sizeof err.message, "%s",
                 cJSON_IsString(msg) ? msg->valuestring : al_status_name(st));
        cJSON_Delete(root);
        set_status(st, &err);
    }
    return r;
}

EMSCRIPTEN_KEEPALIVE void al_wasm_reply_free(wasm_reply *r) {
    if (!r) return;
    al_reply_free(&r->reply);
    free(r);
    g_live_handles--;
}

static const al_tensor_out *tensor_at(const wasm_reply *r, int i) {
    return r && i >= 0 && i < r->reply.n_tensors ? &r->reply.tensors[i] : NULL;
}

EMSCRIPTEN_KEEPALIVE int al_wasm_reply_status(const wasm_reply *r) { return r ? r->status : AL_ERR_INVALID; }
EMSCRIPTEN_KEEPALIVE const char *al_wasm_reply_json(const wasm_reply *r) { return r ? r->reply.json : NULL; }
EMSCRIPTEN_KEEPALIVE int al_wasm_reply_n_tensors(const wasm_reply *r) { return r ? r->reply.n_tensors : 0; }

EMSCRIPTEN_KEEPALIVE const char *al_wasm_reply_tensor_name(const wasm_reply *r, int i) {
    const al_tensor_out *t = tensor_at(r, i);
    return t ? t->name : NULL;
}

EMSCRIPTEN_KEEPALIVE const char *al_wasm_reply_tensor_dtype(const wasm_reply *r, int i) {
    const al_tensor_out *t = tensor_at(r, i);
    return t ? t->dtype : NULL;
}

EMSCRIPTEN_KEEPALIVE int al_wasm_reply_tensor_ndim(const wasm_reply *r, int i) {
    const al_tensor_out *t = tensor_at(r, i);
    return t ? t->ndim : -1;
}

EMSCRIPTEN_KEEPALIVE int al_wasm_reply_tensor_dim(const wasm_reply *r, int i, int d) {
    const al_tensor_out *t = tensor_at(r, i);
    return t && d >= 0 && d < t->ndim ? (int)t->shape[d] : -1;
}

EMSCRIPTEN_KEEPALIVE void *al_wasm_reply_tensor_data(const wasm_reply *r, int i) {
    const al_tensor_out *t = tensor_at(r, i);
    return t ? t->data : NULL;
}

EMSCRIPTEN_KEEPALIVE int al_wasm_reply_tensor_nbytes(const wasm_reply *r, int i) {
    const al_tensor_out *t = tensor_at(r, i);
    return t ? (int)t->nbytes : -1;
}
