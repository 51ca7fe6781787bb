/* bench_sweep_scale.c: a PAPA sweep at the scale a researcher's own model has (docs/speed.md): the "quick"
 * preset on a built-in task over a bert-base-shaped model with random weights (timing does not depend on
 * the weights' values), printing per stage its wall time, the FLOPs it must do (counted from the shapes
 * and the real tokens, so padding and repeated work count as waste), the rate achieved, and that rate
 * against the GEMM rate measured in the same run on the model's own shapes.
 *
 *   bench_sweep_scale [--shape bert-base] [--task pos] [--max-train 40] [--max-validation 20]
 *                     [--seeds 3] [--threads 2] [--mlm] [--tasks build/data/tasks]
 *                     [--tokenizer models/attnlab-small-bert] [--pad-rows]
 *
 * --pad-rows runs the linear layers over the pads too (the ranking's every position, the packed passes' packing
 * pads), as before docs/speed.md's real rows: the same checksum, for a before / after pair of runs.
 *
 * The tokenizer is attnlab-small-bert's (bert-base-uncased's 30,522 WordPiece vocabulary). --max-train
 * and --max-validation cut the preset's 1,000 / 400 examples (the ranking uses the same training cut). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "core/clock.h"
#include "kernels/kernels.h"
#include "methods/papa/papa_sweep.h"
#include "model/model_internal.h"
#include "bench_args.h"

static double load1(void) {
    double l = -1.0;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1.0;
        fclose(f);
    }
    return l;
}

/* The shapes a sweep is timed on. The hook for other families: a row with its config maker; deberta-v3-base
 * (128,100 vocabulary, 12 x 768, 12 heads, 3072) and ModernBERT-base (50,368 vocabulary, 22 x 768, 12 heads,
 * GLU 1152) go here once their families load random weights (docs/speed.md). */
typedef struct shape {
    const char *name;
    al_config (*config)(const struct shape *);
    int vocab, hidden, layers, heads, ffn;
} shape;

static al_config bert_config(const shape *s) { return al_config_bert(s->vocab, s->hidden, s->layers, s->heads, s->ffn); }

static const shape SHAPES[] = {
    {"bert-base", bert_config, 30522, 768, 12, 12, 3072},
    {"bert-tiny", bert_config, 30522, 128, 2, 2, 512}, /* a seconds-long smoke run of this program */
};

/* ---------------------------------------------------------------- FLOPs a stage must do */

typedef struct shape_flops {
    int NL, H, D, F, V, dh;
} shape_flops;

/* Real tokens per example of a split, and labelled rows (token tasks) or examples (sequence tasks). */
typedef struct split_counts {
    int n;
    int *tokens; /* [n] */
    long long rows;
} split_counts;

static void count_split(const al_papa_inputs *in, split_counts *c) {
    c->n = in->n;
    c->tokens = calloc((size_t)in->n + 1, sizeof(int));
    c->rows = 0;
    for (int x = 0; x < in->n; x++)
        for (int t = 0; t < in->L; t++) {
            const size_t at = (size_t)x * in->L + t;
            c->tokens[x] += in->mask[at] != 0;
            if (in->token_task) c->rows += in->mask[at] && in->labels[at] != AL_IGNORE_INDEX;
        }
    if (!in->token_task) c->rows = in->n;
}

/* One layer's forward over one example of n real tokens, with qk heads needing Q, K and their scores
 * and pv heads needing P V (a constant head skips Q, K and QK^T; a zero head P V as well). */
static double layer_flops(const shape_flops *s, double n, int qk, int pv) {
    const double D = s->D, F = s->F, dh = s->dh;
    return n * (2 * D * D + 2 * D * D + 4 * D * F) /* V, attention output, FFN */
           + n * 4 * D * dh * qk                   /* Q and K of the heads that need them */
           + 2 * n * n * dh * qk + 2 * n * n * dh * pv;
}

/* The forward pass over a split with per-layer head counts (NULL: every head standard). */
static double forward_flops(const shape_flops *s, const split_counts *c, int n_examples, const int *qk,
                            const int *pv) {
    double f = 0.0;
    for (int x = 0; x < n_examples && x < c->n; x++)
        for (int l = 0; l < s->NL; l++) f += layer_flops(s, c->tokens[x], qk ? qk[l] : s->H, pv ? pv[l] : s->H);
    return f;
}

/* Per-layer heads needing QK and PV for a configuration of the sweep's plan. */
static void config_heads(const shape_flops *s, const al_papa_sweep_result *r, const al_papa_config *x, int *qk, int *pv) {
    const int n = s->NL * s->H;
    for (int l = 0; l < s->NL; l++) qk[l] = pv[l] = s->H;
    if (x->what != AL_CFG_SWEEP || x->k == 0) return;
    const int *order = r->orders + (size_t)x->order * n;
    for (int i = 0; i < x->k; i++) {
        const int l = (x->k == n ? i : order[i]) / s->H;
        qk[l]--;
        if (x->constant == AL_CONST_ZEROS) pv[l]--;
    }
}

/* ---------------------------------------------------------------- the GEMM rate on the model's shapes */

static double gemm_rate(al_threadpool *pool, const shape_flops *s, int M) {
    const int dims[3][2] = {{s->D, s->D}, {s->F, s->D}, {s->D, s->F}}; /* N x K: projections, FFN up, FFN down */
    const int big = s->F > s->D ? s->F : s->D;
    float *x = malloc(sizeof(float) * (size_t)M * big), *w = malloc(sizeof(float) * (size_t)big * big),
          *y = malloc(sizeof(float) * (size_t)M * big), *b = calloc((size_t)big, sizeof(float));
    for (size_t i = 0; i < (size_t)M * big; i++) x[i] = (float)((i * 2654435761u) % 1000) * 1e-3f - 0.5f;
    for (size_t i = 0; i < (size_t)big * big; i++) w[i] = (float)((i * 40503u) % 1000) * 1e-3f - 0.5f;
    double flops = 0.0, secs = 0.0;
    for (int d = 0; d < 3; d++) {
        const int N = dims[d][0], K = dims[d][1];
        double best = 1e30;
        for (int rep = 0; rep < 5; rep++) {
            const double t0 = al_now_seconds();
            al_linear_pool(pool, M, N, K, x, w, b, y);
            const double t = al_now_seconds() - t0;
            if (t < best) best = t;
        }
        flops += 2.0 * M * N * K;
        secs += best;
    }
    free(x), free(w), free(y), free(b);
    return flops / secs * 1e-9;
}

/* ---------------------------------------------------------------- main */

static void usage(void) {
    fprintf(stderr, "usage: bench_sweep_scale [--shape bert-base|bert-tiny] [--task pos] [--max-train N] "
                    "[--max-validation N] [--seeds N] [--threads N] [--mlm] [--tasks DIR] [--tokenizer DIR] [--pad-rows]\n");
}

int main(int argc, char **argv) {
    const char *shape_name = "bert-base", *task_id = "pos", *tasks_dir = "build/data/tasks";
    const char *tok_dir = "models/attnlab-small-bert";
    int max_train = 40, max_val = 20, seeds = 3, threads = 2, mlm = 0, pad_rows = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--mlm")) mlm = 1;
        else if (!strcmp(a, "--pad-rows")) pad_rows = 1;
        else if (v && !strcmp(a, "--shape")) shape_name = v, i++;
        else if (v && !strcmp(a, "--task")) task_id = v, i++;
        else if (v && !strcmp(a, "--tasks")) tasks_dir = v, i++;
        else if (v && !strcmp(a, "--tokenizer")) tok_dir = v, i++;
        else if (v && !strcmp(a, "--max-train")) max_train = bench_int("bench_sweep_scale", "--max-train", v, 1, 1 << 24), i++;
        else if (v && !strcmp(a, "--max-validation")) max_val = bench_int("bench_sweep_scale", "--max-validation", v, 1, 1 << 24), i++;
        else if (v && !strcmp(a, "--seeds")) seeds = bench_int("bench_sweep_scale", "--seeds", v, 1, AL_PAPA_MAX_SEEDS), i++;
        else if (v && !strcmp(a, "--threads")) threads = bench_int("bench_sweep_scale", "--threads", v, 1, al_threads_max()), i++;
        else {
            usage();
            return 2;
        }
    }
    const shape *sh = NULL;
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++)
        if (!strcmp(SHAPES[i].name, shape_name)) sh = &SHAPES[i];
    if (!sh) {
        usage();
        return 2;
    }
    al_error err = {0};
    al_task *task = NULL;
    if (al_task_load_builtin(tasks_dir, task_id, &task, &err) != AL_OK) {
        fprintf(stderr, "bench_sweep_scale: task %s: %s\n", task_id, err.message);
        return 1;
    }
    al_fileset *fs = al_fileset_new();
    al_tokenizer *tok = NULL;
    if (!fs || al_fileset_add_dir(fs, tok_dir, &err) != AL_OK || al_tokenizer_load(fs, &tok, &err) != AL_OK) {
        fprintf(stderr, "bench_sweep_scale: tokenizer %s: %s\n", tok_dir, err.message);
        return 1;
    }
    al_fileset_free(fs);
    const al_config cfg = sh->config(sh);
    if (al_tokenizer_vocab_size(tok) > cfg.vocab_size) {
        fprintf(stderr, "bench_sweep_scale: the tokenizer's %d ids do not fit %s's vocabulary of %d\n",
                al_tokenizer_vocab_size(tok), sh->name, cfg.vocab_size);
        return 1;
    }
    al_model *model = NULL;
    if (al_model_new_random(&cfg, 42, mlm, &model, &err) != AL_OK) {
        fprintf(stderr, "bench_sweep_scale: %s: %s\n", sh->name, err.message);
        return 1;
    }
    model->tokenizer = tok; /* freed with the model */
    al_threadpool *pool = NULL;
    if (al_threadpool_new(threads, &pool, &err) != AL_OK) {
        fprintf(stderr, "bench_sweep_scale: threads: %s\n", err.message);
        return 1;
    }

    al_papa_sweep_request req = al_papa_sweep_default_request();
    if (al_papa_sweep_preset("quick", task, &req, &err) != AL_OK) {
        fprintf(stderr, "bench_sweep_scale: %s\n", err.message);
        return 1;
    }
    req.max_train = max_train;
    req.max_validation = max_val;
    req.plan.n_seeds = seeds;
    req.mlm = mlm;
    req.pool = pool;
    req.pad_rows = req.rank.pad_rows = pad_rows;
    const shape_flops sf = {cfg.n_layers, cfg.n_heads, cfg.hidden_size, cfg.intermediate_size, cfg.vocab_size,
                            cfg.hidden_size / cfg.n_heads};

    /* the splits as the sweep lays them out, for the token counts */
    al_papa_inputs tr, va, tr_rp, va_rp;
    if (al_papa_inputs_build(tok, task, AL_TASK_TRAIN, max_train, req.layout, req.L, &tr, &err) ||
        al_papa_inputs_build(tok, task, AL_TASK_VALIDATION, max_val, req.layout, req.L, &va, &err) ||
        al_papa_inputs_build(tok, task, AL_TASK_TRAIN, max_train, AL_LAYOUT_RIGHT_PAD, req.L, &tr_rp, &err) ||
        al_papa_inputs_build(tok, task, AL_TASK_VALIDATION, max_val, AL_LAYOUT_RIGHT_PAD, req.L, &va_rp, &err)) {
        fprintf(stderr, "bench_sweep_scale: inputs: %s\n", err.message);
        return 1;
    }
    split_counts ctr, cva, ctr_rp, cva_rp;
    count_split(&tr, &ctr), count_split(&va, &cva), count_split(&tr_rp, &ctr_rp), count_split(&va_rp, &cva_rp);
    long long real = 0;
    for (int x = 0; x < ctr.n; x++) real += ctr.tokens[x];

    printf("sweep at scale: %s (%d x %d, %d heads, FFN %d, vocabulary %d, random weights), task %s, quick preset%s\n",
           sh->name, cfg.n_layers, cfg.hidden_size, cfg.n_heads, cfg.intermediate_size, cfg.vocab_size, task_id,
           pad_rows ? ", linear layers over the pads (--pad-rows)" : "");
    printf("  train %d, validation %d examples at L %d (%.0f%% real tokens), %d seeds, MLM %s, %d threads, kernels %s\n",
           tr.n, va.n, req.L, 100.0 * real / ((double)tr.n * req.L), seeds, mlm ? "on" : "off",
           al_threadpool_size(pool), al_kernels_path());
    const double load_before = load1();
    const double gemm_before = gemm_rate(pool, &sf, 512);
    al_papa_sweep_result r;
    const double t0 = al_now_seconds();
    if (al_papa_sweep_run(model, task, &req, &r, &err) != AL_OK) {
        fprintf(stderr, "bench_sweep_scale: sweep: %s\n", err.message);
        return 1;
    }
    const double wall = al_now_seconds() - t0;
    const double gemm_after = gemm_rate(pool, &sf, 512);
    const double gemm = 0.5 * (gemm_before + gemm_after);

    /* FLOPs per stage */
    double f_const = 0.0, f_rank = 0.0, f_feat = 0.0, f_probe = 0.0, f_mlm = 0.0;
    const int n_const = req.constants_examples > 0 && req.constants_examples < tr.n ? req.constants_examples : tr.n;
    if (r.constants) f_const = forward_flops(&sf, &ctr, n_const, NULL, NULL);
    const int S_all = cfg.n_layers + 1, C = task->n_labels;
    if (r.theta && r.seconds_rank > 0.0) {
        const int n_rank = req.rank.max_examples > 0 && req.rank.max_examples < tr.n ? req.rank.max_examples : tr.n;
        double attn = 0.0, lin = 0.0;
        for (int x = 0; x < n_rank; x++) {
            const double n = ctr.tokens[x];
            lin += sf.NL * n * (8.0 * sf.D * sf.D + 4.0 * sf.D * sf.F);
            attn += sf.NL * 4.0 * n * n * sf.D;
        }
        /* forward, then backward to the inputs only (the encoder is frozen): the linear layers once more,
         * attention twice more; the probe forward, its weight gradient and its input gradient */
        const double probe_rows = tr.token_task ? (double)ctr.rows * n_rank / tr.n : n_rank;
        f_rank = req.rank.epochs * (2.0 * lin + 3.0 * attn + probe_rows * 3.0 * 2.0 * S_all * sf.D * sf.D);
    }
    int qk[64], pv[64];
    for (int c = 0; c < r.plan.n_configs; c++) {
        const al_papa_config *x = &r.plan.configs[c];
        const int emb = x->what == AL_CFG_EMBEDDINGS_ONLY, rp = x->what == AL_CFG_RIGHT_PAD;
        config_heads(&sf, &r, x, qk, pv);
        if (!emb)
            f_feat += forward_flops(&sf, rp ? &ctr_rp : &ctr, tr.n, qk, pv) + forward_flops(&sf, rp ? &cva_rp : &cva, va.n, qk, pv);
        const double SD = (double)(emb ? 1 : S_all) * sf.D;
        const double rows_tr = (double)(rp ? ctr_rp.rows : ctr.rows), rows_va = (double)(rp ? cva_rp.rows : cva.rows);
        /* per seed: per epoch the first layer forward and weight gradient, the output layer's three
         * products; then the validation forward */
        f_probe += seeds * (req.probe.epochs * rows_tr * (4.0 * SD * sf.D + 6.0 * sf.D * C) +
                            rows_va * (2.0 * SD * sf.D + 2.0 * sf.D * C));
        if (mlm && x->what == AL_CFG_SWEEP && r.mlm_tokens > 0) {
            const int n_mlm = va.n < 500 ? va.n : 500;
            f_mlm += forward_flops(&sf, &cva, n_mlm, qk, pv) + (double)r.mlm_tokens * (2.0 * sf.D * sf.D + 2.0 * sf.D * sf.V);
        }
    }
    const char *names[5] = {"constants", "ranking", "features", "probes", "MLM"};
    const double secs[5] = {r.seconds_constants, r.seconds_rank, r.seconds_features, r.seconds_probe, r.seconds_mlm};
    const double flops[5] = {f_const, f_rank, f_feat, f_probe, f_mlm};
    printf("  GEMM on the model's shapes (512 rows; projection, FFN up, FFN down), %d threads: %.1f GFLOP/s before the "
           "sweep, %.1f after\n",
           al_threadpool_size(pool), gemm_before, gemm_after);
    printf("  %-10s %9s %10s %9s %12s\n", "stage", "seconds", "GFLOP", "GFLOP/s", "of the GEMM");
    double s_sum = 0.0, f_sum = 0.0;
    for (int i = 0; i < 5; i++) {
        s_sum += secs[i], f_sum += flops[i];
        if (secs[i] <= 0.0 && flops[i] <= 0.0) {
            printf("  %-10s %9s\n", names[i], "-");
            continue;
        }
        const double rate = secs[i] > 0.0 ? flops[i] / secs[i] * 1e-9 : 0.0;
        printf("  %-10s %9.1f %10.1f %9.1f %11.0f%%\n", names[i], secs[i], flops[i] * 1e-9, rate, 100.0 * rate / gemm);
    }
    const double rate = f_sum / s_sum * 1e-9;
    printf("  %-10s %9.1f %10.1f %9.1f %11.0f%%\n", "all", s_sum, f_sum * 1e-9, rate, 100.0 * rate / gemm);
    /* padding: the ranking's attention runs the full L, its linear layers the real rows (with --pad-rows every
     * position); the packed passes (constants, features, MLM) pad each batch to its longest example, and their
     * linear layers run the real rows (with --pad-rows the packing pads too) */
    long long packed = 0, real_all = 0;
    for (const split_counts *sc = &ctr; sc; sc = sc == &ctr ? &cva : NULL)
        for (int b0 = 0; b0 < sc->n; b0 += req.batch_size) {
            int longest = 0;
            for (int x = b0; x < sc->n && x < b0 + req.batch_size; x++) {
                if (sc->tokens[x] > longest) longest = sc->tokens[x];
                real_all += sc->tokens[x];
            }
            packed += (long long)longest * (sc->n - b0 < req.batch_size ? sc->n - b0 : req.batch_size);
        }
    printf("  padding: %.1f real tokens per example of %d positions (%.0f%% pads), %.0f%% pads in packed batches; the "
           "linear layers run %s\n",
           (double)real / tr.n, req.L, 100.0 * (1.0 - real / ((double)tr.n * req.L)), 100.0 * (1.0 - (double)real_all / packed),
           pad_rows ? "over the pads too (--pad-rows)" : "on the real rows only");
    printf("  wall %.1f s (inputs, orders and scoring included); %d configurations x %d seeds; load %.2f before, %.2f "
           "after\n",
           wall, r.plan.n_configs, seeds, load_before, load1());
    double score = 0.0;
    for (int i = 0; i < r.n_runs; i++) score += r.runs[i].score;
    printf("  checksum of the scores %.9f (the same for every thread count and kernel path)\n", score);
    al_papa_sweep_result_free(&r);
    al_papa_inputs_free(&tr), al_papa_inputs_free(&va), al_papa_inputs_free(&tr_rp), al_papa_inputs_free(&va_rp);
    free(ctr.tokens), free(cva.tokens), free(ctr_rp.tokens), free(cva_rp.tokens);
    al_threadpool_free(pool);
    al_model_free(model);
    al_task_free(task);
    return 0;
}
