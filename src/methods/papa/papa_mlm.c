/* papa_mlm.c: the MLM score of PAPA's Sec. 5.5 (docs/papa.md#mlm-score): how well the model's own
 * masked-language-model head still predicts masked tokens when heads are constant. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/rng.h"
#include "../../train/pretrain.h"
#include "../../train/train.h"
#include "../../model/forward_internal.h"
#include "../../model/model_internal.h"
#include "papa.h"
#include "../tasks/task.h"

al_status al_papa_mlm_examples(const al_tokenizer *tok, al_papa_layout layout, const char *const *lines,
                               const char *const *pairs, int n, int L, uint64_t seed, int32_t *ids, int32_t *mask,
                               int32_t *type_ids, int32_t *labels, al_error *err) {
    al_mlm_masking m = al_mlm_default_masking(tok);
    if (m.mask_id < 0) return al_err(err, AL_ERR_INVALID, "mlm score: the tokenizer has no mask token");
    m.replace_mask = 1.0f; /* evaluation: every chosen token becomes the mask token */
    m.replace_random = 0.0f;
    int *cand = malloc(sizeof *cand * (size_t)L);
    if (!cand) return al_err(err, AL_ERR_OOM, "mlm score: out of memory");
    al_status st = AL_OK;
    for (int x = 0; x < n && !st; x++) {
        const size_t at = (size_t)x * L;
        al_papa_example ex = {ids + at, mask + at, type_ids + at, NULL, 0};
        st = al_papa_encode(tok, layout, lines[x], pairs ? pairs[x] : NULL, L, &ex, err);
        if (st) break;
        for (int i = 0; i < L; i++) labels[at + i] = AL_IGNORE_INDEX;
        al_rng rng;
        al_rng_seed(&rng, al_mlm_derive_seed(seed, AL_SEED_PAPA_MLM_MASKING, (uint64_t)x));
        /* pads hold the pad id, below n_special, so only real tokens are candidates */
        al_mlm_mask_sequence(ids + at, labels + at, L, &m, &rng, cand);
    }
    free(cand);
    return st;
}

/* A split's examples as text lines: pairs as pairs (a pair task's segment A alone can be one word, and a lone
 * masked word says nothing about the model), token tasks' words joined by spaces. */
al_status al_papa_mlm_task_examples(const al_tokenizer *tok, const al_task *t, int split, int n, al_papa_layout layout,
                                    int L, uint64_t seed, al_papa_inputs *out, al_error *err) {
    memset(out, 0, sizeof *out);
    const al_task_example *ex = split == AL_TASK_TRAIN ? t->train : t->validation;
    const int avail = split == AL_TASK_TRAIN ? t->n_train : t->n_validation;
    if (n < 0 || n > avail) n = avail;
    char **lines = calloc((size_t)n + 1, sizeof *lines);
    const char **pairs = calloc((size_t)n + 1, sizeof *pairs);
    al_status st = lines && pairs ? AL_OK : al_err(err, AL_ERR_OOM, "mlm examples: out of memory");
    for (int i = 0; i < n && !st; i++) pairs[i] = ex[i].text_pair;
    for (int i = 0; i < n && !st; i++) {
        const al_task_example *e = &ex[i];
        size_t len = 1;
        if (e->text) len += strlen(e->text);
        for (int w = 0; w < e->n_words; w++) len += strlen(e->words[w]) + 1;
        lines[i] = malloc(len);
        if (!lines[i]) {
            st = al_err(err, AL_ERR_OOM, "mlm examples: out of memory");
            break;
        }
        lines[i][0] = 0;
        if (e->text) strcat(lines[i], e->text);
        for (int w = 0; w < e->n_words; w++) {
            if (w) strcat(lines[i], " ");
            strcat(lines[i], e->words[w]);
        }
    }
    const size_t nL = (size_t)(n ? n : 1) * L;
    if (!st) {
        out->ids = malloc(nL * 4), out->mask = malloc(nL * 4), out->type_ids = malloc(nL * 4), out->labels = malloc(nL * 4);
        out->group = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
        if (!out->ids || !out->mask || !out->type_ids || !out->labels || !out->group)
            st = al_err(err, AL_ERR_OOM, "mlm examples: out of memory");
    }
    if (!st)
        st = al_papa_mlm_examples(tok, layout, (const char *const *)lines, pairs, n, L, seed, out->ids, out->mask,
                                  out->type_ids, out->labels, err);
    if (!st) {
        out->n = n, out->L = L, out->token_task = 1;
        for (int i = 0; i < n; i++) out->group[i] = -1;
    } else {
        al_papa_inputs_free(out);
    }
    for (int i = 0; lines && i < n; i++) free(lines[i]);
    free(lines);
    free(pairs);
    return st;
}

/* -log softmax(logits)[target] in double, and whether target is the arg max (first maximum). */
static double token_nll(const float *logits, int V, int target, int *hit) {
    float mx = logits[0];
    int arg = 0;
    for (int v = 1; v < V; v++)
        if (logits[v] > mx) mx = logits[v], arg = v;
    double sum = 0.0;
    for (int v = 0; v < V; v++) sum += exp((double)logits[v] - mx);
    *hit = arg == target;
    return log(sum) - ((double)logits[target] - mx);
}

al_status al_papa_mlm_eval(const al_model *model, const int32_t *ids, const int32_t *mask, const int32_t *type_ids,
                           const int32_t *labels, int n, int L, int batch_size, const al_head_policy *policies,
                           const al_forward_params *params, al_papa_mlm_stats *out, al_error *err) {
    memset(out, 0, sizeof *out);
    if (!al_model_has_mlm_head(model))
        return al_err(err, AL_ERR_INVALID, "mlm score: the model has no MLM head (weights without 'cls.predictions')");
    const al_config *c = al_model_config(model);
    const int V = c->vocab_size, D = c->hidden_size, NL = c->n_layers, md = model->w.mlm_dim;
    if (batch_size < 1) batch_size = 8;
    if (batch_size > n) batch_size = n;
    /* the head runs on the labelled rows only (about 15% of the tokens): their last-layer states are
     * gathered, so the vocabulary-sized logits exist for those rows alone */
    const size_t BL = (size_t)batch_size * L;
    float *hidden = malloc(sizeof(float) * (NL + 1) * BL * D), *rows = malloc(sizeof(float) * BL * D),
          *wide = malloc(sizeof(float) * BL * (size_t)(md > D ? md : D)), *logits = malloc(sizeof(float) * BL * V);
    int32_t *targets = malloc(sizeof(int32_t) * BL);
    al_status st = AL_OK;
    if (!hidden || !rows || !wide || !logits || !targets)
        st = al_err(err, AL_ERR_OOM, "mlm score: out of memory for %zu MB (lower the batch size)",
                    sizeof(float) * BL * ((NL + 2) * (size_t)D + V) >> 20);
    al_forward_params fp = params ? *params : al_forward_default_params();
    fp.policies = policies;
    fp.progress = NULL; /* progress is reported per batch below */
    for (int b0 = 0; b0 < n && !st; b0 += batch_size) {
        const int nb = n - b0 < batch_size ? n - b0 : batch_size;
        const size_t at = (size_t)b0 * L;
        al_batch batch = {nb, L, ids + at, mask + at, type_ids ? type_ids + at : NULL, NULL};
        al_forward_outputs o = {0};
        o.hidden_states = hidden;
        st = al_forward(model, &batch, &fp, &o, err);
        if (st) break;
        const float *last = hidden + (size_t)NL * nb * L * D;
        int n_rows = 0;
        for (size_t t = 0; t < (size_t)nb * L; t++) {
            if (labels[at + t] == AL_IGNORE_INDEX) continue;
            memcpy(rows + (size_t)n_rows * D, last + t * D, sizeof(float) * D);
            targets[n_rows++] = labels[at + t];
        }
        if (n_rows) al_fwd_mlm_rows(model, fp.pool, rows, n_rows, wide, logits);
        for (int r = 0; r < n_rows; r++) {
            int hit;
            out->nll_sum += token_nll(logits + (size_t)r * V, V, targets[r], &hit);
            out->correct += hit;
            out->n++;
        }
        if (params && params->progress) params->progress(params->progress_user, "mlm", (double)(b0 + nb) / n);
    }
    free(hidden), free(rows), free(wide), free(logits), free(targets);
    return st;
}
