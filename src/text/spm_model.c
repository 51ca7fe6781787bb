/* spm_model.c: spm.model or tokenizer.model, a SentencePiece ModelProto in protobuf wire format, read with a small bounded
 * reader (varint, length-delimited, fixed32/64): every read checks the bytes left, and an error names the
 * field at fault. Kept: pieces (piece, score, type), trainer_spec (model_type UNIGRAM or BPE, byte_fallback,
 * treat_whitespace_as_suffix), normalizer_spec (precompiled_charsmap, add_dummy_prefix,
 * remove_extra_whitespaces, escape_whitespaces). Field numbers are sentencepiece_model.proto's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "tok_internal.h"

#define F tok->source /* spm.model or tokenizer.model */

typedef struct pb_reader { const uint8_t *p, *end; } pb_reader;

/* A base-128 varint of at most 10 bytes; -1 when it runs past the end or is longer. */
static int pb_varint(pb_reader *r, uint64_t *v) {
    uint64_t x = 0;
    for (int shift = 0; shift < 70; shift += 7) {
        if (r->p >= r->end) return -1;
        uint8_t b = *r->p++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

/* One field: its number, wire type, and its value (varint / fixed) or payload (length-delimited). */
typedef struct pb_field {
    uint32_t number, wire;
    uint64_t value;
    const uint8_t *data;
    size_t len;
} pb_field;

/* Reads the next field; 0, or -1 with *why set. */
static int pb_next(pb_reader *r, pb_field *f, const char **why) {
    uint64_t key;
    if (pb_varint(r, &key)) return *why = "truncated field key", -1;
    f->number = (uint32_t)(key >> 3);
    f->wire = (uint32_t)(key & 7);
    if (f->number == 0 || key >> 32) return *why = "bad field number", -1;
    size_t left = (size_t)(r->end - r->p);
    switch (f->wire) {
    case 0:
        if (pb_varint(r, &f->value)) return *why = "truncated varint", -1;
        return 0;
    case 1:
    case 5: {
        size_t n = f->wire == 1 ? 8 : 4;
        if (left < n) return *why = "truncated fixed-size value", -1;
        f->value = 0;
        for (size_t i = 0; i < n; i++) f->value |= (uint64_t)r->p[i] << (8 * i);
        r->p += n;
        return 0;
    }
    case 2:
        if (pb_varint(r, &f->value)) return *why = "truncated length", -1;
        if (f->value > (uint64_t)(r->end - r->p)) return *why = "length runs past the end", -1;
        f->data = r->p;
        f->len = (size_t)f->value;
        r->p += f->len;
        return 0;
    default:
        return *why = "unsupported wire type (groups)", -1;
    }
}

static int wire_is(const pb_field *f, uint32_t wire) { return f->wire == wire; }

static float fixed32_float(uint64_t v) {
    uint32_t u = (uint32_t)v;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Counts the pieces (field 1 of ModelProto) so the arrays are sized once. */
static al_status count_pieces(const al_tokenizer *tok, const uint8_t *data, size_t size, int *n, al_error *err) {
    pb_reader r = {data, data + size};
    pb_field f;
    const char *why = "";
    *n = 0;
    while (r.p < r.end) {
        const size_t at = (size_t)(r.p - data);
        if (pb_next(&r, &f, &why)) return al_err(err, AL_ERR_FORMAT, "%s: byte %zu: %s", F, at, why);
        if (f.number == 1) {
            if (!wire_is(&f, 2)) return al_err(err, AL_ERR_FORMAT, "%s: pieces[%d]: not a message", F, *n);
            if (*n == (1 << 24)) return al_err(err, AL_ERR_FORMAT, "%s: more than %d pieces", F, 1 << 24);
            (*n)++;
        }
    }
    if (*n == 0) return al_err(err, AL_ERR_FORMAT, "%s: no pieces", F);
    return AL_OK;
}

static al_status read_piece(al_tokenizer *tok, const pb_field *msg, int index, al_error *err) {
    pb_reader r = {msg->data, msg->data + msg->len};
    pb_field f;
    const char *why = "", *piece = NULL;
    size_t piece_len = 0;
    float score = 0;
    uint64_t type = AL_SPM_NORMAL;
    while (r.p < r.end) {
        if (pb_next(&r, &f, &why)) return al_err(err, AL_ERR_FORMAT, "%s: pieces[%d]: %s", F, index, why);
        if (f.number == 1) {
            if (!wire_is(&f, 2)) return al_err(err, AL_ERR_FORMAT, "%s: pieces[%d].piece: not a string", F, index);
            piece = (const char *)f.data;
            piece_len = f.len;
        } else if (f.number == 2) {
            if (!wire_is(&f, 5)) return al_err(err, AL_ERR_FORMAT, "%s: pieces[%d].score: not a float", F, index);
            score = fixed32_float(f.value);
            if (!(score == score) || score > 1e30f || score < -1e30f)
                return al_err(err, AL_ERR_FORMAT, "%s: pieces[%d].score is not a finite number", F, index);
        } else if (f.number == 3) {
            if (!wire_is(&f, 0)) return al_err(err, AL_ERR_FORMAT, "%s: pieces[%d].type: not a varint", F, index);
            type = f.value;
            if (type < AL_SPM_NORMAL || type > AL_SPM_BYTE)
                return al_err(err, AL_ERR_FORMAT, "%s: pieces[%d].type %llu is not 1..6", F, index,
                              (unsigned long long)type);
        }
    }
    if (!piece || piece_len == 0) return al_err(err, AL_ERR_FORMAT, "%s: pieces[%d].piece is missing or empty", F, index);
    if (memchr(piece, 0, piece_len)) return al_err(err, AL_ERR_FORMAT, "%s: pieces[%d].piece holds a NUL byte", F, index);
    al_ntext probe = {0};
    int32_t bad = 0;
    int rc = al_utf8_decode(piece, piece_len, &probe, &bad);
    al_ntext_free(&probe);
    if (rc == -1) return al_err(err, AL_ERR_FORMAT, "%s: pieces[%d].piece: invalid UTF-8 at byte %d", F, index, (int)bad);
    if (rc || al_tok_set_token(tok, piece, piece_len, index)) return al_err(err, AL_ERR_OOM, "%s: out of memory", F);
    tok->piece_score[index] = score;
    tok->piece_type[index] = (uint8_t)type;
    return AL_OK;
}

static al_status read_trainer_spec(al_tokenizer *tok, const pb_field *msg, al_error *err) {
    pb_reader r = {msg->data, msg->data + msg->len};
    pb_field f;
    const char *why = "";
    while (r.p < r.end) {
        if (pb_next(&r, &f, &why)) return al_err(err, AL_ERR_FORMAT, "%s: trainer_spec: %s", F, why);
        if (f.number == 3 && wire_is(&f, 0) && f.value != 1 && f.value != 2) /* model_type: UNIGRAM = 1, BPE = 2 */
            return al_err(err, AL_ERR_UNSUPPORTED,
                          "%s: trainer_spec.model_type %llu is not supported (UNIGRAM = 1 or BPE = 2)", F,
                          (unsigned long long)f.value);
        if (f.number == 3 && wire_is(&f, 0)) tok->spm_bpe = f.value == 2;
        if (f.number == 24 && wire_is(&f, 0) && f.value)
            return al_err(err, AL_ERR_UNSUPPORTED, "%s: trainer_spec.treat_whitespace_as_suffix is not supported", F);
        if (f.number == 35 && wire_is(&f, 0)) tok->byte_fallback = f.value != 0;
    }
    return AL_OK;
}

static al_status read_normalizer_spec(al_tokenizer *tok, const pb_field *msg, al_error *err) {
    pb_reader r = {msg->data, msg->data + msg->len};
    pb_field f;
    const char *why = "";
    while (r.p < r.end) {
        if (pb_next(&r, &f, &why)) return al_err(err, AL_ERR_FORMAT, "%s: normalizer_spec: %s", F, why);
        if (f.number == 2) {
            if (!wire_is(&f, 2))
                return al_err(err, AL_ERR_FORMAT, "%s: normalizer_spec.precompiled_charsmap: not bytes", F);
            if (f.len) {
                char what[sizeof tok->source + 48];
                snprintf(what, sizeof what, "%s: normalizer_spec.precompiled_charsmap", F);
                al_status st = al_spm_set_charsmap(tok, f.data, f.len, what, err);
                if (st) return st;
            }
        } else if (f.number >= 3 && f.number <= 5 && wire_is(&f, 0)) {
            int *slot[3] = {&tok->add_dummy_prefix, &tok->remove_extra_whitespaces, &tok->escape_whitespaces};
            *slot[f.number - 3] = f.value != 0;
        }
    }
    return AL_OK;
}

typedef struct scored_piece { float score; int id; } scored_piece;

static int by_score_desc(const void *a, const void *b) {
    const scored_piece *x = a, *y = b;
    return x->score > y->score ? -1 : x->score < y->score ? 1 : x->id - y->id;
}

/* SentencePiece BPE merges the adjacent pair whose concatenation is the highest-scoring NORMAL or USER_DEFINED
 * piece, the leftmost on equal scores: the merge rank of a piece is its place among the distinct scores, high
 * to low (tok_bpe.c pops the lowest rank, leftmost first). 0 / -1 OOM. */
static int set_score_ranks(al_tokenizer *tok) {
    tok->kind = AL_TOK_BPE;
    tok->score_rank = malloc((size_t)tok->n_pieces * sizeof *tok->score_rank);
    scored_piece *order = malloc((size_t)tok->n_pieces * sizeof *order);
    if (!tok->score_rank || !order) return free(order), -1;
    int n = 0;
    for (int i = 0; i < tok->n_pieces; i++) {
        tok->score_rank[i] = -1;
        if (tok->piece_type[i] == AL_SPM_NORMAL || tok->piece_type[i] == AL_SPM_USER_DEFINED)
            order[n++] = (scored_piece){tok->piece_score[i], i};
    }
    qsort(order, (size_t)n, sizeof *order, by_score_desc);
    for (int k = 0, rank = -1; k < n; k++) {
        if (k == 0 || order[k].score != order[k - 1].score) rank++;
        tok->score_rank[order[k].id] = rank;
    }
    free(order);
    return 0;
}

al_status al_tok_load_spm_model(al_tokenizer *tok, const char *name, const uint8_t *data, size_t size,
                                al_error *err) {
    tok->kind = AL_TOK_UNIGRAM;
    snprintf(tok->source, sizeof tok->source, "%s", name);
    tok->lowercase = tok->strip_accents = tok->clean_text = tok->handle_chinese_chars = 0;
    /* NormalizerSpec's defaults (proto2 [default = true]) */
    tok->add_dummy_prefix = tok->remove_extra_whitespaces = tok->escape_whitespaces = 1;
    int n = 0;
    al_status st = count_pieces(tok, data, size, &n, err);
    if (st) return st;
    if (al_unigram_alloc(tok, n)) return al_err(err, AL_ERR_OOM, "%s: out of memory", F);
    pb_reader r = {data, data + size};
    pb_field f;
    const char *why = "";
    int index = 0;
    while (r.p < r.end && st == AL_OK) {
        if (pb_next(&r, &f, &why)) return al_err(err, AL_ERR_FORMAT, "%s: %s", F, why); /* checked by count_pieces */
        if (f.number == 1) st = read_piece(tok, &f, index++, err);
        else if (f.number == 2 && wire_is(&f, 2)) st = read_trainer_spec(tok, &f, err);
        else if (f.number == 3 && wire_is(&f, 2)) st = read_normalizer_spec(tok, &f, err);
        else if (f.number <= 3) return al_err(err, AL_ERR_FORMAT, "%s: field %u has the wrong wire type", F, f.number);
    }
    if (st) return st;
    tok->unk_id = -1;
    for (int i = 0; i < n; i++)
        if (tok->piece_type[i] == AL_SPM_UNKNOWN) {
            if (tok->unk_id >= 0) return al_err(err, AL_ERR_FORMAT, "%s: pieces[%d] is a second UNKNOWN piece", F, i);
            tok->unk_id = i;
        }
    if (tok->unk_id < 0) return al_err(err, AL_ERR_FORMAT, "%s: no piece of type UNKNOWN", F);
    al_unigram_finish(tok);
    if (tok->spm_bpe && set_score_ranks(tok)) return al_err(err, AL_ERR_OOM, "%s: out of memory", F);
    return AL_OK;
}
