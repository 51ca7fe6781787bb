/* fuzz_tokenizer_json.c: any bytes as a tokenizer.json (model, normalizer, pre-tokenizer, post-processor
 * templates, added tokens). Promises as fuzz_vocab_txt.c, naming tokenizer.json. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *names[1] = {"tokenizer.json"};
    const uint8_t *datas[1] = {data};
    al_tokenizer *tok = fuzz_load_tokenizer(names, datas, &size, 1, "tokenizer.json");
    if (tok) fuzz_encode_probe(tok);
    al_tokenizer_free(tok);
    return 0;
}
