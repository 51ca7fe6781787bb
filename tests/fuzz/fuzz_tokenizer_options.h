/* fuzz_tokenizer_options.h: one option file (tokenizer_config.json or special_tokens_map.json) over two fixed,
 * valid vocabularies: a WordPiece vocab.txt and the byte-level BPE of tests/fixtures/tokenizers/bpe_small.
 * Promises: an error names the option file; an accepted one gives a tokenizer that keeps fuzz_encode_probe's
 * promises. */
#ifndef AL_FUZZ_TOKENIZER_OPTIONS_H
#define AL_FUZZ_TOKENIZER_OPTIONS_H

#include "fuzz_common.h"

static const char fuzz_wordpiece_vocab[] =
    "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n<s>\n</s>\na\n##a\nb\n##b\nab\n##ab\ne\n##e\n.\n,\n!\nthe\n##s\ncat\nsat\n"
    "on\nmat\nhello\nworld\nna\n##ive\n你\n好\n";

static inline void fuzz_option_file(const char *option_file, const uint8_t *data, size_t size) {
    static uint8_t *bpe_vocab, *bpe_merges;
    static size_t bpe_vocab_size, bpe_merges_size;
    if (!bpe_vocab) {
        bpe_vocab = fuzz_read_repo_file("tests/fixtures/tokenizers/bpe_small/vocab.json", &bpe_vocab_size);
        bpe_merges = fuzz_read_repo_file("tests/fixtures/tokenizers/bpe_small/merges.txt", &bpe_merges_size);
    }
    for (int kind = 0; kind < 2; kind++) {
        const char *names[3] = {"vocab.txt", option_file, NULL};
        const uint8_t *datas[3] = {(const uint8_t *)fuzz_wordpiece_vocab, data, NULL};
        size_t sizes[3] = {sizeof fuzz_wordpiece_vocab - 1, size, 0};
        if (kind == 1) {
            names[0] = "vocab.json", datas[0] = bpe_vocab, sizes[0] = bpe_vocab_size;
            names[2] = "merges.txt", datas[2] = bpe_merges, sizes[2] = bpe_merges_size;
        }
        al_tokenizer *tok = fuzz_load_tokenizer(names, datas, sizes, kind ? 3 : 2, option_file);
        if (!tok) continue;
        FUZZ_REQUIRE((int)al_tokenizer_get_kind(tok) == kind, "kind %d from %s", (int)al_tokenizer_get_kind(tok), names[0]);
        fuzz_encode_probe(tok);
        al_tokenizer_free(tok);
    }
}

#endif
