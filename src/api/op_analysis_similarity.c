/* op_analysis_similarity.c: the "attention_similarity" op: cosine similarity per layer and head
 * between the attention of two loaded models with the same architecture on the same inputs
 * (Sun & Marasovic Figure 3: pretrained vs fine-tuned), standard and effective.
 *
 *   {"op": "attention_similarity", "model", "model_b", "texts" | "text" | "input_ids" (+ pairs),
 *    "mode"?, "average"?: "exact" (real tokens, mean over examples) | "paper" (whole padded L x L,
 *    mean per batch then over batches), "pad_to"?, "max_length"?, "batch_size"? (default 8)}
 *   -> "standard", "effective": [NL][H], "n_examples". Inputs are tokenized with "model"'s
 *      tokenizer; both models must have the same layers, heads and vocabulary size. */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "op_analysis.h"

typedef struct sim_state {
    int NL, H, n_examples;
    al_average avg;
    double *sums[2];
    double count[2];
} sim_state;

static al_status sim_chunk(void *user, const al_run_chunk *c, al_error *err) {
    sim_state *s = user;
    al_status st = al_attention_cosine(c->attentions, c->attentions_b, s->NL, c->B, s->H, c->L, c->mask, s->avg,
                                       s->sums[0], &s->count[0], err);
    if (!st)
        st = al_attention_cosine(c->effective, c->effective_b, s->NL, c->B, s->H, c->L, c->mask, s->avg,
                                 s->sums[1], &s->count[1], err);
    s->n_examples += c->B;
    return st;
}

const al_req_field al_fields_similarity_own[] = {
    AL_F_STRING("model_b", NULL, "the second loaded model (same layers, heads and vocabulary)"),
    AL_F_END,
};

al_status al_op_attention_similarity(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m, *mb;
    const char *id_b;
    al_an_opts o;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (!st) st = al_req_string(ctx->req, "model_b", "model_b", 1, &id_b, err);
    if (st) return st;
    mb = al_api_find_model(ctx->session, id_b);
    if (!mb)
        return al_err(err, AL_ERR_INVALID, "request: field 'model_b': no model loaded as '%.100s'",
                      id_b);
    st = al_an_read_opts(ctx, 8, &o, err);
    if (st) return st;
    al_op_warn_unknown(ctx);
    const al_config *ca = al_model_config(m->model), *cb = al_model_config(mb->model);
    if (ca->n_layers != cb->n_layers || ca->n_heads != cb->n_heads || ca->head_dim != cb->head_dim ||
        ca->vocab_size != cb->vocab_size)
        return al_err(err, AL_ERR_INVALID,
                      "request: field 'model_b': '%s' (%d layers, %d heads of %d, vocab %d) does not "
                      "match '%s' (%d layers, %d heads of %d, vocab %d)",
                      mb->id, cb->n_layers, cb->n_heads, cb->head_dim, cb->vocab_size, m->id,
                      ca->n_layers, ca->n_heads, ca->head_dim, ca->vocab_size);
    al_api_inputs in;
    st = al_an_read_inputs(ctx, m->model, &o, &in, err);
    if (st) return st;
    const int L = al_an_length(&in, &o);
    if (L > al_api_max_tokens(mb->model))
        st = al_err(err, AL_ERR_INVALID, "request: field 'model_b': '%s' has only %d positions, the "
                    "batch needs %d", mb->id, al_api_max_tokens(mb->model), L);
    sim_state s = {ca->n_layers, ca->n_heads, 0, o.average, {NULL, NULL}, {0, 0}};
    s.sums[0] = calloc((size_t)s.NL * s.H, sizeof(double));
    s.sums[1] = calloc((size_t)s.NL * s.H, sizeof(double));
    if (!st && (!s.sums[0] || !s.sums[1]))
        st = al_err(err, AL_ERR_OOM, "attention_similarity: out of memory");
    if (!st) st = al_an_run(ctx, m->model, mb->model, &in, &o, sim_chunk, &s, err);
    if (!st) {
        al_reply_builder *rb = ctx->rb;
        al_rb_str(rb, rb->root, "model", m->id);
        al_rb_str(rb, rb->root, "model_b", mb->id);
        al_rb_str(rb, rb->root, "mode", o.mode == AL_EFFECTIVE_PAPER ? "paper" : "exact");
        al_rb_str(rb, rb->root, "average", o.average == AL_AVERAGE_PAPER ? "paper" : "exact");
        al_rb_num(rb, rb->root, "n_examples", s.n_examples);
        al_an_matrix(rb, rb->root, "standard", s.sums[0], s.NL, s.H, s.count[0]);
        al_an_matrix(rb, rb->root, "effective", s.sums[1], s.NL, s.H, s.count[1]);
    }
    free(s.sums[0]), free(s.sums[1]);
    al_api_inputs_free(&in);
    return st;
}
