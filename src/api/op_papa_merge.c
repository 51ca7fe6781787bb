/* op_papa_merge.c: the "papa_merge" op, shards back into one sweep (docs/papa-op.md, "Shards on a cluster"): the parts'
 * runs are put in (configuration, seed) order and the reply is rebuilt as the unsharded papa op builds it
 * (papa_reply.h; a language model's sweep: papa_lm_reply.h), so the summaries, findings and digest are those of the
 * whole sweep. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "papa_lm_reply.h"
#include "papa_reply.h"

/* A whole number in [-1e9, 1e9] as an int, else def: a part is a reply attnlab wrote, but the request may hold
 * anything, and casting a double outside int's range is undefined behaviour. */
static int int_value(const cJSON *v, int def) {
    if (!cJSON_IsNumber(v)) return def;
    const double d = v->valuedouble;
    return d >= -1e9 && d <= 1e9 && d == floor(d) ? (int)d : def;
}

static int json_int(const cJSON *o, const char *key, int def) {
    return int_value(cJSON_GetObjectItemCaseSensitive(o, key), def);
}

static double json_num(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static const char *json_text(const cJSON *o, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* The configuration list a part's "configs" describes, as the plan listed it. */
static al_status read_configs(const cJSON *part, al_papa_plan *plan, al_error *err) {
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(part, "configs");
    memset(plan, 0, sizeof *plan);
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) > AL_PAPA_MAX_CONFIGS)
        return al_err(err, AL_ERR_INVALID, "request: field 'parts[0].configs' must be a list of configurations");
    for (const cJSON *o = list->child; o; o = o->next) {
        al_papa_config *c = &plan->configs[plan->n_configs++];
        memset(c, 0, sizeof *c);
        const char *what = json_text(o, "what");
        c->what = !strcmp(what, "right_pad") ? AL_CFG_RIGHT_PAD : !strcmp(what, "embeddings_only") ? AL_CFG_EMBEDDINGS_ONLY : AL_CFG_SWEEP;
        c->k = json_int(o, "k", 0);
        int kind = al_papa_constant_from_name(json_text(o, "constant")), order = al_papa_order_from_name(json_text(o, "order"));
        c->constant = kind < 0 ? AL_CONST_AVERAGE : (al_papa_constant_kind)kind;
        c->order = order < 0 ? AL_ORDER_FIRST_TO_LAST : (al_papa_order)order;
    }
    return AL_OK;
}

/* A part's "config" without its "shard", as text, to check that parts come from one request. */
static char *config_text(const cJSON *part) {
    cJSON *c = cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(part, "config"), 1);
    if (!c) return NULL;
    cJSON_DeleteItemFromObjectCaseSensitive(c, "shard");
    char *t = cJSON_PrintUnformatted(c);
    cJSON_Delete(c);
    return t;
}

/* A part's shard as its reply states it ("i/N"), in *i and *n; 0 when it has none (a whole sweep). */
static int part_shard(const cJSON *part, int *i, int *n) {
    const char *s = json_text(cJSON_GetObjectItemCaseSensitive(part, "config"), "shard");
    char tail;
    return sscanf(s, "%d/%d%c", i, n, &tail) == 2 && *n >= 1 && *n <= 4096 && *i >= 0 && *i < *n;
}

/* What a message says after a part's field name: its shard, when it has one. */
static void shard_note(const cJSON *part, char *out, size_t size) {
    int i, n;
    if (part_shard(part, &i, &n)) snprintf(out, size, " (shard %d/%d)", i, n);
    else out[0] = 0;
}

/* Why a part cannot join parts[0]'s sweep (docs/papa-op.md, "Shards on a cluster"), or NULL: its settings, its
 * model's or its task's content hash differ. */
static const char *part_mismatch(const cJSON *part, const char *cfg0, const cJSON *hashes0) {
    const cJSON *hashes = cJSON_GetObjectItemCaseSensitive(part, "hashes");
    if (strcmp(json_text(hashes, "model"), json_text(hashes0, "model"))) return "its model hash differs from parts[0]'s";
    if (strcmp(json_text(hashes, "task"), json_text(hashes0, "task"))) return "its task hash differs from parts[0]'s";
    /* a language model's sweep: the scored text and the averaged one */
    if (strcmp(json_text(hashes, "corpus"), json_text(hashes0, "corpus"))) return "its corpus hash differs from parts[0]'s";
    if (strcmp(json_text(hashes, "constants_corpus"), json_text(hashes0, "constants_corpus")))
        return "its constants_corpus hash differs from parts[0]'s";
    char *cfg = config_text(part);
    const int same = cfg && cfg0 && !strcmp(cfg, cfg0);
    free(cfg);
    return same ? NULL : "its settings ('config') differ from parts[0]'s";
}

/* Parts that are shards must be every shard of one sweep, each once: a missing shard would merge into a sweep
 * with configurations left out, so it is named instead. A whole sweep among the parts has no shard. */
static al_status check_shards(const cJSON *parts, al_error *err) {
    int n0 = 0, index = 0, i, n;
    for (const cJSON *p = parts->child; p; p = p->next)
        if (!part_shard(p, &i, &n)) return AL_OK;
        else if (!n0) n0 = n;
    char *seen = calloc((size_t)n0, 1);
    if (!seen) return al_err(err, AL_ERR_OOM, "papa_merge: out of memory");
    al_status st = AL_OK;
    for (const cJSON *p = parts->child; p && !st; p = p->next, index++) {
        part_shard(p, &i, &n);
        if (n != n0)
            st = al_err(err, AL_ERR_INVALID, "request: field 'parts[%d]' is shard %d/%d of another split than parts[0] "
                        "(shard count %d)", index, i, n, n0);
        else if (seen[i]++)
            st = al_err(err, AL_ERR_INVALID, "request: field 'parts[%d]': shard %d/%d is given twice", index, i, n);
    }
    for (int s = 0; s < n0 && !st; s++)
        if (!seen[s])
            st = al_err(err, AL_ERR_INVALID, "request: field 'parts': shard %d/%d is missing (%d of %d shards given)", s, n0,
                        cJSON_GetArraySize(parts), n0);
    free(seen);
    return st;
}

static int run_order(const void *a, const void *b) {
    const al_papa_run_result *x = a, *y = b;
    return x->config != y->config ? x->config - y->config : x->seed_index - y->seed_index;
}

/* parts[0]'s layers and heads. */
static al_status read_shape(const cJSON *p0, int *NL, int *H, al_error *err) {
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(p0, "shape");
    *NL = json_int(shape, "n_layers", 0);
    *H = json_int(shape, "n_heads", 0);
    if (*NL < 1 || *H < 1 || *NL > 100000 || *H > 100000 || (long long)*NL * *H > 100000)
        return al_err(err, AL_ERR_INVALID, "request: field 'parts[0].shape' is missing or out of range");
    return AL_OK;
}

/* Part index must come from parts[0]'s request (its settings, model and texts), else it is named. */
static al_status check_part(const cJSON *p, int index, const char *cfg0, const cJSON *p0, al_error *err) {
    const char *why = part_mismatch(p, cfg0, cJSON_GetObjectItemCaseSensitive(p0, "hashes"));
    if (!why) return AL_OK;
    char note[48];
    shard_note(p, note, sizeof note);
    return al_err(err, AL_ERR_INVALID, "request: field 'parts[%d]'%s comes from another request: %s", index, note, why);
}

static al_status merge_parts(const cJSON *parts, al_papa_sweep_result *r, int *NL, int *H, al_error *err) {
    const cJSON *p0 = parts->child;
    al_status st = read_shape(p0, NL, H, err);
    if (st) return st;
    const int n_heads = *NL * *H;
    st = read_configs(p0, &r->plan, err);
    if (st) return st;
    const int n_cfg = r->plan.n_configs;
    int max_runs = 0;
    for (const cJSON *p = parts->child; p; p = p->next) max_runs += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(p, "runs"));
    r->runs = calloc((size_t)max_runs + 1, sizeof *r->runs);
    r->mlm_score = malloc(sizeof(double) * (size_t)(n_cfg + 1));
    r->mlm_accuracy = malloc(sizeof(double) * (size_t)(n_cfg + 1));
    r->orders = malloc(sizeof(int) * AL_N_ORDERS * (size_t)n_heads);
    if (!r->runs || !r->mlm_score || !r->mlm_accuracy || !r->orders) return al_err(err, AL_ERR_OOM, "papa_merge: out of memory");
    for (int c = 0; c < n_cfg; c++) r->mlm_score[c] = r->mlm_accuracy[c] = NAN;
    char *cfg0 = config_text(p0);
    int index = 0;
    for (const cJSON *p = parts->child; p && !st; p = p->next, index++) {
        st = check_part(p, index, cfg0, p0, err);
        const cJSON *runs = cJSON_GetObjectItemCaseSensitive(p, "runs");
        for (const cJSON *o = runs ? runs->child : NULL; o && !st; o = o->next) {
            al_papa_run_result *x = &r->runs[r->n_runs++];
            x->config = json_int(o, "config", -1);
            x->seed_index = json_int(o, "seed_index", -1);
            x->score = json_num(o, "score");
            x->accuracy = json_num(o, "accuracy");
            const cJSON *g = cJSON_GetObjectItemCaseSensitive(o, "group_accuracy");
            for (int k = 0; k < AL_PAPA_MAX_GROUPS; k++) {
                const cJSON *v = cJSON_GetArrayItem(g, k);
                x->group_accuracy[k] = cJSON_IsNumber(v) ? v->valuedouble : NAN;
                x->group_count[k] = cJSON_IsNumber(v);
            }
            if (x->config < 0 || x->config >= n_cfg || x->seed_index < 0)
                st = al_err(err, AL_ERR_INVALID, "request: field 'parts[%d].runs' names configuration %d", index, x->config);
            else {
                const cJSON *co = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(p, "configs"), x->config);
                double ms = json_num(co, "mlm_score");
                if (!isnan(ms)) r->mlm_score[x->config] = ms, r->mlm_accuracy[x->config] = json_num(co, "mlm_accuracy");
            }
        }
    }
    free(cfg0);
    if (st) return st;
    qsort(r->runs, (size_t)r->n_runs, sizeof *r->runs, run_order);
    for (int i = 1; i < r->n_runs; i++)
        if (!run_order(&r->runs[i - 1], &r->runs[i]))
            return al_err(err, AL_ERR_INVALID, "request: field 'parts': configuration %d seed %d appears in two parts",
                          r->runs[i].config, r->runs[i].seed_index);
    st = check_shards(parts, err);
    if (st) return st;
    const cJSON *theta = cJSON_GetObjectItemCaseSensitive(p0, "theta");
    if (cJSON_IsArray(theta)) {
        if (cJSON_GetArraySize(theta) != n_heads) return al_err(err, AL_ERR_INVALID, "request: field 'parts[0].theta' has the wrong length");
        r->theta = malloc(sizeof(float) * (size_t)n_heads);
        if (!r->theta) return al_err(err, AL_ERR_OOM, "papa_merge: out of memory");
        int i = 0;
        for (const cJSON *v = theta->child; v; v = v->next, i++) {
            if (!cJSON_IsNumber(v) || !(fabs(v->valuedouble) <= FLT_MAX))
                return al_err(err, AL_ERR_INVALID, "request: field 'parts[0].theta[%d]' is not a float32 number", i);
            r->theta[i] = (float)v->valuedouble;
        }
        r->rank_loss = json_num(p0, "ranking_loss");
    }
    const cJSON *orders = cJSON_GetObjectItemCaseSensitive(p0, "orders");
    for (int o = 0; o < AL_N_ORDERS; o++) {
        const cJSON *list = cJSON_GetObjectItemCaseSensitive(orders, al_papa_order_name((al_papa_order)o));
        for (int i = 0; i < n_heads; i++) {
            const cJSON *pair = list ? cJSON_GetArrayItem(list, i) : NULL;
            const cJSON *l = cJSON_GetArrayItem(pair, 0), *h = cJSON_GetArrayItem(pair, 1);
            const int li = int_value(l, -1), hi = int_value(h, -1);
            r->orders[(size_t)o * n_heads + i] = li >= 0 && li < *NL && hi >= 0 && hi < *H ? li * *H + hi : -1;
        }
    }
    return AL_OK;
}

/* A language model's sweep from its shards (docs/papa-op.md, "A causal language model"): each shard's configurations
 * and exact numbers (its "lm_shard") into one result, and the reply written by the papa op's own writer
 * (papa_lm_reply.h), so its summaries, findings and digest are the unsharded sweep's. */
static al_status merge_lm(al_op_ctx *ctx, const cJSON *parts, al_error *err) {
    const cJSON *p0 = parts->child;
    int NL = 0, H = 0, D = -1, W = -1;
    al_papa_lm_result r;
    memset(&r, 0, sizeof r);
    al_status st = read_shape(p0, &NL, &H, err);
    if (!st) st = read_configs(p0, &r.plan, err);
    if (!st) {
        D = json_int(cJSON_GetObjectItemCaseSensitive(p0, "corpus"), "documents", -1);
        W = json_int(cJSON_GetObjectItemCaseSensitive(p0, "config"), "L", -1);
        if (D < 0 || D > 1 << 24 || W < 2 || W > 1 << 16)
            st = al_err(err, AL_ERR_INVALID, "request: field 'parts[0]': 'corpus.documents' and 'config.L' are missing "
                        "or out of range");
    }
    if (!st) st = al_papa_lm_result_alloc(&r, D, W, err);
    char *cfg0 = st ? NULL : config_text(p0);
    int index = 0;
    for (const cJSON *p = parts->child; p && !st; p = p->next, index++) {
        st = check_part(p, index, cfg0, p0, err);
        if (!st) st = al_papa_lm_read_shard(p, index, p == p0, NL, H, &r, err);
    }
    free(cfg0);
    if (!st) st = check_shards(parts, err);
    if (!st) {
        al_reply_builder *rb = ctx->rb;
        static const char *const copied[] = {"model", "engine", "shape", "hashes"};
        for (size_t i = 0; i < sizeof copied / sizeof copied[0]; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(p0, copied[i]);
            if (v) al_rb_add(rb, rb->root, copied[i], cJSON_Duplicate(v, 1));
        }
        al_papa_lm_reply_score(rb);
        const cJSON *config = cJSON_GetObjectItemCaseSensitive(p0, "config");
        if (config) al_rb_add(rb, rb->root, "config", cJSON_Duplicate(config, 1));
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(rb->root, "config"), "shard");
        al_rb_num(rb, rb->root, "merged_parts", cJSON_GetArraySize(parts));
        st = al_papa_lm_reply_results(rb, &r, NL, H, err);
    }
    al_papa_lm_result_free(&r);
    return st;
}

const al_req_field al_fields_papa_merge_own[] = {
    AL_F_ARRAY("parts", AL_FIELD_ANY, 1, 0, NULL, NULL, "the papa replies of a sharded sweep, one per shard"),
    AL_F_END,
};

al_status al_op_papa_merge(al_op_ctx *ctx, al_error *err) {
    const cJSON *parts = cJSON_GetObjectItemCaseSensitive(ctx->req, "parts");
    if (!cJSON_IsArray(parts) || cJSON_GetArraySize(parts) < 1)
        return al_err(err, AL_ERR_INVALID, "request: field 'parts' must be a list of papa replies (one per shard)");
    /* a merged reply is a whole sweep too: merging it alone recomputes its summary and findings (docs/papa-op.md) */
    for (const cJSON *p = parts->child; p; p = p->next)
        if (!cJSON_IsObject(p) || (strcmp(json_text(p, "op"), "papa") && strcmp(json_text(p, "op"), "papa_merge")))
            return al_err(err, AL_ERR_INVALID, "request: field 'parts' holds something other than a papa or papa_merge reply");
    /* a language model's sweep (op_papa_lm.c) has other numbers: its parts merge by its own reader, never mixed */
    const int lm = cJSON_GetObjectItemCaseSensitive(parts->child, "score") != NULL;
    int index = 0;
    for (const cJSON *p = parts->child; p; p = p->next, index++)
        if ((cJSON_GetObjectItemCaseSensitive(p, "score") != NULL) != lm)
            return al_err(err, AL_ERR_INVALID, "request: field 'parts[%d]' is %s sweep and parts[0] is %s", index,
                          lm ? "an encoder's (probes on a task)" : "a language model's", lm ? "a language model's" :
                          "an encoder's (probes on a task)");
    al_op_warn_unknown(ctx);
    if (lm) return merge_lm(ctx, parts, err);
    al_papa_sweep_result r;
    memset(&r, 0, sizeof r);
    int NL = 0, H = 0;
    al_status st = merge_parts(parts, &r, &NL, &H, err);
    if (!st) {
        al_reply_builder *rb = ctx->rb;
        const cJSON *p0 = parts->child;
        static const char *const copied[] = {"model", "engine", "shape", "hashes", "config", "task", "mlm_tokens"};
        for (size_t i = 0; i < sizeof copied / sizeof copied[0]; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(p0, copied[i]);
            if (v) al_rb_add(rb, rb->root, copied[i], cJSON_Duplicate(v, 1));
        }
        cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(rb->root, "config"), "shard");
        al_rb_num(rb, rb->root, "merged_parts", cJSON_GetArraySize(parts));
        const cJSON *task0 = cJSON_GetObjectItemCaseSensitive(p0, "task");
        st = al_papa_reply_results(rb, &r, NL, H, json_text(task0, "metric"), json_int(task0, "n_validation", -1), err);
        char dig[72];
        al_papa_reply_digest(&r, NL * H, dig);
        al_rb_str(rb, rb->root, "digest", dig);
    }
    al_papa_sweep_result_free(&r);
    return st;
}
