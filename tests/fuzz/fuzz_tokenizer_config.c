/* fuzz_tokenizer_config.c: any bytes as tokenizer_config.json beside valid WordPiece and BPE vocabularies
 * (fuzz_tokenizer_options.h). */
#include "fuzz_tokenizer_options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_option_file("tokenizer_config.json", data, size);
    return 0;
}
