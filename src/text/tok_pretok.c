/* tok_pretok.c: the pre-tokenizer patterns of byte-level BPE, written out as code over Unicode categories
 * (JavaScript semantics, as the Hugging Face JS tokenizers run them: \s is JS whitespace, \p{L} / \p{N} from
 * the generated tables). Each function returns the length of the pattern's match at i (at least 1); the
 * patterns and the strings that name them in a tokenizer.json are in docs/tokenizers.md. */
#include <string.h>

#include "tok_internal.h"

/* The regex strings of tokenizer.json's Split pre-tokenizer that name each pattern. */
static const char GPT2_REGEX[] = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
static const char QWEN2_REGEX[] =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|"
    "\\s+(?!\\S)|\\s+";

int al_pretok_from_regex(const char *regex) {
    if (strcmp(regex, GPT2_REGEX) == 0) return AL_PRETOK_GPT2;
    if (strcmp(regex, QWEN2_REGEX) == 0) return AL_PRETOK_QWEN2;
    return -1;
}

static int is_space(uint32_t c) { return al_uc_is_js_space(c); }
static int is_other(uint32_t c) { return !is_space(c) && !al_uc_is_letter(c) && !al_uc_is_number(c); }
static int is_newline(uint32_t c) { return c == '\r' || c == '\n'; }
/* Simple case folding of the letters a contraction can hold (U+017F, the long s, folds to s). */
static uint32_t fold_case(uint32_t c) { return c >= 'A' && c <= 'Z' ? c + 32 : c == 0x17F ? 's' : c; }

/* 's|'t|'re|'ve|'m|'ll|'d at i (case-folded when fold), else 0. */
static int contraction(const uint32_t *cp, int n, int i, int fold) {
    if (cp[i] != '\'' || i + 1 >= n) return 0;
    uint32_t c = fold ? fold_case(cp[i + 1]) : cp[i + 1];
    if (c == 's' || c == 't' || c == 'm' || c == 'd') return 2;
    if (i + 2 >= n) return 0;
    uint32_t d = fold ? fold_case(cp[i + 2]) : cp[i + 2];
    if ((c == 'r' && d == 'e') || (c == 'v' && d == 'e') || (c == 'l' && d == 'l')) return 3;
    return 0;
}

/* \s+(?!\S)|\s+ at i (cp[i] is whitespace): a run followed by a non-space leaves its last space to
 * prefix the next piece, unless the run is that one space. */
static int space_run(const uint32_t *cp, int n, int i) {
    int k = i;
    while (k < n && is_space(cp[k])) k++;
    if (k == i) return 1; /* unreachable for the callers; guarantees progress */
    if (k == n || k - i == 1) return k - i;
    return k - i - 1;
}

/* GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
static int match_gpt2(const uint32_t *cp, int n, int i) {
    int c = contraction(cp, n, i, 0);
    if (c) return c;
    int j = i + (cp[i] == ' ' && i + 1 < n ? 1 : 0);
    for (int pass = 0; pass < 3; pass++) {
        int k = j;
        while (k < n && (pass == 0 ? al_uc_is_letter(cp[k]) : pass == 1 ? al_uc_is_number(cp[k]) : is_other(cp[k])))
            k++;
        if (k > j) return k - i;
    }
    return space_run(cp, n, i); /* the optional space led nowhere: cp[i] is whitespace */
}

/* Qwen2: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|
 * \s+(?!\S)|\s+ */
static int match_qwen2(const uint32_t *cp, int n, int i) {
    int c = contraction(cp, n, i, 1);
    if (c) return c;
    /* one character that is not a newline, letter or number, then letters (or letters alone) */
    int j = i;
    if (!is_newline(cp[i]) && !al_uc_is_letter(cp[i]) && !al_uc_is_number(cp[i]) && i + 1 < n &&
        al_uc_is_letter(cp[i + 1]))
        j = i + 1;
    if (al_uc_is_letter(cp[j])) {
        while (j < n && al_uc_is_letter(cp[j])) j++;
        return j - i;
    }
    if (al_uc_is_number(cp[i])) return 1; /* digits one at a time */
    j = i + (cp[i] == ' ' && i + 1 < n && is_other(cp[i + 1]) ? 1 : 0);
    if (is_other(cp[j])) {
        while (j < n && is_other(cp[j])) j++;
        while (j < n && is_newline(cp[j])) j++;
        return j - i;
    }
    /* cp[i] is whitespace: \s*[\r\n]+ ends after the run's last newline */
    int k = i, last_newline = -1;
    while (k < n && is_space(cp[k])) {
        if (is_newline(cp[k])) last_newline = k;
        k++;
    }
    if (last_newline >= 0) return last_newline + 1 - i;
    return space_run(cp, n, i);
}

int al_pretok_match(int pattern, const uint32_t *cp, int n, int i) {
    return pattern == AL_PRETOK_QWEN2 ? match_qwen2(cp, n, i) : match_gpt2(cp, n, i);
}
