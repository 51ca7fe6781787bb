/* test_metrics.c: the task metrics and the summary over seeds (src/methods/metrics*.c, docs/probes.md).
 *  - hand-computed values: accuracy, binary F1, macro F1, Matthews correlation, seqeval's documented example
 *    (entity F1 0.5, token accuracy 0.8), I- without B-, type switches, IOBES tags, -100 tokens;
 *  - goldens (tests/golden_probe/make_probe_goldens.py): random prediction/label vectors with the values of
 *    scikit-learn's and seqeval's formulas reimplemented with numpy, to 1e-12;
 *  - Student-t quantiles against mpmath (40 digits) for 1..40, 50, 100 and 1000 degrees of freedom; the 95%
 *    half-width for n = 3 uses t = 4.302653; relative drop; refusals. */
#include <string.h>

#include "check.h"
#include "golden_file.h"
#include "methods/probes/metrics.h"
#include "train/train.h"

#define GOLDEN "tests/golden_probe/metrics.safetensors"

/* A malloc'd copy of an F64 tensor (the golden file stores every value in double). */
static double *golden_f64(const golden_file *g, const char *name, size_t *numel) {
    const al_tensor_entry *t = al_tensor_list_find(&g->list, name);
    if (!t || t->dtype != AL_DT_F64) {
        fprintf(stderr, "golden tensor %s missing or not F64\n", name);
        return NULL;
    }
    const size_t n = (size_t)al_tensor_numel(t);
    double *v = malloc(n * sizeof(double) + 1);
    memcpy(v, t->data, n * sizeof(double)); /* little-endian, as every target of attnlab */
    if (numel) *numel = n;
    return v;
}

static int32_t *golden_ints(const golden_file *g, const char *name, size_t *numel) {
    size_t n = 0;
    double *v = golden_f64(g, name, &n);
    if (!v) return NULL;
    int32_t *out = malloc(n * sizeof(int32_t) + 1);
    for (size_t i = 0; i < n; i++) out[i] = (int32_t)v[i];
    free(v);
    if (numel) *numel = n;
    return out;
}

static void test_hand(void) {
    al_error err;
    double v = 0.0;
    /* tp 2, fp 1, fn 1, tn 1 */
    const int32_t gold[5] = {1, 1, 0, 0, 1}, pred[5] = {1, 0, 0, 1, 1};
    CHECK(al_metric_accuracy(pred, gold, 5, &v, &err) == AL_OK);
    CHECK_NEAR(v, 0.6, 1e-15);
    CHECK(al_metric_f1_binary(pred, gold, 5, &v, &err) == AL_OK);
    CHECK_NEAR(v, 2.0 / 3.0, 1e-15);
    CHECK(al_metric_mcc(pred, gold, 5, 2, &v, &err) == AL_OK);
    CHECK_NEAR(v, (2.0 * 1 - 1.0 * 1) / sqrt(3.0 * 3 * 2 * 2), 1e-15); /* (tp tn - fp fn) / sqrt(...) = 1/6 */
    CHECK(al_metric_f1_macro(pred, gold, 5, 2, &v, &err) == AL_OK);
    CHECK_NEAR(v, (2.0 / 3.0 + 0.5) / 2.0, 1e-15); /* class 0: tp 1, fp 1, fn 1 */
    /* -100 items are skipped. */
    const int32_t gold2[6] = {1, AL_IGNORE_INDEX, 1, 0, 0, 1}, pred2[6] = {1, 7, 0, 0, 1, 1};
    CHECK(al_metric_accuracy(pred2, gold2, 6, &v, &err) == AL_OK);
    CHECK_NEAR(v, 0.6, 1e-15);
    /* Macro F1 averages over classes present in gold or pred: class 2 never appears, class 3 only predicted. */
    const int32_t g3[4] = {0, 0, 1, 1}, p3[4] = {0, 3, 1, 1};
    CHECK(al_metric_f1_macro(p3, g3, 4, 4, &v, &err) == AL_OK);
    CHECK_NEAR(v, (2.0 / 3.0 + 1.0 + 0.0) / 3.0, 1e-15);
    /* A constant predictor: MCC 0; no positive anywhere: binary F1 0. */
    const int32_t zeros[4] = {0, 0, 0, 0};
    CHECK(al_metric_mcc(zeros, g3, 4, 2, &v, &err) == AL_OK && v == 0.0);
    CHECK(al_metric_f1_binary(zeros, zeros, 4, &v, &err) == AL_OK && v == 0.0);
    /* Perfect and inverted binary predictions. */
    const int32_t inv[5] = {0, 0, 1, 1, 0};
    CHECK(al_metric_mcc(gold, gold, 5, 2, &v, &err) == AL_OK);
    CHECK_NEAR(v, 1.0, 1e-15);
    CHECK(al_metric_mcc(inv, gold, 5, 2, &v, &err) == AL_OK);
    CHECK_NEAR(v, -1.0, 1e-15);
    /* Refusals. */
    const int32_t ignored[2] = {AL_IGNORE_INDEX, AL_IGNORE_INDEX}, three[2] = {2, 0};
    CHECK(al_metric_accuracy(three, ignored, 2, &v, &err) == AL_ERR_INVALID && strstr(err.message, "no labelled"));
    CHECK(al_metric_f1_binary(three, gold, 2, &v, &err) == AL_ERR_INVALID && strstr(err.message, "pred[0]"));
    CHECK(al_metric_mcc(pred, three, 2, 2, &v, &err) == AL_ERR_INVALID && strstr(err.message, "gold[0]"));
}

enum { O, BP, IP, BL, IL, BM, IM };
static const char *const IOB2[] = {"O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-MISC", "I-MISC"};

static void test_entities_hand(void) {
    al_error err;
    al_entity_scores sc;
    double acc = 0.0;
    /* seqeval's documented example: gold MISC 3..5 and PER; pred MISC 2..5 and PER: F1 0.5, accuracy 0.8. */
    const int32_t gold[10] = {O, O, O, BM, IM, IM, O, BP, IP, O}, pred[10] = {O, O, BM, IM, IM, IM, O, BP, IP, O};
    const int32_t off[3] = {0, 7, 10};
    CHECK(al_metric_entity_f1(pred, gold, off, 2, IOB2, 7, &sc, &err) == AL_OK);
    CHECK(sc.n_true == 2 && sc.n_pred == 2 && sc.n_correct == 1);
    CHECK_NEAR(sc.f1, 0.5, 1e-15);
    CHECK(al_metric_accuracy(pred, gold, 10, &acc, &err) == AL_OK);
    CHECK_NEAR(acc, 0.8, 1e-15);
    /* I- without B- starts an entity; so does a type switch; B- after B- starts a new one. */
    const int32_t g2[6] = {IP, IP, O, BL, IM, BL}, p2[6] = {BP, IP, O, BL, BM, BL};
    const int32_t off2[2] = {0, 6};
    CHECK(al_metric_entity_f1(p2, g2, off2, 1, IOB2, 7, &sc, &err) == AL_OK);
    CHECK(sc.n_true == 4 && sc.n_pred == 4 && sc.n_correct == 4); /* PER 0-1, LOC 3, MISC 4, LOC 5 */
    /* Sentence boundaries end entities: I-PER | I-PER is two one-token entities (each matched by the
     * prediction's own), not one spanning both; B-LOC in the second sentence matches nothing. */
    const int32_t g3[2] = {IP, IP}, p3[2] = {BP, IP}, q3[2] = {BP, BL};
    const int32_t off3[3] = {0, 1, 2};
    CHECK(al_metric_entity_f1(p3, g3, off3, 2, IOB2, 7, &sc, &err) == AL_OK);
    CHECK(sc.n_true == 2 && sc.n_pred == 2 && sc.n_correct == 2);
    CHECK(al_metric_entity_f1(q3, g3, off3, 2, IOB2, 7, &sc, &err) == AL_OK);
    CHECK(sc.n_true == 2 && sc.n_pred == 2 && sc.n_correct == 1);
    /* -100 tokens are dropped before chunking: B-PER, (-100), I-PER is one entity of two tokens. */
    const int32_t g4[3] = {BP, AL_IGNORE_INDEX, IP}, p4[3] = {BP, O, IP};
    const int32_t off4[2] = {0, 3};
    CHECK(al_metric_entity_f1(p4, g4, off4, 1, IOB2, 7, &sc, &err) == AL_OK);
    CHECK(sc.n_true == 1 && sc.n_pred == 1 && sc.n_correct == 1);
    /* IOBES: S- is a single-token entity, E- closes one. */
    static const char *const IOBES[] = {"O", "B-PER", "I-PER", "E-PER", "S-PER"};
    const int32_t g5[5] = {1, 2, 3, 4, 4}, p5[5] = {1, 3, 0, 4, 2};
    const int32_t off5[2] = {0, 5};
    CHECK(al_metric_entity_f1(p5, g5, off5, 1, IOBES, 5, &sc, &err) == AL_OK);
    /* gold: PER 0-2, PER 3, PER 4; pred: PER 0-1 (E- closes it), PER 3, PER 4 (I- after S- starts one) */
    CHECK(sc.n_true == 3 && sc.n_pred == 3 && sc.n_correct == 2);
    CHECK_NEAR(sc.precision, 2.0 / 3.0, 1e-15);
    /* Names without an entity prefix are refused (POS tags: use accuracy). */
    static const char *const POS[] = {"NN", "VB"};
    const int32_t z[1] = {0}, off6[2] = {0, 1};
    CHECK(al_metric_entity_f1(z, z, off6, 1, POS, 2, &sc, &err) == AL_ERR_INVALID && strstr(err.message, "NN"));
}

static void test_golden(void) {
    golden_file g;
    if (!golden_open(&g, GOLDEN)) {
        CHECK(0);
        return;
    }
    al_error err;
    char name[64];
    double worst = 0.0;
    int n_cases = 0;
    for (int i = 0; i < 6; i++) {
        size_t n = 0;
        snprintf(name, sizeof name, "cls%d.pred", i);
        int32_t *pred = golden_ints(&g, name, &n);
        snprintf(name, sizeof name, "cls%d.gold", i);
        int32_t *gold = golden_ints(&g, name, NULL);
        snprintf(name, sizeof name, "cls%d.n_labels", i);
        int32_t *nl = golden_ints(&g, name, NULL);
        snprintf(name, sizeof name, "cls%d.values", i);
        double *want = golden_f64(&g, name, NULL);
        if (!pred || !gold || !nl || !want) {
            CHECK(0);
            break;
        }
        double got[4] = {0, 0, 0, -1.0};
        CHECK(al_metric_accuracy(pred, gold, n, &got[0], &err) == AL_OK);
        CHECK(al_metric_f1_macro(pred, gold, n, nl[0], &got[1], &err) == AL_OK);
        CHECK(al_metric_mcc(pred, gold, n, nl[0], &got[2], &err) == AL_OK);
        if (nl[0] == 2) CHECK(al_metric_f1_binary(pred, gold, n, &got[3], &err) == AL_OK);
        for (int k = 0; k < 4; k++) {
            worst = fmax(worst, fabs(got[k] - want[k]));
            CHECK_NEAR(got[k], want[k], 1e-12);
        }
        n_cases++;
        free(pred);
        free(gold);
        free(nl);
        free(want);
    }
    static const char *const IOBES[] = {"O", "B-PER", "I-PER", "E-PER", "S-PER", "B-ORG", "I-ORG", "E-ORG", "S-ORG"};
    for (int i = 0; i < 3; i++) {
        size_t n = 0, n_off = 0;
        snprintf(name, sizeof name, "ent%d.pred", i);
        int32_t *pred = golden_ints(&g, name, &n);
        snprintf(name, sizeof name, "ent%d.gold", i);
        int32_t *gold = golden_ints(&g, name, NULL);
        snprintf(name, sizeof name, "ent%d.offsets", i);
        int32_t *off = golden_ints(&g, name, &n_off);
        snprintf(name, sizeof name, "ent%d.values", i);
        double *want = golden_f64(&g, name, NULL);
        if (!pred || !gold || !off || !want) {
            CHECK(0);
            break;
        }
        const int iobes = i == 2;
        al_entity_scores sc;
        double acc = 0.0;
        CHECK(al_metric_entity_f1(pred, gold, off, (int)n_off - 1, iobes ? IOBES : IOB2, iobes ? 9 : 7, &sc, &err) ==
              AL_OK);
        CHECK(al_metric_accuracy(pred, gold, n, &acc, &err) == AL_OK);
        const double got[7] = {sc.precision, sc.recall, sc.f1, sc.n_true, sc.n_pred, sc.n_correct, acc};
        for (int k = 0; k < 7; k++) {
            worst = fmax(worst, fabs(got[k] - want[k]));
            CHECK_NEAR(got[k], want[k], 1e-12);
        }
        n_cases++;
        free(pred);
        free(gold);
        free(off);
        free(want);
    }
    printf("metrics vs sklearn/seqeval formulas: %d random cases, max abs diff %.2e\n", n_cases, worst);

    size_t n = 0;
    double *dof = golden_f64(&g, "t.dof", &n), *q975 = golden_f64(&g, "t.q975", NULL), *q90 = golden_f64(&g, "t.q90", NULL);
    double worst_t = 0.0;
    for (size_t i = 0; dof && q975 && q90 && i < n; i++) {
        const double a = al_student_t_quantile(0.975, dof[i]), b = al_student_t_quantile(0.90, dof[i]);
        worst_t = fmax(worst_t, fmax(fabs(a - q975[i]) / q975[i], fabs(b - q90[i]) / q90[i]));
        CHECK_NEAR(al_student_t_quantile(0.025, dof[i]), -a, 1e-12);
    }
    printf("Student-t quantiles vs mpmath (%zu degrees of freedom, p 0.975 and 0.90): max relative diff %.2e\n", n,
           worst_t);
    CHECK(n == 43 && worst_t < 1e-11);
    free(dof);
    free(q975);
    free(q90);
    golden_close(&g);
}

static void test_summary(void) {
    al_error err;
    al_seed_summary s;
    const double x[3] = {1.0, 2.0, 3.0};
    CHECK(al_metric_summary(x, 3, &s, &err) == AL_OK);
    CHECK(s.n == 3 && s.has_interval);
    CHECK_NEAR(s.mean, 2.0, 1e-15);
    CHECK_NEAR(s.sd, 1.0, 1e-15);
    CHECK_NEAR(s.half_width, 4.302653 / sqrt(3.0), 1e-6);
    printf("n = 3: t_0.975,2 = %.9f, half-width of {1, 2, 3} = %.9f\n", al_student_t_quantile(0.975, 2.0),
           s.half_width);
    CHECK_NEAR(al_student_t_quantile(0.975, 2.0), 4.302652730, 1e-9);
    CHECK_NEAR(al_student_t_quantile(0.975, 1.0), 12.706204736, 1e-8);
    CHECK_NEAR(al_student_t_cdf(0.0, 5.0), 0.5, 1e-15);
    CHECK(isnan(al_student_t_quantile(1.0, 3.0)) && isnan(al_student_t_quantile(0.5, 0.0)));
    const double one = 0.7;
    CHECK(al_metric_summary(&one, 1, &s, &err) == AL_OK);
    CHECK(s.mean == 0.7 && s.sd == 0.0 && s.half_width == 0.0 && !s.has_interval);
    CHECK(al_metric_summary(x, 0, &s, &err) == AL_ERR_INVALID);
    const double bad[2] = {1.0, NAN};
    CHECK(al_metric_summary(bad, 2, &s, &err) == AL_ERR_INVALID && strstr(err.message, "value 1"));

    double d = 0.0;
    CHECK(al_metric_relative_drop(0.8, 0.6, &d, &err) == AL_OK);
    CHECK_NEAR(d, 0.25, 1e-15);
    CHECK(al_metric_relative_drop(-0.5, -0.6, &d, &err) == AL_OK); /* MCC can be negative: |ref| */
    CHECK_NEAR(d, 0.2, 1e-15);
    CHECK(al_metric_relative_drop(0.0, 0.1, &d, &err) == AL_ERR_INVALID && strstr(err.message, "nonzero"));
}

int main(void) {
    test_hand();
    test_entities_hand();
    test_golden();
    test_summary();
    return check_summary("metrics");
}
