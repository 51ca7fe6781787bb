/* lm_heads.c: a causal model's heads measured over a corpus: the texts, the shared-documents warning, the constants and
 * lambdas through the session cache, the reply's identity (lm_heads.h). */
#include "lm_heads.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../methods/papa/papa_lm.h"
#include "experiment_setup.h"
#include "op_heads.h"
#include "papa_cache.h"
#include "reply_digest.h"

const al_req_field al_fields_lm_constants[] = {
    AL_F_STRING("constants_corpus", NULL, "the text the causal constants, the lambdas and the gradient come from (kept "
                                          "apart from 'corpus': shared documents are named in a warning)"),
    AL_F_STRING("constants_corpus_name", NULL, "its file name, for the reply"),
    AL_F_INT("min_windows", 1, 1 << 20, "4", "a causal constant's row reached by fewer windows is the uniform prefix"),
    AL_F_END,
};

static void text_hash(const char *text, char out[72]) {
    char hex[65];
    al_sha256_hex_of(text, strlen(text), hex);
    snprintf(out, 72, "sha256:%s", hex);
}

/* How many documents of the scored text occur, verbatim, among the averaged text's: the two must not overlap
 * silently (docs/papa.md, "Causal language models"). */
static al_status count_shared_documents(const char *scored, const char *averaged, int *shared, al_error *err) {
    char **a = NULL, **b = NULL;
    int na = 0, nb = 0;
    *shared = 0;
    al_status st = al_lm_split_documents(scored, "corpus", &a, &na, err);
    if (!st) st = al_lm_split_documents(averaged, "constants_corpus", &b, &nb, err);
    for (int i = 0; !st && i < na; i++)
        for (int j = 0; j < nb; j++)
            if (!strcmp(a[i], b[j])) {
                ++*shared;
                break;
            }
    al_lm_documents_free(a, na);
    al_lm_documents_free(b, nb);
    return st;
}

al_status al_lm_warn_shared_documents(al_reply_builder *rb, const char *scored, const char *averaged, int n_docs,
                                      const char *label, const char *alabel, al_error *err) {
    int shared = 0;
    al_status st = count_shared_documents(scored, averaged, &shared, err);
    if (!st && shared)
        al_rb_warn(rb, "constants_corpus: %d of the %d documents of '%s' are also in '%s': the constants were averaged "
                   "over text the sweep scores", shared, n_docs, label, alabel);
    return st;
}

void al_lm_warn_task_fields(const al_op_ctx *ctx, const char *what) {
    static const char *const probe_fields[] = {"seeds", "probe", "mlm", "layout", "max_train", "max_validation",
                                               "constants_examples", "preset", NULL};
    for (int i = 0; probe_fields[i]; i++) /* a task's fields, read by the table, mean nothing here: say so */
        if (cJSON_GetObjectItemCaseSensitive(ctx->req, probe_fields[i]))
            al_rb_warn(ctx->rb, "field '%s' applies to a task's probes, not to a language model's %s: ignored",
                       probe_fields[i], what);
}

void al_lm_heads_free(al_lm_heads *x) {
    al_lm_corpus_free(&x->scored);
    al_lm_corpus_free(&x->averaged);
    al_papa_inputs_free(&x->val);
}

/* The scored windows as inputs: ids as they are, the mask their real tokens, no type ids. */
static al_status windows_as_inputs(const al_lm_corpus *c, al_papa_inputs *in, al_error *err) {
    const size_t n = (size_t)c->n_windows * c->window;
    memset(in, 0, sizeof *in);
    in->n = c->n_windows;
    in->L = c->window;
    in->ids = malloc(sizeof(int32_t) * (n ? n : 1));
    in->mask = malloc(sizeof(int32_t) * (n ? n : 1));
    in->type_ids = calloc(n ? n : 1, sizeof(int32_t));
    if (!in->ids || !in->mask || !in->type_ids) return al_err(err, AL_ERR_OOM, "out of memory for %d windows", c->n_windows);
    memcpy(in->ids, c->ids, sizeof(int32_t) * n);
    for (int w = 0; w < c->n_windows; w++)
        for (int i = 0; i < c->window; i++) in->mask[(size_t)w * c->window + i] = i < c->len[w];
    return AL_OK;
}

al_status al_lm_heads_open(al_op_ctx *ctx, const char *who, al_lm_heads *x, al_error *err) {
    memset(x, 0, sizeof *x);
    const char *corpus_name = NULL, *averaged_name = NULL, *task = NULL;
    al_status st = al_req_model(ctx->session, ctx->req, &x->m, err);
    if (!st) st = al_req_string(ctx->req, "corpus", "corpus", 1, &x->corpus, err);
    if (!st) st = al_req_string(ctx->req, "corpus_name", "corpus_name", 0, &corpus_name, err);
    if (!st) st = al_req_string(ctx->req, "constants_corpus", "constants_corpus", 0, &x->averaged_text, err);
    if (!st) st = al_req_string(ctx->req, "constants_corpus_name", "constants_corpus_name", 0, &averaged_name, err);
    if (!st) st = al_req_int(ctx->req, "min_windows", "min_windows", 0, AL_PAPA_LM_MIN_WINDOWS, 1, 1 << 20,
                             &x->min_windows, err);
    if (!st) st = al_req_string(ctx->req, "task", "task", 0, &task, err);
    if (st) return st;
    if (task || cJSON_GetObjectItemCaseSensitive(ctx->req, "task_jsonl") || cJSON_GetObjectItemCaseSensitive(ctx->req, "import"))
        return al_err(err, AL_ERR_INVALID, "request: field 'corpus': give a task (probes on the hidden states) or a "
                      "corpus (the language-model loss), not both");
    const al_model *model = x->m->model;
    if (!al_model_is_causal(model))
        return al_err(err, AL_ERR_INVALID, "request: field 'corpus': model '%s' is %s, not a causal language model "
                      "(%s measures an encoder over a task)", x->m->id, al_arch_name(al_model_config(model)->arch), who);
    if (!al_model_tokenizer(model))
        return al_err(err, AL_ERR_INVALID, "request: field 'corpus': model '%s' has no tokenizer files", x->m->id);
    if (!x->averaged_text) /* the lambdas and the constants never come from the scored text */
        return al_err(err, AL_ERR_INVALID, "request: field 'constants_corpus': the lambda order needs a text to average "
                      "over (a window of 2 tokens or more)");
    if ((st = al_experiment_read_fields(ctx->req, &x->q, err))) return st;
    x->q.importance_examples = x->q.rank.max_examples; /* the gradient's windows: the ranking's, as the papa op's */
    const al_config *cfg = al_model_config(model);
    const int L_max = cfg->max_position_embeddings - cfg->position_offset;
    if (x->q.L < 4 || x->q.L > L_max)
        return al_err(err, AL_ERR_INVALID, "request: field 'L' = %d must be in [4, %d] for this model", x->q.L, L_max);
    x->label = corpus_name ? corpus_name : "corpus";
    x->alabel = averaged_name ? averaged_name : "constants_corpus";
    st = al_lm_corpus_build(model, x->corpus, x->label, x->q.L, &x->scored, err);
    if (!st) st = al_lm_corpus_build(model, x->averaged_text, x->alabel, x->q.L, &x->averaged, err);
    if (!st && x->averaged.n_windows < 1)
        st = al_err(err, AL_ERR_INVALID, "request: field 'constants_corpus': the lambda order needs a text to average "
                    "over (a window of 2 tokens or more)");
    if (!st && x->scored.n_windows < 1)
        st = al_err(err, AL_ERR_INVALID, "request: field 'corpus': no document of '%s' has 2 tokens or more", x->label);
    if (!st) st = al_lm_warn_shared_documents(ctx->rb, x->corpus, x->averaged_text, x->scored.n_docs, x->label, x->alabel, err);
    if (!st) st = windows_as_inputs(&x->scored, &x->val, err);
    if (st) {
        al_lm_heads_free(x);
        return st;
    }
    snprintf(x->model_hash, sizeof x->model_hash, "%s", al_api_model_hash(x->m));
    text_hash(x->corpus, x->corpus_hash);
    text_hash(x->averaged_text, x->averaged_hash);
    al_papa_lm_cache_keys(x->model_hash, x->averaged_hash, &x->q, x->min_windows, x->c_name, x->t_name);
    return AL_OK;
}

static al_forward_params forward_params(const al_op_ctx *ctx) {
    al_forward_params fp = al_forward_default_params(); /* the papa op's sweep's (papa_lm.c) */
    fp.progress = ctx->params->progress;
    fp.progress_user = ctx->params->progress_user;
    fp.cancel = ctx->params->cancel;
    fp.pool = ctx->session->pool;
    return fp;
}

al_status al_lm_heads_constants(const al_op_ctx *ctx, const al_lm_heads *x, const float **C, float **owned, int *reused,
                                al_error *err) {
    const al_config *cfg = al_model_config(x->m->model);
    const int NL = cfg->n_layers, H = cfg->n_heads, L = x->q.L;
    *owned = NULL;
    const al_api_tensor *cached = al_api_find_tensor(ctx->session, x->c_name);
    *reused = cached != NULL;
    if (cached) {
        *C = cached->data;
        return AL_OK;
    }
    float *c = malloc(sizeof(float) * (size_t)NL * H * L * L);
    if (!c) return al_err(err, AL_ERR_OOM, "out of memory for the constant matrices");
    const al_forward_params fp = forward_params(ctx);
    int rows_filled = 0;
    al_status st = al_papa_causal_constants(x->m->model, &x->averaged, x->min_windows, x->q.batch_size, &fp, c,
                                            &rows_filled, err);
    if (st) {
        free(c);
        return st;
    }
    if (rows_filled)
        al_rb_warn(ctx->rb, "constants: %d of the %d rows were reached by fewer than %d windows of '%s' and are the "
                   "uniform prefix (docs/papa.md, \"Causal language models\")", rows_filled, L, x->min_windows, x->alabel);
    const int64_t shape[4] = {NL, H, L, L};
    al_papa_cache_put(ctx->session, x->c_name, 4, shape, c);
    *C = *owned = c;
    return AL_OK;
}

al_status al_lm_heads_theta(const al_op_ctx *ctx, al_lm_heads *x, const float *C, float *theta, int *reused,
                            al_error *err) {
    const al_config *cfg = al_model_config(x->m->model);
    const int NH = cfg->n_layers * cfg->n_heads;
    const al_api_tensor *cached = al_api_find_tensor(ctx->session, x->t_name);
    *reused = cached != NULL;
    if (cached) {
        memcpy(theta, cached->data, sizeof(float) * (size_t)NH);
        return AL_OK;
    }
    const al_forward_params fp = forward_params(ctx);
    double loss = 0.0;
    al_status st = al_papa_lm_rank(x->m->model, &x->averaged, C, &x->q.rank, &fp, theta, &loss, NULL, err);
    float *stored = st ? NULL : malloc(sizeof(float) * ((size_t)NH + 1));
    if (stored) { /* the papa op's form: the logits, then the ranking loss */
        memcpy(stored, theta, sizeof(float) * (size_t)NH);
        stored[NH] = (float)loss;
        const int64_t shape[1] = {NH + 1};
        al_papa_cache_put(ctx->session, x->t_name, 1, shape, stored);
        free(stored);
    }
    return st;
}

al_status al_lm_heads_importance(const al_op_ctx *ctx, const al_lm_heads *x, int max_examples,
                                 struct al_head_importance *out, al_error *err) {
    const al_forward_params fp = forward_params(ctx);
    return al_papa_lm_importance(x->m->model, &x->averaged, max_examples, &fp, out, err);
}

void al_lm_heads_reply_identity(al_reply_builder *rb, const al_lm_heads *x) {
    const al_config *cfg = al_model_config(x->m->model);
    al_heads_reply_identity(rb, x->m->id, cfg->n_layers, cfg->n_heads, x->model_hash, x->corpus_hash + 7);
    cJSON *hashes = cJSON_GetObjectItemCaseSensitive(rb->root, "hashes");
    cJSON_DeleteItemFromObjectCaseSensitive(hashes, "task");
    al_rb_str(rb, hashes, "corpus", x->corpus_hash);
    al_rb_str(rb, hashes, "constants_corpus", x->averaged_hash);
}

void al_lm_heads_reply_texts(al_reply_builder *rb, cJSON *parent, const al_lm_heads *x) {
    al_rb_str(rb, parent, "corpus_name", x->label);
    al_rb_str(rb, parent, "constants_corpus_name", x->alabel);
    al_rb_num(rb, parent, "L", x->q.L);
    al_rb_num(rb, parent, "min_windows", x->min_windows);
    al_rb_num(rb, parent, "batch_size", x->q.batch_size);
}
