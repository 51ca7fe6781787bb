/* test_grad.c: the training path against central finite differences.
 *
 *  - every elementary op of src/train/grad_ops.c on its own (LayerNorm, linear, GELU erf/tanh, ReLU,
 *    softmax with the additive mask, PAPA's mask_and_normalize, cross-entropy), loss = sum(w * op(x));
 *  - the training forward pass equals al_forward's hidden states (eval mode), with and without hooks;
 *  - whole tiny models (BERT gelu / gelu_tanh / relu, RoBERTa, ELECTRA with E != D, DistilBERT) with an MLM
 *    head: every parameter tensor (a sample of coordinates: the largest analytic entries and random ones),
 *    under standard attention, a static layer (CONSTANT / ZERO heads renormalising the others), all-MIX
 *    heads (lambda-logit gradients), hidden and attention dropout (masks replayed by reseeding), and an
 *    external gradient on every hidden state (the probe path); frozen-encoder mode gives the same lambda
 *    gradients and holds no parameter-gradient buffer.
 * Error measure per tensor: max |fd - analytic| over the sample / max |analytic| over the tensor. */
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "kernels/kernels.h"
#include "model/model_internal.h"
#include "train/grad_ops.h"
#include "train/train.h"

/* ------------------------------------------------------------------ helpers */

static void fill_normal(al_rng *r, float *x, size_t n, float scale) {
    for (size_t i = 0; i < n; i++) x[i] = scale * al_rng_normal(r);
}

static double dot(const float *a, const float *b, size_t n) {
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

static double max_abs(const float *x, size_t n) {
    double m = 0.0;
    for (size_t i = 0; i < n; i++) m = fabs(x[i]) > m ? fabs(x[i]) : m;
    return m;
}

/* Relative error of an analytic gradient vector against finite differences of f over all n entries. */
typedef double (*scalar_fn)(void *user);

static double fd_check_all(scalar_fn f, void *user, float *x, const float *grad, size_t n, float h) {
    double worst = 0.0, scale = max_abs(grad, n);
    if (scale < 1e-12) scale = 1e-12;
    for (size_t i = 0; i < n; i++) {
        const float x0 = x[i];
        x[i] = x0 + h;
        const float xp = x[i];
        const double fp = f(user);
        x[i] = x0 - h;
        const float xm = x[i];
        const double fm = f(user);
        x[i] = x0;
        const double fd = (fp - fm) / ((double)xp - xm);
        const double e = fabs(fd - grad[i]) / scale;
        worst = e > worst ? e : worst;
    }
    return worst;
}

#define OP_TOL 2e-3

/* ------------------------------------------------------------------ per-op checks */

typedef struct op_case {
    int rows, cols;
    float *x, *y, *w, *gamma, *beta, *W, *bias, *mask, *mean, *rstd;
    int32_t *labels;
    int kind;
} op_case;

enum { OP_LN, OP_RMS, OP_GLU, OP_LINEAR, OP_GELU, OP_GELU_TANH, OP_RELU, OP_SOFTMAX, OP_MASKNORM, OP_CE };

#define LIN_OUT 5

static double op_loss(void *user) {
    op_case *c = user;
    const size_t n = (size_t)c->rows * c->cols;
    switch (c->kind) {
    case OP_LN:
        al_tr_layernorm_fwd(c->x, c->y, c->rows, c->cols, c->gamma, c->beta, 1e-5f, c->mean, c->rstd);
        return dot(c->w, c->y, n);
    case OP_RMS:
        al_tr_rmsnorm_kernel_fwd(c->x, c->y, c->rows, c->cols, c->gamma, 1e-5f, c->rstd);
        return dot(c->w, c->y, n);
    case OP_GLU: /* rows of [u | g], cols / 2 each */
        al_tr_glu_fwd(AL_ACT_SILU, c->x, c->y, c->rows, c->cols / 2);
        return dot(c->w, c->y, n / 2);
    case OP_LINEAR:
        al_linear(c->rows, LIN_OUT, c->cols, c->x, c->W, c->bias, c->y);
        return dot(c->w, c->y, (size_t)c->rows * LIN_OUT);
    case OP_GELU:
    case OP_GELU_TANH:
    case OP_RELU:
        memcpy(c->y, c->x, n * sizeof(float));
        al_tr_act_fwd(c->kind == OP_GELU ? AL_ACT_GELU : c->kind == OP_GELU_TANH ? AL_ACT_GELU_TANH : AL_ACT_RELU,
                      c->y, n);
        return dot(c->w, c->y, n);
    case OP_SOFTMAX:
        for (int r = 0; r < c->rows; r++)
            for (int j = 0; j < c->cols; j++)
                c->y[(size_t)r * c->cols + j] = c->x[(size_t)r * c->cols + j] + (c->mask[j] == 0.0f ? -10000.0f : 0.0f);
        al_softmax_rows(c->y, c->rows, c->cols, c->cols);
        return dot(c->w, c->y, n);
    case OP_MASKNORM: { /* square [L, L] */
        memcpy(c->y, c->x, n * sizeof(float));
        for (int r = 0; r < c->rows; r++) { /* the forward's own loop (attention.c), in double */
            float *row = c->y + (size_t)r * c->cols;
            double l1 = 0.0;
            for (int j = 0; j < c->cols; j++) {
                if (c->mask[r] == 0.0f || c->mask[j] == 0.0f) row[j] = 0.0f;
                l1 += fabs((double)row[j]);
            }
            double den = l1 > 1e-12 ? l1 : 1e-12;
            for (int j = 0; j < c->cols; j++) row[j] = (float)(row[j] / den);
        }
        return dot(c->w, c->y, n);
    }
    case OP_CE:
        memcpy(c->y, c->x, n * sizeof(float));
        return al_tr_cross_entropy(c->y, c->labels, c->rows, c->cols);
    }
    return 0.0;
}

static void check_ops(void) {
    al_rng r;
    al_rng_seed(&r, 11);
    op_case c;
    memset(&c, 0, sizeof c);
    c.rows = 6;
    c.cols = 6;
    const size_t n = 36, big = 64;
    c.x = calloc(big, sizeof(float));
    c.y = calloc(big, sizeof(float));
    c.w = calloc(big, sizeof(float));
    c.gamma = calloc(big, sizeof(float));
    c.beta = calloc(big, sizeof(float));
    c.W = calloc(big, sizeof(float));
    c.bias = calloc(big, sizeof(float));
    c.mask = calloc(big, sizeof(float));
    c.mean = calloc(big, sizeof(float));
    c.rstd = calloc(big, sizeof(float));
    c.labels = calloc(big, sizeof(int32_t));
    float *gx = calloc(big, sizeof(float)), *g2 = calloc(big, sizeof(float)), *g3 = calloc(big, sizeof(float));
    float *tmp = calloc(big, sizeof(float));
    const float h = 1e-2f;
    double e;

    /* LayerNorm: dx, dgamma, dbeta */
    c.kind = OP_LN;
    fill_normal(&r, c.x, n, 1.0f);
    fill_normal(&r, c.w, n, 1.0f);
    for (int i = 0; i < c.cols; i++) c.gamma[i] = 1.0f + 0.3f * al_rng_normal(&r), c.beta[i] = 0.1f * al_rng_normal(&r);
    op_loss(&c);
    memset(g2, 0, big * sizeof(float));
    memset(g3, 0, big * sizeof(float));
    al_tr_layernorm_bwd(c.x, c.mean, c.rstd, c.w, c.rows, c.cols, c.gamma, gx, g2, g3);
    e = fd_check_all(op_loss, &c, c.x, gx, n, h);
    printf("layernorm dx       rel err %.2e\n", e);
    CHECK(e < OP_TOL);
    e = fd_check_all(op_loss, &c, c.gamma, g2, (size_t)c.cols, h);
    printf("layernorm dgamma   rel err %.2e\n", e);
    CHECK(e < OP_TOL);
    e = fd_check_all(op_loss, &c, c.beta, g3, (size_t)c.cols, h);
    printf("layernorm dbeta    rel err %.2e\n", e);
    CHECK(e < OP_TOL);

    /* RMSNorm: dx, dgamma */
    c.kind = OP_RMS;
    op_loss(&c);
    memset(g2, 0, big * sizeof(float));
    al_tr_rmsnorm_bwd(c.x, c.rstd, c.w, c.rows, c.cols, c.gamma, gx, g2);
    e = fd_check_all(op_loss, &c, c.x, gx, n, h);
    printf("rmsnorm dx         rel err %.2e\n", e);
    CHECK(e < OP_TOL);
    e = fd_check_all(op_loss, &c, c.gamma, g2, (size_t)c.cols, h);
    printf("rmsnorm dgamma     rel err %.2e\n", e);
    CHECK(e < OP_TOL);

    /* The gated feed-forward's middle, SiLU: d [u | g] from df (the second half of each row of gx) */
    c.kind = OP_GLU;
    for (int row = 0; row < c.rows; row++)
        memcpy(gx + (size_t)row * c.cols + c.cols / 2, c.w + (size_t)row * (c.cols / 2),
               sizeof(float) * (size_t)(c.cols / 2));
    al_tr_glu_bwd(AL_ACT_SILU, c.x, gx, tmp, c.rows, c.cols / 2);
    e = fd_check_all(op_loss, &c, c.x, gx, n, h);
    printf("glu (silu) d[u|g]  rel err %.2e\n", e);
    CHECK(e < OP_TOL);

    /* Linear [6, 6] -> [6, 5]: dx, dW, db */
    c.kind = OP_LINEAR;
    fill_normal(&r, c.W, (size_t)LIN_OUT * c.cols, 0.5f);
    fill_normal(&r, c.bias, LIN_OUT, 0.5f);
    fill_normal(&r, c.w, (size_t)c.rows * LIN_OUT, 1.0f);
    memset(g2, 0, big * sizeof(float));
    memset(g3, 0, big * sizeof(float));
    al_tr_linear_bwd(c.rows, LIN_OUT, c.cols, c.x, c.W, c.w, gx, 0, g2, g3);
    e = fd_check_all(op_loss, &c, c.x, gx, n, h);
    printf("linear dx          rel err %.2e\n", e);
    CHECK(e < OP_TOL);
    e = fd_check_all(op_loss, &c, c.W, g2, (size_t)LIN_OUT * c.cols, h);
    printf("linear dW          rel err %.2e\n", e);
    CHECK(e < OP_TOL);
    e = fd_check_all(op_loss, &c, c.bias, g3, LIN_OUT, h);
    printf("linear db          rel err %.2e\n", e);
    CHECK(e < OP_TOL);
    /* accumulate flag adds */
    memcpy(tmp, gx, n * sizeof(float));
    al_tr_linear_bwd(c.rows, LIN_OUT, c.cols, c.x, c.W, c.w, gx, 1, NULL, NULL);
    CHECK_NEAR(gx[7], 2.0 * tmp[7], 1e-5);

    /* Activations (x away from ReLU's kink) */
    const int acts[3] = {OP_GELU, OP_GELU_TANH, OP_RELU};
    const char *act_names[3] = {"gelu", "gelu_tanh", "relu"};
    fill_normal(&r, c.w, n, 1.0f);
    for (int a = 0; a < 3; a++) {
        c.kind = acts[a];
        fill_normal(&r, c.x, n, 2.0f);
        for (size_t i = 0; i < n; i++)
            if (fabsf(c.x[i]) < 0.05f) c.x[i] = 0.3f;
        al_tr_act_bwd(a == 0 ? AL_ACT_GELU : a == 1 ? AL_ACT_GELU_TANH : AL_ACT_RELU, c.x, c.w, gx, n);
        e = fd_check_all(op_loss, &c, c.x, gx, n, 1e-2f);
        printf("%-10s dx       rel err %.2e\n", act_names[a], e);
        CHECK(e < OP_TOL);
    }

    /* Softmax with the additive mask on keys 2 and 5 */
    c.kind = OP_SOFTMAX;
    fill_normal(&r, c.x, n, 1.5f);
    fill_normal(&r, c.w, n, 1.0f);
    for (int j = 0; j < c.cols; j++) c.mask[j] = (j == 2 || j == 5) ? 0.0f : 1.0f;
    op_loss(&c);
    al_tr_softmax_bwd(c.y, c.w, gx, c.rows, c.cols);
    e = fd_check_all(op_loss, &c, c.x, gx, n, h);
    printf("softmax+mask dz    rel err %.2e\n", e);
    CHECK(e < OP_TOL);
    CHECK(gx[2] == 0.0f && gx[5] == 0.0f); /* masked keys get nothing */

    /* mask_and_normalize: positive matrix, pad positions 4, 5; one valid row with zero valid mass */
    c.kind = OP_MASKNORM;
    for (size_t i = 0; i < n; i++) c.x[i] = 0.05f + al_rng_uniform(&r);
    for (int j = 0; j < c.cols; j++) c.mask[j] = j < 4 ? 1.0f : 0.0f;
    al_tr_mask_normalize_bwd(c.x, c.mask, c.w, gx, c.cols);
    e = fd_check_all(op_loss, &c, c.x, gx, n, 1e-3f);
    printf("mask_normalize dr  rel err %.2e\n", e);
    CHECK(e < OP_TOL);
    CHECK(gx[4 * 6 + 1] == 0.0f && gx[1 * 6 + 5] == 0.0f);
    /* A valid row with no mass on the valid keys (|.| has no derivative at 0): gradient 0, no NaN. */
    for (int j = 0; j < 4; j++) c.x[3 * 6 + j] = 0.0f;
    al_tr_mask_normalize_bwd(c.x, c.mask, c.w, gx, c.cols);
    CHECK(max_abs(gx + 3 * 6, 6) == 0.0);

    /* Cross-entropy: gradient and value */
    c.kind = OP_CE;
    c.rows = 3;
    c.cols = 7;
    fill_normal(&r, c.x, 21, 2.0f);
    c.labels[0] = 3, c.labels[1] = 0, c.labels[2] = 6;
    memcpy(gx, c.x, 21 * sizeof(float));
    double loss = al_tr_cross_entropy(gx, c.labels, 3, 7);
    double ref = 0.0;
    for (int i = 0; i < 3; i++) {
        double s = 0.0;
        for (int j = 0; j < 7; j++) s += exp(c.x[i * 7 + j]);
        ref += (log(s) - c.x[i * 7 + c.labels[i]]) / 3.0;
    }
    CHECK_NEAR(loss, ref, 1e-6);
    e = fd_check_all(op_loss, &c, c.x, gx, 21, 1e-2f);
    printf("cross-entropy dz   rel err %.2e\n", e);
    CHECK(e < OP_TOL);

    /* Dropout: keep rate, scaling, p = 0 keeps all */
    const size_t nd = 20000;
    uint8_t *keep = malloc(nd);
    float *ones = malloc(nd * sizeof(float));
    for (size_t i = 0; i < nd; i++) ones[i] = 1.0f;
    al_tr_dropout_draw(&r, keep, nd, 0.1f);
    al_tr_dropout_apply(ones, keep, nd, 0.1f);
    double kept = 0.0, sum = 0.0;
    for (size_t i = 0; i < nd; i++) kept += keep[i], sum += ones[i];
    CHECK_NEAR(kept / nd, 0.9, 0.01);
    CHECK_NEAR(sum / nd, 1.0, 0.012);
    al_tr_dropout_draw(&r, keep, nd, 0.0f);
    size_t all = 0;
    for (size_t i = 0; i < nd; i++) all += keep[i];
    CHECK(all == nd);
    free(keep);
    free(ones);

    free(c.x), free(c.y), free(c.w), free(c.gamma), free(c.beta), free(c.W), free(c.bias), free(c.mask);
    free(c.mean), free(c.rstd), free(c.labels), free(gx), free(g2), free(g3), free(tmp);
}

/* ------------------------------------------------------------------ whole models */

typedef struct param {
    const char *name;
    float *p;
    size_t n;
} param;

static int list_params(const al_model *m, param *out) {
    const al_config *c = &m->config;
    const al_weights *w = &m->w;
    const size_t V = c->vocab_size, E = c->embedding_size, D = c->hidden_size, I = c->intermediate_size;
    const size_t M = w->mlm_dim;
    int k = 0;
#define ADD(nm, ptr, cnt) \
    if (ptr) out[k++] = (param){nm, ptr, cnt}
    ADD("word_emb", w->word_emb, V * E);
    ADD("pos_emb", w->pos_emb, (size_t)c->max_position_embeddings * E);
    ADD("type_emb", w->type_emb, (size_t)c->type_vocab_size * E);
    ADD("emb_ln_g", w->emb_ln_g, E);
    ADD("emb_ln_b", w->emb_ln_b, E);
    ADD("emb_proj_w", w->emb_proj_w, D * E);
    ADD("emb_proj_b", w->emb_proj_b, D);
    for (int l = 0; l < c->n_layers; l++) {
        const al_layer_weights *lw = &w->layers[l];
        ADD("q_w", lw->q_w, D * D);
        ADD("q_b", lw->q_b, D);
        ADD("k_w", lw->k_w, D * D);
        ADD("k_b", lw->k_b, D);
        ADD("v_w", lw->v_w, D * D);
        ADD("v_b", lw->v_b, D);
        ADD("o_w", lw->o_w, D * D);
        ADD("o_b", lw->o_b, D);
        ADD("ln_attn_g", lw->ln_attn_g, D);
        ADD("ln_attn_b", lw->ln_attn_b, D);
        ADD("ff_in_w", lw->ff_in_w, I * D);
        ADD("ff_in_b", lw->ff_in_b, I);
        ADD("ff_out_w", lw->ff_out_w, D * I);
        ADD("ff_out_b", lw->ff_out_b, D);
        ADD("ln_ffn_g", lw->ln_ffn_g, D);
        ADD("ln_ffn_b", lw->ln_ffn_b, D);
    }
    ADD("mlm_dense_w", w->mlm_dense_w, M * D);
    ADD("mlm_dense_b", w->mlm_dense_b, M);
    ADD("mlm_ln_g", w->mlm_ln_g, M);
    ADD("mlm_ln_b", w->mlm_ln_b, M);
    if (w->mlm_decoder_w != w->word_emb) ADD("mlm_decoder_w", w->mlm_decoder_w, V * M);
    ADD("mlm_decoder_b", w->mlm_decoder_b, V);
#undef ADD
    return k;
}

enum { B_ = 2, L_ = 7 };

typedef struct model_case {
    al_model *m;
    al_train_ctx *ctx;
    al_batch batch;
    int32_t ids[B_ * L_], mask[B_ * L_], types[B_ * L_], labels[B_ * L_];
    float *probe;       /* [NL+1, B, L, D] external gradient (NULL: MLM loss only) */
    int use_mlm;
} model_case;

#define DROP_SEED 1234

static double model_loss(void *user) {
    model_case *mc = user;
    al_error err;
    al_train_seed(mc->ctx, DROP_SEED);
    if (al_train_forward(mc->ctx, &mc->batch, &err) != AL_OK) {
        fprintf(stderr, "forward: %s\n", err.message);
        return NAN;
    }
    double f = 0.0;
    if (mc->use_mlm) {
        float loss = 0.0f;
        al_train_mlm_loss(mc->ctx, mc->labels, &loss, NULL, &err);
        f += loss;
    }
    if (mc->probe) {
        const al_config *c = &mc->m->config;
        const size_t n = (size_t)B_ * L_ * c->hidden_size;
        for (int l = 0; l <= c->n_layers; l++) f += dot(mc->probe + l * n, al_train_hidden(mc->ctx, l), n);
    }
    return f;
}

static int analytic(model_case *mc) {
    al_error err;
    al_train_zero_grads(mc->ctx);
    al_train_seed(mc->ctx, DROP_SEED);
    al_status st = al_train_forward(mc->ctx, &mc->batch, &err);
    float loss;
    if (st == AL_OK && mc->use_mlm) st = al_train_mlm_loss(mc->ctx, mc->labels, &loss, NULL, &err);
    if (st == AL_OK) st = al_train_backward(mc->ctx, mc->probe, &err);
    if (st != AL_OK) fprintf(stderr, "analytic: %s\n", err.message);
    return st == AL_OK;
}

/* FD on a sample of coordinates of one tensor: the 4 largest |analytic| and 4 random ones. */
static double fd_tensor(model_case *mc, float *p, const float *g, size_t n, float h, al_rng *r, int *kinked) {
    size_t idx[8];
    int k = 0;
    double scale = max_abs(g, n);
    for (int t = 0; t < 4 && (size_t)t < n; t++) {
        size_t best = 0;
        double bv = -1.0;
        for (size_t i = 0; i < n; i++) {
            int used = 0;
            for (int u = 0; u < k; u++) used |= idx[u] == i;
            if (!used && fabs(g[i]) > bv) bv = fabs(g[i]), best = i;
        }
        idx[k++] = best;
    }
    for (int t = 0; t < 4; t++) idx[k++] = al_rng_below(r, (uint32_t)n);
    if (scale < 1e-7) { /* a tensor without gradient (e.g. an unused row set): FD must agree it is ~0 */
        double worst = 0.0;
        for (int t = 0; t < k; t++) {
            float x0 = p[idx[t]];
            p[idx[t]] = x0 + h;
            double fp = model_loss(mc);
            p[idx[t]] = x0 - h;
            double fm = model_loss(mc);
            p[idx[t]] = x0;
            double fd = fabs((fp - fm) / (2.0 * h));
            worst = fd > worst ? fd : worst;
        }
        return worst < 1e-4 ? 0.0 : 1.0;
    }
    /* A ReLU kink inside [x - h, x + h] makes the difference quotient meaningless there: such a point shows
     * as one-sided quotients that disagree by more than curvature explains; it is skipped and counted. */
    double worst = 0.0;
    const double f0 = model_loss(mc);
    for (int t = 0; t < k; t++) {
        const float x0 = p[idx[t]];
        p[idx[t]] = x0 + h;
        const float xp = p[idx[t]];
        const double fp = model_loss(mc);
        p[idx[t]] = x0 - h;
        const float xm = p[idx[t]];
        const double fm = model_loss(mc);
        p[idx[t]] = x0;
        const double fd = (fp - fm) / ((double)xp - xm);
        const double one_sided_gap = fabs((fp - f0) / ((double)xp - x0) - (f0 - fm) / ((double)x0 - xm));
        if (kinked && one_sided_gap > 0.02 * scale) {
            (*kinked)++;
            continue;
        }
        const double e = fabs(fd - g[idx[t]]) / scale;
        if (getenv("GRAD_DEBUG")) printf("  [%zu] h %.1e fd %.6g analytic %.6g\n", idx[t], (double)h, fd, (double)g[idx[t]]);
        worst = e > worst ? e : worst;
    }
    return worst;
}

#define MODEL_TOL 1e-2

/* Checks every parameter tensor and (when MIX heads) every lambda logit of one configuration. */
static void check_model_grads(const char *label, al_config cfg, const al_head_policy *pol, float dropout,
                              int with_probe, int mlm) {
    al_model *m = NULL;
    al_error err;
    if (al_model_new_random(&cfg, 5, 1, &m, &err) != AL_OK) {
        fprintf(stderr, "%s: %s\n", label, err.message);
        CHECK(0);
        return;
    }
    /* Make biases and LayerNorm parameters non-trivial so their gradients are exercised off the init. */
    al_rng r;
    al_rng_seed(&r, 99);
    param ps[128];
    int np = list_params(m, ps);
    for (int i = 0; i < np; i++)
        if (strstr(ps[i].name, "_b") || strstr(ps[i].name, "_g"))
            for (size_t j = 0; j < ps[i].n; j++) ps[i].p[j] += 0.1f * al_rng_normal(&r);
        else
            for (size_t j = 0; j < ps[i].n; j++) /* std 0.1, and 0.6 for Q and K: a sharper, less linear model */
                ps[i].p[j] *= (ps[i].name[0] == 'q' || ps[i].name[0] == 'k') ? 30.0f : 5.0f;

    al_train_options opt = al_train_default_options();
    opt.training = dropout > 0.0f;
    opt.hidden_dropout = opt.attention_dropout = dropout;
    model_case mc;
    memset(&mc, 0, sizeof mc);
    mc.m = m;
    mc.use_mlm = mlm;
    CHECK(al_train_ctx_new(m, B_, L_, &opt, &mc.ctx, &err) == AL_OK);
    if (pol) CHECK(al_train_set_policies(mc.ctx, pol, &err) == AL_OK);
    const int lengths[B_] = {7, 4};
    for (int b = 0; b < B_; b++)
        for (int i = 0; i < L_; i++) {
            const int t = b * L_ + i, real = i < lengths[b];
            mc.ids[t] = real ? 2 + (b * 13 + i * 7) % (cfg.vocab_size - 2) : cfg.pad_token_id;
            mc.mask[t] = real;
            mc.types[t] = cfg.type_vocab_size > 0 && real && i >= 3;
            mc.labels[t] = (real && (i % 3 == 1 || i == 0)) ? (int32_t)((t * 5 + 3) % cfg.vocab_size) : AL_IGNORE_INDEX;
        }
    mc.labels[1 * L_ + 5] = 4; /* a labelled pad position counts too (as in PyTorch) */
    mc.batch = (al_batch){B_, L_, mc.ids, mc.mask, cfg.type_vocab_size > 0 ? mc.types : NULL, NULL};
    const size_t nh = (size_t)(cfg.n_layers + 1) * B_ * L_ * cfg.hidden_size;
    if (with_probe) {
        mc.probe = malloc(nh * sizeof(float));
        fill_normal(&r, mc.probe, nh, 0.05f);
    }
    if (!analytic(&mc)) {
        CHECK(0);
        goto out;
    }
    const float *grads = al_train_grads(mc.ctx);
    float *gcopy = malloc(m->n_floats * sizeof(float));
    memcpy(gcopy, grads, m->n_floats * sizeof(float));
    const int NH = cfg.n_layers * cfg.n_heads;
    float dtheta[64];
    memcpy(dtheta, al_train_lambda_grads(mc.ctx), (size_t)NH * sizeof(float));

    double worst = 0.0;
    const char *worst_name = "";
    int n_kinked = 0;
    for (int i = 0; i < np; i++) {
        const float *g = gcopy + (ps[i].p - m->storage);
        /* Float forward passes leave ~1e-6 of noise in the loss: pick the step so that the change it makes
         * (h * max|g|) stands ~300 times above it, within [3e-3, 5e-2] (1e-2 for ReLU's kinks). */
        const double gmax = max_abs(g, ps[i].n);
        double h = gmax > 0.0 ? 3e-4 / gmax : 3e-3;
        const double h_max = cfg.act == AL_ACT_RELU ? 1e-2 : 5e-2;
        h = h < 3e-3 ? 3e-3 : h > h_max ? h_max : h;
        double e = fd_tensor(&mc, ps[i].p, g, ps[i].n, (float)h, &r, cfg.act == AL_ACT_RELU ? &n_kinked : NULL);
        if (e > worst) worst = e, worst_name = ps[i].name;
        CHECK_MSG(e < MODEL_TOL, "%s: tensor %s rel err %.3e", label, ps[i].name, e);
    }
    /* Lambda logits of MIX heads: FD over theta. */
    double worst_lambda = 0.0;
    int n_mix = 0;
    double lscale = max_abs(dtheta, (size_t)NH);
    for (int i = 0; pol && i < NH; i++) {
        if (pol[i].mode != AL_HEAD_MIX) {
            CHECK(dtheta[i] == 0.0f);
            continue;
        }
        n_mix++;
        float *theta = al_train_lambda_logits(mc.ctx) + i;
        const float t0 = *theta;
        *theta = t0 + 5e-2f;
        const double fp = model_loss(&mc);
        *theta = t0 - 5e-2f;
        const double fm = model_loss(&mc);
        *theta = t0;
        const double fd = (fp - fm) / 1e-1;
        const double e = fabs(fd - dtheta[i]) / (lscale > 1e-9 ? lscale : 1e-9);
        worst_lambda = e > worst_lambda ? e : worst_lambda;
        CHECK_MSG(e < MODEL_TOL, "%s: lambda logit %d fd %.6g analytic %.6g", label, i, fd, (double)dtheta[i]);
    }
    printf("%-34s params rel err %.2e (worst %s)", label, worst, worst_name);
    if (cfg.act == AL_ACT_RELU) {
        printf(", %d of %d points skipped at ReLU kinks", n_kinked, 8 * np);
        CHECK(n_kinked * 4 < 8 * np);
    }
    if (n_mix) printf(", %d lambda logits rel err %.2e (max |dtheta| %.2e)", n_mix, worst_lambda, lscale);
    printf("\n");
    if (n_mix) CHECK(lscale > 1e-6); /* the lambda gradients are not trivially zero */

    /* Frozen encoder: same lambda gradients, no parameter gradient (and no MLM buffers when no MLM loss). */
    if (n_mix) {
        al_train_ctx *fz = NULL;
        al_train_options fo = opt;
        fo.weight_grads = 0;
        fo.mlm_head = mc.use_mlm;
        CHECK(al_train_ctx_new(m, B_, L_, &fo, &fz, &err) == AL_OK);
        CHECK(al_train_set_policies(fz, pol, &err) == AL_OK);
        memcpy(al_train_lambda_logits(fz), al_train_lambda_logits(mc.ctx), (size_t)NH * sizeof(float));
        al_train_ctx *keep = mc.ctx;
        mc.ctx = fz;
        CHECK(analytic(&mc));
        mc.ctx = keep;
        double dmax = 0.0;
        for (int i = 0; i < NH; i++) {
            double d = fabs(al_train_lambda_grads(fz)[i] - dtheta[i]);
            dmax = d > dmax ? d : dmax;
        }
        CHECK(dmax <= 1e-6 * (lscale + 1e-12));
        CHECK(al_train_grads(fz) == NULL); /* a frozen context holds no parameter-gradient buffer */
        al_train_ctx_free(fz);
    }
    free(gcopy);
out:
    free(mc.probe);
    al_train_ctx_free(mc.ctx);
    al_model_free(m);
}

/* ------------------------------------------------------------------ forward equivalence */

static void check_forward_matches(const char *label, al_config cfg, const al_head_policy *pol) {
    al_model *m = NULL;
    al_error err;
    CHECK(al_model_new_random(&cfg, 3, 1, &m, &err) == AL_OK);
    if (!m) return;
    const int B = 3, L = 9, D = cfg.hidden_size, NL = cfg.n_layers, H = cfg.n_heads;
    int32_t ids[27], mask[27];
    for (int b = 0; b < B; b++)
        for (int i = 0; i < L; i++) {
            const int real = i < L - 3 * b;
            ids[b * L + i] = real ? 1 + (b * 11 + i * 5) % (cfg.vocab_size - 1) : cfg.pad_token_id;
            mask[b * L + i] = real;
        }
    al_batch batch = {B, L, ids, mask, NULL, NULL};
    al_train_options opt = al_train_default_options();
    opt.training = 0;
    al_train_ctx *ctx = NULL;
    CHECK(al_train_ctx_new(m, 4, 12, &opt, &ctx, &err) == AL_OK);
    al_head_policy fpol[64];
    if (pol) {
        CHECK(al_train_set_policies(ctx, pol, &err) == AL_OK);
        /* Move the lambdas off 0.5 through theta; al_forward gets lambda = sigmoid(theta). */
        for (int i = 0; i < NL * H; i++) {
            fpol[i] = pol[i];
            if (pol[i].mode == AL_HEAD_MIX) {
                al_train_lambda_logits(ctx)[i] = 0.7f * (float)(i % 3) - 0.5f;
                fpol[i].lambda = 1.0f / (1.0f + al_expf(-al_train_lambda_logits(ctx)[i]));
            }
        }
    }
    CHECK(al_train_forward(ctx, &batch, &err) == AL_OK);
    const size_t n = (size_t)B * L * D;
    float *hs = malloc((size_t)(NL + 1) * n * sizeof(float));
    al_forward_params fp = al_forward_default_params();
    fp.policies = pol ? fpol : NULL;
    al_forward_outputs out = {.hidden_states = hs};
    CHECK(al_forward(m, &batch, &fp, &out, &err) == AL_OK);
    double worst = 0.0;
    for (int l = 0; l <= NL; l++) {
        const float *a = al_train_hidden(ctx, l);
        for (size_t i = 0; i < n; i++) {
            double d = fabs((double)a[i] - hs[(size_t)l * n + i]);
            worst = d > worst ? d : worst;
        }
    }
    printf("%-34s train forward vs al_forward: max abs diff %.2e\n", label, worst);
    CHECK(worst < 1e-5);
    free(hs);
    al_train_ctx_free(ctx);
    al_model_free(m);
}

/* ------------------------------------------------------------------ API errors */

static void check_errors(void) {
    al_config cfg = al_config_bert(50, 16, 2, 2, 32);
    al_model *m = NULL, *bare = NULL;
    al_error err;
    CHECK(al_model_new_random(&cfg, 1, 1, &m, &err) == AL_OK);
    CHECK(al_model_new_random(&cfg, 1, 0, &bare, &err) == AL_OK);
    al_train_ctx *ctx = NULL, *ctx2 = NULL;
    CHECK(al_train_ctx_new(m, 2, 4, NULL, &ctx, &err) == AL_OK);
    int32_t ids[8] = {1, 2, 3, 4, 5, 6, 7, 60}, labels[8] = {-100, 3, -100, -100, -100, -100, -100, 77};
    al_batch b = {2, 4, ids, NULL, NULL, NULL};
    CHECK(al_train_forward(ctx, &b, &err) == AL_ERR_INVALID && strstr(err.message, "input_ids[1][3]"));
    ids[7] = 8;
    al_batch big = {3, 4, ids, NULL, NULL, NULL};
    CHECK(al_train_forward(ctx, &big, &err) == AL_ERR_INVALID && strstr(err.message, "max_batch"));
    CHECK(al_train_backward(ctx, NULL, &err) == AL_ERR_INVALID); /* before any forward */
    CHECK(al_train_forward(ctx, &b, &err) == AL_OK);
    float loss;
    CHECK(al_train_mlm_loss(ctx, labels, &loss, NULL, &err) == AL_ERR_INVALID && strstr(err.message, "labels[1][3]"));
    labels[7] = -100;
    int n_lab = 0;
    CHECK(al_train_mlm_loss(ctx, labels, &loss, &n_lab, &err) == AL_OK && n_lab == 1 && loss > 0.0f);
    al_head_policy pol[4] = {{AL_HEAD_MIX, 0.5f, NULL}};
    CHECK(al_train_set_policies(ctx, pol, &err) == AL_ERR_INVALID && strstr(err.message, "layer 0 head 0"));
    CHECK(al_train_ctx_new(bare, 2, 4, NULL, &ctx2, &err) == AL_OK);
    CHECK(al_train_forward(ctx2, &b, &err) == AL_OK);
    CHECK(al_train_mlm_loss(ctx2, labels, &loss, NULL, &err) == AL_ERR_INVALID && strstr(err.message, "MLM head"));
    al_train_options bad = al_train_default_options();
    bad.hidden_dropout = 1.0f;
    al_train_ctx *ctx3 = NULL;
    CHECK(al_train_ctx_new(m, 2, 4, &bad, &ctx3, &err) == AL_ERR_INVALID && !ctx3);
    al_train_ctx_free(ctx);
    al_train_ctx_free(ctx2);
    al_model_free(m);
    al_model_free(bare);
}

int main(void) {
    check_ops();
    check_errors();

    const al_config bert = al_config_bert(50, 16, 2, 2, 32);
    al_config bert_tanh = bert, bert_relu = bert, roberta = bert, electra = bert, distil = bert;
    bert_tanh.act = AL_ACT_GELU_TANH;
    bert_relu.act = AL_ACT_RELU;
    roberta.arch = AL_ARCH_ROBERTA;
    roberta.pad_token_id = 1;
    roberta.position_offset = 2;
    electra.arch = AL_ARCH_ELECTRA;
    electra.embedding_size = 8;
    distil.arch = AL_ARCH_DISTILBERT;
    distil.type_vocab_size = 0;

    /* Constant matrices [L, L] for the hooks: a Toeplitz-like pattern and a random positive one. */
    static float C1[L_ * L_ * 4], C2[L_ * L_ * 4];
    al_rng r;
    al_rng_seed(&r, 17);
    for (int i = 0; i < 12; i++)
        for (int j = 0; j < 12; j++) {
            if (i < L_ && j < L_) C1[i * L_ + j] = 1.0f / (float)(abs(i - j) + 1);
        }
    for (int i = 0; i < L_ * L_; i++) C2[i] = 0.05f + al_rng_uniform(&r);
    static float C1b[9 * 9], C2b[9 * 9];
    for (int i = 0; i < 9; i++)
        for (int j = 0; j < 9; j++) C1b[i * 9 + j] = 1.0f / (float)(abs(i - j) + 1), C2b[i * 9 + j] = 0.1f + al_rng_uniform(&r);

    /* Layer 0: STANDARD + CONSTANT (static: the standard head is renormalised); layer 1: MIX + ZERO. */
    al_head_policy static_pol[4] = {{AL_HEAD_STANDARD, 0, NULL}, {AL_HEAD_CONSTANT, 0, C1},
                                    {AL_HEAD_MIX, 0.3f, C2}, {AL_HEAD_ZERO, 0, NULL}};
    /* The PAPA lambda stage: every head MIX. */
    al_head_policy mix_pol[4] = {{AL_HEAD_MIX, 0.5f, C1}, {AL_HEAD_MIX, 0.3f, C2}, {AL_HEAD_MIX, 0.8f, C2},
                                 {AL_HEAD_MIX, 0.6f, C1}};
    al_head_policy static_pol9[4] = {{AL_HEAD_STANDARD, 0, NULL}, {AL_HEAD_CONSTANT, 0, C1b},
                                     {AL_HEAD_MIX, 0.3f, C2b}, {AL_HEAD_ZERO, 0, NULL}};
    al_head_policy mix_pol9[4] = {{AL_HEAD_MIX, 0.5f, C1b}, {AL_HEAD_MIX, 0.3f, C2b}, {AL_HEAD_MIX, 0.8f, C2b},
                                  {AL_HEAD_MIX, 0.6f, C1b}};

    check_forward_matches("bert", bert, NULL);
    check_forward_matches("bert static layer hooks", bert, static_pol9);
    check_forward_matches("bert all-MIX", bert, mix_pol9);
    check_forward_matches("roberta", roberta, NULL);
    check_forward_matches("electra E=8", electra, NULL);
    check_forward_matches("distilbert", distil, NULL);

    check_model_grads("bert gelu", bert, NULL, 0.0f, 0, 1);
    check_model_grads("bert gelu_tanh", bert_tanh, NULL, 0.0f, 0, 1);
    check_model_grads("bert relu", bert_relu, NULL, 0.0f, 0, 1);
    check_model_grads("roberta", roberta, NULL, 0.0f, 0, 1);
    check_model_grads("electra E=8", electra, NULL, 0.0f, 0, 1);
    check_model_grads("distilbert", distil, NULL, 0.0f, 0, 1);
    check_model_grads("bert static layer (STD+CONST, MIX+ZERO)", bert, static_pol, 0.0f, 0, 1);
    check_model_grads("bert all-MIX (lambda stage)", bert, mix_pol, 0.0f, 0, 1);
    check_model_grads("bert all-MIX + probe gradient", bert, mix_pol, 0.0f, 1, 0);
    check_model_grads("bert dropout 0.1 (replayed masks)", bert, static_pol, 0.1f, 1, 1);
    return check_summary("grad");
}
