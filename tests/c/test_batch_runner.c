/* test_batch_runner.c: the batch runner (src/methods/batches/batch_runner.c) against direct calls of
 * al_forward and al_effective_attention on the same padded arrays: chunked runs give every example
 * the bits of one whole batch, already-built rows (pads inside, given position ids) run as given,
 * dest buffers are written in place, a second model sees the same batches, and bad arguments,
 * a missing MLM head and the cancel flag give errors. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "methods/batches/batch_runner.h"

enum { NL = 2, H = 2, D = 16, V = 40, N = 5 };

/* The run's outputs gathered per example into whole-request [NL, N, H, L, L] etc. */
typedef struct gathered {
    int L, calls, max_B;
    float *attn, *eff, *hidden, *mlm, *attn_b;
    int32_t *ids, *mask, *seg;
    const float *last_attn;
} gathered;

static void put(float *dst, const float *src, int n_outer, int B, int first, size_t per) {
    for (int o = 0; o < n_outer; o++)
        memcpy(dst + ((size_t)o * N + first) * per, src + (size_t)o * B * per, per * B * sizeof(float));
}

static al_status gather(void *user, const al_run_chunk *c, al_error *err) {
    gathered *g = user;
    const size_t LL = (size_t)c->L * c->L;
    g->calls++;
    if (c->B > g->max_B) g->max_B = c->B;
    g->last_attn = c->attentions;
    if (c->attentions) put(g->attn, c->attentions, NL, c->B, c->first, H * LL);
    if (c->attentions_b) put(g->attn_b, c->attentions_b, NL, c->B, c->first, H * LL);
    if (c->effective) put(g->eff, c->effective, NL, c->B, c->first, H * LL);
    if (c->hidden_states) put(g->hidden, c->hidden_states, NL + 1, c->B, c->first, (size_t)c->L * D);
    if (c->mlm_logits) put(g->mlm, c->mlm_logits, 1, c->B, c->first, (size_t)c->L * V);
    memcpy(g->ids + (size_t)c->first * c->L, c->ids, sizeof(int32_t) * c->B * c->L);
    memcpy(g->mask + (size_t)c->first * c->L, c->mask, sizeof(int32_t) * c->B * c->L);
    memcpy(g->seg + (size_t)c->first * c->L, c->segments, sizeof(int32_t) * c->B * c->L);
    (void)err;
    return AL_OK;
}

static void gathered_init(gathered *g, int L) {
    memset(g, 0, sizeof *g);
    g->L = L;
    const size_t na = (size_t)NL * N * H * L * L;
    g->attn = calloc(na, sizeof(float));
    g->eff = calloc(na, sizeof(float));
    g->attn_b = calloc(na, sizeof(float));
    g->hidden = calloc((size_t)(NL + 1) * N * L * D, sizeof(float));
    g->mlm = calloc((size_t)N * L * V, sizeof(float));
    g->ids = calloc((size_t)N * L, sizeof(int32_t));
    g->mask = calloc((size_t)N * L, sizeof(int32_t));
    g->seg = calloc((size_t)N * L, sizeof(int32_t));
}

static void gathered_free(gathered *g) {
    free(g->attn), free(g->eff), free(g->attn_b), free(g->hidden), free(g->mlm), free(g->ids), free(g->mask), free(g->seg);
}

static int same(const float *a, const float *b, size_t n) { return memcmp(a, b, n * sizeof(float)) == 0; }

static void on_progress(void *user, const char *stage, double fraction) {
    int *counts = user;
    if (strcmp(stage, "batches") == 0) counts[0]++, counts[2] = fraction == 1.0;
    if (strcmp(stage, "forward") == 0) counts[1]++;
}

int main(void) {
    al_config cfg = al_config_bert(V, D, NL, H, 32);
    al_model *model = NULL, *bare = NULL;
    al_error err = {0};
    CHECK(al_model_new_random(&cfg, 11, 1, &model, &err) == AL_OK);
    CHECK(al_model_new_random(&cfg, 12, 0, &bare, &err) == AL_OK);
    if (!model || !bare) return check_summary("batch_runner");

    /* Five tokenized-looking sequences of different lengths, a pair among them. */
    static const int lens[N] = {4, 7, 3, 6, 5};
    int32_t ids[N][8], types[N][8], segs[N][8];
    al_run_example ex[N];
    for (int i = 0; i < N; i++) {
        for (int t = 0; t < lens[i]; t++) {
            ids[i][t] = 5 + (i * 7 + t * 3) % (V - 5);
            types[i][t] = i == 3 && t >= 3;
            segs[i][t] = t == 0 || t == lens[i] - 1 ? -1 : types[i][t];
        }
        al_run_example e = {lens[i], ids[i], NULL, types[i], NULL, segs[i]};
        ex[i] = e;
    }
    const int pad_to = 9;
    CHECK(al_batch_run_length(ex, N, 0) == 7);
    CHECK(al_batch_run_length(ex, N, pad_to) == 9);
    const int L = pad_to;

    /* Reference: one al_forward over the whole padded batch. */
    int32_t bid[N * 9], bmask[N * 9], btype[N * 9];
    for (int i = 0; i < N; i++)
        for (int t = 0; t < L; t++) {
            const int real = t < lens[i];
            bid[i * L + t] = real ? ids[i][t] : cfg.pad_token_id;
            bmask[i * L + t] = real;
            btype[i * L + t] = real ? types[i][t] : 0;
        }
    const size_t na = (size_t)NL * N * H * L * L;
    float *ref_attn = malloc(na * sizeof(float)), *ref_val = malloc((size_t)NL * N * H * L * (D / H) * sizeof(float));
    float *ref_hid = malloc((size_t)(NL + 1) * N * L * D * sizeof(float)), *ref_mlm = malloc((size_t)N * L * V * sizeof(float));
    float *ref_eff = malloc(na * sizeof(float));
    al_batch batch = {N, L, bid, bmask, btype, NULL};
    al_forward_outputs out = {
        .hidden_states = ref_hid,
        .attentions = ref_attn,
        .values = ref_val,
        .mlm_logits = ref_mlm,
    };
    CHECK(al_forward(model, &batch, NULL, &out, &err) == AL_OK);

    /* Chunks of two examples: every output equals the whole batch's, bit for bit. */
    gathered g;
    gathered_init(&g, L);
    int progress[3] = {0, 0, 0};
    al_batch_run_params p = al_batch_run_default_params();
    p.outputs = AL_RUN_ATTENTIONS | AL_RUN_HIDDEN | AL_RUN_MLM;
    p.batch_size = 2;
    p.pad_to = pad_to;
    p.progress = on_progress;
    p.progress_user = progress;
    CHECK_MSG(al_batch_run(model, ex, N, &p, gather, &g, &err) == AL_OK, "%s", err.message);
    CHECK(g.calls == 3 && g.max_B == 2);
    CHECK(progress[0] == 3 && progress[1] == 3 * NL && progress[2] == 1);
    CHECK(memcmp(g.ids, bid, sizeof bid) == 0 && memcmp(g.mask, bmask, sizeof bmask) == 0);
    CHECK(same(g.attn, ref_attn, na));
    CHECK(same(g.hidden, ref_hid, (size_t)(NL + 1) * N * L * D));
    CHECK(same(g.mlm, ref_mlm, (size_t)N * L * V));
    CHECK(g.seg[3 * L + 0] == -1 && g.seg[3 * L + 4] == 1 && g.seg[3 * L + 6] == -1 && g.seg[2 * L + 1] == 0);
    gathered_free(&g);

    /* Exact-mode effective attention is per example: chunked equals whole. (Paper mode shares one
     * rank per call, so it depends on the batching, as in the reference code.) */
    CHECK(al_effective_attention(&cfg, ref_attn, ref_val, bmask, N, L, AL_EFFECTIVE_EXACT, ref_eff, NULL, &err) == AL_OK);
    gathered_init(&g, L);
    p.effective = 1;
    p.effective_mode = AL_EFFECTIVE_EXACT;
    p.outputs = 0;
    p.batch_size = 3;
    CHECK(al_batch_run(model, ex, N, &p, gather, &g, &err) == AL_OK);
    CHECK(g.calls == 2);
    CHECK(same(g.eff, ref_eff, na));
    CHECK(same(g.attn, ref_attn, na)); /* effective needs attentions: they come along */
    gathered_free(&g);

    /* dest: one batch, written in place; the callback sees the dest pointer. */
    float *dest_attn = calloc(na, sizeof(float));
    gathered_init(&g, L);
    al_batch_run_params pd = al_batch_run_default_params();
    pd.outputs = AL_RUN_ATTENTIONS;
    pd.batch_size = 1; /* overridden by dest */
    pd.pad_to = pad_to;
    pd.dest.attentions = dest_attn;
    CHECK(al_batch_run(model, ex, N, &pd, gather, &g, &err) == AL_OK);
    CHECK(g.calls == 1 && g.last_attn == dest_attn && same(dest_attn, ref_attn, na));
    gathered_free(&g);
    free(dest_attn);

    /* Already-built rows: a pad inside the row, explicit position ids, length 9 = L. */
    int32_t row_ids[2][9], row_mask[2][9], row_pos[2][9];
    for (int i = 0; i < 2; i++)
        for (int t = 0; t < 9; t++) {
            row_mask[i][t] = t < 3 || t == 8 || (i == 1 && t >= 4 && t < 6);
            row_ids[i][t] = row_mask[i][t] ? 5 + (3 * t + i) % 30 : cfg.pad_token_id;
            row_pos[i][t] = (t * 2 + i) % 16;
        }
    al_run_example rows[2] = {{9, row_ids[0], row_mask[0], NULL, row_pos[0], NULL},
                              {9, row_ids[1], row_mask[1], NULL, NULL, NULL}};
    int32_t rpos[18];
    for (int t = 0; t < 9; t++) rpos[t] = row_pos[0][t], rpos[9 + t] = t; /* BERT's default: the index */
    float *row_ref = malloc((size_t)NL * 2 * H * 81 * sizeof(float));
    al_batch rb = {2, 9, &row_ids[0][0], &row_mask[0][0], NULL, rpos};
    al_forward_outputs ro = {.attentions = row_ref};
    CHECK(al_forward(model, &rb, NULL, &ro, &err) == AL_OK);
    float *row_attn = calloc((size_t)NL * 2 * H * 81, sizeof(float));
    al_batch_run_params pr = al_batch_run_default_params();
    pr.outputs = AL_RUN_ATTENTIONS;
    pr.dest.attentions = row_attn;
    gathered_init(&g, 9);
    CHECK_MSG(al_batch_run(model, rows, 2, &pr, gather, &g, &err) == AL_OK, "%s", err.message);
    CHECK(same(row_attn, row_ref, (size_t)NL * 2 * H * 81));
    CHECK(g.seg[3] == -1 && g.seg[2] == 0 && g.seg[8] == 0); /* mask 0 inside the row: segment -1 */
    gathered_free(&g);
    free(row_ref), free(row_attn);

    /* Policies reach the forward pass: a ZERO head's attention is 0. */
    al_head_policy pol[NL * H];
    memset(pol, 0, sizeof pol);
    pol[1].mode = AL_HEAD_ZERO;
    gathered_init(&g, 7);
    p = al_batch_run_default_params();
    p.outputs = AL_RUN_ATTENTIONS;
    p.policies = pol;
    p.batch_size = 2;
    CHECK(al_batch_run(model, ex, N, &p, gather, &g, &err) == AL_OK);
    float head0 = 0.0f, head1 = 0.0f; /* layer 0, example 0: [H, 7, 7] */
    for (int e = 0; e < 49; e++) head0 += g.attn[e], head1 += fabsf(g.attn[49 + e]);
    CHECK_MSG(head1 == 0.0f && head0 > 3.0f, "zero head %g, standard head %g", head1, head0);
    gathered_free(&g);

    /* A second model on the same batches (here the same weights: the same attentions). */
    gathered_init(&g, L);
    p = al_batch_run_default_params();
    p.outputs = AL_RUN_ATTENTIONS;
    p.model_b = model;
    p.pad_to = pad_to;
    p.batch_size = 4;
    CHECK(al_batch_run(model, ex, N, &p, gather, &g, &err) == AL_OK);
    CHECK(same(g.attn, ref_attn, na) && same(g.attn_b, ref_attn, na));
    gathered_free(&g);
    p.model_b = bare; /* same shape, other weights */
    gathered_init(&g, L);
    CHECK(al_batch_run(model, ex, N, &p, gather, &g, &err) == AL_OK);
    CHECK(same(g.attn, ref_attn, na) && !same(g.attn_b, ref_attn, na));
    gathered_free(&g);

    /* Errors. */
    p = al_batch_run_default_params();
    p.outputs = AL_RUN_MLM;
    p.who = "probe";
    CHECK(al_batch_run(bare, ex, N, &p, gather, &g, &err) == AL_ERR_INVALID);
    CHECK_MSG(strstr(err.message, "probe: MLM") != NULL, "%s", err.message);
    p.outputs = AL_RUN_ATTENTIONS;
    al_run_example empty = {0, ids[0], NULL, NULL, NULL, NULL};
    CHECK(al_batch_run(model, &empty, 1, &p, gather, &g, &err) == AL_ERR_INVALID);
    CHECK(al_batch_run(model, ex, 0, &p, gather, &g, &err) == AL_ERR_INVALID);
    volatile int cancel = 1;
    p.cancel = &cancel;
    CHECK(al_batch_run(model, ex, N, &p, gather, &g, &err) == AL_ERR_CANCELLED);
    CHECK_MSG(strstr(err.message, "probe: cancelled at example 0") != NULL, "%s", err.message);

    free(ref_attn), free(ref_val), free(ref_hid), free(ref_mlm), free(ref_eff);
    al_model_free(model);
    al_model_free(bare);
    return check_summary("batch_runner");
}
