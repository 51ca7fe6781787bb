/* op_head_steps.c: the "head_steps" op: one head of one layer for one query token, step by step
 * (src/methods/explain/head_steps.h, docs/head_steps.md), for the page's "explain a head" view.
 *
 *   {"op": "head_steps", "model", "text" | "input_ids", "text_pair"?, "layer", "head", "query",
 *    "pad_to"?, "max_length"?, "add_special_tokens"?}
 *   -> F32 tensors "query" [dh], "keys" [L, dh], "values" [L, dh], "scores" [L] (q . k),
 *      "scaled" [L] (/ sqrt(dh)), "mask_add" [L] (0 or -10000), "weights" [L] (the softmax),
 *      "attention_row" [L] (the same row as the forward's attention output, for comparison),
 *      "context" [dh] (sum of weights x values), "output" [hidden] (W_O's head columns x context),
 *      "effective" [L], "invisible" [L] (weights - effective: times the values gives 0);
 *      "excluded" [L] (1 where the rule leaves the key out), "rel_distance" [L] (query - j; DeBERTa: its
 *      bucket), and for DeBERTa "c2c", "c2p", "p2c" [L] (the three unscaled terms, summing to "scores");
 *      JSON: layer, head, query, seq_len, n_tokens, head_dim, hidden_size, scale (what scores are
 *      multiplied by: 1/sqrt(dh), DeBERTa 1/sqrt(dh (1 + terms))), rank, score_rule ("scaled_dot",
 *      "disentangled", "rotary_window"), for DeBERTa terms (the names of its terms), for ModernBERT
 *      rotary_base and window (-1 global), truncated, tokens, word_ids, type_ids. docs/head_steps.md. */
#include <math.h>
#include <string.h>

#include "../core/error.h"
#include "../methods/explain/head_steps.h"
#include "../model/family.h"
#include "../model/family_params.h"
#include "../model/score_rule.h"
#include "attention_parts.h"

typedef struct steps_job {
    const al_model *model;
    int layer, head, query;
    al_head_steps_out out;
    float *attention_row;
} steps_job;

static al_status on_chunk(void *user, const al_run_chunk *c, al_error *err) {
    steps_job *j = user;
    const al_config *cfg = al_model_config(j->model);
    const int L = c->L, H = cfg->n_heads;
    const float *x = c->hidden_states + (size_t)j->layer * L * cfg->hidden_size; /* B = 1 */
    const float *row = c->attentions + (((size_t)j->layer * H + j->head) * L + j->query) * L;
    memcpy(j->attention_row, row, sizeof(float) * (size_t)L);
    return al_head_steps(j->model, j->layer, j->head, j->query, x, c->mask, L, &j->out, err);
}

/* Reads an int field that must be present, naming it. */
static al_status req_index(const cJSON *req, const char *key, int max, int *out, al_error *err) {
    return al_req_int(req, key, key, 1, 0, 0, max, out, err);
}

const al_req_field al_fields_head_steps_own[] = {
    AL_F_INT("layer", 1, 0, NULL, "the layer (required; 0 to the model's layers - 1)"),
    AL_F_INT("head", 1, 0, NULL, "the head (required; 0 to the model's heads - 1)"),
    AL_F_INT("query", 0, 1 << 24, NULL, "the query token's position (required)"),
    AL_F_END,
};

al_status al_op_head_steps(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    int add_special, pad_to, max_length;
    steps_job job = {0};
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (st) return st;
    const al_config *cfg = al_model_config(m->model);
    st = al_req_bool(ctx->req, "add_special_tokens", "add_special_tokens", 1, &add_special, err);
    if (!st) st = req_index(ctx->req, "layer", cfg->n_layers - 1, &job.layer, err);
    if (!st) st = req_index(ctx->req, "head", cfg->n_heads - 1, &job.head, err);
    if (!st) st = req_index(ctx->req, "query", 1 << 24, &job.query, err);
    if (!st) st = al_req_int(ctx->req, "max_length", "max_length", 0, 0, 1, 1 << 24, &max_length, err);
    if (!st) st = al_req_int(ctx->req, "pad_to", "pad_to", 0, 0, 1, 1 << 24, &pad_to, err);
    if (st) return st;
    if (cJSON_GetObjectItem(ctx->req, "texts") || cJSON_GetObjectItem(ctx->req, "text_pairs"))
        return al_err(err, AL_ERR_INVALID,
                      "request: field 'texts': head_steps explains one sequence; give 'text' (and 'text_pair')");
    al_op_warn_unknown(ctx);
    al_api_limits lim;
    st = al_api_limits_make(m->model, pad_to, max_length, 0, NULL, &lim, err);
    al_api_inputs in = {0};
    if (!st) st = al_api_read_inputs(ctx, m->model, add_special, &lim, &in, err);
    if (st) return st;
    if (in.n_seqs != 1) {
        al_api_inputs_free(&in);
        return al_err(err, AL_ERR_INVALID, "request: field 'input_ids': head_steps explains one sequence, got %d",
                      in.n_seqs);
    }
    const int n = in.seqs[0].n_tokens;
    if (job.query >= n) {
        al_api_inputs_free(&in);
        return al_err(err, AL_ERR_INVALID, "request: field 'query': %d is outside the %d tokens 0..%d",
                      job.query, n, n - 1);
    }
    const int L = al_batch_run_length(in.examples, 1, lim.pad_to);
    const int dh = cfg->head_dim, D = cfg->hidden_size;
    job.model = m->model;
    al_reply_builder *rb = ctx->rb;
    struct { const char *name; int64_t rows, cols; float **dst; } t[] = {
        {"query", dh, 0, &job.out.query},          {"keys", L, dh, &job.out.keys},
        {"values", L, dh, &job.out.values},        {"scores", L, 0, &job.out.scores},
        {"scaled", L, 0, &job.out.scaled},         {"mask_add", L, 0, &job.out.mask_add},
        {"weights", L, 0, &job.out.weights},       {"attention_row", L, 0, &job.attention_row},
        {"context", dh, 0, &job.out.context},      {"output", D, 0, &job.out.output},
        {"effective", L, 0, &job.out.effective},   {"invisible", L, 0, &job.out.invisible},
        {"excluded", L, 0, &job.out.excluded},     {"rel_distance", L, 0, &job.out.rel_bucket},
        {"c2c", L, 0, &job.out.c2c},               {"c2p", L, 0, &job.out.c2p},
        {"p2c", L, 0, &job.out.p2c},
    };
    const al_score_rule *rule = al_score_rule_of(cfg);
    const size_t n_tensors = sizeof t / sizeof t[0] - (rule->terms ? 0 : 3);
    for (size_t i = 0; !st && i < n_tensors; i++) {
        const int64_t shape[2] = {t[i].rows, t[i].cols};
        void *data;
        st = al_rb_tensor(rb, t[i].name, "F32", t[i].cols ? 2 : 1, shape, &data, err);
        *t[i].dst = data;
    }
    if (!st) {
        al_batch_run_params rp = al_batch_run_default_params();
        rp.outputs = AL_RUN_HIDDEN | AL_RUN_ATTENTIONS;
        rp.pad_to = L;
        rp.cancel = ctx->params->cancel;
        rp.who = "head_steps";
        st = al_batch_run(m->model, in.examples, 1, &rp, on_chunk, &job, err);
    }
    if (!st) {
        const al_api_seq *seq = &in.seqs[0];
        al_rb_str(rb, rb->root, "model", m->id);
        al_rb_num(rb, rb->root, "layer", job.layer);
        al_rb_num(rb, rb->root, "head", job.head);
        al_rb_num(rb, rb->root, "query", job.query);
        al_rb_num(rb, rb->root, "seq_len", L);
        al_rb_num(rb, rb->root, "n_tokens", n);
        al_rb_num(rb, rb->root, "head_dim", dh);
        al_rb_num(rb, rb->root, "hidden_size", D);
        al_rb_num(rb, rb->root, "scale", job.out.scale);
        al_rb_str(rb, rb->root, "score_rule", rule->name);
        if (rule->terms) {
            cJSON *terms = cJSON_CreateArray();
            cJSON_AddItemToArray(terms, cJSON_CreateString("c2c"));
            if (al_deberta(cfg)->rel_span && (al_deberta(cfg)->pos_att & 1)) cJSON_AddItemToArray(terms, cJSON_CreateString("c2p"));
            if (al_deberta(cfg)->rel_span && (al_deberta(cfg)->pos_att & 2)) cJSON_AddItemToArray(terms, cJSON_CreateString("p2c"));
            al_rb_add(rb, rb->root, "terms", terms);
        }
        if (job.out.rotary_base > 0.0) { /* a turning rule's base and window */
            al_rb_num(rb, rb->root, "rotary_base", job.out.rotary_base);
            al_rb_num(rb, rb->root, "window", job.out.window);
        }
        if (al_model_is_causal(m->model)) { /* docs/head_steps.md, "Decoders" */
            const int group = cfg->n_heads / al_kv_heads(cfg);
            al_rb_bool(rb, rb->root, "causal", 1);
            al_rb_num(rb, rb->root, "visible_keys", job.query + 1);
            al_rb_num(rb, rb->root, "n_kv_heads", al_kv_heads(cfg));
            al_rb_num(rb, rb->root, "kv_head", job.head / group);
            al_rb_num(rb, rb->root, "rotary_dims", al_decoder(cfg)->rotary_dims);
        }
        al_rb_num(rb, rb->root, "rank", job.out.rank);
        al_rb_bool(rb, rb->root, "truncated", seq->truncated);
        const int32_t *ids = in.from_text ? seq->enc.ids : seq->raw_ids;
        al_rb_add(rb, rb->root, "tokens", al_api_token_strings(al_model_tokenizer(m->model), ids, n));
        if (in.from_text) {
            al_rb_int_array(rb, rb->root, "word_ids", seq->enc.word_ids, n);
            al_rb_int_array(rb, rb->root, "type_ids", seq->enc.type_ids, n);
        }
    }
    al_api_inputs_free(&in);
    return st;
}
