/* model_files.c: which of the given files hold the weights, and which files the loader did not use and why
 * (al_model_unused_file), so a file under an unexpected name is never ignored without a word. */
#include "model_files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"

static int ends_with(const char *s, const char *tail) {
    size_t n = strlen(s), t = strlen(tail);
    return n >= t && strcmp(s + n - t, tail) == 0;
}

/* A file whose name says it holds weights in a format the loader reads. */
static int is_weights_name(const char *name) {
    return ends_with(name, ".safetensors") || ends_with(name, ".bin") || ends_with(name, ".pt") ||
           ends_with(name, ".pth");
}

int al_files_pick_weights(const al_fileset *fs, const char **name, int *sharded, int *torch, char *why,
                          size_t why_size) {
    static const struct { const char *name; int sharded, torch; } sources[] = {
        {"model.safetensors", 0, 0},
        {"model.safetensors.index.json", 1, 0},
        {"pytorch_model.bin", 0, 1},
        {"pytorch_model.bin.index.json", 1, 1},
    };
    why[0] = 0;
    for (size_t i = 0; i < sizeof sources / sizeof sources[0]; i++)
        if (al_fileset_get(fs, sources[i].name, NULL)) {
            *name = sources[i].name;
            *sharded = sources[i].sharded;
            *torch = sources[i].torch;
            return 1;
        }
    /* None of Hugging Face's names: the only weights file there is, whatever its name, as fastNLP and
     * older scripts save them (bert_model.bin). Two or more are not guessed between. */
    int found = 0;
    size_t at = 0;
    for (int i = 0; i < al_fileset_count(fs); i++) {
        const char *n = al_fileset_name(fs, i);
        if (!is_weights_name(n)) continue;
        if (found++ == 0) *name = n;
        if (at < why_size) at += (size_t)snprintf(why + at, why_size - at, "%s%s", at ? ", " : "", n);
    }
    if (found != 1) return found ? -1 : 0;
    *sharded = 0;
    *torch = !ends_with(*name, ".safetensors");
    return 1;
}

static int listed(const char *const *used, int n_used, const char *name) {
    for (int i = 0; i < n_used; i++)
        if (used[i] && strcmp(used[i], name) == 0) return 1;
    return 0;
}

/* Why the loader did not use a file it was given (into buf, for the weights file's name). */
static const char *reason_for(const char *name, const char *weights_file, const al_tokenizer *tok,
                              const al_fileset *fs, char *buf, size_t size) {
    if (is_weights_name(name) || ends_with(name, ".index.json")) {
        snprintf(buf, size, "another weights file: the weights come from %.80s", weights_file);
        return buf;
    }
    if (ends_with(name, ".h5") || ends_with(name, ".msgpack") || ends_with(name, ".onnx") ||
        ends_with(name, ".ckpt") || strstr(name, ".ckpt."))
        return "TensorFlow, Flax or ONNX weights: attnlab reads safetensors and PyTorch files";
    static const char *const tokenizer_files[] = {"vocab.txt", "vocab.json", "merges.txt", "spm.model", "tokenizer.model",
                                                  "added_tokens.json", "tokenizer_config.json", "special_tokens_map.json",
                                                  NULL};
    for (int i = 0; tokenizer_files[i]; i++)
        if (strcmp(name, tokenizer_files[i]) == 0) {
            if (!tok) return "a tokenizer file, but the tokenizer's vocabulary is missing";
            if (al_fileset_get(fs, "tokenizer.json", NULL)) return "the tokenizer comes from tokenizer.json";
            return "not part of the tokenizer that was read";
        }
    return "not a file attnlab reads";
}

al_status al_files_note_unused(al_model *m, const al_fileset *fs, const char *const *used, int n_used,
                               al_error *err) {
    const int n = al_fileset_count(fs);
    m->unused = calloc((size_t)(n > 0 ? n : 1), sizeof *m->unused);
    if (!m->unused) return al_err(err, AL_ERR_OOM, "model: out of memory");
    /* the tokenizer's files, by the rule it loads them with (al_tokenizer_files, src/text/tok_load.c) */
    const char *tok_files[8];
    const int n_tok = m->tokenizer ? al_tokenizer_files(fs, tok_files, 8) : 0;
    for (int i = 0; i < n; i++) {
        const char *name = al_fileset_name(fs, i);
        int in_use = listed(used, n_used, name) || listed(tok_files, n_tok < 8 ? n_tok : 8, name);
        if (in_use) continue;
        al_unused_file *u = &m->unused[m->n_unused++];
        snprintf(u->name, sizeof u->name, "%s", name);
        char buf[128];
        snprintf(u->reason, sizeof u->reason, "%s",
                 reason_for(name, m->weights_file, m->tokenizer, fs, buf, sizeof buf));
    }
    return AL_OK;
}
