/* lm_score.c: next-token predictions of a causal model (lm_score.h). The forward's last hidden states pass the LM
 * head a block of rows at a time (the [rows, V] logits of a 50k vocabulary are large), then each row's log-softmax
 * in double: nll = logsumexp - logit(target), the entropy, and the top-k by a partial selection. */
#include "lm_score.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/det_math.h"
#include "../../core/error.h"
#include "../../model/forward_internal.h"
#include "../../model/model_internal.h"
#include "../probes/metrics.h"

#define LM_BLOCK_ROWS 64

al_status al_lm_rows_new(int B, int L, int top_k, al_lm_rows *out, al_error *err) {
    memset(out, 0, sizeof *out);
    const size_t n = (size_t)B * L, k = (size_t)(top_k > 0 ? top_k : 0);
    out->top_k = top_k;
    out->nll = malloc(sizeof(float) * n);
    out->entropy = malloc(sizeof(float) * n);
    out->top_ids = malloc(sizeof(int32_t) * (n * k + 1));
    out->top_p = malloc(sizeof(float) * (n * k + 1));
    if (!out->nll || !out->entropy || !out->top_ids || !out->top_p) {
        al_lm_rows_free(out);
        return al_err(err, AL_ERR_OOM, "lm: out of memory for [%d, %d] predictions", B, L);
    }
    return AL_OK;
}

void al_lm_rows_free(al_lm_rows *r) {
    free(r->nll), free(r->entropy), free(r->top_ids), free(r->top_p);
    memset(r, 0, sizeof *r);
}

void al_lm_score_row(const float *x, int V, int target, int k, float *nll, float *entropy, int32_t *top_ids,
                     float *top_p) {
    float mx = x[0];
    for (int v = 1; v < V; v++)
        if (x[v] > mx) mx = x[v];
    double sum = 0.0, wsum = 0.0;
    for (int v = 0; v < V; v++) {
        const double e = al_det_exp((double)x[v] - mx);
        sum += e;
        wsum += e * ((double)x[v] - mx);
    }
    const double log_z = al_det_log(sum); /* logsumexp - max */
    *nll = target >= 0 ? (float)(log_z - ((double)x[target] - mx)) : NAN;
    *entropy = (float)(log_z - wsum / sum);
    al_lm_top_ids(x, V, k, top_ids);
    for (int j = 0; j < k; j++) top_p[j] = top_ids[j] >= 0 ? (float)(al_det_exp((double)x[top_ids[j]] - mx) / sum) : 0.0f;
}

void al_lm_top_ids(const float *x, int V, int k, int32_t *top_ids) {
    for (int j = 0; j < k; j++) top_ids[j] = -1;
    for (int v = 0; v < V; v++) { /* insertion into the k best (strictly greater moves up: ties keep the lower id) */
        if (k == 0 || (top_ids[k - 1] >= 0 && x[v] <= x[top_ids[k - 1]])) continue;
        int j = k - 1;
        while (j > 0 && (top_ids[j - 1] < 0 || x[v] > x[top_ids[j - 1]])) {
            top_ids[j] = top_ids[j - 1];
            j--;
        }
        top_ids[j] = v;
    }
}

al_status al_lm_score(const al_model *model, const al_batch *batch, const al_forward_params *params, al_lm_rows *rows,
                      al_error *err) {
    return al_lm_score_outputs(model, batch, params, rows, NULL, err);
}

al_status al_lm_score_outputs(const al_model *model, const al_batch *batch, const al_forward_params *params,
                              al_lm_rows *rows, const al_forward_outputs *also, al_error *err) {
    if (!al_model_is_causal(model))
        return al_err(err, AL_ERR_INVALID, "lm: model is %s, not a causal language model",
                      al_arch_name(al_model_config(model)->arch));
    const al_config *c = al_model_config(model);
    const int B = batch->n_seqs, L = batch->seq_len, D = c->hidden_size, V = c->vocab_size, k = rows->top_k;
    const size_t BL = (size_t)B * L, last = (size_t)c->n_layers * BL * D;
    float *hidden = malloc(sizeof(float) * (last + BL * D));
    float *logits = malloc(sizeof(float) * (size_t)LM_BLOCK_ROWS * V);
    if (!hidden || !logits) {
        free(hidden), free(logits);
        return al_err(err, AL_ERR_OOM, "lm: out of memory for [%d, %d] hidden states", B, L);
    }
    al_forward_outputs out = {0};
    if (also) out = *also;
    out.hidden_states = hidden;
    al_status st = al_forward(model, batch, params, &out, err);
    al_threadpool *pool = params ? params->pool : NULL;
    for (size_t r0 = 0; st == AL_OK && r0 < BL; r0 += LM_BLOCK_ROWS) {
        const int n = BL - r0 < LM_BLOCK_ROWS ? (int)(BL - r0) : LM_BLOCK_ROWS;
        al_fwd_lm_rows(model, pool, hidden + last + r0 * D, n, logits);
        for (int q = 0; q < n; q++) {
            const size_t t = r0 + (size_t)q;
            const int i = (int)(t % (size_t)L);
            const int32_t *mask = batch->attention_mask;
            const int real = !mask || mask[t];
            const int next_real = i + 1 < L && (!mask || mask[t + 1]);
            int32_t *ti = rows->top_ids + t * (size_t)(k > 0 ? k : 0);
            float *tp = rows->top_p + t * (size_t)(k > 0 ? k : 0);
            if (!real) {
                rows->nll[t] = rows->entropy[t] = NAN;
                for (int j = 0; j < k; j++) ti[j] = -1, tp[j] = 0.0f;
                continue;
            }
            al_lm_score_row(logits + (size_t)q * V, V, next_real ? batch->input_ids[t + 1] : -1, k, &rows->nll[t],
                            &rows->entropy[t], ti, tp);
        }
    }
    free(hidden), free(logits);
    return st;
}

void al_lm_summarize(const double *nll_sum, const long long *n, int documents, al_lm_summary *out) {
    double total = 0.0;
    long long tokens = 0;
    for (int d = 0; d < documents; d++) total += nll_sum[d], tokens += n[d];
    out->documents = documents;
    out->tokens = tokens;
    out->nats = tokens > 0 ? total / (double)tokens : NAN;
    out->lo = out->hi = NAN;
    if (documents < 2 || tokens == 0) return;
    /* ratio estimator: var(R) ~ sum_d (y_d - R n_d)^2 / (D (D - 1) nbar^2) */
    const double nbar = (double)tokens / documents;
    double ss = 0.0;
    for (int d = 0; d < documents; d++) {
        const double e = nll_sum[d] - out->nats * (double)n[d];
        ss += e * e;
    }
    const double se = sqrt(ss / ((double)documents * (documents - 1))) / nbar;
    const double t = al_student_t_quantile(0.975, documents - 1);
    out->lo = out->nats - t * se;
    out->hi = out->nats + t * se;
}
