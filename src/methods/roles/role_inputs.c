/* role_inputs.c: the repeated random sequences of the head roles (head_roles.h, docs/measures.md "Head roles"):
 * which ids they draw from, the start token a tokenizer puts first, and sequence r's draws. */
#include <stdlib.h>

#include "../../core/error.h"
#include "../../core/rng.h"
#include "../../core/seeds.h"
#include "../../text/tok_special.h"
#include "head_roles.h"

/* The token the tokenizer puts before any text when it adds its special tokens (Llama's <s>), or -1: the first
 * token of a one-letter text, when it is a special one. A WordPiece vocabulary's [CLS] is none: a decoder trained
 * with one (the embedded decoder) reads its text without special tokens and has never seen [CLS]
 * (docs/decoder_pretraining.md, "Data and tokenizer"). */
static al_status start_token(const al_tokenizer *tok, int *start, al_error *err) {
    *start = -1;
    if (!tok || al_tokenizer_get_kind(tok) == AL_TOK_WORDPIECE) return AL_OK;
    al_encoding enc = {0};
    al_encode_options opt = al_encode_default_options();
    opt.add_special_tokens = 1;
    al_status st = al_tokenizer_encode(tok, "a", NULL, &opt, &enc, err);
    if (st) return al_err_prefix(err, "head_roles: the start token");
    if (enc.n_tokens > 0 && enc.special_mask[0]) *start = enc.ids[0];
    al_encoding_free(&enc);
    return AL_OK;
}

al_status al_roles_vocab_make(const al_model *model, al_roles_vocab *out, al_error *err) {
    out->ids = NULL, out->n = 0, out->start = -1;
    const al_config *c = al_model_config(model);
    const al_tokenizer *tok = al_model_tokenizer(model);
    al_status st = start_token(tok, &out->start, err);
    if (st) return st;
    /* the embeddings' rows past the tokenizer's vocabulary (Qwen2 pads its matrix) are no tokens */
    const int V = tok && al_tokenizer_vocab_size(tok) < c->vocab_size ? al_tokenizer_vocab_size(tok) : c->vocab_size;
    out->ids = malloc(sizeof(int32_t) * (size_t)(V > 0 ? V : 1));
    if (!out->ids) return al_err(err, AL_ERR_OOM, "head_roles: out of memory for a vocabulary of %d", V);
    for (int id = 0; id < V; id++)
        if (id != c->pad_token_id && !(tok && al_tokenizer_is_special(tok, id))) out->ids[out->n++] = id;
    if (out->n < 2) {
        al_roles_vocab_free(out);
        return al_err(err, AL_ERR_INVALID, "request: field 'model': %d ordinary tokens to draw random sequences "
                      "from (at least 2)", V);
    }
    return AL_OK;
}

void al_roles_vocab_free(al_roles_vocab *v) {
    free(v->ids);
    v->ids = NULL, v->n = 0;
}

void al_roles_draw(const al_roles_vocab *v, uint64_t seed, int r, int n, int32_t *out) {
    al_rng g;
    al_rng_seed(&g, al_mlm_derive_seed(seed, AL_SEED_HEAD_ROLES, (uint64_t)r));
    const int off = al_roles_offset(v);
    if (off) out[0] = v->start;
    for (int t = 0; t < n; t++) out[off + t] = out[off + n + t] = v->ids[al_rng_below(&g, (uint32_t)v->n)];
}
