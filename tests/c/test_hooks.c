/* test_hooks.c: the per-head attention policies against METHODS.md "PAPA: applying C" and the hook golden
 * (tests/golden/bert/hooks.safetensors, computed by hand in PyTorch), plus the forward pass's argument
 * checks, progress and cancellation. Training reads its policies with the same rules and messages. */
#include <string.h>

#include "check.h"
#include "golden_file.h"
#include "model/model_internal.h"
#include "train/train.h"

/* Every output of one forward call. */
typedef struct run {
    int B, L;
    float *hidden, *attn, *values, *logits;
} run;

static void run_alloc(run *r, const al_model *m, int B, int L) {
    const al_config *c = al_model_config(m);
    const size_t NL = (size_t)c->n_layers, H = (size_t)c->n_heads;
    r->B = B;
    r->L = L;
    r->hidden = calloc((NL + 1) * B * L * c->hidden_size, sizeof(float));
    r->attn = calloc(NL * B * H * L * L, sizeof(float));
    r->values = calloc(NL * B * H * L * c->head_dim, sizeof(float));
    r->logits = al_model_has_mlm_head(m) ? calloc((size_t)B * L * c->vocab_size, sizeof(float)) : NULL;
}

static void run_free(run *r) {
    free(r->hidden);
    free(r->attn);
    free(r->values);
    free(r->logits);
    memset(r, 0, sizeof *r);
}

static size_t n_hidden(const al_model *m, const run *r) {
    const al_config *c = al_model_config(m);
    return (size_t)(c->n_layers + 1) * r->B * r->L * c->hidden_size;
}
static size_t n_attn(const al_model *m, const run *r) {
    const al_config *c = al_model_config(m);
    return (size_t)c->n_layers * r->B * c->n_heads * r->L * r->L;
}
static size_t n_values(const al_model *m, const run *r) {
    const al_config *c = al_model_config(m);
    return (size_t)c->n_layers * r->B * c->n_heads * r->L * c->head_dim;
}

static al_status forward(const al_model *m, const al_batch *batch, const al_head_policy *policies, run *r,
                         al_error *err) {
    al_forward_params p = al_forward_default_params();
    p.policies = policies;
    al_forward_outputs out = {
        .hidden_states = r->hidden,
        .attentions = r->attn,
        .values = r->values,
        .mlm_logits = r->logits,
    };
    return al_forward(m, batch, &p, &out, err);
}

/* attentions[l][b][h] row i */
static const float *attn_row(const al_model *m, const run *r, int l, int b, int h, int i) {
    const al_config *c = al_model_config(m);
    return r->attn + ((((size_t)l * r->B + b) * c->n_heads + h) * r->L + i) * r->L;
}

static int has_nan(const float *x, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (x[i] != x[i]) return 1;
    return 0;
}

/* The golden inputs shared by most checks: tests/golden/bert with its padded batch. */
typedef struct fixture {
    al_model *model;
    golden_file g;
    int B, L;
    int32_t *ids, *mask, *types;
    al_batch batch;
} fixture;

static int fixture_open(fixture *f) {
    memset(f, 0, sizeof *f);
    al_error err = {0};
    if (al_model_load_dir("tests/golden/bert", &f->model, &err) != AL_OK) {
        fprintf(stderr, "tests/golden/bert: %s\n", err.message);
        return 0;
    }
    if (!golden_open(&f->g, "tests/golden/bert/hooks.safetensors")) return 0;
    int64_t shape[8] = {0};
    free(golden_f32(&f->g, "input_ids", NULL, shape));
    f->B = (int)shape[0];
    f->L = (int)shape[1];
    f->ids = golden_i32(&f->g, "input_ids");
    f->mask = golden_i32(&f->g, "attention_mask");
    f->types = golden_i32(&f->g, "token_type_ids");
    al_batch b = {f->B, f->L, f->ids, f->mask, f->types, NULL};
    f->batch = b;
    return f->ids && f->mask && f->types;
}

static void fixture_close(fixture *f) {
    free(f->ids);
    free(f->mask);
    free(f->types);
    golden_close(&f->g);
    al_model_free(f->model);
}

/* 1. The hook golden: CONSTANT / ZERO / MIX per head as METHODS.md 2-3 says, computed in PyTorch. Then the
 * "applying C" invariants on the same outputs. */
static void check_hook_golden(fixture *f) {
    const al_config *c = al_model_config(f->model);
    const int NL = c->n_layers, H = c->n_heads, L = f->L, B = f->B;
    float *modes = golden_f32(&f->g, "policy_modes", NULL, NULL);
    float *lambdas = golden_f32(&f->g, "policy_lambdas", NULL, NULL);
    float *consts = golden_f32(&f->g, "constants", NULL, NULL); /* [NL, H, L, L] */
    CHECK(modes && lambdas && consts);
    if (!modes || !lambdas || !consts) return;
    al_head_policy *pol = calloc((size_t)NL * H, sizeof *pol);
    for (int i = 0; i < NL * H; i++) {
        pol[i].mode = (al_head_mode)(int)modes[i];
        pol[i].lambda = lambdas[i];
        pol[i].constant = consts + (size_t)i * L * L;
    }
    run r;
    run_alloc(&r, f->model, B, L);
    al_error err = {0};
    al_status st = forward(f->model, &f->batch, pol, &r, &err);
    CHECK_MSG(st == AL_OK, "%s", err.message);

    float *w_hidden = golden_f32(&f->g, "hidden_states", NULL, NULL);
    float *w_attn = golden_f32(&f->g, "attentions", NULL, NULL);
    float *w_values = golden_f32(&f->g, "values", NULL, NULL);
    float *w_logits = golden_f32(&f->g, "mlm_logits", NULL, NULL);
    CHECK(w_hidden && w_attn && w_values && w_logits);
    if (st == AL_OK && w_hidden && w_attn && w_values && w_logits) {
        double eh = max_abs_diff(r.hidden, w_hidden, n_hidden(f->model, &r));
        double ea = max_abs_diff(r.attn, w_attn, n_attn(f->model, &r));
        double ev = max_abs_diff(r.values, w_values, n_values(f->model, &r));
        double el = max_abs_diff(r.logits, w_logits, (size_t)B * L * c->vocab_size);
        printf("bert hooks     max abs error: hidden %.2e  attentions %.2e  values %.2e  mlm_logits %.2e\n", eh, ea,
               ev, el);
        CHECK_MSG(eh <= 1e-4, "hidden %.3g", eh);
        CHECK_MSG(ea <= 1e-5, "attentions %.3g", ea);
        CHECK_MSG(ev <= 1e-4, "values %.3g", ev);
        CHECK_MSG(el <= 1e-4, "mlm_logits %.3g", el);
    }

    /* Invariants in every layer that has a CONSTANT or ZERO head. */
    CHECK(!has_nan(r.attn, n_attn(f->model, &r)));
    int n_static_layers = 0, n_zero_rows_seen = 0;
    for (int l = 0; l < NL; l++) {
        int is_static = 0;
        for (int h = 0; h < H; h++)
            is_static |= pol[l * H + h].mode == AL_HEAD_CONSTANT || pol[l * H + h].mode == AL_HEAD_ZERO;
        if (!is_static) continue;
        n_static_layers++;
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++) {
                const al_head_policy *p = &pol[l * H + h];
                for (int i = 0; i < L; i++) {
                    const float *row = attn_row(f->model, &r, l, b, h, i);
                    const int valid_q = f->mask[b * L + i];
                    double sum = 0.0, pad_mass = 0.0, cmass = 0.0;
                    for (int j = 0; j < L; j++) {
                        sum += row[j];
                        if (!f->mask[b * L + j] || !valid_q) pad_mass += fabs(row[j]);
                        if (p->constant && f->mask[b * L + j]) cmass += p->constant[(size_t)i * L + j];
                    }
                    CHECK_MSG(pad_mass == 0.0, "layer %d seq %d head %d row %d: mass %g on pad keys/query", l, b,
                              h, i, pad_mass);
                    if (!valid_q) continue;
                    if (p->mode == AL_HEAD_ZERO || (p->mode == AL_HEAD_CONSTANT && cmass == 0.0)) {
                        CHECK_MSG(sum == 0.0, "layer %d seq %d head %d row %d sums %g, want 0", l, b, h, i, sum);
                        n_zero_rows_seen += p->mode == AL_HEAD_CONSTANT;
                    } else {
                        CHECK_MSG(fabs(sum - 1.0) <= 1e-6, "layer %d seq %d head %d row %d sums %.9g", l, b, h, i,
                                  sum);
                    }
                }
            }
    }
    CHECK(n_static_layers == 2);
    CHECK(n_zero_rows_seen == B); /* the golden's C row with no mass, in every sequence */

    /* Layer 0 is static and its input equals the standard run's: its dynamic heads equal the plain
     * softmax on non-pad rows; the plain run's pad-query rows are full softmax rows. */
    run plain;
    run_alloc(&plain, f->model, B, L);
    CHECK(forward(f->model, &f->batch, NULL, &plain, &err) == AL_OK);
    double dyn_err = 0.0;
    int n_dynamic = 0;
    for (int h = 0; h < H; h++) {
        if (pol[h].mode != AL_HEAD_STANDARD) continue;
        n_dynamic++;
        for (int b = 0; b < B; b++)
            for (int i = 0; i < L; i++) {
                const float *a = attn_row(f->model, &r, 0, b, h, i), *s = attn_row(f->model, &plain, 0, b, h, i);
                double plain_sum = 0.0;
                for (int j = 0; j < L; j++) plain_sum += s[j];
                CHECK_NEAR(plain_sum, 1.0, 1e-6);
                if (!f->mask[b * L + i]) continue;
                double e = max_abs_diff(a, s, (size_t)L);
                if (e > dyn_err) dyn_err = e;
            }
    }
    CHECK(n_dynamic >= 1);
    CHECK_MSG(dyn_err <= 1e-6, "dynamic head vs softmax %.3g", dyn_err);
    run_free(&plain);
    run_free(&r);
    free(w_hidden);
    free(w_attn);
    free(w_values);
    free(w_logits);
    free(pol);
    free(modes);
    free(lambdas);
    free(consts);
}

/* A deterministic non-negative constant [L, L] with a given seed pattern (not row-stochastic). */
static void fill_constant(float *C, int L, int seed) {
    for (int i = 0; i < L; i++)
        for (int j = 0; j < L; j++) C[(size_t)i * L + j] = (float)((i * 7 + j * 3 + seed * 5) % 11) / 10.0f;
}

/* 2. All heads CONSTANT: a constant head's context is sum_j C_hat[i,j] V[j] (checked by recomputing layer 0
 * in double from the embeddings and the values output), and the output does not depend on Q/K weights. */
static void check_all_constant(fixture *f) {
    al_model *m = f->model;
    const al_config *c = al_model_config(m);
    const int NL = c->n_layers, H = c->n_heads, L = f->L, B = f->B, D = c->hidden_size, dh = c->head_dim;
    const int I = c->intermediate_size;
    float *consts = malloc(sizeof(float) * (size_t)NL * H * L * L);
    al_head_policy *pol = calloc((size_t)NL * H, sizeof *pol);
    for (int i = 0; i < NL * H; i++) {
        fill_constant(consts + (size_t)i * L * L, L, i);
        pol[i].mode = AL_HEAD_CONSTANT;
        pol[i].constant = consts + (size_t)i * L * L;
    }
    run r, r2;
    run_alloc(&r, m, B, L);
    run_alloc(&r2, m, B, L);
    al_error err = {0};
    CHECK(forward(m, &f->batch, pol, &r, &err) == AL_OK);

    /* C_hat and layer 0 in double. */
    const al_layer_weights *lw = &m->w.layers[0];
    double max_p_err = 0.0, max_h_err = 0.0;
    double *ctx = calloc((size_t)L * D, sizeof(double)), *y = calloc((size_t)L * D, sizeof(double));
    double *ff = calloc((size_t)I, sizeof(double));
    for (int b = 0; b < B; b++) {
        const int32_t *mk = f->mask + (size_t)b * L;
        for (int h = 0; h < H; h++) {
            const float *C = pol[h].constant;
            const float *V = r.values + (((size_t)0 * B + b) * H + h) * L * dh; /* layer 0 */
            for (int i = 0; i < L; i++) {
                double l1 = 0.0;
                for (int j = 0; j < L; j++) l1 += mk[i] && mk[j] ? fabs(C[i * L + j]) : 0.0;
                if (l1 < 1e-12) l1 = 1e-12;
                const float *row = attn_row(m, &r, 0, b, h, i);
                for (int d = 0; d < dh; d++) ctx[(size_t)i * D + h * dh + d] = 0.0;
                for (int j = 0; j < L; j++) {
                    double chat = mk[i] && mk[j] ? C[i * L + j] / l1 : 0.0;
                    if (fabs(chat - row[j]) > max_p_err) max_p_err = fabs(chat - row[j]);
                    for (int d = 0; d < dh; d++) ctx[(size_t)i * D + h * dh + d] += chat * V[(size_t)j * dh + d];
                }
            }
        }
        /* y = LN(x + ctx Wo^T + bo), then LN(y + FFN(y)): compare with hidden_states[1]. */
        const float *x = r.hidden + (size_t)b * L * D;
        for (int i = 0; i < L; i++) {
            double *yi = y + (size_t)i * D;
            for (int o = 0; o < D; o++) {
                double s = lw->o_b[o];
                for (int k = 0; k < D; k++) s += ctx[(size_t)i * D + k] * lw->o_w[(size_t)o * D + k];
                yi[o] = x[(size_t)i * D + o] + s;
            }
            for (int pass = 0; pass < 2; pass++) {
                const float *g = pass ? lw->ln_ffn_g : lw->ln_attn_g, *be = pass ? lw->ln_ffn_b : lw->ln_attn_b;
                if (pass) { /* FFN with exact GELU (the golden bert uses "gelu") */
                    double z[256];
                    for (int u = 0; u < I; u++) {
                        double s = lw->ff_in_b[u];
                        for (int k = 0; k < D; k++) s += yi[k] * lw->ff_in_w[(size_t)u * D + k];
                        ff[u] = 0.5 * s * (1.0 + erf(s / sqrt(2.0)));
                    }
                    for (int o = 0; o < D; o++) {
                        double s = lw->ff_out_b[o];
                        for (int u = 0; u < I; u++) s += ff[u] * lw->ff_out_w[(size_t)o * I + u];
                        z[o] = yi[o] + s;
                    }
                    for (int o = 0; o < D; o++) yi[o] = z[o];
                }
                double mean = 0.0, var = 0.0;
                for (int o = 0; o < D; o++) mean += yi[o];
                mean /= D;
                for (int o = 0; o < D; o++) var += (yi[o] - mean) * (yi[o] - mean);
                var /= D;
                for (int o = 0; o < D; o++) yi[o] = (yi[o] - mean) / sqrt(var + c->layer_norm_eps) * g[o] + be[o];
            }
            const float *got = r.hidden + ((size_t)1 * B * L + (size_t)b * L + i) * D;
            for (int o = 0; o < D; o++)
                if (fabs(got[o] - yi[o]) > max_h_err) max_h_err = fabs(got[o] - yi[o]);
        }
    }
    CHECK(D <= 256);
    CHECK_MSG(max_p_err <= 1e-6, "C_hat %.3g", max_p_err);
    CHECK_MSG(max_h_err <= 1e-4, "layer 0 from C_hat V %.3g", max_h_err);
    free(ctx);
    free(y);
    free(ff);

    /* Perturb every Q/K weight and bias: the all-constant output must not move, the standard one must. */
    run std1, std2;
    run_alloc(&std1, m, B, L);
    run_alloc(&std2, m, B, L);
    CHECK(forward(m, &f->batch, NULL, &std1, &err) == AL_OK);
    size_t nw = (size_t)D * D;
    for (int l = 0; l < NL; l++) {
        al_layer_weights *w = &m->w.layers[l];
        for (size_t e = 0; e < nw; e++) {
            w->q_w[e] += 0.5f * (float)((int)(e % 7) - 3);
            w->k_w[e] -= 0.3f * (float)((int)(e % 5) - 2);
        }
        for (int e = 0; e < D; e++) {
            w->q_b[e] += 1.0f;
            w->k_b[e] -= 2.0f;
        }
    }
    CHECK(forward(m, &f->batch, pol, &r2, &err) == AL_OK);
    CHECK(memcmp(r.hidden, r2.hidden, n_hidden(m, &r) * sizeof(float)) == 0);
    CHECK(memcmp(r.attn, r2.attn, n_attn(m, &r) * sizeof(float)) == 0);
    CHECK(memcmp(r.logits, r2.logits, (size_t)B * L * c->vocab_size * sizeof(float)) == 0);
    CHECK(forward(m, &f->batch, NULL, &std2, &err) == AL_OK);
    CHECK(max_abs_diff(std1.hidden, std2.hidden, n_hidden(m, &r)) > 1e-3); /* the perturbation is real */
    run_free(&std1);
    run_free(&std2);
    run_free(&r);
    run_free(&r2);
    free(pol);
    free(consts);
}

/* 3. MIX: lambda = 1 equals the standard run on non-pad rows; lambda = 0.5 rows sum to 1 on non-pad queries
 * and to 0.5 on pad queries (the softmax term is not renormalised). ZERO with an all-zero layer; an all-zero
 * C gives zero rows, never NaN. Uses a fresh random model. */
static void check_mix_and_zero(void) {
    al_config cfg = al_config_bert(50, 32, 2, 4, 64);
    al_model *m = NULL;
    al_error err = {0};
    al_status st = al_model_new_random(&cfg, 42, 1, &m, &err);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    if (st != AL_OK) return;
    const int B = 2, L = 7, NL = cfg.n_layers, H = cfg.n_heads;
    int32_t ids[14], mask[14];
    for (int i = 0; i < B * L; i++) {
        ids[i] = 1 + (i * 13) % 49;
        mask[i] = i < L || i % L < 4; /* sequence 1 has 4 real tokens */
        if (!mask[i]) ids[i] = 0;
    }
    al_batch batch = {B, L, ids, mask, NULL, NULL};
    float *consts = malloc(sizeof(float) * (size_t)L * L);
    fill_constant(consts, L, 3);
    al_head_policy *pol = calloc((size_t)NL * H, sizeof *pol);
    run std, mix, r0;
    run_alloc(&std, m, B, L);
    run_alloc(&mix, m, B, L);
    run_alloc(&r0, m, B, L);
    CHECK(forward(m, &batch, NULL, &std, &err) == AL_OK);

    /* All STANDARD given explicitly == policies NULL, bit for bit. */
    CHECK(forward(m, &batch, pol, &mix, &err) == AL_OK);
    CHECK(memcmp(std.hidden, mix.hidden, n_hidden(m, &std) * sizeof(float)) == 0);
    CHECK(memcmp(std.attn, mix.attn, n_attn(m, &std) * sizeof(float)) == 0);
    CHECK(memcmp(std.values, mix.values, n_values(m, &std) * sizeof(float)) == 0);
    CHECK(memcmp(std.logits, mix.logits, (size_t)B * L * cfg.vocab_size * sizeof(float)) == 0);

    for (int i = 0; i < NL * H; i++) {
        pol[i].mode = AL_HEAD_MIX;
        pol[i].lambda = 1.0f;
        pol[i].constant = consts;
    }
    CHECK(forward(m, &batch, pol, &mix, &err) == AL_OK);
    double e = 0.0;
    for (int l = 0; l < NL; l++)
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++)
                for (int i = 0; i < L; i++)
                    if (mask[b * L + i]) {
                        double d = max_abs_diff(attn_row(m, &mix, l, b, h, i), attn_row(m, &std, l, b, h, i), L);
                        if (d > e) e = d;
                    }
    CHECK_MSG(e <= 1e-7, "MIX lambda 1 vs standard %.3g", e);
    CHECK(max_abs_diff(mix.hidden, std.hidden, n_hidden(m, &std)) <= 1e-6);

    for (int i = 0; i < NL * H; i++) pol[i].lambda = 0.5f;
    CHECK(forward(m, &batch, pol, &mix, &err) == AL_OK);
    for (int l = 0; l < NL; l++)
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++)
                for (int i = 0; i < L; i++) {
                    const float *row = attn_row(m, &mix, l, b, h, i);
                    double sum = 0.0;
                    for (int j = 0; j < L; j++) sum += row[j];
                    CHECK_NEAR(sum, mask[b * L + i] ? 1.0 : 0.5, 1e-6);
                }

    /* Layer 1 all ZERO, layer 0 all CONSTANT with an all-zero C: every row 0, no NaN, finite output. */
    float *zeros = calloc((size_t)L * L, sizeof(float));
    for (int h = 0; h < H; h++) {
        pol[h].mode = AL_HEAD_CONSTANT;
        pol[h].constant = zeros;
        pol[H + h].mode = AL_HEAD_ZERO;
        pol[H + h].constant = NULL;
    }
    CHECK(forward(m, &batch, pol, &r0, &err) == AL_OK);
    double mass = 0.0;
    for (size_t k = 0; k < n_attn(m, &r0); k++) mass += fabs(r0.attn[k]);
    CHECK(mass == 0.0);
    CHECK(!has_nan(r0.hidden, n_hidden(m, &r0)));
    CHECK(!has_nan(r0.logits, (size_t)B * L * cfg.vocab_size));
    free(zeros);
    run_free(&std);
    run_free(&mix);
    run_free(&r0);
    free(pol);
    free(consts);
    al_model_free(m);
}

/* 4. Progress per layer and cancellation. */
typedef struct progress_log {
    int calls;
    double last;
    volatile int *cancel_after_first;
} progress_log;

static void on_progress(void *user, const char *stage, double fraction) {
    progress_log *p = user;
    p->calls++;
    p->last = fraction;
    if (p->cancel_after_first) *p->cancel_after_first = 1;
    (void)stage;
}

static void check_progress_and_cancel(fixture *f) {
    const al_config *c = al_model_config(f->model);
    al_forward_params p = al_forward_default_params();
    progress_log log = {0, 0.0, NULL};
    p.progress = on_progress;
    p.progress_user = &log;
    al_error err = {0};
    CHECK(al_forward(f->model, &f->batch, &p, NULL, &err) == AL_OK);
    CHECK(log.calls == c->n_layers);
    CHECK_NEAR(log.last, 1.0, 1e-12);

    volatile int cancel = 1;
    p.cancel = &cancel;
    CHECK(al_forward(f->model, &f->batch, &p, NULL, &err) == AL_ERR_CANCELLED);
    CHECK(err.code == AL_ERR_CANCELLED);

    cancel = 0;
    log.calls = 0;
    log.cancel_after_first = &cancel; /* raised from the progress callback after layer 0 */
    CHECK(al_forward(f->model, &f->batch, &p, NULL, &err) == AL_ERR_CANCELLED);
    CHECK(log.calls == 1);
    CHECK(strstr(err.message, "layer 1") != NULL);
}

/* 5. Argument checks name what is wrong. */
static void check_errors(fixture *f) {
    const al_config *c = al_model_config(f->model);
    const int B = f->B, L = f->L;
    al_error err = {0};
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)B * L);
    memcpy(ids, f->ids, sizeof(int32_t) * (size_t)B * L);
    al_batch bad = f->batch;
    bad.input_ids = ids;

    ids[1 * L + 4] = c->vocab_size;
    CHECK(al_forward(f->model, &bad, NULL, NULL, &err) == AL_ERR_INVALID);
    CHECK_MSG(strstr(err.message, "input_ids[1][4]") != NULL, "%s", err.message);
    ids[1 * L + 4] = -1;
    CHECK(al_forward(f->model, &bad, NULL, NULL, &err) == AL_ERR_INVALID);
    memcpy(ids, f->ids, sizeof(int32_t) * (size_t)B * L);

    int32_t *types = malloc(sizeof(int32_t) * (size_t)B * L);
    memcpy(types, f->types, sizeof(int32_t) * (size_t)B * L);
    types[2 * L + 1] = c->type_vocab_size;
    bad.type_ids = types;
    CHECK(al_forward(f->model, &bad, NULL, NULL, &err) == AL_ERR_INVALID);
    CHECK_MSG(strstr(err.message, "type_ids[2][1]") != NULL, "%s", err.message);
    bad.type_ids = f->types;
    free(types);

    int32_t *pos = calloc((size_t)B * L, sizeof(int32_t));
    pos[3] = c->max_position_embeddings;
    bad.position_ids = pos;
    CHECK(al_forward(f->model, &bad, NULL, NULL, &err) == AL_ERR_INVALID);
    CHECK_MSG(strstr(err.message, "position_ids[0][3]") != NULL, "%s", err.message);
    bad.position_ids = NULL;
    free(pos);

    /* A sequence longer than the position table. */
    const int long_len = c->max_position_embeddings + 1;
    int32_t *long_ids = calloc((size_t)long_len, sizeof(int32_t));
    al_batch too_long = {1, long_len, long_ids, NULL, NULL, NULL};
    CHECK(al_forward(f->model, &too_long, NULL, NULL, &err) == AL_ERR_INVALID);
    CHECK_MSG(strstr(err.message, "seq_len") != NULL, "%s", err.message);
    too_long.seq_len = c->max_position_embeddings; /* exactly the table: fine for BERT */
    CHECK(al_forward(f->model, &too_long, NULL, NULL, &err) == AL_OK);

    /* RoBERTa loses pad_token_id + 1 positions to its offset. */
    al_model *rob = NULL;
    if (al_model_load_dir("tests/golden/roberta", &rob, &err) == AL_OK) {
        const al_config *rc = al_model_config(rob);
        for (int i = 0; i < long_len; i++) long_ids[i] = 5;
        al_batch rb = {1, rc->max_position_embeddings - 1, long_ids, NULL, NULL, NULL};
        CHECK(al_forward(rob, &rb, NULL, NULL, &err) == AL_ERR_INVALID);
        CHECK_MSG(strstr(err.message, "offset") != NULL, "%s", err.message);
        rb.seq_len = rc->max_position_embeddings - rc->position_offset;
        CHECK_MSG(al_forward(rob, &rb, NULL, NULL, &err) == AL_OK, "%s", err.message);
        al_model_free(rob);
    } else {
        CHECK_MSG(0, "tests/golden/roberta: %s", err.message);
    }
    free(long_ids);

    /* Policies: al_forward and al_train_set_policies apply one check (src/model/head_policy.c). */
    al_head_policy *pol = calloc((size_t)c->n_layers * c->n_heads, sizeof *pol);
    al_forward_params p = al_forward_default_params();
    p.policies = pol;
    al_train_ctx *tr = NULL;
    al_train_options topt = al_train_default_options();
    CHECK_MSG(al_train_ctx_new(f->model, B, L, &topt, &tr, &err) == AL_OK, "%s", err.message);
    al_error terr = {0};
    pol[c->n_heads + 2].mode = AL_HEAD_CONSTANT; /* layer 1 head 2, no matrix */
    CHECK(al_forward(f->model, &f->batch, &p, NULL, &err) == AL_ERR_INVALID);
    CHECK_MSG(strstr(err.message, "layer 1 head 2: CONSTANT needs a constant [") != NULL, "%s", err.message);
    CHECK(tr && al_train_set_policies(tr, pol, &terr) == AL_ERR_INVALID);
    CHECK_MSG(strcmp(terr.message, "train: policy of layer 1 head 2: CONSTANT needs a constant matrix") == 0,
              "%s", terr.message);
    float *C = calloc((size_t)L * L, sizeof(float));
    pol[c->n_heads + 2].constant = C;
    pol[c->n_heads + 2].mode = AL_HEAD_MIX;
    pol[c->n_heads + 2].lambda = 1.5f;
    CHECK(al_forward(f->model, &f->batch, &p, NULL, &err) == AL_ERR_INVALID);
    CHECK_MSG(strstr(err.message, "lambda") != NULL, "%s", err.message);
    CHECK(tr && al_train_set_policies(tr, pol, &terr) == AL_ERR_INVALID);
    CHECK_MSG(strncmp(err.message, "forward: ", 9) == 0 && strncmp(terr.message, "train: ", 7) == 0 &&
                  strcmp(err.message + 9, terr.message + 7) == 0,
              "'%s' vs '%s'", err.message, terr.message);
    pol[c->n_heads + 2].lambda = NAN;
    CHECK(al_forward(f->model, &f->batch, &p, NULL, &err) == AL_ERR_INVALID);
    CHECK(tr && al_train_set_policies(tr, pol, &terr) == AL_ERR_INVALID);
    pol[c->n_heads + 2].lambda = 0.25f;
    CHECK(al_forward(f->model, &f->batch, &p, NULL, &err) == AL_OK);
    CHECK(tr && al_train_set_policies(tr, pol, &terr) == AL_OK);
    pol[0].mode = (al_head_mode)9;
    CHECK(al_forward(f->model, &f->batch, &p, NULL, &err) == AL_ERR_INVALID);
    CHECK(tr && al_train_set_policies(tr, pol, &terr) == AL_ERR_INVALID);
    CHECK_MSG(strcmp(err.message + 9, terr.message + 7) == 0, "'%s' vs '%s'", err.message, terr.message);
    al_train_ctx_free(tr);
    free(C);
    free(pol);

    /* MLM logits from a model without a head. */
    al_model *bare = NULL;
    if (al_model_load_dir("tests/golden/bert_gelu_new", &bare, &err) == AL_OK) {
        float logits[4];
        al_forward_outputs out = {.mlm_logits = logits};
        al_batch one = {1, 1, f->ids, NULL, NULL, NULL};
        CHECK(al_forward(bare, &one, NULL, &out, &err) == AL_ERR_INVALID);
        CHECK_MSG(strstr(err.message, "MLM head") != NULL, "%s", err.message);
        al_model_free(bare);
    }
    al_batch empty = {0, L, f->ids, NULL, NULL, NULL};
    CHECK(al_forward(f->model, &empty, NULL, NULL, &err) == AL_ERR_INVALID);
    CHECK(al_forward(NULL, &f->batch, NULL, NULL, &err) == AL_ERR_INVALID);
    free(ids);
}

int main(void) {
    fixture f;
    int ok = fixture_open(&f);
    CHECK_MSG(ok, "cannot open tests/golden/bert");
    if (ok) {
        check_hook_golden(&f);
        check_progress_and_cancel(&f);
        check_errors(&f);
        check_all_constant(&f); /* last: it perturbs the model's Q/K weights */
    }
    fixture_close(&f);
    check_mix_and_zero();
    return check_summary("hooks");
}
