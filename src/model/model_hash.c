/* model_hash.c: a content hash of a model, so a result names exactly the model it came from: SHA-256 over
 * the shape of the config, every weight as float32 little-endian (as loaded, whatever the file's dtype),
 * and the tokenizer's vocabulary in id order. Two copies of a checkpoint in different files or dtypes that
 * load to the same numbers get the same hash. */
#include <stdio.h>
#include <string.h>

#include "../core/sha256.h"
#include "family.h"
#include "model_internal.h"

void al_model_content_hash(const al_model *m, char hex[65]) {
    al_sha256 s;
    al_sha256_init(&s);
    const al_config *c = &m->config;
    char head[256];
    int n = snprintf(head, sizeof head, "attnlab-model-v1 %s %d %d %d %d %d %d %d %d %d %d %.9g %d\n",
                     al_arch_name(c->arch), c->vocab_size, c->hidden_size, c->embedding_size, c->n_layers,
                     c->n_heads, c->intermediate_size, c->max_position_embeddings, c->type_vocab_size,
                     c->pad_token_id, c->position_offset, (double)c->layer_norm_eps, (int)c->act);
    al_sha256_update(&s, head, (size_t)n);
    if (al_family_of(c)->hash_fields) { /* the family's own fields (DeBERTa's); other hashes unchanged */
        n = al_family_of(c)->hash_fields(c, head, sizeof head);
        al_sha256_update(&s, head, (size_t)n);
    }
    al_sha256_update(&s, m->storage, m->n_floats * sizeof(float)); /* little-endian on every target we build */
    const al_tokenizer *tok = al_model_tokenizer(m);
    for (int id = 0; tok && id < al_tokenizer_vocab_size(tok); id++) {
        const char *t = al_tokenizer_id_to_token(tok, id);
        if (t) al_sha256_update(&s, t, strlen(t) + 1);
    }
    uint8_t digest[32];
    al_sha256_final(&s, digest);
    al_sha256_hex(digest, hex);
}
