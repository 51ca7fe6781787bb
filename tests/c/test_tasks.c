/* test_tasks.c: the probing tasks (src/methods/tasks/task.h, docs/tasks.md). SHA-256 against the FIPS 180-4
 * example vectors and Python's hashlib; every import format on small files in tests/fixtures/tasks
 * (good ones read with the right texts, labels and metric; malformed ones name file and line, and
 * skip mode counts every bad row); label maps; the content hash (stable, sensitive to one label, the
 * same after writing and reading back); the seeded split of one file; the built-in tasks in
 * build/data/tasks when present (sizes, balance, hand-checked agreement attractor counts, the literal
 * [MASK] read by the WordPiece tokenizer as the mask token); and a short seeded fuzz run over every
 * reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/rng.h"
#include "core/sha256.h"
#include "methods/tasks/task.h"

#define FIX "tests/fixtures/tasks/"
#define BUILTIN "build/data/tasks"

static char *slurp(const char *name, size_t *len) {
    char path[512];
    snprintf(path, sizeof path, FIX "%s", name);
    char *data = NULL;
    al_error err = {0};
    if (al_read_file(path, &data, len, &err) != AL_OK) {
        fprintf(stderr, "cannot read %s: %s\n", path, err.message);
        return NULL;
    }
    return data;
}

/* Imports fixture files (val NULL: one file split by opt's fraction). Messages name the files. */
static al_status import(const al_task_import_options *opt, const char *train, const char *val, al_task **out,
                        al_task_import_report *rep, al_error *err) {
    size_t tl = 0, vl = 0;
    char *td = slurp(train, &tl), *vd = val ? slurp(val, &vl) : NULL;
    al_status st = al_task_import(opt, train, td, tl, val, vd, vl, out, rep, err);
    free(td);
    free(vd);
    return st;
}

static al_task_import_options with_format(const char *format) {
    al_task_import_options o = al_task_import_default_options();
    o.format = format;
    return o;
}

static int has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

static int label_of(const al_task *t, const al_task_example *e, const char *name) {
    return e->label >= 0 && e->label < t->n_labels && strcmp(t->label_names[e->label], name) == 0;
}

/* ---------------------------------------------------------------- SHA-256 */

static void test_sha256(void) {
    char hex[65];
    /* FIPS 180-4 examples (NIST's SHA256.pdf, SHA2_Additional.pdf) */
    al_sha256_hex_of("abc", 3, hex);
    CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    al_sha256_hex_of(two, strlen(two), hex);
    CHECK(strcmp(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1") == 0);
    al_sha256_hex_of("", 0, hex);
    CHECK(strcmp(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855") == 0);
    const char *long896 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    al_sha256_hex_of(long896, strlen(long896), hex);
    CHECK(strcmp(hex, "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1") == 0);
    /* one million 'a', fed in uneven pieces */
    al_sha256 h;
    uint8_t d[32];
    char chunk[997];
    memset(chunk, 'a', sizeof chunk);
    al_sha256_init(&h);
    size_t left = 1000000;
    for (size_t step = 1; left; step = step % 997 + 1) {
        size_t n = step < left ? step : left;
        al_sha256_update(&h, chunk, n);
        left -= n;
    }
    al_sha256_final(&h, d);
    al_sha256_hex(d, hex);
    CHECK(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0);
    /* lengths around the padding boundary (expected values from Python's hashlib), byte by byte too */
    static const struct { size_t n; const char *hex; } edge[] = {
        {55, "e7313d333c272e639f790978283f9eb392e843d0f29b7016828bb1daa4aac70b"},
        {56, "4324d65f3c103567f5589c710bc08f8523f929a9272e3af36fc968e52abc6c27"},
        {63, "81c80242132f230c3bd41b3e63bbcff16107339549214a99614ff26664625055"},
        {64, "39e3d7b6b5d075d37d053ad89b24b41bef4f3c29760c84447cab3f3be1882241"},
        {65, "aacca6ff74fdbb296d165a45cecfa04e5127bc008770fbbdd48006f2d2fae95e"},
        {119, "9ce7368e4daf32341631b492e80359dc9f594b48453cd0dd5bf0b19279cc177e"},
        {1000, "1e9bc38cbf860b9ec31918b065f9b52476c549a782e0e7990bed8ce3868d2371"},
    };
    uint8_t msg[1000];
    for (int i = 0; i < 1000; i++) msg[i] = (uint8_t)((i * 7 + 3) % 256);
    for (size_t k = 0; k < sizeof edge / sizeof edge[0]; k++) {
        al_sha256_hex_of(msg, edge[k].n, hex);
        CHECK_MSG(strcmp(hex, edge[k].hex) == 0, "length %zu", edge[k].n);
        al_sha256_init(&h);
        for (size_t i = 0; i < edge[k].n; i++) al_sha256_update(&h, msg + i, 1);
        al_sha256_final(&h, d);
        al_sha256_hex(d, hex);
        CHECK_MSG(strcmp(hex, edge[k].hex) == 0, "length %zu byte by byte", edge[k].n);
    }
}

/* ---------------------------------------------------------------- GLUE */

static void test_glue(void) {
    al_task *t = NULL;
    al_task_import_report rep;
    al_error err = {0};
    al_task_import_options opt = with_format(NULL); /* auto */

    /* CoLA: no header, numeric labels named, MCC */
    CHECK(import(&opt, "cola_train.tsv", "cola_dev.tsv", &t, &rep, &err) == AL_OK);
    if (t) {
        CHECK(strcmp(t->id, "cola") == 0 && strcmp(t->metric, "mcc") == 0 && t->kind == AL_TASK_SEQUENCE);
        CHECK(t->n_labels == 2 && strcmp(t->label_names[0], "unacceptable") == 0 &&
              strcmp(t->label_names[1], "acceptable") == 0);
        CHECK(t->n_train == 5 && t->n_validation == 2 && rep.n_rows == 7 && rep.n_bad == 0);
        CHECK(strcmp(t->train[1].text, "The children played the garden in.") == 0 && t->train[1].label == 0);
        CHECK(t->train[0].label == 1 && t->train[0].text_pair == NULL && t->train[0].group == AL_TASK_NO_GROUP);
        CHECK(strcmp(t->validation[0].text, "Him saw the dog.") == 0 && t->validation[0].label == 0);
        CHECK(strlen(t->hash) == 64);
    }
    al_task_free(t);

    /* malformed CoLA rows: strict stops at the first, naming file and line */
    opt = with_format("cola");
    CHECK(import(&opt, "cola_bad.tsv", "cola_dev.tsv", &t, &rep, &err) == AL_ERR_FORMAT && !t);
    CHECK_MSG(has(err.message, "cola_bad.tsv: line 3:") && has(err.message, "expected 4"), "%s", err.message);
    opt.skip_bad_rows = 1;
    CHECK(import(&opt, "cola_bad.tsv", "cola_dev.tsv", &t, &rep, &err) == AL_OK);
    CHECK(rep.n_bad == 3 && rep.n_messages == 3 && rep.n_rows == 4 + 2);
    CHECK_MSG(has(rep.messages[0], "cola_bad.tsv: line 3:"), "%s", rep.messages[0]);
    CHECK_MSG(has(rep.messages[1], "cola_bad.tsv: line 5:") && has(rep.messages[1], "'2'"), "%s", rep.messages[1]);
    CHECK_MSG(has(rep.messages[2], "cola_bad.tsv: line 6:") && has(rep.messages[2], "empty"), "%s", rep.messages[2]);
    if (t) CHECK(t->n_train == 4 && strcmp(t->train[3].text, "A sentence that is fine.") == 0);
    al_task_free(t);

    /* test files (no labels) are refused, detected or named */
    opt = with_format(NULL);
    const char *tests[] = {"cola_test.tsv", "sst2_test.tsv", "mrpc_test.tsv", "mnli_test.tsv"};
    for (int i = 0; i < 4; i++) {
        CHECK(import(&opt, tests[i], NULL, &t, &rep, &err) == AL_ERR_FORMAT && !t);
        CHECK_MSG(has(err.message, tests[i]) && has(err.message, "test file"), "%s", err.message);
    }
    opt = with_format("sst2");
    CHECK(import(&opt, "sst2_test.tsv", NULL, &t, &rep, &err) == AL_ERR_FORMAT && has(err.message, "test file"));
    opt = with_format("cola");
    CHECK(import(&opt, "cola_test.tsv", NULL, &t, &rep, &err) == AL_ERR_FORMAT && has(err.message, "test file"));
    /* a named format that does not match the header */
    opt = with_format("mrpc");
    CHECK(import(&opt, "sst2_train.tsv", NULL, &t, &rep, &err) == AL_ERR_FORMAT && !t);
    CHECK_MSG(has(err.message, "sst2_train.tsv: line 1:") && has(err.message, "Quality"), "%s", err.message);

    /* SST-2 */
    opt = with_format(NULL);
    CHECK(import(&opt, "sst2_train.tsv", "sst2_dev.tsv", &t, &rep, &err) == AL_OK);
    if (t) {
        CHECK(strcmp(t->id, "sst2") == 0 && strcmp(t->metric, "accuracy") == 0);
        CHECK(t->n_train == 3 && t->n_validation == 1 && label_of(t, &t->train[1], "negative"));
        CHECK(has(t->train[1].text, "clichés")); /* UTF-8 kept as is */
    }
    al_task_free(t);

    /* MRPC: byte order mark and CRLF, pair, F1 */
    CHECK(import(&opt, "mrpc_train.tsv", NULL, &t, &rep, &err) == AL_OK);
    if (t) {
        CHECK(strcmp(t->id, "mrpc") == 0 && strcmp(t->metric, "f1") == 0 && t->n_train + t->n_validation == 2);
        const al_task_example *e = t->n_train && label_of(t, &t->train[0], "equivalent") ? &t->train[0] : &t->validation[0];
        CHECK(label_of(t, e, "equivalent") && strcmp(e->text, "The company said its quarterly profit rose 10 percent.") == 0);
        CHECK(e->text_pair && strcmp(e->text_pair, "Quarterly profit at the company rose 10 percent, it said.") == 0);
    }
    al_task_free(t);

    /* MNLI: train and dev have different annotator columns; labels by name */
    CHECK(import(&opt, "mnli_train.tsv", "mnli_dev_matched.tsv", &t, &rep, &err) == AL_OK);
    if (t) {
        CHECK(t->n_labels == 3 && strcmp(t->label_names[0], "entailment") == 0 &&
              strcmp(t->label_names[1], "neutral") == 0 && strcmp(t->label_names[2], "contradiction") == 0);
        CHECK(t->n_train == 3 && t->n_validation == 2);
        CHECK(t->train[1].label == 2 && strcmp(t->train[1].text, "The shop closes at noon on Sundays.") == 0 &&
              strcmp(t->train[1].text_pair, "The shop is open all night on Sundays.") == 0);
        CHECK(t->train[2].label == 1 && t->validation[1].label == 2);
    }
    al_task_free(t);

    /* RTE, QNLI (named format for both files), QQP with a broken row */
    CHECK(import(&opt, "rte_train.tsv", NULL, &t, &rep, &err) == AL_OK && t && strcmp(t->id, "rte") == 0);
    al_task_free(t);
    opt = with_format("qnli");
    CHECK(import(&opt, "qnli_dev.tsv", "qnli_dev.tsv", &t, &rep, &err) == AL_OK);
    if (t) CHECK(t->n_train == 2 && label_of(t, &t->train[1], "not_entailment") && has(t->train[0].text, "When did"));
    al_task_free(t);
    opt = with_format("rte");
    CHECK(import(&opt, "rte_bad.tsv", NULL, &t, &rep, &err) == AL_ERR_FORMAT);
    CHECK_MSG(has(err.message, "rte_bad.tsv: line 3:") && has(err.message, "contradiction"), "%s", err.message);
    opt = with_format(NULL);
    CHECK(import(&opt, "qqp_train.tsv", NULL, &t, &rep, &err) == AL_ERR_FORMAT && !t);
    CHECK_MSG(has(err.message, "qqp_train.tsv: line 4:") && has(err.message, "found 5"), "%s", err.message);
    opt.skip_bad_rows = 1;
    opt.validation_fraction = 0.34;
    CHECK(import(&opt, "qqp_train.tsv", NULL, &t, &rep, &err) == AL_OK);
    CHECK(rep.n_bad == 1 && rep.n_rows == 3 && has(rep.messages[0], "qqp_train.tsv: line 4:"));
    if (t) CHECK(strcmp(t->id, "qqp") == 0 && t->n_train == 2 && t->n_validation == 1 && strcmp(t->metric, "f1") == 0);
    al_task_free(t);
}

/* ---------------------------------------------------------------- CoNLL-2003 */

static void test_conll(void) {
    al_task *t = NULL;
    al_task_import_report rep;
    al_error err = {0};
    al_task_import_options opt = with_format(NULL);
    CHECK(import(&opt, "conll_train.txt", "conll_dev.txt", &t, &rep, &err) == AL_OK);
    if (t) {
        CHECK(t->kind == AL_TASK_TOKEN && strcmp(t->id, "conll2003_ner") == 0 && strcmp(t->metric, "entity_f1") == 0);
        CHECK(t->n_train == 3 && t->n_validation == 1); /* -DOCSTART- and blank lines are not sentences */
        const al_task_example *e = &t->train[0];
        CHECK(e->n_words == 6 && strcmp(e->words[0], "Anna") == 0 && strcmp(e->words[5], ".") == 0 && !e->text);
        /* first-seen order: B-PER O B-LOC B-ORG I-ORG */
        CHECK(t->n_labels == 5 && strcmp(t->label_names[0], "B-PER") == 0 && strcmp(t->label_names[1], "O") == 0 &&
              strcmp(t->label_names[2], "B-LOC") == 0 && strcmp(t->label_names[4], "I-ORG") == 0);
        CHECK(e->word_labels[0] == 0 && e->word_labels[1] == 1 && e->word_labels[2] == 2);
        CHECK(t->train[1].n_words == 5 && t->train[1].word_labels[2] == 4 && t->train[2].n_words == 3);
        CHECK(t->validation[0].n_words == 3 && t->validation[0].word_labels[0] == 2);
    }
    al_task_free(t);

    opt.conll_column = "pos";
    CHECK(import(&opt, "conll_train.txt", "conll_dev.txt", &t, &rep, &err) == AL_OK);
    if (t) {
        CHECK(strcmp(t->id, "conll2003_pos") == 0 && strcmp(t->metric, "token_accuracy") == 0);
        CHECK(strcmp(t->label_names[t->train[0].word_labels[1]], "VBD") == 0);
    }
    al_task_free(t);
    opt.conll_column = "chunk";
    CHECK(import(&opt, "conll_train.txt", "conll_dev.txt", &t, &rep, &err) == AL_OK);
    if (t) CHECK(strcmp(t->label_names[t->train[1].word_labels[1]], "I-NP") == 0);
    al_task_free(t);
    opt.conll_column = "lemma";
    CHECK(import(&opt, "conll_train.txt", "conll_dev.txt", &t, &rep, &err) == AL_ERR_INVALID && has(err.message, "lemma"));

    /* malformed: strict names the line; skip counts the bad sentence once */
    opt = with_format("conll2003");
    CHECK(import(&opt, "conll_bad.txt", "conll_dev.txt", &t, &rep, &err) == AL_ERR_FORMAT && !t);
    CHECK_MSG(has(err.message, "conll_bad.txt: line 8:") && has(err.message, "found 3"), "%s", err.message);
    opt.skip_bad_rows = 1;
    CHECK(import(&opt, "conll_bad.txt", "conll_dev.txt", &t, &rep, &err) == AL_OK);
    CHECK(rep.n_bad == 1 && rep.n_rows == 3 + 1 && t && t->n_train == 3);
    if (t) CHECK(strcmp(t->train[1].words[0], "Rain") == 0);
    al_task_free(t);
    /* a fixed label list makes X-BAD a bad row too */
    static const char *const ner[] = {"O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC", "B-MISC", "I-MISC"};
    opt.labels = ner;
    opt.n_labels = 9;
    CHECK(import(&opt, "conll_bad.txt", "conll_dev.txt", &t, &rep, &err) == AL_OK);
    CHECK(rep.n_bad == 2 && t && t->n_train == 2 && t->n_labels == 9);
    CHECK_MSG(has(rep.messages[1], "conll_bad.txt: line 13:") && has(rep.messages[1], "X-BAD"), "%s", rep.messages[1]);
    if (t) CHECK(t->train[0].word_labels[0] == 1 && strcmp(t->train[1].words[0], "Sun") == 0);
    al_task_free(t);
}

/* ---------------------------------------------------------------- CSV and JSON lines */

static void test_csv(void) {
    al_task *t = NULL;
    al_task_import_report rep;
    al_error err = {0};
    al_task_import_options opt = with_format(NULL); /* detected from .csv */
    opt.text_column = "review";
    opt.validation_fraction = 0.4;
    opt.seed = 7;
    CHECK(import(&opt, "reviews.csv", NULL, &t, &rep, &err) == AL_OK);
    if (t) {
        CHECK(strcmp(t->id, "csv") == 0 && t->n_train + t->n_validation == 5 && t->n_validation == 2);
        /* labels in first-seen order */
        CHECK(t->n_labels == 3 && strcmp(t->label_names[0], "positive") == 0 &&
              strcmp(t->label_names[1], "negative") == 0 && strcmp(t->label_names[2], "neutral") == 0);
        int seen = 0;
        for (int sp = 0; sp < 2; sp++)
            for (int i = 0; i < (sp ? t->n_validation : t->n_train); i++) {
                const al_task_example *e = sp ? &t->validation[i] : &t->train[i];
                if (strcmp(e->text, "Good, solid and cheap.") == 0) seen |= 1;
                if (strcmp(e->text, "She said \"never again\".") == 0) seen |= 2;
                if (strcmp(e->text, "First line\r\nsecond line of the same review") == 0) seen |= 4;
                if (strcmp(e->text, "Plain text without quotes") == 0 && e->label == 0) seen |= 8;
            }
        CHECK_MSG(seen == 15, "seen %d", seen);
    }
    /* the split: same seed, same split; file order kept inside each split */
    al_task *again = NULL;
    CHECK(import(&opt, "reviews.csv", NULL, &again, &rep, &err) == AL_OK);
    if (t && again) CHECK(strcmp(t->hash, again->hash) == 0 && strcmp(t->validation[0].text, again->validation[0].text) == 0);
    al_task_free(again);
    int differs = 0;
    for (uint64_t seed = 8; seed < 12; seed++) {
        opt.seed = seed;
        CHECK(import(&opt, "reviews.csv", NULL, &again, &rep, &err) == AL_OK);
        if (t && again) differs |= strcmp(t->hash, again->hash) != 0;
        al_task_free(again);
    }
    CHECK(differs);
    al_task_free(t);

    /* a fixed label list: neutral is then a bad row */
    static const char *const pn[] = {"negative", "positive"};
    opt.labels = pn;
    opt.n_labels = 2;
    CHECK(import(&opt, "reviews.csv", NULL, &t, &rep, &err) == AL_ERR_FORMAT);
    CHECK_MSG(has(err.message, "reviews.csv: line 8:") && has(err.message, "neutral"), "%s", err.message);
    opt.labels = NULL;
    opt.n_labels = 0;
    opt.label_column = "stars";
    CHECK(import(&opt, "reviews.csv", NULL, &t, &rep, &err) == AL_ERR_FORMAT && has(err.message, "no column 'stars'"));
    CHECK_MSG(has(err.message, "id, review, label"), "%s", err.message);

    /* malformed records, strict then skip; line numbers count the line break inside the quoted field */
    opt = with_format("csv");
    opt.text_column = "review";
    CHECK(import(&opt, "reviews_bad.csv", "reviews.csv", &t, &rep, &err) == AL_ERR_FORMAT && !t);
    CHECK_MSG(has(err.message, "reviews_bad.csv: line 5:") && has(err.message, "found 5"), "%s", err.message);
    opt.skip_bad_rows = 1;
    CHECK(import(&opt, "reviews_bad.csv", "reviews.csv", &t, &rep, &err) == AL_OK);
    CHECK(rep.n_bad == 5 && rep.n_messages == 5 && rep.n_rows == 2 + 5);
    const char *lines[] = {"line 5:", "line 6:", "line 7:", "line 8:", "line 9:"};
    for (int i = 0; i < 5; i++) CHECK_MSG(has(rep.messages[i], lines[i]) && has(rep.messages[i], "reviews_bad.csv"), "%s", rep.messages[i]);
    CHECK(has(rep.messages[1], "quote inside") && has(rep.messages[2], "closing quote") && has(rep.messages[3], "empty label"));
    CHECK(has(rep.messages[4], "never closed"));
    if (t) CHECK(t->n_train == 2 && strcmp(t->train[1].text, "A field that\nspans two lines") == 0);
    al_task_free(t);

    /* a pair task with another delimiter */
    opt = with_format("csv");
    opt.delimiter = ';';
    opt.text_column = "premise";
    opt.text_pair_column = "hypothesis";
    opt.label_column = "gold";
    opt.validation_fraction = 0.5;
    CHECK(import(&opt, "pairs.csv", NULL, &t, &rep, &err) == AL_OK);
    if (t) {
        CHECK(t->n_train == 2 && t->n_validation == 2 && t->train[0].text_pair && t->n_labels == 2);
        CHECK(strcmp(t->label_names[0], "yes") == 0);
    }
    al_task_free(t);
}

static void test_jsonl(void) {
    al_task *t = NULL;
    al_task_import_report rep;
    al_error err = {0};
    al_task_import_options opt = with_format(NULL);
    opt.text_column = "review";
    opt.label_column = "stars";
    opt.validation_fraction = 0.25;
    CHECK(import(&opt, "reviews.jsonl", NULL, &t, &rep, &err) == AL_OK);
    if (t) {
        CHECK(strcmp(t->id, "jsonl") == 0 && t->n_train == 3 && t->n_validation == 1);
        CHECK(t->n_labels == 3 && strcmp(t->label_names[0], "5") == 0 && strcmp(t->label_names[1], "1") == 0 &&
              strcmp(t->label_names[2], "3") == 0);
        int found = 0;
        for (int sp = 0; sp < 2; sp++)
            for (int i = 0; i < (sp ? t->n_validation : t->n_train); i++)
                found |= strcmp((sp ? t->validation : t->train)[i].text, "Great \xc3\xa9" "clair.") == 0;
        CHECK(found);
    }
    al_task_free(t);
    CHECK(import(&opt, "reviews_bad.jsonl", NULL, &t, &rep, &err) == AL_ERR_FORMAT && !t);
    CHECK_MSG(has(err.message, "reviews_bad.jsonl: line 2:") && has(err.message, "stars"), "%s", err.message);
    opt.skip_bad_rows = 1;
    opt.validation_fraction = 0.5;
    CHECK(import(&opt, "reviews_bad.jsonl", NULL, &t, &rep, &err) == AL_OK);
    CHECK(rep.n_bad == 7 && rep.n_rows == 2 && rep.n_messages == AL_TASK_REPORT_MESSAGES);
    CHECK_MSG(has(rep.messages[3], "line 5:") && has(rep.messages[3], "u0000"), "%s", rep.messages[3]);
    if (t) CHECK(t->n_labels == 2 && strcmp(t->label_names[1], "true") == 0);
    al_task_free(t);
}

/* ---------------------------------------------------------------- attnlab task files, hash */

static void test_task_files(void) {
    al_task *t = NULL, *u = NULL;
    al_error err = {0};
    size_t len = 0;
    char *data = slurp("task_seq.jsonl", &len);
    CHECK(al_task_load_jsonl(data, len, "task_seq.jsonl", &t, &err) == AL_OK);
    if (!t) {
        free(data);
        return;
    }
    CHECK(strcmp(t->id, "toy_agreement") == 0 && t->n_train == 3 && t->n_validation == 2);
    CHECK(t->train[0].group == 1 && t->train[1].group == 0 && t->validation[1].group == AL_TASK_NO_GROUP);
    CHECK(label_of(t, &t->validation[0], "plural") && has(t->validation[0].text, "[MASK]"));

    /* the hash: stable, independent of the id, sensitive to one label */
    char h0[65];
    memcpy(h0, t->hash, 65);
    al_task_hash(t, t->hash);
    CHECK(strcmp(h0, t->hash) == 0);
    char *copy = malloc(len + 1);
    memcpy(copy, data, len + 1);
    char *id = strstr(copy, "toy_agreement");
    memcpy(id, "toy_agreemenX", 13);
    CHECK(al_task_load_jsonl(copy, len, "renamed.jsonl", &u, &err) == AL_OK && u && strcmp(u->hash, h0) == 0);
    al_task_free(u);
    memcpy(copy, data, len + 1);
    char *dogs = strstr(copy, "\"plural\", \"group\": 0"); /* the second example's label */
    CHECK(dogs != NULL);
    {
        /* rebuild the file with that one label changed */
        size_t pre = (size_t)(dogs - copy);
        char *changed = malloc(len + 16);
        memcpy(changed, copy, pre);
        int w = sprintf(changed + pre, "\"singular\"");
        memcpy(changed + pre + w, dogs + 8, len - pre - 8 + 1);
        CHECK(al_task_load_jsonl(changed, strlen(changed), "changed.jsonl", &u, &err) == AL_OK);
        if (u) CHECK(strcmp(u->hash, h0) != 0 && u->train[1].label == 0);
        al_task_free(u);
        free(changed);
    }
    /* a wrong sha256 in the header is refused */
    memcpy(copy, data, len + 1);
    char *brace = strchr(copy, '}');
    {
        size_t pre = (size_t)(brace - copy);
        char *withsha = malloc(len + 128);
        memcpy(withsha, copy, pre);
        int w = sprintf(withsha + pre, ", \"sha256\": \"%s\"", "0000000000000000000000000000000000000000000000000000000000000000");
        memcpy(withsha + pre + w, brace, len - pre + 1);
        CHECK(al_task_load_jsonl(withsha, strlen(withsha), "sha.jsonl", &u, &err) == AL_ERR_FORMAT && !u);
        CHECK_MSG(has(err.message, "sha.jsonl") && has(err.message, "sha256"), "%s", err.message);
        /* and the right one accepted */
        sprintf(withsha + pre, ", \"sha256\": \"%s\"", h0);
        memcpy(withsha + pre + w, brace, len - pre + 1);
        CHECK(al_task_load_jsonl(withsha, strlen(withsha), "sha.jsonl", &u, &err) == AL_OK && u);
        al_task_free(u);
        free(withsha);
    }
    free(copy);

    /* written and read back: same content, same hash; the loader keeps no pointer into the buffer */
    char *out = NULL;
    size_t out_len = 0;
    CHECK(al_task_write_jsonl(t, &out, &out_len, &err) == AL_OK && out && out_len == strlen(out));
    CHECK(al_task_load_jsonl(out, out_len, "written.jsonl", &u, &err) == AL_OK);
    memset(out, 'x', out_len);
    free(out);
    memset(data, 'y', len);
    if (u) {
        CHECK(strcmp(u->hash, h0) == 0 && strcmp(u->id, t->id) == 0 && strcmp(u->metric, "accuracy") == 0);
        CHECK(strcmp(u->train[0].text, "The key to the cabinets [MASK] on the table .") == 0 && u->train[0].group == 1);
    }
    al_task_free(u);
    al_task_free(t);
    free(data);

    /* pairs and token tasks */
    data = slurp("task_pair.jsonl", &len);
    CHECK(al_task_load_jsonl(data, len, "task_pair.jsonl", &t, &err) == AL_OK);
    if (t) CHECK(strcmp(t->validation[1].text_pair, "a domesticated carnivorous mammal") == 0 && t->validation[1].label == 0);
    char *written = NULL;
    size_t wlen = 0;
    if (t) CHECK(al_task_write_jsonl(t, &written, &wlen, &err) == AL_OK);
    if (written) {
        CHECK(al_task_load_jsonl(written, wlen, "w.jsonl", &u, &err) == AL_OK && u && strcmp(u->hash, t->hash) == 0);
        al_task_free(u);
    }
    free(written);
    al_task_free(t);
    free(data);
    data = slurp("task_token.jsonl", &len);
    CHECK(al_task_load_jsonl(data, len, "task_token.jsonl", &t, &err) == AL_OK);
    if (t) {
        CHECK(t->kind == AL_TASK_TOKEN && t->train[0].n_words == 4 && t->train[0].word_labels[2] == 2);
        CHECK(strcmp(t->metric, "token_accuracy") == 0 && t->validation[0].label == -1);
        written = NULL;
        CHECK(al_task_write_jsonl(t, &written, &wlen, &err) == AL_OK);
        if (written) {
            CHECK(al_task_load_jsonl(written, wlen, "w.jsonl", &u, &err) == AL_OK && u && strcmp(u->hash, t->hash) == 0);
            al_task_free(u);
        }
        free(written);
    }
    al_task_free(t);
    free(data);

    /* malformed rows through the importer, strict and skipping */
    al_task_import_options opt = with_format(NULL); /* detected: attnlab */
    al_task_import_report rep;
    CHECK(import(&opt, "task_bad.jsonl", NULL, &t, &rep, &err) == AL_ERR_FORMAT && !t);
    CHECK_MSG(has(err.message, "task_bad.jsonl: line 3:") && has(err.message, "split"), "%s", err.message);
    opt.skip_bad_rows = 1;
    CHECK(import(&opt, "task_bad.jsonl", NULL, &t, &rep, &err) == AL_OK);
    CHECK(rep.n_bad == 5 && rep.n_rows == 2 && t && t->n_train == 1 && t->n_validation == 1);
    CHECK_MSG(has(rep.messages[1], "line 4:") && has(rep.messages[1], "maybe"), "%s", rep.messages[1]);
    CHECK(has(rep.messages[2], "line 5:") && has(rep.messages[3], "line 6:") && has(rep.messages[4], "line 7:"));
    al_task_free(t);
    CHECK(import(&opt, "task_seq.jsonl", "task_seq.jsonl", &t, &rep, &err) == AL_ERR_INVALID && has(err.message, "alone"));

    /* header errors */
    const char *bad_headers[] = {
        "{\"task\": \"x\", \"kind\": \"words\", \"labels\": [\"a\"], \"metric\": \"accuracy\"}\n",
        "{\"task\": \"x\", \"kind\": \"sequence\", \"labels\": [], \"metric\": \"accuracy\"}\n",
        "{\"task\": \"x\", \"kind\": \"sequence\", \"labels\": [\"a\", \"a\"], \"metric\": \"accuracy\"}\n",
        "{\"task\": \"x\", \"kind\": \"sequence\", \"labels\": [\"a\"], \"metric\": \"bleu\"}\n",
        "{\"task\": \"../x\", \"kind\": \"sequence\", \"labels\": [\"a\"], \"metric\": \"accuracy\"}\n",
        "[1, 2]\n",
        "",
    };
    for (int i = 0; i < 7; i++) {
        CHECK_MSG(al_task_load_jsonl(bad_headers[i], strlen(bad_headers[i]), "h.jsonl", &t, &err) != AL_OK && !t, "%d", i);
        CHECK_MSG(has(err.message, "h.jsonl"), "%d: %s", i, err.message);
    }
    /* a file with rows of only one split */
    const char *one = "{\"task\": \"x\", \"kind\": \"sequence\", \"labels\": [\"a\"], \"metric\": \"accuracy\"}\n"
                      "{\"split\": \"train\", \"text\": \"t\", \"label\": \"a\"}\n";
    CHECK(al_task_load_jsonl(one, strlen(one), "one.jsonl", &t, &err) == AL_ERR_FORMAT && has(err.message, "no validation"));
}

/* ---------------------------------------------------------------- the split of one file */

static void test_split(void) {
    /* 8 rows of a CSV made here; 25% held out -> 2 */
    const char *csv = "text,label\na,x\nb,y\nc,x\nd,y\ne,x\nf,y\ng,x\nh,y\n";
    al_task_import_options opt = with_format("csv");
    opt.validation_fraction = 0.25;
    opt.seed = 3;
    al_task *t = NULL, *u = NULL;
    al_error err = {0};
    CHECK(al_task_import(&opt, "eight.csv", csv, strlen(csv), NULL, NULL, 0, &t, NULL, &err) == AL_OK);
    CHECK(al_task_import(&opt, "eight.csv", csv, strlen(csv), NULL, NULL, 0, &u, NULL, &err) == AL_OK);
    if (t && u) {
        CHECK(t->n_train == 6 && t->n_validation == 2);
        CHECK(strcmp(t->validation[0].text, u->validation[0].text) == 0 && strcmp(t->validation[1].text, u->validation[1].text) == 0);
        CHECK(strcmp(t->validation[0].text, t->validation[1].text) < 0); /* file order */
        for (int i = 1; i < t->n_train; i++) CHECK(strcmp(t->train[i - 1].text, t->train[i].text) < 0);
    }
    al_task_free(t);
    al_task_free(u);
    opt.validation_fraction = 1.0;
    CHECK(al_task_import(&opt, "eight.csv", csv, strlen(csv), NULL, NULL, 0, &t, NULL, &err) == AL_ERR_INVALID);
    opt.validation_fraction = 0.001; /* at least one held out */
    CHECK(al_task_import(&opt, "eight.csv", csv, strlen(csv), NULL, NULL, 0, &t, NULL, &err) == AL_OK && t &&
          t->n_validation == 1);
    al_task_free(t);
    const char *single = "text,label\nonly,x\n";
    opt.validation_fraction = 0.5;
    CHECK(al_task_import(&opt, "one.csv", single, strlen(single), NULL, NULL, 0, &t, NULL, &err) == AL_ERR_INVALID);
    CHECK_MSG(has(err.message, "cannot be split"), "%s", err.message);
    /* labels first-seen across train then validation */
    const char *tr = "text,label\na,red\nb,green\n", *va = "text,label\nc,blue\nd,red\n";
    CHECK(al_task_import(&opt, "tr.csv", tr, strlen(tr), "va.csv", va, strlen(va), &t, NULL, &err) == AL_OK);
    if (t) CHECK(t->n_labels == 3 && strcmp(t->label_names[2], "blue") == 0 && t->validation[1].label == 0);
    al_task_free(t);
    /* detection failures and unknown formats */
    const char *odd = "just some words\n";
    CHECK(al_task_import(NULL, "odd.txt", odd, strlen(odd), NULL, NULL, 0, &t, NULL, &err) == AL_ERR_FORMAT);
    CHECK_MSG(has(err.message, "odd.txt") && has(err.message, "cannot tell"), "%s", err.message);
    opt.format = "parquet";
    CHECK(al_task_import(&opt, "x", csv, strlen(csv), NULL, NULL, 0, &t, NULL, &err) == AL_ERR_INVALID);
}

/* ---------------------------------------------------------------- built-in tasks */

/* a token example's words joined by spaces (agreement: the sentence with its [MASK]) */
static int words_equal(const al_task_example *e, const char *text) {
    size_t at = 0, n = strlen(text);
    for (int w = 0; w < e->n_words; w++) {
        size_t k = strlen(e->words[w]);
        if (w && (at >= n || text[at++] != ' ')) return 0;
        if (at + k > n || memcmp(text + at, e->words[w], k) != 0) return 0;
        at += k;
    }
    return e->n_words > 0 && at == n;
}

static const al_task_example *find_text(const al_task *t, const char *text) {
    for (int sp = 0; sp < 2; sp++)
        for (int i = 0; i < (sp ? t->n_validation : t->n_train); i++) {
            const al_task_example *e = sp ? &t->validation[i] : &t->train[i];
            if (e->text ? strcmp(e->text, text) == 0 : words_equal(e, text)) return e;
        }
    return NULL;
}

/* the example's one label: a sequence label, or the label of a token example's only labelled word
 * (agreement labels the [MASK] alone); -2 when a token example has not exactly one */
static int single_label(const al_task_example *e) {
    if (e->n_words == 0) return e->label;
    int found = -2, n = 0;
    for (int w = 0; w < e->n_words; w++)
        if (e->word_labels[w] != AL_TASK_NO_LABEL) found = e->word_labels[w], n++;
    return n == 1 ? found : -2;
}

static void count_labels(const al_task_example *ex, int n, int *counts) {
    counts[0] = counts[1] = 0;
    for (int i = 0; i < n; i++) {
        const int label = single_label(&ex[i]);
        CHECK(label == 0 || label == 1);
        if (label == 0 || label == 1) counts[label]++;
    }
}

static void check_mask_token(const al_task *agreement) {
    const char *names[] = {"vocab.txt", "tokenizer_config.json", "special_tokens_map.json"};
    al_fileset *fs = al_fileset_new();
    al_error err = {0};
    for (int i = 0; i < 3; i++) {
        char path[256], *data = NULL;
        size_t len = 0;
        snprintf(path, sizeof path, "models/attnlab-mini-bert/%s", names[i]);
        if (al_read_file(path, &data, &len, &err) == AL_OK) al_fileset_add(fs, names[i], data, len, 1, &err);
        free(data);
    }
    al_tokenizer *tok = NULL;
    CHECK(al_tokenizer_load(fs, &tok, &err) == AL_OK);
    if (tok) {
        int mask = al_tokenizer_special_ids(tok).mask;
        CHECK(mask >= 0);
        for (int i = 0; i < 50 && i < agreement->n_validation; i++) {
            al_encoding enc = {0};
            al_encode_options o = al_encode_default_options();
            const al_task_example *e = &agreement->validation[i];
            CHECK(al_tokenizer_encode_words(tok, e->words, e->n_words, &o, &enc, &err) == AL_OK);
            int n_mask = 0, at_label = 0;
            for (int k = 0; k < enc.length; k++) {
                n_mask += enc.ids[k] == mask;
                /* the [MASK] is the labelled word: its only sub-token is the mask id */
                if (enc.ids[k] == mask && enc.word_ids && enc.word_ids[k] >= 0 && enc.word_ids[k] < e->n_words)
                    at_label += e->word_labels[enc.word_ids[k]] != AL_TASK_NO_LABEL;
            }
            CHECK_MSG(n_mask == 1 && at_label == 1, "agreement validation %d: %d masks, %d labelled", i, n_mask, at_label);
            al_encoding_free(&enc);
        }
    }
    al_tokenizer_free(tok);
    al_fileset_free(fs);
}

/* order (docs/tasks.md): labels in_order / swapped; every (A, B) pair of a split occurs once in each order, with
 * in_order exactly when (A, B) is the pair's document order; every split's first 10k examples are whole runs,
 * so the balance holds for any such prefix; no validation sentence occurs in training. */
static int same_pair(const al_task_example *a, const al_task_example *b) {
    return !strcmp(a->text, b->text_pair) && !strcmp(a->text_pair, b->text);
}
static void check_order_split(const al_task *t, const al_task_example *ex, int n) {
    int counts[2] = {0, 0}, unmatched = 0;
    for (int i = 0; i < n; i++) {
        CHECK(ex[i].text_pair && ex[i].label >= 0 && ex[i].label < 2 && strcmp(ex[i].text, ex[i].text_pair));
        counts[ex[i].label]++;
        /* the partner (the same two sentences the other way round, the other label) is in the same run of 10 */
        int found = 0;
        for (int j = i / 10 * 10; j < i / 10 * 10 + 10 && j < n; j++)
            found += same_pair(&ex[i], &ex[j]) && ex[j].label == 1 - ex[i].label;
        unmatched += found != 1;
        if (i % 10 == 9) CHECK_MSG(counts[0] == counts[1], "%s: prefix of %d examples unbalanced", t->id, i + 1);
    }
    CHECK_MSG(unmatched == 0, "%s: %d examples without their swapped partner", t->id, unmatched);
    CHECK(counts[0] == counts[1]);
}
static void check_order(const al_task *t) {
    CHECK(t->kind == AL_TASK_SEQUENCE && !strcmp(t->label_names[0], "in_order") && !strcmp(t->label_names[1], "swapped"));
    check_order_split(t, t->train, t->n_train);
    check_order_split(t, t->validation, t->n_validation);
    int shared = 0;
    for (int i = 0; i < t->n_validation; i += 7) /* a sample: no held-out sentence in the training pairs */
        for (int j = 0; j < t->n_train; j++) shared += !strcmp(t->validation[i].text, t->train[j].text);
    CHECK(shared == 0);
    /* a pair read by hand from brown_pos.jsonl (doc cc12, sentences 72 and 73) */
    const al_task_example *e =
        find_text(t, "In a sense , he is offering Bonn what its famous son ( who left as a youth ) never did -- the sound "
                     "of the composer's mature style .");
    int ok = 0;
    for (int i = 0; e && i < t->n_train; i++)
        ok += !strcmp(t->train[i].text, e->text) &&
              !strncmp(t->train[i].text_pair, "Robert Riefling , who gave the only piano recital", 49) &&
              t->train[i].label == 0;
    CHECK(ok == 1);
}

static int test_builtin(void) {
    al_task *t = NULL;
    al_error err = {0};
    char path[256];
    snprintf(path, sizeof path, BUILTIN "/pos.jsonl");
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    fclose(f);
    static const int sizes[4][2] = {{3000, 1000}, {3000, 800}, {3000, 1000}, {3000, 1000}};
    for (int k = 0; al_task_builtins[k].id; k++) {
        CHECK_MSG(al_task_load_builtin(BUILTIN, al_task_builtins[k].id, &t, &err) == AL_OK, "%s", err.message);
        if (!t) continue;
        CHECK(strcmp(t->id, al_task_builtins[k].id) == 0);
        CHECK_MSG(t->n_train == sizes[k][0] && t->n_validation == sizes[k][1], "%s %d %d", t->id, t->n_train, t->n_validation);
        printf("task %-10s train %d validation %d labels %d metric %s sha256 %s\n", t->id, t->n_train,
               t->n_validation, t->n_labels, t->metric, t->hash);
        if (k == 0) {
            static const char *const tags[] = {"ADJ", "ADP", "ADV", "CONJ", "DET", "NOUN", "NUM", "PRON", "PRT", "PUNCT", "VERB", "X"};
            CHECK(t->kind == AL_TASK_TOKEN && t->n_labels == 12 && strcmp(t->metric, "token_accuracy") == 0);
            for (int i = 0; i < 12 && i < t->n_labels; i++) CHECK(strcmp(t->label_names[i], tags[i]) == 0);
        } else {
            int c[2];
            count_labels(t->train, t->n_train, c);
            CHECK(t->n_labels == 2 && c[0] == c[1]);
            count_labels(t->validation, t->n_validation, c);
            CHECK(c[0] == c[1]);
        }
        if (k == 1) {
            /* attractor counts checked by hand: nouns heading the prepositional phrases between the
             * subject and the verb whose number differs from the subject's */
            static const struct { const char *text; const char *label; int group; } hand[] = {
                {"The colts in Simpson's stable [MASK] little if anything on the fillies , especially the pacers .", "plural", 1},
                {"No comparable reductions in the cost of nuclide radiation [MASK] foreseen .", "plural", 2},
                {"The reaction of certain City Council members to California's newest anti-secrecy laws [MASK] as "
                 "dismaying as it was disappointing .", "singular", 2},
                {"The calibration of piezoelectric sensors in terms of the particle parameters [MASK] very uncertain .", "singular", 3},
                {"Some companies [MASK] a little imagination helpful .", "plural", 0},
                {"Other basement windows should be blocked when an emergency [MASK] .", "singular", 0},
            };
            for (size_t i = 0; i < sizeof hand / sizeof hand[0]; i++) {
                const al_task_example *e = find_text(t, hand[i].text);
                const int label = e ? single_label(e) : -2;
                CHECK_MSG(e && label >= 0 && strcmp(t->label_names[label], hand[i].label) == 0 && e->group == hand[i].group,
                          "%s", hand[i].text);
            }
            int max_group = 0;
            for (int i = 0; i < t->n_train; i++) max_group = t->train[i].group > max_group ? t->train[i].group : max_group;
            CHECK(max_group >= 2);
            check_mask_token(t);
        }
        if (k == 2)
            for (int i = 0; i < t->n_train; i++) CHECK(t->train[i].text_pair && !strchr(t->train[i].text, ' '));
        if (k == 3) check_order(t);
        al_task_free(t);
    }
    CHECK(al_task_load_builtin(BUILTIN, "../pos", &t, &err) == AL_ERR_INVALID);
    CHECK(al_task_load_builtin(BUILTIN, "nonexistent", &t, &err) == AL_ERR_IO && has(err.message, "nonexistent"));
    return 1;
}

/* ---------------------------------------------------------------- fuzz */

static void test_fuzz(void) {
    const char *files[] = {"cola_bad.tsv", "mnli_train.tsv", "mrpc_train.tsv", "conll_bad.txt", "reviews_bad.csv",
                           "reviews.csv", "reviews_bad.jsonl", "task_bad.jsonl", "task_token.jsonl"};
    al_status (*fns[])(const uint8_t *, size_t) = {al_task_fuzz_glue, al_task_fuzz_glue, al_task_fuzz_glue,
                                                    al_task_fuzz_conll, al_task_fuzz_csv, al_task_fuzz_csv,
                                                    al_task_fuzz_jsonl, al_task_fuzz_attnlab, al_task_fuzz_attnlab};
    static const char alphabet[] = "\t\n\r\",;{}[]:\\u0\xc3\xa9\xff ";
    al_rng rng;
    al_rng_seed(&rng, 2024);
    int runs = 0;
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        size_t len = 0;
        char *orig = slurp(files[k], &len);
        if (!orig) continue;
        uint8_t *buf = malloc(len + 64);
        for (int it = 0; it < 60; it++) {
            memcpy(buf, orig, len);
            size_t n = len;
            int edits = 1 + (int)al_rng_below(&rng, 6);
            for (int e = 0; e < edits && n; e++) {
                size_t at = al_rng_below(&rng, (uint32_t)n);
                switch (al_rng_below(&rng, 4)) {
                case 0: buf[at] = (uint8_t)alphabet[al_rng_below(&rng, sizeof alphabet - 1)]; break;
                case 1: buf[at] = (uint8_t)al_rng_u32(&rng); break;
                case 2: n = at; break; /* truncate */
                default: /* insert */
                    if (n < len + 60) {
                        memmove(buf + at + 1, buf + at, n - at);
                        buf[at] = (uint8_t)alphabet[al_rng_below(&rng, sizeof alphabet - 1)];
                        n++;
                    }
                }
            }
            al_status st = fns[k](buf, n);
            CHECK(st >= AL_OK && st <= AL_ERR_CANCELLED);
            runs++;
        }
        free(buf);
        free(orig);
    }
    CHECK(runs == 60 * 9);
    CHECK(al_task_fuzz_csv(NULL, 0) != AL_OK && al_task_fuzz_jsonl((const uint8_t *)"", 0) != AL_OK);
}

/* token tasks may label some words only (null: context); the agreement task labels its [MASK] alone */
static void test_unlabelled_words(void) {
    const char *file =
        "{\"task\":\"toy_mask\",\"kind\":\"token\",\"labels\":[\"singular\",\"plural\"],\"metric\":\"token_accuracy\"}\n"
        "{\"split\":\"train\",\"words\":[\"The\",\"dogs\",\"[MASK]\",\"here\"],\"word_labels\":[null,null,\"plural\",null],\"group\":0}\n"
        "{\"split\":\"validation\",\"words\":[\"A\",\"cat\",\"[MASK]\"],\"word_labels\":[null,null,\"singular\"]}\n";
    al_task *t = NULL, *back = NULL;
    al_error err = {0};
    CHECK_MSG(al_task_load_jsonl(file, strlen(file), "mask.jsonl", &t, &err) == AL_OK, "%s", err.message);
    if (!t) return;
    CHECK(t->train[0].word_labels[0] == AL_TASK_NO_LABEL && t->train[0].word_labels[2] == 1);
    CHECK(t->validation[0].word_labels[2] == 0 && single_label(&t->validation[0]) == 0);
    char *out = NULL;
    size_t len = 0;
    CHECK(al_task_write_jsonl(t, &out, &len, &err) == AL_OK);
    CHECK(out && has(out, "[null,null,\"plural\",null]"));
    /* written with its hash, read back to the same hash */
    CHECK_MSG(out && al_task_load_jsonl(out, len, "back.jsonl", &back, &err) == AL_OK, "%s", err.message);
    CHECK(back && strcmp(back->hash, t->hash) == 0);
    /* the null is part of the content: labelling one more word changes the hash */
    const char *more =
        "{\"task\":\"toy_mask\",\"kind\":\"token\",\"labels\":[\"singular\",\"plural\"],\"metric\":\"token_accuracy\"}\n"
        "{\"split\":\"train\",\"words\":[\"The\",\"dogs\",\"[MASK]\",\"here\"],\"word_labels\":[null,\"plural\",\"plural\",null],\"group\":0}\n"
        "{\"split\":\"validation\",\"words\":[\"A\",\"cat\",\"[MASK]\"],\"word_labels\":[null,null,\"singular\"]}\n";
    al_task *t2 = NULL;
    CHECK(al_task_load_jsonl(more, strlen(more), "more.jsonl", &t2, &err) == AL_OK);
    CHECK(t2 && strcmp(t2->hash, t->hash) != 0);
    al_task_free(t2);
    al_task_free(back);
    al_task_free(t);
    free(out);
    /* a row with no labelled word teaches nothing: refused with its line */
    const char *none =
        "{\"task\":\"toy_mask\",\"kind\":\"token\",\"labels\":[\"singular\",\"plural\"],\"metric\":\"token_accuracy\"}\n"
        "{\"split\":\"train\",\"words\":[\"The\",\"dogs\"],\"word_labels\":[null,null]}\n";
    CHECK(al_task_load_jsonl(none, strlen(none), "none.jsonl", &t, &err) != AL_OK);
    CHECK_MSG(has(err.message, "none.jsonl") && has(err.message, "line 2") && has(err.message, "all null"), "%s", err.message);
    const char *num =
        "{\"task\":\"toy_mask\",\"kind\":\"token\",\"labels\":[\"singular\",\"plural\"],\"metric\":\"token_accuracy\"}\n"
        "{\"split\":\"train\",\"words\":[\"The\",\"dogs\"],\"word_labels\":[null,1]}\n";
    CHECK(al_task_load_jsonl(num, strlen(num), "num.jsonl", &t, &err) != AL_OK);
    CHECK_MSG(has(err.message, "word_labels[1]"), "%s", err.message);
}

/* docs/tasks.md, "Importing": messages that name the file, the column and the byte a reader looks for. */
static void test_import_messages(void) {
    al_task *t = NULL;
    al_task_import_report rep;
    al_error err = {0};
    al_task_import_options opt = with_format("conll2003");
    const char *train = "EU NNP B-NP B-ORG\nrejects VBZ B-VP O\n\n";
    /* an empty validation file, the format forced: the file is named, not "import" */
    CHECK(al_task_import(&opt, "train.conll", train, strlen(train), "dev.conll", "", 0, &t, &rep, &err) == AL_ERR_FORMAT);
    CHECK_MSG(has(err.message, "dev.conll: no validation examples"), "%s", err.message);
    CHECK(al_task_import(&opt, "train.conll", "", 0, "dev.conll", train, strlen(train), &t, &rep, &err) == AL_ERR_FORMAT);
    CHECK_MSG(has(err.message, "train.conll: no train examples"), "%s", err.message);
    /* one empty file, the format forced, validation split off it: still the file, not "0 example(s)" */
    CHECK(al_task_import(&opt, "empty.conll", "", 0, NULL, NULL, 0, &t, &rep, &err) == AL_ERR_FORMAT);
    CHECK_MSG(has(err.message, "empty.conll: no train examples"), "%s", err.message);
    const char *one = "EU NNP B-NP B-ORG\n\n";
    CHECK(al_task_import(&opt, "one.conll", one, strlen(one), NULL, NULL, 0, &t, &rep, &err) != AL_OK);
    CHECK_MSG(has(err.message, "one.conll:") && has(err.message, "1 example(s) cannot be split"), "%s", err.message);
    /* a Latin-1 e-acute (0xE9) in the NER column: the column is named and the byte is the lead byte (the
     * field's byte 1), not the one after it */
    const char *latin1 = "EU NNP B-NP B-ORG\ncaf\xe9 NN I-NP B\xe9-LOC\n\n";
    CHECK(al_task_import(&opt, "latin1.conll", latin1, strlen(latin1), "dev.conll", train, strlen(train), &t, &rep,
                         &err) == AL_ERR_FORMAT);
    CHECK_MSG(has(err.message, "latin1.conll: line 2:") && has(err.message, "column 1 (word)") &&
              has(err.message, "at byte 3 of the field (0xE9)"), "%s", err.message);
    const char *tag = "EU NNP B-NP B\xe9-LOC\n\n";
    CHECK(al_task_import(&opt, "tag.conll", tag, strlen(tag), "dev.conll", train, strlen(train), &t, &rep, &err) ==
          AL_ERR_FORMAT);
    CHECK_MSG(has(err.message, "column 4 (NER)") && has(err.message, "at byte 1 of the field (0xE9)"), "%s", err.message);
    /* the same in a CSV field: the lead byte, with its value */
    opt = with_format("csv");
    opt.text_column = "text";
    opt.label_column = "label";
    const char *csv = "text,label\nna\xefve x,pos\ngood,neg\n";
    CHECK(al_task_import(&opt, "r.csv", csv, strlen(csv), "d.csv", csv, 0, &t, &rep, &err) != AL_OK);
    const char *csv2 = "text,label\ngood,pos\n";
    CHECK(al_task_import(&opt, "r.csv", csv, strlen(csv), "d.csv", csv2, strlen(csv2), &t, &rep, &err) == AL_ERR_FORMAT);
    CHECK_MSG(has(err.message, "r.csv: line 2:") && has(err.message, "at byte 2 of the field (0xEF)"), "%s", err.message);
    /* attnlab's task file (JSONL): the byte is counted in the line, and said so */
    const char *jsonl = "{\"task\":\"t\",\"kind\":\"sequence\",\"labels\":[\"a\",\"b\"],\"metric\":\"accuracy\"}\n"
                        "{\"split\":\"train\",\"text\":\"caf\xe9 x\",\"label\":\"a\"}\n";
    CHECK(al_task_load_jsonl(jsonl, strlen(jsonl), "t.jsonl", &t, &err) == AL_ERR_FORMAT);
    CHECK_MSG(has(err.message, "t.jsonl: line 2:") && has(err.message, "at byte 28 of the line (0xE9)"), "%s",
              err.message);
    al_task_free(t);
}

int main(void) {
    test_sha256();
    test_import_messages();
    test_glue();
    test_conll();
    test_csv();
    test_jsonl();
    test_task_files();
    test_split();
    test_unlabelled_words();
    if (!test_builtin()) printf("skipped: the built-in tasks (%s is absent: run scripts/build_tasks.py)\n", BUILTIN);
    test_fuzz();
    return check_summary("tasks");
}
