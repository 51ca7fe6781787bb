/* papa_lm_reply.c: a language model's papa reply from its result (papa_lm_reply.h), for the papa op and papa_merge,
 * and the shard's exact numbers papa_merge rebuilds it from. */
#include <float.h>
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

/* A double as a string of 17 significant digits, which reads back as the same double whatever prints the JSON in
 * between (cJSON prints 15 digits when they read back within an epsilon, dropping the last bits); null when not
 * finite. */
static cJSON *exact_or_null(double v) {
    if (!isfinite(v)) return cJSON_CreateNull();
    char text[40];
    snprintf(text, sizeof text, "%.17g", v);
    return cJSON_CreateString(text);
}

al_status al_papa_lm_reply_shard(al_reply_builder *rb, const al_papa_lm_result *r, al_error *err) {
    cJSON *sh = al_rb_add(rb, rb->root, "lm_shard", cJSON_CreateObject());
    cJSON *dt = al_rb_add(rb, sh, "doc_tokens", cJSON_CreateArray());
    for (int d = 0; dt && d < r->n_docs; d++) al_rb_add(rb, dt, NULL, cJSON_CreateNumber((double)r->doc_tokens[d]));
    if (r->theta) {
        cJSON *rn = al_rb_add(rb, sh, "ranking_nats", cJSON_CreateArray());
        al_rb_add(rb, rn, NULL, exact_or_null(r->rank_before));
        al_rb_add(rb, rn, NULL, exact_or_null(r->rank_after));
    }
    cJSON *cfgs = al_rb_add(rb, sh, "configs", cJSON_CreateArray());
    for (int c = 0; cfgs && c < r->plan.n_configs; c++) {
        if (!r->ran[c]) continue;
        const al_lm_summary *s = &r->summary[c];
        cJSON *o = al_rb_add(rb, cfgs, NULL, cJSON_CreateObject());
        al_rb_num(rb, o, "config", c);
        al_rb_add(rb, o, "nats", exact_or_null(s->nats));
        al_rb_add(rb, o, "lo", exact_or_null(s->lo));
        al_rb_add(rb, o, "hi", exact_or_null(s->hi));
        al_rb_num(rb, o, "documents", s->documents);
        al_rb_num(rb, o, "tokens", (double)s->tokens);
        cJSON *db = al_rb_add(rb, o, "doc_bits", cJSON_CreateArray());
        for (int d = 0; db && d < r->n_docs; d++) al_rb_add(rb, db, NULL, exact_or_null(r->doc_bits[(size_t)c * r->n_docs + d]));
        cJSON *pb = al_rb_add(rb, o, "pos_bits", cJSON_CreateArray());
        for (int i = 0; pb && i < r->window; i++) al_rb_add(rb, pb, NULL, exact_or_null(r->pos_bits[(size_t)c * r->window + i]));
    }
    return rb->oom ? al_err(err, AL_ERR_OOM, "papa: out of memory for the reply") : AL_OK;
}

/* --------------------------------------------------------------- papa_merge's side */

static const cJSON *get(const cJSON *o, const char *key) { return cJSON_GetObjectItemCaseSensitive(o, key); }

/* exact_or_null's string as its double (a number is taken as it is), NAN for null; *bad set for anything else. */
static double num_or_nan(const cJSON *v, int *bad) {
    if (cJSON_IsNumber(v)) return v->valuedouble;
    if (cJSON_IsString(v)) {
        char *end = NULL;
        const double d = strtod(v->valuestring, &end);
        if (end != v->valuestring && !*end && isfinite(d)) return d;
    }
    if (!cJSON_IsNull(v)) *bad = 1;
    return NAN;
}

/* A whole count in [0, 2^53]. */
static int count_of(const cJSON *v, long long *out) {
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0 && v->valuedouble <= 9007199254740992.0) ||
        v->valuedouble != floor(v->valuedouble))
        return 0;
    *out = (long long)v->valuedouble;
    return 1;
}

/* n numbers (null: NAN) of list into out. */
static int read_doubles(const cJSON *list, int n, double *out) {
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) != n) return 0;
    int i = 0, bad = 0;
    for (const cJSON *v = list->child; v; v = v->next) out[i++] = num_or_nan(v, &bad);
    return !bad;
}

static int read_counts(const cJSON *list, int n, long long *out) {
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) != n) return 0;
    int i = 0;
    for (const cJSON *v = list->child; v; v = v->next)
        if (!count_of(v, &out[i++])) return 0;
    return 1;
}

static int int_field(const cJSON *o, const char *key, int *out) {
    long long v;
    if (!count_of(get(o, key), &v) || v > 1 << 30) return 0;
    *out = (int)v;
    return 1;
}

/* The numbers every part shares (they come from the whole corpus and the whole ranking): part 0's. */
static al_status read_shared(const cJSON *part, const cJSON *sh, int NL, int H, al_papa_lm_result *r, al_error *err) {
    const int D = r->n_docs, W = r->window, n = NL * H;
    const cJSON *corpus = get(part, "corpus");
    if (!read_counts(get(sh, "doc_tokens"), D, r->doc_tokens))
        return al_err(err, AL_ERR_INVALID, "request: field 'parts[0].lm_shard.doc_tokens' must be %d token counts", D);
    if (!read_counts(get(corpus, "tokens_by_position"), W, r->pos_tokens) || !int_field(corpus, "windows", &r->n_windows))
        return al_err(err, AL_ERR_INVALID, "request: field 'parts[0].corpus' must give 'windows' and %d "
                      "'tokens_by_position'", W);
    const cJSON *cc = get(part, "constants");
    if (cc) {
        r->averaged = 1;
        if (!int_field(cc, "documents", &r->constants_docs) || !int_field(cc, "windows", &r->constants_windows) ||
            !int_field(cc, "rows_uniform_prefix", &r->rows_filled))
            return al_err(err, AL_ERR_INVALID, "request: field 'parts[0].constants' must give 'documents', 'windows' "
                          "and 'rows_uniform_prefix'");
    }
    r->orders = malloc(sizeof(int) * AL_N_ORDERS * (size_t)n);
    if (!r->orders) return al_err(err, AL_ERR_OOM, "papa_merge: out of memory");
    const cJSON *orders = get(part, "orders");
    for (int o = 0; o < AL_N_ORDERS; o++) {
        const cJSON *list = get(orders, al_papa_order_name((al_papa_order)o));
        for (int i = 0; i < n; i++) {
            const cJSON *pair = list ? cJSON_GetArrayItem(list, i) : NULL;
            long long l = -1, h = -1;
            const int ok = count_of(cJSON_GetArrayItem(pair, 0), &l) && count_of(cJSON_GetArrayItem(pair, 1), &h) &&
                           l < NL && h < H;
            r->orders[(size_t)o * n + i] = ok ? (int)(l * H + h) : -1;
        }
    }
    const cJSON *imp = get(part, "importance");
    if (imp) {
        r->importance = malloc(sizeof(double) * (size_t)n);
        if (!r->importance) return al_err(err, AL_ERR_OOM, "papa_merge: out of memory");
        if (!read_doubles(imp, n, r->importance))
            return al_err(err, AL_ERR_INVALID, "request: field 'parts[0].importance' must be %d numbers", n);
    }
    const cJSON *theta = get(part, "theta");
    if (theta) {
        double rn[2];
        r->theta = malloc(sizeof(float) * (size_t)n);
        if (!r->theta) return al_err(err, AL_ERR_OOM, "papa_merge: out of memory");
        double *t = malloc(sizeof(double) * (size_t)n);
        const int ok = t && read_doubles(theta, n, t); /* floats: any printing reads them back */
        for (int i = 0; ok && i < n; i++) r->theta[i] = fabs(t[i]) <= FLT_MAX ? (float)t[i] : 0.0f;
        free(t);
        if (!ok) return al_err(err, AL_ERR_INVALID, "request: field 'parts[0].theta' must be %d float32 numbers", n);
        const cJSON *rk = get(part, "ranking");
        if (!read_doubles(get(sh, "ranking_nats"), 2, rn) || !cJSON_IsNumber(get(part, "ranking_loss")) ||
            !int_field(rk, "windows", &r->rank_windows))
            return al_err(err, AL_ERR_INVALID, "request: field 'parts[0]': a lambda order's 'ranking_loss', "
                          "'ranking.windows' and 'lm_shard.ranking_nats' are needed");
        r->rank_before = rn[0];
        r->rank_after = rn[1];
        r->rank_loss = get(part, "ranking_loss")->valuedouble;
    }
    return AL_OK;
}

al_status al_papa_lm_read_shard(const cJSON *part, int index, int first, int NL, int H, al_papa_lm_result *r,
                                al_error *err) {
    const cJSON *sh = get(part, "lm_shard");
    if (!cJSON_IsObject(sh))
        return al_err(err, AL_ERR_INVALID, "request: field 'parts[%d].lm_shard' is missing: a language model's sweep "
                      "merges from its shards' replies (run with 'shard'), not from a whole or merged reply", index);
    al_status st = first ? read_shared(part, sh, NL, H, r, err) : AL_OK;
    const int D = r->n_docs, W = r->window;
    const cJSON *cfgs = get(sh, "configs");
    if (!st && !cJSON_IsArray(cfgs))
        st = al_err(err, AL_ERR_INVALID, "request: field 'parts[%d].lm_shard.configs' must be a list", index);
    for (const cJSON *o = st ? NULL : cfgs->child; o && !st; o = o->next) {
        int c = -1, bad = 0;
        long long tokens = 0;
        if (!int_field(o, "config", &c) || c >= r->plan.n_configs) {
            st = al_err(err, AL_ERR_INVALID, "request: field 'parts[%d].lm_shard.configs' names a configuration "
                        "outside the sweep's %d", index, r->plan.n_configs);
            break;
        }
        if (r->ran[c]) {
            st = al_err(err, AL_ERR_INVALID, "request: field 'parts': configuration %d appears in two parts", c);
            break;
        }
        al_lm_summary *s = &r->summary[c];
        s->nats = num_or_nan(get(o, "nats"), &bad);
        s->lo = num_or_nan(get(o, "lo"), &bad);
        s->hi = num_or_nan(get(o, "hi"), &bad);
        bad |= !int_field(o, "documents", &s->documents) || !count_of(get(o, "tokens"), &tokens);
        s->tokens = tokens;
        bad |= !read_doubles(get(o, "doc_bits"), D, r->doc_bits + (size_t)c * D);
        bad |= !read_doubles(get(o, "pos_bits"), W, r->pos_bits + (size_t)c * W);
        if (bad)
            st = al_err(err, AL_ERR_INVALID, "request: field 'parts[%d].lm_shard.configs' entry of configuration %d "
                        "must give nats, lo, hi, documents, tokens, %d doc_bits and %d pos_bits", index, c, D, W);
        r->ran[c] = 1;
    }
    return st;
}
