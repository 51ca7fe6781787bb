/* papa_lm.c: the PAPA sweep on a causal language model (papa_lm.h, docs/papa.md "Causal language models"). The
 * configurations are the encoder sweep's (papa_plan.c: kinds x orders x k, the full model and every head constant
 * listed once) and the heads of one are made constant by the same al_papa_policies; each is scored by
 * al_lm_corpus_score on the held-out corpus, the model's own next-token loss, instead of by probes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/clock.h"
#include "../../core/error.h"
#include "../../train/train.h"
#include "../measures/head_importance.h"
#include "papa_lm.h"

#define LN2 0.69314718055994530942

void al_papa_lm_result_free(al_papa_lm_result *r) {
    free(r->ran), free(r->summary), free(r->doc_bits), free(r->pos_bits), free(r->doc_tokens), free(r->pos_tokens);
    free(r->orders), free(r->importance), free(r->constants), free(r->theta);
    memset(r, 0, sizeof *r);
}

typedef struct lm_sweep {
    al_model *model;
    const al_papa_sweep_request *q;
    al_papa_lm_result *out;
    int NL, H, W;
    int step, n_steps;
} lm_sweep;

static void report(const lm_sweep *s, const char *stage, double fraction) {
    const al_papa_sweep_request *q = s->q;
    if (q->plan_progress) q->plan_progress(q->progress_user, stage, fraction, s->step, s->n_steps);
    else if (q->progress) q->progress(q->progress_user, stage, fraction);
}

static void relay(void *user, const char *stage, double fraction) { report(user, stage, fraction); }

al_status al_papa_lm_importance(al_model *model, const al_lm_corpus *c, int max_examples, const al_forward_params *fp,
                                al_head_importance *out, al_error *err) {
    int n = c->n_windows;
    if (max_examples > 0 && n > max_examples) n = max_examples;
    if (n < 1) return al_err(err, AL_ERR_INVALID, "papa: order 'gradient' needs a window of text to measure on");
    al_papa_inputs in;
    memset(&in, 0, sizeof in);
    in.n = n;
    in.L = c->window;
    in.ids = c->ids; /* read only */
    in.mask = malloc(sizeof(int32_t) * (size_t)n * c->window);
    in.type_ids = calloc((size_t)n * c->window, sizeof(int32_t)); /* the measure offsets it per example */
    if (!in.mask || !in.type_ids) {
        free(in.mask), free(in.type_ids);
        return al_err(err, AL_ERR_OOM, "papa: out of memory");
    }
    for (int w = 0; w < n; w++)
        for (int i = 0; i < c->window; i++) in.mask[(size_t)w * c->window + i] = i < c->len[w];
    al_status st = al_head_importance_measure(model, &in, AL_IMPORTANCE_LM, NULL, fp, out, err);
    free(in.mask), free(in.type_ids);
    return st;
}

/* The gradient order's importance (al_papa_lm_importance) over the first importance_examples windows of the
 * averaged text. */
static al_status measure_importance(lm_sweep *s, const al_lm_corpus *c, const al_forward_params *fp, al_error *err) {
    al_head_importance hi;
    al_forward_params p = *fp;
    p.progress = relay;
    p.progress_user = s;
    al_status st = al_papa_lm_importance(s->model, c, s->q->importance_examples, &p, &hi, err);
    if (st) return st;
    const int nh = s->NL * s->H;
    s->out->importance = malloc(sizeof(double) * (size_t)nh);
    if (!s->out->importance) st = al_err(err, AL_ERR_OOM, "papa: out of memory");
    else memcpy(s->out->importance, hi.normalized, sizeof(double) * (size_t)nh);
    al_head_importance_free(&hi);
    return st;
}

static int uses_lambda(const al_papa_plan *plan, int n_total) {
    return al_papa_plan_uses_order(plan, n_total, AL_ORDER_LAMBDA) ||
           al_papa_plan_uses_order(plan, n_total, AL_ORDER_REVERSED_LAMBDA);
}

/* The mean next-token loss (nats) over the first n windows of c, every head MIX with its constant at
 * lambda = sigmoid(theta) (theta NULL: 0.5), eval mode: the ranking's loss before and after it learns. */
static al_status mixed_loss(lm_sweep *s, const al_lm_corpus *c, int n, const float *C, const float *theta,
                            const al_forward_params *fp, double *nats, al_error *err) {
    const int nh = s->NL * s->H;
    al_head_policy *pol = calloc((size_t)nh, sizeof *pol);
    if (!pol) return al_err(err, AL_ERR_OOM, "papa: out of memory");
    for (int i = 0; i < nh; i++) {
        pol[i].mode = AL_HEAD_MIX;
        pol[i].lambda = theta ? (float)(1.0 / (1.0 + exp(-(double)theta[i]))) : 0.5f;
        pol[i].constant = C + (size_t)i * s->W * s->W;
    }
    al_lm_corpus first = *c; /* the windows trained on */
    first.n_windows = n;
    al_lm_corpus_loss loss = {0};
    al_forward_params p = *fp;
    p.policies = pol;
    al_status st = al_lm_corpus_loss_new(&first, &loss, err);
    if (!st) st = al_lm_corpus_score(s->model, &first, &p, 8, &loss, err);
    if (!st) *nats = loss.summary.nats;
    al_lm_corpus_loss_free(&loss);
    free(pol);
    return st;
}

/* Order lambda's logits: al_papa_lm_rank on the averaged text's windows with its average constants, and the mixed
 * model's loss on those windows before and after. */
static al_status learn_lambda(lm_sweep *s, const al_lm_corpus *averaged, const float *C, const al_forward_params *fp,
                              al_error *err) {
    al_papa_lm_result *out = s->out;
    const al_papa_rank_settings *rs = &s->q->rank;
    const double t0 = al_now_seconds();
    out->theta = malloc(sizeof(float) * (size_t)s->NL * s->H);
    if (!out->theta) return al_err(err, AL_ERR_OOM, "papa: out of memory");
    out->rank_windows = averaged->n_windows;
    if (rs->max_examples > 0 && out->rank_windows > rs->max_examples) out->rank_windows = rs->max_examples;
    al_forward_params p = *fp;
    p.progress = relay;
    p.progress_user = s;
    al_status st = al_papa_lm_rank(s->model, averaged, C, rs, &p, out->theta, &out->rank_loss, &out->rank_batch, err);
    if (!st) st = mixed_loss(s, averaged, out->rank_windows, C, NULL, fp, &out->rank_before, err);
    if (!st) st = mixed_loss(s, averaged, out->rank_windows, C, out->theta, fp, &out->rank_after, err);
    out->seconds_rank = al_now_seconds() - t0;
    return st;
}

static al_status build_orders(lm_sweep *s, const al_lm_corpus *averaged, const float *C_average,
                              const al_forward_params *fp, al_error *err) {
    const int n = s->NL * s->H;
    al_papa_lm_result *out = s->out;
    out->orders = malloc(sizeof(int) * AL_N_ORDERS * (size_t)n);
    if (!out->orders) return al_err(err, AL_ERR_OOM, "papa: out of memory");
    al_status st = AL_OK;
    float *scores = NULL;
    if (al_papa_plan_uses_order(&out->plan, n, AL_ORDER_GRADIENT)) {
        const double t0 = al_now_seconds();
        scores = malloc(sizeof(float) * (size_t)n);
        st = scores ? measure_importance(s, averaged, fp, err) : al_err(err, AL_ERR_OOM, "papa: out of memory");
        for (int i = 0; !st && i < n; i++) scores[i] = (float)out->importance[i];
        out->seconds_importance = al_now_seconds() - t0;
    }
    if (!st && uses_lambda(&out->plan, n)) st = learn_lambda(s, averaged, C_average, fp, err);
    if (!st) st = al_papa_all_orders(s->NL, s->H, out->theta, scores, s->q->rank.seed, out->orders, err);
    free(scores);
    return st;
}

/* Every constant kind the plan uses, [NL, H, W, W] each (NULL where unused; zeros needs none). */
static al_status build_kinds(lm_sweep *s, const al_lm_corpus *averaged, const al_forward_params *fp,
                             float *kinds[AL_N_CONST_KINDS], al_error *err) {
    const size_t per_head = (size_t)s->W * s->W, n_c = (size_t)s->NL * s->H * per_head;
    al_status st = AL_OK;
    const int lambda = uses_lambda(&s->out->plan, s->NL * s->H); /* lambda mixes every head with its average */
    for (int c = -lambda; !st && c < s->out->plan.n_configs; c++) {
        const al_papa_config average = {.what = AL_CFG_SWEEP, .k = 1, .constant = AL_CONST_AVERAGE};
        const al_papa_config *x = c < 0 ? &average : &s->out->plan.configs[c];
        if (x->what != AL_CFG_SWEEP || x->k == 0 || x->constant == AL_CONST_ZEROS || kinds[x->constant]) continue;
        float *C = kinds[x->constant] = malloc(n_c * sizeof *C);
        if (!C) return al_err(err, AL_ERR_OOM, "papa: out of memory for the constants [%d, %d, %d, %d]", s->NL, s->H,
                              s->W, s->W);
        if (x->constant != AL_CONST_AVERAGE) {
            for (int lh = 0; !st && lh < s->NL * s->H; lh++)
                st = al_papa_data_free(x->constant, s->W, C + (size_t)lh * per_head, err);
        } else if (s->q->constants) {
            memcpy(C, s->q->constants, n_c * sizeof *C);
        } else {
            const double t0 = al_now_seconds();
            al_forward_params p = *fp;
            p.progress = relay;
            p.progress_user = s;
            st = al_papa_causal_constants(s->model, averaged, s->out->min_windows_used, s->q->batch_size, &p, C,
                                          &s->out->rows_filled, err);
            s->out->seconds_constants = al_now_seconds() - t0;
        }
        if (!st && x->constant == AL_CONST_AVERAGE) {
            s->out->averaged = 1;
            s->out->constants = malloc(n_c * sizeof(float));
            if (!s->out->constants) return al_err(err, AL_ERR_OOM, "papa: out of memory");
            memcpy(s->out->constants, C, n_c * sizeof(float));
        }
    }
    return st;
}

al_status al_papa_lm_result_alloc(al_papa_lm_result *r, int D, int W, al_error *err) {
    const int nc = r->plan.n_configs;
    r->n_docs = D;
    r->window = W;
    r->ran = calloc((size_t)nc, sizeof(int));
    r->summary = calloc((size_t)nc, sizeof(al_lm_summary));
    r->doc_bits = malloc(sizeof(double) * (size_t)nc * (D ? D : 1));
    r->pos_bits = malloc(sizeof(double) * (size_t)nc * W);
    r->doc_tokens = calloc((size_t)D + 1, sizeof(long long));
    r->pos_tokens = calloc((size_t)W, sizeof(long long));
    if (!r->ran || !r->summary || !r->doc_bits || !r->pos_bits || !r->doc_tokens || !r->pos_tokens)
        return al_err(err, AL_ERR_OOM, "papa: out of memory for the results");
    for (size_t e = 0; e < (size_t)nc * D; e++) r->doc_bits[e] = NAN;
    for (size_t e = 0; e < (size_t)nc * W; e++) r->pos_bits[e] = NAN;
    return AL_OK;
}

al_status al_papa_lm_run(al_model *model, const al_lm_corpus *scored, const al_lm_corpus *averaged,
                         const al_papa_sweep_request *q, int min_windows, al_papa_lm_result *out, al_error *err) {
    memset(out, 0, sizeof *out);
    const al_config *cfg = al_model_config(model);
    lm_sweep s = {model, q, out, cfg->n_layers, cfg->n_heads, scored->window, 0, 0};
    const int n_total = s.NL * s.H;
    out->min_windows_used = min_windows;
    al_papa_plan_request pr = q->plan;
    pr.causal = 1;
    pr.n_layers = s.NL;
    pr.n_heads = s.H;
    pr.n_seeds = 1; /* one score per configuration: the interval is over documents */
    if (pr.n_k == 0) pr.n_k = al_papa_k_from_fractions(q->fractions, q->n_fractions, s.NL, s.H, pr.k);
    al_status st = al_papa_plan_build(&pr, &out->plan, err);
    if (!st && al_papa_plan_uses_order(&out->plan, n_total, AL_ORDER_GRADIENT))
        st = al_train_check_family(model, "request: field 'orders': 'gradient' (the language-model loss's head "
                                   "importance)", "; the other orders run", err);
    const int need_lambda = !st && uses_lambda(&out->plan, n_total);
    if (need_lambda) st = al_train_check_family(model, AL_PAPA_LM_LAMBDA_WHAT, AL_PAPA_LM_LAMBDA_INSTEAD, err);
    const int need_avg = !st && al_papa_plan_uses_average(&out->plan) && !q->constants;
    const int need_grad = !st && al_papa_plan_uses_order(&out->plan, n_total, AL_ORDER_GRADIENT);
    if ((need_avg || need_grad || need_lambda) && !st && (!averaged || averaged->n_windows < 1))
        st = al_err(err, AL_ERR_INVALID, "request: field 'constants_corpus': the %s needs a text to average over "
                    "(a window of 2 tokens or more)", need_avg ? "average constant" : need_grad ? "gradient order"
                    : "lambda order");
    if (!st && q->mem_limit) { /* one [NL, H, L, L] matrix per kind used, and the averaging pass's attention */
        int n_kinds = 1 + (uses_lambda(&out->plan, n_total) && !al_papa_plan_uses_average(&out->plan));
        for (int k = 0; k < AL_N_CONST_KINDS; k++)
            for (int c = 0; c < out->plan.n_configs; c++)
                if (out->plan.configs[c].k > 0 && (int)out->plan.configs[c].constant == k && k != AL_CONST_ZEROS) {
                    n_kinds++;
                    break;
                }
        const double mb = (double)n_kinds * n_total * s.W * s.W * sizeof(float) / (1 << 20);
        if (mb > (double)(q->mem_limit >> 20))
            st = al_err(err, AL_ERR_OOM, "request: field 'L': %d constant kinds of [%d, %d, %d, %d] take %.0f MB, more "
                        "than memory_mb = %zu (lower L or the kinds, or raise memory_mb)", n_kinds, s.NL, s.H, s.W, s.W,
                        mb, q->mem_limit >> 20);
    }
    if (!st) st = al_papa_lm_result_alloc(out, scored->n_docs, scored->window, err);
    out->n_windows = scored->n_windows;
    if (st) return st;
    for (int c = 0; c < out->plan.n_configs; c++)
        if (al_papa_plan_in_shard(c, q->shard_index, q->n_shards)) s.n_steps++;
    al_forward_params fp = al_forward_default_params();
    fp.pool = q->pool;
    fp.cancel = q->cancel;
    float *kinds[AL_N_CONST_KINDS] = {0};
    al_head_policy *policies = malloc(sizeof(al_head_policy) * (size_t)n_total);
    if (!policies) st = al_err(err, AL_ERR_OOM, "papa: out of memory");
    if (!st) st = build_kinds(&s, averaged, &fp, kinds, err);
    if (!st) st = build_orders(&s, averaged, kinds[AL_CONST_AVERAGE], &fp, err);
    al_lm_corpus_loss loss = {0};
    if (!st) st = al_lm_corpus_loss_new(scored, &loss, err);
    const double t0 = al_now_seconds();
    for (int c = 0; !st && c < out->plan.n_configs; c++) {
        if (!al_papa_plan_in_shard(c, q->shard_index, q->n_shards)) continue;
        const al_papa_config *x = &out->plan.configs[c];
        s.step++;
        al_forward_params p = fp;
        p.progress = relay;
        p.progress_user = &s;
        if (x->k > 0) {
            al_papa_policies(out->orders + (size_t)x->order * n_total, x->k, s.NL, s.H, kinds[x->constant], s.W,
                             x->constant == AL_CONST_ZEROS, policies);
            p.policies = policies;
        }
        st = al_lm_corpus_score(model, scored, &p, 8, &loss, err);
        if (st) break;
        out->ran[c] = 1;
        out->summary[c] = loss.summary;
        for (int d = 0; d < scored->n_docs; d++) {
            out->doc_tokens[d] = loss.doc_tokens[d];
            if (loss.doc_tokens[d]) out->doc_bits[(size_t)c * scored->n_docs + d] = loss.doc_nll[d] / (double)loss.doc_tokens[d] / LN2;
        }
        for (int i = 0; i < s.W; i++) {
            out->pos_tokens[i] = loss.pos_tokens[i];
            if (loss.pos_tokens[i]) out->pos_bits[(size_t)c * s.W + i] = loss.pos_nll[i] / (double)loss.pos_tokens[i] / LN2;
        }
        report(&s, "sweep", 1.0);
    }
    out->seconds_score = al_now_seconds() - t0;
    out->constants_windows = averaged ? averaged->n_windows : 0;
    out->constants_docs = averaged ? averaged->n_docs : 0;
    al_lm_corpus_loss_free(&loss);
    for (int k = 0; k < AL_N_CONST_KINDS; k++) free(kinds[k]);
    free(policies);
    return st;
}
