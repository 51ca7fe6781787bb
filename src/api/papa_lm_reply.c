/* papa_lm_reply.c: a language model's papa reply from its result (papa_lm_reply.h), for the papa op and papa_merge
 * (the shards' exact numbers it merges from: papa_lm_shard.c). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/det_math.h"
#include "../core/error.h"
#include "../methods/measures/agreement_finding.h"
#include "../methods/papa/papa_findings.h"
#include "op_heads.h"
#include "papa_lm_reply.h"
#include "papa_reply.h"
#include "reply_digest.h"

#define LN2 0.69314718055994530942
#define SCORE_NAME "bits per token"

static cJSON *bits_or_null(double nats) { return isfinite(nats) ? cJSON_CreateNumber(al_json_canonical(nats / LN2)) : cJSON_CreateNull(); }

/* Order lambda's learned weights, as the encoder's reply gives them ("lambdas" [NL][H], "ranking_loss", "theta"), and
 * "ranking": the windows trained on, the mixed model's loss there before and after (bits per token), and whether
 * lambda moved (docs/findings.md: its span over the heads against AL_FINDING_LAMBDA_FLOOR). */
double al_papa_lm_lambda_range(const al_papa_lm_result *r, int n_heads) {
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; r->theta && i < n_heads; i++) {
        const double v = al_heads_lambda(r->theta[i]);
        lo = v < lo ? v : lo, hi = v > hi ? v : hi;
    }
    return r->theta ? hi - lo : NAN;
}

static void put_lambdas(al_reply_builder *rb, const al_papa_lm_result *r, int NL, int H) {
    cJSON *lam = al_rb_add(rb, rb->root, "lambdas", cJSON_CreateArray());
    for (int l = 0; l < NL; l++) {
        cJSON *row = lam ? al_rb_add(rb, lam, NULL, cJSON_CreateArray()) : NULL;
        for (int h = 0; row && h < H; h++) al_rb_add(rb, row, NULL, cJSON_CreateNumber(al_heads_lambda(r->theta[l * H + h])));
    }
    const double range = al_papa_lm_lambda_range(r, NL * H);
    al_rb_num(rb, rb->root, "ranking_loss", r->rank_loss);
    cJSON *th = al_rb_add(rb, rb->root, "theta", cJSON_CreateArray());
    for (int i = 0; th && i < NL * H; i++) al_rb_add(rb, th, NULL, cJSON_CreateNumber(r->theta[i]));
    cJSON *rk = al_rb_add(rb, rb->root, "ranking", cJSON_CreateObject());
    al_rb_str(rb, rk, "loss", "next-token cross-entropy on the constants corpus's windows, the model frozen");
    al_rb_num(rb, rk, "windows", r->rank_windows);
    al_rb_num(rb, rk, "bits_before", al_json_canonical(r->rank_before / LN2));
    al_rb_num(rb, rk, "bits_after", al_json_canonical(r->rank_after / LN2));
    cJSON *mv = al_rb_add(rb, rk, "lambda", cJSON_CreateObject());
    al_rb_num(rb, mv, "range", al_json_canonical(range));
    al_rb_num(rb, mv, "floor", AL_FINDING_LAMBDA_FLOOR);
    al_rb_bool(rb, mv, "learned", range >= AL_FINDING_LAMBDA_FLOOR);
}

/* Every number of the reply that a reader compares, canonical, then the digest and the findings. */
static al_status put_results(al_reply_builder *rb, const al_papa_lm_result *r, int NL, int H, al_error *err) {
    const int nc = r->plan.n_configs, D = r->n_docs, W = r->window, n_total = NL * H;
    al_papa_config_summary *cs = calloc((size_t)nc, sizeof *cs);
    double *scores = malloc(sizeof(double) * (size_t)nc * (D ? D : 1));
    if (!cs || !scores) {
        free(cs), free(scores);
        return al_err(err, AL_ERR_OOM, "papa: out of memory for the summary");
    }
    int full = -1, docs_with_tokens = 0;
    for (int d = 0; d < D; d++) docs_with_tokens += r->doc_tokens[d] > 0;
    for (int c = 0; c < nc; c++) {
        const al_lm_summary *s = &r->summary[c];
        cs[c].has = r->ran[c];
        cs[c].mean = al_json_canonical(s->nats / LN2);
        cs[c].ci95 = s->documents >= 2 && isfinite(s->lo) ? al_json_canonical((s->hi - s->lo) / 2.0 / LN2) : NAN;
        for (int d = 0; d < D; d++) scores[(size_t)c * D + d] = al_json_canonical(r->doc_bits[(size_t)c * D + d]);
        if (r->ran[c] && r->plan.configs[c].k == 0 && full < 0) full = c;
    }
    cJSON *cfgs = al_rb_add(rb, rb->root, "configs", cJSON_CreateArray());
    for (int c = 0; cfgs && c < nc; c++) {
        cJSON *o = al_papa_reply_config_entry(rb, cfgs, &r->plan.configs[c], n_total);
        if (!o || !r->ran[c]) continue;
        const al_lm_summary *s = &r->summary[c];
        al_rb_num(rb, o, "perplexity", al_json_canonical(al_det_exp(s->nats)));
        if (s->documents >= 2 && isfinite(s->lo)) {
            cJSON *pi = al_rb_add(rb, o, "perplexity_ci95", cJSON_CreateArray());
            al_rb_add(rb, pi, NULL, cJSON_CreateNumber(al_json_canonical(al_det_exp(s->lo))));
            al_rb_add(rb, pi, NULL, cJSON_CreateNumber(al_json_canonical(al_det_exp(s->hi))));
        }
        cJSON *pos = al_rb_add(rb, o, "bits_by_position", cJSON_CreateArray());
        for (int i = 0; pos && i < W; i++) al_rb_add(rb, pos, NULL, bits_or_null(r->pos_bits[(size_t)c * W + i] * LN2));
    }
    /* one run per configuration (the encoder's runs are one per probe seed): its score in bits per token */
    cJSON *runs = al_rb_add(rb, rb->root, "runs", cJSON_CreateArray());
    for (int c = 0; runs && c < nc; c++) {
        if (!r->ran[c]) continue;
        cJSON *o = al_rb_add(rb, runs, NULL, cJSON_CreateObject());
        al_rb_num(rb, o, "config", c);
        al_rb_num(rb, o, "seed_index", 0);
        al_rb_num(rb, o, "score", cs[c].mean);
    }
    cJSON *sum = al_rb_add(rb, rb->root, "summary", cJSON_CreateArray());
    for (int c = 0; sum && c < nc; c++) {
        if (!r->ran[c]) continue;
        cJSON *o = al_rb_add(rb, sum, NULL, cJSON_CreateObject());
        al_rb_num(rb, o, "config", c);
        al_rb_num(rb, o, "n", r->summary[c].documents);
        al_rb_num(rb, o, "tokens", (double)r->summary[c].tokens);
        al_rb_num(rb, o, "mean", cs[c].mean);
        cJSON_AddItemToObject(o, "ci95", isfinite(cs[c].ci95) ? cJSON_CreateNumber(cs[c].ci95) : cJSON_CreateNull());
        /* the rise of the loss relative to the full model's (positive: the configuration costs) */
        const double rise = full >= 0 ? (cs[c].mean - cs[full].mean) / fabs(cs[full].mean) : NAN;
        cJSON_AddItemToObject(o, "drop", isfinite(rise) ? cJSON_CreateNumber(rise) : cJSON_CreateNull());
        al_papa_paired p = {0, NAN, NAN};
        if (c != full) p = al_papa_paired_of(scores, D, full, c);
        al_papa_reply_paired(rb, o, "paired", &p);
    }
    al_papa_findings_input in = {&r->plan, cs, scores, D, docs_with_tokens, n_total, SCORE_NAME, 1};
    al_papa_findings fd;
    al_papa_findings_of(&in, &fd);
    al_papa_reply_findings(rb, &fd, 0);
    if (r->theta) put_lambdas(rb, r, NL, H);
    al_papa_reply_orders(rb, r->orders, NL, H);
    if (r->importance) {
        cJSON *imp = al_rb_add(rb, rb->root, "importance", cJSON_CreateArray());
        for (int i = 0; imp && i < n_total; i++) al_rb_add(rb, imp, NULL, cJSON_CreateNumber(r->importance[i]));
    }
    /* the digest: every configuration's bits per token, each document's and each position's */
    al_sha256 s;
    char dig[72];
    al_digest_begin(&s);
    for (int c = 0; c < nc; c++) {
        if (!r->ran[c]) continue;
        al_digest_line(&s, "lm %.0f %.17g\n", c, cs[c].mean);
        for (int d = 0; d < D; d++)
            if (isfinite(scores[(size_t)c * D + d])) al_digest_line(&s, "doc %.0f %.17g\n", c * 100000.0 + d, scores[(size_t)c * D + d]);
        for (int i = 0; i < W; i++)
            if (isfinite(r->pos_bits[(size_t)c * W + i]))
                al_digest_line(&s, "pos %.0f %.17g\n", c * 100000.0 + i, al_json_canonical(r->pos_bits[(size_t)c * W + i]));
    }
    for (int i = 0; r->theta && i < n_total; i++) al_digest_line(&s, "theta %.0f %.9g\n", i, r->theta[i]);
    al_digest_end(&s, dig);
    al_rb_str(rb, rb->root, "digest", dig);
    free(cs), free(scores);
    return AL_OK;
}


void al_papa_lm_reply_score(al_reply_builder *rb) {
    cJSON *score = al_rb_add(rb, rb->root, "score", cJSON_CreateObject());
    al_rb_str(rb, score, "name", "bits_per_token");
    al_rb_str(rb, score, "direction", "lower is better");
    al_rb_str(rb, score, "interval", "95%, ratio estimator over documents, Student t");
}

al_status al_papa_lm_reply_results(al_reply_builder *rb, const al_papa_lm_result *r, int NL, int H, al_error *err) {
    al_status st = put_results(rb, r, NL, H, err);
    cJSON *co = al_rb_add(rb, rb->root, "corpus", cJSON_CreateObject());
    al_rb_num(rb, co, "documents", r->n_docs);
    al_rb_num(rb, co, "windows", r->n_windows);
    cJSON *pt = al_rb_add(rb, co, "tokens_by_position", cJSON_CreateArray());
    for (int i = 0; pt && i < r->window; i++) al_rb_add(rb, pt, NULL, cJSON_CreateNumber((double)r->pos_tokens[i]));
    if (r->averaged) {
        cJSON *cc = al_rb_add(rb, rb->root, "constants", cJSON_CreateObject());
        al_rb_num(rb, cc, "documents", r->constants_docs);
        al_rb_num(rb, cc, "windows", r->constants_windows);
        al_rb_num(rb, cc, "rows_uniform_prefix", r->rows_filled);
    }
    return st;
}
