/* tool_tokenize: the native side of tests/js/tokenizer_oracle.test.mjs.
 *   tool_tokenize MODEL_DIR [--no-special] [--max-length N] [--pad-to N]
 * reads JSON lines {"text": ..., "text_pair": ...} (or {"words": [...]}) on stdin and prints one JSON
 * line per input: {"ids": [...], "type_ids": [...], "word_ids": [...], "attention_mask": [...],
 * "offsets": [...], "truncated": 0|1} or {"error": "...", "status": "format"}. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"

static void print_array(const char *name, const int32_t *v, int n) {
    printf("\"%s\":[", name);
    for (int i = 0; i < n; i++) printf(i ? ",%d" : "%d", (int)v[i]);
    printf("]");
}

static void print_error(const al_error *err) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "error", err->message);
    cJSON_AddStringToObject(o, "status", al_status_name(err->code));
    char *s = cJSON_PrintUnformatted(o);
    printf("%s\n", s);
    cJSON_free(s);
    cJSON_Delete(o);
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: tool_tokenize MODEL_DIR [--no-special] [--max-length N] [--pad-to N]\n");
        return 2;
    }
    al_encode_options opt = al_encode_default_options();
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--no-special") == 0) opt.add_special_tokens = 0;
        else if (strcmp(argv[i], "--max-length") == 0 && i + 1 < argc) {
            opt.max_length = atoi(argv[++i]);
            opt.truncation = 1;
        } else if (strcmp(argv[i], "--pad-to") == 0 && i + 1 < argc) opt.pad_to = atoi(argv[++i]);
    }
    al_error err = {0};
    al_fileset *fs = al_fileset_new();
    al_tokenizer *tok = NULL;
    if (al_fileset_add_dir(fs, argv[1], &err) || al_tokenizer_load(fs, &tok, &err)) {
        fprintf(stderr, "tool_tokenize: %s\n", err.message);
        al_fileset_free(fs);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        cJSON *req = cJSON_ParseWithLength(line, (size_t)len);
        if (!cJSON_IsObject(req)) {
            cJSON_Delete(req);
            if (strspn(line, " \t\r\n") == (size_t)len) continue;
            printf("{\"error\":\"bad request line\",\"status\":\"invalid\"}\n");
            continue;
        }
        const cJSON *text = cJSON_GetObjectItemCaseSensitive(req, "text");
        const cJSON *pair = cJSON_GetObjectItemCaseSensitive(req, "text_pair");
        const cJSON *words = cJSON_GetObjectItemCaseSensitive(req, "words");
        al_encoding enc;
        al_status st;
        if (cJSON_IsArray(words)) {
            int n = cJSON_GetArraySize(words);
            const char **w = calloc((size_t)n + 1, sizeof *w);
            for (int i = 0; i < n; i++) w[i] = cJSON_GetStringValue(cJSON_GetArrayItem(words, i));
            st = al_tokenizer_encode_words(tok, w, n, &opt, &enc, &err);
            free(w);
        } else {
            st = al_tokenizer_encode(tok, cJSON_IsString(text) ? text->valuestring : "",
                                     cJSON_IsString(pair) ? pair->valuestring : NULL, &opt, &enc, &err);
        }
        if (st) {
            print_error(&err);
        } else {
            printf("{");
            print_array("ids", enc.ids, enc.length);
            printf(",");
            print_array("type_ids", enc.type_ids, enc.length);
            printf(",");
            print_array("word_ids", enc.word_ids, enc.length);
            printf(",");
            print_array("attention_mask", enc.attention_mask, enc.length);
            printf(",");
            print_array("offsets", enc.offsets, enc.length * 2);
            printf(",\"truncated\":%d}\n", enc.truncated);
            al_encoding_free(&enc);
        }
        cJSON_Delete(req);
        fflush(stdout);
    }
    free(line);
    al_tokenizer_free(tok);
    al_fileset_free(fs);
    return 0;
}
