/* fuzz_vocab_txt.c: any bytes as a WordPiece vocab.txt (al_tokenizer_load). Promises: an error names vocab.txt;
 * an accepted vocabulary encodes fixed texts (fuzz_encode_probe) with ids inside the vocabulary, offsets inside
 * the text, consistent lengths, masks and padding, or refuses them with a message. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *names[1] = {"vocab.txt"};
    const uint8_t *datas[1] = {data};
    al_tokenizer *tok = fuzz_load_tokenizer(names, datas, &size, 1, "vocab.txt");
    if (tok) {
        FUZZ_REQUIRE(al_tokenizer_get_kind(tok) == AL_TOK_WORDPIECE, "vocab.txt is not WordPiece");
        fuzz_encode_probe(tok);
    }
    al_tokenizer_free(tok);
    return 0;
}
