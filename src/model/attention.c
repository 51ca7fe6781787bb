/* attention.c: multi-head self-attention of one layer with the per-head hooks of
 * docs/head_policies.md (the rules themselves are in head_policy.c, shared with training):
 *
 *   STANDARD  P = S, the family's score rule's softmax (score_rule.h, src/model/rules/): BERT's
 *             softmax(Q K^T / sqrt(dh) + mask_add), DeBERTa's disentangled terms, ModernBERT's rotary window
 *   CONSTANT  P = C_hat = mask_and_normalize(C)                  (no Q, K, QK^T or softmax for the head)
 *   MIX       P = lambda * softmax(...) + (1 - lambda) * C_hat   (softmax raw, not renormalised)
 *   ZERO      P = 0                                              (no Q, K, QK^T, softmax or P V)
 *
 * Q and K are projected only for the heads that need them; a ZERO head skips P V as well.
 * Threads (docs/threads.md): the projections split by column blocks (al_linear_pool), then the
 * (sequence, head) pairs of the chunk are cut into contiguous runs, one per task, each with its own
 * [L, L] scratch; a pair's numbers never depend on which task computes it.
 */
#include <string.h>

#include "../kernels/kernels.h"
#include "forward_internal.h"
#include "head_policy.h"
#include "family_params.h"
#include "real_rows.h"
#include "score_rule.h"

static int needs_qk(const al_head_policy *policies, int h) {
    return !policies || al_head_mode_needs_qk(policies[h].mode);
}

/* Whether projected head h (of n_proj; n_proj < H: key/value heads, each shared by H / n_proj query heads) is
 * read by a query head that needs Q and K. */
static int proj_needed(const al_head_policy *policies, int H, int n_proj, int h) {
    const int group = H / n_proj;
    for (int g = 0; g < group; g++)
        if (needs_qk(policies, h * group + g)) return 1;
    return 0;
}

/* Q or K = x W^T + b for the heads (n_proj of them) that need them only: one GEMM per run of consecutive such
 * heads, written into the heads' columns of out [rows, ld]. */
static void project_needed_heads_ld(al_threadpool *pool, const al_head_policy *policies, int H, int n_proj, int dh,
                                    int rows, int D, const float *x, const float *W, const float *bias, float *out,
                                    int ld) {
    int h = 0;
    while (h < n_proj) {
        if (!proj_needed(policies, H, n_proj, h)) {
            h++;
            continue;
        }
        int h_end = h + 1;
        while (h_end < n_proj && proj_needed(policies, H, n_proj, h_end)) h_end++;
        int col = h * dh, n_cols = (h_end - h) * dh;
        al_gemm_nt_pool(pool, rows, n_cols, D, 1.0f, x, D, W + (size_t)col * D, D, out + col, ld, 0);
        for (int r = 0; bias && r < rows; r++) {
            float *o = out + (size_t)r * ld + col;
            for (int c = 0; c < n_cols; c++) o[c] += bias[col + c];
        }
        h = h_end;
    }
}

static void project_needed_heads(al_threadpool *pool, const al_head_policy *policies, int H, int dh, int rows, int D,
                                 const float *x, const float *W, const float *bias, float *out) {
    project_needed_heads_ld(pool, policies, H, H, dh, rows, D, x, W, bias, out, D);
}

/* Grouped keys or values of rows [rows, ld] shared out in place: the n_kv heads in the first columns become the H
 * query heads' (head h reads key/value head h / (H / n_kv)), as the reference repeats them. From the last head
 * down, no source is overwritten before it is read. */
static void share_kv_heads(float *x, int ld, int rows, int H, int n_kv, int dh) {
    const int group = H / n_kv;
    for (int r = 0; r < rows; r++) {
        float *row = x + (size_t)r * ld;
        for (int h = H - 1; h >= 0; h--)
            if (h / group != h) memcpy(row + (size_t)h * dh, row + (size_t)(h / group) * dh, sizeof(float) * (size_t)dh);
    }
}

/* What the (sequence, head) tasks share. */
typedef struct heads_job {
    const al_head_policy *policies;
    const float *mask;
    al_fwd_scratch *s;
    float *attn_out, *values_out;
    int L, H, D, dh, is_static, n_pairs; /* D: the row stride of q, k, v and ctx (the heads' width A) */
    int causal; /* a causal family: a constant matrix's future entries are dropped before it is normalised */
    const al_score_rule *rule;
    al_score_layer ly; /* what the layer's heads share for the rule */
} heads_job;

/* A packed sequence's constant: C at the caller's positions of its rows (map, -1 for packing pads, whose
 * rows and columns the mask zeroes anyway). */
static void gather_constant(const float *C, const int32_t *map, int L, int L_out, float *out) {
    for (int i = 0; i < L; i++) {
        float *row = out + (size_t)i * L;
        if (map[i] < 0) {
            memset(row, 0, sizeof(float) * (size_t)L);
            continue;
        }
        const float *src = C + (size_t)map[i] * L_out;
        for (int k = 0; k < L; k++) row[k] = map[k] < 0 ? 0.0f : src[map[k]];
    }
}

void al_fwd_scatter_rows(float *dst, const float *src, size_t src_ld, const int32_t *map, int L, int L_out, size_t cols) {
    memset(dst, 0, sizeof(float) * (size_t)L_out * cols);
    for (int i = 0; i < L; i++)
        if (map[i] >= 0) memcpy(dst + (size_t)map[i] * cols, src + (size_t)i * src_ld, sizeof(float) * cols);
}

/* One (sequence, head) pair: probabilities into P, P V into ctx, the requested outputs. */
static void one_head(const heads_job *j, int sq, int h, float *P, float *chat, float *gathered, float *rel_work) {
    const al_head_policy *policies = j->policies;
    const al_fwd_scratch *s = j->s;
    const int L = j->L, D = j->D, dh = j->dh, H = j->H;
    const size_t row0 = (size_t)sq * L * D; /* this sequence's first row in q, k, v, ctx */
    const float *m_seq = j->mask + (size_t)sq * L;
    const al_head_mode mode = policies ? policies[h].mode : AL_HEAD_STANDARD;
    const size_t col = (size_t)h * dh;
    const int32_t *map = s->map ? s->map + (size_t)sq * L : NULL;
    const int L_out = map ? s->L_out : L;
    if (al_head_mode_needs_qk(mode)) {
        const al_score_head hd = {s->q + row0 + col, s->k + row0 + col, col, m_seq, s->pos + (size_t)sq * L, map, L,
                                  s->L_out, rel_work};
        j->rule->probs(&j->ly, &hd, P);
    }
    const float *constant = policies ? policies[h].constant : NULL;
    if (map && constant && al_head_mode_needs_constant(mode)) {
        gather_constant(constant, map, L, L_out, gathered);
        constant = gathered;
    }
    if (j->causal && constant && al_head_mode_needs_constant(mode)) {
        /* a causal head reads no later token, constant or not (docs/head_policies.md): C's entries above the
         * diagonal are dropped, then C is masked and normalised as in any family */
        if (constant != gathered) memcpy(gathered, constant, sizeof(float) * (size_t)L * L);
        al_head_drop_later_keys(gathered, L);
        constant = gathered;
    }
    al_head_final_probs(mode, policies ? policies[h].lambda : 0.0f, constant, j->is_static, m_seq, L, P, P, chat);

    float *ctx = s->ctx + row0 + col;
    if (mode == AL_HEAD_ZERO) {
        for (int i = 0; i < L; i++) memset(ctx + (size_t)i * D, 0, sizeof(float) * (size_t)dh);
    } else {
        al_gemm_nn(L, dh, L, 1.0f, P, L, s->v + row0 + col, D, ctx, D, 0);
    }
    if (j->attn_out) {
        float *dst = j->attn_out + ((size_t)sq * H + h) * L_out * L_out;
        if (!map) {
            memcpy(dst, P, sizeof(float) * (size_t)L * L);
        } else {
            memset(dst, 0, sizeof(float) * (size_t)L_out * L_out);
            for (int i = 0; i < L; i++)
                for (int k = 0; map[i] >= 0 && k < L; k++)
                    if (map[k] >= 0) dst[(size_t)map[i] * L_out + map[k]] = P[(size_t)i * L + k];
        }
    }
    if (j->values_out) {
        float *dst = j->values_out + ((size_t)sq * H + h) * L_out * dh;
        if (map) {
            al_fwd_scatter_rows(dst, s->v + row0 + col, (size_t)D, map, L, L_out, (size_t)dh);
        } else {
            for (int i = 0; i < L; i++)
                memcpy(dst + (size_t)i * dh, s->v + row0 + (size_t)i * D + col, sizeof(float) * (size_t)dh);
        }
    }
}

/* Task t: pairs [t * n / n_tasks, (t + 1) * n / n_tasks) in sequence-major order, with the running
 * thread's scratch. */
static void heads_task(void *arg, int t, int n_tasks, int thread) {
    const heads_job *j = arg;
    const size_t LL = (size_t)j->L * j->L;
    float *P = j->s->probs + (size_t)thread * LL, *chat = j->s->chat + (size_t)thread * LL;
    float *gathered = j->s->gathered ? j->s->gathered + (size_t)thread * LL : NULL;
    const int p0 = (int)((long long)t * j->n_pairs / n_tasks), p1 = (int)((long long)(t + 1) * j->n_pairs / n_tasks);
    float *rel_work = j->s->rel_work ? j->s->rel_work + (size_t)thread * j->s->rel_work_size : NULL;
    for (int p = p0; p < p1; p++) one_head(j, p / j->H, p % j->H, P, chat, gathered, rel_work);
}

/* Layer l's queries, keys and values of rows x [rows, D] into q, k, v [rows, A] (k and v in their first KVW
 * columns: the key/value heads as projected), for the heads that need them; al_fwd_project_qkv then turns them by the
 * rule (rotary) at the rows' positions pos. The forward (below), the key/value cache (decode.c) and the rolling cache
 * (decode_stream.c, which turns its keys by slot) share it: the same bits. */
void al_fwd_project_qkv_unturned(const al_model *m, int layer, const al_head_policy *policies, al_threadpool *pool,
                                 const float *x, int n_rows, float *q, float *k, float *v) {
    const al_config *c = &m->config;
    const al_layer_weights *lw = &m->w.layers[layer];
    const int D = c->hidden_size, H = c->n_heads, dh = c->head_dim, A = al_attn_width(c);
    const int KV = al_kv_heads(c), KVW = al_kv_width(c);
    const float *q_w = lw->q_w, *k_w = lw->k_w, *v_w = lw->v_w;
    const float *q_b = lw->q_b, *k_b = lw->k_b, *v_b = lw->v_b;
    if (lw->qkv_w) q_w = lw->qkv_w, k_w = q_w + (size_t)A * D, v_w = k_w + (size_t)KVW * D; /* fused [A + 2 KVW, D] */
    if (lw->qkv_b) q_b = lw->qkv_b, k_b = q_b + A, v_b = k_b + KVW;
    project_needed_heads_ld(pool, policies, H, H, dh, n_rows, D, x, q_w, q_b, q, A);
    project_needed_heads_ld(pool, policies, H, KV, dh, n_rows, D, x, k_w, k_b, k, A);
    if (KVW == A) {
        al_linear_pool(pool, n_rows, A, D, x, v_w, v_b, v);
    } else {
        al_gemm_nt_pool(pool, n_rows, KVW, D, 1.0f, x, D, v_w, D, v, A, 0);
        for (int r = 0; v_b && r < n_rows; r++)
            for (int j = 0; j < KVW; j++) v[(size_t)r * A + j] += v_b[j];
    }
}

void al_fwd_project_qkv(const al_model *m, int layer, const al_head_policy *policies, al_threadpool *pool,
                        const float *x, int n_rows, const int32_t *pos, float *q, float *k, float *v) {
    al_fwd_project_qkv_unturned(m, layer, policies, pool, x, n_rows, q, k, v);
    /* a turning rule (rotary) turns each row by its own position id (pos: a compact row's is not its index) */
    const al_config *c = &m->config;
    const al_score_rule *rule = al_score_rule_of(c);
    if (rule->turn) rule->turn(c, layer, q, k, al_attn_width(c), pos, n_rows);
}

void al_fwd_attention(const al_model *m, int layer, const al_head_policy *policies, const float *x,
                      const float *mask, int L, al_fwd_scratch *s, float *attn_out, float *values_out) {
    const al_config *c = &m->config;
    const al_layer_weights *lw = &m->w.layers[layer];
    /* A: the width of q, k, v and ctx (the hidden size but in a decoder whose head_dim says otherwise); KV key/value
     * heads of KVW columns, shared out to the H query heads after the projections (grouped-query attention) */
    const int D = c->hidden_size, H = c->n_heads, dh = c->head_dim, A = al_attn_width(c);
    const int KV = al_kv_heads(c);
    const int rows = s->n_seqs * L;
    const al_score_rule *rule = al_score_rule_of(c);

    const int n_rows = s->n_rows, packed = n_rows < rows;
    const size_t row_bytes = sizeof(float) * (size_t)A;
    al_fwd_project_qkv(m, layer, policies, s->pool, x, n_rows, s->row_pos, s->q, s->k, s->v);
    if (KV < H) {
        share_kv_heads(s->k, A, n_rows, H, KV, dh);
        share_kv_heads(s->v, A, n_rows, H, KV, dh);
    }
    if (packed) { /* back to the chunk's layout, zeros at the packing pads (real_rows.h) */
        al_rows_expand(s->q, row_bytes, s->row_of, n_rows, rows);
        al_rows_expand(s->k, row_bytes, s->row_of, n_rows, rows);
        al_rows_expand(s->v, row_bytes, s->row_of, n_rows, rows);
    }

    if (s->rel && s->pos_layer != layer) {
        /* the layer's projections of the rule's relative-position table (DeBERTa's relative embeddings), once
         * per layer for all chunks, with its own query and key weights (share_att_key), only for the heads that
         * need them and the rows the sequence's distances read */
        int lo, n;
        rule->range(s->rel_row, s->L_out, &lo, &n);
        const size_t at = (size_t)lo * D;
        project_needed_heads(s->pool, policies, H, dh, n, D, s->rel + at, lw->q_w, lw->q_b, s->pos_q + at);
        project_needed_heads(s->pool, policies, H, dh, n, D, s->rel + at, lw->k_w, lw->k_b, s->pos_k + at);
        s->pos_layer = layer;
    }
    heads_job j = {policies, mask, s, attn_out, values_out, L, H, A, dh, al_head_layer_is_static(policies, H),
                   s->n_seqs * H, al_family_of(c)->causal, rule,
                   al_score_layer_begin(c, layer, s->rel_row, s->pos_q, s->pos_k)};
    j.ly.key_window = s->key_window, j.ly.key_sinks = s->key_sinks; /* the caller's window and sinks (causal_rows.c) */
    /* per pair about 2 L^2 dh multiply-adds (Q K^T and P V) */
    int parts = al_threadpool_parts(s->pool, (double)j.n_pairs * 2.0 * L * L * dh, 1 << 17);
    if (parts > j.n_pairs) parts = j.n_pairs;
    al_threadpool_for(s->pool, parts, heads_task, &j);
    if (packed) al_rows_compact(s->ctx, row_bytes, s->row_of, n_rows);
}
