/* test_papa_layout.c: the PAPA input layout (src/methods/papa/papa_layout.c) against the checks of
 * docs/papa.md#input-layout, on the default model's WordPiece tokenizer and on a RoBERTa fixture with a
 * byte-level BPE tokenizer (position ids that skip the inserted pads). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "methods/papa/papa.h"
#include "methods/tasks/task.h"
#include "model/forward_internal.h"

#define LMAX 128

typedef struct laid {
    int32_t ids[LMAX], mask[LMAX], types[LMAX], first[LMAX];
    al_papa_example ex;
} laid;

static void laid_init(laid *x) {
    memset(x, 0, sizeof *x);
    x->ex.ids = x->ids;
    x->ex.mask = x->mask;
    x->ex.type_ids = x->types;
    x->ex.first_word = x->first;
}

/* "the the ... the": one token a word in the default vocabulary. */
static char *repeat_word(const char *w, int k) {
    char *s = calloc((size_t)k * (strlen(w) + 1) + 1, 1);
    for (int i = 0; i < k; i++) {
        if (i) strcat(s, " ");
        strcat(s, w);
    }
    return s;
}

static void test_single(const al_tokenizer *tok) {
    al_special_ids sp = al_tokenizer_special_ids(tok);
    al_error err;
    for (int k = 0; k <= 40; k += 5) {
        laid x;
        laid_init(&x);
        char *text = repeat_word("the", k);
        CHECK_MSG(al_papa_encode(tok, AL_LAYOUT_PAPA, text, NULL, 64, &x.ex, &err) == AL_OK, "%s", err.message);
        /* A is cut to L/2 = 32 tokens counting [CLS]: k + 1 <= 32 keeps every word. */
        int kept = k + 1 <= 32 ? k : 31;
        int bad = 0;
        for (int i = 0; i < 64; i++) {
            int want = i <= kept || i == 63;
            if (x.mask[i] != want) bad++;
            if (!x.mask[i] && x.ids[i] != sp.pad) bad++;
        }
        CHECK_MSG(bad == 0, "k = %d: mask must be 1 exactly at {0..%d} and {63}", k, kept);
        CHECK(x.ids[0] == sp.cls && x.ids[63] == sp.sep);
        CHECK(x.ex.truncated == (k + 1 > 32));
        /* first sub-tokens carry their word index */
        CHECK(x.first[0] == -1 && x.first[63] == -1 && (k == 0 || (x.first[1] == 0 && x.first[kept] == kept - 1)));
        free(text);
    }
}

static void test_pair(const al_tokenizer *tok) {
    al_special_ids sp = al_tokenizer_special_ids(tok);
    al_error err;
    laid x, plain;
    laid_init(&x);
    laid_init(&plain);
    char *a = repeat_word("the", 5), *b = repeat_word("of", 7);
    CHECK(al_papa_encode(tok, AL_LAYOUT_PAPA, a, b, 64, &x.ex, &err) == AL_OK);
    CHECK(al_papa_encode(tok, AL_LAYOUT_RIGHT_PAD, a, b, 64, &plain.ex, &err) == AL_OK);
    CHECK(x.ids[32] == sp.sep && x.mask[32] == 1);      /* middle [SEP] at L/2 */
    CHECK(x.ids[33] == plain.ids[7] && x.ids[39] == plain.ids[13]); /* B starts at L/2 + 1 */
    CHECK(x.ids[63] == sp.sep && x.mask[62] == 0 && x.mask[40] == 0 && x.mask[6] == 0 && x.mask[5] == 1);
    /* token types stay where the original encoding had them */
    int same = 1;
    for (int i = 0; i < 64; i++) same &= x.types[i] == plain.types[i];
    CHECK(same);
    CHECK(plain.types[7] == 1 && x.types[33] == 0); /* so B tokens moved to >= L/2 carry type 0, as the reference */
    free(a);
    free(b);

    /* Long segments (60 + 60 tokens, budget 61): the tokenizer's longest_first gives A 30 and B 31, as the
     * Rust tokenizers the reference code ran on do (the odd token to the second on ties); the layout puts
     * [CLS] + A at 0..30 (31 is padding) and [SEP] + B at 32..62, which cuts B to 30, then [SEP] at 63. */
    a = repeat_word("the", 60);
    b = repeat_word("of", 60);
    laid_init(&x);
    CHECK(al_papa_encode(tok, AL_LAYOUT_PAPA, a, b, 64, &x.ex, &err) == AL_OK);
    int n_real = 0;
    for (int i = 0; i < 64; i++) n_real += x.mask[i];
    CHECK(n_real == 63);
    CHECK(x.ids[30] != sp.sep && x.mask[31] == 0 && x.ids[32] == sp.sep && x.ids[62] != sp.sep && x.ids[63] == sp.sep);
    CHECK(x.ex.truncated);
    free(a);
    free(b);
}

/* The MLM score's examples of a pair task are the pair in the task's layout, as the probe sees it, and their
 * masked positions fall in both segments (docs/papa.md#mlm-score). */
static void test_mlm_pairs(const al_tokenizer *tok) {
    enum { N = 40, L = 64 };
    const char *lines[N], *pairs[N];
    char *a = repeat_word("the", 5), *b = repeat_word("of", 20);
    for (int x = 0; x < N; x++) lines[x] = a, pairs[x] = b;
    static int32_t ids[N * L], mask[N * L], types[N * L], labels[N * L];
    al_error err;
    CHECK_MSG(al_papa_mlm_examples(tok, AL_LAYOUT_PAPA, lines, pairs, N, L, 4321, ids, mask, types, labels, &err) == AL_OK,
              "%s", err.message);
    laid want;
    laid_init(&want);
    CHECK(al_papa_encode(tok, AL_LAYOUT_PAPA, a, b, L, &want.ex, &err) == AL_OK);
    int in_a = 0, in_b = 0, layout_ok = 1, per_line_ok = 1;
    for (int x = 0; x < N; x++) {
        int masked = 0;
        for (int i = 0; i < L; i++) {
            const int32_t *id = ids + x * L, *lab = labels + x * L;
            layout_ok &= mask[x * L + i] == want.mask[i] && (lab[i] < 0 ? id[i] == want.ids[i] : lab[i] == want.ids[i]);
            if (lab[i] >= 0) masked++, in_a += i < L / 2, in_b += i > L / 2;
        }
        per_line_ok &= masked == 4; /* round(15% of 25 real non-special tokens) */
    }
    CHECK_MSG(layout_ok, "each MLM example is the pair in the PAPA layout, with the original id as its label where masked");
    CHECK(per_line_ok);
    CHECK_MSG(in_a > 0 && in_b > in_a, "masked positions in A %d, in B %d", in_a, in_b);
    /* without pairs, the same lines are segment A alone */
    CHECK(al_papa_mlm_examples(tok, AL_LAYOUT_PAPA, lines, NULL, N, L, 4321, ids, mask, types, labels, &err) == AL_OK);
    int real = 0;
    for (int i = 0; i < L; i++) real += mask[i];
    CHECK(real == 7); /* [CLS], five words, [SEP] */
    free(a);
    free(b);
}

static void test_words(const al_tokenizer *tok) {
    al_special_ids sp = al_tokenizer_special_ids(tok);
    al_error err;
    const char *words[] = {"The", "cat", "sat", "quietly", "."};
    laid x, plain;
    laid_init(&x);
    laid_init(&plain);
    CHECK(al_papa_encode_words(tok, AL_LAYOUT_PAPA, words, 5, 32, &x.ex, &err) == AL_OK);
    CHECK(al_papa_encode_words(tok, AL_LAYOUT_RIGHT_PAD, words, 5, 32, &plain.ex, &err) == AL_OK);
    int n = 0, seps = 0, sep_at = -1;
    for (int i = 0; i < 32; i++) n += plain.mask[i];
    for (int i = 0; i < 32; i++)
        if (x.ids[i] == sp.sep) seps++, sep_at = i;
    CHECK(seps == 1 && sep_at == 31);
    CHECK(x.mask[n - 1] == 0 && x.ids[n - 1] == sp.pad && x.first[n - 1] == -1 && x.first[31] == -1);
    int words_seen = 0, bad = 0;
    for (int i = 0; i < n - 1; i++) {
        bad += x.ids[i] != plain.ids[i] || x.first[i] != plain.first[i];
        if (x.first[i] >= 0) CHECK(x.first[i] == words_seen++);
    }
    CHECK(bad == 0 && words_seen == 5);
    /* a token task needs first_word */
    x.ex.first_word = NULL;
    CHECK(al_papa_encode_words(tok, AL_LAYOUT_PAPA, words, 5, 32, &x.ex, &err) == AL_ERR_INVALID);
    x.ex.first_word = x.first;
    CHECK(al_papa_encode(tok, AL_LAYOUT_PAPA, "a", NULL, 1, &x.ex, &err) == AL_ERR_INVALID);
    CHECK(strstr(err.message, "L = 1") != NULL);
}

/* A token task labelled at its [MASK] only (the agreement task's shape): the word "[MASK]" becomes the
 * tokenizer's own mask id, whatever the tokenizer spells it, and carries the only label. */
static void test_masked_words(const al_tokenizer *tok) {
    const char *file =
        "{\"task\":\"toy\",\"kind\":\"token\",\"labels\":[\"singular\",\"plural\"],\"metric\":\"token_accuracy\"}\n"
        "{\"split\":\"train\",\"words\":[\"the\",\"dogs\",\"[MASK]\",\"here\"],\"word_labels\":[null,null,\"plural\",null]}\n"
        "{\"split\":\"validation\",\"words\":[\"a\",\"cat\",\"[MASK]\"],\"word_labels\":[null,null,\"singular\"]}\n";
    al_task *task = NULL;
    al_error err;
    CHECK_MSG(al_task_load_jsonl(file, strlen(file), "toy.jsonl", &task, &err) == AL_OK, "%s", err.message);
    if (!task) return;
    const int mask_id = al_tokenizer_special_ids(tok).mask;
    al_papa_inputs in;
    CHECK_MSG(al_papa_inputs_build(tok, task, AL_TASK_TRAIN, 0, AL_LAYOUT_PAPA, 16, &in, &err) == AL_OK, "%s",
              err.message);
    int n_mask = 0, n_labels = 0, label_on_mask = 0;
    for (int t = 0; t < 16; t++) {
        n_mask += in.ids[t] == mask_id;
        n_labels += in.labels[t] != -100;
        label_on_mask += in.ids[t] == mask_id && in.labels[t] == 1;
    }
    CHECK_MSG(n_mask == 1 && n_labels == 1 && label_on_mask == 1, "masks %d labels %d on mask %d", n_mask, n_labels,
              label_on_mask);
    al_papa_inputs_free(&in);
    al_task_free(task);
}

/* RoBERTa: <s> A </s></s> B </s>; the middle pair sits at L/2 and L/2 + 1, no token types, and the
 * default position ids skip the pads the layout inserts (B's positions follow A's). */
static void test_roberta(void) {
    al_fileset *fs = al_fileset_new();
    al_error err;
    CHECK(al_fileset_add_dir(fs, "tests/fixtures/roberta_st_f32", &err) == AL_OK);
    CHECK(al_fileset_add_dir(fs, "tests/fixtures/tokenizers/bpe_small", &err) == AL_OK);
    al_model *m = NULL;
    CHECK_MSG(al_model_load(fs, &m, &err) == AL_OK, "%s", err.message);
    al_fileset_free(fs);
    if (!m) return;
    const al_tokenizer *tok = al_model_tokenizer(m);
    CHECK(tok != NULL);
    if (!tok) {
        al_model_free(m);
        return;
    }
    al_special_ids sp = al_tokenizer_special_ids(tok);
    laid x;
    laid_init(&x);
    const int L = 16; /* the fixture has 18 positions, 2 of them before the offset */
    CHECK_MSG(al_papa_encode(tok, AL_LAYOUT_PAPA, "hello world", "the end", L, &x.ex, &err) == AL_OK, "%s",
              err.message);
    CHECK(x.ids[L / 2] == sp.sep && x.ids[L / 2 + 1] == sp.sep && x.ids[L - 1] == sp.sep);
    int32_t pos[LMAX];
    al_batch batch = {1, L, x.ids, x.mask, NULL, NULL};
    CHECK(al_fwd_positions(al_model_config(m), &batch, pos, &err) == AL_OK);
    int last_a = 0;
    while (x.mask[last_a + 1]) last_a++;
    /* positions count real tokens: the middle </s> follows the last token of A directly */
    CHECK(pos[L / 2] == pos[last_a] + 1);
    CHECK(pos[L - 1] > pos[L / 2 + 1]);
    test_masked_words(tok);
    al_model_free(m);
}

int main(void) {
    al_model *m = NULL;
    al_error err;
    CHECK_MSG(al_model_load_dir("models/attnlab-mini-bert", &m, &err) == AL_OK, "%s", err.message);
    if (m) {
        const al_tokenizer *tok = al_model_tokenizer(m);
        test_single(tok);
        test_pair(tok);
        test_mlm_pairs(tok);
        test_words(tok);
        test_masked_words(tok);
        al_model_free(m);
    }
    test_roberta();
    return check_summary("papa_layout");
}
