/* papa_sweep.c: the PAPA experiment (docs/papa.md#sweeps). Order of work: lay out the task, average the
 * constants over its training inputs, rank heads when a lambda order is asked, then per head configuration
 * compute frozen features once and train one probe per seed on them, score it on the validation split, and
 * (with an MLM head) score masked-token prediction under the same configuration. */
#include "../../core/clock.h"
#include "papa_sweep.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/memory.h"
#include "../../core/threadpool.h"
#include "../../train/train.h"
#include "../measures/head_importance.h"
#include "../probes/metrics.h"

al_papa_sweep_request al_papa_sweep_default_request(void) {
    al_papa_sweep_request r;
    memset(&r, 0, sizeof r);
    r.plan.n_constants = 1;
    r.plan.constants[0] = AL_CONST_AVERAGE;
    r.plan.n_orders = 1;
    r.plan.orders[0] = AL_ORDER_LAMBDA;
    static const double fractions[] = {1.0, 0.5, 0.125, 0.0625, 0.0};
    r.n_fractions = 5;
    memcpy(r.fractions, fractions, sizeof fractions);
    r.plan.n_k = 0; /* from the fractions once the model is known */
    r.plan.baselines = 1;
    r.plan.n_seeds = 3;
    for (int i = 0; i < AL_PAPA_MAX_SEEDS; i++) r.seeds[i] = (uint64_t)(i + 1);
    r.L = 64;
    r.layout = AL_LAYOUT_PAPA;
    r.batch_size = 16;
    r.probe.epochs = 4;
    r.probe.batch_size = 16;
    r.probe.lr = 5e-4f;
    r.probe.dropout = 0.1f;
    r.probe.schedule = AL_LR_CONSTANT;
    r.rank.epochs = 2;
    r.rank.batch_size = 16;
    r.rank.max_examples = 1000;
    r.rank.lr = 5e-3f;
    r.rank.shards = 2;
    r.rank.train_mode = 0;
    r.rank.probe_dropout = 0.1f;
    r.rank.seed = 1;
    r.mlm = 1;
    r.importance_examples = 1000;
    return r;
}

const char *const al_papa_preset_names[] = {"quick", "paper", NULL}; /* the presets al_papa_sweep_preset knows */

/* The "quick" preset keeps a sweep interactive; "paper" follows the paper's Table 3 where it gives the task
 * type (POS: lr 5e-4, batch 8, 4 epochs, L 128) and the reference README's CoLA run otherwise (lr 2e-5,
 * batch 16, 15 epochs, L 64); its ranking is the reference's (lr 2e-5, 15 epochs, dropout on, all examples). */
al_status al_papa_sweep_preset(const char *preset, const al_task *task, al_papa_sweep_request *r, al_error *err) {
    const int token = task->kind == AL_TASK_TOKEN;
    const int pair = task->n_train > 0 && task->train[0].text_pair != NULL;
    if (!strcmp(preset, "quick")) {
        /* agreement's sentences and order's sentence pairs are longer than 64 tokens often enough */
        r->L = !strcmp(task->id, "agreement") || !strcmp(task->id, "order") ? 128 : 64;
        r->max_train = 1000;
        r->max_validation = 400;
        r->probe.epochs = 4;
        r->probe.batch_size = 16;
        r->probe.lr = token ? 5e-4f : 1e-3f;
        r->rank.epochs = 2;
        r->rank.max_examples = 1000;
        r->rank.lr = 5e-3f;
        r->rank.train_mode = 0;
        return AL_OK;
    }
    if (!strcmp(preset, "paper")) {
        r->L = token ? 128 : pair ? 128 : 64;
        r->max_train = 0;
        r->max_validation = 0;
        r->probe.epochs = token ? 4 : 15;
        r->probe.batch_size = token ? 8 : 16;
        r->probe.lr = token ? 5e-4f : 2e-5f;
        r->rank.epochs = 15;
        r->rank.max_examples = 0;
        r->rank.batch_size = 16;
        r->rank.lr = 2e-5f;
        r->rank.train_mode = 1;
        return AL_OK;
    }
    return al_err(err, AL_ERR_INVALID, "request: field 'preset' is '%.40s', not 'quick' or 'paper'", preset);
}

void al_papa_sweep_result_free(al_papa_sweep_result *r) {
    free(r->runs);
    free(r->theta);
    free(r->importance);
    free(r->importance_raw);
    free(r->orders);
    free(r->constants);
    free(r->mlm_score);
    free(r->mlm_accuracy);
    memset(r, 0, sizeof *r);
}

static int uses_lambda(const al_papa_plan *plan, int n_total) {
    return al_papa_plan_uses_order(plan, n_total, AL_ORDER_LAMBDA) ||
           al_papa_plan_uses_order(plan, n_total, AL_ORDER_REVERSED_LAMBDA);
}

/* The task's metric and plain accuracy of one seed's predictions. */
static al_status score(const al_task *task, const al_probe_data *val, const int32_t *pred, al_papa_run_result *r,
                       al_error *err) {
    const int32_t *gold = al_probe_data_labels(val);
    const size_t n = task->kind == AL_TASK_TOKEN ? (size_t)al_probe_data_n_rows(val)
                                                : (size_t)al_probe_data_n_examples(val);
    al_status st = al_metric_accuracy(pred, gold, n, &r->accuracy, err);
    if (st) return st;
    const char *m = task->metric;
    if (!strcmp(m, "f1")) return al_metric_f1_binary(pred, gold, n, &r->score, err);
    if (!strcmp(m, "macro_f1")) return al_metric_f1_macro(pred, gold, n, task->n_labels, &r->score, err);
    if (!strcmp(m, "mcc")) return al_metric_mcc(pred, gold, n, task->n_labels, &r->score, err);
    if (!strcmp(m, "entity_f1")) {
        al_entity_scores es;
        st = al_metric_entity_f1(pred, gold, al_probe_data_example_offsets(val), al_probe_data_n_examples(val),
                                 (const char *const *)task->label_names, task->n_labels, &es, err);
        r->score = es.f1;
        return st;
    }
    r->score = r->accuracy; /* accuracy, token_accuracy */
    return AL_OK;
}

static void group_accuracy(const al_papa_inputs *val, const int32_t *pred, al_papa_run_result *r) {
    int hits[AL_PAPA_MAX_GROUPS] = {0};
    for (int g = 0; g < AL_PAPA_MAX_GROUPS; g++) r->group_count[g] = 0;
    /* token tasks: the probe's rows are the labelled, unpadded positions in example-then-position order
     * (probe_rows.c); each counts in its example's group (agreement: the one masked verb) */
    size_t row = 0;
    for (int x = 0; x < val->n; x++) {
        const int g = val->group[x] < AL_PAPA_MAX_GROUPS ? val->group[x] : AL_PAPA_MAX_GROUPS - 1;
        if (!val->token_task) {
            if (g < 0) continue;
            r->group_count[g]++;
            hits[g] += pred[x] == val->labels[x];
            continue;
        }
        for (int t = 0; t < val->L; t++) {
            const size_t at = (size_t)x * val->L + t;
            if (!val->mask[at] || val->labels[at] == AL_IGNORE_INDEX) continue;
            if (g >= 0) {
                r->group_count[g]++;
                hits[g] += pred[row] == val->labels[at];
            }
            row++;
        }
    }
    for (int g = 0; g < AL_PAPA_MAX_GROUPS; g++)
        r->group_accuracy[g] = r->group_count[g] ? (double)hits[g] / r->group_count[g] : NAN;
}

/* A seed's probe as al_probe_new made it, for the next configuration with the same probe shape: its
 * parameters depend on the shape and the seed only, so every configuration of a sweep (all but the
 * embeddings-only baseline share a shape) starts each seed from the same values. */
typedef struct probe_start {
    al_probe_config cfg;
    uint64_t seed;
    float *params; /* NULL: none kept */
} probe_start;

typedef struct sweep_ctx {
    al_model *model;
    const al_task *task;
    const al_papa_sweep_request *req;
    al_papa_sweep_result *out;
    int NL, H, L;
    al_papa_inputs train, val, train_rp, val_rp;
    float *kind_constants[AL_N_CONST_KINDS]; /* [NL, H, L, L] per kind used */
    al_head_policy *policies;
    int32_t *mlm_ids, *mlm_mask, *mlm_types, *mlm_labels;
    int mlm_n;
    al_forward_params fp;
    probe_start starts[AL_PAPA_MAX_SEEDS];
    int step, n_steps; /* the configuration being computed, 1-based, of this run's (0 before the first) */
} sweep_ctx;

/* Progress within one stage as the job reports it: stage names stay those of the work being done, and with
 * plan_progress each report names its configuration, so a reader needs no plan of its own to say "i of n". */
static void report(const sweep_ctx *s, const char *stage, double fraction) {
    const al_papa_sweep_request *q = s->req;
    if (q->plan_progress) q->plan_progress(q->progress_user, stage, fraction, s->step, s->n_steps);
    else if (q->progress) q->progress(q->progress_user, stage, fraction);
}

/* The passes' progress (constants, ranking, importance, features, mlm) through report. */
static void relay(void *user, const char *stage, double fraction) { report(user, stage, fraction); }

static al_status build_constants(sweep_ctx *s, al_error *err) {
    const size_t n_c = (size_t)s->NL * s->H * s->L * s->L;
    al_status st = AL_OK;
    for (int c = 0; c < s->out->plan.n_configs && !st; c++) {
        const al_papa_config *x = &s->out->plan.configs[c];
        if (x->what != AL_CFG_SWEEP || x->k == 0 || x->constant == AL_CONST_ZEROS || s->kind_constants[x->constant])
            continue;
        float *C = malloc(n_c * sizeof *C);
        if (!C) return al_err(err, AL_ERR_OOM, "papa: out of memory for the constants");
        s->kind_constants[x->constant] = C;
        if (x->constant == AL_CONST_AVERAGE) continue; /* filled below */
        for (int lh = 0; lh < s->NL * s->H && !st; lh++)
            st = al_papa_data_free(x->constant, s->L, C + (size_t)lh * s->L * s->L, err);
    }
    if (st) return st;
    int need_avg = al_papa_plan_uses_average(&s->out->plan) || uses_lambda(&s->out->plan, s->NL * s->H);
    if (!need_avg) return AL_OK;
    if (!s->kind_constants[AL_CONST_AVERAGE]) {
        s->kind_constants[AL_CONST_AVERAGE] = malloc(n_c * sizeof(float));
        if (!s->kind_constants[AL_CONST_AVERAGE]) return al_err(err, AL_ERR_OOM, "papa: out of memory for the constants");
    }
    float *C = s->kind_constants[AL_CONST_AVERAGE];
    if (s->req->constants) {
        memcpy(C, s->req->constants, n_c * sizeof *C);
    } else {
        const double t0 = al_now_seconds();
        int n = s->train.n;
        if (s->req->constants_examples > 0 && n > s->req->constants_examples) n = s->req->constants_examples;
        al_forward_params fp = s->fp;
        st = al_papa_average_constants(s->model, s->train.ids, s->train.mask, s->train.type_ids, n, s->L,
                                       s->req->batch_size, &fp, C, err);
        s->out->seconds_constants += al_now_seconds() - t0;
    }
    if (!st) {
        s->out->constants = malloc(n_c * sizeof(float));
        if (!s->out->constants) return al_err(err, AL_ERR_OOM, "papa: out of memory");
        memcpy(s->out->constants, C, n_c * sizeof(float));
    }
    return st;
}

static al_status build_orders(sweep_ctx *s, al_error *err) {
    const int n = s->NL * s->H;
    al_papa_sweep_result *out = s->out;
    out->orders = malloc(sizeof(int) * AL_N_ORDERS * (size_t)n);
    if (!out->orders) return al_err(err, AL_ERR_OOM, "papa: out of memory");
    al_status st = AL_OK;
    if (uses_lambda(&out->plan, n)) {
        out->theta = malloc(sizeof(float) * (size_t)n);
        if (!out->theta) return al_err(err, AL_ERR_OOM, "papa: out of memory");
        if (s->req->theta) {
            memcpy(out->theta, s->req->theta, sizeof(float) * (size_t)n);
        } else {
            const double t0 = al_now_seconds();
            st = al_papa_rank(s->model, &s->train, s->kind_constants[AL_CONST_AVERAGE], &s->req->rank, &s->fp,
                              out->theta, &out->rank_loss, err);
            out->seconds_rank += al_now_seconds() - t0;
        }
    }
    float *scores = NULL; /* the importance as the order sorts it */
    if (!st && al_papa_plan_uses_order(&out->plan, n, AL_ORDER_GRADIENT)) {
        out->importance = malloc(sizeof(double) * (size_t)n);
        scores = malloc(sizeof(float) * (size_t)n);
        if (!out->importance || !scores) st = al_err(err, AL_ERR_OOM, "papa: out of memory");
        if (!st && s->req->importance) {
            memcpy(out->importance, s->req->importance, sizeof(double) * (size_t)n);
        } else if (!st) {
            /* the probe's loss, the probe trained on the full model's features with the ranking's seed (as the
             * lambda ranking's probe), the gradient over the first importance_examples training examples */
            const double t0 = al_now_seconds();
            al_head_importance hi;
            st = al_head_importance_task(s->model, s->task, &s->train, &s->req->probe, s->req->rank.seed,
                                         s->req->batch_size, s->req->mem_limit, s->req->importance_examples, &s->fp,
                                         &hi, err);
            if (!st) {
                memcpy(out->importance, hi.normalized, sizeof(double) * (size_t)n);
                out->importance_raw = hi.raw;
                hi.raw = NULL;
                al_head_importance_free(&hi);
            }
            out->seconds_importance += al_now_seconds() - t0;
        }
        for (int i = 0; !st && i < n; i++) scores[i] = (float)out->importance[i];
    }
    if (!st) st = al_papa_all_orders(s->NL, s->H, out->theta, scores, s->req->rank.seed, out->orders, err);
    free(scores);
    return st;
}

/* Policies of a sweep configuration (NULL: the unmodified model). */
static const al_head_policy *config_policies(sweep_ctx *s, const al_papa_config *x) {
    if (x->what != AL_CFG_SWEEP || x->k == 0) return NULL;
    const int n = s->NL * s->H;
    const int *order = s->out->orders + (size_t)x->order * n;
    al_papa_policies(order, x->k, s->NL, s->H, s->kind_constants[x->constant], s->L, x->constant == AL_CONST_ZEROS,
                     s->policies);
    return s->policies;
}

/* One configuration's probes, one per seed, on the same frozen features. The seeds' probes are independent
 * (each has its own weights, generator and predictions, and reads the features only), so they train side by
 * side on the pool's threads; each computes exactly what it would alone, and the runs are stored in seed
 * order, so the numbers do not depend on the thread count (docs/threads.md). Seeds that would leave half the
 * threads or more idle in a last round after a full one (3 seeds on 2 threads: the third) train one after
 * another instead, each splitting its matrix products over the whole pool, which gives the same bits. */
typedef struct {
    const sweep_ctx *s;
    int c;
    al_probe_config pc;       /* the same probe shape for every seed */
    const al_probe_data *ftr, *fva;
    const al_papa_inputs *va;
    al_threadpool *probe_pool; /* the probes' matrix products (NULL while seeds run side by side) */
    probe_start *starts;      /* [n_seeds]: a seed's task reads and writes its own entry only */
    int n_pred;
    al_papa_run_result *runs; /* [n_seeds] */
    al_status *status;        /* [n_seeds] */
    al_error *errors;         /* [n_seeds] */
} seed_job;

int al_papa_seeds_side_by_side(int n_seeds, int n_threads) {
    const int last = n_seeds % n_threads;
    return n_seeds >= n_threads && 2 * last <= n_threads ? n_seeds - last : n_seeds;
}

/* Whether two probe configs draw the same initial parameters for a seed (al_probe_new). */
static int same_start(const al_probe_config *a, const al_probe_config *b) {
    return a->kind == b->kind && a->n_states == b->n_states && a->hidden == b->hidden && a->max_len == b->max_len &&
           a->n_labels == b->n_labels;
}

/* The seed's probe: a copy of the kept start when the shape matches, else drawn, and then kept when the
 * memory allows (a copy of 30 MB at bert-base width; under a known limit only while half of it is free). */
static al_status new_probe(probe_start *ps, const al_probe_config *pc, uint64_t seed, al_probe **probe, al_error *err) {
    if (ps->params && ps->seed == seed && same_start(&ps->cfg, pc)) return al_probe_new_from(pc, ps->params, probe, err);
    al_status st = al_probe_new(pc, seed, probe, err);
    if (st) return st;
    const size_t bytes = al_probe_n_params(*probe) * sizeof(float);
    const uint64_t limit = al_memory_limit();
    al_free_large(ps->params);
    ps->params = NULL;
    if (limit && al_memory_in_use() + bytes > limit / 2) return AL_OK;
    ps->params = al_alloc_large(bytes, 0);
    if (ps->params) {
        memcpy(ps->params, al_probe_params(*probe), bytes);
        ps->cfg = *pc;
        ps->seed = seed;
    }
    return AL_OK;
}

static void seed_task(void *arg, int si, int n_tasks, int thread) {
    (void)n_tasks;
    (void)thread;
    seed_job *j = arg;
    const sweep_ctx *s = j->s;
    const al_papa_sweep_request *req = s->req;
    al_error *err = &j->errors[si];
    al_papa_run_result *r = &j->runs[si];
    memset(r, 0, sizeof *r);
    r->config = j->c;
    r->seed_index = si;
    int32_t *pred = malloc(sizeof(int32_t) * (size_t)(j->n_pred > 0 ? j->n_pred : 1));
    al_status st = pred ? AL_OK : al_err(err, AL_ERR_OOM, "papa: out of memory");
    al_probe *probe = NULL;
    if (!st) st = new_probe(&j->starts[si], &j->pc, req->seeds[si], &probe, err);
    if (!st) al_probe_set_pool(probe, j->probe_pool);
    const al_probe_fit_options fo = al_papa_probe_fit_options(&req->probe, req->seeds[si], req->cancel);
    if (!st) st = al_probe_fit(probe, j->ftr, &fo, NULL, err);
    if (!st) st = al_probe_evaluate(probe, j->fva, pred, err);
    if (!st) st = score(s->task, j->fva, pred, r, err);
    if (!st) group_accuracy(j->va, pred, r);
    al_probe_free(probe);
    free(pred);
    j->status[si] = st;
}

static al_status run_seeds(sweep_ctx *s, int c, const al_papa_config *x, const al_probe_data *ftr,
                           const al_probe_data *fva, const al_papa_inputs *va, al_error *err) {
    const al_papa_sweep_request *req = s->req;
    const int n = req->plan.n_seeds;
    const al_probe_config pc = al_papa_probe_config(s->model, s->task, s->L, &req->probe, x->what == AL_CFG_EMBEDDINGS_ONLY);
    seed_job j = {s, c, pc, ftr, fva, va, NULL, s->starts,
                  s->task->kind == AL_TASK_TOKEN ? al_probe_data_n_rows(fva) : va->n,
                  calloc((size_t)n, sizeof *j.runs), calloc((size_t)n, sizeof *j.status),
                  calloc((size_t)n, sizeof *j.errors)};
    al_status st = j.runs && j.status && j.errors ? AL_OK : al_err(err, AL_ERR_OOM, "papa: out of memory");
    const int side_by_side = al_papa_seeds_side_by_side(n, al_threadpool_size(req->pool));
    if (!st && side_by_side) al_threadpool_for(req->pool, side_by_side, seed_task, &j);
    j.probe_pool = req->pool;
    for (int si = side_by_side; !st && si < n; si++) seed_task(&j, si, n, 0);
    /* the first failing seed's error, as the one-seed-at-a-time loop reported it */
    for (int si = 0; si < n && !st; si++) {
        if (j.status[si]) {
            *err = j.errors[si];
            st = j.status[si];
        } else {
            s->out->runs[s->out->n_runs++] = j.runs[si];
        }
    }
    free(j.runs);
    free(j.status);
    free(j.errors);
    return st;
}

static al_status run_config(sweep_ctx *s, int c, al_error *err) {
    const al_papa_config *x = &s->out->plan.configs[c];
    const al_papa_sweep_request *req = s->req;
    const int rp = x->what == AL_CFG_RIGHT_PAD, emb = x->what == AL_CFG_EMBEDDINGS_ONLY;
    const al_head_policy *pol = config_policies(s, x);
    const al_papa_inputs *tr = rp ? &s->train_rp : &s->train, *va = rp ? &s->val_rp : &s->val;
    al_probe_data *ftr = NULL, *fva = NULL;
    double t0 = al_now_seconds();
    al_status st = al_papa_features(s->model, tr, pol, emb, req->batch_size, req->mem_limit, &s->fp, &ftr, err);
    if (!st) st = al_papa_features(s->model, va, pol, emb, req->batch_size, req->mem_limit, &s->fp, &fva, err);
    if (st == AL_ERR_OOM) {
        char msg[sizeof err->message];
        memcpy(msg, err->message, sizeof msg);
        st = al_err(err, st, "papa: %s; lower max_train / max_validation or raise memory_mb", msg);
    }
    s->out->seconds_features += al_now_seconds() - t0;
    t0 = al_now_seconds();
    if (!st) st = run_seeds(s, c, x, ftr, fva, va, err);
    s->out->seconds_probe += al_now_seconds() - t0;
    al_probe_data_free(ftr);
    al_probe_data_free(fva);
    if (!st && req->mlm && s->mlm_n > 0 && x->what == AL_CFG_SWEEP) {
        t0 = al_now_seconds();
        al_papa_mlm_stats ms;
        st = al_papa_mlm_eval(s->model, s->mlm_ids, s->mlm_mask, s->mlm_types, s->mlm_labels, s->mlm_n, s->L,
                              req->batch_size, pol, &s->fp, &ms, err);
        if (!st && ms.n) {
            s->out->mlm_score[c] = -ms.nll_sum / (double)ms.n;
            s->out->mlm_accuracy[c] = (double)ms.correct / (double)ms.n;
            s->out->mlm_tokens = ms.n;
        }
        s->out->seconds_mlm += al_now_seconds() - t0;
    }
    return st;
}

/* Held-out lines for the MLM score: the validation split's inputs (al_papa_mlm_task_examples), at most 500. */
static al_status build_mlm(sweep_ctx *s, al_error *err) {
    if (!s->req->mlm || !al_model_has_mlm_head(s->model)) return AL_OK;
    int n = s->task->n_validation < 500 ? s->task->n_validation : 500;
    if (s->req->max_validation > 0 && n > s->req->max_validation) n = s->req->max_validation;
    al_papa_inputs in;
    al_status st = al_papa_mlm_task_examples(al_model_tokenizer(s->model), s->task, AL_TASK_VALIDATION, n, s->req->layout,
                                             s->L, 4321, &in, err);
    if (st) return st;
    s->mlm_ids = in.ids, s->mlm_mask = in.mask, s->mlm_types = in.type_ids, s->mlm_labels = in.labels;
    s->mlm_n = in.n;
    free(in.group);
    return AL_OK;
}

static void sweep_free(sweep_ctx *s) {
    al_papa_inputs_free(&s->train);
    al_papa_inputs_free(&s->val);
    al_papa_inputs_free(&s->train_rp);
    al_papa_inputs_free(&s->val_rp);
    for (int k = 0; k < AL_N_CONST_KINDS; k++) free(s->kind_constants[k]);
    free(s->policies);
    free(s->mlm_ids), free(s->mlm_mask), free(s->mlm_types), free(s->mlm_labels);
    for (int i = 0; i < AL_PAPA_MAX_SEEDS; i++) al_free_large(s->starts[i].params);
    al_free_large_kept(); /* the probes' blocks, kept between probes, are not held after the sweep */
}

static int needs_right_pad(const al_papa_plan *plan) {
    for (int c = 0; c < plan->n_configs; c++)
        if (plan->configs[c].what == AL_CFG_RIGHT_PAD) return 1;
    return 0;
}

al_status al_papa_sweep_run(al_model *model, const al_task *task, const al_papa_sweep_request *req,
                            al_papa_sweep_result *out, al_error *err) {
    memset(out, 0, sizeof *out);
    const al_config *cfg = al_model_config(model);
    const al_tokenizer *tok = al_model_tokenizer(model);
    if (!tok) return al_err(err, AL_ERR_INVALID, "papa: the model has no tokenizer files (vocab.txt or tokenizer.json)");
    if (req->plan.n_seeds < 1 || req->plan.n_seeds > AL_PAPA_MAX_SEEDS)
        return al_err(err, AL_ERR_INVALID, "papa: field 'seeds' must list 1 to %d seeds", AL_PAPA_MAX_SEEDS);
    if (req->L < 4 || req->L > cfg->max_position_embeddings - cfg->position_offset)
        return al_err(err, AL_ERR_INVALID, "papa: field 'L' = %d must be in [4, %d] for this model", req->L,
                      cfg->max_position_embeddings - cfg->position_offset);
    sweep_ctx s;
    memset(&s, 0, sizeof s);
    s.model = model, s.task = task, s.req = req, s.out = out;
    s.NL = cfg->n_layers, s.H = cfg->n_heads, s.L = req->L;
    s.fp = al_forward_default_params();
    s.fp.cancel = req->cancel;
    s.fp.progress = req->progress || req->plan_progress ? relay : NULL;
    s.fp.progress_user = &s;
    s.fp.pool = req->pool;
    /* the layout's padding is never read by a real token: features, MLM scores and averages skip it
     * (docs/head_policies.md, "Skipping padding"; the ranking trains through its own passes) */
    s.fp.skip_pads = 1;
    s.fp.pad_rows = req->pad_rows;
    al_papa_plan_request pr = req->plan;
    pr.n_layers = s.NL;
    pr.n_heads = s.H;
    if (pr.n_k == 0) pr.n_k = al_papa_k_from_fractions(req->fractions, req->n_fractions, s.NL, s.H, pr.k);
    al_status st = al_papa_plan_build(&pr, &out->plan, err);
    /* before any pass: a family the training code does not compute cannot learn lambdas (docs/families.md) */
    if (!st && !req->theta && uses_lambda(&out->plan, s.NL * s.H))
        st = al_train_check_family(model, "lambda ranking", "; use orders random", err);
    const int n_cfg = out->plan.n_configs;
    for (int c = 0; !st && c < n_cfg; c++) s.n_steps += al_papa_plan_in_shard(c, req->shard_index, req->n_shards);
    if (!st) {
        out->runs = calloc((size_t)n_cfg * req->plan.n_seeds, sizeof *out->runs);
        out->mlm_score = malloc(sizeof(double) * (size_t)n_cfg);
        out->mlm_accuracy = malloc(sizeof(double) * (size_t)n_cfg);
        s.policies = malloc(sizeof *s.policies * (size_t)s.NL * s.H);
        if (!out->runs || !out->mlm_score || !out->mlm_accuracy || !s.policies) st = al_err(err, AL_ERR_OOM, "papa: out of memory");
        for (int c = 0; !st && c < n_cfg; c++) out->mlm_score[c] = out->mlm_accuracy[c] = NAN;
    }
    report(&s, "inputs", 0.0);
    if (!st) st = al_papa_inputs_build(tok, task, AL_TASK_TRAIN, req->max_train, req->layout, s.L, &s.train, err);
    if (!st) st = al_papa_inputs_build(tok, task, AL_TASK_VALIDATION, req->max_validation, req->layout, s.L, &s.val, err);
    if (!st && needs_right_pad(&out->plan)) {
        st = al_papa_inputs_build(tok, task, AL_TASK_TRAIN, req->max_train, AL_LAYOUT_RIGHT_PAD, s.L, &s.train_rp, err);
        if (!st) st = al_papa_inputs_build(tok, task, AL_TASK_VALIDATION, req->max_validation, AL_LAYOUT_RIGHT_PAD, s.L, &s.val_rp, err);
    }
    if (!st) {
        out->n_train = s.train.n, out->n_validation = s.val.n;
        out->truncated_train = s.train.n_truncated, out->truncated_validation = s.val.n_truncated;
        st = build_constants(&s, err);
    }
    if (!st) st = build_orders(&s, err);
    if (!st) st = build_mlm(&s, err);
    for (int c = 0; c < n_cfg && !st; c++) {
        if (!al_papa_plan_in_shard(c, req->shard_index, req->n_shards)) continue;
        if (req->cancel && *req->cancel) st = al_err(err, AL_ERR_CANCELLED, "papa: cancelled");
        s.step++;
        if (!st) st = run_config(&s, c, err);
        report(&s, "sweep", (double)(c + 1) / n_cfg);
    }
    sweep_free(&s);
    if (st) al_papa_sweep_result_free(out);
    return st;
}
