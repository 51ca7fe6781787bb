/* shards.c: one training step of any loss split over shards of the batch (the contract is in shards.h).
 * Each shard runs its callback as one task of the set's own thread pool (one thread per shard, started
 * once with the set; fewer when threads cannot be started, e.g. a WASM build without threads, and then
 * the shards run one after the other), or of the caller's pool when opt->pool names one; the gradients
 * are combined afterwards in shard order, so the bits depend on the shard count only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/seeds.h"
#include "../core/threadpool.h"
#include "shards.h"
#include "train_internal.h"

typedef struct shard {
    al_train_ctx *ctx;
    float **extra;        /* [n_extra] this shard's registered buffers */
    const size_t *extra_n; /* [n_extra] their sizes (the set's) */
    al_shard_job job;
    al_shard_loss_fn fn;
    void *user;
    float loss;
    double weight;
    al_status st;
    al_error err;
} shard;

struct al_shard_set {
    int n, max_batch;
    size_t n_params, n_lambda;
    shard *s;
    al_threadpool *pool;   /* n threads: shard i is task i, on thread i */
    al_threadpool *borrowed; /* the caller's pool (opt->pool), used instead of pool: shard i is task i */
    float *grads, *dtheta; /* combined, when n > 1 (grads only with parameter gradients) */
    int n_extra;
    size_t *extra_n;       /* [n_extra] floats of each registered buffer */
    float **extra;         /* [n_extra] combined, when n > 1 */
};

static al_status range_error(int n_shards, int batch_size, al_error *err) {
    return al_err(err, AL_ERR_INVALID, "shards: shards %d must be in [1, min(batch_size %d, %d)]", n_shards, batch_size,
                  AL_MAX_SHARDS);
}

al_status al_shards_measure(const al_model *model, int n_shards, int batch_size, int max_len,
                            const al_train_options *opt, al_train_size *out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "shards: no output pointer");
    memset(out, 0, sizeof *out);
    if (n_shards < 1 || n_shards > batch_size || n_shards > AL_MAX_SHARDS) return range_error(n_shards, batch_size, err);
    al_train_size one;
    al_status st = al_train_ctx_measure(model, (batch_size + n_shards - 1) / n_shards, max_len, opt, &one, err);
    if (st) return st;
    const uint64_t n = (uint64_t)n_shards, NH = (uint64_t)model->config.n_layers * model->config.n_heads;
    out->max_batch = batch_size;
    out->max_len = max_len;
    out->activations = n * one.activations;
    out->mlm_head = n * one.mlm_head;
    out->grads = n * one.grads + (n > 1 ? one.grads : 0);
    out->other = n * one.other + (n > 1 ? NH * sizeof(float) : 0) + sizeof(al_shard_set) + n * sizeof(shard);
    out->total = out->activations + out->mlm_head + out->grads + out->other;
    return AL_OK;
}

al_status al_shards_new(al_model *model, int n_shards, int batch_size, int max_len, const al_train_options *opt,
                        al_shard_set **out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "shards: no output pointer");
    *out = NULL;
    if (!model) return al_err(err, AL_ERR_INVALID, "shards: model is NULL");
    if (n_shards < 1 || n_shards > batch_size || n_shards > AL_MAX_SHARDS) return range_error(n_shards, batch_size, err);
    al_shard_set *set = calloc(1, sizeof *set);
    if (!set) return al_err(err, AL_ERR_OOM, "shards: out of memory");
    set->n = n_shards;
    set->max_batch = batch_size;
    set->n_params = al_model_n_params(model);
    set->n_lambda = (size_t)model->config.n_layers * model->config.n_heads;
    set->s = calloc((size_t)n_shards, sizeof *set->s);
    if (!set->s) {
        al_shards_free(set);
        return al_err(err, AL_ERR_OOM, "shards: out of memory");
    }
    const int per = (batch_size + n_shards - 1) / n_shards;
    for (int i = 0; i < n_shards; i++) {
        al_status st = al_train_ctx_new(model, per, max_len, opt, &set->s[i].ctx, err);
        if (st) {
            al_shards_free(set);
            return st;
        }
    }
    if (n_shards > 1) {
        set->borrowed = opt->pool;
        al_status st = set->borrowed ? AL_OK : al_threadpool_new(n_shards, &set->pool, err);
        if (st) {
            al_shards_free(set);
            return st;
        }
        const int has_grads = al_train_grads(set->s[0].ctx) != NULL;
        set->dtheta = malloc(sizeof *set->dtheta * (set->n_lambda ? set->n_lambda : 1));
        if (has_grads) set->grads = malloc(sizeof *set->grads * (set->n_params ? set->n_params : 1));
        if (!set->dtheta || (has_grads && !set->grads)) {
            al_shards_free(set);
            return al_err(err, AL_ERR_OOM, "shards: out of memory for the combined gradients");
        }
    }
    *out = set;
    return AL_OK;
}

void al_shards_free(al_shard_set *set) {
    if (!set) return;
    for (int i = 0; set->s && i < set->n; i++) {
        al_train_ctx_free(set->s[i].ctx);
        for (int k = 0; set->s[i].extra && k < set->n_extra; k++) free(set->s[i].extra[k]);
        free(set->s[i].extra);
    }
    for (int k = 0; set->extra && k < set->n_extra; k++) free(set->extra[k]);
    free(set->extra);
    free(set->extra_n);
    free(set->s);
    free(set->grads);
    free(set->dtheta);
    al_threadpool_free(set->pool);
    free(set);
}

int al_shards_count(const al_shard_set *set) { return set ? set->n : 0; }

void al_shards_range(int batch_size, int n, int i, int *b0, int *b1) {
    *b0 = (int)((int64_t)batch_size * i / n);
    *b1 = (int)((int64_t)batch_size * (i + 1) / n);
}
al_train_ctx *al_shards_ctx(al_shard_set *set, int i) { return set && i >= 0 && i < set->n ? set->s[i].ctx : NULL; }

/* Grows a pointer array by one slot (NULL); 0 on failure, the array unchanged. */
static int grow(float ***arr, int n) {
    float **p = realloc(*arr, sizeof *p * (size_t)(n + 1));
    if (!p) return 0;
    p[n] = NULL;
    *arr = p;
    return 1;
}

al_status al_shards_add_grads(al_shard_set *set, size_t n, int *index, al_error *err) {
    if (!set || !index) return al_err(err, AL_ERR_INVALID, "shards: set or index is NULL");
    if (n == 0) return al_err(err, AL_ERR_INVALID, "shards: an extra gradient buffer needs at least one float");
    const int k = set->n_extra;
    size_t *sizes = realloc(set->extra_n, sizeof *sizes * (size_t)(k + 1));
    if (!sizes) return al_err(err, AL_ERR_OOM, "shards: out of memory");
    set->extra_n = sizes;
    /* Slot k is added to the combined array and to each shard's (NULL until allocated); on failure only the
     * arrays that got it are cleaned, and n_extra counts the slot only once all its buffers exist. */
    const int set_grown = grow(&set->extra, k);
    int n_grown = 0, ok = set_grown;
    while (ok && n_grown < set->n) {
        ok = grow(&set->s[n_grown].extra, k);
        n_grown += ok;
    }
    for (int i = 0; ok && i < set->n; i++) ok = (set->s[i].extra[k] = calloc(n, sizeof(float))) != NULL;
    if (ok && set->n > 1) ok = (set->extra[k] = calloc(n, sizeof(float))) != NULL;
    if (!ok) {
        for (int i = 0; i < n_grown; i++) free(set->s[i].extra[k]), set->s[i].extra[k] = NULL;
        if (set_grown) free(set->extra[k]), set->extra[k] = NULL;
        return al_err(err, AL_ERR_OOM, "shards: out of memory for an extra gradient buffer of %zu floats", n);
    }
    set->extra_n[k] = n;
    set->n_extra = k + 1;
    *index = k;
    return AL_OK;
}

al_status al_shards_set_policies(al_shard_set *set, const al_head_policy *policies, al_error *err) {
    if (!set) return al_err(err, AL_ERR_INVALID, "shards: set is NULL");
    for (int i = 0; i < set->n; i++) {
        al_status st = al_train_set_policies(set->s[i].ctx, policies, err);
        if (st) return st;
    }
    return AL_OK;
}

void al_shards_set_lambda_logits(al_shard_set *set, const float *theta) {
    if (!set || !theta) return;
    for (int i = 0; i < set->n; i++)
        memcpy(al_train_lambda_logits(set->s[i].ctx), theta, sizeof(float) * set->n_lambda);
}

/* Every shard must run the same model: same policies, lambda logits and dropout mode as shard 0. */
static al_status check_same(const al_shard_set *set, al_error *err) {
    const al_train_ctx *c0 = set->s[0].ctx;
    const size_t NH = set->n_lambda;
    for (int i = 1; i < set->n; i++) {
        const al_train_ctx *c = set->s[i].ctx;
        if (c->has_policies != c0->has_policies || memcmp(c->policies, c0->policies, NH * sizeof *c->policies))
            return al_err(err, AL_ERR_INVALID,
                          "shards: shard %d's attention policies differ from shard 0's (set them with "
                          "al_shards_set_policies)", i);
        if (memcmp(c->theta, c0->theta, NH * sizeof *c->theta))
            return al_err(err, AL_ERR_INVALID,
                          "shards: shard %d's lambda logits differ from shard 0's (set them with "
                          "al_shards_set_lambda_logits)", i);
        if (c->opt.training != c0->opt.training)
            return al_err(err, AL_ERR_INVALID, "shards: shard %d's training (dropout) mode differs from shard 0's", i);
    }
    return AL_OK;
}

/* The shard's whole step, in its thread: zeroing its gradients there keeps that work parallel too. */
static void run_shard(void *arg, int task, int n_tasks, int thread) {
    shard *sh = (shard *)arg + task;
    al_train_zero_grads(sh->ctx);
    for (int k = 0; k < sh->job.n_extra; k++) memset(sh->extra[k], 0, sizeof(float) * sh->extra_n[k]);
    sh->st = sh->fn(sh->user, &sh->job, &sh->loss, &sh->weight, &sh->err);
}

/* dst = sum_i w[i] src[i], accumulated in shard order. */
static void combine(float *dst, float *const *src, const float *w, int n, size_t len) {
    for (size_t p = 0; p < len; p++) dst[p] = w[0] * src[0][p];
    for (int i = 1; i < n; i++) {
        const float *g = src[i];
        for (size_t p = 0; p < len; p++) dst[p] += w[i] * g[p];
    }
}

al_status al_shards_run(al_shard_set *set, int batch_size, uint64_t dropout_seed, al_shard_loss_fn fn, void *user,
                        al_shards_result *out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "shards: no output pointer");
    memset(out, 0, sizeof *out);
    if (!set || !fn) return al_err(err, AL_ERR_INVALID, "shards: set or loss callback is NULL");
    if (batch_size < set->n || batch_size > set->max_batch)
        return al_err(err, AL_ERR_INVALID, "shards: batch_size %d must be in [%d (shards), %d (the set's batch_size)]",
                      batch_size, set->n, set->max_batch);
    al_status st = check_same(set, err);
    if (st) return st;
    for (int i = 0; i < set->n; i++) {
        shard *sh = &set->s[i];
        al_train_seed(sh->ctx, i == 0 ? dropout_seed : al_mlm_derive_seed(dropout_seed, AL_SEED_SHARD_DROPOUT, (uint64_t)i));
        int b0, b1;
        al_shards_range(batch_size, set->n, i, &b0, &b1);
        sh->job = (al_shard_job){sh->ctx, i, set->n, b0, b1, sh->extra, set->n_extra};
        sh->extra_n = set->extra_n;
        sh->fn = fn;
        sh->user = user;
        sh->loss = 0;
        sh->weight = 0;
        sh->st = AL_OK;
        sh->err.message[0] = '\0';
    }
    al_threadpool_for(set->borrowed ? set->borrowed : set->pool, set->n, run_shard, set->s);
    for (int i = 0; i < set->n; i++)
        if (set->s[i].st) {
            if (err) *err = set->s[i].err;
            return set->s[i].st;
        }
    double total = 0;
    for (int i = 0; i < set->n; i++) {
        const double wi = set->s[i].weight;
        if (!(wi >= 0.0 && isfinite(wi)))
            return al_err(err, AL_ERR_INVALID, "shards: shard %d reported weight %g (must be finite and >= 0)", i, wi);
        total += wi;
    }
    out->weight = total;
    out->n_extra = set->n_extra;
    if (set->n == 1) { /* the unsharded step: the shard's own buffers, no reweighting */
        shard *s0 = &set->s[0];
        out->loss = s0->loss;
        out->grads = al_train_grads(s0->ctx);
        out->lambda_grads = al_train_lambda_grads(s0->ctx);
        out->extra = s0->extra;
        if (total == 0.0) {
            al_train_zero_grads(s0->ctx);
            for (int k = 0; k < set->n_extra; k++) memset(s0->extra[k], 0, sizeof(float) * set->extra_n[k]);
        }
        return AL_OK;
    }
    /* w_i in float as (float)weight_i / (float)total: for integer weights (labelled positions) these are
     * the bits of the pretraining step before this module existed. */
    float w[AL_MAX_SHARDS];
    float *src[AL_MAX_SHARDS];
    double loss = 0;
    for (int i = 0; i < set->n; i++) {
        w[i] = total > 0 ? (float)set->s[i].weight / (float)total : 0.0f;
        loss += (double)w[i] * (double)set->s[i].loss;
    }
    out->loss = (float)loss;
    if (set->grads) {
        for (int i = 0; i < set->n; i++) src[i] = al_train_grads(set->s[i].ctx);
        combine(set->grads, src, w, set->n, set->n_params);
        out->grads = set->grads;
    }
    for (int i = 0; i < set->n; i++) src[i] = al_train_lambda_grads(set->s[i].ctx);
    combine(set->dtheta, src, w, set->n, set->n_lambda);
    out->lambda_grads = set->dtheta;
    for (int k = 0; k < set->n_extra; k++) {
        for (int i = 0; i < set->n; i++) src[i] = set->s[i].extra[k];
        combine(set->extra[k], src, w, set->n, set->extra_n[k]);
    }
    out->extra = set->extra;
    return AL_OK;
}
