/* op_tokenize.c: the "tokenize" op: one text (or pair) to tokens, ids and alignment. */
#include <stdlib.h>

#include "../core/error.h"
#include "api_internal.h"

al_status al_op_tokenize(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    const char *text, *pair;
    int max_length, add_special;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (!st) st = al_req_string(ctx->req, "text", "text", 1, &text, err);
    if (!st) st = al_req_string(ctx->req, "text_pair", "text_pair", 0, &pair, err);
    if (!st) st = al_req_int(ctx->req, "max_length", "max_length", 0, 0, 1, 1 << 24, &max_length, err);
    if (!st) st = al_req_bool(ctx->req, "add_special_tokens", "add_special_tokens", 1, &add_special, err);
    if (st) return st;
    const al_tokenizer *tok = al_model_tokenizer(m->model);
    if (!tok)
        return al_err(err, AL_ERR_INVALID,
                      "request: field 'model': model '%s' has no tokenizer files (vocab.txt, "
                      "tokenizer.json or vocab.json + merges.txt)",
                      m->id);
    al_op_warn_unknown(ctx);
    al_api_progress(ctx->params, "tokenize", 0.0);

    al_encode_options opt = al_encode_default_options();
    opt.add_special_tokens = add_special;
    opt.max_length = max_length;
    opt.truncation = max_length > 0;
    opt.pad_to = 0;
    al_encoding enc = {0};
    st = al_tokenizer_encode(tok, text, pair, &opt, &enc, err);
    if (st) {
        al_encoding_free(&enc);
        return al_err_prefix(err, pair ? "request: field 'text' or 'text_pair'" : "request: field 'text'");
    }
    al_reply_builder *rb = ctx->rb;
    cJSON *root = rb->root;
    al_rb_str(rb, root, "model", m->id);
    al_rb_num(rb, root, "n_tokens", enc.n_tokens);
    al_rb_bool(rb, root, "truncated", enc.truncated);
    al_rb_add(rb, root, "tokens", al_api_token_strings(tok, enc.ids, enc.n_tokens));
    al_rb_int_array(rb, root, "ids", enc.ids, enc.n_tokens);
    al_rb_int_array(rb, root, "type_ids", enc.type_ids, enc.n_tokens);
    al_rb_int_array(rb, root, "word_ids", enc.word_ids, enc.n_tokens);
    al_rb_int_array(rb, root, "sequence_ids", enc.sequence_ids, enc.n_tokens);
    al_rb_int_array(rb, root, "attention_mask", enc.attention_mask, enc.n_tokens);
    al_rb_int_array(rb, root, "special_tokens_mask", enc.special_mask, enc.n_tokens);
    /* the special tokens the template added (a decoder adds none, or Llama's <s>: docs/tokenizers.md) */
    int32_t *added = malloc(((size_t)enc.n_tokens + 1) * sizeof *added), n_added = 0;
    for (int i = 0; added && i < enc.n_tokens; i++)
        if (enc.sequence_ids[i] < 0) added[n_added++] = enc.ids[i];
    al_rb_add(rb, root, "added", added ? al_api_token_strings(tok, added, n_added) : NULL);
    free(added);
    cJSON *offsets = al_rb_add(rb, root, "offsets", cJSON_CreateArray());
    for (int i = 0; offsets && i < enc.n_tokens; i++)
        al_rb_int_array(rb, offsets, NULL, enc.offsets + 2 * i, 2);
    int limit = al_api_max_tokens(m->model);
    if (enc.n_tokens > limit)
        al_rb_warn(rb, "text has %d tokens, more than the model's %d positions "
                       "(max_position_embeddings); attention would truncate it",
                   enc.n_tokens, limit);
    al_encoding_free(&enc);
    al_api_progress(ctx->params, "tokenize", 1.0);
    return AL_OK;
}
