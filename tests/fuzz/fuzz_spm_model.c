/* fuzz_spm_model.c: SentencePiece's spm.model (protobuf ModelProto: pieces, trainer_spec, normalizer_spec with a
 * precompiled charsmap) read by src/text/spm_model.c. The input is spm.model. Promises as fuzz_vocab_txt.c, naming
 * spm.model: an error or a tokenizer, Unigram or (model_type BPE) SentencePiece BPE, that keeps fuzz_encode_probe's
 * promises (the charsmap's trie walked inside its bytes whatever its units say). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *names[1] = {"spm.model"};
    const uint8_t *datas[1] = {data};
    size_t sizes[1] = {size};
    al_tokenizer *tok = fuzz_load_tokenizer(names, datas, sizes, 1, NULL);
    if (tok) {
        FUZZ_REQUIRE(al_tokenizer_get_kind(tok) == AL_TOK_UNIGRAM || al_tokenizer_get_kind(tok) == AL_TOK_BPE,
                     "spm.model is neither Unigram nor BPE");
        fuzz_encode_probe(tok);
    }
    al_tokenizer_free(tok);
    return 0;
}
