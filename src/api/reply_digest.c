/* reply_digest.c: the replies' digest rule (reply_digest.h). */
#include "reply_digest.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cJSON.h"

double al_json_canonical(double v) {
    if (!isfinite(v)) return v;
    cJSON *n = cJSON_CreateNumber(v);
    char *text = n ? cJSON_PrintUnformatted(n) : NULL;
    double back = text ? strtod(text, NULL) : v;
    cJSON_free(text);
    cJSON_Delete(n);
    return back;
}

void al_digest_begin(al_sha256 *s) { al_sha256_init(s); }

void al_digest_line(al_sha256 *s, const char *fmt, double a, double b) {
    char line[96];
    int n = snprintf(line, sizeof line, fmt, a, b);
    if (n > (int)sizeof line - 1) n = (int)sizeof line - 1;
    al_sha256_update(s, line, (size_t)n);
}

void al_digest_floats(al_sha256 *s, const char *name, const float *v, size_t count) {
    char line[128];
    int n = snprintf(line, sizeof line, "tensor %.80s %zu\n", name, count);
    al_sha256_update(s, line, (size_t)n);
    /* little-endian bytes on every target attnlab builds for (x86-64, WebAssembly) */
    if (count) al_sha256_update(s, v, sizeof(float) * count);
}

void al_digest_end(al_sha256 *s, char out[72]) {
    uint8_t d[32];
    char hex[65];
    al_sha256_final(s, d);
    al_sha256_hex(d, hex);
    snprintf(out, 72, "sha256:%s", hex);
}
