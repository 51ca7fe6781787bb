/* papa_lm_shard.c: the exact numbers a shard of a language model's papa sweep carries ("lm_shard", papa_lm_reply.h)
 * and papa_merge's reading of them back into one result (docs/papa-op.md, "A causal language model"). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "papa_lm_reply.h"

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
