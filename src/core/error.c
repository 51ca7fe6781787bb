/* error.c: status names and error message formatting. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "memory.h"

const char *al_status_name(al_status s) {
    switch (s) {
    case AL_OK: return "ok";
    case AL_ERR_IO: return "io";
    case AL_ERR_FORMAT: return "format";
    case AL_ERR_UNSUPPORTED: return "unsupported";
    case AL_ERR_INVALID: return "invalid";
    case AL_ERR_OOM: return "out_of_memory";
    case AL_ERR_CANCELLED: return "cancelled";
    }
    return "unknown";
}

al_status al_err(al_error *err, al_status code, const char *fmt, ...) {
    if (err) {
        err->code = code;
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        /* Every out-of-memory error says how much memory there was (docs/memory.md). */
        if (code == AL_ERR_OOM && n >= 0 && (size_t)n + 8 < sizeof err->message) {
            char limit[160];
            al_memory_describe(limit, sizeof limit);
            snprintf(err->message + n, sizeof err->message - (size_t)n, "; %s", limit);
        }
    }
    return code;
}

al_status al_err_prefix(al_error *err, const char *prefix) {
    if (!err) return AL_ERR_INVALID;
    /* Build "prefix: old" by hand: the result may be cut at the buffer's end, on purpose. */
    char old[sizeof err->message];
    memcpy(old, err->message, sizeof old);
    size_t cap = sizeof err->message, n = 0;
    for (const char *p = prefix; *p && n + 1 < cap; p++) err->message[n++] = *p;
    for (const char *p = ": "; *p && n + 1 < cap; p++) err->message[n++] = *p;
    for (const char *p = old; *p && n + 1 < cap; p++) err->message[n++] = *p;
    err->message[n] = '\0';
    return err->code;
}

void al_error_clear(al_error *err) {
    if (err) {
        err->code = AL_OK;
        err->message[0] = '\0';
    }
}

void al_names_append(char *list, size_t size, const char *name) {
    if (!size) return;
    if (list[0]) strncat(list, ", ", size - strlen(list) - 1);
    strncat(list, name, size - strlen(list) - 1);
}
