/* op_attention.c: the "attention" (alias "forward") op: texts (or pre-split words) -> one padded batch through the batch
 * runner (src/methods/batches/batch_runner.c) with per-head policies -> attention probabilities and the other
 * requested tensors, written straight into the reply. */
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "../methods/papa/papa.h"
#include "attention_parts.h"

/* names[i] sets bit 1 << i: the runner's AL_RUN_ATTENTIONS, AL_RUN_HIDDEN, AL_RUN_VALUES, AL_RUN_MLM,
 * AL_RUN_LAST_HIDDEN. */
static const char *const k_output_names[] = {"attentions", "hidden_states", "values", "mlm_logits",
                                             "last_hidden_state", NULL};

static al_status read_outputs(const cJSON *req, int *flags, al_error *err) {
    return al_req_flags(req, "outputs", k_output_names, 5, AL_RUN_ATTENTIONS, flags, err);
}

const al_req_field al_fields_attention_own[] = {
    AL_F_ARRAY("words", AL_FIELD_ANY, 1, 0, NULL, NULL,
               "pre-split words instead of text: one list of strings, or a list of them"),
    AL_F_ARRAY("policies", AL_FIELD_OBJECT, 1, 0, NULL, NULL,
               "per-head policies: {layer, head, mode: capture|constant|mix|zero, constant, lambda} (docs/api.md)"),
    AL_F_ARRAY("outputs", AL_FIELD_ENUM, 1, 0, k_output_names, "[\"attentions\"]", "the tensors to return"),
    AL_F_ENUM("layout", al_papa_layout_names, "\"right_pad\"", "the input layout ('papa' needs pad_to)"),
    AL_F_END,
};

/* The request's pad_to / max_length through the one truncation rule (al_api_limits_make). */
static al_status read_limits(const al_op_ctx *ctx, const al_model *model,
                             const al_api_policy_set *pol, al_api_limits *lim, al_error *err) {
    int max_length, pad_to;
    al_status st = al_req_int(ctx->req, "max_length", "max_length", 0, 0, 1, 1 << 24, &max_length, err);
    if (!st) st = al_req_int(ctx->req, "pad_to", "pad_to", 0, 0, 1, 1 << 24, &pad_to, err);
    const char *layout = NULL;
    if (!st) st = al_req_string(ctx->req, "layout", "layout", 0, &layout, err);
    if (st) return st;
    const int papa = layout && !strcmp(layout, "papa");
    if (layout && !papa && strcmp(layout, "right_pad"))
        return al_err(err, AL_ERR_INVALID, "request: field 'layout' is '%.40s', not 'papa' or 'right_pad'", layout);
    st = al_api_limits_make(model, pad_to, max_length, pol->const_size, pol->const_name, lim, err);
    if (!st && papa && !lim->pad_to)
        return al_err(err, AL_ERR_INVALID, "request: field 'layout' 'papa' needs 'pad_to' (the sweep's L) or constant "
                      "policies of that size");
    if (!st && papa && max_length)
        return al_err(err, AL_ERR_INVALID, "request: field 'max_length' does not go with layout 'papa' (it fills "
                      "'pad_to' positions)");
    lim->papa_layout = papa;
    lim->takes_words = 1;
    return st;
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
        if (in->papa_layout) {
            al_rb_int_array(rb, obj, "attention_mask", seq->raw_ids + L, L);
            al_rb_int_array(rb, obj, "type_ids", seq->raw_ids + 2 * L, L);
            /* the word whose first sub-token sits at each position (-1: none): where a token task's labels go */
            if (in->from_words) al_rb_int_array(rb, obj, "first_word", seq->raw_ids + 3 * L, L);
        } else if (in->from_text) {
            al_rb_int_array(rb, obj, "word_ids", seq->enc.word_ids, seq->n_tokens);
            al_rb_int_array(rb, obj, "type_ids", seq->enc.type_ids, seq->n_tokens);
        }
    }
}

/* The runner reports ("forward", fraction of the layers done); clients see "layer 3/12" stages. */
typedef struct layer_progress {
    const al_run_params *params;
    int n_layers;
} layer_progress;

static void report_layers(void *user, const char *stage, double fraction) {
    const layer_progress *lp = user;
    if (strcmp(stage, "forward") != 0) return; /* one batch: its end is the forward's end */
    char text[32];
    snprintf(text, sizeof text, "layer %d/%d", (int)(fraction * lp->n_layers + 0.5), lp->n_layers);
    al_api_progress(lp->params, text, fraction);
}

/* The single batch's ids, mask and token types into the reply's I32 tensors. */
typedef struct batch_copy {
    int32_t *ids, *mask, *types; /* types NULL: not in the reply */
} batch_copy;

static al_status copy_batch(void *user, const al_run_chunk *c, al_error *err) {
    const batch_copy *bc = user;
    const size_t n = (size_t)c->B * c->L * sizeof(int32_t);
    memcpy(bc->ids, c->ids, n);
    memcpy(bc->mask, c->mask, n);
    if (bc->types) memcpy(bc->types, c->type_ids, n);
    (void)err;
    return AL_OK;
}

al_status al_op_attention(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    int add_special, flags;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (!st) st = al_req_bool(ctx->req, "add_special_tokens", "add_special_tokens", 1, &add_special, err);
    if (!st) st = read_outputs(ctx->req, &flags, err);
    if (st) return st;
    const al_model *model = m->model;
    const al_config *cfg = al_model_config(model);
    if ((flags & AL_RUN_MLM) && !al_model_has_mlm_head(model))
        return al_err(err, AL_ERR_INVALID,
                      "request: field 'outputs': 'mlm_logits' needs an MLM head, and model '%s' has none",
                      m->id);
    al_op_warn_unknown(ctx);

    al_api_policy_set pol;
    st = al_api_read_policies(ctx, cfg, &pol, err);
    if (st) return st;
    al_api_limits lim;
    al_api_inputs in = {0};
    st = read_limits(ctx, model, &pol, &lim, err);
    al_api_progress(ctx->params, "tokenize", 0.0);
    if (!st) st = al_api_read_inputs(ctx, model, add_special, &lim, &in, err);
    if (st) {
        al_api_policies_free(&pol);
        return st;
    }
    al_api_progress(ctx->params, "tokenize", 1.0);

    const int L = al_batch_run_length(in.examples, in.n_seqs, lim.pad_to);
    const int B = in.n_seqs, NL = cfg->n_layers, H = cfg->n_heads, D = cfg->hidden_size;
    const int hd = cfg->head_dim, V = cfg->vocab_size;

    /* Reply tensors in their documented order: the batch, then the outputs the runner writes into. */
    al_reply_builder *rb = ctx->rb;
    batch_copy bc = {NULL, NULL, NULL};
    al_batch_run_params rp = al_batch_run_default_params();
    rp.pool = ctx->session->pool;
    void *data;
    const int64_t shape_bl[2] = {B, L};
    st = al_rb_tensor(rb, "input_ids", "I32", 2, shape_bl, &data, err);
    bc.ids = data;
    if (!st) st = al_rb_tensor(rb, "attention_mask", "I32", 2, shape_bl, &data, err);
    bc.mask = data;
    /* Type ids come from the encodings (pairs); given ids and DistilBERT use all-0 types. */
    if (!st && in.from_text && cfg->type_vocab_size > 0) {
        st = al_rb_tensor(rb, "type_ids", "I32", 2, shape_bl, &data, err);
        bc.types = data;
    }
    if (!st && (flags & AL_RUN_ATTENTIONS)) {
        int64_t shape[5] = {NL, B, H, L, L};
        st = al_rb_tensor(rb, "attentions", "F32", 5, shape, &data, err);
        rp.dest.attentions = data;
    }
    if (!st && (flags & AL_RUN_HIDDEN)) {
        int64_t shape[4] = {NL + 1, B, L, D};
        st = al_rb_tensor(rb, "hidden_states", "F32", 4, shape, &data, err);
        rp.dest.hidden_states = data;
    }
    if (!st && (flags & AL_RUN_LAST_HIDDEN)) {
        int64_t shape[3] = {B, L, D};
        st = al_rb_tensor(rb, "last_hidden_state", "F32", 3, shape, &data, err);
        rp.dest.last_hidden_state = data;
    }
    if (!st && (flags & AL_RUN_VALUES)) {
        int64_t shape[5] = {NL, B, H, L, hd};
        st = al_rb_tensor(rb, "values", "F32", 5, shape, &data, err);
        rp.dest.values = data;
    }
    if (!st && (flags & AL_RUN_MLM)) {
        int64_t shape[3] = {B, L, V};
        st = al_rb_tensor(rb, "mlm_logits", "F32", 3, shape, &data, err);
        rp.dest.mlm_logits = data;
    }
    if (!st) {
        layer_progress lp = {ctx->params, NL};
        rp.policies = pol.heads;
        rp.outputs = flags;
        rp.pad_to = L;
        rp.progress = ctx->params->progress ? report_layers : NULL;
        rp.progress_user = &lp;
        rp.cancel = ctx->params->cancel;
        rp.who = "attention";
        st = al_batch_run(model, in.examples, B, &rp, copy_batch, &bc, err);
    }
    if (!st) {
        al_rb_str(rb, rb->root, "model", m->id);
        al_rb_num(rb, rb->root, "n_seqs", B);
        al_rb_num(rb, rb->root, "seq_len", L);
        al_rb_num(rb, rb->root, "n_layers", NL);
        al_rb_num(rb, rb->root, "n_heads", H);
        al_rb_num(rb, rb->root, "head_dim", hd);
        al_rb_num(rb, rb->root, "hidden_size", D);
        describe_sequences(rb, model, &in, bc.ids, L);
    }
    al_api_inputs_free(&in);
    al_api_policies_free(&pol);
    return st;
}
