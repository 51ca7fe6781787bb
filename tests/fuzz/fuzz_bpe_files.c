/* fuzz_bpe_files.c: byte-level BPE from vocab.json + merges.txt. The input is vocab.json, a NUL byte, then
 * merges.txt (no NUL: merges.txt is empty). Promises as fuzz_vocab_txt.c, naming vocab.json or merges.txt. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const uint8_t *nul = memchr(data, 0, size);
    size_t vsize = nul ? (size_t)(nul - data) : size;
    const char *names[2] = {"vocab.json", "merges.txt"};
    const uint8_t *datas[2] = {data, nul ? nul + 1 : data + size};
    size_t sizes[2] = {vsize, nul ? size - vsize - 1 : 0};
    al_tokenizer *tok = fuzz_load_tokenizer(names, datas, sizes, 2, NULL);
    if (tok) {
        FUZZ_REQUIRE(al_tokenizer_get_kind(tok) == AL_TOK_BPE, "vocab.json + merges.txt is not BPE");
        fuzz_encode_probe(tok);
    }
    al_tokenizer_free(tok);
    return 0;
}
