/* op_analysis_pos.c: the "attention_by_pos" op: attention from one query row to keys grouped by
 * part of speech, standard next to effective (Sun & Marasovic Figure 1).
 *
 *   {"op": "attention_by_pos", "model", "words": [["The", "cat", "sat", "."], ...],
 *    "tags": [["DET", "NOUN", "VERB", "PUNCT"], ...] (one tag per word, any strings),
 *    "layer"?: -1 (last; negative counts from the end), "query"?: "cls" (default) or a position,
 *    "reduce"?: "max" (the paper) | "mean", "mode"?, "pad_to"?, "max_length"?, "batch_size"?}
 *   -> "tags": [{"tag", "n_examples", "standard": [H], "effective": [H]}, ...] in order of first
 *      appearance, then "[CLS]" and "[SEP]" (the special tokens), "layer", "query", "reduce".
 * Word pieces inherit their word's tag (al_tokenizer_encode_words' word_ids); a tag's value per
 * example and head is the max (or mean) of the query row over the tag's positions, averaged over
 * the examples that have the tag. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "op_analysis.h"

#define MAX_TAGS 256

typedef struct pos_state {
    int NL, H, layer, query, use_mean, n_tags;
    char *tags[MAX_TAGS];
    int32_t *key_tags; /* [n_seqs, L] */
    double *sums[2];   /* [n_tags, H] */
    double counts[2][MAX_TAGS];
} pos_state;

static int tag_index(pos_state *s, const char *tag) {
    for (int i = 0; i < s->n_tags; i++)
        if (strcmp(s->tags[i], tag) == 0) return i;
    if (s->n_tags == MAX_TAGS) return -2;
    size_t n = strlen(tag) + 1;
    s->tags[s->n_tags] = malloc(n);
    if (!s->tags[s->n_tags]) return -3;
    memcpy(s->tags[s->n_tags], tag, n);
    return s->n_tags++;
}

/* Reads "words" and "tags" into encodings and tag indices per word (tag_of_word[i][w]). */
static al_status read_words(const al_op_ctx *ctx, const al_model *model, const al_an_opts *o,
                            pos_state *s, al_api_inputs *in, int ***tag_of_word, al_error *err) {
    const cJSON *words = cJSON_GetObjectItemCaseSensitive(ctx->req, "words");
    const cJSON *tags = cJSON_GetObjectItemCaseSensitive(ctx->req, "tags");
    const al_tokenizer *tok = al_model_tokenizer(model);
    if (!cJSON_IsArray(words) || cJSON_GetArraySize(words) < 1)
        return al_err(err, AL_ERR_INVALID,
                      "request: field 'words' must be a non-empty array of arrays of strings");
    const int n = cJSON_GetArraySize(words);
    if (!cJSON_IsArray(tags) || cJSON_GetArraySize(tags) != n)
        return al_err(err, AL_ERR_INVALID,
                      "request: field 'tags' must be an array as long as 'words' (%d)", n);
    if (!tok)
        return al_err(err, AL_ERR_INVALID, "request: field 'model': model '%s' has no tokenizer",
                      cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(ctx->req, "model")));
    al_api_limits lim;
    al_status st = al_api_limits_make(model, o->pad_to, o->max_length, 0, NULL, &lim, err);
    if (st) return st;
    const int limit = lim.max_tokens;
    memset(in, 0, sizeof *in);
    in->seqs = calloc((size_t)n, sizeof *in->seqs);
    *tag_of_word = calloc((size_t)n, sizeof(int *));
    if (!in->seqs || !*tag_of_word) return al_err(err, AL_ERR_OOM, "attention_by_pos: out of memory");
    in->n_seqs = n;
    in->from_text = 1;
    const cJSON *w = words->child, *t = tags->child;
    for (int i = 0; i < n; i++, w = w->next, t = t->next) {
        const int nw = cJSON_IsArray(w) ? cJSON_GetArraySize(w) : -1;
        if (nw < 1)
            return al_err(err, AL_ERR_INVALID, "request: field 'words[%d]' must be a non-empty "
                          "array of strings", i);
        if (!cJSON_IsArray(t) || cJSON_GetArraySize(t) != nw)
            return al_err(err, AL_ERR_INVALID, "request: field 'tags[%d]' must have one tag per "
                          "word (%d)", i, nw);
        const char **list = malloc(sizeof(char *) * (size_t)nw);
        (*tag_of_word)[i] = malloc(sizeof(int) * (size_t)nw);
        if (!list || !(*tag_of_word)[i]) {
            free(list);
            return al_err(err, AL_ERR_OOM, "attention_by_pos: out of memory");
        }
        const cJSON *wi = w->child, *ti = t->child;
        for (int k = 0; k < nw; k++, wi = wi->next, ti = ti->next) {
            if (!cJSON_IsString(wi) || !cJSON_IsString(ti)) {
                free(list);
                return al_err(err, AL_ERR_INVALID, "request: field '%s[%d][%d]' must be a string",
                              cJSON_IsString(wi) ? "tags" : "words", i, k);
            }
            list[k] = wi->valuestring;
            int idx = tag_index(s, ti->valuestring);
            if (idx < 0) {
                free(list);
                return idx == -2 ? al_err(err, AL_ERR_INVALID, "request: field 'tags[%d][%d]': "
                                          "more than %d distinct tags", i, k, MAX_TAGS)
                                 : al_err(err, AL_ERR_OOM, "attention_by_pos: out of memory");
            }
            (*tag_of_word)[i][k] = idx;
        }
        al_encode_options opt = al_encode_default_options();
        opt.add_special_tokens = o->add_special;
        opt.max_length = limit;
        opt.truncation = 1;
        opt.pad_to = 0;
        st = al_tokenizer_encode_words(tok, list, nw, &opt, &in->seqs[i].enc, err);
        free(list);
        if (st) {
            char what[48];
            snprintf(what, sizeof what, "request: field 'words[%d]'", i);
            return al_err_prefix(err, what);
        }
        in->seqs[i].n_tokens = in->seqs[i].n_before_truncation = in->seqs[i].enc.n_tokens;
        in->seqs[i].truncated = in->seqs[i].enc.truncated;
        if (in->seqs[i].truncated)
            al_rb_warn(ctx->rb, "words[%d]: truncated to %d tokens", i, in->seqs[i].n_tokens);
    }
    return al_api_inputs_index(in, err);
}

typedef struct pos_run {
    pos_state *s;
    int L;
} pos_run;

static al_status pos_chunk(void *user, const al_run_chunk *c, al_error *err) {
    pos_run *pr = user;
    pos_state *s = pr->s;
    int32_t *query = malloc(sizeof(int32_t) * (size_t)c->B);
    if (!query) return al_err(err, AL_ERR_OOM, "attention_by_pos: out of memory");
    al_status st = AL_OK;
    for (int b = 0; !st && b < c->B; b++) {
        int q = s->query;
        if (q < 0) { /* the [CLS] position */
            q = 0;
            for (int t = 0; t < c->L; t++)
                if (c->classes[(size_t)b * c->L + t] & AL_KEY_CLS) {
                    q = t;
                    break;
                }
        } else if (q >= c->L || !c->mask[(size_t)b * c->L + q]) {
            int n = 0;
            for (int t = 0; t < c->L; t++) n += c->mask[(size_t)b * c->L + t] != 0;
            st = al_err(err, AL_ERR_INVALID, "request: field 'query' (%d) is past the %d tokens of "
                        "words[%d]", q, n, c->first + b);
        }
        query[b] = q;
    }
    const size_t layer_off = (size_t)s->layer * c->B * s->H * c->L * c->L;
    const float *maps[2] = {c->attentions + layer_off, c->effective + layer_off};
    for (int k = 0; !st && k < 2; k++)
        st = al_attention_by_tag(maps[k], c->B, s->H, c->L, query,
                                 s->key_tags + (size_t)c->first * c->L, s->n_tags, s->use_mean,
                                 s->sums[k], s->counts[k], err);
    free(query);
    return st;
}

static const char *const k_reduce_names[] = {"max", "mean", NULL};
const al_req_field al_fields_by_pos_own[] = {
    AL_F_ARRAY("words", AL_FIELD_ANY, 1, 0, NULL, NULL, "the sentences as lists of words"),
    AL_F_ARRAY("tags", AL_FIELD_ANY, 1, 0, NULL, NULL, "each word's part-of-speech tag, as long as 'words'"),
    AL_F_INT("layer", 1, 0, "-1", "the layer (negative: from the last; -1 the last)"),
    AL_F_ANY("query", "the query: \"cls\" or a token position (default \"cls\")"),
    AL_F_ENUM("reduce", k_reduce_names, "\"max\"", "how a word's sub-tokens combine"),
    AL_F_END,
};

al_status al_op_attention_by_pos(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    al_an_opts o;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (!st) st = al_an_read_opts(ctx, 8, &o, err);
    if (st) return st;
    al_op_warn_unknown(ctx);
    const al_config *cfg = al_model_config(m->model);
    pos_state s;
    memset(&s, 0, sizeof s);
    s.NL = cfg->n_layers, s.H = cfg->n_heads, s.query = -1;
    int layer;
    const char *reduce;
    st = al_req_int(ctx->req, "layer", "layer", 0, -1, -s.NL, s.NL - 1, &layer, err);
    if (!st) st = al_req_string(ctx->req, "reduce", "reduce", 0, &reduce, err);
    if (!st && reduce && strcmp(reduce, "max") && strcmp(reduce, "mean"))
        st = al_err(err, AL_ERR_INVALID, "request: field 'reduce' must be \"max\" or \"mean\"");
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(ctx->req, "query");
    if (!st && q && !cJSON_IsNull(q)) {
        if (cJSON_IsString(q) && strcmp(q->valuestring, "cls") == 0) s.query = -1;
        else if (cJSON_IsNumber(q)) st = al_req_int(ctx->req, "query", "query", 1, 0, 0, 1 << 20, &s.query, err);
        else st = al_err(err, AL_ERR_INVALID, "request: field 'query' must be \"cls\" or a position");
    }
    if (st) return st;
    s.layer = layer < 0 ? s.NL + layer : layer;
    s.use_mean = reduce && strcmp(reduce, "mean") == 0;
    al_api_inputs in = {0};
    int **tag_of_word = NULL;
    st = read_words(ctx, m->model, &o, &s, &in, &tag_of_word, err);
    int cls_tag = -1, sep_tag = -1;
    if (!st && o.add_special) {
        cls_tag = tag_index(&s, "[CLS]");
        sep_tag = tag_index(&s, "[SEP]");
        if (cls_tag < 0 || sep_tag < 0)
            st = al_err(err, AL_ERR_INVALID, "request: field 'tags': too many distinct tags");
    }
    const int L = st ? 0 : al_an_length(&in, &o);
    if (!st) {
        s.key_tags = malloc(sizeof(int32_t) * (size_t)in.n_seqs * L);
        s.sums[0] = calloc((size_t)s.n_tags * s.H, sizeof(double));
        s.sums[1] = calloc((size_t)s.n_tags * s.H, sizeof(double));
        if (!s.key_tags || !s.sums[0] || !s.sums[1])
            st = al_err(err, AL_ERR_OOM, "attention_by_pos: out of memory");
    }
    const al_special_ids sp = al_tokenizer_special_ids(al_model_tokenizer(m->model));
    for (int b = 0; !st && b < in.n_seqs; b++) {
        const al_encoding *e = &in.seqs[b].enc;
        for (int t = 0; t < L; t++) {
            int tag = -1;
            if (t < e->n_tokens) {
                if (e->word_ids[t] >= 0) tag = tag_of_word[b][e->word_ids[t]];
                else if (e->ids[t] == sp.cls) tag = cls_tag;
                else if (e->ids[t] == sp.sep) tag = sep_tag;
            }
            s.key_tags[(size_t)b * L + t] = tag;
        }
    }
    pos_run pr = {&s, L};
    if (!st) st = al_an_run(ctx, m->model, NULL, &in, &o, pos_chunk, &pr, err);
    if (!st) {
        al_reply_builder *rb = ctx->rb;
        al_rb_str(rb, rb->root, "model", m->id);
        al_rb_num(rb, rb->root, "layer", s.layer);
        if (s.query < 0) al_rb_str(rb, rb->root, "query", "cls");
        else al_rb_num(rb, rb->root, "query", s.query);
        al_rb_str(rb, rb->root, "reduce", s.use_mean ? "mean" : "max");
        al_rb_str(rb, rb->root, "mode", o.mode == AL_EFFECTIVE_PAPER ? "paper" : "exact");
        cJSON *list = al_rb_add(rb, rb->root, "tags", cJSON_CreateArray());
        static const char *const kinds[2] = {"standard", "effective"};
        for (int t = 0; list && t < s.n_tags; t++) {
            cJSON *obj = al_rb_add(rb, list, NULL, cJSON_CreateObject());
            if (!obj) break;
            al_rb_str(rb, obj, "tag", s.tags[t]);
            al_rb_num(rb, obj, "n_examples", s.counts[0][t]);
            for (int k = 0; k < 2; k++) { /* [H]: the mean over the examples having the tag */
                cJSON *row = al_rb_add(rb, obj, kinds[k], cJSON_CreateArray());
                for (int h = 0; row && h < s.H; h++)
                    al_rb_add(rb, row, NULL,
                              cJSON_CreateNumber(s.counts[k][t] ? s.sums[k][(size_t)t * s.H + h] /
                                                                      s.counts[k][t]
                                                                : 0));
            }
        }
    }
    for (int i = 0; tag_of_word && i < in.n_seqs; i++) free(tag_of_word[i]);
    free(tag_of_word);
    for (int t = 0; t < s.n_tags; t++) free(s.tags[t]);
    free(s.key_tags), free(s.sums[0]), free(s.sums[1]);
    al_api_inputs_free(&in);
    return st;
}
