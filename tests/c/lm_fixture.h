/* lm_fixture.h: what the tests of PAPA on a causal model share (test_decoder_papa.c, test_decoder_lambda.c): seeded
 * texts of common words for the tiny GPT-2 of tests/fixtures/decoder_tiny_gpt2, a session with it loaded as "tiny",
 * a papa request on two texts, a decoder golden with its float64 reference, and a golden's rows as a corpus of one
 * window each. */
#ifndef AL_TEST_LM_FIXTURE_H
#define AL_TEST_LM_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "golden_file.h"
#include "methods/lm/lm_corpus.h"
#include "session_request.h"

#define TINY "tests/fixtures/decoder_tiny_gpt2"

/* n_docs documents of words_per_doc words drawn by a seeded generator, separated by blank lines (malloc'd). */
static inline char *make_text(int n_docs, int words_per_doc, unsigned seed) {
    static const char *const words[] = {"the", "cat", "sat", "on", "a", "mat", "and", "dog", "ran", "far", "away",
                                        "from", "home", "while", "birds", "sang", "in", "trees", NULL};
    size_t cap = (size_t)n_docs * words_per_doc * 8 + 16, at = 0;
    char *t = malloc(cap);
    int n_words = 0;
    while (words[n_words]) n_words++;
    for (int d = 0; d < n_docs; d++) {
        for (int w = 0; w < words_per_doc; w++) {
            seed = seed * 1103515245u + 12345u;
            at += (size_t)snprintf(t + at, cap - at, "%s%s", w ? " " : "", words[(seed >> 16) % (unsigned)n_words]);
        }
        at += (size_t)snprintf(t + at, cap - at, ".\n\n");
    }
    return t;
}

/* A session of `threads` threads with the tiny GPT-2 loaded as "tiny". */
static inline al_session *session_with(int threads) {
    al_session_params p = al_session_default_params();
    p.n_threads = threads;
    al_session *s = al_session_new_params(&p);
    al_reply r;
    cJSON *j = run(s, "{\"op\": \"load_model\", \"model\": \"tiny\", \"path\": \"" TINY "\"}", AL_OK, &r);
    cJSON_Delete(j);
    al_reply_free(&r);
    return s;
}

/* The papa request on "tiny" scoring `held` with constants from `avg`, window L (0: the op's default), with
 * `extra` fields ("" or ", ...") (malloc'd). */
static inline char *papa_lm_request(const char *held, const char *avg, int L, const char *extra) {
    cJSON *q = cJSON_CreateObject();
    cJSON_AddStringToObject(q, "op", "papa");
    cJSON_AddStringToObject(q, "model", "tiny");
    cJSON_AddStringToObject(q, "corpus", held);
    cJSON_AddStringToObject(q, "constants_corpus", avg);
    if (L > 0) cJSON_AddNumberToObject(q, "L", L);
    char *body = cJSON_PrintUnformatted(q);
    cJSON_Delete(q);
    const size_t n = strlen(body) + strlen(extra) + 2;
    char *out = malloc(n);
    body[strlen(body) - 1] = 0; /* drop the closing brace */
    snprintf(out, n, "%s%s}", body, extra);
    free(body);
    return out;
}

/* tests/golden/decoders/<dir>: its model into *m, golden.safetensors into g and <ref_file> into ref; 1 when all three
 * opened (else a failed check names dir). decoder_golden_close releases what opened. */
typedef struct decoder_golden {
    al_model *m;
    golden_file g, ref;
    int have_g, have_ref;
} decoder_golden;

static inline int decoder_golden_open(const char *dir, const char *ref_file, decoder_golden *d) {
    char path[256];
    al_error err;
    memset(d, 0, sizeof *d);
    snprintf(path, sizeof path, "tests/golden/decoders/%s", dir);
    CHECK_MSG(al_model_load_dir(path, &d->m, &err) == AL_OK, "%s: %s", dir, err.message);
    snprintf(path, sizeof path, "tests/golden/decoders/%s/golden.safetensors", dir);
    d->have_g = golden_open(&d->g, path);
    snprintf(path, sizeof path, "tests/golden/decoders/%s/%s", dir, ref_file);
    d->have_ref = golden_open(&d->ref, path);
    CHECK_MSG(d->m && d->have_g && d->have_ref, "%s: model or golden files missing", dir);
    return d->m && d->have_g && d->have_ref;
}

static inline void decoder_golden_close(decoder_golden *d) {
    if (d->have_g) golden_close(&d->g);
    if (d->have_ref) golden_close(&d->ref);
    al_model_free(d->m);
}

/* A golden's B rows of L ids (mask: 1 real, 0 pad) as a corpus: each row one window and one document. */
static inline void golden_corpus(const int32_t *ids, const int32_t *mask, int B, int L, al_lm_corpus *c) {
    memset(c, 0, sizeof *c);
    c->n_docs = c->n_windows = B;
    c->window = L;
    c->doc = malloc(sizeof(int) * (size_t)B);
    c->len = malloc(sizeof(int) * (size_t)B);
    c->ids = malloc(sizeof(int32_t) * (size_t)B * L);
    memcpy(c->ids, ids, sizeof(int32_t) * (size_t)B * L);
    for (int b = 0; b < B; b++) {
        c->doc[b] = b;
        c->len[b] = 0;
        for (int i = 0; i < L; i++) c->len[b] += mask[(size_t)b * L + i] != 0;
    }
}

#endif
