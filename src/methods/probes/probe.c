/* probe.c: the SEQUENCE and TOKEN probes of probe.h (docs/probes.md): creation, parameters, forward and
 * backward passes, predictions.
 *
 * Memory: the parameters and gradients are one allocation each; everything a call needs is carved from
 * one workspace measured at creation for max_batch examples and max_rows rows, so a call allocates
 * nothing. Items are examples (SEQUENCE) or rows (TOKEN); N below is their maximum. */
#include "probe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/carve.h"
#include "../../core/error.h"
#include "../../core/memory.h"
#include "../../kernels/kernels.h"
#include "../../train/grad_ops.h"

struct al_probe {
    al_probe_config cfg;
    int SD;                 /* n_states * D: the W1 input width */
    size_t n_params;
    float *params, *grads;  /* [n_params] */
    al_probe_tensors pt, gt;

    float *mem;             /* the workspace */
    float *pooled, *d_pooled; /* [max_batch, SD]  SEQUENCE: [p_0; ...; p_NL] and its gradient */
    float *z;               /* [N, D]   tanh output */
    float *zd;              /* [N, D]   dropout(z) (SEQUENCE with dropout) */
    uint8_t *keep;          /* [N, D]   dropout keep mask */
    float *dz;              /* [N, D]   gradient wrt zd, then wrt the tanh input */
    float *logits;          /* [N, C] */
    float *dlogits;         /* [N, C]   gradient wrt logits (0 rows for unlabelled items) */
    float *ce;              /* [N, C]   labelled rows' logits, compacted for al_tr_cross_entropy */
    int32_t *ce_labels;     /* [N] */
    int32_t *ce_items;      /* [N]      item index of each compacted row */
    int last_items;         /* items of the last forward pass */
    al_threadpool *pool;    /* the matrix products' threads (NULL: the caller's only); same bits either way */
};

al_probe_config al_probe_default_config(void) {
    al_probe_config c;
    memset(&c, 0, sizeof c);
    c.kind = AL_PROBE_SEQUENCE;
    c.dropout = 0.1f;
    c.max_batch = 32;
    return c;
}

static int max_items(const al_probe_config *c) { return c->kind == AL_PROBE_SEQUENCE ? c->max_batch : c->max_rows; }

/* Carves the workspace (src/core/carve.h; base NULL: only measures). Returns the carver. */
static al_carver layout(al_probe *p, float *base) {
    const al_probe_config *c = &p->cfg;
    const uint64_t N = (uint64_t)max_items(c), D = (uint64_t)c->hidden, C = (uint64_t)c->n_labels;
    const int seq = c->kind == AL_PROBE_SEQUENCE;
    al_carver cv = {base, 0};
    p->pooled = seq ? al_carve(&cv, (uint64_t)c->max_batch * p->SD) : NULL;
    p->d_pooled = seq ? al_carve(&cv, (uint64_t)c->max_batch * p->SD) : NULL;
    p->z = al_carve(&cv, N * D);
    p->zd = seq ? al_carve(&cv, N * D) : NULL;
    p->keep = seq ? al_carve_u8(&cv, N * D) : NULL;
    p->dz = al_carve(&cv, N * D);
    p->logits = al_carve(&cv, N * C);
    p->dlogits = al_carve(&cv, N * C);
    p->ce = al_carve(&cv, N * C);
    p->ce_labels = al_carve_i32(&cv, N);
    p->ce_items = al_carve_i32(&cv, N);
    return cv;
}

static void set_views(al_probe *p, float *buf, al_probe_tensors *t) {
    const al_probe_config *c = &p->cfg;
    const size_t D = (size_t)c->hidden, C = (size_t)c->n_labels;
    float *q = buf;
    t->w = NULL;
    if (c->kind == AL_PROBE_SEQUENCE) {
        t->w = q;
        q += (size_t)c->n_states * c->max_len;
    }
    t->W1 = q;
    q += D * p->SD;
    t->b1 = q;
    q += D;
    t->W2 = q;
    q += C * D;
    t->b2 = q;
}

static al_status check_config(const al_probe_config *c, al_error *err) {
    if (c->kind != AL_PROBE_SEQUENCE && c->kind != AL_PROBE_TOKEN)
        return al_err(err, AL_ERR_INVALID, "probe config: unknown kind %d", (int)c->kind);
    if (c->n_states < 1) return al_err(err, AL_ERR_INVALID, "probe config: n_states %d must be >= 1", c->n_states);
    if (c->hidden < 1) return al_err(err, AL_ERR_INVALID, "probe config: hidden %d must be >= 1", c->hidden);
    if (c->max_len < 1) return al_err(err, AL_ERR_INVALID, "probe config: max_len %d must be >= 1", c->max_len);
    if (c->n_labels < 2) return al_err(err, AL_ERR_INVALID, "probe config: n_labels %d must be >= 2", c->n_labels);
    if (c->max_batch < 1) return al_err(err, AL_ERR_INVALID, "probe config: max_batch %d must be >= 1", c->max_batch);
    if (c->max_rows < 0) return al_err(err, AL_ERR_INVALID, "probe config: max_rows %d must be >= 0", c->max_rows);
    if (!(c->dropout >= 0.0f && c->dropout < 1.0f))
        return al_err(err, AL_ERR_INVALID, "probe config: dropout %g must be in [0, 1)", (double)c->dropout);
    if (c->kind == AL_PROBE_TOKEN && c->dropout != 0.0f)
        return al_err(err, AL_ERR_INVALID,
                      "probe config: dropout %g given for a TOKEN probe, which has no dropout (set 0)",
                      (double)c->dropout);
    /* Every size below must fit an int (kernel dimensions) and size_t on 32-bit WASM. */
    const double SD = (double)c->n_states * c->hidden, rows = c->max_rows ? c->max_rows : (double)c->max_batch * c->max_len;
    const double n_params = (double)c->n_states * c->max_len + (double)c->hidden * SD + c->hidden +
                            (double)c->n_labels * c->hidden + c->n_labels;
    if (SD > 2147483647.0 || rows > 2147483647.0 || rows * SD > (double)SIZE_MAX / 8 || n_params > (double)SIZE_MAX / 8)
        return al_err(err, AL_ERR_INVALID,
                      "probe config: sizes too large (n_states %d x hidden %d, %.0f rows, %.0f parameters)",
                      c->n_states, c->hidden, rows, n_params);
    return AL_OK;
}

/* A probe with its memory, parameters not yet set. */
static al_status create(const al_probe_config *cfg, al_probe **out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "probe: no output pointer");
    *out = NULL;
    if (!cfg) return al_err(err, AL_ERR_INVALID, "probe: config is NULL");
    al_status st = check_config(cfg, err);
    if (st != AL_OK) return st;
    al_probe *p = calloc(1, sizeof *p);
    if (!p) return al_err(err, AL_ERR_OOM, "probe: out of memory");
    p->cfg = *cfg;
    if (!p->cfg.max_rows) p->cfg.max_rows = cfg->max_batch * cfg->max_len;
    const al_probe_config *c = &p->cfg;
    const size_t D = (size_t)c->hidden, C = (size_t)c->n_labels;
    p->SD = c->n_states * c->hidden;
    p->n_params = (c->kind == AL_PROBE_SEQUENCE ? (size_t)c->n_states * c->max_len : 0) + D * p->SD + D + C * D + C;
    const al_carver measured = layout(p, NULL);
    if (!al_carve_fits(&measured)) {
        al_err(err, AL_ERR_INVALID, "probe config: sizes too large (a workspace of %.0f bytes for %d items of %d labels)",
               (double)al_carve_bytes(&measured), max_items(c), c->n_labels);
        al_probe_free(p);
        return AL_ERR_INVALID;
    }
    const size_t ws = (size_t)measured.used;
    p->params = al_alloc_large(p->n_params * sizeof(float), 1);
    p->grads = al_alloc_large(p->n_params * sizeof(float), 1);
    p->mem = al_alloc_large(ws * sizeof(float), 0);
    if (!p->params || !p->grads || !p->mem) {
        const size_t n_params = p->n_params;
        al_probe_free(p);
        return al_err(err, AL_ERR_OOM, "probe: out of memory for %zu parameters and a %zu-byte workspace", n_params,
                      ws * sizeof(float));
    }
    layout(p, p->mem);
    set_views(p, p->params, &p->pt);
    set_views(p, p->grads, &p->gt);
    *out = p;
    return AL_OK;
}

al_status al_probe_new(const al_probe_config *cfg, uint64_t seed, al_probe **out, al_error *err) {
    al_status st = create(cfg, out, err);
    if (st != AL_OK) return st;
    al_probe *p = *out;
    const al_probe_config *c = &p->cfg;
    const size_t D = (size_t)c->hidden, C = (size_t)c->n_labels;
    /* docs/probes.md, "Initialisation": w = 1/L; W1, W2 ~ normal(0, 0.02) (HF initializer_range); biases 0. */
    if (p->pt.w)
        for (size_t i = 0; i < (size_t)c->n_states * c->max_len; i++) p->pt.w[i] = 1.0f / (float)c->max_len;
    al_rng rng;
    al_rng_seed(&rng, seed);
    for (size_t i = 0; i < D * p->SD; i++) p->pt.W1[i] = 0.02f * al_rng_normal(&rng);
    for (size_t i = 0; i < C * D; i++) p->pt.W2[i] = 0.02f * al_rng_normal(&rng);
    return AL_OK;
}

al_status al_probe_new_from(const al_probe_config *cfg, const float *params, al_probe **out, al_error *err) {
    if (!params) {
        if (out) *out = NULL;
        return al_err(err, AL_ERR_INVALID, "probe: params is NULL");
    }
    al_status st = create(cfg, out, err);
    if (st != AL_OK) return st;
    memcpy((*out)->params, params, (*out)->n_params * sizeof(float));
    return AL_OK;
}

void al_probe_free(al_probe *p) {
    if (!p) return;
    al_free_large(p->params);
    al_free_large(p->grads);
    al_free_large(p->mem);
    free(p);
}

const al_probe_config *al_probe_get_config(const al_probe *p) { return &p->cfg; }
void al_probe_set_pool(al_probe *p, al_threadpool *pool) { p->pool = pool; }
size_t al_probe_n_params(const al_probe *p) { return p->n_params; }
float *al_probe_params(al_probe *p) { return p->params; }
float *al_probe_grads(al_probe *p) { return p->grads; }
void al_probe_zero_grads(al_probe *p) { memset(p->grads, 0, p->n_params * sizeof(float)); }
al_probe_tensors al_probe_param_tensors(al_probe *p) { return p->pt; }
al_probe_tensors al_probe_grad_tensors(al_probe *p) { return p->gt; }

void al_probe_decay_mask(const al_probe *p, uint8_t *decay) {
    memset(decay, 1, p->n_params);
    memset(decay + (p->pt.b1 - p->params), 0, (size_t)p->cfg.hidden);
    memset(decay + (p->pt.b2 - p->params), 0, (size_t)p->cfg.n_labels);
}

const float *al_probe_logits(const al_probe *p, int *n_items) {
    if (n_items) *n_items = p->last_items;
    return p->logits;
}

const float *al_probe_pooled(const al_probe *p, int *n_examples) {
    if (n_examples) *n_examples = p->pooled ? p->last_items : 0;
    return p->pooled;
}

/* Checks shapes, indices and labels of a batch against the probe. */
static al_status check_batch(const al_probe *p, const al_probe_batch *b, int need_labels, al_error *err) {
    const al_probe_config *c = &p->cfg;
    if (!b) return al_err(err, AL_ERR_INVALID, "probe: batch is NULL");
    if (b->B < 1 || b->B > c->max_batch)
        return al_err(err, AL_ERR_INVALID, "probe batch: B = %d is outside [1, %d] (max_batch)", b->B, c->max_batch);
    if (b->n_rows < 0 || b->n_rows > c->max_rows)
        return al_err(err, AL_ERR_INVALID, "probe batch: n_rows = %d is outside [0, %d] (max_rows)", b->n_rows,
                      c->max_rows);
    if (b->n_rows > 0 && (!b->feats || !b->row_example || !b->row_pos))
        return al_err(err, AL_ERR_INVALID, "probe batch: feats, row_example or row_pos is NULL");
    for (int r = 0; r < b->n_rows; r++) {
        const int32_t e = b->row_example[r], t = b->row_pos[r];
        if (e < 0 || e >= b->B)
            return al_err(err, AL_ERR_INVALID, "probe batch: row_example[%d] = %d is outside [0, %d)", r, (int)e, b->B);
        if (r > 0 && e < b->row_example[r - 1])
            return al_err(err, AL_ERR_INVALID,
                          "probe batch: row_example[%d] = %d after %d: rows of an example must be contiguous and in "
                          "example order",
                          r, (int)e, (int)b->row_example[r - 1]);
        if (t < 0 || t >= c->max_len)
            return al_err(err, AL_ERR_INVALID, "probe batch: row_pos[%d] = %d is outside [0, %d) (max_len)", r, (int)t,
                          c->max_len);
    }
    if (!need_labels) return AL_OK;
    if (!b->labels) return al_err(err, AL_ERR_INVALID, "probe batch: labels are NULL");
    const int n = c->kind == AL_PROBE_SEQUENCE ? b->B : b->n_rows;
    for (int i = 0; i < n; i++)
        if (b->labels[i] != AL_IGNORE_INDEX && (b->labels[i] < 0 || b->labels[i] >= c->n_labels))
            return al_err(err, AL_ERR_INVALID, "probe batch: labels[%d] = %d is neither %d nor in [0, %d)", i,
                          (int)b->labels[i], AL_IGNORE_INDEX, c->n_labels);
    return AL_OK;
}

/* SEQUENCE pooling: pooled[e, k] = sum over the rows of example e of w[k, t] h_k. */
static void pool(al_probe *p, const al_probe_batch *b) {
    const int S = p->cfg.n_states, D = p->cfg.hidden, L = p->cfg.max_len;
    memset(p->pooled, 0, sizeof(float) * (size_t)b->B * p->SD);
    for (int r = 0; r < b->n_rows; r++) {
        const float *h = b->feats + (size_t)r * p->SD;
        float *dst = p->pooled + (size_t)b->row_example[r] * p->SD;
        for (int k = 0; k < S; k++) {
            const float wk = p->pt.w[(size_t)k * L + b->row_pos[r]];
            for (int i = 0; i < D; i++) dst[(size_t)k * D + i] += wk * h[(size_t)k * D + i];
        }
    }
}

/* Forward to the logits; with dropout when drop_rng is not NULL. Returns the number of items. */
static int forward(al_probe *p, const al_probe_batch *b, al_rng *drop_rng) {
    const al_probe_config *c = &p->cfg;
    const int D = c->hidden, C = c->n_labels;
    const int seq = c->kind == AL_PROBE_SEQUENCE, N = seq ? b->B : b->n_rows;
    const float *x = b->feats;
    if (seq) {
        pool(p, b);
        x = p->pooled;
    }
    p->last_items = N;
    if (N == 0) return 0;
    al_linear_pool(p->pool, N, D, p->SD, x, p->pt.W1, p->pt.b1, p->z);
    const size_t ND = (size_t)N * D;
    for (size_t i = 0; i < ND; i++) p->z[i] = al_tanhf(p->z[i]);
    const float *top = p->z;
    if (drop_rng) {
        al_tr_dropout_draw(drop_rng, p->keep, ND, c->dropout);
        memcpy(p->zd, p->z, sizeof(float) * ND);
        al_tr_dropout_apply(p->zd, p->keep, ND, c->dropout);
        top = p->zd;
    }
    al_linear_pool(p->pool, N, C, D, top, p->pt.W2, p->pt.b2, p->logits);
    return N;
}

al_status al_probe_forward_backward(al_probe *p, const al_probe_batch *batch, int training, al_rng *dropout_rng,
                                    float *loss, float *d_feats, al_error *err) {
    if (!p) return al_err(err, AL_ERR_INVALID, "probe: probe is NULL");
    al_status st = check_batch(p, batch, 1, err);
    if (st != AL_OK) return st;
    const al_probe_config *c = &p->cfg;
    const int seq = c->kind == AL_PROBE_SEQUENCE, D = c->hidden, C = c->n_labels;
    const int use_dropout = seq && training && c->dropout > 0.0f;
    if (use_dropout && !dropout_rng)
        return al_err(err, AL_ERR_INVALID, "probe: training with dropout %g needs a dropout generator",
                      (double)c->dropout);
    const int N = forward(p, batch, use_dropout ? dropout_rng : NULL);
    const float *top = use_dropout ? p->zd : p->z;
    const float *x = seq ? p->pooled : batch->feats;
    if (loss) *loss = 0.0f;
    if (d_feats) memset(d_feats, 0, sizeof(float) * (size_t)batch->n_rows * p->SD);

    /* Mean cross-entropy over the labelled items (CrossEntropyLoss with ignore_index = -100). */
    int n = 0;
    for (int i = 0; i < N; i++) {
        if (batch->labels[i] == AL_IGNORE_INDEX) continue;
        memcpy(p->ce + (size_t)n * C, p->logits + (size_t)i * C, sizeof(float) * (size_t)C);
        p->ce_labels[n] = batch->labels[i];
        p->ce_items[n] = i;
        n++;
    }
    if (n == 0) return AL_OK;
    const double mean = al_tr_cross_entropy(p->ce, p->ce_labels, n, C); /* ce now holds dloss/dlogits */
    if (loss) *loss = (float)mean;
    memset(p->dlogits, 0, sizeof(float) * (size_t)N * C);
    for (int j = 0; j < n; j++)
        memcpy(p->dlogits + (size_t)p->ce_items[j] * C, p->ce + (size_t)j * C, sizeof(float) * (size_t)C);

    /* Output layer, dropout, tanh (tanh' = 1 - z^2), first layer. */
    al_tr_linear_bwd(N, C, D, top, p->pt.W2, p->dlogits, p->dz, 0, p->gt.W2, p->gt.b2);
    const size_t ND = (size_t)N * D;
    if (use_dropout) al_tr_dropout_apply(p->dz, p->keep, ND, c->dropout);
    for (size_t i = 0; i < ND; i++) p->dz[i] *= 1.0f - p->z[i] * p->z[i];
    if (!seq) {
        al_tr_linear_bwd_pool(p->pool, N, D, p->SD, x, p->pt.W1, p->dz, d_feats, 0, p->gt.W1, p->gt.b1);
        return AL_OK;
    }
    al_tr_linear_bwd_pool(p->pool, N, D, p->SD, x, p->pt.W1, p->dz, p->d_pooled, 0, p->gt.W1, p->gt.b1);
    /* Pooling: dw[k, t] += <d_pooled[e, k], h_k>, d_feats[r, k] = w[k, t] d_pooled[e, k]. */
    const int S = c->n_states, L = c->max_len;
    for (int r = 0; r < batch->n_rows; r++) {
        const float *h = batch->feats + (size_t)r * p->SD;
        const float *g = p->d_pooled + (size_t)batch->row_example[r] * p->SD;
        const int t = batch->row_pos[r];
        for (int k = 0; k < S; k++) {
            const float *hk = h + (size_t)k * D, *gk = g + (size_t)k * D;
            double dot = 0.0;
            for (int i = 0; i < D; i++) dot += (double)gk[i] * hk[i];
            p->gt.w[(size_t)k * L + t] += (float)dot;
            if (d_feats) {
                const float wk = p->pt.w[(size_t)k * L + t];
                float *dst = d_feats + (size_t)r * p->SD + (size_t)k * D;
                for (int i = 0; i < D; i++) dst[i] = wk * gk[i];
            }
        }
    }
    return AL_OK;
}

al_status al_probe_predict(al_probe *p, const al_probe_batch *batch, int32_t *preds, al_error *err) {
    if (!p) return al_err(err, AL_ERR_INVALID, "probe: probe is NULL");
    if (!preds) return al_err(err, AL_ERR_INVALID, "probe: preds is NULL");
    al_status st = check_batch(p, batch, 0, err);
    if (st != AL_OK) return st;
    const int C = p->cfg.n_labels, N = forward(p, batch, NULL);
    for (int i = 0; i < N; i++) {
        const float *z = p->logits + (size_t)i * C;
        int best = 0;
        for (int j = 1; j < C; j++)
            if (z[j] > z[best]) best = j;
        preds[i] = best;
    }
    return AL_OK;
}
