/* test_mlm_data.c: MLM packing and masking (src/train/mlm_data.c): [CLS] ... [SEP] packing and cutting,
 * masking rates within statistical bounds over many tokens, specials never chosen, labels, determinism. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "core/rng.h"
#include "train/pretrain.h"
#include "train/train.h"

#define N_WORDS 95 /* vocabulary: 5 specials + w0 .. w94 */

static al_tokenizer *make_tokenizer(void) {
    char vocab[4096];
    int len = snprintf(vocab, sizeof vocab, "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n");
    for (int i = 0; i < N_WORDS; i++) len += snprintf(vocab + len, sizeof vocab - (size_t)len, "w%d\n", i);
    al_fileset *fs = al_fileset_new();
    al_tokenizer *tok = NULL;
    al_error err;
    CHECK(al_fileset_add(fs, "vocab.txt", vocab, (size_t)len, 1, &err) == AL_OK);
    CHECK_MSG(al_tokenizer_load(fs, &tok, &err) == AL_OK, "%s", err.message);
    al_fileset_free(fs);
    return tok;
}

/* n_lines lines of 1..max_words random words ("w17 w3 ..."), plus one line that is too long. */
static char *make_text(int n_lines, int max_words, size_t *len) {
    size_t cap = (size_t)n_lines * (size_t)max_words * 5 + 4096;
    char *t = malloc(cap);
    size_t n = 0;
    al_rng r;
    al_rng_seed(&r, 7);
    for (int l = 0; l < n_lines; l++) {
        int k = 1 + (int)al_rng_below(&r, (uint32_t)max_words);
        for (int i = 0; i < k; i++) n += (size_t)snprintf(t + n, cap - n, "%sw%u", i ? " " : "", al_rng_below(&r, N_WORDS));
        t[n++] = '\n';
    }
    for (int i = 0; i < 300; i++) n += (size_t)snprintf(t + n, cap - n, "w%d ", i % N_WORDS); /* 300 tokens */
    t[n++] = '\n';
    t[n] = 0;
    *len = n;
    return t;
}

static void test_packing(al_tokenizer *tok) {
    size_t len;
    char *text = make_text(2000, 40, &len);
    al_mlm_corpus c;
    al_error err;
    CHECK(al_mlm_corpus_build(tok, text, len, 64, 0, &c, &err) == AL_OK);
    CHECK(c.n_lines == 2001 && c.n_unk == 0 && c.n_seqs > 0);
    int bad = 0;
    int64_t total = 0, seps = 0;
    for (int s = 0; s < c.n_seqs; s++) {
        const int32_t *ids = c.ids + c.seq_start[s];
        int n = c.seq_len[s];
        total += n;
        if (n < 3 || n > 64 || ids[0] != 2 || ids[n - 1] != 3) bad++;
        for (int i = 1; i < n; i++) {
            seps += ids[i] == 3;
            if (ids[i] == 2 || ids[i] == 0 || ids[i] == 4) bad++;
        }
    }
    CHECK(bad == 0);
    CHECK(total == c.n_ids);
    CHECK(seps == c.n_lines);                     /* one [SEP] after every line */
    CHECK(c.seq_len[c.n_seqs - 1] == 64);         /* the 300-token line, cut to 62 + [CLS] [SEP] */
    CHECK(c.n_line_tokens - 300 + 62 + c.n_seqs + c.n_lines == c.n_ids);
    al_mlm_corpus c2;
    CHECK(al_mlm_corpus_build(tok, text, len, 64, 100, &c2, &err) == AL_OK && c2.n_lines == 100);
    al_mlm_corpus_free(&c2);
    CHECK(al_mlm_corpus_build(tok, text, len, 2, 0, &c2, &err) == AL_ERR_INVALID);
    al_mlm_corpus_free(&c);
    free(text);
}

static void test_masking(al_tokenizer *tok) {
    size_t len;
    char *text = make_text(4000, 30, &len);
    al_mlm_corpus c;
    al_error err;
    CHECK(al_mlm_corpus_build(tok, text, len, 128, 0, &c, &err) == AL_OK);
    al_mlm_masking m = al_mlm_default_masking(tok);
    CHECK(m.mask_id == 4 && m.vocab_size == 100 && m.n_special == 5);
    int *order = malloc(sizeof *order * (size_t)c.n_seqs);
    al_mlm_epoch_order(c.n_seqs, 99, 0, order);
    /* a permutation */
    int *seen = calloc((size_t)c.n_seqs, sizeof *seen);
    int perm_ok = 1;
    for (int i = 0; i < c.n_seqs; i++) perm_ok &= !seen[order[i]]++;
    CHECK(perm_ok);
    long long real = 0, chosen = 0, masked = 0, kept = 0, random = 0, special_chosen = 0, bad_label = 0;
    long long min_per_seq_violations = 0;
    al_rng rng;
    al_rng_seed(&rng, 123);
    const int B = 16;
    for (int s0 = 0; s0 + B <= c.n_seqs; s0 += B) {
        al_mlm_batch b;
        CHECK(al_mlm_make_batch(&c, order + s0, B, &m, &rng, &b, &err) == AL_OK);
        for (int i = 0; i < B; i++) {
            const int32_t *src = c.ids + c.seq_start[order[s0 + i]];
            int n = c.seq_len[order[s0 + i]], n_real = 0, n_chosen = 0;
            for (int j = 0; j < b.L; j++) {
                int32_t id = b.ids[i * b.L + j], lab = b.labels[i * b.L + j];
                if (j >= n) {
                    if (id != 0 || b.mask[i * b.L + j] != 0 || lab != AL_IGNORE_INDEX) bad_label++;
                    continue;
                }
                int special = src[j] < 5;
                n_real += !special;
                if (lab == AL_IGNORE_INDEX) {
                    if (id != src[j]) bad_label++;
                    continue;
                }
                if (special) special_chosen++;
                if (lab != src[j]) bad_label++;
                n_chosen++;
                if (id == 4) masked++;
                else if (id == src[j]) kept++;
                else if (id >= 5 && id < 100) random++;
                else bad_label++;
            }
            int want = (int)(0.15f * (float)n_real + 0.5f);
            if (want < 1) want = 1;
            if (n_chosen != want) min_per_seq_violations++;
            real += n_real;
            chosen += n_chosen;
        }
        al_mlm_batch_free(&b);
    }
    double p_chosen = (double)chosen / (double)real;
    double p_mask = (double)masked / (double)chosen, p_rand = (double)random / (double)chosen,
           p_kept = (double)kept / (double)chosen;
    printf("%lld real tokens, %lld chosen (%.4f): [MASK] %.4f, random %.4f, kept %.4f\n", real, chosen, p_chosen,
           p_mask, p_rand, p_kept);
    CHECK(real > 50000);
    CHECK(special_chosen == 0);
    CHECK(bad_label == 0);
    CHECK(min_per_seq_violations == 0);
    CHECK(fabs(p_chosen - 0.15) < 0.01); /* rounding per sequence only */
    /* binomial bounds: 5 standard deviations; a random draw equal to the original counts as kept (1/95) */
    double sd = sqrt(0.25 / (double)chosen);
    CHECK_NEAR(p_mask, 0.8, 5 * sd);
    CHECK_NEAR(p_rand, 0.1 * 94.0 / 95.0, 5 * sd);
    CHECK_NEAR(p_kept, 0.1 + 0.1 / 95.0, 5 * sd);

    /* determinism: same seed, same batch; another seed, another masking */
    al_mlm_batch b1, b2, b3;
    al_rng r1, r2, r3;
    al_rng_seed(&r1, 5);
    al_rng_seed(&r2, 5);
    al_rng_seed(&r3, 6);
    CHECK(al_mlm_make_batch(&c, order, 8, &m, &r1, &b1, &err) == AL_OK);
    CHECK(al_mlm_make_batch(&c, order, 8, &m, &r2, &b2, &err) == AL_OK);
    CHECK(al_mlm_make_batch(&c, order, 8, &m, &r3, &b3, &err) == AL_OK);
    size_t bytes = sizeof(int32_t) * (size_t)b1.B * (size_t)b1.L;
    CHECK(b1.L == b2.L && memcmp(b1.ids, b2.ids, bytes) == 0 && memcmp(b1.labels, b2.labels, bytes) == 0);
    CHECK(memcmp(b1.labels, b3.labels, bytes) != 0);
    al_mlm_batch_free(&b1);
    al_mlm_batch_free(&b2);
    al_mlm_batch_free(&b3);
    int *order2 = malloc(sizeof *order2 * (size_t)c.n_seqs);
    al_mlm_epoch_order(c.n_seqs, 99, 0, order2);
    CHECK(memcmp(order, order2, sizeof *order * (size_t)c.n_seqs) == 0);
    al_mlm_epoch_order(c.n_seqs, 99, 1, order2);
    CHECK(memcmp(order, order2, sizeof *order * (size_t)c.n_seqs) != 0);
    int idx_bad = c.n_seqs;
    CHECK(al_mlm_make_batch(&c, &idx_bad, 1, &m, &r1, &b1, &err) == AL_ERR_INVALID);
    free(order2);
    free(seen);
    free(order);
    al_mlm_corpus_free(&c);
    free(text);
}

/* bert-base-uncased's vocabulary (the larger model's): [PAD], [unused0..98], [UNK], [CLS], [SEP], [MASK],
 * [unused99..993] lead, so 999 ids are never masked nor drawn, and a masked batch never holds one. */
static void test_bert_vocab_specials(void) {
    al_fileset *fs = al_fileset_new();
    al_tokenizer *tok = NULL;
    al_error err;
    CHECK_MSG(al_fileset_add_dir(fs, "models/attnlab-small-bert", &err) == AL_OK, "%s", err.message);
    CHECK_MSG(al_tokenizer_load(fs, &tok, &err) == AL_OK, "%s", err.message);
    al_fileset_free(fs);
    if (!tok) return;
    CHECK(al_mlm_leading_specials(tok) == 999);
    al_mlm_masking m = al_mlm_default_masking(tok);
    CHECK(m.n_special == 999 && m.mask_id == 103 && m.vocab_size == 30522);
    m.mask_prob = 0.5f;
    m.replace_mask = 0.0f;
    m.replace_random = 1.0f; /* every chosen token replaced at random: the draws must avoid the specials */
    const char *text = "the cat sat on the mat and looked at the dog\nit was a good day for a walk\n";
    al_mlm_corpus c;
    CHECK_MSG(al_mlm_corpus_build(tok, text, strlen(text), 128, 0, &c, &err) == AL_OK, "%s", err.message);
    al_rng r;
    al_rng_seed(&r, 3);
    int bad = 0, chosen = 0;
    for (int rep = 0; rep < 200; rep++) {
        int idx = 0;
        al_mlm_batch b;
        CHECK(al_mlm_make_batch(&c, &idx, 1, &m, &r, &b, &err) == AL_OK);
        for (int i = 0; i < b.L; i++) {
            if (b.labels[i] == AL_IGNORE_INDEX) continue;
            chosen++;
            if (b.labels[i] < 999 || b.ids[i] < 999) bad++;
        }
        al_mlm_batch_free(&b);
    }
    CHECK(chosen > 0);
    CHECK_MSG(bad == 0, "%d chosen positions were or became special tokens", bad);
    al_mlm_corpus_free(&c);
    al_tokenizer_free(tok);
}

int main(void) {
    test_bert_vocab_specials();
    al_tokenizer *tok = make_tokenizer();
    if (tok) {
        test_packing(tok);
        test_masking(tok);
    }
    al_tokenizer_free(tok);
    return check_summary("mlm_data");
}
