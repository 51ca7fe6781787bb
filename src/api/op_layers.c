/* op_layers.c: the "layers" op (docs/decoders.md, "Dropped attention blocks"): on a causal model and a corpus, each
 * attention block's input-output similarity (over the corpus's windows, or a calibration text's), the order that
 * drops the most similar first, and the corpus's perplexity with 0, 1, ..., NL blocks of that order dropped, each
 * block dropped alone, and each layer's heads made constant with a caller's constants (layer_drop.h). */
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../methods/layers/layer_drop.h"
#include "corpus_reply.h"

/* Windows per forward (the bits do not depend on it: lm_corpus.h). */
#define LAYERS_BATCH 8

const al_req_field al_fields_layers_own[] = {
    AL_F_STRING("calibration", NULL, "a text (documents as in corpus) whose windows measure the blocks' similarity "
                                     "instead of the corpus's"),
    AL_F_INT("calibration_windows", 0, 1 << 24, "0", "the similarity over the first N windows only; 0: all"),
    AL_F_BOOL("alone", "true", "also each attention block dropped alone"),
    AL_F_STRING("constants", NULL, "an attached tensor [NL, H, L, L] (L at least the longest window): each layer's "
                                   "heads made constant with it in turn (all ones: uniform over the prefix)"),
    AL_F_END,
};

/* The op's progress: run `at` of n_runs, its own fraction inside. */
typedef struct runs_progress {
    const al_run_params *params;
    int at, n_runs;
} runs_progress;

static void on_progress(void *user, const char *stage, double fraction) {
    runs_progress *rp = user;
    al_api_progress(rp->params, stage, (rp->at + fraction) / rp->n_runs);
}

/* One scored run: {"layer" or the dropped layers, "summary", "bits_by_position"}. */
static cJSON *put_run(al_reply_builder *rb, cJSON *list, const al_lm_corpus_loss *loss) {
    cJSON *o = al_rb_add(rb, list, NULL, cJSON_CreateObject());
    if (o) al_api_put_corpus_loss(rb, o, loss);
    return o;
}

/* The constants tensor named by the request, checked against the model and the corpus's longest window. */
static al_status read_constants(const al_op_ctx *ctx, const al_model *model, const al_lm_corpus *c,
                                const al_api_tensor **out, al_error *err) {
    const char *name;
    *out = NULL;
    al_status st = al_req_string(ctx->req, "constants", "constants", 0, &name, err);
    if (st || !name) return st;
    const al_api_tensor *t = al_api_find_tensor(ctx->session, name);
    if (!t) return al_err(err, AL_ERR_INVALID, "request: field 'constants': no attached tensor named '%.64s'", name);
    const al_config *cfg = al_model_config(model);
    int longest = 0;
    for (int w = 0; w < c->n_windows; w++) longest = c->len[w] > longest ? c->len[w] : longest;
    if (t->ndim != 4 || t->shape[0] != cfg->n_layers || t->shape[1] != cfg->n_heads || t->shape[2] != t->shape[3] ||
        t->shape[2] < longest)
        return al_err(err, AL_ERR_INVALID, "request: field 'constants': tensor '%.64s' must be [%d, %d, L, L] with L >= "
                      "%d (the corpus's longest window)", name, cfg->n_layers, cfg->n_heads, longest);
    *out = t;
    return AL_OK;
}

/* Layer l's constants [H, Lc, Lc] as [H, W, W] (W the corpus's window): the top-left block, zeros beyond Lc (no
 * window reads them). */
static void layer_constants(const al_api_tensor *t, int l, int H, int W, float *out) {
    const int Lc = (int)t->shape[2], n = Lc < W ? Lc : W;
    memset(out, 0, sizeof(float) * (size_t)H * W * W);
    for (int h = 0; h < H; h++)
        for (int i = 0; i < n; i++)
            memcpy(out + ((size_t)h * W + i) * W, t->data + (((size_t)l * H + h) * Lc + i) * Lc, sizeof(float) * (size_t)n);
}

al_status al_op_layers(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    const char *label, *calibration;
    int calib_windows, alone;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (!st) st = al_api_require_causal(m, err);
    if (!st) st = al_req_string(ctx->req, "calibration", "calibration", 0, &calibration, err);
    if (!st) st = al_req_int(ctx->req, "calibration_windows", "calibration_windows", 0, 0, 0, 1 << 24, &calib_windows, err);
    if (!st) st = al_req_bool(ctx->req, "alone", "alone", 1, &alone, err);
    if (st) return st;
    const al_model *model = m->model;
    const al_config *cfg = al_model_config(model);
    const int NL = cfg->n_layers, H = cfg->n_heads;
    al_lm_corpus c = {0}, calib = {0};
    if ((st = al_api_read_corpus(ctx, m, &c, &label, err))) return st;
    const al_api_tensor *constants = NULL;
    if (calibration) st = al_lm_corpus_build(model, calibration, "calibration", c.window, &calib, err);
    if (!st) st = read_constants(ctx, model, &c, &constants, err);
    if (st) {
        al_lm_corpus_free(&c), al_lm_corpus_free(&calib);
        return st;
    }
    al_op_warn_unknown(ctx);
    const al_lm_corpus *sim_corpus = calibration ? &calib : &c;

    double *cos = malloc(sizeof(double) * (size_t)NL);
    int *order = malloc(sizeof(int) * (size_t)NL);
    unsigned char *dropped = calloc((size_t)NL, 1);
    float *layer_c = constants ? malloc(sizeof(float) * (size_t)H * c.window * c.window) : NULL;
    al_lm_corpus_loss loss = {0};
    if (!cos || !order || !dropped || (constants && !layer_c)) st = al_err(err, AL_ERR_OOM, "layers: out of memory");
    if (!st) st = al_lm_corpus_loss_new(&c, &loss, err);

    runs_progress rp = {ctx->params, 0, 1 + (NL + 1) + (alone ? NL : 0) + (constants ? NL : 0)};
    al_forward_params p = al_forward_default_params();
    p.pool = ctx->session->pool;
    p.cancel = ctx->params->cancel;
    p.progress = on_progress;
    p.progress_user = &rp;
    long long tokens = 0;
    if (!st) st = al_layer_similarity(model, sim_corpus, calib_windows, &p, cos, &tokens, err);
    rp.at++;
    al_reply_builder *rb = ctx->rb;
    if (!st) {
        al_layer_order(cos, NL, order);
        al_rb_str(rb, rb->root, "model", m->id);
        al_rb_str(rb, rb->root, "corpus_name", label);
        al_rb_num(rb, rb->root, "window", c.window);
        al_rb_num(rb, rb->root, "windows", c.n_windows);
        cJSON *cal = al_rb_add(rb, rb->root, "calibration", cJSON_CreateObject());
        const int used = calib_windows > 0 && calib_windows < sim_corpus->n_windows ? calib_windows : sim_corpus->n_windows;
        al_rb_str(rb, cal, "source", calibration ? "calibration" : "corpus");
        al_rb_num(rb, cal, "windows", used);
        al_rb_num(rb, cal, "tokens", (double)tokens);
        cJSON *sim = al_rb_add(rb, rb->root, "similarity", cJSON_CreateArray());
        cJSON *imp = al_rb_add(rb, rb->root, "importance", cJSON_CreateArray());
        for (int l = 0; l < NL; l++) {
            al_rb_add(rb, sim, NULL, cJSON_CreateNumber(cos[l]));
            al_rb_add(rb, imp, NULL, cJSON_CreateNumber(1.0 - cos[l]));
        }
        al_rb_int_array(rb, rb->root, "order", order, NL);
    }
    cJSON *curve = st ? NULL : al_rb_add(rb, rb->root, "dropped", cJSON_CreateArray());
    for (int k = 0; !st && k <= NL; k++, rp.at++) { /* the first k blocks of the order dropped */
        if (k > 0) dropped[order[k - 1]] = 1;
        st = al_layer_drop_score(model, &c, dropped, &p, LAYERS_BATCH, &loss, err);
        cJSON *o = st ? NULL : put_run(rb, curve, &loss);
        if (o) al_rb_num(rb, o, "n_dropped", k), al_rb_int_array(rb, o, "layers", order, k);
    }
    cJSON *one = !st && alone ? al_rb_add(rb, rb->root, "alone", cJSON_CreateArray()) : NULL;
    for (int l = 0; !st && alone && l < NL; l++, rp.at++) {
        memset(dropped, 0, (size_t)NL);
        dropped[l] = 1;
        st = al_layer_drop_score(model, &c, dropped, &p, LAYERS_BATCH, &loss, err);
        cJSON *o = st ? NULL : put_run(rb, one, &loss);
        if (o) al_rb_num(rb, o, "layer", l);
    }
    cJSON *cons = !st && constants ? al_rb_add(rb, rb->root, "constant", cJSON_CreateArray()) : NULL;
    if (cons) al_rb_str(rb, rb->root, "constants", constants->name);
    for (int l = 0; !st && constants && l < NL; l++, rp.at++) {
        layer_constants(constants, l, H, c.window, layer_c);
        st = al_layer_constant_score(model, &c, l, layer_c, &p, LAYERS_BATCH, &loss, err);
        cJSON *o = st ? NULL : put_run(rb, cons, &loss);
        if (o) al_rb_num(rb, o, "layer", l);
    }
    free(cos), free(order), free(dropped), free(layer_c);
    al_lm_corpus_loss_free(&loss);
    al_lm_corpus_free(&c), al_lm_corpus_free(&calib);
    return st;
}
