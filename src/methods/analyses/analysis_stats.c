/* analysis_stats.c: key classes ([CLS], [SEP], punctuation), the per-head attention to them
 * (Sun & Marasovic Figures 1, 5, 6; exact or reference-code averaging) and |effective - standard|
 * with its Frobenius norms. Contracts in attnlab.h, "attention analyses". */
#include <math.h>
#include <string.h>

#include "../../core/error.h"
#include "../../text/unicode.h"

/* Decodes one UTF-8 code point at s (length n); returns its byte length, 0 on a bad sequence. */
static int utf8_next(const unsigned char *s, size_t n, uint32_t *cp) {
    if (s[0] < 0x80) return *cp = s[0], 1;
    int len = (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (!len || (size_t)len > n) return 0;
    uint32_t c = s[0] & (0x7F >> len);
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        c = (c << 6) | (s[i] & 0x3F);
    }
    *cp = c;
    return len;
}

static int is_punct_token(const char *text) {
    if (!text) return 0;
    if (strncmp(text, "##", 2) == 0 && text[2]) text += 2;
    else if ((unsigned char)text[0] == 0xC4 && (unsigned char)text[1] == 0xA0) text += 2; /* BPE G. */
    else if ((unsigned char)text[0] == 0xE2 && (unsigned char)text[1] == 0x96 &&
             (unsigned char)text[2] == 0x81)
        text += 3; /* SentencePiece's word mark */
    const unsigned char *s = (const unsigned char *)text;
    size_t n = strlen(text);
    if (!n) return 0;
    while (n) {
        uint32_t cp;
        int len = utf8_next(s, n, &cp);
        if (!len) return 0;
        int ascii_symbol = cp < 0x80 && cp > 0x20 && !(cp >= '0' && cp <= '9') &&
                           !((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z');
        if (!ascii_symbol && !al_uc_is_punct(cp)) return 0;
        s += len;
        n -= (size_t)len;
    }
    return 1;
}

void al_key_classes(const al_tokenizer *tok, const int32_t *ids, const int32_t *mask, int L,
                    uint8_t *classes) {
    memset(classes, 0, (size_t)L);
    if (!tok) {
        int first = -1, last = -1;
        for (int t = 0; t < L; t++)
            if (!mask || mask[t]) {
                if (first < 0) first = t;
                last = t;
            }
        if (first >= 0) classes[first] |= AL_KEY_CLS;
        if (last > first) classes[last] |= AL_KEY_SEP;
        return;
    }
    const al_special_ids sp = al_tokenizer_special_ids(tok);
    for (int t = 0; t < L; t++) {
        if (mask && !mask[t]) continue;
        if (sp.cls >= 0 && ids[t] == sp.cls) classes[t] |= AL_KEY_CLS;
        else if (sp.sep >= 0 && ids[t] == sp.sep) classes[t] |= AL_KEY_SEP;
        else if (is_punct_token(al_tokenizer_id_to_token(tok, ids[t]))) classes[t] |= AL_KEY_PUNCT;
    }
}

static al_status check_shape(const char *what, int NL, int B, int H, int L, al_error *err) {
    if (NL < 1 || B < 1 || H < 1 || L < 1)
        return al_err(err, AL_ERR_INVALID, "%s: empty shape [%d, %d, %d, %d]", what, NL, B, H, L);
    return AL_OK;
}

al_status al_attention_token_stats(const float *attentions, int NL, int B, int H, int L,
                                   const int32_t *mask, const uint8_t *classes, al_average avg,
                                   double *sums, double *count, al_error *err) {
    al_status st = check_shape("token stats", NL, B, H, L, err);
    if (st) return st;
    if (!attentions || !classes || !sums || !count)
        return al_err(err, AL_ERR_INVALID, "token stats: attentions, classes, sums, count required");
    const size_t NLH = (size_t)NL * H;
    int used = 0;
    for (int b = 0; b < B; b++) {
        const int32_t *m = mask ? mask + (size_t)b * L : NULL;
        const uint8_t *cl = classes + (size_t)b * L;
        int n_real = 0, cls_pos = -1;
        for (int t = 0; t < L; t++) {
            n_real += !m || m[t];
            if (cls_pos < 0 && (cl[t] & AL_KEY_CLS)) cls_pos = t;
        }
        if (avg == AL_AVERAGE_EXACT && n_real == 0) continue;
        used++;
        for (int l = 0; l < NL; l++)
            for (int h = 0; h < H; h++) {
                const float *A = attentions + ((((size_t)l * B + b) * H + h) * L) * L;
                double cls = 0, sep = 0, punct = 0;
                if (avg == AL_AVERAGE_EXACT) {
                    for (int i = 0; i < L; i++) {
                        if (m && !m[i]) continue;
                        const float *row = A + (size_t)i * L;
                        for (int j = 0; j < L; j++) {
                            if (!cl[j] || (m && !m[j])) continue;
                            if (cl[j] & AL_KEY_CLS) cls += row[j];
                            if (cl[j] & AL_KEY_SEP) sep += row[j];
                            if (cl[j] & AL_KEY_PUNCT) punct += row[j];
                        }
                    }
                    cls /= n_real, sep /= n_real, punct /= n_real;
                } else {
                    /* column means over all L rows; [SEP] the max of its columns' means */
                    double sep_best = 0;
                    int have_sep = 0;
                    for (int j = 0; j < L; j++) {
                        if (!cl[j]) continue;
                        double col = 0;
                        for (int i = 0; i < L; i++) col += A[(size_t)i * L + j];
                        col /= L;
                        if (j == cls_pos) cls = col;
                        if (cl[j] & AL_KEY_SEP) {
                            if (!have_sep || col > sep_best) sep_best = col;
                            have_sep = 1;
                        }
                        if (cl[j] & AL_KEY_PUNCT) punct += col;
                    }
                    sep = sep_best;
                    cls /= B, sep /= B, punct /= B; /* the batch mean */
                }
                sums[0 * NLH + (size_t)l * H + h] += cls;
                sums[1 * NLH + (size_t)l * H + h] += sep;
                sums[2 * NLH + (size_t)l * H + h] += punct;
            }
    }
    *count += avg == AL_AVERAGE_EXACT ? used : 1;
    return AL_OK;
}

al_status al_attention_diff(const float *standard, const float *effective, int NL, int B, int H,
                            int L, const int32_t *mask, float *abs_out, float *fro_out,
                            al_error *err) {
    al_status st = check_shape("attention diff", NL, B, H, L, err);
    if (st) return st;
    if (!standard || !effective)
        return al_err(err, AL_ERR_INVALID, "attention diff: standard and effective are required");
    for (int l = 0; l < NL; l++)
        for (int b = 0; b < B; b++) {
            const int32_t *m = mask ? mask + (size_t)b * L : NULL;
            for (int h = 0; h < H; h++) {
                const size_t bh = ((size_t)l * B + b) * H + h, off = bh * L * L;
                double fro = 0;
                for (int i = 0; i < L; i++)
                    for (int j = 0; j < L; j++) {
                        const size_t e = off + (size_t)i * L + j;
                        const float d = fabsf(effective[e] - standard[e]);
                        if (abs_out) abs_out[e] = d;
                        if (!m || (m[i] && m[j])) fro += (double)d * d;
                    }
                if (fro_out) fro_out[bh] = (float)sqrt(fro);
            }
        }
    return AL_OK;
}
