/* probe_fit.c: probe-only training on cached features (al_probe_fit) and evaluation (al_probe_evaluate),
 * as the Hugging Face Trainer runs PAPA's probes (docs/probes.md, "Training"): per epoch a fresh shuffle
 * of the examples, minibatches of whole examples (the last one may be short), mean loss per batch,
 * global-norm clipping and one AdamW step per batch. Every random choice comes from al_rng streams
 * derived from (seed, epoch), so a run repeats bit for bit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/memory.h"
#include "../../core/seeds.h"
#include "probe_data_internal.h"

al_probe_fit_options al_probe_fit_default_options(void) {
    al_probe_fit_options o;
    memset(&o, 0, sizeof o);
    o.epochs = 15;
    o.batch_size = 16;
    o.lr = 2e-5f;
    o.weight_decay = 0.0f;
    o.beta1 = 0.9f;
    o.beta2 = 0.999f;
    o.eps = 1e-8f;
    o.max_grad_norm = 1.0f;
    o.schedule = AL_LR_CONSTANT;
    o.seed = 42;
    return o;
}

/* The data must have been gathered for this probe: same kind and widths, positions within its L, labels
 * in range. */
static al_status check_data(const al_probe *p, const al_probe_data *d, const char *who, al_error *err) {
    const al_probe_config *c = al_probe_get_config(p);
    if (!d) return al_err(err, AL_ERR_INVALID, "%s: data is NULL", who);
    if (d->kind != c->kind)
        return al_err(err, AL_ERR_INVALID, "%s: data of kind %d for a probe of kind %d", who, (int)d->kind, (int)c->kind);
    if (d->S != c->n_states || d->D != c->hidden)
        return al_err(err, AL_ERR_INVALID, "%s: data has %d states of width %d, the probe %d of width %d", who, d->S, d->D,
                      c->n_states, c->hidden);
    if (d->L > c->max_len)
        return al_err(err, AL_ERR_INVALID, "%s: data length %d exceeds the probe's max_len %d", who, d->L, c->max_len);
    const int n = c->kind == AL_PROBE_SEQUENCE ? d->n_examples : d->n_rows;
    for (int i = 0; i < n; i++)
        if (d->labels[i] != AL_IGNORE_INDEX && (d->labels[i] < 0 || d->labels[i] >= c->n_labels))
            return al_err(err, AL_ERR_INVALID, "%s: label %d of item %d is neither %d nor in [0, %d)", who,
                          (int)d->labels[i], i, AL_IGNORE_INDEX, c->n_labels);
    for (int e = 0; e < d->n_examples; e++)
        if (d->offsets[e + 1] - d->offsets[e] > c->max_rows)
            return al_err(err, AL_ERR_INVALID, "%s: example %d has %d rows, over the probe's max_rows %d", who, e,
                          d->offsets[e + 1] - d->offsets[e], c->max_rows);
    return AL_OK;
}

static int cmp_desc(const void *a, const void *b) {
    const int x = *(const int *)a, y = *(const int *)b;
    return (x < y) - (x > y);
}

/* The most rows any batch of `bs` examples can hold: the sum of the bs largest examples. */
static al_status max_batch_rows(const al_probe_data *d, int bs, int *out, al_error *err) {
    int *counts = malloc(sizeof(int) * (size_t)d->n_examples + 1);
    if (!counts) return al_err(err, AL_ERR_OOM, "probe fit: out of memory");
    for (int e = 0; e < d->n_examples; e++) counts[e] = d->offsets[e + 1] - d->offsets[e];
    qsort(counts, (size_t)d->n_examples, sizeof(int), cmp_desc);
    long long sum = 0;
    for (int i = 0; i < bs && i < d->n_examples; i++) sum += counts[i];
    free(counts);
    *out = (int)sum;
    return AL_OK;
}

typedef struct fit_buffers {
    float *feats;
    int32_t *row_example, *row_pos, *labels, *order;
} fit_buffers;

static void free_buffers(fit_buffers *b) {
    al_free_large(b->feats);
    free(b->row_example);
    free(b->row_pos);
    free(b->labels);
    free(b->order);
}

/* Copies the rows of examples order[0..B) into one batch. */
static void assemble(const al_probe_data *d, const int32_t *order, int B, fit_buffers *buf, al_probe_batch *batch) {
    const size_t SD = (size_t)d->S * d->D;
    int r = 0;
    for (int j = 0; j < B; j++) {
        const int e = order[j], r0 = d->offsets[e], n = d->offsets[e + 1] - r0;
        memcpy(buf->feats + (size_t)r * SD, d->feats + (size_t)r0 * SD, sizeof(float) * (size_t)n * SD);
        memcpy(buf->row_pos + r, d->row_pos + r0, sizeof(int32_t) * (size_t)n);
        for (int i = 0; i < n; i++) buf->row_example[r + i] = j;
        if (d->kind == AL_PROBE_TOKEN) memcpy(buf->labels + r, d->labels + r0, sizeof(int32_t) * (size_t)n);
        else buf->labels[j] = d->labels[e];
        r += n;
    }
    batch->B = B;
    batch->n_rows = r;
    batch->feats = buf->feats;
    batch->row_example = buf->row_example;
    batch->row_pos = buf->row_pos;
    batch->labels = buf->labels;
}

al_status al_probe_fit(al_probe *p, const al_probe_data *train, const al_probe_fit_options *opt,
                       al_probe_fit_report *report, al_error *err) {
    if (!p || !opt) return al_err(err, AL_ERR_INVALID, "probe fit: probe or options is NULL");
    al_status st = check_data(p, train, "probe fit", err);
    if (st != AL_OK) return st;
    const al_probe_config *c = al_probe_get_config(p);
    const int N = train->n_examples;
    if (N < 1) return al_err(err, AL_ERR_INVALID, "probe fit: the training data has no examples");
    if (opt->epochs < 1) return al_err(err, AL_ERR_INVALID, "probe fit: epochs %d must be >= 1", opt->epochs);
    if (opt->batch_size < 1 || opt->batch_size > c->max_batch)
        return al_err(err, AL_ERR_INVALID, "probe fit: batch_size %d is outside [1, %d] (the probe's max_batch)",
                      opt->batch_size, c->max_batch);
    if (opt->schedule != AL_LR_CONSTANT && opt->schedule != AL_LR_LINEAR)
        return al_err(err, AL_ERR_INVALID, "probe fit: schedule %d must be constant or linear", (int)opt->schedule);
    int rows_cap = 0;
    st = max_batch_rows(train, opt->batch_size, &rows_cap, err);
    if (st != AL_OK) return st;
    if (rows_cap > c->max_rows)
        return al_err(err, AL_ERR_INVALID, "probe fit: a batch of %d examples can hold %d rows, over the probe's max_rows %d",
                      opt->batch_size, rows_cap, c->max_rows);

    const int steps_per_epoch = (N + opt->batch_size - 1) / opt->batch_size;
    al_adamw_config ac = al_adamw_default_config();
    ac.lr = opt->lr;
    ac.beta1 = opt->beta1;
    ac.beta2 = opt->beta2;
    ac.eps = opt->eps;
    ac.weight_decay = opt->weight_decay;
    ac.max_grad_norm = opt->max_grad_norm;
    ac.schedule = opt->schedule;
    ac.warmup_steps = 0;
    ac.total_steps = opt->epochs * steps_per_epoch;
    const size_t n_params = al_probe_n_params(p);
    uint8_t *decay = malloc(n_params + 1);
    if (!decay) return al_err(err, AL_ERR_OOM, "probe fit: out of memory");
    al_probe_decay_mask(p, decay);
    al_adamw *adam = NULL;
    st = al_adamw_new(n_params, &ac, decay, &adam, err);
    free(decay);
    if (st != AL_OK) return al_err_prefix(err, "probe fit");

    fit_buffers buf;
    const size_t SD = (size_t)train->S * train->D, cap = (size_t)rows_cap + 1;
    buf.feats = al_alloc_large(sizeof(float) * cap * SD, 0);
    buf.row_example = malloc(sizeof(int32_t) * cap);
    buf.row_pos = malloc(sizeof(int32_t) * cap);
    buf.labels = malloc(sizeof(int32_t) * (cap > (size_t)opt->batch_size ? cap : (size_t)opt->batch_size));
    buf.order = malloc(sizeof(int32_t) * (size_t)N);
    if (!buf.feats || !buf.row_example || !buf.row_pos || !buf.labels || !buf.order) {
        free_buffers(&buf);
        al_adamw_free(adam);
        return al_err(err, AL_ERR_OOM, "probe fit: out of memory for a batch of %d rows x %zu features", rows_cap, SD);
    }

    const int total = opt->epochs * steps_per_epoch;
    int step = 0, last_percent = -1;
    double first_loss = 0.0, last_loss = 0.0;
    for (int epoch = 0; epoch < opt->epochs && st == AL_OK; epoch++) {
        al_rng shuffle, dropout;
        al_rng_seed(&shuffle, al_probe_stream_seed(opt->seed, epoch, AL_SEED_PROBE_SHUFFLE));
        al_rng_seed(&dropout, al_probe_stream_seed(opt->seed, epoch, AL_SEED_PROBE_DROPOUT));
        for (int i = 0; i < N; i++) buf.order[i] = i;
        for (int i = N - 1; i > 0; i--) { /* Fisher-Yates */
            const int j = (int)al_rng_below(&shuffle, (uint32_t)i + 1u);
            const int32_t t = buf.order[i];
            buf.order[i] = buf.order[j];
            buf.order[j] = t;
        }
        double epoch_loss = 0.0;
        for (int s = 0; s < steps_per_epoch; s++, step++) {
            if (opt->cancel && *opt->cancel) {
                st = al_err(err, AL_ERR_CANCELLED, "probe fit: cancelled at epoch %d, step %d of %d", epoch + 1,
                            step, total);
                break;
            }
            const int e0 = s * opt->batch_size, B = N - e0 < opt->batch_size ? N - e0 : opt->batch_size;
            al_probe_batch batch;
            assemble(train, buf.order + e0, B, &buf, &batch);
            float loss = 0.0f;
            al_probe_zero_grads(p);
            st = al_probe_forward_backward(p, &batch, 1, &dropout, &loss, NULL, err);
            if (st != AL_OK) {
                al_err_prefix(err, "probe fit");
                break;
            }
            al_adamw_step(adam, al_probe_params(p), al_probe_grads(p), NULL, NULL);
            epoch_loss += loss;
            const int percent = (int)(100.0 * (step + 1) / total);
            if (opt->progress && percent != last_percent) {
                opt->progress(opt->progress_user, "probe_fit", (double)(step + 1) / total);
                last_percent = percent;
            }
        }
        epoch_loss /= steps_per_epoch;
        if (epoch == 0) first_loss = epoch_loss;
        last_loss = epoch_loss;
    }
    free_buffers(&buf);
    al_adamw_free(adam);
    if (st == AL_OK && report) {
        report->steps = step;
        report->first_epoch_loss = first_loss;
        report->last_epoch_loss = last_loss;
    }
    return st;
}

al_status al_probe_evaluate(al_probe *p, const al_probe_data *data, int32_t *preds, al_error *err) {
    if (!p) return al_err(err, AL_ERR_INVALID, "probe evaluate: probe is NULL");
    al_status st = check_data(p, data, "probe evaluate", err);
    if (st != AL_OK) return st;
    if (!preds) return al_err(err, AL_ERR_INVALID, "probe evaluate: preds is NULL");
    const al_probe_config *c = al_probe_get_config(p);
    const int seq = c->kind == AL_PROBE_SEQUENCE;
    int32_t *local = malloc(sizeof(int32_t) * (size_t)c->max_rows + 1);
    if (!local) return al_err(err, AL_ERR_OOM, "probe evaluate: out of memory");
    const size_t SD = (size_t)data->S * data->D;
    /* Consecutive examples are contiguous in the data: each chunk is a view, only row_example is local. */
    for (int e0 = 0; e0 < data->n_examples && st == AL_OK;) {
        int e1 = e0;
        const int r0 = data->offsets[e0];
        while (e1 < data->n_examples && e1 - e0 < c->max_batch && data->offsets[e1 + 1] - r0 <= c->max_rows) e1++;
        const int n_rows = data->offsets[e1] - r0;
        for (int r = 0; r < n_rows; r++) local[r] = data->row_example[r0 + r] - e0;
        al_probe_batch batch = {e1 - e0, n_rows, data->feats + (size_t)r0 * SD, local, data->row_pos + r0, NULL};
        st = al_probe_predict(p, &batch, seq ? preds + e0 : preds + r0, err);
        if (st != AL_OK) al_err_prefix(err, "probe evaluate");
        e0 = e1;
    }
    free(local);
    return st;
}
