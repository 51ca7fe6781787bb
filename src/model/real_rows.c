/* real_rows.c: see real_rows.h. */
#include "real_rows.h"

#include <string.h>

int al_real_rows(const float *mask, int rows, int32_t *row_of) {
    int n = 0;
    for (int r = 0; r < rows; r++)
        if (mask[r] != 0.0f) row_of[n++] = r;
    return n;
}

void al_rows_compact(void *buf, size_t row_bytes, const int32_t *row_of, int n) {
    char *b = buf;
    for (int i = 0; i < n; i++)
        if (row_of[i] != i) memmove(b + (size_t)i * row_bytes, b + (size_t)row_of[i] * row_bytes, row_bytes);
}

void al_rows_expand(void *buf, size_t row_bytes, const int32_t *row_of, int n, int rows) {
    char *b = buf;
    int next = rows; /* rows [row_of[i] + 1, next) are pads */
    for (int i = n - 1; i >= 0; i--) {
        const int r = row_of[i];
        if (next > r + 1) memset(b + (size_t)(r + 1) * row_bytes, 0, (size_t)(next - r - 1) * row_bytes);
        if (r != i) memmove(b + (size_t)r * row_bytes, b + (size_t)i * row_bytes, row_bytes);
        next = r;
    }
    if (next > 0) memset(b, 0, (size_t)next * row_bytes);
}

void al_rows_gather(void *dst, const void *src, size_t row_bytes, const int32_t *row_of, int n) {
    char *d = dst;
    const char *s = src;
    for (int i = 0; i < n; i++) memcpy(d + (size_t)i * row_bytes, s + (size_t)row_of[i] * row_bytes, row_bytes);
}
