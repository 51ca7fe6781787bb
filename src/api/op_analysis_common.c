/* op_analysis_common.c: what the analysis ops share: their common request fields and the batch
 * runner (padded batch -> al_forward -> effective attention -> callback). */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "op_analysis.h"

static al_status read_choice(const cJSON *req, const char *key, const char *a, const char *b,
                             int def, int *out, al_error *err) {
    const char *v;
    al_status st = al_req_string(req, key, key, 0, &v, err);
    if (st) return st;
    *out = def;
    if (!v) return AL_OK;
    if (strcmp(v, a) == 0) *out = 0;
    else if (strcmp(v, b) == 0) *out = 1;
    else
        return al_err(err, AL_ERR_INVALID, "request: field '%s' must be \"%s\" or \"%s\", not '%.60s'",
                      key, a, b, v);
    return AL_OK;
}

al_status al_an_read_opts(const al_op_ctx *ctx, int default_batch, al_an_opts *o, al_error *err) {
    memset(o, 0, sizeof *o);
    int mode = 0, average = 0;
    al_status st = read_choice(ctx->req, "mode", "exact", "paper", 0, &mode, err);
    if (!st) st = read_choice(ctx->req, "average", "exact", "paper", mode, &average, err);
    if (!st) st = al_req_bool(ctx->req, "add_special_tokens", "add_special_tokens", 1, &o->add_special, err);
    if (!st) st = al_req_int(ctx->req, "pad_to", "pad_to", 0, 0, 1, 1 << 24, &o->pad_to, err);
    if (!st) st = al_req_int(ctx->req, "max_length", "max_length", 0, 0, 1, 1 << 24, &o->max_length, err);
    if (!st)
        st = al_req_int(ctx->req, "batch_size", "batch_size", 0, default_batch, 1, 1 << 20,
                        &o->batch_size, err);
    o->mode = mode ? AL_EFFECTIVE_PAPER : AL_EFFECTIVE_EXACT;
    o->average = average ? AL_AVERAGE_PAPER : AL_AVERAGE_EXACT;
    return st;
}

al_status al_an_begin(const al_op_ctx *ctx, int default_batch, const char *const *known,
                      const al_api_model **model, al_an_opts *o, al_api_inputs *in, al_error *err) {
    al_status st = al_req_model(ctx->session, ctx->req, model, err);
    if (!st) st = al_an_read_opts(ctx, default_batch, o, err);
    if (st) return st;
    al_req_warn_unknown(ctx->rb, ctx->req, known);
    return al_an_read_inputs(ctx, (*model)->model, o, in, err);
}

al_status al_an_read_inputs(const al_op_ctx *ctx, const al_model *model, const al_an_opts *o,
                            al_api_inputs *in, al_error *err) {
    int limit = al_api_max_tokens(model);
    const char *reason = "max_position_embeddings";
    if (o->pad_to) {
        if (o->pad_to > limit)
            return al_err(err, AL_ERR_INVALID,
                          "request: field 'pad_to' is %d, more than the model's %d positions",
                          o->pad_to, limit);
        limit = o->pad_to;
        reason = "pad_to";
    }
    if (o->max_length && o->max_length < limit) limit = o->max_length, reason = NULL;
    return al_api_read_inputs(ctx, model, o->add_special, limit, reason, in, err);
}

int al_an_length(const al_api_inputs *in, const al_an_opts *o) {
    int L = o->pad_to;
    for (int b = 0; b < in->n_seqs; b++)
        if (in->seqs[b].n_tokens > L) L = in->seqs[b].n_tokens;
    return L;
}

cJSON *al_an_matrix(al_reply_builder *rb, cJSON *obj, const char *key, const double *v, int rows,
                    int cols, double div) {
    cJSON *m = al_rb_add(rb, obj, key, cJSON_CreateArray());
    for (int i = 0; m && i < rows; i++) {
        cJSON *row = al_rb_add(rb, m, NULL, cJSON_CreateArray());
        for (int j = 0; row && j < cols; j++)
            al_rb_add(rb, row, NULL, cJSON_CreateNumber(div ? v[(size_t)i * cols + j] / div
                                                            : v[(size_t)i * cols + j]));
    }
    return m;
}

typedef struct run_buffers {
    int32_t *ids, *mask, *types, *segments;
    uint8_t *classes;
    float *attn, *values, *eff, *attn_b, *values_b, *eff_b;
    int *ranks;
} run_buffers;

static void free_buffers(run_buffers *r) {
    free(r->ids), free(r->mask), free(r->types), free(r->segments), free(r->classes);
    free(r->attn), free(r->values), free(r->eff), free(r->attn_b), free(r->values_b), free(r->eff_b);
    free(r->ranks);
}

static al_status forward_and_effective(const al_model *model, const al_an_opts *o, int B, int L,
                                       const run_buffers *r, float *attn, float *values, float *eff,
                                       int *ranks, const volatile int *cancel, al_error *err) {
    const al_config *cfg = al_model_config(model);
    al_batch batch = {B, L, r->ids, r->mask, cfg->type_vocab_size > 0 ? r->types : NULL, NULL};
    al_forward_params fp = al_forward_default_params();
    fp.cancel = cancel;
    al_forward_outputs out = {0};
    out.attentions = attn;
    out.values = values;
    al_status st = al_forward(model, &batch, &fp, &out, err);
    if (!st) st = al_effective_attention(cfg, attn, values, r->mask, B, L, o->mode, eff, ranks, err);
    return st;
}

al_status al_an_run(const al_op_ctx *ctx, const al_model *model, const al_model *model_b,
                    const al_api_inputs *in, const al_an_opts *o, int L, al_an_fn fn, void *user,
                    al_error *err) {
    const al_config *cfg = al_model_config(model);
    const int NL = cfg->n_layers, H = cfg->n_heads, dh = cfg->head_dim;
    const int chunk = o->batch_size < in->n_seqs ? o->batch_size : in->n_seqs;
    const size_t tok = (size_t)chunk * L, na = (size_t)NL * chunk * H * L * L;
    const size_t nv = (size_t)NL * chunk * H * L * dh;
    run_buffers r = {0};
    r.ids = malloc(tok * sizeof(int32_t));
    r.mask = malloc(tok * sizeof(int32_t));
    r.types = calloc(tok, sizeof(int32_t));
    r.segments = malloc(tok * sizeof(int32_t));
    r.classes = malloc(tok);
    r.attn = malloc(na * sizeof(float));
    r.values = malloc(nv * sizeof(float));
    r.eff = malloc(na * sizeof(float));
    r.ranks = malloc((size_t)NL * chunk * H * sizeof(int));
    if (model_b) {
        r.attn_b = malloc(na * sizeof(float));
        r.values_b = malloc(nv * sizeof(float));
        r.eff_b = malloc(na * sizeof(float));
    }
    al_status st = AL_OK;
    if (!r.ids || !r.mask || !r.types || !r.segments || !r.classes || !r.attn || !r.values ||
        !r.eff || !r.ranks || (model_b && (!r.attn_b || !r.values_b || !r.eff_b)))
        st = al_err(err, AL_ERR_OOM, "analysis: out of memory for a batch of %d x %d tokens "
                    "(lower 'batch_size')", chunk, L);
    const al_tokenizer *tok_model = al_model_tokenizer(model);
    int pad_id = cfg->pad_token_id;
    if (tok_model && al_tokenizer_special_ids(tok_model).pad >= 0)
        pad_id = al_tokenizer_special_ids(tok_model).pad;
    for (int first = 0; !st && first < in->n_seqs; first += chunk) {
        const int B = in->n_seqs - first < chunk ? in->n_seqs - first : chunk;
        if (al_api_cancelled(ctx->params)) {
            st = al_err(err, AL_ERR_CANCELLED, "analysis: cancelled at example %d", first);
            break;
        }
        for (int b = 0; b < B; b++) {
            const al_api_seq *seq = &in->seqs[first + b];
            const int32_t *src = in->from_text ? seq->enc.ids : seq->raw_ids;
            for (int t = 0; t < L; t++) {
                const size_t e = (size_t)b * L + t;
                const int real = t < seq->n_tokens;
                r.ids[e] = real ? src[t] : pad_id;
                r.mask[e] = real;
                r.types[e] = real && in->from_text ? seq->enc.type_ids[t] : 0;
                r.segments[e] = !real ? -1 : in->from_text ? seq->enc.sequence_ids[t] : 0;
            }
            al_key_classes(tok_model, r.ids + (size_t)b * L, r.mask + (size_t)b * L, L,
                           r.classes + (size_t)b * L);
        }
        st = forward_and_effective(model, o, B, L, &r, r.attn, r.values, r.eff, r.ranks,
                                   ctx->params->cancel, err);
        if (!st && model_b)
            st = forward_and_effective(model_b, o, B, L, &r, r.attn_b, r.values_b, r.eff_b, NULL,
                                       ctx->params->cancel, err);
        if (!st) {
            al_an_chunk c = {first, B, L, r.ids, r.mask, r.classes, r.segments, r.attn, r.values,
                             r.eff, r.ranks, r.attn_b, r.eff_b};
            st = fn(user, &c, err);
        }
        al_api_progress(ctx->params, "analysis", (double)(first + B) / in->n_seqs);
    }
    free_buffers(&r);
    return st;
}
