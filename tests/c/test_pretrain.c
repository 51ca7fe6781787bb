/* test_pretrain.c: `attnlab pretrain` end to end on a tiny config (src/train/pretrain.c, checkpoint.c):
 * 20 steps twice give the same losses bit for bit, the saved train_config.json repeats the run, 10 steps
 * + resume from the checkpoint + 10 steps equal the uninterrupted 20, a cancel (the CLI's SIGTERM) stops
 * at the end of a step with a checkpoint and no final files and resumes the same way, and the output
 * directory is a Hugging Face BertForMaskedLM that the loader reads back with its tokenizer. The 20 steps on
 * every other kernel path the build and CPU can run (x86-sse, x86-avx2) give the same losses and the same
 * model.safetensors, byte for byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "kernels/kernels.h"
#include "pretrain_fixture.h"

#define DIR "build/test_pretrain"
#define STEPS 20

static al_pretrain_config tiny_config(const char *out) {
    al_pretrain_config c = fixture_config(DIR, out);
    c.steps = STEPS;
    c.eval_interval = 10;
    c.eval_sequences = 16;
    return c;
}

static int run(const al_pretrain_config *c, const char *resume, int stop_after, float *losses, al_pretrain_result *r) {
    al_pretrain_hooks h;
    memset(&h, 0, sizeof h);
    h.losses = losses;
    h.stop_after = stop_after;
    al_error err;
    al_status st = al_pretrain_run(c, resume, &h, r, &err);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    return st == AL_OK;
}

/* Raises the cancel flag when the log reports step 7, as a signal arriving during step 8 would. */
static volatile int g_cancel;
static void cancel_at_step_7(void *user, const char *line) {
    (void)user;
    if (strncmp(line, "step 7/", 7) == 0) g_cancel = 1;
}

int main(void) {
    if (!fixture_make_data(DIR, 11, 300, 3, 10, NULL, NULL)) {
        CHECK(0);
        return check_summary("pretrain");
    }
    float a[STEPS], b[STEPS], c[STEPS], d[STEPS];
    memset(c, 0, sizeof c);
    al_pretrain_result ra, rb, rc;
    al_pretrain_config cfg = tiny_config(DIR "/run_a");
    if (!run(&cfg, NULL, 0, a, &ra)) return check_summary("pretrain");
    CHECK(ra.steps_done == STEPS);
    CHECK(run(&cfg, NULL, 0, b, &rb));
    CHECK(memcmp(a, b, sizeof a) == 0); /* same config, same losses bit for bit */
    double first = (a[0] + a[1] + a[2] + a[3]) / 4, last = (a[16] + a[17] + a[18] + a[19]) / 4;
    printf("loss %.4f -> %.4f; held-out accuracy %.3f (most-frequent %.3f), perplexity %.2f (unigram %.2f)\n", first,
           last, ra.eval_accuracy, ra.baseline_accuracy, ra.eval_perplexity, ra.unigram_perplexity);
    CHECK(last < first);
    CHECK(ra.eval_positions > 0 && ra.eval_perplexity > 1 && ra.unigram_perplexity > 1);

    /* every other kernel path: the same losses and weights (src/kernels/path.h) */
    const char *paths[8], *was = al_kernels_path();
    const int n_paths = al_kernels_paths(paths, 8);
    for (int p = 0; p < n_paths && p < 8; p++) {
        if (strcmp(paths[p], was) == 0) continue;
        CHECK(al_kernels_set_path(paths[p]) == 0);
        float lp[STEPS];
        al_pretrain_result rp;
        al_pretrain_config cp = tiny_config(DIR "/run_path");
        CHECK(run(&cp, NULL, 0, lp, &rp));
        CHECK_MSG(memcmp(a, lp, sizeof a) == 0, "kernel path %s: losses differ from %s", paths[p], was);
        char *wa = NULL, *wp = NULL;
        size_t na = 0, np = 0;
        al_error rerr;
        CHECK(al_read_file(DIR "/run_a/model.safetensors", &wa, &na, &rerr) == AL_OK);
        CHECK(al_read_file(DIR "/run_path/model.safetensors", &wp, &np, &rerr) == AL_OK);
        CHECK_MSG(wa && wp && na == np && memcmp(wa, wp, na) == 0, "kernel path %s: weights differ from %s", paths[p], was);
        printf("kernel path %s = %s: 20 steps' losses and model.safetensors (%zu bytes) bit for bit\n", paths[p], was, na);
        free(wa), free(wp);
    }
    CHECK(al_kernels_set_path(was) == 0);

    /* the saved train_config.json repeats the run */
    FILE *f = fopen(DIR "/run_a/train_config.json", "rb");
    char json[8192];
    size_t jl = f ? fread(json, 1, sizeof json, f) : 0;
    if (f) fclose(f);
    al_pretrain_config saved = al_pretrain_default_config();
    al_error err;
    CHECK(jl > 0 && al_pretrain_config_parse(json, jl, "train_config.json", &saved, &err) == AL_OK);
    CHECK(strcmp(saved.vocab, DIR "/run_a/vocab.txt") == 0);
    snprintf(saved.out_dir, sizeof saved.out_dir, DIR "/run_b");
    CHECK(run(&saved, NULL, 0, d, &rb));
    CHECK(memcmp(a, d, sizeof a) == 0);

    /* 10 steps, a checkpoint, then resume for the other 10 */
    al_pretrain_config cc = tiny_config(DIR "/run_c");
    CHECK(run(&cc, NULL, 10, c, &rc));
    CHECK(rc.steps_done == 10);
    /* a run killed between opening eval.csv and its first row left it empty: the resume writes the header back */
    f = fopen(DIR "/run_c/eval.csv", "wb");
    if (f) fclose(f);
    CHECK(run(&cc, DIR "/run_c/checkpoint", 0, c, &rc));
    CHECK(rc.steps_done == STEPS);
    CHECK(memcmp(a, c, sizeof a) == 0);
    for (int i = 0; i < STEPS; i++)
        if (a[i] != c[i]) printf("step %d: %.9g vs resumed %.9g\n", i + 1, (double)a[i], (double)c[i]);
    CHECK(rc.eval_accuracy == ra.eval_accuracy && rc.eval_perplexity == ra.eval_perplexity);

    /* a cancel: the step under way finishes, a checkpoint is written, no final files; the resume finishes */
    al_pretrain_config ce = tiny_config(DIR "/run_e");
    ce.log_interval = 1;
    float e[STEPS];
    memset(e, 0, sizeof e);
    remove(DIR "/run_e/config.json"); /* left by an earlier run of this test */
    al_pretrain_hooks h;
    memset(&h, 0, sizeof h);
    h.losses = e;
    h.log = cancel_at_step_7;
    h.cancel = &g_cancel;
    al_pretrain_result re;
    CHECK_MSG(al_pretrain_run(&ce, NULL, &h, &re, &err) == AL_OK, "%s", err.message);
    CHECK(re.steps_done == 7);
    f = fopen(DIR "/run_e/config.json", "rb");
    CHECK(f == NULL); /* the final Hugging Face files wait for the end of the run */
    if (f) fclose(f);
    g_cancel = 0;
    h.log = NULL;
    CHECK_MSG(al_pretrain_run(&ce, DIR "/run_e/checkpoint", &h, &re, &err) == AL_OK, "%s", err.message);
    CHECK(re.steps_done == STEPS);
    CHECK(memcmp(a, e, sizeof a) == 0);

    /* the output is a Hugging Face BertForMaskedLM directory */
    al_model *m = NULL;
    CHECK_MSG(al_model_load_dir(DIR "/run_a", &m, &err) == AL_OK, "%s", err.message);
    if (m) {
        CHECK(al_model_has_mlm_head(m) && al_model_tokenizer(m) != NULL);
        CHECK(al_model_config(m)->n_layers == 2 && al_model_config(m)->vocab_size == 60);
        CHECK(al_model_n_params(m) == ra.n_params);
        CHECK(strcmp(al_model_weights_file(m), "model.safetensors") == 0);
        al_model_free(m);
    }
    const char *files[] = {"config.json", "vocab.txt", "tokenizer_config.json", "train_config.json", "losses.csv",
                           "eval.csv", "train_results.json"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[256];
        snprintf(p, sizeof p, DIR "/run_a/%s", files[i]);
        FILE *g = fopen(p, "rb");
        CHECK_MSG(g != NULL, "%s missing", p);
        if (g) fclose(g);
    }
    /* the losses log of the resumed run has each step once */
    f = fopen(DIR "/run_c/losses.csv", "rb");
    int rows = 0;
    char line[256];
    while (f && fgets(line, sizeof line, f)) rows += line[0] >= '0' && line[0] <= '9';
    if (f) fclose(f);
    CHECK(rows == STEPS);
    f = fopen(DIR "/run_c/eval.csv", "rb");
    CHECK(f && fgets(line, sizeof line, f) && strncmp(line, "step,loss,accuracy,", 19) == 0);
    if (f) fclose(f);

    /* a checkpoint's config.json states the run's dropouts, as the final one does (it once said 0.1 always) */
    al_pretrain_config cd = tiny_config(DIR "/run_d");
    cd.steps = 2;
    cd.checkpoint_interval = 1;
    cd.hidden_dropout_prob = 0.05f;
    cd.attention_probs_dropout_prob = 0;
    float dl[2];
    al_pretrain_result rd;
    run(&cd, NULL, 0, dl, &rd);
    char *ck = NULL, *fin = NULL;
    size_t ckn = 0, finn = 0;
    CHECK_MSG(al_read_file(DIR "/run_d/checkpoint/config.json", &ck, &ckn, &err) == AL_OK, "%s", err.message);
    CHECK_MSG(al_read_file(DIR "/run_d/config.json", &fin, &finn, &err) == AL_OK, "%s", err.message);
    CHECK(ck && fin && ckn == finn && memcmp(ck, fin, ckn) == 0);
    CHECK(ck && strstr(ck, "\"attention_probs_dropout_prob\":\t0,") && strstr(ck, "\"hidden_dropout_prob\":\t0.05,"));
    free(ck), free(fin);
    return check_summary("pretrain");
}
