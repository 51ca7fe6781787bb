/* test_forward.c: invariances of al_forward that the goldens (one small batch) do not reach: a batch gives
 * each sequence what it gets alone (across the chunking of large batches and long sequences), padding does
 * not change the real tokens' outputs, given position ids equal to the default change nothing, and the
 * outputs are deterministic. */
#include <string.h>

#include "check.h"
#include "golden_file.h"

typedef struct outs {
    float *hidden, *attn, *values, *logits;
} outs;

static void outs_alloc(outs *o, const al_config *c, int B, int L) {
    const size_t NL = (size_t)c->n_layers, H = (size_t)c->n_heads;
    o->hidden = calloc((NL + 1) * B * L * c->hidden_size, sizeof(float));
    o->attn = calloc(NL * B * H * L * L, sizeof(float));
    o->values = calloc(NL * B * H * L * c->head_dim, sizeof(float));
    o->logits = calloc((size_t)B * L * c->vocab_size, sizeof(float));
}

static void outs_free(outs *o) {
    free(o->hidden);
    free(o->attn);
    free(o->values);
    free(o->logits);
}

static al_status run(const al_model *m, const al_batch *b, const al_head_policy *pol, outs *o) {
    al_forward_params p = al_forward_default_params();
    p.policies = pol;
    al_forward_outputs out = {
        .hidden_states = o->hidden,
        .attentions = o->attn,
        .values = o->values,
        .mlm_logits = o->logits,
    };
    al_error err = {0};
    al_status st = al_forward(m, b, &p, &out, &err);
    if (st != AL_OK) fprintf(stderr, "forward: %s\n", err.message);
    return st;
}

/* Max abs difference between sequence `b` of a batch run (B sequences) and a single-sequence run, over
 * every output, restricted to the first n positions (queries and keys) of the single run of length Ls. */
static double seq_diff(const al_config *c, const outs *batch, int B, int L, int b, const outs *one, int Ls, int n) {
    const int NL = c->n_layers, H = c->n_heads, D = c->hidden_size, dh = c->head_dim, V = c->vocab_size;
    double e = 0.0, d;
    for (int l = 0; l <= NL; l++)
        for (int i = 0; i < n; i++) {
            d = max_abs_diff(batch->hidden + (((size_t)l * B + b) * L + i) * D, one->hidden + ((size_t)l * Ls + i) * D,
                             (size_t)D);
            if (!(d <= e)) e = d;
        }
    for (int l = 0; l < NL; l++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < n; i++) {
                d = max_abs_diff(batch->attn + ((((size_t)l * B + b) * H + h) * L + i) * L,
                                 one->attn + (((size_t)l * H + h) * Ls + i) * Ls, (size_t)n);
                if (!(d <= e)) e = d;
                d = max_abs_diff(batch->values + ((((size_t)l * B + b) * H + h) * L + i) * dh,
                                 one->values + (((size_t)l * H + h) * Ls + i) * dh, (size_t)dh);
                if (!(d <= e)) e = d;
            }
    for (int i = 0; i < n; i++) {
        d = max_abs_diff(batch->logits + ((size_t)b * L + i) * V, one->logits + (size_t)i * V, (size_t)V);
        if (!(d <= e)) e = d;
    }
    return e;
}

/* Batches of B sequences of length L with lengths cycling over [L/3, L]; each sequence alone (same L, same
 * padding) must give the same outputs. With B * L > 256 the forward pass works in several chunks. */
static void check_batch_vs_single(al_model *m, int B, int L, int with_policies) {
    const al_config *c = al_model_config(m);
    int32_t *ids = calloc((size_t)B * L, sizeof(int32_t)), *mask = calloc((size_t)B * L, sizeof(int32_t));
    int32_t *types = calloc((size_t)B * L, sizeof(int32_t));
    for (int b = 0; b < B; b++) {
        int n = L / 3 + (b * 7) % (L - L / 3 + 1);
        if (n < 1) n = 1;
        for (int i = 0; i < n; i++) {
            ids[(size_t)b * L + i] = 1 + (b * 31 + i * 17) % (c->vocab_size - 1);
            mask[(size_t)b * L + i] = 1;
            types[(size_t)b * L + i] = i >= n / 2;
        }
    }
    const int NL = c->n_layers, H = c->n_heads;
    float *C = malloc(sizeof(float) * (size_t)L * L);
    for (size_t k = 0; k < (size_t)L * L; k++) C[k] = (float)((k * 2654435761u) % 1000) / 1000.0f;
    al_head_policy *pol = calloc((size_t)NL * H, sizeof *pol);
    for (int i = 0; i < NL * H; i++) {
        pol[i].mode = (al_head_mode)(i % 4);
        pol[i].lambda = 0.25f;
        pol[i].constant = C;
    }
    outs all, one;
    outs_alloc(&all, c, B, L);
    outs_alloc(&one, c, 1, L);
    al_batch batch = {B, L, ids, mask, types, NULL};
    CHECK(run(m, &batch, with_policies ? pol : NULL, &all) == AL_OK);
    double worst = 0.0;
    for (int b = 0; b < B; b++) {
        al_batch single = {1, L, ids + (size_t)b * L, mask + (size_t)b * L, types + (size_t)b * L, NULL};
        CHECK(run(m, &single, with_policies ? pol : NULL, &one) == AL_OK);
        double e = seq_diff(c, &all, B, L, b, &one, L, L);
        if (!(e <= worst)) worst = e;
    }
    printf("batch [%d, %d]%s vs one sequence at a time: max abs difference %.2e\n", B, L,
           with_policies ? " with policies" : "", worst);
    CHECK_MSG(worst <= 1e-6, "batch [%d, %d]: %.3g", B, L, worst);
    outs_free(&all);
    outs_free(&one);
    free(pol);
    free(C);
    free(ids);
    free(mask);
    free(types);
}

/* The real tokens of a padded sequence get what the unpadded sequence gets (standard heads: the -10000 mask
 * leaves exactly 0 on pad keys). Pad tokens use id 0 and type 0. */
static void check_padding_invariance(al_model *m) {
    const al_config *c = al_model_config(m);
    const int n = 9, L = 20;
    int32_t ids[20] = {0}, mask[20] = {0}, types[20] = {0};
    for (int i = 0; i < n; i++) {
        ids[i] = 3 + i * 5;
        mask[i] = 1;
        types[i] = i >= 5;
    }
    outs padded, bare;
    outs_alloc(&padded, c, 1, L);
    outs_alloc(&bare, c, 1, n);
    al_batch pb = {1, L, ids, mask, types, NULL}, bb = {1, n, ids, NULL, types, NULL};
    CHECK(run(m, &pb, NULL, &padded) == AL_OK);
    CHECK(run(m, &bb, NULL, &bare) == AL_OK);
    double e = seq_diff(c, &padded, 1, L, 0, &bare, n, n);
    printf("padded to %d vs unpadded %d tokens: max abs difference %.2e\n", L, n, e);
    CHECK_MSG(e <= 1e-5, "padding changes real tokens by %.3g", e);
    outs_free(&padded);
    outs_free(&bare);

    /* A sequence with no real token at all: finite outputs, with and without a static head. */
    int32_t ids2[2 * 20] = {0}, mask2[2 * 20] = {0};
    for (int i = 0; i < n; i++) {
        ids2[i] = ids[i];
        mask2[i] = 1;
    }
    float C[20 * 20];
    for (int k = 0; k < 20 * 20; k++) C[k] = 1.0f;
    al_head_policy pol[2 * 4] = {{AL_HEAD_CONSTANT, 0.0f, C}};
    CHECK(c->n_layers * c->n_heads == 8);
    outs two;
    outs_alloc(&two, c, 2, L);
    al_batch tb = {2, L, ids2, mask2, NULL, NULL};
    for (int with_pol = 0; with_pol < 2; with_pol++) {
        CHECK(run(m, &tb, with_pol ? pol : NULL, &two) == AL_OK);
        size_t nh = (size_t)(c->n_layers + 1) * 2 * L * c->hidden_size, nan = 0;
        for (size_t k = 0; k < nh; k++) nan += two.hidden[k] != two.hidden[k];
        for (size_t k = 0; k < (size_t)2 * L * c->vocab_size; k++) nan += two.logits[k] != two.logits[k];
        CHECK_MSG(nan == 0, "%zu NaN with an all-pad sequence (policies %d)", nan, with_pol);
    }
    outs_free(&two);
}

/* Given position ids equal to the family default change nothing (BERT: index; RoBERTa: HF's cumsum rule). */
static void check_position_ids(const char *dir, int pad_id, int offset) {
    al_model *m = NULL;
    al_error err = {0};
    if (al_model_load_dir(dir, &m, &err) != AL_OK) {
        CHECK_MSG(0, "%s: %s", dir, err.message);
        return;
    }
    const al_config *c = al_model_config(m);
    CHECK(c->pad_token_id == pad_id);
    CHECK(c->position_offset == offset);
    const int B = 2, L = 10;
    int32_t ids[20], mask[20], pos[20];
    for (int b = 0; b < B; b++)
        for (int i = 0; i < L; i++) {
            int real = i < (b ? 6 : 10);
            ids[b * L + i] = real ? 3 + (b * 11 + i * 7) % 90 : pad_id;
            mask[b * L + i] = real;
            pos[b * L + i] = offset ? (real ? offset + i : pad_id) : i;
        }
    outs dflt, given;
    outs_alloc(&dflt, c, B, L);
    outs_alloc(&given, c, B, L);
    al_batch b1 = {B, L, ids, mask, NULL, NULL}, b2 = {B, L, ids, mask, NULL, pos};
    CHECK(run(m, &b1, NULL, &dflt) == AL_OK);
    CHECK(run(m, &b2, NULL, &given) == AL_OK);
    size_t nh = (size_t)(c->n_layers + 1) * B * L * c->hidden_size;
    CHECK_MSG(memcmp(dflt.hidden, given.hidden, nh * sizeof(float)) == 0, "%s", dir);
    /* Shifting the positions must change the output (the test can fail). */
    for (int i = 0; i < B * L; i++) pos[i] = pos[i] + 1 < c->max_position_embeddings ? pos[i] + 1 : pos[i];
    CHECK(run(m, &b2, NULL, &given) == AL_OK);
    CHECK(max_abs_diff(dflt.hidden, given.hidden, nh) > 1e-3);
    /* Deterministic: the same call twice gives the same bits. */
    CHECK(run(m, &b1, NULL, &given) == AL_OK);
    CHECK(memcmp(dflt.hidden, given.hidden, nh * sizeof(float)) == 0);
    CHECK(memcmp(dflt.attn, given.attn, (size_t)c->n_layers * B * c->n_heads * L * L * sizeof(float)) == 0);
    outs_free(&dflt);
    outs_free(&given);
    al_model_free(m);
}

int main(void) {
    al_config cfg = al_config_bert(60, 32, 2, 4, 64);
    al_model *m = NULL;
    al_error err = {0};
    al_status st = al_model_new_random(&cfg, 7, 1, &m, &err);
    CHECK_MSG(st == AL_OK, "%s", err.message);
    if (st == AL_OK) {
        check_batch_vs_single(m, 3, 12, 0);   /* one chunk */
        check_batch_vs_single(m, 30, 12, 1);  /* 21 + 9 sequences per chunk */
        check_batch_vs_single(m, 3, 300, 1);  /* longer than a chunk: one sequence per chunk */
        check_padding_invariance(m);
        al_model_free(m);
    }
    check_position_ids("tests/golden/bert", 0, 0);
    check_position_ids("tests/golden/roberta", 1, 2);
    return check_summary("forward");
}
