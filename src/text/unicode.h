/* unicode.h: Unicode properties the tokenizers need. The tables are generated at build time by
 * scripts/gen_unicode_tables.py from Debian's unicode-data (build/<dir>/generated/unicode_tables.c);
 * the lookups (binary search, Hangul, Final_Sigma) live in unicode.c. */
#ifndef AL_TEXT_UNICODE_H
#define AL_TEXT_UNICODE_H

#include <stdint.h>

/* General categories; the order matches CATEGORIES in gen_unicode_tables.py. */
typedef enum al_uc_cat {
    AL_UC_LU, AL_UC_LL, AL_UC_LT, AL_UC_LM, AL_UC_LO,
    AL_UC_MN, AL_UC_MC, AL_UC_ME,
    AL_UC_ND, AL_UC_NL, AL_UC_NO,
    AL_UC_PC, AL_UC_PD, AL_UC_PS, AL_UC_PE, AL_UC_PI, AL_UC_PF, AL_UC_PO,
    AL_UC_SM, AL_UC_SC, AL_UC_SK, AL_UC_SO,
    AL_UC_ZS, AL_UC_ZL, AL_UC_ZP,
    AL_UC_CC, AL_UC_CF, AL_UC_CS, AL_UC_CO, AL_UC_CN,
} al_uc_cat;

/* ---- generated tables */
typedef struct al_uc_range { uint32_t lo, hi; int value; } al_uc_range;
typedef struct al_uc_decomp { uint32_t cp; int offset, len; } al_uc_decomp;
typedef struct al_uc_lower_map { uint32_t cp; int len; uint32_t to[3]; } al_uc_lower_map;
typedef struct al_uc_compose { uint32_t first, second, composite; } al_uc_compose;

extern const al_uc_range al_uc_category_ranges[];
extern const int al_uc_category_count;
extern const al_uc_range al_uc_ccc_ranges[];
extern const int al_uc_ccc_count;
extern const al_uc_decomp al_uc_decomp_index[];
extern const int al_uc_decomp_count;
extern const uint32_t al_uc_decomp_data[];
extern const al_uc_lower_map al_uc_lower_table[];
extern const int al_uc_lower_count;
extern const al_uc_range al_uc_cased_ranges[];
extern const int al_uc_cased_count;
extern const al_uc_range al_uc_case_ignorable_ranges[];
extern const int al_uc_case_ignorable_count;
extern const al_uc_compose al_uc_compose_table[]; /* sorted by (first, second) */
extern const int al_uc_compose_count;

/* ---- lookups (unicode.c) */
al_uc_cat al_uc_category(uint32_t cp);
int al_uc_is_letter(uint32_t cp);  /* L* */
int al_uc_is_number(uint32_t cp);  /* N* */
int al_uc_is_punct(uint32_t cp);   /* P* */
int al_uc_ccc(uint32_t cp);        /* canonical combining class */
/* JavaScript's \s: TAB LF VT FF CR SP NBSP ZWNBSP, Zs, LS, PS. */
int al_uc_is_js_space(uint32_t cp);
/* Canonical decomposition of one code point (Hangul algorithmically); writes at most 4 (the longest
 * full canonical decomposition) and returns the count. */
int al_uc_decompose(uint32_t cp, uint32_t out[4]);
/* Full lower-case mapping without context (1..3 code points). */
int al_uc_lower(uint32_t cp, uint32_t out[3]);
int al_uc_is_cased(uint32_t cp);
int al_uc_is_case_ignorable(uint32_t cp);
/* The primary composite of first + second (Hangul algorithmically), 0 when none. */
uint32_t al_uc_compose_pair(uint32_t first, uint32_t second);

/* JavaScript's toLowerCase for cp[i] of a text: full mapping, and Final_Sigma for U+03A3 judged on
 * the whole text (1..3 code points written). */
int al_uc_lower_in_context(const uint32_t *cp, int n, int i, uint32_t out[3]);

#endif
