/* attention_inputs.c: the inputs of a request that runs the model ("text", "texts" or "input_ids",
 * with optional pairs), tokenized and truncated by the one rule of al_api_limits_make, one al_api_seq
 * and one al_run_example per sequence. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../methods/papa/papa.h"
#include "attention_parts.h"

void al_api_inputs_free(al_api_inputs *in) {
    for (int i = 0; in->seqs && i < in->n_seqs; i++) {
        al_encoding_free(&in->seqs[i].enc);
        free(in->seqs[i].raw_ids);
    }
    free(in->seqs);
    free(in->examples);
    memset(in, 0, sizeof *in);
}

al_status al_api_limits_make(const al_model *model, int pad_to, int max_length, int const_size,
                             const char *const_name, al_api_limits *lim, al_error *err) {
    const int model_limit = al_api_max_tokens(model);
    memset(lim, 0, sizeof *lim);
    lim->max_tokens = model_limit;
    lim->reason = "max_position_embeddings";
    if (pad_to) {
        if (pad_to > model_limit)
            return al_err(err, AL_ERR_INVALID,
                          "request: field 'pad_to' is %d, more than the model's %d positions", pad_to,
                          model_limit);
        if (const_size && const_size != pad_to)
            return al_err(err, AL_ERR_INVALID,
                          "request: field 'pad_to' is %d but constant tensor '%s' is %dx%d", pad_to,
                          const_name, const_size, const_size);
        lim->pad_to = lim->max_tokens = pad_to;
        lim->reason = "pad_to";
    } else if (const_size) {
        if (const_size > model_limit)
            return al_err(err, AL_ERR_INVALID,
                          "request: field 'policies': constant tensor '%s' is %dx%d, more than the "
                          "model's %d positions",
                          const_name, const_size, const_size, model_limit);
        lim->pad_to = lim->max_tokens = const_size;
        snprintf(lim->reason_buf, sizeof lim->reason_buf, "constant tensor '%s' is %dx%d", const_name,
                 const_size, const_size);
        lim->reason = lim->reason_buf;
    }
    if (max_length && max_length < lim->max_tokens) {
        lim->max_tokens = max_length;
        lim->reason = NULL;
    }
    return AL_OK;
}

al_status al_api_inputs_index(al_api_inputs *in, al_error *err) {
    free(in->examples);
    in->examples = calloc((size_t)(in->n_seqs > 0 ? in->n_seqs : 1), sizeof *in->examples);
    if (!in->examples) return al_err(err, AL_ERR_OOM, "request: out of memory for %d sequences", in->n_seqs);
    for (int i = 0; i < in->n_seqs; i++) {
        const al_api_seq *seq = &in->seqs[i];
        if (in->papa_layout) {
            const int L = seq->n_tokens;
            al_run_example ex = {L, seq->raw_ids, seq->raw_ids + L, seq->raw_ids + 2 * L, NULL, NULL};
            in->examples[i] = ex;
        } else if (in->from_text) {
            in->examples[i] = al_run_example_encoding(&seq->enc);
            in->examples[i].n = seq->n_tokens;
        } else {
            al_run_example ex = {seq->n_tokens, seq->raw_ids, NULL, NULL, NULL, NULL};
            in->examples[i] = ex;
        }
    }
    return AL_OK;
}

static int present(const cJSON *req, const char *key) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(req, key);
    return item && !cJSON_IsNull(item);
}

static al_status alloc_seqs(al_api_inputs *out, int n, al_error *err) {
    out->seqs = calloc((size_t)(n > 0 ? n : 1), sizeof *out->seqs);
    if (!out->seqs) return al_err(err, AL_ERR_OOM, "request: out of memory for %d sequences", n);
    out->n_seqs = n;
    return AL_OK;
}

/* What encode_cut tokenizes: a text (and pair), or a word list. */
typedef struct encode_source {
    const char *text, *pair;
    const char *const *words;
    int n_words;
} encode_source;

static al_status encode_source_run(const al_tokenizer *tok, const encode_source *src, const al_encode_options *opt,
                                   al_encoding *enc, al_error *err) {
    return src->words ? al_tokenizer_encode_words(tok, src->words, src->n_words, opt, enc, err)
                      : al_tokenizer_encode(tok, src->text, src->pair, opt, enc, err);
}

/* Tokenizes one source: first untruncated, to know its length, then cut when over limit with a warning naming
 * limit_reason. `index` is the position in "texts" / "words", -1 for a single one; `what` prefixes tokenizer
 * errors. */
static al_status encode_cut(const al_tokenizer *tok, const encode_source *src, int add_special, int limit, int index,
                            const char *what, const char *limit_reason, al_reply_builder *rb, al_api_seq *seq,
                            al_error *err) {
    al_encode_options opt = al_encode_default_options();
    opt.add_special_tokens = add_special;
    opt.max_length = 0;
    opt.truncation = 0;
    opt.pad_to = 0;
    al_status st = encode_source_run(tok, src, &opt, &seq->enc, err);
    if (st) return al_err_prefix(err, what);
    seq->n_before_truncation = seq->enc.n_tokens;
    if (limit > 0 && seq->enc.n_tokens > limit) {
        al_encoding_free(&seq->enc);
        memset(&seq->enc, 0, sizeof seq->enc);
        opt.max_length = limit;
        opt.truncation = 1;
        st = encode_source_run(tok, src, &opt, &seq->enc, err);
        if (st) return al_err_prefix(err, what);
        seq->truncated = 1;
        const char *one = src->words ? "words" : "text", *many = src->words ? "words" : "texts";
        const char *thing = src->words ? "" : "text ";
        if (limit_reason && index < 0)
            al_rb_warn(rb, "%s truncated from %d to %d tokens (%s)", one, seq->n_before_truncation, seq->enc.n_tokens,
                       limit_reason);
        else if (limit_reason)
            al_rb_warn(rb, "%s[%d]: %struncated from %d to %d tokens (%s)", many, index, thing,
                       seq->n_before_truncation, seq->enc.n_tokens, limit_reason);
    }
    seq->truncated = seq->truncated || seq->enc.truncated;
    seq->n_tokens = seq->enc.n_tokens;
    return AL_OK;
}

static al_status encode_one(const al_tokenizer *tok, const char *text, const char *pair, int add_special, int limit,
                            int index, const char *what, const char *limit_reason, al_reply_builder *rb,
                            al_api_seq *seq, al_error *err) {
    const encode_source src = {text, pair, NULL, 0};
    return encode_cut(tok, &src, add_special, limit, index, what, limit_reason, rb, seq, err);
}

/* One text (and pair), or one word list, in the PAPA layout of L positions, as a sweep encodes a task's example
 * (al_papa_inputs_build): a literal "[MASK]" becomes the tokenizer's mask token, the tokens are truncated to L
 * (longest first), then laid out with their padding inside (a word list in the token tasks' layout, its first
 * [SEP] moved to L - 1). raw_ids gets ids, mask and type ids, and for words each position's first_word. */
static al_status encode_papa(const al_tokenizer *tok, const char *text, const char *pair, const char *const *words,
                             int n_words, int L, int index, const char *what, al_reply_builder *rb, al_api_seq *seq,
                             al_error *err) {
    seq->raw_ids = malloc(sizeof(int32_t) * (words ? 4 : 3) * (size_t)L);
    if (!seq->raw_ids) return al_err(err, AL_ERR_OOM, "request: out of memory for %d positions", L);
    al_papa_example ex = {seq->raw_ids, seq->raw_ids + L, seq->raw_ids + 2 * L, words ? seq->raw_ids + 3 * L : NULL, 0};
    al_status st;
    if (words) {
        const char **masked = al_papa_mask_words(tok, words, n_words);
        st = al_papa_encode_words(tok, AL_LAYOUT_PAPA, masked ? masked : words, n_words, L, &ex, err);
        free(masked);
    } else {
        char *a = al_papa_mask_text(tok, text), *b = al_papa_mask_text(tok, pair);
        st = al_papa_encode(tok, AL_LAYOUT_PAPA, a ? a : text, b ? b : pair, L, &ex, err);
        free(a);
        free(b);
    }
    if (st) return al_err_prefix(err, what);
    seq->n_tokens = seq->n_before_truncation = L;
    seq->truncated = ex.truncated;
    const char *field = words ? "words" : "texts", *thing = words ? "words" : "text";
    if (ex.truncated && index < 0) al_rb_warn(rb, "%s truncated to fit the papa layout's %d positions", thing, L);
    else if (ex.truncated)
        al_rb_warn(rb, "%s[%d]: %s truncated to fit the papa layout's %d positions", field, index, thing, L);
    return AL_OK;
}

/* One word list encoded as a token task's example is (al_tokenizer_encode_words), cut as encode_one cuts a
 * text. */
static al_status encode_words(const al_tokenizer *tok, const char *const *words, int n_words, int add_special,
                              int limit, int index, const char *what, const char *limit_reason,
                              al_reply_builder *rb, al_api_seq *seq, al_error *err) {
    const encode_source src = {NULL, NULL, words, n_words};
    return encode_cut(tok, &src, add_special, limit, index, what, limit_reason, rb, seq, err);
}

/* "words": ["The", "cat"] (one sequence) or [["The", "cat"], ["A", "dog"]]: pre-split words, as a token task's
 * examples are; in the papa layout laid out as a sweep lays out a token task. */
static al_status read_words(const al_op_ctx *ctx, const al_tokenizer *tok, int add_special, int limit,
                            const char *limit_reason, al_api_inputs *out, al_error *err) {
    const cJSON *words = cJSON_GetObjectItemCaseSensitive(ctx->req, "words");
    if (!cJSON_IsArray(words) || !words->child)
        return al_err(err, AL_ERR_INVALID,
                      "request: field 'words' must be a non-empty array of strings or of arrays of strings");
    const int nested = cJSON_IsArray(words->child);
    const int n = nested ? cJSON_GetArraySize(words) : 1;
    al_status st = alloc_seqs(out, n, err);
    const cJSON *row = nested ? words->child : words;
    char what[64];
    for (int i = 0; !st && i < n; i++, row = row->next) {
        if (nested) snprintf(what, sizeof what, "request: field 'words[%d]'", i);
        else snprintf(what, sizeof what, "request: field 'words'");
        const int nw = cJSON_IsArray(row) ? cJSON_GetArraySize(row) : 0;
        if (nw < 1) return al_err(err, AL_ERR_INVALID, "%s must be a non-empty array of strings", what);
        const char **list = malloc(sizeof *list * (size_t)nw);
        if (!list) return al_err(err, AL_ERR_OOM, "request: out of memory for %d words", nw);
        int k = 0;
        for (const cJSON *w = row->child; w; w = w->next, k++) {
            if (!cJSON_IsString(w)) {
                free(list);
                if (nested)
                    return al_err(err, AL_ERR_INVALID, "request: field 'words[%d][%d]' must be a string", i, k);
                return al_err(err, AL_ERR_INVALID, "request: field 'words[%d]' must be a string", k);
            }
            list[k] = w->valuestring;
        }
        const int index = nested ? i : -1;
        if (out->papa_layout)
            st = encode_papa(tok, NULL, NULL, list, nw, limit, index, what, ctx->rb, &out->seqs[i], err);
        else
            st = encode_words(tok, list, nw, add_special, limit, index, what, limit_reason, ctx->rb, &out->seqs[i],
                              err);
        free(list);
        if (!st && (i & 15) == 15) al_api_progress(ctx->params, "tokenize", (double)(i + 1) / n);
    }
    return st;
}

static al_status read_texts(const al_op_ctx *ctx, const al_tokenizer *tok, int add_special,
                            int limit, const char *limit_reason, al_api_inputs *out,
                            al_error *err) {
    const int papa_L = out->papa_layout ? limit : 0;
    const cJSON *req = ctx->req;
    al_status st;
    if (present(req, "text")) {
        if (present(req, "texts"))
            return al_err(err, AL_ERR_INVALID, "request: fields 'text' and 'texts' exclude each other");
        if (present(req, "text_pairs"))
            return al_err(err, AL_ERR_INVALID, "request: field 'text_pairs' goes with 'texts', not 'text'");
        const char *text = NULL, *pair = NULL;
        st = al_req_string(req, "text", "text", 1, &text, err);
        if (!st) st = al_req_string(req, "text_pair", "text_pair", 0, &pair, err);
        if (!st) st = alloc_seqs(out, 1, err);
        const char *what1 = pair ? "request: field 'text' or 'text_pair'" : "request: field 'text'";
        if (!st && papa_L)
            st = encode_papa(tok, text, pair, NULL, 0, papa_L, -1, what1, ctx->rb, &out->seqs[0], err);
        else if (!st)
            st = encode_one(tok, text, pair, add_special, limit, -1, what1, limit_reason, ctx->rb, &out->seqs[0], err);
        return st;
    }
    if (present(req, "text_pair"))
        return al_err(err, AL_ERR_INVALID, "request: field 'text_pair' goes with 'text', not 'texts'");
    const cJSON *texts = cJSON_GetObjectItemCaseSensitive(req, "texts");
    const cJSON *pairs = cJSON_GetObjectItemCaseSensitive(req, "text_pairs");
    if (pairs && cJSON_IsNull(pairs)) pairs = NULL;
    if (!cJSON_IsArray(texts))
        return al_err(err, AL_ERR_INVALID, "request: field 'texts' must be an array of strings");
    int n = cJSON_GetArraySize(texts);
    if (n < 1) return al_err(err, AL_ERR_INVALID, "request: field 'texts' is empty");
    if (pairs && (!cJSON_IsArray(pairs) || cJSON_GetArraySize(pairs) != n))
        return al_err(err, AL_ERR_INVALID,
                      "request: field 'text_pairs' must be an array as long as 'texts' (%d)", n);
    st = alloc_seqs(out, n, err);
    const cJSON *t = texts->child, *p = pairs ? pairs->child : NULL;
    char what[64];
    for (int i = 0; !st && i < n; i++, t = t->next, p = p ? p->next : NULL) {
        if (!cJSON_IsString(t))
            return al_err(err, AL_ERR_INVALID, "request: field 'texts[%d]' must be a string", i);
        if (p && !cJSON_IsString(p) && !cJSON_IsNull(p))
            return al_err(err, AL_ERR_INVALID,
                          "request: field 'text_pairs[%d]' must be a string or null", i);
        const char *pair = p && cJSON_IsString(p) ? p->valuestring : NULL;
        snprintf(what, sizeof what, "request: field 'texts[%d]'", i);
        if (papa_L)
            st = encode_papa(tok, t->valuestring, pair, NULL, 0, papa_L, i, what, ctx->rb, &out->seqs[i], err);
        else
            st = encode_one(tok, t->valuestring, pair, add_special, limit, i, what, limit_reason, ctx->rb,
                            &out->seqs[i], err);
        if (!st && (i & 15) == 15) al_api_progress(ctx->params, "tokenize", (double)(i + 1) / n);
    }
    return st;
}

/* "input_ids": [1, 2, 3] or [[1, 2, 3], [4, 5]]: already tokenized, never truncated. */
static al_status read_ids(const al_op_ctx *ctx, const al_config *cfg, int limit,
                          al_api_inputs *out, al_error *err) {
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(ctx->req, "input_ids");
    if (!cJSON_IsArray(ids) || !ids->child)
        return al_err(err, AL_ERR_INVALID,
                      "request: field 'input_ids' must be a non-empty array of integers or of arrays");
    int nested = cJSON_IsArray(ids->child);
    int n = nested ? cJSON_GetArraySize(ids) : 1;
    al_status st = alloc_seqs(out, n, err);
    const cJSON *row = nested ? ids->child : ids;
    for (int i = 0; !st && i < n; i++, row = row->next) {
        if (!cJSON_IsArray(row))
            return al_err(err, AL_ERR_INVALID, "request: field 'input_ids[%d]' must be an array", i);
        int len = cJSON_GetArraySize(row);
        if (len < 1) return al_err(err, AL_ERR_INVALID, "request: field 'input_ids[%d]' is empty", i);
        if (limit > 0 && len > limit) {
            char where[24] = "";
            if (nested) snprintf(where, sizeof where, "[%d]", i);
            return al_err(err, AL_ERR_INVALID,
                          "request: field 'input_ids%s' has %d ids, more than the limit of %d",
                          where, len, limit);
        }
        al_api_seq *seq = &out->seqs[i];
        seq->raw_ids = malloc((size_t)len * sizeof(int32_t));
        if (!seq->raw_ids) return al_err(err, AL_ERR_OOM, "request: out of memory for input_ids");
        int j = 0;
        for (const cJSON *v = row->child; v; v = v->next, j++) {
            double d = v->valuedouble;
            /* the range first: casting a double outside int32's range is undefined */
            if (!cJSON_IsNumber(v) || !(d >= 0 && d < cfg->vocab_size) || d != floor(d)) {
                if (nested)
                    return al_err(err, AL_ERR_INVALID,
                                  "request: field 'input_ids[%d][%d]' must be an integer in [0, %d)",
                                  i, j, cfg->vocab_size);
                return al_err(err, AL_ERR_INVALID,
                              "request: field 'input_ids[%d]' must be an integer in [0, %d)", j,
                              cfg->vocab_size);
            }
            seq->raw_ids[j] = (int32_t)d;
        }
        seq->n_tokens = seq->n_before_truncation = len;
    }
    return st;
}

al_status al_api_read_inputs(const al_op_ctx *ctx, const al_model *model, int add_special,
                             const al_api_limits *lim, al_api_inputs *out, al_error *err) {
    const int limit = lim->max_tokens;
    const char *limit_reason = lim->reason;
    memset(out, 0, sizeof *out);
    const cJSON *req = ctx->req;
    int has_text = present(req, "text") || present(req, "texts");
    int has_ids = present(req, "input_ids");
    int has_words = lim->takes_words && present(req, "words");
    al_status st;
    if (has_words && (has_text || has_ids || present(req, "text_pair") || present(req, "text_pairs")))
        st = al_err(err, AL_ERR_INVALID, "request: field 'words' excludes 'text', 'texts', their pairs and 'input_ids'");
    else if (has_text && has_ids)
        st = al_err(err, AL_ERR_INVALID, "request: field 'input_ids' excludes 'text' and 'texts'");
    else if (lim->papa_layout && !has_text && !has_words)
        st = al_err(err, AL_ERR_INVALID,
                    "request: field 'layout' 'papa' lays out 'text', 'texts' or 'words', not 'input_ids'");
    else if (lim->papa_layout && !add_special)
        st = al_err(err, AL_ERR_INVALID, "request: field 'layout' 'papa' needs the special tokens ('add_special_tokens')");
    else if (has_ids)
        st = read_ids(ctx, al_model_config(model), limit, out, err);
    else if (!has_text && !has_words)
        st = al_err(err, AL_ERR_INVALID, "request: missing field 'text' (or 'texts'%s or 'input_ids')",
                    lim->takes_words ? ", 'words'" : "");
    else if (!al_model_tokenizer(model))
        st = al_err(err, AL_ERR_INVALID,
                    "request: field 'model': model '%s' has no tokenizer files (vocab.txt, "
                    "tokenizer.json or vocab.json + merges.txt); pass 'input_ids'",
                    cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(req, "model")));
    else {
        out->from_text = 1;
        out->from_words = has_words;
        out->papa_layout = lim->papa_layout;
        if (has_words) st = read_words(ctx, al_model_tokenizer(model), add_special, limit, limit_reason, out, err);
        else st = read_texts(ctx, al_model_tokenizer(model), add_special, limit, limit_reason, out, err);
    }
    if (!st) st = al_api_inputs_index(out, err);
    if (st) al_api_inputs_free(out);
    return st;
}
