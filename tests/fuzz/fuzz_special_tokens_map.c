/* fuzz_special_tokens_map.c: any bytes as special_tokens_map.json beside valid WordPiece and BPE vocabularies
 * (fuzz_tokenizer_options.h). */
#include "fuzz_tokenizer_options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_option_file("special_tokens_map.json", data, size);
    return 0;
}
