/* probe_data.c: cached probe features (probe.h, al_probe_data): every example's rows of one frozen encoder
 * configuration, gathered once and then reused by every probe-training epoch (docs/probes.md, "What is
 * cached"). Sized up front, with the byte count checked against the caller's limit before allocating. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/memory.h"
#include "probe_data_internal.h"


size_t al_probe_data_bytes(al_probe_kind kind, int n_states, int D, int64_t max_examples, int64_t max_rows) {
    if (n_states < 0 || D < 0 || max_examples < 0 || max_rows < 0) return SIZE_MAX;
    const double n_labels = kind == AL_PROBE_TOKEN ? (double)max_rows : (double)max_examples;
    const double bytes = 4.0 * ((double)max_rows * n_states * D + 2.0 * max_rows + n_labels + (max_examples + 1.0));
    return bytes >= (double)SIZE_MAX ? SIZE_MAX : (size_t)bytes;
}

al_status al_probe_data_new(al_probe_kind kind, int n_states, int D, int L, int64_t max_examples, int64_t max_rows,
                            size_t mem_limit, al_probe_data **out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "probe data: no output pointer");
    *out = NULL;
    if (kind != AL_PROBE_SEQUENCE && kind != AL_PROBE_TOKEN)
        return al_err(err, AL_ERR_INVALID, "probe data: unknown kind %d", (int)kind);
    if (n_states < 1 || D < 1 || L < 1)
        return al_err(err, AL_ERR_INVALID, "probe data: n_states %d, D %d, L %d must be >= 1", n_states, D, L);
    if (max_examples < 1 || max_examples >= INT_MAX || max_rows < 0 || max_rows > INT_MAX)
        return al_err(err, AL_ERR_INVALID, "probe data: capacity of %lld examples and %lld rows is out of range",
                      (long long)max_examples, (long long)max_rows);
    const size_t bytes = al_probe_data_bytes(kind, n_states, D, max_examples, max_rows);
    if (bytes == SIZE_MAX || (mem_limit > 0 && bytes > mem_limit))
        return al_err(err, AL_ERR_OOM,
                      "probe data: %lld rows of %d x %d float32 features (%lld examples) need %.0f bytes (%.1f MiB), "
                      "over the limit of %zu bytes",
                      (long long)max_rows, n_states, D, (long long)max_examples, (double)bytes,
                      (double)bytes / 1048576.0, mem_limit);
    char what[128];
    snprintf(what, sizeof what, "probe data: %lld rows of %d x %d float32 features", (long long)max_rows, n_states, D);
    al_status st = al_memory_check(bytes, what, err); /* the process's own limit (docs/memory.md) */
    if (st != AL_OK) return st;
    al_probe_data *d = calloc(1, sizeof *d);
    if (!d) return al_err(err, AL_ERR_OOM, "probe data: out of memory");
    d->kind = kind;
    d->S = n_states;
    d->D = D;
    d->L = L;
    d->cap_examples = (int)max_examples;
    d->cap_rows = (int)max_rows;
    const size_t rows = (size_t)max_rows;
    d->feats = al_alloc_large(rows * n_states * D * sizeof(float) + 1, 0);
    d->row_example = malloc(rows * sizeof(int32_t) + 1);
    d->row_pos = malloc(rows * sizeof(int32_t) + 1);
    d->labels = malloc((kind == AL_PROBE_TOKEN ? rows : (size_t)max_examples) * sizeof(int32_t) + 1);
    d->offsets = calloc((size_t)max_examples + 1, sizeof(int32_t));
    if (!d->feats || !d->row_example || !d->row_pos || !d->labels || !d->offsets) {
        al_probe_data_free(d);
        return al_err(err, AL_ERR_OOM, "probe data: out of memory for %zu bytes", bytes);
    }
    *out = d;
    return AL_OK;
}

void al_probe_data_free(al_probe_data *d) {
    if (!d) return;
    al_free_large(d->feats);
    free(d->row_example);
    free(d->row_pos);
    free(d->labels);
    free(d->offsets);
    free(d);
}

al_status al_probe_data_add(al_probe_data *d, const al_probe_dense *in, const int32_t *seq_labels, int labelled_only,
                            al_error *err) {
    if (!d || !in) return al_err(err, AL_ERR_INVALID, "probe data: data or input is NULL");
    if (in->n_states != d->S || in->D != d->D)
        return al_err(err, AL_ERR_INVALID, "probe data: batch has %d states of width %d, the data holds %d of width %d",
                      in->n_states, in->D, d->S, d->D);
    if (in->L > d->L)
        return al_err(err, AL_ERR_INVALID, "probe data: batch length %d exceeds the data's L %d", in->L, d->L);
    if (d->kind == AL_PROBE_SEQUENCE && !seq_labels)
        return al_err(err, AL_ERR_INVALID, "probe data: a SEQUENCE set needs seq_labels");
    if (d->kind == AL_PROBE_TOKEN && !in->token_labels)
        return al_err(err, AL_ERR_INVALID, "probe data: a TOKEN set needs token_labels");
    if (in->B > d->cap_examples - d->n_examples)
        return al_err(err, AL_ERR_INVALID, "probe data: %d more examples exceed the capacity of %d (%d held)", in->B,
                      d->cap_examples, d->n_examples);
    const int filter = d->kind == AL_PROBE_TOKEN && labelled_only;
    int n = 0;
    al_status st = al_probe_count_rows(in, filter, &n, err);
    if (st != AL_OK) return al_err_prefix(err, "probe data");
    if (n > d->cap_rows - d->n_rows)
        return al_err(err, AL_ERR_INVALID, "probe data: %d more rows exceed the capacity of %d (%d held)", n, d->cap_rows,
                      d->n_rows);
    for (int b = 0; b < in->B && seq_labels && d->kind == AL_PROBE_SEQUENCE; b++)
        if (seq_labels[b] < 0 && seq_labels[b] != AL_IGNORE_INDEX)
            return al_err(err, AL_ERR_INVALID, "probe data: seq_labels[%d] = %d is negative", b, (int)seq_labels[b]);
    const size_t r0 = (size_t)d->n_rows, SD = (size_t)d->S * d->D;
    st = al_probe_gather(in, filter, n, d->feats + r0 * SD, d->row_example + r0, d->row_pos + r0,
                         d->kind == AL_PROBE_TOKEN ? d->labels + r0 : NULL, &n, err);
    if (st != AL_OK) return al_err_prefix(err, "probe data");
    for (int r = 0; r < n; r++) {
        const int e = d->row_example[r0 + r];
        d->row_example[r0 + r] = d->n_examples + e;
        d->offsets[d->n_examples + e + 1]++;
    }
    for (int b = 0; b < in->B; b++) {
        const int e = d->n_examples + b;
        d->offsets[e + 1] += d->offsets[e]; /* counts -> offsets */
        if (d->kind == AL_PROBE_SEQUENCE) d->labels[e] = seq_labels[b];
    }
    d->n_examples += in->B;
    d->n_rows += n;
    return AL_OK;
}

int al_probe_data_n_examples(const al_probe_data *d) { return d->n_examples; }
int al_probe_data_n_rows(const al_probe_data *d) { return d->n_rows; }
const int32_t *al_probe_data_labels(const al_probe_data *d) { return d->labels; }
const int32_t *al_probe_data_example_offsets(const al_probe_data *d) { return d->offsets; }
