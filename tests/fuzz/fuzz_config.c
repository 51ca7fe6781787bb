/* fuzz_config.c: any bytes as a config.json (al_config_parse). Promises: an error names config.json and leaves
 * the config zeroed; an accepted config is self-consistent (sizes >= 1; an encoder's hidden a multiple of heads with
 * head_dim = hidden / heads, a decoder's head_dim >= 1 with its key/value heads dividing its heads; RoBERTa's
 * position offset below the positions, a supported activation and family) and, when small, al_model_new_random
 * accepts it unchanged (one rule for parsed and built configs). */
#include "fuzz_common.h"
#include "model/family.h"
#include "model/family_params.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    al_config c;
    al_error err;
    memset(&err, 0, sizeof err);
    al_status st = al_config_parse((const char *)data, size, "config.json", &c, &err);
    if (st != AL_OK) {
        fuzz_check_error(st, &err, "config.json");
        static const al_config zero;
        FUZZ_REQUIRE(memcmp(&c, &zero, sizeof c) == 0, "config not cleared after an error");
        return 0;
    }
    FUZZ_REQUIRE((unsigned)c.arch < (unsigned)al_family_count() && (unsigned)c.act <= AL_ACT_SILU, "arch %d act %d", (int)c.arch,
                 (int)c.act);
    FUZZ_REQUIRE(memchr(c.model_type, '\0', sizeof c.model_type) && c.model_type[0], "model_type");
    FUZZ_REQUIRE(c.vocab_size >= 1 && c.hidden_size >= 1 && c.n_layers >= 1 && c.n_heads >= 1 &&
                     c.intermediate_size >= 1 && c.max_position_embeddings >= 1 && c.embedding_size >= 1,
                 "a size below 1");
    if (al_family_at(c.arch)->causal)
        FUZZ_REQUIRE(c.head_dim >= 1 && al_kv_heads(&c) >= 1 && c.n_heads % al_kv_heads(&c) == 0,
                     "heads %d key/value heads %d head_dim %d", c.n_heads, al_kv_heads(&c), c.head_dim);
    else
        FUZZ_REQUIRE(c.hidden_size % c.n_heads == 0 && c.head_dim * c.n_heads == c.hidden_size,
                     "hidden %d heads %d head_dim %d", c.hidden_size, c.n_heads, c.head_dim);
    FUZZ_REQUIRE(c.type_vocab_size >= 0 && c.pad_token_id >= 0, "type_vocab_size %d pad %d", c.type_vocab_size,
                 c.pad_token_id);
    FUZZ_REQUIRE(c.position_offset >= 0 && c.position_offset < c.max_position_embeddings, "position offset %d of %d",
                 c.position_offset, c.max_position_embeddings);
    FUZZ_REQUIRE(al_family_at(c.arch)->projection || c.embedding_size == c.hidden_size, "embedding_size %d", c.embedding_size);
    FUZZ_REQUIRE(c.layer_norm_eps > 0.0f && c.layer_norm_eps <= 1.0f, "layer_norm_eps %g", (double)c.layer_norm_eps);
    /* small enough to build: the same config makes a random model */
    double per_layer = 4.0 * c.hidden_size * c.hidden_size + 2.0 * c.hidden_size * c.intermediate_size;
    double n = (double)c.embedding_size * (c.vocab_size + c.max_position_embeddings + c.type_vocab_size) +
               c.n_layers * per_layer + (double)c.embedding_size * c.hidden_size;
    if (n <= 2e5) {
        al_model *m = NULL;
        st = al_model_new_random(&c, 1, 1, &m, &err);
        FUZZ_REQUIRE(st == AL_OK, "a parsed config is refused by al_model_new_random: %s", err.message);
        FUZZ_REQUIRE(memcmp(al_model_config(m), &c, sizeof c) == 0, "al_model_new_random changed the config");
        al_model_free(m);
    }
    return 0;
}
