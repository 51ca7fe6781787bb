/* test_real_rows.c: the row-wise layers run on the real tokens only (src/model/real_rows.h, docs/speed.md, "Linear
 * layers on the real rows") and every real token's numbers stay the same bits:
 *  - the row moves: compacting then expanding gives the rows back with zeros at the pads;
 *  - the training passes (al_train_options.real_rows) on every golden family with every head MIX and dropout on:
 *    the real tokens' hidden states, the lambda-logit and lambda gradients, bit for bit against the padded pass,
 *    the pads' hidden states 0; real_rows with weight gradients is refused by name;
 *  - ModernBERT (the golden and a random one with a wider window) likewise, and its packed forward pass with every
 *    head mode on its real rows against the one over its packing pads: every output the same bits;
 *  - the PAPA sweep on attnlab-mini-bert, a token task and a sequence task, with the lambda ranking in eval and
 *    in train mode (dropout): the learned logits, the ranking's loss, the constants and every score, bit for bit
 *    against the sweep whose passes run the pads too (rank.pad_rows, pad_rows).
 * The packed forward pass of the other families (al_forward_params.pad_rows) is compared in test_skip_pads.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "core/rng.h"
#include "methods/papa/papa_sweep.h"
#include "model/real_rows.h"
#include "train/train.h"

enum { B = 3, L = 24 };

static void test_row_moves(void) {
    enum { R = 9, W = 3 };
    const float mask[R] = {0, 1, 1, 0, 0, 1, 0, 1, 0};
    int32_t row_of[R];
    const int n = al_real_rows(mask, R, row_of);
    CHECK(n == 4 && row_of[0] == 1 && row_of[3] == 7);
    float buf[R * W], orig[R * W], g[R * W];
    for (int i = 0; i < R * W; i++) buf[i] = orig[i] = (float)(i + 1);
    al_rows_gather(g, orig, sizeof(float) * W, row_of, n);
    al_rows_compact(buf, sizeof(float) * W, row_of, n);
    CHECK(memcmp(buf, g, sizeof(float) * n * W) == 0);
    al_rows_expand(buf, sizeof(float) * W, row_of, n, R);
    int ok = 1;
    for (int r = 0; r < R; r++)
        for (int e = 0; e < W; e++) ok &= buf[r * W + e] == (mask[r] ? orig[r * W + e] : 0.0f);
    CHECK_MSG(ok, "compact then expand does not give the real rows back with zeros at the pads");
}

/* PAPA's layout (docs/papa.md#input-layout): a sentence of 6 tokens, a pair (10 tokens, then 5 from L/2), 15
 * tokens; each ends with a separator at L - 1. */
static void papa_batch(const al_config *c, int32_t *ids, int32_t *mask, int32_t *types) {
    al_rng rng;
    al_rng_seed(&rng, 5);
    for (int b = 0; b < B; b++)
        for (int i = 0; i < L; i++) {
            const int t = b * L + i;
            const int real = i == L - 1 || (b == 0 && i < 6) || (b == 1 && (i < 10 || (i >= L / 2 && i < L / 2 + 5))) ||
                             (b == 2 && i < 15);
            mask[t] = real;
            ids[t] = real ? 5 + (int32_t)al_rng_below(&rng, (uint32_t)(c->vocab_size - 5)) : c->pad_token_id;
            types[t] = c->type_vocab_size > 1 && b == 1 && i >= L / 2 ? 1 : 0;
        }
}

typedef struct pass {
    float *hidden, *dtheta;
    double *dlambda;
} pass;

/* Forward and backward of a frozen encoder with every head MIX, dropout on; gradients given at the real rows. */
static int train_pass(al_model *m, const al_batch *batch, const al_head_policy *pol, const float *d_hidden, int real_rows,
                      pass *out) {
    const al_config *c = al_model_config(m);
    const size_t NH = (size_t)c->n_layers * c->n_heads, n = (size_t)(c->n_layers + 1) * B * L * c->hidden_size;
    al_train_options o = al_train_default_options();
    o.weight_grads = 0;
    o.mlm_head = 0;
    o.real_rows = real_rows;
    al_train_ctx *ctx = NULL;
    al_error err = {0};
    al_status st = al_train_ctx_new(m, B, L, &o, &ctx, &err);
    if (!st) st = al_train_set_policies(ctx, pol, &err);
    if (!st) st = al_train_forward(ctx, batch, &err);
    out->hidden = malloc(sizeof(float) * n);
    out->dtheta = malloc(sizeof(float) * NH);
    out->dlambda = malloc(sizeof(double) * NH);
    for (int l = 0; !st && l <= c->n_layers; l++)
        memcpy(out->hidden + (size_t)l * B * L * c->hidden_size, al_train_hidden(ctx, l),
               sizeof(float) * B * L * c->hidden_size);
    if (!st) al_train_zero_grads(ctx);
    if (!st) st = al_train_backward(ctx, d_hidden, &err);
    if (!st) {
        memcpy(out->dtheta, al_train_lambda_grads(ctx), sizeof(float) * NH);
        memcpy(out->dlambda, al_train_lambda_value_grads(ctx), sizeof(double) * NH);
    }
    CHECK_MSG(st == AL_OK, "%s", err.message);
    al_train_ctx_free(ctx);
    return st == AL_OK;
}

static void test_train_model(al_model *m, const char *dir) {
    al_error err = {0};
    const al_config *c = al_model_config(m);
    const int NL = c->n_layers, H = c->n_heads, D = c->hidden_size;
    int32_t ids[B * L], mask[B * L], types[B * L];
    papa_batch(c, ids, mask, types);
    al_batch batch = {B, L, ids, mask, c->type_vocab_size > 1 ? types : NULL, NULL};
    al_head_policy *pol = calloc((size_t)NL * H, sizeof *pol);
    float *C = malloc(sizeof(float) * L * L);
    al_rng rng;
    al_rng_seed(&rng, 11);
    for (int i = 0; i < L * L; i++) C[i] = 0.05f + al_rng_uniform(&rng);
    for (int k = 0; k < NL * H; k++) pol[k] = (al_head_policy){AL_HEAD_MIX, 0.2f + 0.6f * (float)k / (NL * H), C};
    const size_t per = (size_t)B * L * D, n = (size_t)(NL + 1) * per;
    float *d_hidden = malloc(sizeof(float) * n);
    for (size_t i = 0; i < n; i++) d_hidden[i] = mask[i / D % (B * L)] ? al_rng_uniform(&rng) - 0.5f : 0.0f;

    pass full = {0}, real = {0};
    if (train_pass(m, &batch, pol, d_hidden, 0, &full) && train_pass(m, &batch, pol, d_hidden, 1, &real)) {
        int same_real = 1, pads_zero = 1;
        for (size_t i = 0; i < n; i++) {
            if (mask[i / D % (B * L)]) same_real &= memcmp(&full.hidden[i], &real.hidden[i], sizeof(float)) == 0;
            else if (i >= per) pads_zero &= real.hidden[i] == 0.0f; /* the layers' outputs; the embeddings are computed */
        }
        CHECK_MSG(same_real, "%s: the real tokens' hidden states differ on real rows", dir);
        CHECK_MSG(pads_zero, "%s: the layers' outputs at pads are not 0 on real rows", dir);
        CHECK_MSG(memcmp(full.dtheta, real.dtheta, sizeof(float) * NL * H) == 0, "%s: lambda-logit gradients differ", dir);
        CHECK_MSG(memcmp(full.dlambda, real.dlambda, sizeof(double) * NL * H) == 0, "%s: lambda gradients differ", dir);
        int moved = 0;
        for (int k = 0; k < NL * H; k++) moved += real.dtheta[k] != 0.0f;
        CHECK_MSG(moved == NL * H, "%s: only %d of %d heads got a gradient", dir, moved, NL * H);
        printf("%s: real rows %s the padded pass's hidden states and lambda gradients\n", dir,
               same_real && memcmp(full.dtheta, real.dtheta, sizeof(float) * NL * H) == 0 ? "give" : "DIFFER FROM");
    }
    free(full.hidden), free(full.dtheta), free(full.dlambda);
    free(real.hidden), free(real.dtheta), free(real.dlambda);

    /* weight gradients sum over every row: refused by name */
    al_train_options o = al_train_default_options();
    o.real_rows = 1;
    al_train_ctx *ctx = NULL;
    CHECK(al_train_ctx_new(m, B, L, &o, &ctx, &err) == AL_ERR_INVALID);
    CHECK_MSG(strstr(err.message, "real_rows") && strstr(err.message, "weight_grads"), "%s", err.message);
    al_train_ctx_free(ctx);
    free(d_hidden), free(pol), free(C);
}

static void test_train_family(const char *dir) {
    al_model *m = NULL;
    al_error err = {0};
    CHECK_MSG(al_model_load_dir(dir, &m, &err) == AL_OK, "%s: %s", dir, err.message);
    if (m) test_train_model(m, dir);
    al_model_free(m);
}

/* The packed forward pass (skip_pads) with every head mode, on its real rows and over its packing pads
 * (pad_rows): every output the same bits. */
static int packed_forward(const al_model *m, const int32_t *ids, const int32_t *mask, const al_head_policy *pol,
                          int pad_rows, float *hidden, float *attn, float *values, float *logits) {
    al_forward_outputs out = {.hidden_states = hidden, .attentions = attn, .values = values, .mlm_logits = logits};
    al_batch batch = {B, L, ids, mask, NULL, NULL};
    al_forward_params p = al_forward_default_params();
    p.policies = pol;
    p.skip_pads = 1;
    p.pad_rows = pad_rows;
    al_error err = {0};
    const al_status st = al_forward(m, &batch, &p, &out, &err);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    return st == AL_OK;
}

static void test_forward_model(const al_model *m, const char *name) {
    const al_config *c = al_model_config(m);
    const int NL = c->n_layers, H = c->n_heads;
    int32_t ids[B * L], mask[B * L], types[B * L];
    papa_batch(c, ids, mask, types);
    al_head_policy *pol = calloc((size_t)NL * H, sizeof *pol);
    float *C = malloc(sizeof(float) * L * L);
    al_rng rng;
    al_rng_seed(&rng, 13);
    for (int i = 0; i < L * L; i++) C[i] = 0.05f + al_rng_uniform(&rng);
    for (int k = 0; k < NL * H; k++) {
        pol[k].mode = (al_head_mode)((k + k / H) % 4);
        pol[k].lambda = 0.3f;
        pol[k].constant = pol[k].mode == AL_HEAD_CONSTANT || pol[k].mode == AL_HEAD_MIX ? C : NULL;
    }
    const size_t nh = (size_t)(NL + 1) * B * L * c->hidden_size, na = (size_t)NL * B * H * L * L;
    const size_t nv = (size_t)NL * B * H * L * c->head_dim, nl = al_model_has_mlm_head(m) ? (size_t)B * L * c->vocab_size : 0;
    const size_t n_all = nh + na + nv + nl;
    float *real = malloc(sizeof(float) * n_all), *padded = malloc(sizeof(float) * n_all);
    for (int with_pol = 0; with_pol <= 1; with_pol++) {
        const al_head_policy *p = with_pol ? pol : NULL;
        if (!packed_forward(m, ids, mask, p, 0, real, real + nh, real + nh + na, nl ? real + nh + na + nv : NULL) ||
            !packed_forward(m, ids, mask, p, 1, padded, padded + nh, padded + nh + na, nl ? padded + nh + na + nv : NULL))
            continue;
        const int same = memcmp(real, padded, sizeof(float) * n_all) == 0;
        CHECK_MSG(same, "%s (%s): the packed pass on its real rows differs from the one over its pads", name,
                  with_pol ? "every head mode" : "all heads standard");
        printf("%s, packed forward (%s): the same bits on real rows: %s\n", name,
               with_pol ? "every head mode" : "all heads standard", same ? "yes" : "NO");
    }
    free(real), free(padded), free(pol), free(C);
}

/* ModernBERT (docs/families.md): pre-norm layers, fused QKV, GeGLU, a final norm, and rotary queries and keys
 * turned by each real row's position id, not its compact index. The golden's window is 2 each side (layers 1 and
 * 2 local); this random one's 3 (layers 1, 2, 4 and 5 local), more heads and a wider MLP. The batch's pair has
 * pads between its segments, inside the windows of real tokens on either side. */
static void test_modernbert(void) {
    al_model *g = NULL;
    al_error err = {0};
    CHECK_MSG(al_model_load_dir("tests/golden/modernbert", &g, &err) == AL_OK, "%s", err.message);
    if (g) {
        test_train_model(g, "tests/golden/modernbert");
        test_forward_model(g, "tests/golden/modernbert");
    }
    al_model_free(g);
    const char *json = "{\"model_type\": \"modernbert\", \"vocab_size\": 80, \"hidden_size\": 48, "
                       "\"num_hidden_layers\": 6, \"num_attention_heads\": 4, \"intermediate_size\": 40, "
                       "\"max_position_embeddings\": 64, \"global_attn_every_n_layers\": 3, \"local_attention\": 6, "
                       "\"pad_token_id\": 0}";
    al_config c;
    al_model *m = NULL;
    CHECK_MSG(al_config_parse(json, strlen(json), "config.json", &c, &err) == AL_OK &&
                  al_model_new_random(&c, 19, 1, &m, &err) == AL_OK,
              "%s", err.message);
    if (m) {
        test_train_model(m, "random modernbert");
        test_forward_model(m, "random modernbert");
    }
    al_model_free(m);
}

static int same_sweeps(const al_papa_sweep_result *a, const al_papa_sweep_result *b, int NH, size_t n_const) {
    if (a->n_runs != b->n_runs || !a->theta || !b->theta) return 0;
    int same = memcmp(a->theta, b->theta, sizeof(float) * NH) == 0 && a->rank_loss == b->rank_loss;
    same &= !a->constants || memcmp(a->constants, b->constants, sizeof(float) * n_const) == 0;
    for (int i = 0; i < a->n_runs; i++) same &= a->runs[i].score == b->runs[i].score;
    return same;
}

static void test_sweep(al_model *m, const char *id, int L_task, int train_mode) {
    al_task *task = NULL;
    al_error err = {0};
    if (al_task_load_builtin("build/data/tasks", id, &task, &err) != AL_OK) {
        printf("skip %s: %s\n", id, err.message);
        return;
    }
    const al_config *c = al_model_config(m);
    al_papa_sweep_request req = al_papa_sweep_default_request();
    req.max_train = 40;
    req.max_validation = 16;
    req.L = L_task;
    req.plan.n_seeds = 1;
    req.n_fractions = 2;
    req.fractions[0] = 1.0, req.fractions[1] = 0.5;
    req.probe.epochs = 1;
    req.rank.epochs = 2;
    req.rank.train_mode = train_mode;
    al_papa_sweep_result real, padded;
    CHECK_MSG(al_papa_sweep_run(m, task, &req, &real, &err) == AL_OK, "%s", err.message);
    req.pad_rows = 1;
    req.rank.pad_rows = 1;
    CHECK_MSG(al_papa_sweep_run(m, task, &req, &padded, &err) == AL_OK, "%s", err.message);
    const int NH = c->n_layers * c->n_heads;
    const int same = same_sweeps(&real, &padded, NH, (size_t)NH * L_task * L_task);
    CHECK_MSG(same, "%s (ranking %s mode): the sweep on real rows differs from the one over the pads", id,
              train_mode ? "train" : "eval");
    printf("%s, ranking in %s mode: %d runs, rank loss %.6f, the same bits on real rows: %s\n", id,
           train_mode ? "train" : "eval", real.n_runs, real.rank_loss, same ? "yes" : "NO");
    al_papa_sweep_result_free(&real);
    al_papa_sweep_result_free(&padded);
    al_task_free(task);
}

int main(void) {
    test_row_moves();
    static const char *const dirs[] = {"models/attnlab-mini-bert", "tests/golden/bert", "tests/golden/roberta",
                                       "tests/golden/distilbert", "tests/golden/electra", "tests/golden/deberta_v3"};
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) test_train_family(dirs[d]);
    test_modernbert();
    al_model *m = NULL;
    al_error err = {0};
    CHECK_MSG(al_model_load_dir("models/attnlab-mini-bert", &m, &err) == AL_OK, "%s", err.message);
    if (m) {
        test_sweep(m, "pos", 32, 0);
        test_sweep(m, "definition", 48, 0);
        test_sweep(m, "pos", 32, 1);
    }
    al_model_free(m);
    return check_summary("real_rows");
}
