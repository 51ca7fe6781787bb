/* fuzz_vocab_learn.c: vocabulary learning (al_vocab_learn) on any text. Byte 0 sets vocab_size (5..260), byte 1
 * min_frequency (1..4) and alphabet_limit (1..64); the rest is the text. Promises: an error has a message; a
 * learned vocabulary starts with the 5 specials, then the alphabet alone and with "##", then merged pieces, and
 * has no more than vocab_size lines unless the alphabet alone exceeds it (as in Hugging Face's trainer); no empty
 * or repeated line, valid UTF-8 on every line, the same bytes on a second run (texts up to 512 bytes), and it
 * loads as a vocab.txt whose tokenizer keeps fuzz_encode_probe's promises. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    al_vocab_learn_options o = al_vocab_learn_default_options();
    o.vocab_size = 5 + data[0];
    o.min_frequency = 1 + (data[1] & 3);
    o.alphabet_limit = 1 + (data[1] >> 2);
    const char *text = (const char *)data + 2;
    size_t len = size - 2;
    char *vocab = NULL, *again = NULL;
    size_t vlen = 0, alen = 0;
    al_vocab_learn_stats stats;
    al_error err;
    memset(&err, 0, sizeof err);
    al_status st = al_vocab_learn(text, len, &o, &vocab, &vlen, &stats, &err);
    if (st != AL_OK) {
        fuzz_check_error(st, &err, NULL);
        return 0;
    }
    FUZZ_REQUIRE(vocab && vlen == strlen(vocab), "vocabulary length %zu", vlen);
    static const char *const specials[5] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
    int lines = 0;
    const char *line_start[300];
    size_t line_len[300];
    for (const char *p = vocab; *p;) {
        const char *nl = strchr(p, '\n');
        FUZZ_REQUIRE(nl != NULL, "last line without a newline");
        size_t l = (size_t)(nl - p);
        FUZZ_REQUIRE(l > 0, "empty line %d", lines + 1);
        FUZZ_REQUIRE(fuzz_utf8_valid(p, l), "line %d is not UTF-8", lines + 1);
        FUZZ_REQUIRE(lines < 300, "more than 300 lines for vocab_size %d", o.vocab_size);
        if (lines < 5) FUZZ_REQUIRE(l == strlen(specials[lines]) && !memcmp(p, specials[lines], l), "special %d", lines);
        for (int k = 0; k < lines; k++)
            FUZZ_REQUIRE(line_len[k] != l || memcmp(line_start[k], p, l), "line %d repeats line %d", lines + 1, k + 1);
        line_start[lines] = p, line_len[lines] = l;
        lines++;
        p = nl + 1;
    }
    /* specials, each alphabet character alone and with "##", then one line per merge that made a new string */
    const int base = 5 + 2 * stats.n_alphabet;
    FUZZ_REQUIRE(lines >= base && lines <= base + stats.n_merges, "%d lines, alphabet %d, merges %d", lines,
                 stats.n_alphabet, stats.n_merges);
    FUZZ_REQUIRE(lines <= o.vocab_size || stats.n_merges == 0, "%d lines for vocab_size %d after %d merges", lines,
                 o.vocab_size, stats.n_merges);
    FUZZ_REQUIRE(stats.n_alphabet <= o.alphabet_limit && stats.n_lines_skipped >= 0 && stats.n_words >= 0,
                 "stats");
    if (len <= 512) /* deterministic (checked on short texts: learning is the slow part) */
        FUZZ_REQUIRE(al_vocab_learn(text, len, &o, &again, &alen, NULL, &err) == AL_OK && alen == vlen &&
                         !memcmp(again, vocab, vlen),
                     "a second run differs");
    const char *names[1] = {"vocab.txt"};
    const uint8_t *datas[1] = {(const uint8_t *)vocab};
    al_tokenizer *tok = fuzz_load_tokenizer(names, datas, &vlen, 1, "vocab.txt");
    FUZZ_REQUIRE(tok != NULL, "the learned vocabulary does not load");
    fuzz_encode_probe(tok);
    al_tokenizer_free(tok);
    free(vocab);
    free(again);
    return 0;
}
