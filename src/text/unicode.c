/* unicode.c: lookups over the generated Unicode tables (binary search), Hangul decomposition,
 * NFD with canonical ordering, and JavaScript-style lower-casing with Final_Sigma. */
#include "unicode.h"

#include <stddef.h>


static const al_uc_range *find_range(const al_uc_range *r, int n, uint32_t cp) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (cp < r[mid].lo) hi = mid - 1;
        else if (cp > r[mid].hi) lo = mid + 1;
        else return &r[mid];
    }
    return NULL;
}

al_uc_cat al_uc_category(uint32_t cp) {
    const al_uc_range *r = find_range(al_uc_category_ranges, al_uc_category_count, cp);
    return r ? (al_uc_cat)r->value : AL_UC_CN;
}

int al_uc_is_letter(uint32_t cp) { return al_uc_category(cp) <= AL_UC_LO; }
int al_uc_is_number(uint32_t cp) {
    al_uc_cat c = al_uc_category(cp);
    return c >= AL_UC_ND && c <= AL_UC_NO;
}
int al_uc_is_punct(uint32_t cp) {
    al_uc_cat c = al_uc_category(cp);
    return c >= AL_UC_PC && c <= AL_UC_PO;
}

int al_uc_ccc(uint32_t cp) {
    const al_uc_range *r = find_range(al_uc_ccc_ranges, al_uc_ccc_count, cp);
    return r ? r->value : 0;
}

int al_uc_is_js_space(uint32_t cp) {
    if ((cp >= 9 && cp <= 13) || cp == 0x20 || cp == 0xA0 || cp == 0xFEFF) return 1;
    al_uc_cat c = al_uc_category(cp);
    return c == AL_UC_ZS || c == AL_UC_ZL || c == AL_UC_ZP;
}

int al_uc_is_cased(uint32_t cp) {
    return find_range(al_uc_cased_ranges, al_uc_cased_count, cp) != NULL;
}
int al_uc_is_case_ignorable(uint32_t cp) {
    return find_range(al_uc_case_ignorable_ranges, al_uc_case_ignorable_count, cp) != NULL;
}

/* Hangul syllable constants (Unicode chapter 3.12). */
enum { SBASE = 0xAC00, LBASE = 0x1100, VBASE = 0x1161, TBASE = 0x11A7, LCOUNT = 19, VCOUNT = 21,
       TCOUNT = 28, NCOUNT = VCOUNT * TCOUNT, SCOUNT = LCOUNT * NCOUNT };

int al_uc_decompose(uint32_t cp, uint32_t out[4]) {
    if (cp >= SBASE && cp < SBASE + SCOUNT) {
        uint32_t s = cp - SBASE;
        out[0] = LBASE + s / NCOUNT;
        out[1] = VBASE + (s % NCOUNT) / TCOUNT;
        if (s % TCOUNT == 0) return 2;
        out[2] = TBASE + s % TCOUNT;
        return 3;
    }
    int lo = 0, hi = al_uc_decomp_count - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const al_uc_decomp *d = &al_uc_decomp_index[mid];
        if (cp < d->cp) hi = mid - 1;
        else if (cp > d->cp) lo = mid + 1;
        else {
            int n = d->len > 4 ? 4 : d->len;
            for (int i = 0; i < n; i++) out[i] = al_uc_decomp_data[d->offset + i];
            return n;
        }
    }
    out[0] = cp;
    return 1;
}

int al_uc_lower(uint32_t cp, uint32_t out[3]) {
    if (cp < 0x80) {
        out[0] = (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
        return 1;
    }
    int lo = 0, hi = al_uc_lower_count - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const al_uc_lower_map *m = &al_uc_lower_table[mid];
        if (cp < m->cp) hi = mid - 1;
        else if (cp > m->cp) lo = mid + 1;
        else {
            for (int i = 0; i < m->len; i++) out[i] = m->to[i];
            return m->len;
        }
    }
    out[0] = cp;
    return 1;
}

/* Final_Sigma (Unicode 3.13): a cased letter then case-ignorables before, and no case-ignorables
 * then cased letter after. */
static int is_final_sigma(const uint32_t *cp, int n, int i) {
    int j = i - 1;
    while (j >= 0 && al_uc_is_case_ignorable(cp[j])) j--;
    if (j < 0 || !al_uc_is_cased(cp[j])) return 0;
    j = i + 1;
    while (j < n && al_uc_is_case_ignorable(cp[j])) j++;
    return !(j < n && al_uc_is_cased(cp[j]));
}

int al_uc_lower_in_context(const uint32_t *cp, int n, int i, uint32_t out[3]) {
    if (cp[i] == 0x3A3 && is_final_sigma(cp, n, i)) {
        out[0] = 0x3C2;
        return 1;
    }
    return al_uc_lower(cp[i], out);
}

uint32_t al_uc_compose_pair(uint32_t first, uint32_t second) {
    if (first >= LBASE && first < LBASE + LCOUNT && second >= VBASE && second < VBASE + VCOUNT)
        return SBASE + ((first - LBASE) * VCOUNT + (second - VBASE)) * TCOUNT;
    if (first >= SBASE && first < SBASE + SCOUNT && (first - SBASE) % TCOUNT == 0 && second > TBASE &&
        second < TBASE + TCOUNT)
        return first + (second - TBASE);
    int lo = 0, hi = al_uc_compose_count - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        const al_uc_compose *c = &al_uc_compose_table[mid];
        if (first < c->first || (first == c->first && second < c->second)) hi = mid - 1;
        else if (first > c->first || second > c->second) lo = mid + 1;
        else return c->composite;
    }
    return 0;
}
