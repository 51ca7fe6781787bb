/* op_head_roles.c: the "head_roles" op (docs/measures.md "Head roles", the rule in docs/findings.md "Head roles"): a
 * causal model's induction, duplicate-token, previous-token and sink heads.
 *
 *   {"op": "head_roles", "model", "sequences"?: R, "length"?: n, "seed"?,
 *    "texts" | "input_ids" | "corpus"?, "corpus_name"?, "max_length"?, "add_special_tokens"?}
 *   -> "inputs" {sequences, length, seed, offset, start_token, vocabulary, texts}; "ids" [R][offset + 2 n] the
 *      repeated random sequences drawn; "repeat" {induction, duplicate_token, previous_token, sink} and, with texts,
 *      "text" {previous_token, sink}: per role the [NL][H] score, chance, effect, ratio, p, p_holm, units above and
 *      below their chance, the heads with the role [[l, h], ...] and the weak ones (significant, below twice their
 *      chance), its verdict, units and min_units; "repeat_loss": the mean
 *      next-token loss in bits on the first copy and on the second, and their difference, each with a 95% interval
 *      over the sequences; "rule", "digest".
 * Every sequence and every text runs alone (a batch of one, no padding), once for its attentions and once through
 * the language-model head (lm_score.h).
 * A corpus (the lm op's "corpus": a text file's documents or JSONL "text" fields, src/methods/lm/lm_corpus.h) gives
 * one text unit per document, its first window of the model's positions: documents are the independent units, as
 * in the lm op's interval. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/memory.h"
#include "../methods/lm/lm_score.h"
#include "../methods/measures/finding_stats.h"
#include "../methods/probes/metrics.h"
#include "../methods/roles/head_roles.h"
#include "attention_parts.h"
#include "corpus_reply.h"
#include "op_agreement.h"
#include "reply_digest.h"

#define LN2 0.69314718055994530942
#define ROLES_DEFAULT_LENGTH 32
#define ROLES_DEFAULT_SEQUENCES 16
#define ROLES_DEFAULT_SEED 0
#define ROLES_MAX_LENGTH 2048

const al_req_field al_fields_head_roles_own[] = {
    AL_F_INT("sequences", 1, 512, "16", "repeated random sequences R: the units of the induction and duplicate-token "
                                        "tests"),
    AL_F_INT("length", 2, ROLES_MAX_LENGTH, NULL, "random tokens n before the repeat (default 32, or the most the "
                                                   "model's positions hold twice)"),
    AL_F_INT("seed", 0, 2147483647, "0", "the random sequences' seed: the same seed draws the same tokens everywhere"),
    AL_F_END,
};

/* The units of one source (the repeats or the texts): per unit, role and head its score and chance. */
typedef struct role_units {
    int U, NH;
    double *score, *chance; /* [U, AL_ROLE_N, NH] */
} role_units;

static al_status units_new(int U, int NH, role_units *u, al_error *err) {
    const size_t n = (size_t)(U > 0 ? U : 1) * AL_ROLE_N * NH;
    u->U = U, u->NH = NH;
    u->score = malloc(sizeof(double) * n), u->chance = malloc(sizeof(double) * n);
    if (!u->score || !u->chance) return al_err(err, AL_ERR_OOM, "head_roles: out of memory for %d units", U);
    return AL_OK;
}

static void units_free(role_units *u) { free(u->score), free(u->chance); }

/* One sequence alone: its attentions into attn, the roles' scores of unit u, and (nll not NULL) its next-token
 * losses. */
static al_status run_unit(const al_model *model, const al_forward_params *p, const int32_t *ids, int L, int offset,
                          int n, float *attn, role_units *units, int u, float *nll, al_error *err) {
    al_batch batch = {1, L, ids, NULL, NULL, NULL};
    al_forward_outputs out = {0};
    out.attentions = attn;
    const size_t at = (size_t)u * AL_ROLE_N * units->NH;
    al_status st;
    if (nll) { /* one forward for the attentions and the losses */
        al_lm_rows rows = {0};
        st = al_lm_rows_new(1, L, 0, &rows, err);
        if (!st) st = al_lm_score_outputs(model, &batch, p, &rows, &out, err);
        if (!st) memcpy(nll, rows.nll, sizeof(float) * (size_t)L);
        al_lm_rows_free(&rows);
    } else {
        st = al_forward(model, &batch, p, &out, err);
    }
    if (!st) st = al_roles_unit(al_model_config(model), attn, L, offset, n, units->score + at, units->chance + at, err);
    return st;
}

/* The R repeated sequences (al_roles_draw with seed, n tokens twice after offset), each run alone: their ids [R, L],
 * their units' scores into units, and per sequence the mean loss (nats) on tokens 1 .. n - 1 of the first copy and
 * of the second, and their difference. attn [NL, H, L, L] and nll [L] are scratch. Progress: r + 1 of R + T. */
static al_status run_repeats(const al_op_ctx *ctx, const al_model *model, const al_forward_params *p,
                             const al_roles_vocab *vocab, int seed, int R, int n, int T, int32_t *ids, float *attn,
                             float *nll, role_units *units, double *first, double *second, double *drop, al_error *err) {
    const int offset = al_roles_offset(vocab), L = offset + 2 * n;
    al_status st = AL_OK;
    for (int r = 0; !st && r < R; r++) {
        int32_t *seq = ids + (size_t)r * L;
        al_roles_draw(vocab, (uint64_t)seed, r, n, seq);
        st = run_unit(model, p, seq, L, offset, n, attn, units, r, nll, err);
        /* tokens 1 .. n - 1 of each copy, each predicted from the position before it */
        double a = 0.0, b = 0.0;
        for (int t = 1; !st && t < n; t++) a += nll[offset + t - 1], b += nll[offset + n + t - 1];
        first[r] = a / (n - 1), second[r] = b / (n - 1), drop[r] = first[r] - second[r];
        al_api_progress(ctx->params, "head_roles", (double)(r + 1) / (R + T));
    }
    return st;
}

/* The most random tokens the model's positions hold twice after the start token (at most ROLES_MAX_LENGTH), and the
 * default length: 32 or that. */
static int fit_length(const al_model *model, int offset) {
    const int fit = (al_api_max_tokens(model) - offset) / 2;
    return fit > ROLES_MAX_LENGTH ? ROLES_MAX_LENGTH : fit;
}

static int default_length(int fit) { return fit < ROLES_DEFAULT_LENGTH ? fit : ROLES_DEFAULT_LENGTH; }

al_status al_head_roles_default_scores(const al_op_ctx *ctx, const al_model *model, double *scores, al_error *err) {
    const al_config *c = al_model_config(model);
    const int NH = c->n_layers * c->n_heads, R = ROLES_DEFAULT_SEQUENCES;
    al_roles_vocab vocab;
    al_status st = al_roles_vocab_make(model, &vocab, err);
    if (st) return st;
    const int offset = al_roles_offset(&vocab), n = default_length(fit_length(model, offset)), L = offset + 2 * n;
    if (n < 2) st = al_err(err, AL_ERR_INVALID, "request: field 'model': %d positions hold no repeat of 2 tokens",
                           al_api_max_tokens(model));
    role_units rep = {0};
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)R * L);
    float *attn = malloc(sizeof(float) * (size_t)NH * L * L), *nll = malloc(sizeof(float) * (size_t)L);
    double *loss = malloc(sizeof(double) * 3 * R);
    if (!st && (!ids || !attn || !nll || !loss)) st = al_err(err, AL_ERR_OOM, "head_roles: out of memory");
    if (!st) st = units_new(R, NH, &rep, err);
    al_forward_params p = al_forward_default_params(); /* the op's */
    p.pool = ctx->session->pool;
    p.cancel = ctx->params->cancel;
    if (!st) st = run_repeats(ctx, model, &p, &vocab, ROLES_DEFAULT_SEED, R, n, 0, ids, attn, nll, &rep, loss, loss + R,
                              loss + 2 * R, err);
    for (int role = 0; !st && role < AL_ROLE_N; role++) { /* the op's means over the units */
        al_role_finding f;
        st = al_role_finding_make(rep.score + (size_t)role * NH, rep.chance + (size_t)role * NH, R, NH,
                                  (size_t)AL_ROLE_N * NH, &f, err);
        if (!st) memcpy(scores + (size_t)role * NH, f.score, sizeof(double) * (size_t)NH);
        if (!st) al_role_finding_free(&f);
    }
    units_free(&rep);
    free(ids), free(attn), free(nll), free(loss);
    al_roles_vocab_free(&vocab);
    return st;
}

static void put_grid(al_reply_builder *rb, cJSON *obj, const char *key, const double *v, const int *iv, int NL, int H) {
    cJSON *grid = al_rb_add(rb, obj, key, cJSON_CreateArray());
    for (int l = 0; grid && l < NL; l++) {
        cJSON *row = al_rb_add(rb, grid, NULL, cJSON_CreateArray());
        for (int h = 0; row && h < H; h++) {
            const double x = v ? v[l * H + h] : (double)iv[l * H + h];
            al_rb_add(rb, row, NULL, isnan(x) ? cJSON_CreateNull() : cJSON_CreateNumber(x));
        }
    }
}

/* The heads (l, h) whose flag is set, as [[l, h], ...]. */
static void put_heads(al_reply_builder *rb, cJSON *obj, const char *key, const int *flag, int NH, int H) {
    cJSON *heads = al_rb_add(rb, obj, key, cJSON_CreateArray());
    for (int k = 0; heads && k < NH; k++) {
        if (!flag[k]) continue;
        const int32_t lh[2] = {k / H, k % H};
        al_rb_int_array(rb, heads, NULL, lh, 2);
    }
}

/* One source's roles (first .. AL_ROLE_N - 1) into obj, and into the digest. */
static al_status put_roles(al_reply_builder *rb, cJSON *obj, const role_units *units, int first, int NL, int H,
                           al_sha256 *d, int source, al_error *err) {
    const int NH = NL * H;
    al_rb_num(rb, obj, "units", units->U);
    for (int role = first; role < AL_ROLE_N; role++) {
        al_role_finding f;
        al_status st = al_role_finding_make(units->score + (size_t)role * NH, units->chance + (size_t)role * NH,
                                            units->U, NH, (size_t)AL_ROLE_N * NH, &f, err);
        if (st) return st;
        cJSON *o = al_rb_add(rb, obj, al_role_names[role], cJSON_CreateObject());
        put_grid(rb, o, "score", f.score, NULL, NL, H);
        put_grid(rb, o, "chance", f.chance, NULL, NL, H);
        put_grid(rb, o, "effect", f.effect, NULL, NL, H);
        put_grid(rb, o, "p", f.p, NULL, NL, H);
        put_grid(rb, o, "p_holm", f.p_holm, NULL, NL, H);
        put_grid(rb, o, "above", NULL, f.above, NL, H);
        put_grid(rb, o, "below", NULL, f.below, NL, H);
        put_grid(rb, o, "ratio", f.ratio, NULL, NL, H);
        put_heads(rb, o, "heads", f.has_role, NH, H);
        put_heads(rb, o, "weak_heads", f.weak, NH, H);
        al_rb_str(rb, o, "verdict", f.verdict);
        al_rb_num(rb, o, "units", f.units);
        al_rb_num(rb, o, "min_units", f.min_units);
        for (int k = 0; k < NH; k++) {
            const double key = ((double)source * AL_ROLE_N + role) * NH + k;
            al_digest_line(d, "score %.0f %.17g\n", key, f.score[k]);
            al_digest_line(d, "chance %.0f %.17g\n", key, f.chance[k]);
            al_digest_line(d, "p %.0f %.17g\n", key, f.p[k]);
        }
        al_role_finding_free(&f);
    }
    return AL_OK;
}

/* A mean over the sequences in bits with its 95% interval; the digest's line numbered `line`. */
static al_status put_mean(al_reply_builder *rb, cJSON *obj, const char *key, const double *nats, int R, int line,
                          al_sha256 *d, al_error *err) {
    double *bits = malloc(sizeof(double) * (size_t)R);
    if (!bits) return al_err(err, AL_ERR_OOM, "head_roles: out of memory");
    for (int r = 0; r < R; r++) bits[r] = nats[r] / LN2;
    al_seed_summary s;
    al_status st = al_metric_summary(bits, R, &s, err);
    free(bits);
    if (st) return st;
    char name[64];
    al_rb_num(rb, obj, key, s.mean);
    snprintf(name, sizeof name, "%s_ci95", key);
    if (s.has_interval) {
        cJSON *ci = al_rb_add(rb, obj, name, cJSON_CreateArray());
        al_rb_add(rb, ci, NULL, cJSON_CreateNumber(s.mean - s.half_width));
        al_rb_add(rb, ci, NULL, cJSON_CreateNumber(s.mean + s.half_width));
    }
    al_digest_line(d, "loss %.0f %.17g\n", (double)line, s.mean);
    return AL_OK;
}

static int present(const cJSON *req, const char *key) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(req, key);
    return v && !cJSON_IsNull(v);
}

al_status al_op_head_roles(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    int R, n, seed, max_length, add_special;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (st) return st;
    const al_model *model = m->model;
    const al_config *c = al_model_config(model);
    if (!al_model_is_causal(model))
        return al_err(err, AL_ERR_INVALID, "request: field 'model': '%s' is %s, not a causal language model (gpt2, "
                      "llama, qwen2, gpt_neox)", m->id, al_arch_name(c->arch));
    al_roles_vocab vocab;
    if ((st = al_roles_vocab_make(model, &vocab, err))) return st;
    const int offset = al_roles_offset(&vocab), positions = al_api_max_tokens(model), fit = fit_length(model, offset);
    st = al_req_int(ctx->req, "sequences", "sequences", 0, ROLES_DEFAULT_SEQUENCES, 1, 512, &R, err);
    if (!st) st = al_req_int(ctx->req, "length", "length", 0, default_length(fit), 2, ROLES_MAX_LENGTH, &n, err);
    if (!st && offset + 2 * n > positions)
        st = al_err(err, AL_ERR_INVALID, "request: field 'length': %d tokens twice%s need %d positions, the model has "
                    "%d (at most %d)", n, offset ? " after the start token" : "", offset + 2 * n, positions, fit);
    if (!st && fit < 2) st = al_err(err, AL_ERR_INVALID, "request: field 'model': %d positions hold no repeat of 2 "
                                     "tokens", positions);
    if (!st) st = al_req_int(ctx->req, "seed", "seed", 0, ROLES_DEFAULT_SEED, 0, 2147483647, &seed, err);
    if (!st) st = al_req_int(ctx->req, "max_length", "max_length", 0, 0, 1, 1 << 24, &max_length, err);
    if (!st) st = al_req_bool(ctx->req, "add_special_tokens", "add_special_tokens", 1, &add_special, err);
    al_api_inputs in = {0};
    al_lm_corpus corpus = {0};
    const char *corpus_label = NULL;
    /* natural text is optional, and one text is one unit, never enough: "texts" (no "text", so the CLI needs none)
     * or a corpus's documents */
    const int has_texts = present(ctx->req, "texts") || present(ctx->req, "input_ids");
    const int has_corpus = present(ctx->req, "corpus");
    if (!st && has_texts && has_corpus)
        st = al_err(err, AL_ERR_INVALID, "request: field 'corpus': give either texts or a corpus, not both");
    if (!st && has_texts) {
        al_api_limits lim;
        st = al_api_limits_make(model, 0, max_length, 0, NULL, &lim, err);
        if (!st) st = al_api_read_inputs(ctx, model, add_special, &lim, &in, err);
    }
    if (!st && has_corpus) st = al_api_read_corpus(ctx, m, &corpus, &corpus_label, err);
    if (st) {
        al_roles_vocab_free(&vocab);
        return st;
    }
    al_op_warn_unknown(ctx);
    /* the text units: the texts, or each document's first window */
    int T = in.n_seqs;
    const int32_t **text_ids = malloc(sizeof(*text_ids) * (size_t)(in.n_seqs + corpus.n_windows + 1));
    int *text_n = malloc(sizeof(int) * (size_t)(in.n_seqs + corpus.n_windows + 1));
    if (!text_ids || !text_n) st = al_err(err, AL_ERR_OOM, "head_roles: out of memory");
    for (int t = 0; !st && t < in.n_seqs; t++) text_ids[t] = in.examples[t].ids, text_n[t] = in.examples[t].n;
    for (int w = 0; !st && w < corpus.n_windows; w++)
        if (w == 0 || corpus.doc[w] != corpus.doc[w - 1])
            text_ids[T] = corpus.ids + (size_t)w * corpus.window, text_n[T++] = corpus.len[w];

    const int NL = c->n_layers, H = c->n_heads, NH = NL * H, L = offset + 2 * n;
    int longest = L;
    for (int t = 0; !st && t < T; t++)
        if (text_n[t] > longest) longest = text_n[t];
    role_units rep = {0}, txt = {0};
    char what[96];
    snprintf(what, sizeof what, "head_roles: attentions [%d, %d, %d, %d] of the longest unit", NL, H, longest, longest);
    st = al_memory_check((uint64_t)sizeof(float) * NH * (uint64_t)longest * longest, what, err);
    int32_t *ids = malloc(sizeof(int32_t) * (size_t)R * L);
    float *attn = st ? NULL : malloc(sizeof(float) * (size_t)NH * longest * longest);
    float *nll = malloc(sizeof(float) * (size_t)L);
    double *first = malloc(sizeof(double) * (size_t)R), *second = malloc(sizeof(double) * (size_t)R);
    double *drop = malloc(sizeof(double) * (size_t)R);
    if (!st && (!ids || !attn || !nll || !first || !second || !drop))
        st = al_err(err, AL_ERR_OOM, "head_roles: out of memory for %d layers x %d heads of %d x %d", NL, H, longest,
                    longest);
    if (!st) st = units_new(R, NH, &rep, err);
    if (!st) st = units_new(T, NH, &txt, err);
    al_forward_params p = al_forward_default_params();
    p.pool = ctx->session->pool;
    p.cancel = ctx->params->cancel;
    al_api_progress(ctx->params, "head_roles", 0.0);
    if (!st) st = run_repeats(ctx, model, &p, &vocab, seed, R, n, T, ids, attn, nll, &rep, first, second, drop, err);
    for (int t = 0; !st && t < T; t++) {
        st = run_unit(model, &p, text_ids[t], text_n[t], 0, 0, attn, &txt, t, NULL, err);
        al_api_progress(ctx->params, "head_roles", (double)(R + t + 1) / (R + T));
    }

    al_reply_builder *rb = ctx->rb;
    al_sha256 d;
    al_digest_begin(&d);
    if (!st) {
        al_rb_str(rb, rb->root, "model", m->id);
        al_rb_num(rb, rb->root, "n_layers", NL);
        al_rb_num(rb, rb->root, "n_heads", H);
        cJSON *io = al_rb_add(rb, rb->root, "inputs", cJSON_CreateObject());
        al_rb_num(rb, io, "sequences", R);
        al_rb_num(rb, io, "length", n);
        al_rb_num(rb, io, "seed", seed);
        al_rb_num(rb, io, "offset", offset);
        al_rb_add(rb, io, "start_token", offset ? cJSON_CreateNumber(vocab.start) : cJSON_CreateNull());
        al_rb_num(rb, io, "vocabulary", vocab.n);
        al_rb_num(rb, io, "texts", T);
        if (corpus_label) al_rb_str(rb, io, "corpus_name", corpus_label);
        cJSON *ia = al_rb_add(rb, rb->root, "ids", cJSON_CreateArray());
        for (int r = 0; ia && r < R; r++) al_rb_int_array(rb, ia, NULL, ids + (size_t)r * L, L);
        for (size_t i = 0; i < (size_t)R * L; i++) al_digest_line(&d, "id %.0f %.17g\n", (double)i, ids[i]);
        al_rb_str(rb, rb->root, "rule", "per head: each unit's score against its chance (uniform attention over the "
                                        "keys its rows read), a one-sided exact sign test over the units, Holm across "
                                        "the heads of the role, alpha 0.05; the role when significant and the score "
                                        "is at least twice its chance (docs/findings.md, \"Head roles\")");
        al_rb_num(rb, rb->root, "alpha", AL_FINDING_ALPHA);
        al_rb_num(rb, rb->root, "min_ratio", AL_ROLE_MIN_RATIO);
        st = put_roles(rb, al_rb_add(rb, rb->root, "repeat", cJSON_CreateObject()), &rep, 0, NL, H, &d, 0, err);
    }
    if (!st && T > 0)
        st = put_roles(rb, al_rb_add(rb, rb->root, "text", cJSON_CreateObject()), &txt, AL_ROLE_PREVIOUS, NL, H, &d, 1,
                       err);
    if (!st) {
        cJSON *lo = al_rb_add(rb, rb->root, "repeat_loss", cJSON_CreateObject());
        al_rb_num(rb, lo, "tokens_per_copy", n - 1);
        st = put_mean(rb, lo, "first_bits", first, R, 0, &d, err);
        if (!st) st = put_mean(rb, lo, "second_bits", second, R, 1, &d, err);
        if (!st) st = put_mean(rb, lo, "drop_bits", drop, R, 2, &d, err);
        if (!st)
            al_rb_str(rb, lo, "interval", R >= 2 ? "95%, Student t over the sequences" : "none: one sequence");
    }
    if (!st) {
        char dig[72];
        al_digest_end(&d, dig);
        al_rb_str(rb, rb->root, "digest", dig);
    }
    al_api_progress(ctx->params, "head_roles", 1.0);
    units_free(&rep), units_free(&txt);
    free(ids), free(attn), free(nll), free(first), free(second), free(drop);
    free(text_ids), free(text_n);
    al_api_inputs_free(&in);
    al_lm_corpus_free(&corpus);
    al_roles_vocab_free(&vocab);
    return st;
}
