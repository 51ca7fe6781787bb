/* test_papa_sweep.c: the PAPA sweep end to end (src/methods/papa/papa_sweep.c) on the default model and small
 * parts of the built-in tasks: every run scored, the full model's runs identical whatever the order, a
 * repeat gives the same bits, two shards give exactly the unsharded numbers, the lambda ranking yields a
 * permutation and moves the logits, and cancellation stops cleanly. Skips when build/data/tasks is absent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "methods/papa/papa_sweep.h"
#include "methods/probes/probe_data_internal.h"

#if defined(__SANITIZE_ADDRESS__)
#define N_TRAIN 48 /* smaller still under AddressSanitizer: memory safety needs no more */
#define N_VALIDATION 16
#else
#define N_TRAIN 96
#define N_VALIDATION 32
#endif

static al_papa_sweep_request small_request(int L) {
    al_papa_sweep_request r = al_papa_sweep_default_request();
    r.max_train = N_TRAIN; /* small: this test also runs under the sanitizers */
    r.max_validation = N_VALIDATION;
    r.L = L;
    r.plan.n_seeds = 2;
    r.n_fractions = 3;
    r.fractions[0] = 1.0, r.fractions[1] = 0.5, r.fractions[2] = 0.0;
    r.plan.n_orders = 2;
    r.plan.orders[0] = AL_ORDER_LAMBDA;
    r.plan.orders[1] = AL_ORDER_RANDOM;
    r.probe.epochs = 2;
    r.rank.epochs = 1;
    r.rank.max_examples = 48;
    return r;
}

static int same_runs(const al_papa_sweep_result *a, const al_papa_sweep_result *b) {
    if (a->n_runs != b->n_runs) return 0;
    for (int i = 0; i < a->n_runs; i++)
        if (a->runs[i].config != b->runs[i].config || a->runs[i].seed_index != b->runs[i].seed_index ||
            a->runs[i].score != b->runs[i].score)
            return 0;
    return 1;
}

static void test_task(al_model *m, const char *id, int L, int repeat) {
    al_task *task = NULL;
    al_error err;
    if (al_task_load_builtin("build/data/tasks", id, &task, &err) != AL_OK) {
        printf("skip %s: %s\n", id, err.message);
        return;
    }
    al_papa_sweep_request req = small_request(L);
    al_papa_sweep_result r, again, s0, s1, c0;
    CHECK_MSG(al_papa_sweep_run(m, task, &req, &r, &err) == AL_OK, "%s", err.message);
    const int NL = al_model_config(m)->n_layers, H = al_model_config(m)->n_heads;
    /* configurations: full, (lambda, random) x k = 8, all average, right_pad, embeddings_only, 4 data-free */
    CHECK(r.plan.n_configs == 10);
    CHECK(r.n_runs == r.plan.n_configs * 2);
    int in_range = 1;
    for (int i = 0; i < r.n_runs; i++) in_range &= r.runs[i].score >= 0.0 && r.runs[i].score <= 1.0;
    CHECK(in_range);
    CHECK(r.theta != NULL);
    int moved = 0;
    for (int i = 0; r.theta && i < NL * H; i++) moved += r.theta[i] != 0.0f;
    CHECK(moved == NL * H);
    if (strcmp(id, "agreement") == 0 && r.n_runs > 0) {
        /* a token task labelled at the [MASK] only: one row per example, counted in its attractor group;
         * an example truncated before its [MASK] has none */
        int rows = 0;
        for (int g = 0; g < AL_PAPA_MAX_GROUPS; g++) rows += r.runs[0].group_count[g];
        CHECK_MSG(rows <= r.n_validation && rows >= r.n_validation - r.truncated_validation &&
                      (N_VALIDATION < 32 || r.runs[0].group_count[1] > 0),
                  "agreement rows %d of %d (truncated %d)", rows, r.n_validation, r.truncated_validation);
    }
    printf("%s: train %d validation %d (truncated %d/%d), rank loss %.3f\n", id, r.n_train, r.n_validation,
           r.truncated_train, r.truncated_validation, r.rank_loss);
    for (int i = 0; i < r.n_runs; i++) {
        char label[64];
        al_papa_config_label(&r.plan.configs[r.runs[i].config], NL * H, label, sizeof label);
        printf("  %-24s seed %d  score %.4f  mlm %.3f\n", label, r.runs[i].seed_index, r.runs[i].score,
               r.mlm_score[r.runs[i].config]);
    }
    printf("  seconds: constants %.2f rank %.2f features %.2f probe %.2f mlm %.2f\n", r.seconds_constants,
           r.seconds_rank, r.seconds_features, r.seconds_probe, r.seconds_mlm);

    if (!repeat) {
        al_papa_sweep_result_free(&r);
        al_task_free(task);
        return;
    }
    /* same request, same bits */
    CHECK(al_papa_sweep_run(m, task, &req, &again, &err) == AL_OK);
    CHECK(same_runs(&r, &again));
    /* two shards merge into the unsharded numbers */
    req.n_shards = 2;
    req.shard_index = 0;
    CHECK(al_papa_sweep_run(m, task, &req, &s0, &err) == AL_OK);
    req.shard_index = 1;
    CHECK(al_papa_sweep_run(m, task, &req, &s1, &err) == AL_OK);
    CHECK(s0.n_runs + s1.n_runs == r.n_runs);
    int match = 0;
    for (int i = 0; i < r.n_runs; i++) {
        const al_papa_sweep_result *part = r.runs[i].config % 2 ? &s1 : &s0;
        for (int j = 0; j < part->n_runs; j++)
            if (part->runs[j].config == r.runs[i].config && part->runs[j].seed_index == r.runs[i].seed_index)
                match += part->runs[j].score == r.runs[i].score;
    }
    CHECK_MSG(match == r.n_runs, "%d of %d sharded runs equal the unsharded ones", match, r.n_runs);

    /* memory limits refuse before allocating, naming the size */
    req.n_shards = 1;
    req.rank.mem_limit = 1 << 20;
    CHECK(al_papa_sweep_run(m, task, &req, &c0, &err) == AL_ERR_OOM && strstr(err.message, "lambda ranking") &&
          strstr(err.message, "MB"));
    req.rank.mem_limit = 0;
    req.mem_limit = 1024;
    req.theta = again.theta; /* skip the ranking: the features come first then */
    al_status st_mem = al_papa_sweep_run(m, task, &req, &c0, &err);
    CHECK_MSG(st_mem == AL_ERR_OOM && strstr(err.message, "memory_mb"), "%d %s", (int)st_mem, err.message);
    req.mem_limit = 0;
    req.theta = NULL;

    /* cancel before the start */
    volatile int cancel = 1;
    req.n_shards = 1;
    req.cancel = &cancel;
    al_papa_sweep_result c;
    CHECK(al_papa_sweep_run(m, task, &req, &c, &err) == AL_ERR_CANCELLED);

    al_papa_sweep_result_free(&r);
    al_papa_sweep_result_free(&again);
    al_papa_sweep_result_free(&s0);
    al_papa_sweep_result_free(&s1);
    al_task_free(task);
}

/* Under AddressSanitizer one sweep per task checks memory safety; the repeat and the shards (determinism)
 * run in the native and WebAssembly builds, where they take seconds instead of minutes. */
#if defined(__SANITIZE_ADDRESS__)
#define REPEAT_POS 0
#else
#define REPEAT_POS 1
#endif

/* The embeddings-only baseline computes hidden state 0 without running the layers
 * (al_forward_embeddings): its cached rows must equal state 0 of the full features bit for bit, on both
 * tasks' kinds of rows (token: labelled positions; sequence: every real token). */
static void test_embeddings_only_features(al_model *m, const char *id, int L) {
    al_task *task = NULL;
    al_error err;
    if (al_task_load_builtin("build/data/tasks", id, &task, &err) != AL_OK) {
        printf("skip %s: %s\n", id, err.message);
        return;
    }
    al_papa_inputs in;
    CHECK_MSG(al_papa_inputs_build(al_model_tokenizer(m), task, AL_TASK_TRAIN, 40, AL_LAYOUT_PAPA, L, &in, &err) == AL_OK,
              "%s", err.message);
    al_forward_params fp = al_forward_default_params();
    fp.skip_pads = 1; /* as the sweep runs its features */
    al_probe_data *full = NULL, *emb = NULL;
    CHECK(al_papa_features(m, &in, NULL, 0, 16, 0, &fp, &full, &err) == AL_OK);
    CHECK(al_papa_features(m, &in, NULL, 1, 16, 0, &fp, &emb, &err) == AL_OK);
    if (full && emb) {
        CHECK(emb->S == 1 && emb->n_rows == full->n_rows && emb->n_rows > 0);
        int same = emb->n_rows == full->n_rows;
        const size_t D = (size_t)full->D;
        for (int r = 0; same && r < full->n_rows; r++)
            same = memcmp(emb->feats + (size_t)r * D, full->feats + (size_t)r * full->S * D, D * sizeof(float)) == 0 &&
                   emb->row_pos[r] == full->row_pos[r];
        CHECK_MSG(same, "%s: embeddings-only rows differ from state 0 of the full features", id);
    }
    al_probe_data_free(full);
    al_probe_data_free(emb);
    al_papa_inputs_free(&in);
    al_task_free(task);
}

int main(void) {
    al_model *m = NULL;
    al_error err;
    CHECK_MSG(al_model_load_dir("models/attnlab-mini-bert", &m, &err) == AL_OK, "%s", err.message);
    if (m) {
        test_embeddings_only_features(m, "pos", 32);
        test_embeddings_only_features(m, "definition", 64);
        test_task(m, "pos", 32, REPEAT_POS);
        test_task(m, "agreement", 48, 0);
    }
    al_model_free(m);
    return check_summary("papa_sweep");
}
