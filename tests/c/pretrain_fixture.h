/* pretrain_fixture.h: the tiny pretraining set-up shared by the pretraining tests: a made-up corpus of
 * short lines over 18 words, its learned 60-token vocabulary, and a 2-layer config that trains in
 * milliseconds. */
#ifndef AL_PRETRAIN_FIXTURE_H
#define AL_PRETRAIN_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "attnlab.h"
#include "core/rng.h"
#include "train/pretrain.h"

static int fixture_write_file(const char *path, const char *text, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    int ok = fwrite(text, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

/* Writes dir/train.txt (n_lines lines of min_words to min_words + spread - 1 words from al_rng(seed)),
 * dir/heldout.txt (its first tenth) and dir/vocab.txt; *text gets the training text (malloc'd) when not
 * NULL. Returns 1 on success. */
static int fixture_make_data(const char *dir, uint64_t seed, int n_lines, int min_words, int spread, char **text,
                             size_t *len) {
    static const char *const words[] = {"the", "cat", "dog", "sat", "on", "a", "mat", "and", "ran", "to",
                                        "big", "small", "house", "tree", "under", "green", "red", "fox"};
    char path[512];
    if (al_make_dirs(dir)) return 0;
    char *t = malloc(1 << 16);
    size_t n = 0;
    al_rng r;
    al_rng_seed(&r, seed);
    for (int l = 0; l < n_lines; l++) {
        int k = min_words + (int)al_rng_below(&r, (uint32_t)spread);
        for (int i = 0; i < k; i++) n += (size_t)sprintf(t + n, "%s%s", i ? " " : "", words[al_rng_below(&r, 18)]);
        n += (size_t)sprintf(t + n, ".\n");
    }
    snprintf(path, sizeof path, "%s/train.txt", dir);
    int ok = fixture_write_file(path, t, n);
    snprintf(path, sizeof path, "%s/heldout.txt", dir);
    ok = ok && fixture_write_file(path, t, n / 10 + 1);
    al_vocab_learn_options o = al_vocab_learn_default_options();
    o.vocab_size = 60;
    char *vocab = NULL;
    size_t vl = 0;
    al_error err;
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    ok = ok && al_vocab_learn(t, n, &o, &vocab, &vl, NULL, &err) == AL_OK && fixture_write_file(path, vocab, vl);
    free(vocab);
    if (text && ok) *text = t, *len = n;
    else free(t);
    return ok;
}

/* A 2-layer, 2-head, 32-wide BERT reading the data of fixture_make_data(dir), writing to out. */
static al_pretrain_config fixture_config(const char *dir, const char *out) {
    al_pretrain_config c = al_pretrain_default_config();
    snprintf(c.name, sizeof c.name, "tiny");
    snprintf(c.vocab, sizeof c.vocab, "%s/vocab.txt", dir);
    snprintf(c.train, sizeof c.train, "%s/train.txt", dir);
    snprintf(c.heldout, sizeof c.heldout, "%s/heldout.txt", dir);
    snprintf(c.out_dir, sizeof c.out_dir, "%s", out);
    c.hidden_size = 32;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 2;
    c.intermediate_size = 64;
    c.max_position_embeddings = 32;
    c.max_len = 32;
    c.batch_size = 4;
    c.warmup_steps = 4;
    c.lr = 3e-3f;
    c.checkpoint_interval = 0;
    c.log_interval = 0;
    return c;
}

#endif
