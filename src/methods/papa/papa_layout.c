/* papa_layout.c: the PAPA input layout (docs/papa.md#input-layout). The reference code averages and
 * applies constant matrices of a fixed size L x L, so every example is laid out in exactly L positions
 * with its final [SEP] at L-1 (and a pair's middle [SEP] at L/2): position i then means the same thing in
 * every example, which is what makes an average over a corpus meaningful. */
#include <string.h>

#include "../../core/error.h"
#include "papa.h"

const char *const al_papa_layout_names[] = {"papa", "right_pad", NULL}; /* in al_papa_layout's order */

const char *al_papa_layout_name(al_papa_layout layout) {
    return layout == AL_LAYOUT_PAPA ? "papa" : layout == AL_LAYOUT_RIGHT_PAD ? "right_pad" : "?";
}

int al_papa_layout_from_name(const char *name) {
    if (!name) return -1;
    if (strcmp(name, "papa") == 0) return AL_LAYOUT_PAPA;
    if (strcmp(name, "right_pad") == 0) return AL_LAYOUT_RIGHT_PAD;
    return -1;
}

/* Empties out: pad ids, mask 0, the original token types (0 past the encoding, as HF pads them). */
static void clear(al_papa_example *out, const al_encoding *enc, int L, int32_t pad_id) {
    for (int i = 0; i < L; i++) {
        out->ids[i] = pad_id;
        out->mask[i] = 0;
        out->type_ids[i] = i < enc->n_tokens ? enc->type_ids[i] : 0;
        if (out->first_word) out->first_word[i] = -1;
    }
}

/* The word index when token t of the encoding starts a word, else -1. */
static int32_t first_word_at(const al_encoding *enc, int t) {
    int32_t w = enc->word_ids[t];
    if (w < 0) return -1;
    if (t > 0 && enc->word_ids[t - 1] == w && enc->sequence_ids[t - 1] == enc->sequence_ids[t]) return -1;
    return w;
}

/* Position `to` of out takes token `from` of the encoding. */
static void put(al_papa_example *out, const al_encoding *enc, int to, int from) {
    out->ids[to] = enc->ids[from];
    out->mask[to] = 1;
    if (out->first_word) out->first_word[to] = first_word_at(enc, from);
}

static al_status check_args(const al_tokenizer *tok, int L, const al_papa_example *out, al_special_ids *sp,
                            al_error *err) {
    if (!tok) return al_err(err, AL_ERR_INVALID, "papa layout: the model has no tokenizer");
    if (!out || !out->ids || !out->mask || !out->type_ids)
        return al_err(err, AL_ERR_INVALID, "papa layout: output arrays missing");
    if (L < 2) return al_err(err, AL_ERR_INVALID, "papa layout: L = %d, needs at least 2 positions", L);
    *sp = al_tokenizer_special_ids(tok);
    if (sp->pad < 0 || sp->sep < 0)
        return al_err(err, AL_ERR_INVALID, "papa layout: the tokenizer has no %s token",
                      sp->pad < 0 ? "padding" : "separator ([SEP] or </s>)");
    return AL_OK;
}

/* First and last separator among the real tokens. */
static void find_seps(const al_encoding *enc, int32_t sep, int *first, int *last) {
    *first = *last = -1;
    for (int i = 0; i < enc->n_tokens; i++) {
        if (enc->ids[i] != sep || !enc->special_mask[i]) continue;
        if (*first < 0) *first = i;
        *last = i;
    }
}

/* docs/papa.md#input-layout, sequence tasks: [CLS] A (cut to L/2 tokens) ... | [SEP] B ... [SEP]. */
static void layout_sequence(const al_encoding *enc, int L, int f, int e, al_papa_example *out) {
    const int L2 = L / 2;
    int head = f < L2 ? f : L2;
    for (int i = 0; i < head; i++) put(out, enc, i, i);
    int copied = 0;
    for (int j = f; j < e; j++, copied++) {
        int to = L2 + (j - f);
        if (to >= L - 1) break;
        put(out, enc, to, j);
    }
    put(out, enc, L - 1, e);
    if (head < f || copied < e - f) out->truncated = 1;
}

static al_status finish(al_papa_layout layout, int L, al_encoding *enc, const al_special_ids *sp, int token_task,
                        al_papa_example *out, al_error *err) {
    clear(out, enc, L, sp->pad);
    out->truncated = enc->truncated;
    if (layout == AL_LAYOUT_RIGHT_PAD) {
        for (int i = 0; i < enc->n_tokens; i++) put(out, enc, i, i);
        return AL_OK;
    }
    int f, e;
    find_seps(enc, sp->sep, &f, &e);
    if (f < 0)
        return al_err(err, AL_ERR_INVALID, "papa layout: the encoding has no separator token (the tokenizer "
                      "adds no [SEP])");
    if (token_task) {
        /* Token classification: the first [SEP] becomes padding, [SEP] is written at L-1. */
        for (int i = 0; i < enc->n_tokens; i++)
            if (i != f) put(out, enc, i, i);
        put(out, enc, L - 1, f);
        return AL_OK;
    }
    layout_sequence(enc, L, f, e, out);
    return AL_OK;
}

static al_encode_options encode_options(int L) {
    al_encode_options opt = al_encode_default_options();
    opt.add_special_tokens = 1;
    opt.max_length = L;
    opt.truncation = 1;
    return opt;
}

al_status al_papa_encode(const al_tokenizer *tok, al_papa_layout layout, const char *text, const char *text_pair,
                         int L, al_papa_example *out, al_error *err) {
    al_special_ids sp;
    al_status st = check_args(tok, L, out, &sp, err);
    if (st) return st;
    al_encode_options opt = encode_options(L);
    al_encoding enc;
    st = al_tokenizer_encode(tok, text ? text : "", text_pair, &opt, &enc, err);
    if (st) return st;
    st = finish(layout, L, &enc, &sp, 0, out, err);
    al_encoding_free(&enc);
    return st;
}

al_status al_papa_encode_words(const al_tokenizer *tok, al_papa_layout layout, const char *const *words,
                               int n_words, int L, al_papa_example *out, al_error *err) {
    al_special_ids sp;
    al_status st = check_args(tok, L, out, &sp, err);
    if (st) return st;
    if (!out->first_word) return al_err(err, AL_ERR_INVALID, "papa layout: token tasks need first_word");
    al_encode_options opt = encode_options(L);
    al_encoding enc;
    st = al_tokenizer_encode_words(tok, words, n_words, &opt, &enc, err);
    if (st) return st;
    st = finish(layout, L, &enc, &sp, 1, out, err);
    al_encoding_free(&enc);
    return st;
}
