/* test_head_importance.c: gradient head importance (src/methods/measures/head_importance.c) against finite
 * differences through the inference pass. The oracle never touches the training path: the loss of one
 * example is computed by al_forward with head h MIX at lambda = xi and a zero constant (P = xi S, the head
 * mask), through the probe (or the MLM score's head), at xi = 1, 1 - e, 1 - 2e, and the one-sided
 * second-order difference (3 f(1) - 4 f(1 - e) + f(1 - 2 e)) / 2e is compared with dL/dxi_h. Also: the raw
 * value is the mean of |dL(x)/dxi| over examples, each layer's normalised values have unit L2 norm, and
 * the numbers are the same bits on 1 and 3 threads. Skips when build/data/tasks is absent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "methods/measures/head_importance.h"
#include "methods/papa/papa.h"
#include "methods/papa/papa_sweep.h"

#define L_TEST 32
static double FD_STEP = 1e-2;
#define FD_TOL 1e-2 /* max |fd - analytic| over the heads / max |analytic|: float losses put the floor near 4e-3 */

/* One example's inputs: a view of example x of in. */
static al_papa_inputs one(const al_papa_inputs *in, int x) {
    al_papa_inputs o = *in;
    const size_t at = (size_t)x * in->L;
    o.n = 1;
    o.ids = in->ids + at, o.mask = in->mask + at, o.type_ids = in->type_ids + at;
    o.labels = in->token_task ? in->labels + at : in->labels + x;
    o.group = in->group + x;
    return o;
}

/* The probe's loss on example in (n = 1) through al_forward with the given policies. */
static double probe_loss(const al_model *m, const al_papa_inputs *in, al_probe *probe, const al_head_policy *pol) {
    const al_config *c = al_model_config(m);
    const int S = c->n_layers + 1, D = c->hidden_size, L = in->L;
    float *hidden = malloc(sizeof(float) * (size_t)S * L * D), *feats = malloc(sizeof(float) * (size_t)L * S * D);
    float *d_feats = malloc(sizeof(float) * (size_t)L * S * D);
    int32_t re[L_TEST], rp[L_TEST], rl[L_TEST];
    al_forward_params fp = al_forward_default_params();
    fp.policies = pol;
    al_batch b = {1, L, in->ids, in->mask, in->type_ids, NULL};
    al_forward_outputs o = {0};
    o.hidden_states = hidden;
    al_error err;
    CHECK(al_forward(m, &b, &fp, &o, &err) == AL_OK);
    const float *states[64];
    for (int k = 0; k < S; k++) states[k] = hidden + (size_t)k * L * D;
    al_probe_dense dense = {S, 1, L, D, states, in->mask, in->token_task ? in->labels : NULL};
    int n_rows = 0;
    CHECK(al_probe_gather(&dense, in->token_task, L, feats, re, rp, in->token_task ? rl : NULL, &n_rows, &err) == AL_OK);
    al_probe_batch pb = {1, n_rows, feats, re, rp, in->token_task ? rl : in->labels};
    float loss = 0.0f;
    CHECK(al_probe_forward_backward(probe, &pb, 0, NULL, &loss, d_feats, &err) == AL_OK);
    free(hidden), free(feats), free(d_feats);
    return loss;
}

static double mlm_loss(const al_model *m, const al_papa_inputs *in, const al_head_policy *pol) {
    al_papa_mlm_stats s;
    al_error err;
    CHECK(al_papa_mlm_eval(m, in->ids, in->mask, in->type_ids, in->labels, 1, in->L, 1, pol, NULL, &s, &err) == AL_OK);
    return s.n ? s.nll_sum / (double)s.n : 0.0;
}

/* Worst relative error of dL/dxi over every head of one example. */
static double fd_example(al_model *m, const al_papa_inputs *ex, al_importance_loss loss, al_probe *probe,
                         double *scale_out) {
    const al_config *c = al_model_config(m);
    const int NH = c->n_layers * c->n_heads;
    al_head_importance r;
    al_error err;
    CHECK_MSG(al_head_importance_measure(m, ex, loss, probe, NULL, &r, &err) == AL_OK, "%s", err.message);
    if (!r.raw) return 1.0;
    float *zeros = calloc((size_t)ex->L * ex->L, sizeof(float));
    al_head_policy *pol = calloc((size_t)NH, sizeof *pol);
    double scale = 0.0, worst = 0.0;
    for (int h = 0; h < NH; h++) scale = fabs(r.signed_sum[h]) > scale ? fabs(r.signed_sum[h]) : scale;
    for (int h = 0; h < NH; h++) {
        double f[5]; /* at xi = 1 - s e / 2 */
        for (int s = 0; s < 5; s++) {
            if (s == 3) continue;
            for (int i = 0; i < NH; i++) pol[i] = (al_head_policy){AL_HEAD_STANDARD, 1.0f, NULL};
            pol[h] = (al_head_policy){AL_HEAD_MIX, (float)(1.0 - s * FD_STEP / 2), zeros};
            f[s] = loss == AL_IMPORTANCE_MLM ? mlm_loss(m, ex, pol) : probe_loss(m, ex, probe, pol);
        }
        /* one-sided second-order differences at steps e and e/2, then Richardson: error O(e^3) */
        const double d_full = (3.0 * f[0] - 4.0 * f[2] + f[4]) / (2.0 * FD_STEP);
        const double d_half = (3.0 * f[0] - 4.0 * f[1] + f[2]) / FD_STEP;
        const double fd = (4.0 * d_half - d_full) / 3.0;
        const double e = fabs(fd - r.signed_sum[h]) / (scale > 1e-9 ? scale : 1e-9);
        worst = e > worst ? e : worst;
        CHECK(r.raw[h] == fabs(r.signed_sum[h])); /* one example: |g| */
    }
    free(zeros), free(pol);
    al_head_importance_free(&r);
    *scale_out = scale;
    return worst;
}

static int same_doubles(const double *a, const double *b, int n) {
    return memcmp(a, b, sizeof(double) * (size_t)n) == 0;
}

static void test_task(al_model *m, const char *id) {
    al_task *task = NULL;
    al_error err;
    if (al_task_load_builtin("build/data/tasks", id, &task, &err) != AL_OK) {
        printf("skip %s: %s\n", id, err.message);
        return;
    }
    const al_config *c = al_model_config(m);
    const int NL = c->n_layers, H = c->n_heads, NH = NL * H;
    al_papa_inputs in;
    CHECK_MSG(al_papa_inputs_build(al_model_tokenizer(m), task, AL_TASK_TRAIN, 24, AL_LAYOUT_PAPA, L_TEST, &in, &err) == AL_OK,
              "%s", err.message);
    al_papa_probe_settings ps = {2, 16, 5e-4f, 0.1f, AL_LR_CONSTANT};
    al_probe *probe = NULL;
    CHECK_MSG(al_head_importance_probe(m, task, &in, &ps, 1, 8, 0, NULL, &probe, &err) == AL_OK, "%s", err.message);

    /* finite differences, example by example */
    double worst = 0.0, scale = 0.0;
    for (int x = 0; x < 3; x++) {
        al_papa_inputs ex = one(&in, x);
        double sc;
        const double e = fd_example(m, &ex, AL_IMPORTANCE_PROBE, probe, &sc);
        worst = e > worst ? e : worst;
        scale = sc > scale ? sc : scale;
    }
    printf("%s probe loss: dL/dxi vs finite differences over %d heads x 3 examples: rel err %.2e (max |g| %.3g)\n",
           id, NH, worst, scale);
    CHECK_MSG(worst < FD_TOL, "%s: rel err %.3g", id, worst);
    CHECK(scale > 1e-6);

    /* the mean of |g| over examples; unit L2 norm per layer */
    al_head_importance r1, r3, parts[4];
    CHECK(al_head_importance_measure(m, &in, AL_IMPORTANCE_PROBE, probe, NULL, &r1, &err) == AL_OK);
    CHECK(r1.n_examples == in.n);
    double worst_mean = 0.0;
    for (int x = 0; x < 4; x++) {
        al_papa_inputs ex = one(&in, x);
        CHECK(al_head_importance_measure(m, &ex, AL_IMPORTANCE_PROBE, probe, NULL, &parts[x], &err) == AL_OK);
    }
    al_papa_inputs first4 = in;
    first4.n = 4;
    al_head_importance r4;
    CHECK(al_head_importance_measure(m, &first4, AL_IMPORTANCE_PROBE, probe, NULL, &r4, &err) == AL_OK);
    for (int h = 0; h < NH; h++) {
        double mean = 0.0;
        for (int x = 0; x < 4; x++) mean += parts[x].raw[h];
        mean /= 4;
        const double e = fabs(mean - r4.raw[h]) / (fabs(mean) > 1e-12 ? fabs(mean) : 1e-12);
        worst_mean = e > worst_mean ? e : worst_mean;
    }
    CHECK_MSG(worst_mean < 1e-12, "mean of |g|: rel err %.3g", worst_mean);
    for (int l = 0; l < NL; l++) {
        double sq = 0.0;
        for (int h = 0; h < H; h++) sq += r1.normalized[l * H + h] * r1.normalized[l * H + h];
        CHECK_NEAR(sq, 1.0, 1e-12);
    }

    /* the same bits on 3 threads */
    al_threadpool *pool = NULL;
    CHECK(al_threadpool_new(3, &pool, &err) == AL_OK);
    al_forward_params fp = al_forward_default_params();
    fp.pool = pool;
    CHECK(al_head_importance_measure(m, &in, AL_IMPORTANCE_PROBE, probe, &fp, &r3, &err) == AL_OK);
    CHECK(r3.raw && same_doubles(r1.raw, r3.raw, NH) && same_doubles(r1.normalized, r3.normalized, NH) &&
          r1.mean_loss == r3.mean_loss);
    printf("%s: %d examples, mean loss %.4f; 1 and %d threads give the same bits\n", id, r1.n_examples, r1.mean_loss,
           al_threadpool_size(pool));
    al_threadpool_free(pool);
    volatile int cancel = 1;
    al_forward_params fc = al_forward_default_params();
    fc.cancel = &cancel;
    al_head_importance rc;
    CHECK(al_head_importance_measure(m, &in, AL_IMPORTANCE_PROBE, probe, &fc, &rc, &err) == AL_ERR_CANCELLED);

    for (int x = 0; x < 4; x++) al_head_importance_free(&parts[x]);
    al_head_importance_free(&r1);
    al_head_importance_free(&r3);
    al_head_importance_free(&r4);
    al_probe_free(probe);
    al_papa_inputs_free(&in);
    al_task_free(task);
}

static void test_mlm(al_model *m) {
    static const char *lines[] = {"the cat sat on the mat and looked at the dog",
                                  "a small bird sang in the tall green tree today"};
    const int n = 2, L = L_TEST;
    int32_t ids[2 * L_TEST], mask[2 * L_TEST], types[2 * L_TEST], labels[2 * L_TEST], group[2] = {-1, -1};
    al_error err;
    CHECK(al_papa_mlm_examples(al_model_tokenizer(m), AL_LAYOUT_PAPA, lines, NULL, n, L, 7, ids, mask, types, labels,
                               &err) == AL_OK);
    al_papa_inputs in = {n, L, 1, ids, mask, types, labels, group, 0};
    double worst = 0.0, scale = 0.0;
    for (int x = 0; x < n; x++) {
        al_papa_inputs ex = one(&in, x);
        double sc;
        const double e = fd_example(m, &ex, AL_IMPORTANCE_MLM, NULL, &sc);
        worst = e > worst ? e : worst;
        scale = sc > scale ? sc : scale;
    }
    const al_config *c = al_model_config(m);
    printf("mlm loss: dL/dxi vs finite differences over %d heads x %d examples: rel err %.2e (max |g| %.3g)\n",
           c->n_layers * c->n_heads, n, worst, scale);
    CHECK_MSG(worst < FD_TOL, "mlm: rel err %.3g", worst);
    CHECK(scale > 1e-6);
    /* a wrong request is refused with the field's name */
    al_head_importance r;
    CHECK(al_head_importance_measure(m, &in, AL_IMPORTANCE_PROBE, NULL, NULL, &r, &err) == AL_ERR_INVALID &&
          strstr(err.message, "probe"));
}

/* The pruning curve: PAPA's sweep with order gradient and the zero policy. Its importance is the one
 * al_head_importance_measure gives with the same probe, the order ascends it, and k heads removed are the
 * first k of that order. */
static void test_pruning_sweep(al_model *m) {
    al_task *task = NULL;
    al_error err;
    if (al_task_load_builtin("build/data/tasks", "pos", &task, &err) != AL_OK) {
        printf("skip pruning sweep: %s\n", err.message);
        return;
    }
    const al_config *c = al_model_config(m);
    const int NH = c->n_layers * c->n_heads;
    al_papa_sweep_request req = al_papa_sweep_default_request();
    req.max_train = 48, req.max_validation = 16, req.L = L_TEST;
    req.plan.n_seeds = 2;
    req.n_fractions = 3;
    req.fractions[0] = 1.0, req.fractions[1] = 0.5, req.fractions[2] = 0.0;
    req.plan.orders[0] = AL_ORDER_GRADIENT;
    req.plan.constants[0] = AL_CONST_ZEROS;
    req.plan.baselines = 0;
    req.probe.epochs = 2;
    req.importance_examples = 24;
    req.mlm = 0;
    al_papa_sweep_result r;
    CHECK_MSG(al_papa_sweep_run(m, task, &req, &r, &err) == AL_OK, "%s", err.message);
    CHECK(r.plan.n_configs == 3 && r.n_runs == 6 && r.importance && r.importance_raw && !r.theta);
    /* the same importance from the parts */
    al_papa_inputs in;
    al_probe *probe = NULL;
    al_head_importance hi;
    CHECK(al_papa_inputs_build(al_model_tokenizer(m), task, AL_TASK_TRAIN, 48, AL_LAYOUT_PAPA, L_TEST, &in, &err) == AL_OK);
    CHECK(al_head_importance_probe(m, task, &in, &req.probe, req.rank.seed, req.batch_size, 0, NULL, &probe, &err) == AL_OK);
    in.n = 24;
    CHECK(al_head_importance_measure(m, &in, AL_IMPORTANCE_PROBE, probe, NULL, &hi, &err) == AL_OK);
    in.n = 48;
    CHECK(r.importance && hi.normalized && same_doubles(r.importance, hi.normalized, NH) && same_doubles(r.importance_raw, hi.raw, NH));
    const int *order = r.orders + (size_t)AL_ORDER_GRADIENT * NH;
    int ascending = order[0] >= 0;
    for (int i = 1; r.importance && i < NH; i++) ascending &= r.importance[order[i - 1]] <= r.importance[order[i]];
    CHECK(ascending);
    int other_orders_unset = 1;
    for (int o = 0; o < AL_N_ORDERS; o++)
        if (o != AL_ORDER_GRADIENT && o != AL_ORDER_FIRST_TO_LAST && o != AL_ORDER_LAST_TO_FIRST && o != AL_ORDER_RANDOM)
            other_orders_unset &= r.orders[(size_t)o * NH] == -1;
    CHECK(other_orders_unset);
    for (int i = 0; i < r.n_runs; i++) {
        char label[64];
        al_papa_config_label(&r.plan.configs[r.runs[i].config], NH, label, sizeof label);
        printf("  pruning %-24s seed %d  score %.4f\n", label, r.runs[i].seed_index, r.runs[i].score);
    }
    CHECK(r.plan.configs[1].k == NH / 2 && r.plan.configs[1].order == AL_ORDER_GRADIENT &&
          r.plan.configs[1].constant == AL_CONST_ZEROS);
    al_head_importance_free(&hi);
    al_probe_free(probe);
    al_papa_inputs_free(&in);
    al_papa_sweep_result_free(&r);
    al_task_free(task);
}

int main(void) {
    if (getenv("FD_STEP")) FD_STEP = atof(getenv("FD_STEP"));
    al_model *m = NULL;
    al_error err;
    CHECK_MSG(al_model_load_dir("models/attnlab-mini-bert", &m, &err) == AL_OK, "%s", err.message);
    if (m) {
        test_task(m, "pos");
        test_task(m, "order");
        test_mlm(m);
        test_pruning_sweep(m);
    }
    al_model_free(m);
    return check_summary("head_importance");
}
