/* test_grad_golden.c: the C backward pass against PyTorch autograd (tests/golden_grad/make_grad_goldens.py):
 * a small random BERT with an MLM head in Hugging Face layout (tied decoder), a padded batch with fixed
 * labels, dropout off. For the standard model and for PAPA hooks (all-MIX layer, static MIX + CONSTANT +
 * STANDARD layer), the loss and every parameter's gradient (by its HF name) must match:
 * |loss - ref| < 1e-5 and max |grad - ref| / max |ref| < 1e-4 per tensor; lambda-logit gradients likewise.
 * Pretraining's sentence-order head (src/train/train_sop.c) on the same batch: MLM + sentence-order loss and
 * every gradient, the pooler's and the classifier's included (sop_grads.safetensors), to the same bounds. */
#include <string.h>

#include "check.h"
#include "golden_file.h"
#include "model/model_internal.h"
#include "train/train.h"

#define DIR "tests/golden_grad"

typedef struct named {
    char name[96];
    const float *p;
    size_t n;
} named;

/* The BERT state-dict names of the model's weights (the MLM decoder is tied: no entry of its own). */
static int bert_names(const al_model *m, named *out) {
    const al_config *c = &m->config;
    const al_weights *w = &m->w;
    const size_t V = c->vocab_size, D = c->hidden_size, I = c->intermediate_size;
    int k = 0;
#define ADD(ptr, cnt, ...)                                                  \
    do {                                                                    \
        snprintf(out[k].name, sizeof out[k].name, __VA_ARGS__);            \
        out[k].p = ptr;                                                     \
        out[k].n = cnt;                                                     \
        k++;                                                                \
    } while (0)
    ADD(w->word_emb, V * D, "bert.embeddings.word_embeddings.weight");
    ADD(w->pos_emb, (size_t)c->max_position_embeddings * D, "bert.embeddings.position_embeddings.weight");
    ADD(w->type_emb, (size_t)c->type_vocab_size * D, "bert.embeddings.token_type_embeddings.weight");
    ADD(w->emb_ln_g, D, "bert.embeddings.LayerNorm.weight");
    ADD(w->emb_ln_b, D, "bert.embeddings.LayerNorm.bias");
    for (int l = 0; l < c->n_layers; l++) {
        const al_layer_weights *lw = &w->layers[l];
        ADD(lw->q_w, D * D, "bert.encoder.layer.%d.attention.self.query.weight", l);
        ADD(lw->q_b, D, "bert.encoder.layer.%d.attention.self.query.bias", l);
        ADD(lw->k_w, D * D, "bert.encoder.layer.%d.attention.self.key.weight", l);
        ADD(lw->k_b, D, "bert.encoder.layer.%d.attention.self.key.bias", l);
        ADD(lw->v_w, D * D, "bert.encoder.layer.%d.attention.self.value.weight", l);
        ADD(lw->v_b, D, "bert.encoder.layer.%d.attention.self.value.bias", l);
        ADD(lw->o_w, D * D, "bert.encoder.layer.%d.attention.output.dense.weight", l);
        ADD(lw->o_b, D, "bert.encoder.layer.%d.attention.output.dense.bias", l);
        ADD(lw->ln_attn_g, D, "bert.encoder.layer.%d.attention.output.LayerNorm.weight", l);
        ADD(lw->ln_attn_b, D, "bert.encoder.layer.%d.attention.output.LayerNorm.bias", l);
        ADD(lw->ff_in_w, I * D, "bert.encoder.layer.%d.intermediate.dense.weight", l);
        ADD(lw->ff_in_b, I, "bert.encoder.layer.%d.intermediate.dense.bias", l);
        ADD(lw->ff_out_w, D * I, "bert.encoder.layer.%d.output.dense.weight", l);
        ADD(lw->ff_out_b, D, "bert.encoder.layer.%d.output.dense.bias", l);
        ADD(lw->ln_ffn_g, D, "bert.encoder.layer.%d.output.LayerNorm.weight", l);
        ADD(lw->ln_ffn_b, D, "bert.encoder.layer.%d.output.LayerNorm.bias", l);
    }
    ADD(w->mlm_dense_w, D * D, "cls.predictions.transform.dense.weight");
    ADD(w->mlm_dense_b, D, "cls.predictions.transform.dense.bias");
    ADD(w->mlm_ln_g, D, "cls.predictions.transform.LayerNorm.weight");
    ADD(w->mlm_ln_b, D, "cls.predictions.transform.LayerNorm.bias");
    ADD(w->mlm_decoder_b, V, "cls.predictions.bias");
#undef ADD
    return k;
}

static int32_t *to_i32(const float *x, size_t n) {
    int32_t *y = malloc(n * sizeof(int32_t));
    for (size_t i = 0; i < n; i++) y[i] = (int32_t)lrintf(x[i]);
    return y;
}

/* Compares every parameter gradient of one scenario; returns the worst relative error. */
static double compare_grads(const golden_file *g, const char *scenario, const al_model *m, const float *grads) {
    named ps[64];
    const int np = bert_names(m, ps);
    double worst = 0.0, worst_zero = 0.0;
    const char *worst_name = "";
    for (int i = 0; i < np; i++) {
        char key[256];
        snprintf(key, sizeof key, "%.16s.grad.%.96s", scenario, ps[i].name);
        size_t n = 0;
        float *ref = golden_f32(g, key, &n, NULL);
        CHECK_MSG(ref && n == ps[i].n, "%s missing or wrong size", key);
        if (!ref || n != ps[i].n) {
            free(ref);
            continue;
        }
        const float *got = grads + (ps[i].p - m->storage);
        double err = 0.0, scale = 0.0;
        for (size_t j = 0; j < n; j++) {
            double d = fabs((double)got[j] - ref[j]);
            err = d > err ? d : err;
            scale = fabs(ref[j]) > scale ? fabs(ref[j]) : scale;
        }
        if (scale < 1e-12) {
            /* The key bias: softmax is invariant to q . b_k (constant along each row), so its gradient is
             * exactly 0 and float rounding is all there is; it must stay tiny next to the other gradients. */
            CHECK_MSG(err < 1e-6, "%s: gradient should be 0, max abs %.3e", key, err);
            if (err > worst_zero) worst_zero = err;
            free(ref);
            continue;
        }
        const double rel = err / scale;
        CHECK_MSG(rel < 1e-4, "%s: max abs err %.3e, max |grad| %.3e, rel %.3e", key, err, scale, rel);
        if (rel > worst) worst = rel, worst_name = ps[i].name;
        free(ref);
    }
    printf("%-8s %d parameter gradients: worst max-abs-err / max-abs-grad %.2e (%s); "
           "identically-zero ones (key biases) within %.1e\n", scenario, np, worst, worst_name, worst_zero);
    return worst;
}

/* MLM + sentence-order loss against sop_grads.safetensors: the head's four tensors from the file. */
static void check_sop(al_model *m, al_train_ctx *ctx, const al_batch *batch, const int32_t *labels) {
    golden_file g;
    if (!golden_open(&g, DIR "/sop_grads.safetensors")) {
        CHECK(0);
        return;
    }
    const int D = al_model_config(m)->hidden_size;
    const size_t nh = al_sop_head_size(D);
    float *head = calloc(nh, sizeof *head), *hgrad = calloc(nh, sizeof *hgrad);
    al_sop_head h = al_sop_head_carve(head, D), hg = al_sop_head_carve(hgrad, D);
    struct { const char *name; float *p, *g; size_t n; } parts[] = {
        {"bert.pooler.dense.weight", h.pool_w, hg.pool_w, (size_t)D * D}, {"bert.pooler.dense.bias", h.pool_b, hg.pool_b, (size_t)D},
        {"cls.seq_relationship.weight", h.cls_w, hg.cls_w, 2 * (size_t)D}, {"cls.seq_relationship.bias", h.cls_b, hg.cls_b, 2}};
    for (int i = 0; i < 4; i++) {
        char key[128];
        snprintf(key, sizeof key, "sop.head.%s", parts[i].name);
        size_t n = 0;
        float *v = golden_f32(&g, key, &n, NULL);
        CHECK_MSG(v && n == parts[i].n, "%s", key);
        if (v && n == parts[i].n) memcpy(parts[i].p, v, n * sizeof(float));
        free(v);
    }
    size_t n_pairs = 0;
    float *f_rows = golden_f32(&g, "sop.rows", &n_pairs, NULL), *f_lab = golden_f32(&g, "sop.labels", NULL, NULL);
    float *ref_loss = golden_f32(&g, "sop.loss", NULL, NULL), *ref_sop = golden_f32(&g, "sop.sop_loss", NULL, NULL);
    CHECK(f_rows && f_lab && ref_loss && ref_sop && n_pairs == 2);
    int rows[2];
    int32_t sop_labels[2];
    for (int i = 0; i < 2; i++) rows[i] = (int)lrintf(f_rows[i]), sop_labels[i] = (int32_t)lrintf(f_lab[i]);
    al_error err;
    float mlm = 0, sop = 0;
    al_train_zero_grads(ctx);
    CHECK(al_train_forward(ctx, batch, &err) == AL_OK);
    CHECK(al_train_mlm_loss(ctx, labels, &mlm, NULL, &err) == AL_OK);
    CHECK_MSG(al_train_sop_loss(ctx, head, rows, sop_labels, 2, 1.0f, hgrad, &sop, NULL, &err) == AL_OK, "%s", err.message);
    CHECK(al_train_backward(ctx, NULL, &err) == AL_OK);
    printf("sop      loss %.7f + %.7f vs torch %.7f (sentence order %.7f)\n", mlm, sop, ref_loss[0], ref_sop[0]);
    CHECK_NEAR(sop, ref_sop[0], 1e-5);
    CHECK_NEAR(mlm + sop, ref_loss[0], 1e-5);
    compare_grads(&g, "sop", m, al_train_grads(ctx));
    double worst = 0;
    for (int i = 0; i < 4; i++) {
        char key[128];
        snprintf(key, sizeof key, "sop.grad.%s", parts[i].name);
        size_t n = 0;
        float *ref = golden_f32(&g, key, &n, NULL);
        CHECK_MSG(ref && n == parts[i].n, "%s", key);
        double e = 0, scale = 0;
        for (size_t j = 0; ref && j < n && n == parts[i].n; j++) {
            e = fmax(e, fabs((double)parts[i].g[j] - ref[j]));
            scale = fmax(scale, fabs(ref[j]));
        }
        CHECK_MSG(scale > 0 && e / scale < 1e-4, "%s: max abs err %.3e, max |grad| %.3e", key, e, scale);
        worst = fmax(worst, scale > 0 ? e / scale : 1);
        free(ref);
    }
    printf("sop      pooler and classifier gradients: worst max-abs-err / max-abs-grad %.2e\n", worst);
    free(f_rows), free(f_lab), free(ref_loss), free(ref_sop), free(head), free(hgrad);
    golden_close(&g);
}

int main(void) {
    al_model *m = NULL;
    al_error err;
    if (al_model_load_dir(DIR "/bert_mlm", &m, &err) != AL_OK) {
        fprintf(stderr, "load: %s\n", err.message);
        CHECK(0);
        return check_summary("grad_golden");
    }
    CHECK(al_model_has_mlm_head(m));
    CHECK(m->w.mlm_decoder_w == m->w.word_emb); /* tied, as the golden's autograd sees it */
    golden_file g;
    if (!golden_open(&g, DIR "/grads.safetensors")) {
        CHECK(0);
        al_model_free(m);
        return check_summary("grad_golden");
    }
    size_t n = 0;
    int64_t shape[8] = {0};
    float *f_ids = golden_f32(&g, "input_ids", &n, shape);
    const int B = (int)shape[0], L = (int)shape[1];
    float *f_mask = golden_f32(&g, "attention_mask", NULL, NULL), *f_types = golden_f32(&g, "token_type_ids", NULL, NULL);
    float *f_labels = golden_f32(&g, "labels", NULL, NULL);
    CHECK(f_ids && f_mask && f_types && f_labels && B * L == (int)n);
    int32_t *ids = to_i32(f_ids, n), *mask = to_i32(f_mask, n), *types = to_i32(f_types, n), *labels = to_i32(f_labels, n);
    al_batch batch = {B, L, ids, mask, types, NULL};

    al_train_options opt = al_train_default_options();
    opt.training = 0; /* dropout off, as the golden */
    al_train_ctx *ctx = NULL;
    CHECK(al_train_ctx_new(m, B, L, &opt, &ctx, &err) == AL_OK);
    check_sop(m, ctx, &batch, labels);

    /* Standard attention. */
    float loss = 0.0f, *ref_loss = golden_f32(&g, "standard.loss", NULL, NULL);
    al_train_zero_grads(ctx);
    CHECK(al_train_forward_backward(ctx, &batch, labels, &loss, &err) == AL_OK);
    printf("standard loss %.7f vs torch %.7f (abs diff %.2e)\n", loss, ref_loss[0], fabs(loss - ref_loss[0]));
    CHECK_NEAR(loss, ref_loss[0], 1e-5);
    compare_grads(&g, "standard", m, al_train_grads(ctx));

    /* PAPA hooks: constants, modes and theta from the file. */
    const al_config *c = al_model_config(m);
    const int NH = c->n_layers * c->n_heads;
    float *C = golden_f32(&g, "mix.C", NULL, NULL), *modes = golden_f32(&g, "mix.modes", NULL, NULL);
    float *theta = golden_f32(&g, "mix.theta", NULL, NULL), *ref_dtheta = golden_f32(&g, "mix.grad_theta", NULL, NULL);
    float *mix_loss = golden_f32(&g, "mix.loss", NULL, NULL);
    CHECK(C && modes && theta && ref_dtheta && mix_loss);
    al_head_policy *pol = calloc((size_t)NH, sizeof *pol);
    for (int i = 0; i < NH; i++) {
        pol[i].mode = (al_head_mode)lrintf(modes[i]);
        pol[i].lambda = 0.5f;
        pol[i].constant = C + (size_t)i * L * L;
    }
    CHECK(al_train_set_policies(ctx, pol, &err) == AL_OK);
    memcpy(al_train_lambda_logits(ctx), theta, (size_t)NH * sizeof(float));
    al_train_zero_grads(ctx);
    CHECK(al_train_forward_backward(ctx, &batch, labels, &loss, &err) == AL_OK);
    printf("mix      loss %.7f vs torch %.7f (abs diff %.2e)\n", loss, mix_loss[0], fabs(loss - mix_loss[0]));
    CHECK_NEAR(loss, mix_loss[0], 1e-5);
    compare_grads(&g, "mix", m, al_train_grads(ctx));
    double lerr = 0.0, lscale = 0.0;
    for (int i = 0; i < NH; i++) {
        lerr = fmax(lerr, fabs((double)al_train_lambda_grads(ctx)[i] - ref_dtheta[i]));
        lscale = fmax(lscale, fabs(ref_dtheta[i]));
    }
    printf("mix      %d lambda-logit gradients: max abs err %.2e, max |grad| %.2e, rel %.2e\n", NH, lerr, lscale,
           lerr / lscale);
    CHECK(lscale > 0.0 && lerr / lscale < 1e-4);

    free(pol), free(C), free(modes), free(theta), free(ref_dtheta), free(mix_loss), free(ref_loss);
    free(f_ids), free(f_mask), free(f_types), free(f_labels), free(ids), free(mask), free(types), free(labels);
    al_train_ctx_free(ctx);
    golden_close(&g);
    al_model_free(m);
    return check_summary("grad_golden");
}
