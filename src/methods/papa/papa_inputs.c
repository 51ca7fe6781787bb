/* papa_inputs.c: a task's examples turned into the model's input arrays in the chosen layout
 * (docs/papa.md#input-layout): ids, mask and token types per example, and labels per example (sequence
 * tasks) or per position (token tasks: a word's label on its first sub-token, none elsewhere). */
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../train/train.h"
#include "papa.h"
#include "../tasks/task.h"

void al_papa_inputs_free(al_papa_inputs *in) {
    free(in->ids);
    free(in->mask);
    free(in->type_ids);
    free(in->labels);
    free(in->group);
    memset(in, 0, sizeof *in);
}

char *al_papa_mask_text(const al_tokenizer *tok, const char *text) {
    static const char lit[] = "[MASK]";
    const al_special_ids sp = al_tokenizer_special_ids(tok);
    const char *mask = sp.mask >= 0 ? al_tokenizer_id_to_token(tok, sp.mask) : NULL;
    if (!text || !mask || strcmp(mask, lit) == 0 || !strstr(text, lit)) return NULL;
    size_t n = 0;
    for (const char *p = text; (p = strstr(p, lit)); p += sizeof lit - 1) n++;
    char *out = malloc(strlen(text) + n * strlen(mask) + 1), *o = out;
    if (!out) return NULL;
    for (const char *p = text;;) {
        const char *hit = strstr(p, lit);
        size_t keep = hit ? (size_t)(hit - p) : strlen(p);
        memcpy(o, p, keep);
        o += keep;
        if (!hit) break;
        memcpy(o, mask, strlen(mask));
        o += strlen(mask);
        p = hit + sizeof lit - 1;
    }
    *o = 0;
    return out;
}

const char **al_papa_mask_words(const al_tokenizer *tok, const char *const *words, int n) {
    const al_special_ids sp = al_tokenizer_special_ids(tok);
    const char *mask = sp.mask >= 0 ? al_tokenizer_id_to_token(tok, sp.mask) : NULL;
    if (!mask || strcmp(mask, "[MASK]") == 0) return NULL;
    int hits = 0;
    for (int i = 0; i < n; i++) hits += strcmp(words[i], "[MASK]") == 0;
    const char **out = hits ? malloc((size_t)n * sizeof *out) : NULL;
    for (int i = 0; out && i < n; i++) out[i] = strcmp(words[i], "[MASK]") == 0 ? mask : words[i];
    return out;
}

al_status al_papa_inputs_build(const al_tokenizer *tok, const al_task *task, int split, int max_examples,
                               al_papa_layout layout, int L, al_papa_inputs *out, al_error *err) {
    memset(out, 0, sizeof *out);
    const al_task_example *ex = split == AL_TASK_TRAIN ? task->train : task->validation;
    int n = split == AL_TASK_TRAIN ? task->n_train : task->n_validation;
    if (max_examples > 0 && n > max_examples) n = max_examples;
    if (n < 1) return al_err(err, AL_ERR_INVALID, "task '%s': the %s split has no examples", task->id,
                             al_task_split_name((al_task_split)split));
    const int token = task->kind == AL_TASK_TOKEN;
    const size_t nL = (size_t)n * L;
    out->n = n;
    out->L = L;
    out->token_task = token;
    out->ids = malloc(nL * sizeof *out->ids);
    out->mask = malloc(nL * sizeof *out->mask);
    out->type_ids = malloc(nL * sizeof *out->type_ids);
    out->labels = malloc((token ? nL : (size_t)n) * sizeof *out->labels);
    out->group = malloc((size_t)n * sizeof *out->group);
    int32_t *first = token ? malloc((size_t)L * sizeof *first) : NULL;
    if (!out->ids || !out->mask || !out->type_ids || !out->labels || !out->group || (token && !first)) {
        free(first);
        al_papa_inputs_free(out);
        return al_err(err, AL_ERR_OOM, "task '%s': out of memory for %d examples of %d positions", task->id, n, L);
    }
    al_status st = AL_OK;
    for (int x = 0; x < n && !st; x++) {
        const size_t at = (size_t)x * L;
        al_papa_example e = {out->ids + at, out->mask + at, out->type_ids + at, first, 0};
        if (token) {
            const char **w = al_papa_mask_words(tok, ex[x].words, ex[x].n_words);
            st = al_papa_encode_words(tok, layout, w ? w : ex[x].words, ex[x].n_words, L, &e, err);
            free(w);
            for (int i = 0; !st && i < L; i++)
                out->labels[at + i] = first[i] >= 0 && ex[x].word_labels[first[i]] != AL_TASK_NO_LABEL
                                          ? ex[x].word_labels[first[i]]
                                          : AL_IGNORE_INDEX;
        } else {
            char *a = al_papa_mask_text(tok, ex[x].text), *b = al_papa_mask_text(tok, ex[x].text_pair);
            st = al_papa_encode(tok, layout, a ? a : ex[x].text, b ? b : ex[x].text_pair, L, &e, err);
            free(a);
            free(b);
            out->labels[x] = ex[x].label;
        }
        out->group[x] = ex[x].group;
        out->n_truncated += e.truncated;
        if (st) {
            char msg[sizeof err->message];
            memcpy(msg, err->message, sizeof msg);
            st = al_err(err, st, "task '%s' %s example %d: %s", task->id, al_task_split_name((al_task_split)split),
                        x + 1, msg);
        }
    }
    free(first);
    if (st) al_papa_inputs_free(out);
    return st;
}
