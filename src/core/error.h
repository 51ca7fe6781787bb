/* error.h: filling an al_error. Every fallible function returns al_err(err, code, fmt, ...). */
#ifndef AL_CORE_ERROR_H
#define AL_CORE_ERROR_H

#include "../attnlab.h"

#if defined(__GNUC__)
#define AL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define AL_PRINTF(a, b)
#endif

/* Sets code and a formatted message (when err is not NULL) and returns code. */
al_status al_err(al_error *err, al_status code, const char *fmt, ...) AL_PRINTF(3, 4);
/* Prefixes the existing message with "prefix: " (e.g. a file name) and returns err->code. */
al_status al_err_prefix(al_error *err, const char *prefix);
void al_error_clear(al_error *err);
/* Appends name to the list of choices an error message names ("a, b, c"), cut at size; list starts as "". */
void al_names_append(char *list, size_t size, const char *name);

#endif
