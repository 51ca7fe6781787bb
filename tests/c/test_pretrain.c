/* test_pretrain.c: `attnlab pretrain` end to end on a tiny config (src/train/pretrain.c, checkpoint.c):
 * 20 steps twice give the same losses bit for bit, the saved train_config.json repeats the run, 10 steps
 * + resume from the checkpoint + 10 steps equal the uninterrupted 20, and the output directory is a
 * Hugging Face BertForMaskedLM that the loader reads back with its tokenizer. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "core/rng.h"
#include "train/pretrain.h"

#define DIR "build/test_pretrain"
#define STEPS 20

static const char *const k_words[] = {"the", "cat", "dog", "sat", "on", "a", "mat", "and", "ran", "to",
                                      "big", "small", "house", "tree", "under", "green", "red", "fox"};

static int write_file(const char *path, const char *text, size_t len) {
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    int ok = fwrite(text, 1, len, f) == len;
    return fclose(f) == 0 && ok;
}

static int make_data(void) {
    if (al_make_dirs(DIR)) return 0;
    char *text = malloc(1 << 16);
    size_t n = 0;
    al_rng r;
    al_rng_seed(&r, 11);
    for (int l = 0; l < 300; l++) {
        int k = 3 + (int)al_rng_below(&r, 10);
        for (int i = 0; i < k; i++) n += (size_t)sprintf(text + n, "%s%s", i ? " " : "", k_words[al_rng_below(&r, 18)]);
        n += (size_t)sprintf(text + n, ".\n");
    }
    int ok = write_file(DIR "/train.txt", text, n) && write_file(DIR "/heldout.txt", text, n / 10 + 1);
    al_vocab_learn_options o = al_vocab_learn_default_options();
    o.vocab_size = 60;
    char *vocab = NULL;
    size_t vl = 0;
    al_error err;
    ok = ok && al_vocab_learn(text, n, &o, &vocab, &vl, NULL, &err) == AL_OK && write_file(DIR "/vocab.txt", vocab, vl);
    free(vocab);
    free(text);
    return ok;
}

static al_pretrain_config tiny_config(const char *out) {
    al_pretrain_config c = al_pretrain_default_config();
    snprintf(c.name, sizeof c.name, "tiny");
    snprintf(c.vocab, sizeof c.vocab, DIR "/vocab.txt");
    snprintf(c.train, sizeof c.train, DIR "/train.txt");
    snprintf(c.heldout, sizeof c.heldout, DIR "/heldout.txt");
    snprintf(c.out_dir, sizeof c.out_dir, "%s", out);
    c.hidden_size = 32;
    c.num_hidden_layers = 2;
    c.num_attention_heads = 2;
    c.intermediate_size = 64;
    c.max_position_embeddings = 32;
    c.max_len = 32;
    c.steps = STEPS;
    c.batch_size = 4;
    c.warmup_steps = 4;
    c.lr = 3e-3f;
    c.eval_interval = 10;
    c.eval_sequences = 16;
    c.checkpoint_interval = 0;
    c.log_interval = 0;
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

int main(void) {
    if (!make_data()) {
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
    CHECK(run(&cc, DIR "/run_c/checkpoint", 0, c, &rc));
    CHECK(rc.steps_done == STEPS);
    CHECK(memcmp(a, c, sizeof a) == 0);
    for (int i = 0; i < STEPS; i++)
        if (a[i] != c[i]) printf("step %d: %.9g vs resumed %.9g\n", i + 1, (double)a[i], (double)c[i]);
    CHECK(rc.eval_accuracy == ra.eval_accuracy && rc.eval_perplexity == ra.eval_perplexity);

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
    return check_summary("pretrain");
}
