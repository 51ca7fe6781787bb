/* pretrain_shards.c: one MLM pretraining step as a client of the generic sharded step (shards.c).
 *
 * The step's batch is built first, in shard order, from one masking generator, so the masking draws are the
 * same for any shard count; each shard then runs forward, MLM loss and backward on its sequences and reports
 * its labelled positions as its weight, so the combined gradient is that of the mean loss over the whole
 * batch. With one shard the step is exactly the unsharded one (same masking draws, same dropout seed, no
 * reweighting). A causal model's step (objective "clm", docs/decoder_pretraining.md) is the same with next-token
 * labels instead of masking. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "pretrain.h"
#include "train.h"

/* The shards' batches; callback user data (each shard reads only its own). */
typedef struct mlm_step {
    al_mlm_batch batch[AL_MAX_SHARDS];
    int clm; /* the next-token loss (a causal model's) instead of the masked tokens' */
} mlm_step;

static al_status mlm_shard_loss(void *user, const al_shard_job *job, float *loss, double *weight, al_error *err) {
    const mlm_step *ms = user;
    const al_mlm_batch *b = &ms->batch[job->shard];
    al_batch in = {b->B, b->L, b->ids, b->mask, NULL, NULL};
    int n_labelled = 0;
    al_status st = al_train_forward(job->ctx, &in, err);
    if (!st)
        st = ms->clm ? al_train_lm_loss(job->ctx, b->labels, loss, &n_labelled, err)
                     : al_train_mlm_loss(job->ctx, b->labels, loss, &n_labelled, err);
    if (!st) st = al_train_backward(job->ctx, NULL, err);
    *weight = n_labelled;
    return st;
}

/* The step of either objective: the shards' batches in shard order (masked from mask_rng, or with next-token
 * labels when mk is NULL), then al_shards_run weighted by labelled positions. */
static al_status packed_step(al_shard_set *set, const al_mlm_corpus *c, const int *seq_index, int batch_size,
                             const al_mlm_masking *mk, al_rng *mask_rng, int pad_id, const al_clm_copy *copies,
                             uint64_t dropout_seed, al_shard_step *out, al_error *err) {
    memset(out, 0, sizeof *out);
    const int n = al_shards_count(set);
    if (n < 1 || batch_size < n) return al_err(err, AL_ERR_INVALID, "pretrain: batch_size %d is below the shards %d",
                                               batch_size, n);
    mlm_step *ms = calloc(1, sizeof *ms);
    if (!ms) return al_err(err, AL_ERR_OOM, "pretrain: out of memory");
    ms->clm = mk == NULL;
    al_status st = AL_OK;
    for (int i = 0; i < n && !st; i++) {
        int b0, b1;
        al_shards_range(batch_size, n, i, &b0, &b1); /* the sequences al_shards_run gives shard i */
        st = mk ? al_mlm_make_batch(c, seq_index + b0, b1 - b0, mk, mask_rng, &ms->batch[i], err)
                : al_clm_make_batch(c, seq_index + b0, b1 - b0, pad_id, copies ? copies + b0 : NULL, &ms->batch[i], err);
        out->n_tokens += ms->batch[i].n_tokens;
    }
    al_shards_result r;
    if (!st) st = al_shards_run(set, batch_size, dropout_seed, mlm_shard_loss, ms, &r, err);
    if (!st) {
        out->loss = r.loss;
        out->n_labelled = (int)r.weight;
        out->grads = r.grads;
    }
    for (int i = 0; i < n; i++) al_mlm_batch_free(&ms->batch[i]);
    free(ms);
    return st;
}

al_status al_shards_step(al_shard_set *set, const al_mlm_corpus *c, const int *seq_index, int batch_size,
                         const al_mlm_masking *mk, al_rng *mask_rng, uint64_t dropout_seed, al_shard_step *out,
                         al_error *err) {
    if (!mk) return al_err(err, AL_ERR_INVALID, "pretrain: an MLM step needs its masking");
    return packed_step(set, c, seq_index, batch_size, mk, mask_rng, 0, NULL, dropout_seed, out, err);
}

al_status al_shards_step_clm(al_shard_set *set, const al_mlm_corpus *c, const int *seq_index, int batch_size,
                             int pad_id, const al_clm_copy *copies, uint64_t dropout_seed, al_shard_step *out,
                             al_error *err) {
    return packed_step(set, c, seq_index, batch_size, NULL, NULL, pad_id, copies, dropout_seed, out, err);
}

/* ---------------------------------------------------------------- with sentence order */

/* The step's sequences in batch order as a corpus (so al_mlm_make_batch masks and pads them), their token
 * types, and per shard its pairs (rows within the shard's batch, labels) and the scale of its sentence-order
 * gradient. */
typedef struct sop_step {
    al_mlm_batch batch[AL_MAX_SHARDS];
    int32_t *types[AL_MAX_SHARDS];
    int *rows[AL_MAX_SHARDS];
    int32_t *labels[AL_MAX_SHARDS];
    int n_pairs[AL_MAX_SHARDS];
    float scale[AL_MAX_SHARDS];
    float mlm_loss[AL_MAX_SHARDS], sop_loss[AL_MAX_SHARDS];
    int n_labelled[AL_MAX_SHARDS], n_correct[AL_MAX_SHARDS];
    const float *head;
    int head_slot;
} sop_step;

static al_status sop_shard_loss(void *user, const al_shard_job *job, float *loss, double *weight, al_error *err) {
    sop_step *s = user;
    const int i = job->shard;
    const al_mlm_batch *b = &s->batch[i];
    al_batch in = {b->B, b->L, b->ids, b->mask, s->types[i], NULL};
    al_status st = al_train_forward(job->ctx, &in, err);
    if (!st) st = al_train_mlm_loss(job->ctx, b->labels, &s->mlm_loss[i], &s->n_labelled[i], err);
    if (!st)
        st = al_train_sop_loss(job->ctx, s->head, s->rows[i], s->labels[i], s->n_pairs[i], s->scale[i],
                               job->extra[s->head_slot], &s->sop_loss[i], &s->n_correct[i], err);
    if (!st) st = al_train_backward(job->ctx, NULL, err);
    /* weighted by n_i / N in the combination: the MLM term becomes the batch mean, the scaled SOP term p_i / P */
    *loss = s->mlm_loss[i] + s->scale[i] * s->sop_loss[i];
    *weight = s->n_labelled[i];
    return st;
}

static int is_pair(int b, int n_pairs, int B) {
    return (int)((int64_t)(b + 1) * n_pairs / B) > (int)((int64_t)b * n_pairs / B);
}

al_status al_shards_step_sop(al_shard_set *set, const al_mlm_corpus *c, const int *seq_index, int n_mlm,
                             const al_sop_docs *docs, const int *run_index, int n_pairs, al_rng *pair_rng,
                             const al_mlm_masking *mk, al_rng *mask_rng, uint64_t dropout_seed, const float *head,
                             int head_slot, al_sop_step *out, al_error *err) {
    memset(out, 0, sizeof *out);
    const int n = al_shards_count(set), B = n_mlm + n_pairs;
    if (n < 1 || B < n || n_mlm < 0 || n_pairs < 1 || !docs || !head)
        return al_err(err, AL_ERR_INVALID, "pretrain: sentence-order step: %d sequences and %d pairs for %d shards",
                      n_mlm, n_pairs, n);
    const int max_len = docs->max_len > c->max_len ? docs->max_len : c->max_len;
    sop_step *s = calloc(1, sizeof *s);
    al_mlm_corpus sc = {0}; /* the step's sequences */
    int32_t *seq_types = NULL, *seq_label = NULL;
    int *ident = NULL;
    if (s) {
        sc.ids = malloc(sizeof *sc.ids * (size_t)B * max_len);
        sc.seq_start = malloc(sizeof *sc.seq_start * (size_t)B);
        sc.seq_len = malloc(sizeof *sc.seq_len * (size_t)B);
        seq_types = malloc(sizeof *seq_types * (size_t)B * max_len);
        seq_label = malloc(sizeof *seq_label * (size_t)B);
        ident = malloc(sizeof *ident * (size_t)B);
    }
    al_status st = AL_OK;
    if (!s || !sc.ids || !sc.seq_start || !sc.seq_len || !seq_types || !seq_label || !ident) {
        st = al_err(err, AL_ERR_OOM, "pretrain: out of memory");
        goto done;
    }
    s->head = head;
    s->head_slot = head_slot;
    sc.n_seqs = B;
    sc.max_len = max_len;
    int next_mlm = 0, next_pair = 0;
    for (int b = 0; b < B; b++) {
        int32_t *ids = sc.ids + (size_t)b * max_len, *types = seq_types + (size_t)b * max_len;
        sc.seq_start[b] = (int64_t)b * max_len;
        ident[b] = b;
        if (is_pair(b, n_pairs, B)) {
            int label = 0;
            sc.seq_len[b] = al_sop_make_pair(docs, run_index[next_pair++], pair_rng, ids, types, &label);
            seq_label[b] = label;
        } else {
            const int q = seq_index[next_mlm++];
            sc.seq_len[b] = c->seq_len[q];
            memcpy(ids, c->ids + c->seq_start[q], sizeof *ids * (size_t)c->seq_len[q]);
            memset(types, 0, sizeof *types * (size_t)c->seq_len[q]);
            seq_label[b] = -1;
        }
    }
    int total_labelled = 0;
    for (int i = 0; i < n && !st; i++) {
        int b0, b1;
        al_shards_range(B, n, i, &b0, &b1);
        st = al_mlm_make_batch(&sc, ident + b0, b1 - b0, mk, mask_rng, &s->batch[i], err);
        if (st) break;
        const al_mlm_batch *bt = &s->batch[i];
        s->types[i] = calloc((size_t)bt->B * bt->L, sizeof *s->types[i]);
        s->rows[i] = malloc(sizeof *s->rows[i] * (size_t)bt->B);
        s->labels[i] = malloc(sizeof *s->labels[i] * (size_t)bt->B);
        if (!s->types[i] || !s->rows[i] || !s->labels[i]) {
            st = al_err(err, AL_ERR_OOM, "pretrain: out of memory");
            break;
        }
        for (int b = b0; b < b1; b++) {
            memcpy(s->types[i] + (size_t)(b - b0) * bt->L, seq_types + (size_t)b * max_len,
                   sizeof(int32_t) * (size_t)sc.seq_len[b]);
            if (seq_label[b] >= 0) s->rows[i][s->n_pairs[i]] = b - b0, s->labels[i][s->n_pairs[i]++] = seq_label[b];
        }
        out->mlm.n_tokens += bt->n_tokens;
        total_labelled += bt->n_chosen;
    }
    /* the scales need every shard's labelled positions, known once every batch is masked */
    for (int i = 0; i < n && !st; i++)
        s->scale[i] = s->batch[i].n_chosen > 0
                          ? (float)(((double)total_labelled / s->batch[i].n_chosen) * ((double)s->n_pairs[i] / n_pairs))
                          : 0.0f;
    al_shards_result r;
    if (!st) st = al_shards_run(set, B, dropout_seed, sop_shard_loss, s, &r, err);
    if (!st) {
        out->mlm.loss = r.loss;
        out->mlm.n_labelled = (int)r.weight;
        out->mlm.grads = r.grads;
        out->head_grads = r.extra[head_slot];
        out->n_pairs = n_pairs;
        double ml = 0, sl = 0;
        for (int i = 0; i < n; i++) {
            ml += (double)s->n_labelled[i] / (r.weight > 0 ? r.weight : 1) * s->mlm_loss[i];
            sl += (double)s->n_pairs[i] / n_pairs * s->sop_loss[i];
            out->n_correct += s->n_correct[i];
        }
        out->mlm_loss = (float)ml;
        out->sop_loss = (float)sl;
    }
done:
    for (int i = 0; s && i < n; i++) {
        al_mlm_batch_free(&s->batch[i]);
        free(s->types[i]);
        free(s->rows[i]);
        free(s->labels[i]);
    }
    free(s);
    free(sc.ids);
    free(sc.seq_start);
    free(sc.seq_len);
    free(seq_types);
    free(seq_label);
    free(ident);
    return st;
}
