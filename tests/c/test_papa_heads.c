/* test_papa_heads.c: head orders and selection (src/methods/papa/papa_heads.c), the forward pass with the
 * selected constant heads (docs/papa.md#applying-a-constant-the-forward-pass), and the MLM score
 * (src/methods/papa/papa_mlm.c) on the default model: k = 0 is the unmodified model bit for bit, all heads
 * constant make the output independent of every query/key weight, and the MLM score orders the conditions
 * as the paper's Sec. 5.5 does (average constants cost less than data-free matrices). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "methods/papa/papa.h"
#include "model/model_internal.h"

static int is_permutation(const int *p, int n) {
    int *seen = calloc((size_t)n, sizeof *seen), ok = 1;
    for (int i = 0; i < n; i++) {
        if (p[i] < 0 || p[i] >= n || seen[p[i]]) ok = 0;
        else seen[p[i]] = 1;
    }
    free(seen);
    return ok;
}

static void test_orders(void) {
    enum { NL = 3, H = 4, N = NL * H };
    float theta[N] = {0.3f, -0.2f, 0.9f, 0.0f, -1.5f, 0.4f, 0.4f, 2.0f, -0.7f, 0.1f, 1.1f, -0.3f};
    int order[N], rev[N], r1[N], r2[N], r3[N];
    al_error err;
    for (int o = 0; o < AL_N_ORDERS; o++) {
        CHECK(al_papa_head_order((al_papa_order)o, NL, H, theta, 7, order, &err) == AL_OK);
        CHECK_MSG(is_permutation(order, N), "order %s is not a permutation", al_papa_order_name((al_papa_order)o));
        CHECK(al_papa_order_from_name(al_papa_order_name((al_papa_order)o)) == o);
    }
    CHECK(al_papa_head_order(AL_ORDER_LAMBDA, NL, H, theta, 0, order, &err) == AL_OK);
    int ascending = 1;
    for (int i = 1; i < N; i++) ascending &= theta[order[i - 1]] <= theta[order[i]];
    CHECK(ascending && order[0] == 4 && order[N - 1] == 7);
    CHECK(order[7] == 5 && order[8] == 6); /* equal thetas keep index order */
    CHECK(al_papa_head_order(AL_ORDER_REVERSED_LAMBDA, NL, H, theta, 0, rev, &err) == AL_OK);
    CHECK(rev[0] == 7 && rev[N - 1] == 4);
    CHECK(al_papa_head_order(AL_ORDER_LAMBDA, NL, H, NULL, 0, order, &err) == AL_ERR_INVALID);
    CHECK(strstr(err.message, "ranking") != NULL);
    CHECK(al_papa_head_order(AL_ORDER_FIRST_TO_LAST, NL, H, NULL, 0, order, &err) == AL_OK);
    CHECK(order[0] == 0 && order[4] == 4 && order[N - 1] == N - 1);
    CHECK(al_papa_head_order(AL_ORDER_LAST_TO_FIRST, NL, H, NULL, 0, order, &err) == AL_OK);
    CHECK(order[0] == 8 && order[3] == 11 && order[4] == 4 && order[N - 1] == 3);
    CHECK(al_papa_head_order(AL_ORDER_RANDOM, NL, H, NULL, 1, r1, &err) == AL_OK);
    CHECK(al_papa_head_order(AL_ORDER_RANDOM, NL, H, NULL, 1, r2, &err) == AL_OK);
    CHECK(al_papa_head_order(AL_ORDER_RANDOM, NL, H, NULL, 2, r3, &err) == AL_OK);
    CHECK(memcmp(r1, r2, sizeof r1) == 0 && memcmp(r1, r3, sizeof r1) != 0);
    CHECK(al_papa_head_order((al_papa_order)9, NL, H, theta, 0, order, &err) == AL_ERR_INVALID);

    /* fractions of input-dependent heads kept -> heads replaced (16 heads: the paper's 0, 8, 14, 15, 16) */
    CHECK(al_papa_heads_replaced(1.0, 4, 4) == 0 && al_papa_heads_replaced(0.5, 4, 4) == 8);
    CHECK(al_papa_heads_replaced(0.125, 4, 4) == 14 && al_papa_heads_replaced(0.0625, 4, 4) == 15);
    CHECK(al_papa_heads_replaced(0.0, 4, 4) == 16 && al_papa_heads_replaced(0.5, 12, 12) == 72);
    CHECK(al_papa_heads_replaced(0.0625, 12, 12) == 135);

    /* nested selections: the heads constant at k are constant at every larger k */
    float C[N * 4];
    al_head_policy small[N], large[N];
    CHECK(al_papa_head_order(AL_ORDER_LAMBDA, NL, H, theta, 0, order, &err) == AL_OK);
    int nested = 1;
    for (int k = 0; k < N; k++) {
        al_papa_policies(order, k, NL, H, C, 2, 0, small);
        al_papa_policies(order, k + 1, NL, H, C, 2, 0, large);
        int n_small = 0;
        for (int i = 0; i < N; i++) {
            n_small += small[i].mode == AL_HEAD_CONSTANT;
            if (small[i].mode == AL_HEAD_CONSTANT && large[i].mode != AL_HEAD_CONSTANT) nested = 0;
        }
        nested &= n_small == k;
    }
    CHECK(nested);
    al_papa_policies(order, 1, NL, H, C, 2, 0, small);
    CHECK(small[4].mode == AL_HEAD_CONSTANT && small[4].constant == C + 4 * 4);
    al_papa_policies(order, 1, NL, H, C, 2, 1, small);
    CHECK(small[4].mode == AL_HEAD_ZERO && small[4].constant == NULL);
}

/* Lines for the MLM score: held-out text when the corpus was built, else a few fixed sentences (at least 8). */
static int read_lines(char ***out, int max) {
    static const char *const fallback[] = {
        "the committee will meet on monday to discuss the budget for next year .",
        "she read the letter twice and then put it away in the drawer .",
        "they walked along the river until the sun went down behind the hills .",
        "the old house at the end of the street had been empty for many years .",
    };
    char **lines = calloc((size_t)max, sizeof *lines);
    int n = 0;
    FILE *f = fopen("build/data/heldout.txt", "r");
    char buf[4096];
    while (f && n < max && fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\n")] = 0;
        if (strlen(buf) > 20) lines[n++] = strdup(buf);
    }
    if (f) fclose(f);
    /* the forwards below run batches of 8 lines: fewer held-out lines are topped up from the fixed ones */
    for (int i = 0; n < 8 && n < max; i++) lines[n++] = strdup(fallback[i % 4]);
    *out = lines;
    return n;
}

static void test_model(al_model *m) {
    const al_config *cfg = al_model_config(m);
    const int NL = cfg->n_layers, H = cfg->n_heads, D = cfg->hidden_size, L = 32;
    char **lines;
    const int n = read_lines(&lines, 96);
    const size_t nL = (size_t)n * L;
    int32_t *ids = malloc(nL * sizeof *ids), *mask = malloc(nL * sizeof *mask), *types = malloc(nL * sizeof *types),
            *labels = malloc(nL * sizeof *labels), *ids2 = malloc(nL * sizeof *ids2), *labels2 = malloc(nL * 4);
    al_error err;
    CHECK_MSG(al_papa_mlm_examples(al_model_tokenizer(m), AL_LAYOUT_PAPA, (const char *const *)lines, NULL, n, L, 11, ids,
                                   mask, types, labels, &err) == AL_OK, "%s", err.message);
    CHECK(al_papa_mlm_examples(al_model_tokenizer(m), AL_LAYOUT_PAPA, (const char *const *)lines, NULL, n, L, 11, ids2, mask,
                               types, labels2, &err) == AL_OK);
    CHECK(memcmp(ids, ids2, nL * 4) == 0 && memcmp(labels, labels2, nL * 4) == 0); /* seeded */
    int n_lab = 0, lab_on_pad = 0;
    for (size_t t = 0; t < nL; t++)
        if (labels[t] != -100) n_lab++, lab_on_pad += !mask[t];
    CHECK(n_lab >= n && lab_on_pad == 0);

    /* constants from the same lines (unmasked) */
    const size_t n_c = (size_t)NL * H * L * L;
    float *C = malloc(n_c * sizeof *C), *U = malloc(n_c * sizeof *U);
    int32_t *plain = malloc(nL * sizeof *plain), *pmask = malloc(nL * sizeof *pmask), *ptypes = malloc(nL * 4);
    for (int x = 0; x < n; x++) {
        al_papa_example ex = {plain + (size_t)x * L, pmask + (size_t)x * L, ptypes + (size_t)x * L, NULL, 0};
        CHECK(al_papa_encode(al_model_tokenizer(m), AL_LAYOUT_PAPA, lines[x], NULL, L, &ex, &err) == AL_OK);
    }
    CHECK(al_papa_average_constants(m, plain, pmask, ptypes, n, L, 16, NULL, C, &err) == AL_OK);
    for (int lh = 0; lh < NL * H; lh++) CHECK(al_papa_data_free(AL_CONST_UNIFORM, L, U + (size_t)lh * L * L, &err) == AL_OK);

    int order[256];
    al_head_policy *pol = malloc(sizeof *pol * (size_t)NL * H);
    CHECK(al_papa_head_order(AL_ORDER_FIRST_TO_LAST, NL, H, NULL, 0, order, &err) == AL_OK);

    /* k = 0: the unmodified model, bit for bit */
    const size_t n_hid = (size_t)(NL + 1) * 8 * L * D;
    float *h_ref = malloc(n_hid * 4), *h_k0 = malloc(n_hid * 4), *h_all = malloc(n_hid * 4), *h_all2 = malloc(n_hid * 4);
    al_batch batch = {8, L, plain, pmask, ptypes, NULL};
    al_forward_outputs o = {0};
    al_forward_params fp = al_forward_default_params();
    o.hidden_states = h_ref;
    CHECK_MSG(al_forward(m, &batch, NULL, &o, &err) == AL_OK, "%s", err.message);
    al_papa_policies(order, 0, NL, H, C, L, 0, pol);
    fp.policies = pol;
    o.hidden_states = h_k0;
    CHECK(al_forward(m, &batch, &fp, &o, &err) == AL_OK);
    CHECK(memcmp(h_ref, h_k0, n_hid * 4) == 0);

    /* all heads constant: perturbing every query and key weight changes nothing */
    al_papa_policies(order, NL * H, NL, H, C, L, 0, pol);
    o.hidden_states = h_all;
    CHECK(al_forward(m, &batch, &fp, &o, &err) == AL_OK);
    for (int l = 0; l < NL; l++) {
        al_layer_weights *lw = &m->w.layers[l];
        for (int e = 0; e < D * D; e++) lw->q_w[e] += 0.5f, lw->k_w[e] -= 0.25f;
        for (int e = 0; e < D; e++) lw->q_b[e] += 1.0f;
    }
    o.hidden_states = h_all2;
    CHECK(al_forward(m, &batch, &fp, &o, &err) == AL_OK);
    CHECK(memcmp(h_all, h_all2, n_hid * 4) == 0);
    for (int l = 0; l < NL; l++) { /* restore */
        al_layer_weights *lw = &m->w.layers[l];
        for (int e = 0; e < D * D; e++) lw->q_w[e] -= 0.5f, lw->k_w[e] += 0.25f;
        for (int e = 0; e < D; e++) lw->q_b[e] -= 1.0f;
    }

    /* MLM score: full > averaged constants > uniform (the paper's Sec. 5.5 ordering) */
    al_papa_mlm_stats full, avg, uni;
    CHECK(al_papa_mlm_eval(m, ids, mask, types, labels, n, L, 16, NULL, NULL, &full, &err) == AL_OK);
    CHECK(al_papa_mlm_eval(m, ids, mask, types, labels, n, L, 16, pol, NULL, &avg, &err) == AL_OK);
    al_papa_policies(order, NL * H, NL, H, U, L, 0, pol);
    CHECK(al_papa_mlm_eval(m, ids, mask, types, labels, n, L, 16, pol, NULL, &uni, &err) == AL_OK);
    double s_full = -full.nll_sum / full.n, s_avg = -avg.nll_sum / avg.n, s_uni = -uni.nll_sum / uni.n;
    printf("mlm score over %lld masked tokens: full %.3f (top-1 %.3f), all constant %.3f (%.3f), uniform %.3f (%.3f)\n",
           (long long)full.n, s_full, (double)full.correct / full.n, s_avg, (double)avg.correct / avg.n, s_uni,
           (double)uni.correct / uni.n);
    CHECK(full.n == n_lab && avg.n == n_lab);
    CHECK(s_full > s_avg && s_avg > s_uni);
    /* batch size does not change the score */
    al_papa_mlm_stats full1;
    CHECK(al_papa_mlm_eval(m, ids, mask, types, labels, n, L, 5, NULL, NULL, &full1, &err) == AL_OK);
    CHECK(full1.nll_sum == full.nll_sum && full1.correct == full.correct);

    free(h_ref), free(h_k0), free(h_all), free(h_all2), free(pol);
    free(C), free(U), free(plain), free(pmask), free(ptypes);
    free(ids), free(mask), free(types), free(labels), free(ids2), free(labels2);
    for (int i = 0; i < n; i++) free(lines[i]);
    free(lines);
}

int main(void) {
    test_orders();
    al_model *m = NULL;
    al_error err;
    CHECK_MSG(al_model_load_dir("models/attnlab-mini-bert", &m, &err) == AL_OK, "%s", err.message);
    if (m) test_model(m);
    al_model_free(m);
    return check_summary("papa_heads");
}
