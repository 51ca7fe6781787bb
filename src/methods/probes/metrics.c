/* metrics.c: accuracy, binary and macro F1 and Matthews correlation over class indices (metrics.h),
 * with scikit-learn's formulas and zero_division = 0 (docs/probes.md, "Metrics"). */
#include "metrics.h"

#include <math.h>
#include <stdlib.h>

#include "../../core/error.h"
#include "../../train/train.h" /* AL_IGNORE_INDEX */

/* Checks the labelled items (gold != AL_IGNORE_INDEX) against [0, n_labels) and counts them. */
static al_status check_items(const char *who, const int32_t *pred, const int32_t *gold, size_t n, int n_labels,
                             size_t *n_labelled, al_error *err) {
    if (!pred || !gold) return al_err(err, AL_ERR_INVALID, "%s: pred or gold is NULL", who);
    if (n_labels < 1) return al_err(err, AL_ERR_INVALID, "%s: n_labels %d must be >= 1", who, n_labels);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (gold[i] == AL_IGNORE_INDEX) continue;
        if (gold[i] < 0 || gold[i] >= n_labels)
            return al_err(err, AL_ERR_INVALID, "%s: gold[%zu] = %d is neither %d nor in [0, %d)", who, i, (int)gold[i],
                          AL_IGNORE_INDEX, n_labels);
        if (pred[i] < 0 || pred[i] >= n_labels)
            return al_err(err, AL_ERR_INVALID, "%s: pred[%zu] = %d is outside [0, %d)", who, i, (int)pred[i], n_labels);
        m++;
    }
    if (m == 0) return al_err(err, AL_ERR_INVALID, "%s: no labelled item among %zu", who, n);
    *n_labelled = m;
    return AL_OK;
}

al_status al_metric_accuracy(const int32_t *pred, const int32_t *gold, size_t n, double *out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "accuracy: out is NULL");
    size_t m = 0, correct = 0;
    al_status st = check_items("accuracy", pred, gold, n, INT32_MAX, &m, err);
    if (st != AL_OK) return st;
    for (size_t i = 0; i < n; i++) correct += gold[i] != AL_IGNORE_INDEX && pred[i] == gold[i];
    *out = (double)correct / (double)m;
    return AL_OK;
}

/* Confusion matrix cm[gold * C + pred] over the labelled items (caller frees). */
static double *confusion(const int32_t *pred, const int32_t *gold, size_t n, int C) {
    double *cm = calloc((size_t)C * C, sizeof(double));
    if (!cm) return NULL;
    for (size_t i = 0; i < n; i++)
        if (gold[i] != AL_IGNORE_INDEX) cm[(size_t)gold[i] * C + pred[i]] += 1.0;
    return cm;
}

/* F1 of class k from the confusion matrix: 2 tp / (2 tp + fp + fn), the same value as 2 p r / (p + r). */
static double class_f1(const double *cm, int C, int k) {
    double tp = cm[(size_t)k * C + k], fp = 0.0, fn = 0.0;
    for (int j = 0; j < C; j++) {
        if (j == k) continue;
        fp += cm[(size_t)j * C + k];
        fn += cm[(size_t)k * C + j];
    }
    const double den = 2.0 * tp + fp + fn;
    return den > 0.0 ? 2.0 * tp / den : 0.0;
}

al_status al_metric_f1_binary(const int32_t *pred, const int32_t *gold, size_t n, double *out, al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "binary F1: out is NULL");
    size_t m = 0;
    al_status st = check_items("binary F1", pred, gold, n, 2, &m, err);
    if (st != AL_OK) return st;
    double cm[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < n; i++)
        if (gold[i] != AL_IGNORE_INDEX) cm[gold[i] * 2 + pred[i]] += 1.0;
    *out = class_f1(cm, 2, 1);
    return AL_OK;
}

al_status al_metric_f1_macro(const int32_t *pred, const int32_t *gold, size_t n, int n_labels, double *out,
                             al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "macro F1: out is NULL");
    size_t m = 0;
    al_status st = check_items("macro F1", pred, gold, n, n_labels, &m, err);
    if (st != AL_OK) return st;
    double *cm = confusion(pred, gold, n, n_labels);
    if (!cm) return al_err(err, AL_ERR_OOM, "macro F1: out of memory for %d classes", n_labels);
    double sum = 0.0;
    int present = 0;
    for (int k = 0; k < n_labels; k++) {
        double row = 0.0, col = 0.0; /* gold and predicted counts of k: sklearn averages over their union */
        for (int j = 0; j < n_labels; j++) {
            row += cm[(size_t)k * n_labels + j];
            col += cm[(size_t)j * n_labels + k];
        }
        if (row == 0.0 && col == 0.0) continue;
        sum += class_f1(cm, n_labels, k);
        present++;
    }
    free(cm);
    *out = sum / present;
    return AL_OK;
}

al_status al_metric_mcc(const int32_t *pred, const int32_t *gold, size_t n, int n_labels, double *out,
                        al_error *err) {
    if (!out) return al_err(err, AL_ERR_INVALID, "MCC: out is NULL");
    size_t m = 0;
    al_status st = check_items("MCC", pred, gold, n, n_labels, &m, err);
    if (st != AL_OK) return st;
    double *cm = confusion(pred, gold, n, n_labels);
    if (!cm) return al_err(err, AL_ERR_OOM, "MCC: out of memory for %d classes", n_labels);
    const double s = (double)m;
    double c = 0.0, tp = 0.0, pp = 0.0, tt = 0.0;
    for (int k = 0; k < n_labels; k++) {
        double t_k = 0.0, p_k = 0.0;
        for (int j = 0; j < n_labels; j++) {
            t_k += cm[(size_t)k * n_labels + j];
            p_k += cm[(size_t)j * n_labels + k];
        }
        c += cm[(size_t)k * n_labels + k];
        tp += t_k * p_k;
        pp += p_k * p_k;
        tt += t_k * t_k;
    }
    free(cm);
    const double den = (s * s - pp) * (s * s - tt);
    *out = den > 0.0 ? (c * s - tp) / sqrt(den) : 0.0;
    return AL_OK;
}
