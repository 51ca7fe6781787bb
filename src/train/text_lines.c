/* text_lines.c: a training text read line by line and each line tokenised without special tokens, the
 * one reader of the MLM corpus (mlm_data.c) and the sentence-order documents (sop_data.c). An encoding
 * error is prefixed with its line number. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "pretrain.h"

al_status al_text_lines_encode(const al_tokenizer *tok, const char *text, size_t len, al_text_line_fn fn,
                               void *user, al_error *err) {
    al_encode_options eo = al_encode_default_options();
    eo.add_special_tokens = 0;
    char *line = NULL;
    size_t line_cap = 0, start = 0;
    int64_t line_no = 0;
    al_status st = AL_OK;
    int stop = 0;
    while (!st && !stop && start < len) {
        const char *nl = memchr(text + start, '\n', len - start);
        const size_t end = nl ? (size_t)(nl - text) : len, n = end - start;
        line_no++;
        if (n + 1 > line_cap) {
            const size_t cap = (n + 1) * 2;
            char *nb = realloc(line, cap);
            if (!nb) {
                st = al_err(err, AL_ERR_OOM, "text line %lld: out of memory", (long long)line_no);
                break;
            }
            line = nb;
            line_cap = cap;
        }
        memcpy(line, text + start, n);
        line[n] = 0;
        start = end + 1;
        al_encoding enc = {0};
        if (n > 0 && (st = al_tokenizer_encode(tok, line, NULL, &eo, &enc, err))) {
            char where[48];
            snprintf(where, sizeof where, "line %lld", (long long)line_no);
            al_err_prefix(err, where);
            break;
        }
        st = fn(user, line, n, &enc, &stop, err);
        if (n > 0) al_encoding_free(&enc);
    }
    free(line);
    return st;
}
