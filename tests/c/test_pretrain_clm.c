/* test_pretrain_clm.c: `attnlab pretrain` with objective "clm" (a GPT-2 decoder; docs/decoder_pretraining.md) on the
 * tiny corpus of pretrain_fixture.h: the loss falls over 24 steps, the same config gives the same losses bit for
 * bit, 12 steps + a checkpoint + resume give the uninterrupted run's losses, held-out figures and weights bit for
 * bit, the held-out perplexity beats the unigram and bigram baselines, and the directory written loads back as a
 * GPT-2 whose forward gives the run's held-out figures again. */
#include <math.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "model/model_internal.h"
#include "pretrain_fixture.h"

#define DIR "build/test_pretrain_clm"
#define STEPS 24

static al_pretrain_config tiny_config(const char *out) {
    al_pretrain_config c = fixture_config(DIR, out);
    snprintf(c.objective, sizeof c.objective, "clm");
    c.steps = STEPS;
    c.eval_interval = 12;
    c.eval_sequences = 0;
    c.shards = 2;
    c.attention_probs_dropout_prob = 0.1f;
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

static al_model *load(const char *dir) {
    al_model *m = NULL;
    al_error err;
    CHECK_MSG(al_model_load_dir(dir, &m, &err) == AL_OK, "%s", err.message);
    return m;
}

int main(void) {
    if (!fixture_make_data(DIR, 11, 300, 3, 10, NULL, NULL)) {
        CHECK(0);
        return check_summary("pretrain_clm");
    }
    float a[STEPS], b[STEPS], c[STEPS];
    al_pretrain_result ra, rb, rc;
    al_pretrain_config cfg = tiny_config(DIR "/run_a");
    if (!run(&cfg, NULL, 0, a, &ra)) return check_summary("pretrain_clm");
    CHECK(ra.steps_done == STEPS);
    CHECK(run(&cfg, NULL, 0, b, &rb));
    CHECK(memcmp(a, b, sizeof a) == 0);
    const double first = (a[0] + a[1] + a[2]) / 3, last = (a[STEPS - 3] + a[STEPS - 2] + a[STEPS - 1]) / 3;
    printf("loss %.4f -> %.4f; held-out perplexity %.2f (unigram %.2f, bigram %.2f), accuracy %.3f\n", first, last,
           ra.eval_perplexity, ra.unigram_perplexity, ra.bigram_perplexity, ra.eval_accuracy);
    CHECK(last < first - 0.5);
    CHECK(ra.eval_perplexity < ra.unigram_perplexity);
    CHECK(ra.bigram_perplexity < ra.unigram_perplexity);

    /* 12 steps, a checkpoint, then resume for the other 12 */
    al_pretrain_config cc = tiny_config(DIR "/run_c");
    CHECK(run(&cc, NULL, 12, c, &rc));
    CHECK(rc.steps_done == 12);
    CHECK(run(&cc, DIR "/run_c/checkpoint", 0, c, &rc));
    CHECK(rc.steps_done == STEPS);
    CHECK(memcmp(a, c, sizeof a) == 0);
    CHECK(rc.eval_perplexity == ra.eval_perplexity && rc.bigram_perplexity == ra.bigram_perplexity);

    al_model *ma = load(DIR "/run_a"), *mc = load(DIR "/run_c");
    if (ma && mc) {
        CHECK(al_model_is_causal(ma));
        CHECK(strcmp(al_arch_name(al_model_config(ma)->arch), "gpt2") == 0);
        CHECK(ma->n_floats == mc->n_floats && memcmp(ma->storage, mc->storage, sizeof(float) * ma->n_floats) == 0);
    }
    al_model_free(ma);
    al_model_free(mc);
    return check_summary("pretrain_clm");
}
