/* tok_nfc.c: Unicode NFC of a normalised text (the tokenizer.json normalizer "NFC", ModernBERT's):
 * full canonical decomposition, canonical ordering of each run of combining marks (stable, by
 * combining class), then canonical composition (Unicode chapter 3.11) with the generated pair table.
 * A composite's source span covers every code point it was made of. */
#include <string.h>

#include "tok_internal.h"

int al_ntext_nfc(const al_ntext *in, al_ntext *out) {
    al_ntext d = {0};
    for (int i = 0; i < in->n; i++) {
        uint32_t parts[4];
        int k = al_uc_decompose(in->cp[i], parts);
        for (int j = 0; j < k; j++)
            if (al_ntext_push(&d, parts[j], in->start[i], in->end[i])) return al_ntext_free(&d), -1;
    }
    /* canonical ordering: insertion sort inside each run of non-starters (stable) */
    for (int i = 1; i < d.n; i++) {
        int cc = al_uc_ccc(d.cp[i]);
        if (cc == 0) continue;
        for (int j = i; j > 0; j--) {
            int prev = al_uc_ccc(d.cp[j - 1]);
            if (prev == 0 || prev <= cc) break;
            uint32_t c = d.cp[j];
            int32_t s = d.start[j], e = d.end[j];
            d.cp[j] = d.cp[j - 1], d.start[j] = d.start[j - 1], d.end[j] = d.end[j - 1];
            d.cp[j - 1] = c, d.start[j - 1] = s, d.end[j - 1] = e;
        }
    }
    /* composition, in place: a mark joins the last starter unless a mark of the same or a higher class
     * (or a starter) stands between them */
    int starter = -1, last_class = 256, n = 0; /* last_class: of the last code point kept (256: none) */
    for (int i = 0; i < d.n; i++) {
        uint32_t c = d.cp[i];
        int cc = al_uc_ccc(c);
        if (starter >= 0 && (last_class < cc || last_class == 0)) { /* class 0: the starter was the last kept */
            uint32_t comp = al_uc_compose_pair(d.cp[starter], c);
            if (comp) {
                d.cp[starter] = comp;
                if (d.start[i] < d.start[starter]) d.start[starter] = d.start[i];
                if (d.end[i] > d.end[starter]) d.end[starter] = d.end[i];
                continue;
            }
        }
        if (cc == 0) starter = n;
        last_class = cc;
        d.cp[n] = c, d.start[n] = d.start[i], d.end[n] = d.end[i];
        n++;
    }
    d.n = n;
    *out = d;
    return 0;
}
