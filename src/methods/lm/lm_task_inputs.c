/* lm_task_inputs.c: a task's examples as a causal language model reads them (lm_task_inputs.h). */
#include "lm_task_inputs.h"

#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"

al_status al_lm_task_inputs(const al_tokenizer *tok, const al_task *task, int split, int max_examples, int L,
                            int pad_id, al_papa_inputs *out, al_error *err) {
    memset(out, 0, sizeof *out);
    const al_task_example *ex = split == AL_TASK_TRAIN ? task->train : task->validation;
    int n = split == AL_TASK_TRAIN ? task->n_train : task->n_validation;
    if (max_examples > 0 && n > max_examples) n = max_examples;
    for (int x = 0; x < n; x++)
        if (ex[x].text_pair)
            return al_err(err, AL_ERR_INVALID, "request: field 'task': '%s' is a pair task (example %d has two "
                          "segments); a causal language model reads one text per example, with no separator to join "
                          "two by", task->id, x + 1);
    if (n < 1) return al_err(err, AL_ERR_INVALID, "task '%s': the %s split has no examples", task->id,
                             al_task_split_name((al_task_split)split));
    const size_t nL = (size_t)n * L;
    out->n = n;
    out->L = L;
    out->ids = malloc(nL * sizeof *out->ids);
    out->mask = calloc(nL, sizeof *out->mask);
    out->type_ids = calloc(nL, sizeof *out->type_ids);
    out->labels = malloc((size_t)n * sizeof *out->labels);
    out->group = malloc((size_t)n * sizeof *out->group);
    if (!out->ids || !out->mask || !out->type_ids || !out->labels || !out->group) {
        al_papa_inputs_free(out);
        return al_err(err, AL_ERR_OOM, "task '%s': out of memory for %d examples of %d positions", task->id, n, L);
    }
    al_status st = AL_OK;
    al_encode_options opt = al_encode_default_options(); /* the tokenizer's own special tokens, as the lm op */
    opt.max_length = L;
    opt.truncation = 1;
    for (int x = 0; x < n && !st; x++) {
        const size_t at = (size_t)x * L;
        al_encoding enc = {0};
        st = ex[x].words && !ex[x].text ? al_tokenizer_encode_words(tok, ex[x].words, ex[x].n_words, &opt, &enc, err)
                                        : al_tokenizer_encode(tok, ex[x].text, NULL, &opt, &enc, err);
        for (int i = 0; !st && i < L; i++) {
            const int real = i < enc.n_tokens;
            out->ids[at + i] = real ? enc.ids[i] : pad_id;
            out->mask[at + i] = real;
        }
        if (!st && enc.n_tokens < 1)
            st = al_err(err, AL_ERR_INVALID, "no token");
        out->labels[x] = ex[x].text ? ex[x].label : -1;
        out->group[x] = ex[x].group;
        out->n_truncated += enc.truncated;
        al_encoding_free(&enc);
        if (st) {
            char msg[sizeof err->message];
            memcpy(msg, err->message, sizeof msg);
            st = al_err(err, st, "task '%s' %s example %d: %s", task->id, al_task_split_name((al_task_split)split),
                        x + 1, msg);
        }
    }
    if (st) al_papa_inputs_free(out);
    return st;
}
