/* pretrain_clm.c: the held-out evaluation of a causal language model during pretraining (pretrain.h,
 * docs/decoder_pretraining.md): al_forward's next-token logits on the held-out sequences, the mean cross-entropy
 * over every labelled position (perplexity its exp), top-1 accuracy, and the unigram and bigram baselines'
 * perplexities on exactly those positions. Sums in double, in sequence and position order: the same figures for
 * any thread count. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "pretrain.h"
#include "train.h"

#define EVAL_BATCH 8

al_status al_clm_evaluate(const al_model *model, const al_mlm_corpus *c, int n, const al_clm_baselines *base,
                          al_threadpool *pool, al_clm_eval *out, al_error *err) {
    memset(out, 0, sizeof *out);
    const al_config *mc = al_model_config(model);
    const int V = mc->vocab_size;
    if (n <= 0 || n > c->n_seqs) n = c->n_seqs;
    const size_t cap = (size_t)EVAL_BATCH * c->max_len * V;
    float *logits = malloc(sizeof(float) * (cap ? cap : 1));
    int idx[EVAL_BATCH];
    if (!logits) return al_err(err, AL_ERR_OOM, "pretrain: out of memory for the held-out logits");
    double nll = 0.0, nll_uni = 0.0, nll_bi = 0.0;
    int64_t pos = 0, right = 0;
    al_status st = AL_OK;
    for (int s0 = 0; s0 < n && !st; s0 += EVAL_BATCH) {
        const int nb = n - s0 < EVAL_BATCH ? n - s0 : EVAL_BATCH;
        for (int b = 0; b < nb; b++) idx[b] = s0 + b;
        al_mlm_batch batch;
        if ((st = al_clm_make_batch(c, idx, nb, mc->pad_token_id, NULL, &batch, err))) break;
        const al_batch in = {batch.B, batch.L, batch.ids, batch.mask, NULL, NULL};
        al_forward_params p = al_forward_default_params();
        p.pool = pool;
        al_forward_outputs fo = {0};
        fo.lm_logits = logits;
        st = al_forward(model, &in, &p, &fo, err);
        for (int t = 0; !st && t < batch.B * batch.L; t++) {
            const int label = batch.labels[t];
            if (label == AL_IGNORE_INDEX) continue;
            const float *z = logits + (size_t)t * V;
            int arg = 0;
            for (int v = 1; v < V; v++)
                if (z[v] > z[arg]) arg = v;
            double sum = 0.0;
            for (int v = 0; v < V; v++) sum += exp((double)z[v] - z[arg]);
            nll += (double)z[arg] + log(sum) - z[label];
            right += arg == label;
            nll_uni -= log(al_clm_unigram_prob(base, label));
            nll_bi -= log(al_clm_bigram_prob(base, batch.ids[t], label));
            pos++;
        }
        al_mlm_batch_free(&batch);
    }
    free(logits);
    if (st) return st;
    const double d = pos ? (double)pos : 1.0;
    out->positions = pos;
    out->loss = nll / d;
    out->perplexity = exp(nll / d);
    out->unigram_perplexity = exp(nll_uni / d);
    out->bigram_perplexity = exp(nll_bi / d);
    out->accuracy = (double)right / d;
    return AL_OK;
}
