/* op_heads.c: PAPA's constants and lambdas through the session cache, the head statistics pass, and the
 * reply's identity and ranking settings, for the ops that measure heads over a task (op_heads.h). */
#include "op_heads.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../methods/batches/batch_runner.h"
#include "../methods/probes/metrics.h"
#include "../methods/papa/papa.h"
#include "papa_cache.h"
#include "reply_digest.h"

al_status al_heads_constants(const al_op_ctx *ctx, const al_model *model, const al_papa_sweep_request *q,
                             const al_papa_inputs *train, const char *c_name, const float **C, float **owned,
                             int *reused, al_error *err) {
    const al_config *cfg = al_model_config(model);
    const int NL = cfg->n_layers, H = cfg->n_heads, L = q->L;
    *owned = NULL;
    const al_api_tensor *cached = al_api_find_tensor(ctx->session, c_name);
    *reused = cached != NULL;
    if (cached) {
        *C = cached->data;
        return AL_OK;
    }
    float *c = malloc(sizeof(float) * (size_t)NL * H * L * L);
    if (!c) return al_err(err, AL_ERR_OOM, "out of memory for the constant matrices");
    int n = train->n;
    if (q->constants_examples > 0 && n > q->constants_examples) n = q->constants_examples;
    al_forward_params fp = al_forward_default_params();
    fp.progress = ctx->params->progress;
    fp.progress_user = ctx->params->progress_user;
    fp.cancel = ctx->params->cancel;
    fp.pool = ctx->session->pool;
    fp.skip_pads = 1; /* as the sweep averages them */
    al_status st = al_papa_average_constants(model, train->ids, train->mask, train->type_ids, n, L, q->batch_size, &fp, c, err);
    if (st) {
        free(c);
        return st;
    }
    const int64_t shape[4] = {NL, H, L, L};
    al_papa_cache_put(ctx->session, c_name, 4, shape, c);
    *C = *owned = c;
    return AL_OK;
}

al_status al_heads_theta(const al_op_ctx *ctx, al_model *model, const al_papa_sweep_request *q,
                         const al_papa_inputs *train, const float *C, const char *t_name, float *theta,
                         int *reused, al_error *err) {
    const al_config *cfg = al_model_config(model);
    const int NH = cfg->n_layers * cfg->n_heads;
    const al_api_tensor *cached = al_api_find_tensor(ctx->session, t_name);
    *reused = cached != NULL;
    if (cached) {
        memcpy(theta, cached->data, sizeof(float) * (size_t)NH);
        return AL_OK;
    }
    al_forward_params fp = al_forward_default_params(); /* the sweep's (papa_sweep.c) */
    fp.progress = ctx->params->progress;
    fp.progress_user = ctx->params->progress_user;
    fp.cancel = ctx->params->cancel;
    fp.pool = ctx->session->pool;
    fp.skip_pads = 1;
    double loss = 0.0;
    al_status st = al_papa_rank(model, train, C, &q->rank, &fp, theta, &loss, err);
    float *stored = st ? NULL : malloc(sizeof(float) * ((size_t)NH + 1));
    if (stored) { /* the papa op's form: the logits, then the ranking loss */
        memcpy(stored, theta, sizeof(float) * (size_t)NH);
        stored[NH] = (float)loss;
        const int64_t shape[1] = {NH + 1};
        al_papa_cache_put(ctx->session, t_name, 1, shape, stored);
        free(stored);
    }
    return st;
}

const al_req_field al_fields_confidence[] = {
    AL_F_ENUM("confidence", al_confidence_names, "\"max\"", "confidence as the largest weight over every real key "
              "(max), or over the keys that are not [SEP] (voita: Voita et al. 2019; docs/measures.md)"),
    AL_F_END,
};

al_status al_heads_read_confidence(const al_op_ctx *ctx, al_confidence_kind *out, al_error *err) {
    const char *name = NULL;
    *out = AL_CONFIDENCE_MAX;
    al_status st = al_req_string(ctx->req, "confidence", "confidence", 0, &name, err);
    if (st || !name) return st;
    for (int i = 0; al_confidence_names[i]; i++)
        if (!strcmp(name, al_confidence_names[i])) {
            *out = (al_confidence_kind)i;
            return AL_OK;
        }
    return al_err(err, AL_ERR_INVALID, "request: field 'confidence' must be \"max\" or \"voita\"");
}

double al_heads_lambda(float theta) { return 1.0 / (1.0 + exp(-(double)theta)); }

typedef struct stats_state {
    const al_model *model;
    const al_tokenizer *tok;
    int NL, H, D, dh;
    const float *C;
    al_confidence_kind confidence;
    float *scratch, *head_norms, *value_norms;
    uint8_t *classes;
    double *per_example; /* [n, NL * H * AL_HS_N] */
    double *norm_sum;    /* [NL * H] or NULL */
} stats_state;

static al_status stats_chunk(void *user, const al_run_chunk *c, al_error *err) {
    stats_state *s = user;
    const int L = c->L, H = s->H;
    const size_t LL = (size_t)L * L;
    const float *maps[512];
    for (int b = 0; b < c->B; b++) {
        const int32_t *ids = c->ids + (size_t)b * L, *mask = c->mask + (size_t)b * L;
        for (int l = 0; l < s->NL; l++) maps[l] = c->attentions + ((size_t)l * c->B + b) * H * LL;
        al_key_classes(s->tok, ids, mask, L, s->classes);
        /* a causal row sees i + 1 keys: its own rule (docs/measures.md, "Causal decoders") */
        (al_model_is_causal(s->model) ? al_causal_head_stats_example : al_head_stats_example_kind)(
            maps, s->NL, H, L, mask, s->classes, s->C, s->confidence, s->scratch,
            s->per_example + (size_t)(c->first + b) * s->NL * H * AL_HS_N);
        for (int l = 0; s->norm_sum && l < s->NL; l++) { /* norm_mass: the norm_attention op's rule */
            al_norm_outputs o = {s->head_norms, NULL, NULL, s->value_norms};
            const float *x = c->hidden_states + ((size_t)l * c->B + b) * L * s->D;
            const float *v = c->values + ((size_t)l * c->B + b) * H * L * s->dh;
            al_status st = al_norm_attention_layer(s->model, l, x, maps[l], v, mask, L, &o, err);
            if (st) return st;
            al_norm_head_mass(s->head_norms, s->value_norms, mask, L, H, s->norm_sum + (size_t)l * H, NULL);
        }
    }
    return AL_OK;
}

typedef struct progress_relay {
    const al_run_params *params;
    const char *stage;
} progress_relay;

static void report_batches(void *user, const char *stage, double fraction) {
    const progress_relay *r = user;
    if (strcmp(stage, "batches") == 0) al_api_progress(r->params, r->stage, fraction);
}

al_status al_heads_stats(const al_op_ctx *ctx, const al_model *model, const al_papa_inputs *val, const float *C,
                         int batch_size, al_confidence_kind confidence, const char *stage, double *mean, double *ci,
                         double *norm_mass, al_error *err) {
    const al_config *cfg = al_model_config(model);
    const int NL = cfg->n_layers, H = cfg->n_heads, L = val->L, n = val->n;
    if (NL > 512) return al_err(err, AL_ERR_INVALID, "%s: %d layers (at most 512)", stage, NL);
    stats_state s = {model, al_model_tokenizer(model), NL, H, cfg->hidden_size, cfg->head_dim, C, confidence,
                     malloc(sizeof(float) * (size_t)L * L), NULL, NULL, malloc((size_t)L), NULL, NULL};
    const int per = NL * H * AL_HS_N;
    s.per_example = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1) * per);
    al_run_example *ex = malloc(sizeof *ex * (size_t)(n > 0 ? n : 1));
    double *vals = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    al_status st = AL_OK;
    if (norm_mass) {
        s.head_norms = malloc(sizeof(float) * (size_t)H * L * L);
        s.value_norms = malloc(sizeof(float) * (size_t)H * L);
        s.norm_sum = calloc((size_t)NL * H, sizeof(double));
        if (!s.head_norms || !s.value_norms || !s.norm_sum) st = al_err(err, AL_ERR_OOM, "%s: out of memory", stage);
    }
    if (!s.scratch || !s.classes || !s.per_example || !ex || !vals) st = al_err(err, AL_ERR_OOM, "%s: out of memory", stage);
    for (int x = 0; !st && x < n; x++)
        ex[x] = (al_run_example){L, val->ids + (size_t)x * L, val->mask + (size_t)x * L, val->type_ids + (size_t)x * L, NULL, NULL};
    if (!st) {
        progress_relay relay = {ctx->params, stage};
        al_batch_run_params p = al_batch_run_default_params();
        p.outputs = AL_RUN_ATTENTIONS | (norm_mass ? AL_RUN_HIDDEN | AL_RUN_VALUES : 0);
        p.batch_size = batch_size;
        p.progress = ctx->params->progress ? report_batches : NULL;
        p.progress_user = &relay;
        p.cancel = ctx->params->cancel;
        p.who = stage;
        p.pool = ctx->session->pool;
        st = al_batch_run(model, ex, n, &p, stats_chunk, &s, err);
    }
    /* mean and 95% interval over the examples that have the statistic (the shared statistics module) */
    for (int k = 0; !st && k < per; k++) {
        int m = 0;
        for (int x = 0; x < n; x++) {
            const double v = s.per_example[(size_t)x * per + k];
            if (!isnan(v)) vals[m++] = v;
        }
        al_seed_summary ss;
        al_error e2;
        const int ok = m > 0 && !al_metric_summary(vals, m, &ss, &e2);
        mean[k] = ok ? al_json_canonical(ss.mean) : NAN;
        ci[k] = ok && ss.has_interval ? al_json_canonical(ss.half_width) : NAN;
    }
    for (int i = 0; !st && norm_mass && i < NL * H; i++) norm_mass[i] = n ? al_json_canonical(s.norm_sum[i] / n) : NAN;
    free(s.scratch), free(s.head_norms), free(s.value_norms), free(s.classes), free(s.per_example), free(s.norm_sum);
    free(ex), free(vals);
    return st;
}

void al_heads_reply_identity(al_reply_builder *rb, const char *model_id, int NL, int H, const char *model_hash,
                             const char *task_hash) {
    char buf[80];
    al_rb_str(rb, rb->root, "model", model_id);
    al_rb_str(rb, rb->root, "engine", AL_VERSION);
    cJSON *dims = al_rb_add(rb, rb->root, "shape", cJSON_CreateObject());
    al_rb_num(rb, dims, "n_layers", NL);
    al_rb_num(rb, dims, "n_heads", H);
    cJSON *hashes = al_rb_add(rb, rb->root, "hashes", cJSON_CreateObject());
    snprintf(buf, sizeof buf, "sha256:%s", model_hash);
    al_rb_str(rb, hashes, "model", buf);
    snprintf(buf, sizeof buf, "sha256:%s", task_hash);
    al_rb_str(rb, hashes, "task", buf);
}

void al_heads_reply_ranking(al_reply_builder *rb, cJSON *parent, const al_papa_rank_settings *rank) {
    cJSON *p = al_rb_add(rb, parent, "ranking", cJSON_CreateObject());
    if (!p) return;
    al_rb_num(rb, p, "epochs", rank->epochs);
    al_rb_num(rb, p, "batch_size", rank->batch_size);
    al_rb_num(rb, p, "max_examples", rank->max_examples);
    al_rb_num(rb, p, "lr", rank->lr);
    al_rb_num(rb, p, "shards", rank->shards);
    al_rb_bool(rb, p, "train_mode", rank->train_mode);
    al_rb_num(rb, p, "seed", (double)rank->seed);
}
