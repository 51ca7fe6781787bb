/* op_attention.c: the "attention" (alias "forward") op: texts -> padded batch -> al_forward with
 * per-head policies -> attention probabilities and the other requested tensors. */
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "attention_parts.h"

enum { OUT_ATTENTIONS = 1, OUT_HIDDEN = 2, OUT_VALUES = 4, OUT_MLM = 8 };

static al_status read_outputs(const cJSON *req, int *flags, al_error *err) {
    static const char *const names[] = {"attentions", "hidden_states", "values", "mlm_logits"};
    return al_req_flags(req, "outputs", names, 4, OUT_ATTENTIONS, flags, err);
}

/* How many tokens a sequence may keep, and why (NULL: the user's max_length, no warning). */
typedef struct limits {
    int pad_to;      /* 0: pad to the longest sequence */
    int max_tokens;  /* truncation limit */
    const char *reason;
    char reason_buf[96];
} limits;

static al_status read_limits(const al_op_ctx *ctx, const al_model *model,
                             const al_api_policy_set *pol, limits *lim, al_error *err) {
    int max_length, pad_to;
    al_status st = al_req_int(ctx->req, "max_length", "max_length", 0, 0, 1, 1 << 24, &max_length, err);
    if (!st) st = al_req_int(ctx->req, "pad_to", "pad_to", 0, 0, 1, 1 << 24, &pad_to, err);
    if (st) return st;
    int model_limit = al_api_max_tokens(model);
    memset(lim, 0, sizeof *lim);
    lim->max_tokens = model_limit;
    lim->reason = "max_position_embeddings";
    if (pad_to) {
        if (pad_to > model_limit)
            return al_err(err, AL_ERR_INVALID,
                          "request: field 'pad_to' is %d, more than the model's %d positions", pad_to,
                          model_limit);
        if (pol->const_size && pol->const_size != pad_to)
            return al_err(err, AL_ERR_INVALID,
                          "request: field 'pad_to' is %d but constant tensor '%s' is %dx%d", pad_to,
                          pol->const_name, pol->const_size, pol->const_size);
        lim->pad_to = lim->max_tokens = pad_to;
        lim->reason = "pad_to";
    } else if (pol->const_size) {
        if (pol->const_size > model_limit)
            return al_err(err, AL_ERR_INVALID,
                          "request: field 'policies': constant tensor '%s' is %dx%d, more than the "
                          "model's %d positions",
                          pol->const_name, pol->const_size, pol->const_size, model_limit);
        lim->pad_to = lim->max_tokens = pol->const_size;
        snprintf(lim->reason_buf, sizeof lim->reason_buf, "constant tensor '%s' is %dx%d",
                 pol->const_name, pol->const_size, pol->const_size);
        lim->reason = lim->reason_buf;
    }
    if (max_length && max_length < lim->max_tokens) {
        lim->max_tokens = max_length;
        lim->reason = NULL;
    }
    return AL_OK;
}

/* The padded batch arrays, written straight into the reply's I32 tensors. */
static al_status build_batch(al_reply_builder *rb, const al_model *model, const al_api_inputs *in,
                             int L, int32_t **ids_out, int32_t **mask_out, al_error *err) {
    const int B = in->n_seqs;
    const int64_t shape[2] = {B, L};
    void *ids, *mask;
    al_status st = al_rb_tensor(rb, "input_ids", "I32", 2, shape, &ids, err);
    if (!st) st = al_rb_tensor(rb, "attention_mask", "I32", 2, shape, &mask, err);
    if (st) return st;
    const al_tokenizer *tok = al_model_tokenizer(model);
    int pad_id = al_model_config(model)->pad_token_id;
    if (tok && al_tokenizer_special_ids(tok).pad >= 0) pad_id = al_tokenizer_special_ids(tok).pad;
    int32_t *I = ids, *M = mask;
    for (int b = 0; b < B; b++) {
        const al_api_seq *seq = &in->seqs[b];
        const int32_t *src = in->from_text ? seq->enc.ids : seq->raw_ids;
        for (int t = 0; t < L; t++) {
            int real = t < seq->n_tokens;
            I[(size_t)b * L + t] = real ? src[t] : pad_id;
            M[(size_t)b * L + t] = real;
        }
    }
    *ids_out = I;
    *mask_out = M;
    return AL_OK;
}

static void describe_sequences(al_reply_builder *rb, const al_model *model, const al_api_inputs *in,
                               const int32_t *ids, int L) {
    cJSON *seqs = al_rb_add(rb, rb->root, "sequences", cJSON_CreateArray());
    const al_tokenizer *tok = al_model_tokenizer(model);
    for (int b = 0; seqs && b < in->n_seqs; b++) {
        const al_api_seq *seq = &in->seqs[b];
        cJSON *obj = al_rb_add(rb, seqs, NULL, cJSON_CreateObject());
        if (!obj) break;
        al_rb_num(rb, obj, "n_tokens", seq->n_tokens);
        al_rb_bool(rb, obj, "truncated", seq->truncated);
        al_rb_add(rb, obj, "tokens", al_api_token_strings(tok, ids + (size_t)b * L, seq->n_tokens));
        if (in->from_text) {
            al_rb_int_array(rb, obj, "word_ids", seq->enc.word_ids, seq->n_tokens);
            al_rb_int_array(rb, obj, "type_ids", seq->enc.type_ids, seq->n_tokens);
        }
    }
}

/* The forward pass reports ("forward", fraction done); clients see "layer 3/12" stages. */
typedef struct layer_progress {
    const al_run_params *params;
    int n_layers;
} layer_progress;

static void report_layers(void *user, const char *stage, double fraction) {
    const layer_progress *lp = user;
    if (strcmp(stage, "forward") != 0) {
        al_api_progress(lp->params, stage, fraction);
        return;
    }
    char text[32];
    snprintf(text, sizeof text, "layer %d/%d", (int)(fraction * lp->n_layers + 0.5), lp->n_layers);
    al_api_progress(lp->params, text, fraction);
}

al_status al_op_attention(al_op_ctx *ctx, al_error *err) {
    static const char *const known[] = {"op", "model", "text", "text_pair", "texts", "text_pairs",
                                        "input_ids", "max_length", "pad_to", "add_special_tokens",
                                        "policies", "outputs", NULL};
    const al_api_model *m;
    int add_special, flags;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (!st) st = al_req_bool(ctx->req, "add_special_tokens", "add_special_tokens", 1, &add_special, err);
    if (!st) st = read_outputs(ctx->req, &flags, err);
    if (st) return st;
    const al_model *model = m->model;
    const al_config *cfg = al_model_config(model);
    if ((flags & OUT_MLM) && !al_model_has_mlm_head(model))
        return al_err(err, AL_ERR_INVALID,
                      "request: field 'outputs': 'mlm_logits' needs an MLM head, and model '%s' has none",
                      m->id);
    al_req_warn_unknown(ctx->rb, ctx->req, known);

    al_api_policy_set pol;
    st = al_api_read_policies(ctx, cfg, &pol, err);
    if (st) return st;
    limits lim;
    al_api_inputs in = {0};
    st = read_limits(ctx, model, &pol, &lim, err);
    al_api_progress(ctx->params, "tokenize", 0.0);
    if (!st) st = al_api_read_inputs(ctx, model, add_special, lim.max_tokens, lim.reason, &in, err);
    if (st) {
        al_api_policies_free(&pol);
        return st;
    }
    al_api_progress(ctx->params, "tokenize", 1.0);

    int L = lim.pad_to;
    for (int b = 0; b < in.n_seqs; b++)
        if (in.seqs[b].n_tokens > L) L = in.seqs[b].n_tokens;
    const int B = in.n_seqs, NL = cfg->n_layers, H = cfg->n_heads, D = cfg->hidden_size;
    const int hd = cfg->head_dim, V = cfg->vocab_size;

    al_reply_builder *rb = ctx->rb;
    int32_t *ids = NULL, *mask = NULL;
    st = build_batch(rb, model, &in, L, &ids, &mask, err);

    /* Type ids come from the encodings (pairs); given ids and DistilBERT use all-0 types (NULL). */
    int32_t *type_buf = NULL;
    if (!st && in.from_text && cfg->type_vocab_size > 0) {
        int64_t shape[2] = {B, L};
        void *data;
        st = al_rb_tensor(rb, "type_ids", "I32", 2, shape, &data, err);
        type_buf = data;
        for (int b = 0; !st && b < B; b++)
            for (int t = 0; t < in.seqs[b].n_tokens; t++)
                type_buf[(size_t)b * L + t] = in.seqs[b].enc.type_ids[t];
    }

    al_forward_outputs outs = {0};
    void *data;
    if (!st && (flags & OUT_ATTENTIONS)) {
        int64_t shape[5] = {NL, B, H, L, L};
        st = al_rb_tensor(rb, "attentions", "F32", 5, shape, &data, err);
        outs.attentions = data;
    }
    if (!st && (flags & OUT_HIDDEN)) {
        int64_t shape[4] = {NL + 1, B, L, D};
        st = al_rb_tensor(rb, "hidden_states", "F32", 4, shape, &data, err);
        outs.hidden_states = data;
    }
    if (!st && (flags & OUT_VALUES)) {
        int64_t shape[5] = {NL, B, H, L, hd};
        st = al_rb_tensor(rb, "values", "F32", 5, shape, &data, err);
        outs.values = data;
    }
    if (!st && (flags & OUT_MLM)) {
        int64_t shape[3] = {B, L, V};
        st = al_rb_tensor(rb, "mlm_logits", "F32", 3, shape, &data, err);
        outs.mlm_logits = data;
    }
    if (!st && al_api_cancelled(ctx->params))
        st = al_err(err, AL_ERR_CANCELLED, "attention: cancelled before the forward pass");
    if (!st) {
        al_batch batch = {B, L, ids, mask, type_buf, NULL};
        al_forward_params fp = al_forward_default_params();
        fp.policies = pol.heads;
        layer_progress lp = {ctx->params, NL};
        fp.progress = ctx->params->progress ? report_layers : NULL;
        fp.progress_user = &lp;
        fp.cancel = ctx->params->cancel;
        st = al_forward(model, &batch, &fp, &outs, err);
    }
    if (!st) {
        al_rb_str(rb, rb->root, "model", m->id);
        al_rb_num(rb, rb->root, "n_seqs", B);
        al_rb_num(rb, rb->root, "seq_len", L);
        al_rb_num(rb, rb->root, "n_layers", NL);
        al_rb_num(rb, rb->root, "n_heads", H);
        al_rb_num(rb, rb->root, "head_dim", hd);
        al_rb_num(rb, rb->root, "hidden_size", D);
        describe_sequences(rb, model, &in, ids, L);
    }
    al_api_inputs_free(&in);
    al_api_policies_free(&pol);
    return st;
}
