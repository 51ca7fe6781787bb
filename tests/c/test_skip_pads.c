/* test_skip_pads.c: a forward pass packed to its real tokens (al_forward_params.skip_pads, docs/head_policies.md
 * "Skipping padding") gives the unpacked pass's numbers at every real token (to float32 rounding), zeros at
 * the pads, and the same bits on any thread count and whether its linear layers run on the packing pads too
 * or on the real rows only (al_forward_params.pad_rows, docs/speed.md).
 *
 * Batches are laid out as PAPA lays them out (docs/papa.md#input-layout): real tokens at the start of a long
 * row of padding, a pair's second segment from L/2, and the last separator at L - 1. Every golden family
 * (RoBERTa's positions skip the pads, DistilBERT has no token types, ELECTRA projects its embeddings, ModernBERT
 * turns queries and keys by their positions and reads keys within a window, pads between a pair's segments) runs
 * with all heads standard and with every head mode (constant, mix, zero), the constants different at every
 * position so that reading one at a wrong position would show. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "core/rng.h"
#include "core/threadpool.h"

enum { B = 3, L = 24 };

typedef struct outputs {
    float *hidden, *attn, *values, *logits;
    size_t n_hidden, n_attn, n_values, n_logits;
} outputs;

static void outputs_free(outputs *o) { free(o->hidden), free(o->attn), free(o->values), free(o->logits); }

static int run(const al_model *m, const al_batch *batch, const al_head_policy *pol, int skip_pads, int pad_rows,
               al_threadpool *pool, outputs *o) {
    const al_config *c = al_model_config(m);
    const size_t NL = (size_t)c->n_layers, H = (size_t)c->n_heads, D = (size_t)c->hidden_size;
    memset(o, 0, sizeof *o);
    o->n_hidden = (NL + 1) * B * L * D;
    o->n_attn = NL * B * H * L * L;
    o->n_values = NL * B * H * L * (size_t)c->head_dim;
    o->n_logits = al_model_has_mlm_head(m) ? (size_t)B * L * c->vocab_size : 0;
    /* filled with NaN: whatever the pass leaves unwritten would show */
    float **bufs[4] = {&o->hidden, &o->attn, &o->values, &o->logits};
    const size_t sizes[4] = {o->n_hidden, o->n_attn, o->n_values, o->n_logits};
    for (int k = 0; k < 4; k++) {
        *bufs[k] = sizes[k] ? malloc(sizeof(float) * sizes[k]) : NULL;
        for (size_t i = 0; i < sizes[k]; i++) (*bufs[k])[i] = NAN;
    }
    al_forward_outputs out = {
        .hidden_states = o->hidden,
        .attentions = o->attn,
        .values = o->values,
        .mlm_logits = o->logits,
    };
    al_forward_params p = al_forward_default_params();
    p.policies = pol;
    p.skip_pads = skip_pads;
    p.pad_rows = pad_rows;
    p.pool = pool;
    al_error err = {0};
    al_status st = al_forward(m, batch, &p, &out, &err);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    return st == AL_OK;
}

/* Largest |a - b| / max(1, |a|) over the real entries of blocks of L rows of per_row floats; the blocks run
 * [.., B, group, L, per_row] (group: H for per-head outputs, else 1), and with square the row's entries are
 * key positions, real only when that key is. Entries at pads in b must be exactly 0. */
typedef struct compare {
    double max_rel;
    int pads_nonzero, nonfinite;
} compare;

static void compare_rows(compare *cmp, const float *a, const float *b, size_t n_blocks, size_t group, size_t per_row,
                         const int32_t *mask, int square) {
    for (size_t blk = 0; blk < n_blocks; blk++) {
        const size_t seq = blk % ((size_t)B * group) / group;
        for (size_t i = 0; i < L; i++)
            for (size_t k = 0; k < per_row; k++) {
                const size_t at = (blk * L + i) * per_row + k;
                const int real = mask[seq * L + i] && (!square || mask[seq * L + k]);
                if (!isfinite(b[at])) cmp->nonfinite++;
                if (!real) {
                    cmp->pads_nonzero += b[at] != 0.0f;
                    continue;
                }
                const double d = fabs((double)a[at] - b[at]) / fmax(1.0, fabs((double)a[at]));
                if (d > cmp->max_rel || isnan(d)) cmp->max_rel = isnan(d) ? INFINITY : d;
            }
    }
}

static double worst = 0.0;
static int n_identical = 0, n_cases = 0, n_rows_identical = 0;

static void check_case(const char *what, const al_model *m, const al_batch *batch, const al_head_policy *pol) {
    const al_config *c = al_model_config(m);
    outputs full, packed;
    if (!run(m, batch, pol, 0, 0, NULL, &full)) return;
    if (!run(m, batch, pol, 1, 0, NULL, &packed)) {
        outputs_free(&full);
        return;
    }
    compare cmp = {0};
    const size_t NL = (size_t)c->n_layers, H = (size_t)c->n_heads;
    compare_rows(&cmp, full.hidden, packed.hidden, (NL + 1) * B, 1, (size_t)c->hidden_size, batch->attention_mask, 0);
    compare_rows(&cmp, full.attn, packed.attn, NL * B * H, H, L, batch->attention_mask, 1);
    compare_rows(&cmp, full.values, packed.values, NL * B * H, H, (size_t)c->head_dim, batch->attention_mask, 0);
    if (full.logits)
        compare_rows(&cmp, full.logits, packed.logits, B, 1, (size_t)c->vocab_size, batch->attention_mask, 0);
    CHECK_MSG(cmp.nonfinite == 0, "%s: %d entries of the packed pass left unwritten", what, cmp.nonfinite);
    /* Not the same bits: the softmax and P V sums over keys group their terms by position, and packing moves
     * the real keys (the pads' exact zeros no longer sit between them). float32 rounding, compounded over
     * the layers: within the tolerances against PyTorch (test_golden.c: 1e-5 to 1e-4). */
    CHECK_MSG(cmp.max_rel <= 2e-5, "%s: packed differs from unpacked by %.3g (relative)", what, cmp.max_rel);
    CHECK_MSG(cmp.pads_nonzero == 0, "%s: %d entries at pads are not 0", what, cmp.pads_nonzero);
    if (cmp.max_rel > worst) worst = cmp.max_rel;
    n_cases++;
    n_identical += cmp.max_rel == 0.0;

    /* the packed pass with its linear layers on the packing pads too (pad_rows, as before docs/speed.md's real
     * rows): the same bits, pads included */
    outputs padded_rows;
    if (run(m, batch, pol, 1, 1, NULL, &padded_rows)) {
        int same = memcmp(padded_rows.hidden, packed.hidden, sizeof(float) * packed.n_hidden) == 0 &&
                   memcmp(padded_rows.attn, packed.attn, sizeof(float) * packed.n_attn) == 0 &&
                   memcmp(padded_rows.values, packed.values, sizeof(float) * packed.n_values) == 0 &&
                   (!packed.logits || memcmp(padded_rows.logits, packed.logits, sizeof(float) * packed.n_logits) == 0);
        CHECK_MSG(same, "%s: the packed pass on its real rows differs from the one over its pads", what);
        n_rows_identical += same;
    }
    outputs_free(&padded_rows);

    /* the packed pass on 1, 2 and 3 threads: the same bits */
    for (int threads = 2; threads <= 3; threads++) {
        al_threadpool *pool = NULL;
        al_error err = {0};
        CHECK(al_threadpool_new(threads, &pool, &err) == AL_OK);
        al_threadpool_split_all(pool, 1);
        outputs t;
        if (run(m, batch, pol, 1, 0, pool, &t)) {
            int same = memcmp(t.hidden, packed.hidden, sizeof(float) * t.n_hidden) == 0 &&
                       memcmp(t.attn, packed.attn, sizeof(float) * t.n_attn) == 0 &&
                       memcmp(t.values, packed.values, sizeof(float) * t.n_values) == 0 &&
                       (!t.logits || memcmp(t.logits, packed.logits, sizeof(float) * t.n_logits) == 0);
            CHECK_MSG(same, "%s: packed pass on %d threads differs from one thread", what, threads);
        }
        outputs_free(&t);
        al_threadpool_free(pool);
    }
    outputs_free(&full);
    outputs_free(&packed);
}

/* Sequence 0: a single sentence of 6 tokens; 1: a pair, A 10 tokens and B from L/2; 2: 15 tokens. Each ends
 * with a separator at L - 1. */
static void papa_batch(const al_config *c, uint64_t seed, int32_t *ids, int32_t *mask, int32_t *types) {
    al_rng rng;
    al_rng_seed(&rng, seed);
    for (int b = 0; b < B; b++)
        for (int i = 0; i < L; i++) {
            const int t = b * L + i;
            const int real = i == L - 1 || (b == 0 && i < 6) || (b == 1 && (i < 10 || (i >= L / 2 && i < L / 2 + 5))) ||
                             (b == 2 && i < 15);
            mask[t] = real;
            ids[t] = real ? 5 + (int32_t)al_rng_below(&rng, (uint32_t)(c->vocab_size - 5)) : c->pad_token_id;
            types[t] = c->type_vocab_size > 1 && b == 1 && i >= L / 2 ? 1 : 0;
        }
}

static void test_family(const char *dir) {
    char path[256];
    snprintf(path, sizeof path, "%s", dir);
    al_model *m = NULL;
    al_error err = {0};
    CHECK_MSG(al_model_load_dir(path, &m, &err) == AL_OK, "%s: %s", path, err.message);
    if (!m) return;
    const al_config *c = al_model_config(m);
    int32_t ids[B * L], mask[B * L], types[B * L];
    papa_batch(c, 7, ids, mask, types);
    al_batch batch = {B, L, ids, mask, c->type_vocab_size > 1 ? types : NULL, NULL};
    char what[300];
    snprintf(what, sizeof what, "%s, all heads standard", dir);
    check_case(what, m, &batch, NULL);

    const int NL = c->n_layers, H = c->n_heads;
    al_head_policy *pol = calloc((size_t)NL * H, sizeof *pol);
    float *C = malloc(sizeof(float) * L * L);
    al_rng rng;
    al_rng_seed(&rng, 11);
    for (int i = 0; i < L * L; i++) C[i] = 0.05f + al_rng_uniform(&rng);
    for (int k = 0; k < NL * H; k++) {
        pol[k].mode = (al_head_mode)((k + k / H) % 4); /* every layer gets several modes, shifted per layer */
        pol[k].lambda = 0.3f;
        pol[k].constant = pol[k].mode == AL_HEAD_CONSTANT || pol[k].mode == AL_HEAD_MIX ? C : NULL;
    }
    snprintf(what, sizeof what, "%s, every head mode", dir);
    check_case(what, m, &batch, pol);
    /* every head constant: the rows of the gathered matrix are renormalised over the real tokens */
    for (int k = 0; k < NL * H; k++) pol[k].mode = AL_HEAD_CONSTANT, pol[k].constant = C;
    snprintf(what, sizeof what, "%s, every head constant", dir);
    check_case(what, m, &batch, pol);
    free(pol);
    free(C);

    /* no padding at all: nothing to pack, and the call must say the same */
    for (int t = 0; t < B * L; t++) mask[t] = 1, ids[t] = ids[t] == c->pad_token_id ? 5 : ids[t];
    snprintf(what, sizeof what, "%s, no padding", dir);
    check_case(what, m, &batch, NULL);
    al_model_free(m);
}

int main(void) {
    static const char *const dirs[] = {"models/attnlab-mini-bert", "tests/golden/bert", "tests/golden/bert_gelu_new",
                                       "tests/golden/roberta", "tests/golden/distilbert", "tests/golden/electra",
                                       "tests/golden/deberta_v3", "tests/golden/modernbert"};
    for (size_t d = 0; d < sizeof dirs / sizeof dirs[0]; d++) test_family(dirs[d]);
    printf("packed vs unpacked: %d cases, %d bit-identical, largest relative difference %.3g\n", n_cases, n_identical,
           worst);
    printf("packed on real rows vs over the packing pads: %d of %d cases bit-identical\n", n_rows_identical, n_cases);
    return check_summary("skip_pads");
}
