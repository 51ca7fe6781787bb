/* probe_rows.c: between the encoder's padded layout (n_states arrays [B, L, D] and a mask) and the probe's
 * rows (probe.h). Only real tokens become rows, which is why a probe cannot see padding
 * (docs/probes.md, "Rows"). */
#include <string.h>

#include "../../core/error.h"
#include "probe.h"

static al_status check_dense(const al_probe_dense *in, int labelled_only, al_error *err) {
    if (!in) return al_err(err, AL_ERR_INVALID, "probe gather: input is NULL");
    if (in->n_states < 1 || in->B < 1 || in->L < 1 || in->D < 1)
        return al_err(err, AL_ERR_INVALID, "probe gather: shape n_states %d, B %d, L %d, D %d must be positive",
                      in->n_states, in->B, in->L, in->D);
    if (!in->hidden || !in->mask) return al_err(err, AL_ERR_INVALID, "probe gather: hidden or mask is NULL");
    for (int k = 0; k < in->n_states; k++)
        if (!in->hidden[k]) return al_err(err, AL_ERR_INVALID, "probe gather: hidden[%d] is NULL", k);
    if (labelled_only && !in->token_labels)
        return al_err(err, AL_ERR_INVALID, "probe gather: labelled_only needs token_labels");
    for (int b = 0; b < in->B; b++)
        for (int t = 0; t < in->L; t++) {
            const int32_t m = in->mask[(size_t)b * in->L + t];
            if (m != 0 && m != 1)
                return al_err(err, AL_ERR_INVALID, "probe gather: mask[%d][%d] = %d must be 0 or 1", b, t, (int)m);
        }
    return AL_OK;
}

static int is_row(const al_probe_dense *in, int labelled_only, size_t bt) {
    if (!in->mask[bt]) return 0;
    return !labelled_only || in->token_labels[bt] != AL_IGNORE_INDEX;
}

al_status al_probe_count_rows(const al_probe_dense *in, int labelled_only, int *n_rows, al_error *err) {
    al_status st = check_dense(in, labelled_only, err);
    if (st != AL_OK) return st;
    if (!n_rows) return al_err(err, AL_ERR_INVALID, "probe gather: n_rows is NULL");
    int n = 0;
    for (size_t bt = 0; bt < (size_t)in->B * in->L; bt++) n += is_row(in, labelled_only, bt);
    *n_rows = n;
    return AL_OK;
}

al_status al_probe_gather(const al_probe_dense *in, int labelled_only, int max_rows, float *feats,
                          int32_t *row_example, int32_t *row_pos, int32_t *row_labels, int *n_rows, al_error *err) {
    int n = 0;
    al_status st = al_probe_count_rows(in, labelled_only, &n, err);
    if (st != AL_OK) return st;
    if (n > max_rows)
        return al_err(err, AL_ERR_INVALID, "probe gather: %d rows do not fit max_rows %d", n, max_rows);
    if (n > 0 && (!feats || !row_example || !row_pos))
        return al_err(err, AL_ERR_INVALID, "probe gather: feats, row_example or row_pos is NULL");
    if (row_labels && !in->token_labels)
        return al_err(err, AL_ERR_INVALID, "probe gather: row_labels asked for but token_labels is NULL");
    const size_t S = (size_t)in->n_states, D = (size_t)in->D;
    int r = 0;
    for (int b = 0; b < in->B; b++)
        for (int t = 0; t < in->L; t++) {
            const size_t bt = (size_t)b * in->L + t;
            if (!is_row(in, labelled_only, bt)) continue;
            for (size_t k = 0; k < S; k++)
                memcpy(feats + ((size_t)r * S + k) * D, in->hidden[k] + bt * D, sizeof(float) * D);
            row_example[r] = b;
            row_pos[r] = t;
            if (row_labels) row_labels[r] = in->token_labels[bt];
            r++;
        }
    if (n_rows) *n_rows = r;
    return AL_OK;
}

al_status al_probe_scatter(const float *d_feats, int n_rows, const int32_t *row_example, const int32_t *row_pos,
                           int n_states, int B, int L, int D, float *const *d_hidden, al_error *err) {
    if (n_states < 1 || B < 1 || L < 1 || D < 1 || n_rows < 0)
        return al_err(err, AL_ERR_INVALID, "probe scatter: shape n_states %d, B %d, L %d, D %d, n_rows %d is invalid",
                      n_states, B, L, D, n_rows);
    if (!d_hidden || (n_rows > 0 && (!d_feats || !row_example || !row_pos)))
        return al_err(err, AL_ERR_INVALID, "probe scatter: an input or output array is NULL");
    for (int k = 0; k < n_states; k++)
        if (!d_hidden[k]) return al_err(err, AL_ERR_INVALID, "probe scatter: d_hidden[%d] is NULL", k);
    for (int r = 0; r < n_rows; r++)
        if (row_example[r] < 0 || row_example[r] >= B || row_pos[r] < 0 || row_pos[r] >= L)
            return al_err(err, AL_ERR_INVALID, "probe scatter: row %d at (%d, %d) is outside [%d, %d]", r,
                          (int)row_example[r], (int)row_pos[r], B, L);
    const size_t S = (size_t)n_states, BLD = (size_t)B * L * D;
    for (size_t k = 0; k < S; k++) memset(d_hidden[k], 0, sizeof(float) * BLD);
    for (int r = 0; r < n_rows; r++) {
        const size_t bt = (size_t)row_example[r] * L + row_pos[r];
        for (size_t k = 0; k < S; k++) {
            const float *src = d_feats + ((size_t)r * S + k) * D;
            float *dst = d_hidden[k] + bt * D;
            for (int i = 0; i < D; i++) dst[i] += src[i];
        }
    }
    return AL_OK;
}
