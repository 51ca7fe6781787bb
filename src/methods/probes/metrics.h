/* metrics.h: the task metrics of the PAPA experiment and their summary over seeds (docs/probes.md,
 * "Metrics"). Internal to the core.
 *
 * Item metrics take predictions and gold labels as class indices; items whose gold label is
 * AL_IGNORE_INDEX (-100) are skipped, so the same accuracy is the sequence accuracy and the token accuracy
 * over labelled tokens. Every result is a double; degenerate cases follow scikit-learn / seqeval with
 * zero_division = 0 (documented per function). No labelled item at all is an error. */
#ifndef AL_METHODS_METRICS_H
#define AL_METHODS_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "../../attnlab.h"

/* Fraction of labelled items with pred == gold (SST-2, MNLI; token accuracy for POS). */
al_status al_metric_accuracy(const int32_t *pred, const int32_t *gold, size_t n, double *out, al_error *err);

/* F1 of the positive class 1 (MRPC): 2 tp / (2 tp + fp + fn), 0 when that denominator is 0. Labels and
 * predictions must be 0 or 1. */
al_status al_metric_f1_binary(const int32_t *pred, const int32_t *gold, size_t n, double *out, al_error *err);

/* Unweighted mean of per-class F1 over the classes present in gold or pred (sklearn average="macro");
 * values in [0, n_labels). */
al_status al_metric_f1_macro(const int32_t *pred, const int32_t *gold, size_t n, int n_labels, double *out,
                             al_error *err);

/* Matthews correlation, multiclass form as sklearn (CoLA): from the confusion matrix with t_k true and
 * p_k predicted counts, c correct of s items,
 *   (c s - sum t_k p_k) / sqrt((s^2 - sum p_k^2)(s^2 - sum t_k^2)), 0 when the denominator is 0. */
al_status al_metric_mcc(const int32_t *pred, const int32_t *gold, size_t n, int n_labels, double *out,
                        al_error *err);

/* Entity-level micro scores as seqeval's default (non-strict) mode, as PAPA's NER script reports them:
 * entities are read from each sentence's tags (labelled tokens only) by seqeval's chunk rules (an I-
 * after O or after another type starts an entity; IOBES tags are understood); an entity is correct when
 * type, start and end all match. label_names [n_labels] give the tags ("O", "B-PER", "I-PER", ...; "O"
 * or a B-/I-/E-/S- prefix, else an error). offsets [n_sentences + 1] delimit sentences in pred/gold. */
typedef struct al_entity_scores {
    double precision, recall, f1; /* 0 where the denominator is 0 */
    int n_true, n_pred, n_correct;
} al_entity_scores;
al_status al_metric_entity_f1(const int32_t *pred, const int32_t *gold, const int32_t *offsets, int n_sentences,
                              const char *const *label_names, int n_labels, al_entity_scores *out, al_error *err);

/* Mean over seeds with a 95% Student-t interval: sd is the sample standard deviation (n - 1) and
 * half_width = t_{0.975, n-1} sd / sqrt(n). n = 1: sd = half_width = 0 and has_interval = 0. */
typedef struct al_seed_summary {
    int n;
    double mean, sd, half_width;
    int has_interval;
} al_seed_summary;
al_status al_metric_summary(const double *values, int n, al_seed_summary *out, al_error *err);

/* Quantile of Student's t distribution with dof > 0 degrees of freedom at probability p in (0, 1),
 * by bisection on the CDF (regularised incomplete beta); about 1e-12 relative. NaN for bad arguments. */
double al_student_t_quantile(double p, double dof);
/* CDF of Student's t at x. */
double al_student_t_cdf(double x, double dof);

/* Relative drop of x from a reference: (ref - x) / |ref|. ref must be finite and nonzero. */
al_status al_metric_relative_drop(double ref, double x, double *out, al_error *err);

#endif
