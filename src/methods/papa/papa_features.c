/* papa_features.c: the frozen encoder's hidden states of one head configuration, computed once and cached
 * as probe rows (the "quick" preset of docs/probes.md): every seed's probe then trains on the same
 * features. The encoder runs in eval mode. Then the probe a sweep trains on them (papa_features.h). */
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../model/forward_internal.h"
#include "papa_features.h"

/* Rows a split will produce: real tokens (sequence probe) or labelled positions (token probe). */
static int64_t count_rows(const al_papa_inputs *in) {
    int64_t n = 0;
    for (size_t t = 0; t < (size_t)in->n * in->L; t++)
        n += in->token_task ? in->labels[t] != AL_IGNORE_INDEX && in->mask[t] : in->mask[t] != 0;
    return n;
}

al_status al_papa_features(const al_model *model, const al_papa_inputs *in, const al_head_policy *policies,
                           int embeddings_only, int batch_size, size_t mem_limit, const al_forward_params *params,
                           al_probe_data **out, al_error *err) {
    *out = NULL;
    const al_config *c = al_model_config(model);
    const int NL = c->n_layers, D = c->hidden_size, L = in->L, S = embeddings_only ? 1 : NL + 1;
    const al_probe_kind kind = in->token_task ? AL_PROBE_TOKEN : AL_PROBE_SEQUENCE;
    if (batch_size < 1) batch_size = 16;
    if (batch_size > in->n) batch_size = in->n;
    al_probe_data *data = NULL;
    al_status st = al_probe_data_new(kind, S, D, L, in->n, count_rows(in), mem_limit, &data, err);
    if (st) return st;
    const size_t per_state = (size_t)batch_size * L * D;
    float *hidden = malloc(per_state * (NL + 1) * sizeof *hidden);
    if (!hidden) {
        al_probe_data_free(data);
        return al_err(err, AL_ERR_OOM, "features: out of memory for %zu MB of hidden states (lower the batch size)",
                      per_state * (NL + 1) * sizeof *hidden >> 20);
    }
    al_forward_params fp = params ? *params : al_forward_default_params();
    fp.policies = policies;
    fp.progress = NULL;
    const float *states[64];
    for (int b0 = 0; b0 < in->n && !st; b0 += batch_size) {
        const int nb = in->n - b0 < batch_size ? in->n - b0 : batch_size;
        const size_t at = (size_t)b0 * L;
        al_batch batch = {nb, L, in->ids + at, in->mask + at, in->type_ids + at, NULL};
        al_forward_outputs o = {0};
        o.hidden_states = hidden;
        /* the embeddings-only baseline reads hidden state 0: the layers would be computed for nothing */
        st = embeddings_only ? al_forward_embeddings(model, &batch, hidden, err) : al_forward(model, &batch, &fp, &o, err);
        if (st) break;
        /* al_forward packs layer k of this batch at k * nb * L * D */
        for (int k = 0; k < S; k++) states[k] = hidden + (size_t)k * nb * L * D;
        al_probe_dense dense = {S, nb, L, D, states, in->mask + at, in->token_task ? in->labels + at : NULL};
        st = al_probe_data_add(data, &dense, in->token_task ? NULL : in->labels + b0, in->token_task, err);
        if (!st && params && params->progress)
            params->progress(params->progress_user, "features", (double)(b0 + nb) / in->n);
    }
    free(hidden);
    if (st) al_probe_data_free(data);
    else *out = data;
    return st;
}

al_probe_config al_papa_probe_config(const al_model *model, const al_task *task, int L, const al_papa_probe_settings *ps,
                                     int embeddings_only) {
    const al_config *cfg = al_model_config(model);
    al_probe_config pc = al_probe_default_config();
    pc.kind = task->kind == AL_TASK_TOKEN ? AL_PROBE_TOKEN : AL_PROBE_SEQUENCE;
    pc.n_states = embeddings_only ? 1 : cfg->n_layers + 1;
    pc.hidden = cfg->hidden_size;
    pc.max_len = L;
    pc.n_labels = task->n_labels;
    pc.dropout = pc.kind == AL_PROBE_TOKEN ? 0.0f : ps->dropout;
    pc.max_batch = ps->batch_size > 64 ? ps->batch_size : 64;
    return pc;
}

al_probe_fit_options al_papa_probe_fit_options(const al_papa_probe_settings *ps, uint64_t seed,
                                               const volatile int *cancel) {
    al_probe_fit_options fo = al_probe_fit_default_options();
    fo.epochs = ps->epochs;
    fo.batch_size = ps->batch_size;
    fo.lr = ps->lr;
    fo.schedule = ps->schedule;
    fo.seed = seed;
    fo.cancel = cancel;
    return fo;
}
