/* tool_wordpiece_json: the native side of tests/js/tokenizer_oracle.test.mjs's decoder tokenizer test.
 *   tool_wordpiece_json VOCAB_TXT OUT_DIR
 * writes OUT_DIR/tokenizer.json as a decoder's checkpoint does (src/text/wordpiece_json.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "text/wordpiece_json.h"

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: tool_wordpiece_json VOCAB_TXT OUT_DIR\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) return fprintf(stderr, "%s: cannot read\n", argv[1]), 1;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *vocab = malloc((size_t)n + 1);
    const size_t got = vocab ? fread(vocab, 1, (size_t)n, f) : 0;
    fclose(f);
    char *json = NULL;
    al_error err;
    if (!vocab || got != (size_t)n || al_wordpiece_tokenizer_json(vocab, got, argv[1], &json, &err)) {
        fprintf(stderr, "%s\n", vocab && got == (size_t)n ? err.message : "cannot read the vocabulary");
        return 1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/tokenizer.json", argv[2]);
    FILE *o = fopen(path, "wb");
    const int bad = !o || fputs(json, o) < 0;
    if (o) fclose(o);
    free(vocab), free(json);
    if (bad) return fprintf(stderr, "%s: cannot write\n", path), 1;
    return 0;
}
