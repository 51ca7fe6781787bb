/* op_agreement.c: the "head_agreement" op: do the measures of which heads matter agree? (docs/agreement.md)
 *
 *   {"op": "head_agreement", "model", "task" | "task_jsonl" | "import", papa's settings ("preset", "L",
 *    "layout", "max_train", "max_validation", "constants_examples", "batch_size", "probe", "ranking",
 *    "memory_mb"), "max_examples"? (the gradient's training examples, default 1000), "least_k"? (default
 *    a quarter of the heads, at least 1), "confidence"? ("max" | "voita")}
 *   -> "measures" [{id, label, words, higher, least}], "grids" {id: [NL][H]}, "spearman" [M][M] (null where a
 *      measure has no ranking), "spearman_importance" (the same read in the direction of importance), "least"
 *      {k, heads {id: [[layer, head], ...]}, overlap [M][M]}, "finding" and "findings" (the rule of
 *      docs/findings.md, agreement_finding.c),
 *      "n_examples", "n_validation", "n_train", "shape", "hashes", "reused", "config", "digest", "seconds".
 * Every grid is the number the single op gives for the same request: lambda the papa sweep's (its lambda
 * ranking), gradient head_importance's "importance", the statistics head_stats' means, norm_mass the
 * norm_attention op's rule over the same validation examples. Nothing is computed here that a module
 * does not compute: the measures come from op_heads.c and head_importance.c, ranks and correlations from
 * src/methods/measures/head_agreement.c. The comparison and its reply (op_agreement.h) serve the causal language
 * model's path too (op_agreement_lm.c: a request with "corpus"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../methods/measures/agreement_finding.h"
#include "../methods/measures/finding_stats.h"
#include "../methods/measures/head_agreement.h"
#include "../methods/measures/head_importance.h"
#include "experiment_setup.h"
#include "op_agreement.h"
#include "op_heads.h"
#include "reply_digest.h"

/* The measures in the reply's order: id, label, what a higher value means, and the direction of importance
 * (docs/agreement.md, "Which heads each measure calls least important"). */
typedef struct measure_text {
    al_agreement_measure m;
    const char *label, *higher;
} measure_text;

static const measure_text k_measures[AL_AGREEMENT_N] = {
    {{"lambda", "PAPA's λ", 1}, "PAPA λ", "the head keeps more input-dependent attention after PAPA's ranking"},
    {{"gradient", "gradient importance", 1}, "Gradient importance", "the task's loss moves more when the head is scaled"},
    {{"input_dependence", "input dependence", 1}, "Input dependence (JS)", "attention further from the head's PAPA constant"},
    {{"confidence", "confidence", 1}, "Confidence", "more weight on the single most attended key"},
    {{"entropy", "entropy", -1}, "Entropy", "attention spread more evenly over the keys"},
    {{"sink_mass", "sink mass", -1}, "Sink mass", "more attention on [CLS], [SEP], the first token and punctuation"},
    {{"norm_mass", "norm mass", 1}, "Norm mass", "larger vectors moved into the output (α · ‖f(x)‖ summed over keys)"},
};

/* On a causal language model (docs/agreement.md, "Causal language models"): the same ids and directions, read
 * against the next-token loss, the causal constant, rows of two keys or more and the first token. */
static const measure_text k_measures_lm[AL_AGREEMENT_LM_N] = {
    {{"lambda", "PAPA's λ", 1}, "PAPA λ", "the head keeps more input-dependent attention after PAPA's ranking against the next-token loss"},
    {{"gradient", "gradient importance", 1}, "Gradient importance", "the next-token loss moves more when the head is scaled"},
    {{"input_dependence", "input dependence", 1}, "Input dependence (JS)", "attention further from the head's causal PAPA constant"},
    {{"confidence", "confidence", 1}, "Confidence", "more weight on the single most attended earlier key"},
    {{"entropy", "entropy", -1}, "Entropy", "attention spread more evenly over the earlier keys (entropy / ln of the keys)"},
    {{"sink_mass", "sink mass", -1}, "Sink mass", "more attention on the first token"},
    {{"norm_mass", "norm mass", 1}, "Norm mass", "larger vectors moved into the output (α · ‖f(x)‖ summed over keys)"},
    /* head_roles' scores on repeated random sequences (docs/measures.md, "Head roles"): a head with the role scores high */
    {{"previous_token", "previous-token score", 1}, "Previous-token score", "more attention on the token just before"},
    {{"induction", "induction score", 1}, "Induction score", "more attention on the token after the current token's earlier copy"},
    {{"duplicate_token", "duplicate-token score", 1}, "Duplicate-token score", "more attention on the current token's earlier copy"},
};

static cJSON *number_or_null(double v) { return isnan(v) ? cJSON_CreateNull() : cJSON_CreateNumber(v); }

static void head_list(al_reply_builder *rb, cJSON *parent, const char *key, const int *heads, int k, int H) {
    cJSON *list = al_rb_add(rb, parent, key, cJSON_CreateArray());
    for (int i = 0; list && i < k; i++) {
        cJSON *pair = al_rb_add(rb, list, NULL, cJSON_CreateArray());
        al_rb_add(rb, pair, NULL, cJSON_CreateNumber(heads[i] / H));
        al_rb_add(rb, pair, NULL, cJSON_CreateNumber(heads[i] % H));
    }
}

struct al_agreement {
    int NL, H, NH, k, M;
    const measure_text *measures; /* k_measures or k_measures_lm, M of them */
    double *grid;  /* [M, NH] */
    double rho[AL_AGREEMENT_LM_N * AL_AGREEMENT_LM_N];
    int *least;    /* [M, k] */
    int overlap[AL_AGREEMENT_LM_N * AL_AGREEMENT_LM_N];
    al_agreement_findings findings;
};

al_agreement *al_agreement_new(int NL, int H, int k, int causal) {
    al_agreement *a = calloc(1, sizeof(al_agreement)); /* the findings' sentence and pairs: kept off the stack */
    if (!a) return NULL;
    a->NL = NL, a->H = H, a->NH = NL * H, a->k = k;
    a->measures = causal ? k_measures_lm : k_measures;
    a->M = causal ? AL_AGREEMENT_LM_N : AL_AGREEMENT_N;
    a->grid = calloc((size_t)a->M * a->NH, sizeof(double));
    a->least = malloc(sizeof(int) * (size_t)a->M * k);
    if (!a->grid || !a->least) {
        al_agreement_free(a);
        return NULL;
    }
    return a;
}

double *al_agreement_grid(al_agreement *a, int measure) { return a->grid + (size_t)measure * a->NH; }

void al_agreement_free(al_agreement *a) {
    if (a) free(a->grid), free(a->least);
    free(a);
}

/* What to raise when lambda did not learn a ranking: the ranking's settings as the request set them. */
static void raise_text(const al_papa_rank_settings *rank, char *out, size_t cap) {
    snprintf(out, cap, "ranking.lr (now %g) or ranking.epochs (now %d)", (double)rank->lr, rank->epochs);
}

int al_agreement_compare(al_agreement *a, const al_papa_rank_settings *rank) {
    for (int x = 0; x < a->M; x++)
        for (int y = 0; y < a->M; y++)
            a->rho[x * a->M + y] = al_json_canonical(al_spearman(a->grid + (size_t)x * a->NH, a->grid + (size_t)y * a->NH, a->NH));
    for (int x = 0; x < a->M; x++)
        al_least_k(a->grid + (size_t)x * a->NH, a->NH, a->measures[x].m.importance_sign > 0, a->k, a->least + (size_t)x * a->k);
    for (int x = 0; x < a->M; x++)
        for (int y = 0; y < a->M; y++)
            a->overlap[x * a->M + y] = al_overlap(a->least + (size_t)x * a->k, a->least + (size_t)y * a->k, a->k);
    al_agreement_measure ms[AL_AGREEMENT_LM_N];
    for (int x = 0; x < a->M; x++) ms[x] = a->measures[x].m;
    char raise[160];
    raise_text(rank, raise, sizeof raise);
    const al_agreement_input in = {ms, a->M, a->NH, a->rho, a->grid, a->k, a->overlap, NAN, raise};
    return al_agreement_findings_make(&in, &a->findings);
}

/* The rule's verdicts (docs/findings.md): the codes the page and scripts/agreement_table.py read. */
static void reply_findings(al_reply_builder *rb, const al_agreement *a) {
    const al_agreement_findings *f = &a->findings;
    cJSON *o = al_rb_add(rb, rb->root, "findings", cJSON_CreateObject());
    if (!o) return;
    al_rb_str(rb, o, "rule", "docs/findings.md");
    al_rb_str(rb, o, "verdict", al_finding_names[f->verdict]);
    al_rb_num(rb, o, "n_heads", a->NH);
    al_rb_num(rb, o, "alpha", AL_FINDING_ALPHA);
    al_rb_num(rb, o, "rho_min", AL_AGREEMENT_RHO);
    al_rb_str(rb, o, "p_method", f->exact ? "exact" : "permutation");
    al_rb_num(rb, o, "orderings", f->orderings);
    al_rb_str(rb, o, "correction", "holm");
    cJSON *lam = al_rb_add(rb, o, "lambda", cJSON_CreateObject());
    al_rb_add(rb, lam, "range", number_or_null(f->lambda_range));
    al_rb_num(rb, lam, "floor", AL_FINDING_LAMBDA_FLOOR);
    al_rb_bool(rb, lam, "learned", f->verdict != AL_FIND_LAMBDA_FLAT);
    cJSON *pairs = al_rb_add(rb, o, "pairs", cJSON_CreateArray());
    for (int i = 0; pairs && i < f->n_pairs; i++) {
        const al_pair_finding *p = &f->pairs[i];
        cJSON *e = al_rb_add(rb, pairs, NULL, cJSON_CreateObject());
        al_rb_str(rb, e, "a", a->measures[p->a].m.id);
        al_rb_str(rb, e, "b", a->measures[p->b].m.id);
        al_rb_add(rb, e, "rho", number_or_null(p->rho_importance));
        al_rb_add(rb, e, "p", number_or_null(p->p));
        al_rb_add(rb, e, "p_holm", number_or_null(p->p_holm));
        al_rb_str(rb, e, "family", p->family == 0 ? "reference" : "others");
        al_rb_str(rb, e, "verdict", al_pair_verdict_names[p->verdict]);
    }
    cJSON *ov = al_rb_add(rb, o, "overlaps", cJSON_CreateArray());
    for (int i = 0; ov && i < f->n_overlaps; i++) {
        const al_overlap_finding *p = &f->overlaps[i];
        cJSON *e = al_rb_add(rb, ov, NULL, cJSON_CreateObject());
        al_rb_str(rb, e, "a", a->measures[0].m.id);
        al_rb_str(rb, e, "b", a->measures[p->b].m.id);
        al_rb_num(rb, e, "shared", p->shared);
        al_rb_num(rb, e, "k", a->k);
        al_rb_num(rb, e, "expected", p->expected);
        al_rb_add(rb, e, "p", number_or_null(p->p));
        al_rb_add(rb, e, "p_holm", number_or_null(p->p_holm));
        al_rb_str(rb, e, "verdict", al_overlap_verdict_names[p->verdict]);
    }
}

void al_agreement_reply(al_reply_builder *rb, const al_agreement *a) {
    const int M = a->M, NL = a->NL, H = a->H;
    cJSON *ms = al_rb_add(rb, rb->root, "measures", cJSON_CreateArray());
    for (int x = 0; ms && x < M; x++) {
        cJSON *o = al_rb_add(rb, ms, NULL, cJSON_CreateObject());
        al_rb_str(rb, o, "id", a->measures[x].m.id);
        al_rb_str(rb, o, "label", a->measures[x].label);
        al_rb_str(rb, o, "words", a->measures[x].m.words);
        al_rb_str(rb, o, "higher", a->measures[x].higher);
        al_rb_str(rb, o, "least", a->measures[x].m.importance_sign > 0 ? "low" : "high");
    }
    cJSON *grids = al_rb_add(rb, rb->root, "grids", cJSON_CreateObject());
    for (int x = 0; grids && x < M; x++) {
        cJSON *g = al_rb_add(rb, grids, a->measures[x].m.id, cJSON_CreateArray());
        for (int l = 0; g && l < NL; l++) {
            cJSON *row = al_rb_add(rb, g, NULL, cJSON_CreateArray());
            for (int h = 0; row && h < H; h++) al_rb_add(rb, row, NULL, number_or_null(a->grid[(size_t)x * a->NH + l * H + h]));
        }
    }
    cJSON *sp = al_rb_add(rb, rb->root, "spearman", cJSON_CreateArray());
    for (int x = 0; sp && x < M; x++) {
        cJSON *row = al_rb_add(rb, sp, NULL, cJSON_CreateArray());
        for (int y = 0; row && y < M; y++) al_rb_add(rb, row, NULL, number_or_null(a->rho[x * M + y]));
    }
    cJSON *least = al_rb_add(rb, rb->root, "least", cJSON_CreateObject());
    al_rb_num(rb, least, "k", a->k);
    cJSON *heads = al_rb_add(rb, least, "heads", cJSON_CreateObject());
    for (int x = 0; heads && x < M; x++) head_list(rb, heads, a->measures[x].m.id, a->least + (size_t)x * a->k, a->k, H);
    cJSON *ov = al_rb_add(rb, least, "overlap", cJSON_CreateArray());
    for (int x = 0; ov && x < M; x++) {
        cJSON *row = al_rb_add(rb, ov, NULL, cJSON_CreateArray());
        for (int y = 0; row && y < M; y++) al_rb_add(rb, row, NULL, cJSON_CreateNumber(a->overlap[x * M + y]));
    }
    /* the matrix in the direction of importance (rho * sign_x * sign_y): positive where two measures call the
     * same heads important, as the page draws it (docs/findings.md) */
    cJSON *spi = al_rb_add(rb, rb->root, "spearman_importance", cJSON_CreateArray());
    for (int x = 0; spi && x < M; x++) {
        cJSON *row = al_rb_add(rb, spi, NULL, cJSON_CreateArray());
        for (int y = 0; row && y < M; y++)
            al_rb_add(rb, row, NULL, number_or_null(a->rho[x * M + y] * a->measures[x].m.importance_sign * a->measures[y].m.importance_sign));
    }
    al_rb_str(rb, rb->root, "finding", a->findings.sentence);
    reply_findings(rb, a);
    /* the replies' digest rule (reply_digest.h): every grid value, correlation and least-important head */
    al_sha256 d;
    char dig[72];
    al_digest_begin(&d);
    for (int i = 0; i < M * a->NH; i++) al_digest_line(&d, "grid %.0f %.17g\n", i, a->grid[i]);
    for (int i = 0; i < M * M; i++) al_digest_line(&d, "rho %.0f %.17g\n", i, a->rho[i]);
    for (int i = 0; i < M * a->k; i++) al_digest_line(&d, "least %.0f %.17g\n", i, a->least[i]);
    al_digest_end(&d, dig);
    al_rb_str(rb, rb->root, "digest", dig);
}

static void reply_config(al_reply_builder *rb, const al_papa_sweep_request *q, const char *preset, const al_task *task,
                         int max_examples, int k) {
    cJSON *c = al_rb_add(rb, rb->root, "config", cJSON_CreateObject());
    al_rb_str(rb, c, "preset", preset);
    al_rb_str(rb, c, "task", task->id);
    al_rb_num(rb, c, "L", q->L);
    al_rb_str(rb, c, "layout", al_papa_layout_name(q->layout));
    al_rb_num(rb, c, "max_train", q->max_train);
    al_rb_num(rb, c, "max_validation", q->max_validation);
    al_rb_num(rb, c, "constants_examples", q->constants_examples);
    al_rb_num(rb, c, "max_examples", max_examples);
    al_rb_num(rb, c, "least_k", k);
    al_rb_num(rb, c, "batch_size", q->batch_size);
    cJSON *p = al_rb_add(rb, c, "probe", cJSON_CreateObject());
    al_rb_num(rb, p, "epochs", q->probe.epochs);
    al_rb_num(rb, p, "batch_size", q->probe.batch_size);
    al_rb_num(rb, p, "lr", q->probe.lr);
    al_rb_num(rb, p, "dropout", task->kind == AL_TASK_TOKEN ? 0.0 : q->probe.dropout);
    al_heads_reply_ranking(rb, c, &q->rank);
}

const al_req_field al_fields_agreement_own[] = {
    AL_F_INT("max_examples", 0, 1 << 30, NULL, "examples the gradient importance averages over (default: the preset's)"),
    AL_F_INT("least_k", 1, 0, NULL, "how many least important heads each measure names (1 to the heads; "
             "default a quarter of them)"),
    AL_F_END,
};

al_status al_op_head_agreement(al_op_ctx *ctx, al_error *err) {
    if (al_papa_is_lm_request(ctx->req)) return al_op_head_agreement_lm(ctx, err);
    al_experiment x;
    al_status st = al_experiment_open(ctx, "head_agreement", &x, err);
    if (st) return st;
    const al_model *model = x.m->model;
    if (al_model_is_causal(model)) { /* lambda learns against the language model's own loss: on a corpus */
        st = al_err(err, AL_ERR_UNSUPPORTED, "head_agreement: field 'model': '%s' is %s, a causal language model; its "
                    "agreement reads a corpus, as the papa op's lambda does: give 'corpus' and 'constants_corpus' "
                    "instead of a task (docs/agreement.md, \"Causal language models\")", x.m->id,
                    al_arch_name(al_model_config(model)->arch));
        al_experiment_free(&x);
        return st;
    }
    const al_papa_sweep_request *q = &x.q;
    const al_config *cfg = al_model_config(model);
    const int NL = cfg->n_layers, H = cfg->n_heads, NH = NL * H;
    int max_examples = q->importance_examples, k = NH / 4 > 1 ? NH / 4 : 1;
    st = al_req_int(ctx->req, "max_examples", "max_examples", 0, max_examples, 0, 1 << 30, &max_examples, err);
    if (!st) st = al_req_int(ctx->req, "least_k", "least_k", 0, k, 1, NH, &k, err);
    al_confidence_kind confidence = AL_CONFIDENCE_MAX;
    if (!st) st = al_heads_read_confidence(ctx, &confidence, err);
    if (!st) st = al_experiment_check_length(&x, err);
    if (st) {
        al_experiment_free(&x);
        return st;
    }
    al_op_warn_unknown(ctx);
    const double t0 = al_now_seconds();
    st = al_experiment_inputs(&x, 1, "head_agreement", err);
    al_experiment_cache_names(&x);
    al_agreement *a = al_agreement_new(NL, H, k, 0);
    const int per = NH * AL_HS_N;
    double *mean = malloc(sizeof(double) * (size_t)per), *ci = malloc(sizeof(double) * (size_t)per);
    double *norm_mass = malloc(sizeof(double) * (size_t)NH);
    float *theta = malloc(sizeof(float) * (size_t)NH);
    if (!st && (!a || !mean || !ci || !norm_mass || !theta)) st = al_err(err, AL_ERR_OOM, "head_agreement: out of memory");
    /* 1. PAPA's constants and lambda ranking, shared with papa and head_stats through the session cache */
    const float *C = NULL;
    float *owned = NULL;
    int reused_c = 0, reused_t = 0;
    if (!st) st = al_heads_constants(ctx, model, q, &x.train, x.c_name, &C, &owned, &reused_c, err);
    if (!st) st = al_heads_theta(ctx, x.m->model, q, &x.train, C, x.t_name, theta, &reused_t, err);
    /* 2. gradient importance as the head_importance op measures it (probe loss) */
    al_head_importance imp;
    memset(&imp, 0, sizeof imp);
    if (!st) {
        al_forward_params fp = al_forward_default_params();
        fp.progress = ctx->params->progress;
        fp.progress_user = ctx->params->progress_user;
        fp.cancel = ctx->params->cancel;
        fp.pool = ctx->session->pool;
        st = al_head_importance_task(x.m->model, x.task, &x.train, &q->probe, q->rank.seed, q->batch_size, q->mem_limit,
                                     max_examples, &fp, &imp, err);
    }
    /* 3. head statistics and norm mass over the validation examples, as head_stats reads them */
    if (!st) st = al_heads_stats(ctx, model, &x.val, C, q->batch_size, confidence, "stats", mean, ci, norm_mass, err);
    if (!st) {
        al_agreement_fill_shared(a, NH, theta, imp.normalized, mean, AL_HS_SINK, norm_mass);
        if (al_agreement_compare(a, &q->rank)) st = al_err(err, AL_ERR_OOM, "head_agreement: out of memory");
    }
    if (!st) {
        al_reply_builder *rb = ctx->rb;
        al_heads_reply_identity(rb, x.m->id, NL, H, x.model_hash, x.task->hash);
        reply_config(rb, q, x.preset, x.task, max_examples, k);
        al_rb_str(rb, cJSON_GetObjectItemCaseSensitive(rb->root, "config"), "confidence", al_confidence_names[confidence]);
        al_agreement_reply(rb, a);
        al_agreement_reply_counts(rb, imp.n_examples, x.val.n, x.train.n, reused_c, reused_t, t0);
    }
    al_head_importance_free(&imp);
    al_agreement_free(a);
    free(mean), free(ci), free(norm_mass), free(theta), free(owned);
    al_experiment_free(&x);
    return st;
}

void al_agreement_fill_shared(al_agreement *a, int NH, const float *theta, const double *gradient, const double *mean,
                              int sink, const double *norm_mass) {
    for (int i = 0; i < NH; i++) {
        al_agreement_grid(a, AL_AG_LAMBDA)[i] = al_json_canonical(al_heads_lambda(theta[i]));
        al_agreement_grid(a, AL_AG_GRADIENT)[i] = al_json_canonical(gradient[i]);
        al_agreement_grid(a, AL_AG_JS)[i] = mean[(size_t)i * AL_HS_N + AL_HS_JS];
        al_agreement_grid(a, AL_AG_CONFIDENCE)[i] = mean[(size_t)i * AL_HS_N + AL_HS_CONFIDENCE];
        al_agreement_grid(a, AL_AG_ENTROPY)[i] = mean[(size_t)i * AL_HS_N + AL_HS_ENTROPY];
        al_agreement_grid(a, AL_AG_SINK)[i] = mean[(size_t)i * AL_HS_N + sink];
        al_agreement_grid(a, AL_AG_NORM)[i] = norm_mass[i];
    }
}

void al_agreement_reply_counts(al_reply_builder *rb, int n_examples, int n_validation, int n_train, int reused_constants,
                               int reused_ranking, double t0) {
    al_rb_num(rb, rb->root, "n_examples", n_examples);
    al_rb_num(rb, rb->root, "n_validation", n_validation);
    al_rb_num(rb, rb->root, "n_train", n_train);
    cJSON *reused = al_rb_add(rb, rb->root, "reused", cJSON_CreateObject());
    al_rb_bool(rb, reused, "constants", reused_constants);
    al_rb_bool(rb, reused, "ranking", reused_ranking);
    al_rb_num(rb, rb->root, "seconds", al_now_seconds() - t0);
}
