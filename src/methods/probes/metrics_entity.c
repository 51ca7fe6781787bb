/* metrics_entity.c: entity-level micro precision, recall and F1 as seqeval computes them by default (the
 * conlleval-style chunking of docs/probes.md, "Entity F1"), over the labelled tokens of each sentence. */
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../train/train.h" /* AL_IGNORE_INDEX */
#include "metrics.h"

/* A tag split as seqeval splits it: the first character ('O', 'B', 'I', 'E', 'S') and the type after the
 * first '-' ("_" for bare tags and for 'O'). */
typedef struct tag {
    char kind;
    const char *type;
} tag;

typedef struct chunk {
    const char *type;
    int start, end; /* token indices within the sentence's labelled tokens, inclusive */
} chunk;

static int same_type(const char *a, const char *b) { return strcmp(a, b) == 0; }

static int chunk_ends(tag prev, tag cur) {
    if (prev.kind == 'E' || prev.kind == 'S') return 1;
    if ((prev.kind == 'B' || prev.kind == 'I') && (cur.kind == 'B' || cur.kind == 'S' || cur.kind == 'O')) return 1;
    return prev.kind != 'O' && !same_type(prev.type, cur.type);
}

static int chunk_starts(tag prev, tag cur) {
    if (cur.kind == 'B' || cur.kind == 'S') return 1;
    if ((prev.kind == 'E' || prev.kind == 'S' || prev.kind == 'O') && (cur.kind == 'E' || cur.kind == 'I')) return 1;
    return cur.kind != 'O' && !same_type(prev.type, cur.type);
}

/* Entities of one sentence whose labelled tokens are ids[keep[0..n)] (the caller leaves out tokens with
 * gold -100). Returns the number written to out (at most n). */
static int entities(const tag *tags, const int32_t *ids, const int32_t *keep, int n, chunk *out) {
    static const tag outside = {'O', "_"};
    tag prev = outside;
    int begin = 0, k = 0;
    for (int j = 0; j <= n; j++) { /* one trailing 'O' closes the last entity */
        const tag cur = j < n ? tags[ids[keep[j]]] : outside;
        if (chunk_ends(prev, cur)) out[k++] = (chunk){prev.type, begin, j - 1};
        if (chunk_starts(prev, cur)) begin = j;
        prev = cur;
    }
    return k;
}

/* Entities come out ordered by start and disjoint, so matches are found by a merge. */
static int count_matches(const chunk *a, int na, const chunk *b, int nb) {
    int i = 0, j = 0, m = 0;
    while (i < na && j < nb) {
        if (a[i].start < b[j].start) i++;
        else if (a[i].start > b[j].start) j++;
        else {
            m += a[i].end == b[j].end && same_type(a[i].type, b[j].type);
            i++;
            j++;
        }
    }
    return m;
}

static al_status parse_tags(const char *const *names, int n_labels, tag *tags, al_error *err) {
    for (int k = 0; k < n_labels; k++) {
        const char *s = names[k];
        if (!s) return al_err(err, AL_ERR_INVALID, "entity F1: label_names[%d] is NULL", k);
        const int bare = (s[0] == 'B' || s[0] == 'I' || s[0] == 'E' || s[0] == 'S') && s[1] == '\0';
        const int prefixed = (s[0] == 'B' || s[0] == 'I' || s[0] == 'E' || s[0] == 'S') && s[1] == '-' && s[2] != '\0';
        if (strcmp(s, "O") != 0 && !bare && !prefixed)
            return al_err(err, AL_ERR_INVALID,
                          "entity F1: label_names[%d] = \"%s\" is not O, B-X, I-X, E-X or S-X (use accuracy for tags "
                          "without entity prefixes)",
                          k, s);
        tags[k].kind = s[0];
        tags[k].type = prefixed ? s + 2 : "_";
    }
    return AL_OK;
}

al_status al_metric_entity_f1(const int32_t *pred, const int32_t *gold, const int32_t *offsets, int n_sentences,
                              const char *const *label_names, int n_labels, al_entity_scores *out, al_error *err) {
    if (!pred || !gold || !offsets || !label_names || !out)
        return al_err(err, AL_ERR_INVALID, "entity F1: an argument is NULL");
    if (n_sentences < 0 || n_labels < 1)
        return al_err(err, AL_ERR_INVALID, "entity F1: n_sentences %d, n_labels %d", n_sentences, n_labels);
    int longest = 0;
    for (int s = 0; s < n_sentences; s++) {
        if (offsets[s + 1] < offsets[s] || offsets[s] < 0)
            return al_err(err, AL_ERR_INVALID, "entity F1: offsets[%d..%d] = %d, %d are not non-decreasing from 0", s,
                          s + 1, (int)offsets[s], (int)offsets[s + 1]);
        if (offsets[s + 1] - offsets[s] > longest) longest = offsets[s + 1] - offsets[s];
    }
    const int total = n_sentences > 0 ? offsets[n_sentences] : 0;
    int labelled = 0;
    for (int i = 0; i < total; i++) {
        if (gold[i] == AL_IGNORE_INDEX) continue;
        if (gold[i] < 0 || gold[i] >= n_labels || pred[i] < 0 || pred[i] >= n_labels)
            return al_err(err, AL_ERR_INVALID, "entity F1: token %d has gold %d and pred %d; both must be in [0, %d)", i,
                          (int)gold[i], (int)pred[i], n_labels);
        labelled++;
    }
    if (labelled == 0) return al_err(err, AL_ERR_INVALID, "entity F1: no labelled token among %d", total);
    tag *tags = malloc(sizeof(tag) * (size_t)n_labels);
    int32_t *keep = malloc(sizeof(int32_t) * ((size_t)longest + 1));
    chunk *ct = malloc(sizeof(chunk) * ((size_t)longest + 1)), *cp = malloc(sizeof(chunk) * ((size_t)longest + 1));
    al_status st = AL_OK;
    if (!tags || !keep || !ct || !cp) st = al_err(err, AL_ERR_OOM, "entity F1: out of memory");
    if (st == AL_OK) st = parse_tags(label_names, n_labels, tags, err);
    int n_true = 0, n_pred = 0, n_correct = 0;
    for (int s = 0; s < n_sentences && st == AL_OK; s++) {
        const int32_t *g = gold + offsets[s], *p = pred + offsets[s];
        int n = 0;
        for (int i = 0; i < offsets[s + 1] - offsets[s]; i++)
            if (g[i] != AL_IGNORE_INDEX) keep[n++] = i;
        const int nt = entities(tags, g, keep, n, ct), np = entities(tags, p, keep, n, cp);
        n_true += nt;
        n_pred += np;
        n_correct += count_matches(ct, nt, cp, np);
    }
    free(tags);
    free(keep);
    free(ct);
    free(cp);
    if (st != AL_OK) return st;
    out->n_true = n_true;
    out->n_pred = n_pred;
    out->n_correct = n_correct;
    out->precision = n_pred > 0 ? (double)n_correct / n_pred : 0.0;
    out->recall = n_true > 0 ? (double)n_correct / n_true : 0.0;
    const double ps = out->precision + out->recall;
    out->f1 = ps > 0.0 ? 2.0 * out->precision * out->recall / ps : 0.0;
    return AL_OK;
}
