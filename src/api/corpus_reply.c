/* corpus_reply.c: a corpus from a request and its loss into a reply (corpus_reply.h). */
#include "corpus_reply.h"

#include <math.h>

#include "../core/det_math.h"
#include "../core/error.h"

#define LN2 0.69314718055994530942

static double bits(double nats) { return nats / LN2; }

al_status al_api_require_causal(const al_api_model *m, al_error *err) {
    if (al_model_is_causal(m->model)) return AL_OK;
    return al_err(err, AL_ERR_INVALID, "request: field 'model': '%s' is %s, not a causal language model (gpt2, "
                  "llama, qwen2, gpt_neox)", m->id, al_arch_name(al_model_config(m->model)->arch));
}

al_status al_api_read_corpus(const al_op_ctx *ctx, const al_api_model *m, al_lm_corpus *out, const char **label,
                             al_error *err) {
    return al_api_read_corpus_window(ctx, m, al_api_max_tokens(m->model), out, label, err);
}

al_status al_api_read_corpus_window(const al_op_ctx *ctx, const al_api_model *m, int window, al_lm_corpus *out,
                                    const char **label, al_error *err) {
    const char *corpus, *corpus_name;
    al_status st = al_req_string(ctx->req, "corpus", "corpus", 1, &corpus, err);
    if (!st) st = al_req_string(ctx->req, "corpus_name", "corpus_name", 0, &corpus_name, err);
    if (st) return st;
    if (!al_model_tokenizer(m->model))
        return al_err(err, AL_ERR_INVALID, "request: field 'corpus': model '%s' has no tokenizer files", m->id);
    *label = corpus_name ? corpus_name : "corpus";
    return al_lm_corpus_build(m->model, corpus, *label, window, out, err);
}

void al_api_put_lm_summary(al_reply_builder *rb, cJSON *obj, const al_lm_summary *s) {
    al_rb_num(rb, obj, "documents", s->documents);
    al_rb_num(rb, obj, "tokens_predicted", (double)s->tokens);
    al_rb_num(rb, obj, "cross_entropy_nats", s->nats);
    al_rb_num(rb, obj, "bits_per_token", bits(s->nats));
    al_rb_num(rb, obj, "perplexity", al_det_exp(s->nats));
    if (s->documents >= 2 && isfinite(s->lo)) {
        cJSON *ci = al_rb_add(rb, obj, "bits_per_token_ci95", cJSON_CreateArray());
        al_rb_add(rb, ci, NULL, cJSON_CreateNumber(bits(s->lo)));
        al_rb_add(rb, ci, NULL, cJSON_CreateNumber(bits(s->hi)));
        cJSON *pi = al_rb_add(rb, obj, "perplexity_ci95", cJSON_CreateArray());
        al_rb_add(rb, pi, NULL, cJSON_CreateNumber(al_det_exp(s->lo)));
        al_rb_add(rb, pi, NULL, cJSON_CreateNumber(al_det_exp(s->hi)));
    }
    al_rb_str(rb, obj, "interval", s->documents >= 2 ? "95%, ratio estimator over documents, Student t"
                                                      : "none: one document");
}

void al_api_put_corpus_loss(al_reply_builder *rb, cJSON *obj, const al_lm_corpus_loss *loss) {
    al_api_put_lm_summary(rb, al_rb_add(rb, obj, "summary", cJSON_CreateObject()), &loss->summary);
    cJSON *by = al_rb_add(rb, obj, "bits_by_position", cJSON_CreateArray());
    int last = loss->window; /* the positions after the last one any window reaches are left off */
    while (last > 0 && loss->pos_tokens[last - 1] == 0) last--;
    for (int i = 0; by && i < last; i++)
        al_rb_add(rb, by, NULL, loss->pos_tokens[i] ? cJSON_CreateNumber(bits(loss->pos_nll[i] / (double)loss->pos_tokens[i]))
                                                   : cJSON_CreateNull());
}
