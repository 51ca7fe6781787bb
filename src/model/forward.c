/* forward.c: al_forward, the encoder forward pass over a padded batch [B, L] (post-LayerNorm layers as
 * BERT), with the per-(layer, head) attention policies of attention.c (rules: head_policy.c,
 * docs/head_policies.md).
 *
 * Memory: one workspace allocation per call, carved below into named tensors and sized from B, L and the
 * config. The batch is processed layer by layer in chunks of whole sequences (about AL_FWD_CHUNK_TOKENS
 * rows), so only the hidden states of the whole batch are kept at full size; scores live one head at a
 * time ([L, L]). Nothing is allocated inside the loops.
 *
 * Skipping padding (params->skip_pads, docs/head_policies.md): PAPA's layout puts each example's tokens at
 * fixed positions of a long row of padding, and no real token ever reads a pad (keys are masked, constant
 * matrices are masked by m m^T). The batch is then packed to its real tokens, each keeping its position
 * id, the layers run on the packed rows, constants are read at the tokens' positions, and outputs are
 * written back into the caller's layout with zeros at the pads. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/carve.h"
#include "../core/error.h"
#include "../core/memory.h"
#include "../kernels/kernels.h"
#include "family.h"
#include "family_params.h"
#include "forward_internal.h"
#include "head_policy.h"
#include "real_rows.h"
#include "layer_rule.h"
#include "score_rule.h"

/* Rows per chunk to aim for: large enough for efficient GEMMs, small enough to keep scratch modest. */
#define AL_FWD_CHUNK_TOKENS 256

al_forward_params al_forward_default_params(void) {
    al_forward_params p;
    memset(&p, 0, sizeof p);
    return p;
}

static al_status validate(const al_model *m, const al_batch *batch, const al_forward_params *params,
                          const al_forward_outputs *out, al_error *err) {
    if (!m) return al_err(err, AL_ERR_INVALID, "forward: model is NULL");
    if (!batch) return al_err(err, AL_ERR_INVALID, "forward: batch is NULL");
    const al_config *c = &m->config;
    const int B = batch->n_seqs, L = batch->seq_len;
    if (B <= 0) return al_err(err, AL_ERR_INVALID, "forward: n_seqs %d must be >= 1", B);
    if (L <= 0) return al_err(err, AL_ERR_INVALID, "forward: seq_len %d must be >= 1", L);
    if (!batch->input_ids) return al_err(err, AL_ERR_INVALID, "forward: input_ids is NULL");
    for (int b = 0; b < B; b++)
        for (int i = 0; i < L; i++) {
            const size_t t = (size_t)b * L + i;
            const int32_t id = batch->input_ids[t];
            if (id < 0 || id >= c->vocab_size)
                return al_err(err, AL_ERR_INVALID,
                              "forward: input_ids[%d][%d] = %d is outside the vocabulary [0, %d)", b, i,
                              (int)id, c->vocab_size);
            if (batch->attention_mask && batch->attention_mask[t] != 0 && batch->attention_mask[t] != 1)
                return al_err(err, AL_ERR_INVALID, "forward: attention_mask[%d][%d] = %d must be 0 or 1",
                              b, i, (int)batch->attention_mask[t]);
            if (batch->type_ids) {
                const int32_t ty = batch->type_ids[t];
                if (c->type_vocab_size == 0 && ty != 0)
                    return al_err(err, AL_ERR_INVALID,
                                  "forward: type_ids[%d][%d] = %d but %s has no token types", b, i, (int)ty,
                                  al_arch_name(c->arch));
                if (c->type_vocab_size > 0 && (ty < 0 || ty >= c->type_vocab_size))
                    return al_err(err, AL_ERR_INVALID,
                                  "forward: type_ids[%d][%d] = %d is outside [0, %d) (type_vocab_size)", b, i,
                                  (int)ty, c->type_vocab_size);
            }
        }
    if (params) {
        al_status st = al_head_policies_check(params->policies, c->n_layers, c->n_heads, L, "forward", err);
        if (st) return st;
        const int causal = al_family_of(c)->causal;
        /* the layer rules and key rules of docs/decoders.md ("Dropped attention blocks", "Window and sinks") are
         * the decoders' */
        if (params->attn_dropped && !causal)
            return al_err(err, AL_ERR_INVALID, "forward: attn_dropped needs a causal model; %s is an encoder",
                          al_arch_name(c->arch));
        if (params->key_window < 0 || params->key_sinks < 0 || (params->key_sinks > 0 && params->key_window <= 0))
            return al_err(err, AL_ERR_INVALID, "forward: key_window %d and key_sinks %d must be >= 0, and sinks need a "
                          "window", params->key_window, params->key_sinks);
        if (params->key_window > 0 && !causal)
            return al_err(err, AL_ERR_INVALID, "forward: key_window needs a causal model; %s is an encoder",
                          al_arch_name(c->arch));
    }
    if (out && out->mlm_logits && !m->w.mlm_decoder_w)
        return al_err(err, AL_ERR_INVALID, "forward: mlm_logits requested but the model has no MLM head");
    if (out && out->lm_logits && !m->w.lm_head_w)
        return al_err(err, AL_ERR_INVALID, "forward: lm_logits requested but %s is not a causal language model",
                      al_arch_name(c->arch));
    return AL_OK;
}

typedef struct workspace {
    int32_t *pos;     /* [B, L]   position ids (int32 stored in float-sized slots) */
    float *logits;    /* [chunk rows, V]  packed batches' MLM logits before they are written back */
    float *mask;      /* [B, L]   attention mask as 1/0 floats */
    float *x;         /* [B, L, D] hidden states of the whole batch, updated layer by layer */
    float *res;       /* [B, L, D] a causal layer's x + attention (al_forward_residual), or NULL */
    al_fwd_scratch s; /* one chunk's scratch, see forward_internal.h */
} workspace;

/* Carves every tensor (src/core/carve.h); with cv->base == NULL it only measures. */
static void layout(al_carver *cv, const al_model *m, int B, int L, int L_out, int chunk_seqs, int n_threads, int packed,
                   int real_rows, int want_logits, int want_res, workspace *ws) {
    const al_config *c = &m->config;
    const size_t BL = (size_t)B * L, rows = (size_t)chunk_seqs * L, D = (size_t)c->hidden_size;
    const size_t A = (size_t)al_attn_width(c); /* q, k, v and ctx: the heads' width (D but in some decoders) */
    size_t wide = (size_t)c->embedding_size;
    if ((size_t)al_fwd_ffn_width(c) > wide) wide = (size_t)al_fwd_ffn_width(c);
    if ((size_t)m->w.mlm_dim > wide) wide = (size_t)m->w.mlm_dim;
    ws->pos = al_carve_i32(cv, BL);
    ws->mask = al_carve(cv, BL);
    ws->x = al_carve_rows(cv, BL, D);
    ws->res = want_res ? al_carve_rows(cv, BL, D) : NULL;
    ws->s.n_seqs = chunk_seqs;
    ws->s.q = al_carve_rows(cv, rows, A);
    ws->s.k = al_carve_rows(cv, rows, A);
    ws->s.v = al_carve_rows(cv, rows, A);
    ws->s.ctx = al_carve_rows(cv, rows, A);
    ws->s.tmp = al_carve_rows(cv, rows, D);
    ws->s.wide = al_carve_rows(cv, rows, wide);
    ws->s.n_threads = n_threads;
    ws->s.probs = al_carve_rows(cv, (size_t)n_threads * L, (size_t)L);
    ws->s.chat = al_carve_rows(cv, (size_t)n_threads * L, (size_t)L);
    /* a packed batch gathers its constants here; a causal model drops their future entries here */
    ws->s.gathered = packed || al_family_of(c)->causal ? al_carve_rows(cv, (size_t)n_threads * L, (size_t)L) : NULL;
    ws->s.row_of = packed && real_rows ? al_carve_i32(cv, rows) : NULL;
    ws->s.pos_of = packed && real_rows ? al_carve_i32(cv, rows) : NULL;
    ws->s.n_rows = (int)rows;
    ws->logits = packed && want_logits ? al_carve_rows(cv, rows, (size_t)c->vocab_size) : NULL;
    ws->s.rel = ws->s.pos_q = ws->s.pos_k = ws->s.rel_work = NULL;
    ws->s.rel_row = NULL;
    ws->s.rel_work_size = 0;
    const al_score_rule *rule = al_score_rule_of(c);
    if (al_score_table_rows(c) > 0) { /* the score rule's relative-position table (DeBERTa's) */
        const size_t R = (size_t)al_score_table_rows(c);
        ws->s.rel = al_carve_rows(cv, R, D);
        ws->s.pos_q = al_carve_rows(cv, R, D);
        ws->s.pos_k = al_carve_rows(cv, R, D);
        ws->s.rel_row = al_carve_i32(cv, 2 * (size_t)L_out);
        ws->s.rel_work_size = rule->head_scratch ? rule->head_scratch(c, L, L_out) : 0;
        ws->s.rel_work = al_carve_rows(cv, (size_t)n_threads, ws->s.rel_work_size);
    }
    ws->s.pos_layer = -1;
}

/* Rows [B, L, cols] of a packed batch written into the caller's [B, L_out, cols] (zeros at pads); without
 * a map a plain copy. */
static void store_rows(float *dst, const float *src, const int32_t *map, int B, int L, int L_out, size_t cols) {
    if (!map) {
        memcpy(dst, src, sizeof(float) * (size_t)B * L * cols);
        return;
    }
    for (int b = 0; b < B; b++)
        al_fwd_scatter_rows(dst + (size_t)b * L_out * cols, src + (size_t)b * L * cols, cols, map + (size_t)b * L, L, L_out,
                            cols);
}

void al_fwd_activate(al_act act, float *x, size_t n) {
    switch (act) {
    case AL_ACT_GELU: al_gelu(x, n); break;
    case AL_ACT_GELU_TANH: al_gelu_tanh(x, n); break;
    case AL_ACT_RELU: al_relu(x, n); break;
    case AL_ACT_SILU: al_silu(x, n); break;
    }
}

/* The activation over n values cut into equal runs, one per task: elementwise, so any cut gives the
 * same bits. */
typedef struct act_job {
    al_act act;
    float *x;
    size_t n, per;
} act_job;

static void act_task(void *arg, int t, int n_tasks, int thread) {
    const act_job *j = arg;
    size_t i0 = (size_t)t * j->per;
    if (i0 >= j->n) return;
    al_fwd_activate(j->act, j->x + i0, j->n - i0 < j->per ? j->n - i0 : j->per);
}

void al_fwd_activate_pool(al_threadpool *pool, al_act act, float *x, size_t n) {
    int parts = al_threadpool_parts(pool, (double)n, 16384.0);
    act_job j = {act, x, n, ((n + (size_t)parts - 1) / (size_t)parts + 3) / 4 * 4};
    al_threadpool_for(pool, parts, act_task, &j);
}

/* act(u) * g over rows of [u | g] (width 2I), u replaced in place, rows cut over the pool's threads: elementwise,
 * so any cut gives the same bits. */
typedef struct glu_job {
    al_act act;
    float *ug;
    int rows, I;
} glu_job;

static void glu_task(void *arg, int t, int n_tasks, int thread) {
    (void)thread;
    const glu_job *j = arg;
    const int r0 = (int)((long long)t * j->rows / n_tasks), r1 = (int)((long long)(t + 1) * j->rows / n_tasks);
    for (int r = r0; r < r1; r++) {
        float *u = j->ug + (size_t)r * 2 * j->I;
        const float *g = u + j->I;
        al_fwd_activate(j->act, u, (size_t)j->I);
        for (int i = 0; i < j->I; i++) u[i] *= g[i];
    }
}

void al_fwd_glu_pool(al_threadpool *pool, al_act act, float *ug, int rows, int I) {
    glu_job j = {act, ug, rows, I};
    int parts = al_threadpool_parts(pool, (double)rows * I, 16384.0);
    if (parts > rows) parts = rows;
    if (parts < 1) parts = 1;
    al_threadpool_for(pool, parts, glu_task, &j);
}

int al_fwd_ffn_width(const al_config *c) {
    return c->intermediate_size * al_layer_rule_of(c)->ffn_factor; /* 2: input and gate side by side */
}

/* One encoder layer on one chunk: x [rows, D] is updated in place. */
static void layer_chunk(const al_model *m, int l, const al_head_policy *policies, float *x, const float *mask,
                        int L, al_fwd_scratch *s, float *attn_out, float *values_out) {
    const int rows = s->n_seqs * L;
    const size_t row_bytes = sizeof(float) * (size_t)m->config.hidden_size;
    /* a packed chunk's row-wise parts run on its real tokens (real_rows.h); nothing reads its pad rows */
    s->n_rows = s->row_of ? al_real_rows(mask, rows, s->row_of) : rows;
    s->row_pos = s->pos;
    if (s->n_rows < rows) {
        al_rows_compact(x, row_bytes, s->row_of, s->n_rows);
        al_rows_gather(s->pos_of, s->pos, sizeof(int32_t), s->row_of, s->n_rows);
        s->row_pos = s->pos_of;
    }
    al_layer_rule_of(&m->config)->layer(m, l, policies, x, mask, L, s, attn_out, values_out); /* rules/layer_*.c */
    if (s->n_rows < rows) al_rows_expand(x, row_bytes, s->row_of, s->n_rows, rows);
    if (s->n_rows < rows && s->attn_residual) al_rows_expand(s->attn_residual, row_bytes, s->row_of, s->n_rows, rows);
}

void al_fwd_layer_tail(const al_model *m, int l, al_threadpool *pool, const float *ctx, float *x, int rows, float *tmp,
                       float *wide) {
    al_layer_rule_of(&m->config)->tail(m, l, pool, ctx, x, rows, tmp, wide); /* rules/layer_*.c */
}

/* MLM head on one chunk: x [rows, D] -> logits [rows, V]. wide holds the transform [rows, mlm_dim]. */
void al_fwd_mlm_rows(const al_model *m, al_threadpool *pool, const float *x, int rows, float *wide, float *logits) {
    const al_weights *w = &m->w;
    const int D = m->config.hidden_size, V = m->config.vocab_size, md = w->mlm_dim;
    al_linear_pool(pool, rows, md, D, x, w->mlm_dense_w, w->mlm_dense_b, wide);
    al_fwd_activate_pool(pool, w->mlm_act, wide, (size_t)rows * md);
    al_layernorm(wide, wide, rows, md, w->mlm_ln_g, w->mlm_ln_b, m->config.layer_norm_eps);
    al_linear_pool(pool, rows, V, md, wide, w->mlm_decoder_w, w->mlm_decoder_b, logits);
}

void al_fwd_lm_rows(const al_model *m, al_threadpool *pool, const float *x, int rows, float *logits) {
    al_linear_pool(pool, rows, m->config.vocab_size, m->config.hidden_size, x, m->w.lm_head_w, NULL, logits);
}

static int cancelled(const al_forward_params *p) { return p && p->cancel && *p->cancel; }

/* The forward pass over batch (packed or not: map NULL). Outputs (and residual, al_forward_residual's) are in the
 * caller's layout of length L_out. */
static al_status forward_rows(const al_model *model, const al_batch *batch, const al_forward_params *params,
                              al_forward_outputs *out, float *residual, const int32_t *map, int L_out, al_error *err) {
    al_status st;
    const al_config *c = &model->config;
    const int B = batch->n_seqs, L = batch->seq_len, NL = c->n_layers, H = c->n_heads, D = c->hidden_size;
    const size_t BL = (size_t)B * L;
    al_forward_outputs none;
    memset(&none, 0, sizeof none);
    if (!out) out = &none;

    int chunk_seqs = AL_FWD_CHUNK_TOKENS / L;
    if (chunk_seqs < 1) chunk_seqs = 1;
    if (chunk_seqs > B) chunk_seqs = B;

    /* Measure, then allocate once. */
    al_threadpool *pool = params ? params->pool : NULL;
    const int n_threads = al_threadpool_size(pool);
    workspace ws;
    al_carver cv = {NULL, 0};
    layout(&cv, model, B, L, L_out, chunk_seqs, n_threads, map != NULL, !(params && params->pad_rows), out->mlm_logits || out->lm_logits, residual != NULL, &ws);
    char what[96];
    snprintf(what, sizeof what, "forward: the workspace for batch [%d, %d]", B, L_out);
    st = al_memory_check(al_carve_bytes(&cv), what, err); /* refuses too what size_t cannot hold */
    if (st != AL_OK) return st;
    const size_t n_floats = (size_t)cv.used;
    float *mem = malloc(n_floats * sizeof(float));
    if (!mem)
        return al_err(err, AL_ERR_OOM, "forward: out of memory allocating %zu MB of workspace for batch [%d, %d]",
                      n_floats * sizeof(float) >> 20, B, L);
    cv = (al_carver){mem, 0};
    layout(&cv, model, B, L, L_out, chunk_seqs, n_threads, map != NULL, !(params && params->pad_rows), out->mlm_logits || out->lm_logits, residual != NULL, &ws);
    ws.s.pool = pool;
    ws.s.L_out = L_out;
    ws.s.key_window = params ? params->key_window : 0;
    ws.s.key_sinks = params ? params->key_sinks : 0;

    st = al_fwd_positions(c, batch, ws.pos, err);
    if (st != AL_OK) goto done;
    if (ws.s.rel_row) al_score_rule_of(c)->prepare(model, L_out, ws.s.rel, ws.s.rel_row);
    for (size_t t = 0; t < BL; t++) ws.mask[t] = batch->attention_mask ? (float)batch->attention_mask[t] : 1.0f;

    const size_t layer_hidden = (size_t)B * L_out * D; /* one layer's slice of out->hidden_states */
    for (int b0 = 0; b0 < B; b0 += chunk_seqs) {
        int nb = B - b0 < chunk_seqs ? B - b0 : chunk_seqs;
        al_fwd_embed(model, batch, ws.pos, b0, nb, ws.s.wide, ws.x + (size_t)b0 * L * D);
    }
    if (out->hidden_states) store_rows(out->hidden_states, ws.x, map, B, L, L_out, (size_t)D);

    for (int l = 0; l < NL; l++) {
        if (cancelled(params)) {
            st = al_err(err, AL_ERR_CANCELLED, "forward: cancelled before layer %d", l);
            goto done;
        }
        const al_head_policy *pol = params && params->policies ? params->policies + (size_t)l * H : NULL;
        ws.s.attn_dropped = params && params->attn_dropped && params->attn_dropped[l];
        if (ws.s.attn_dropped) { /* a left-out block's attentions and values are 0, like a zero head's */
            if (out->attentions) memset(out->attentions + (size_t)l * B * H * L_out * L_out, 0,
                                        sizeof(float) * (size_t)B * H * L_out * L_out);
            if (out->values) memset(out->values + (size_t)l * B * H * L_out * c->head_dim, 0,
                                    sizeof(float) * (size_t)B * H * L_out * c->head_dim);
        }
        for (int b0 = 0; b0 < B; b0 += chunk_seqs) {
            int nb = B - b0 < chunk_seqs ? B - b0 : chunk_seqs;
            ws.s.n_seqs = nb;
            ws.s.map = map ? map + (size_t)b0 * L : NULL;
            ws.s.pos = ws.pos + (size_t)b0 * L;
            ws.s.attn_residual = ws.res ? ws.res + (size_t)b0 * L * D : NULL;
            float *attn = out->attentions && !ws.s.attn_dropped
                              ? out->attentions + ((size_t)l * B + b0) * H * L_out * L_out : NULL;
            float *vals = out->values && !ws.s.attn_dropped
                              ? out->values + ((size_t)l * B + b0) * H * L_out * c->head_dim : NULL;
            layer_chunk(model, l, pol, ws.x + (size_t)b0 * L * D, ws.mask + (size_t)b0 * L, L, &ws.s, attn, vals);
        }
        if (residual) store_rows(residual + (size_t)l * layer_hidden, ws.res, map, B, L, L_out, (size_t)D);
        if (out->hidden_states)
            store_rows(out->hidden_states + (size_t)(l + 1) * layer_hidden, ws.x, map, B, L, L_out, (size_t)D);
        if (params && params->progress) params->progress(params->progress_user, "forward", (double)(l + 1) / NL);
    }
    if (out->last_hidden_state) store_rows(out->last_hidden_state, ws.x, map, B, L, L_out, (size_t)D);

    if (out->mlm_logits) {
        if (cancelled(params)) {
            st = al_err(err, AL_ERR_CANCELLED, "forward: cancelled before the MLM head");
            goto done;
        }
        for (int b0 = 0; b0 < B; b0 += chunk_seqs) {
            int nb = B - b0 < chunk_seqs ? B - b0 : chunk_seqs;
            float *logits = out->mlm_logits + (size_t)b0 * L_out * c->vocab_size;
            al_fwd_mlm_rows(model, pool, ws.x + (size_t)b0 * L * D, nb * L, ws.s.wide, map ? ws.logits : logits);
            if (map) store_rows(logits, ws.logits, map + (size_t)b0 * L, nb, L, L_out, (size_t)c->vocab_size);
        }
    }
    if (out->lm_logits) { /* a causal model's next-token logits: final-normed states times the LM head */
        if (cancelled(params)) {
            st = al_err(err, AL_ERR_CANCELLED, "forward: cancelled before the LM head");
            goto done;
        }
        for (int b0 = 0; b0 < B; b0 += chunk_seqs) {
            int nb = B - b0 < chunk_seqs ? B - b0 : chunk_seqs;
            float *logits = out->lm_logits + (size_t)b0 * L_out * c->vocab_size;
            al_fwd_lm_rows(model, pool, ws.x + (size_t)b0 * L * D, nb * L, map ? ws.logits : logits);
            if (map) store_rows(logits, ws.logits, map + (size_t)b0 * L, nb, L, L_out, (size_t)c->vocab_size);
        }
    }
    st = AL_OK;
done:
    free(mem);
    return st;
}

/* The batch packed to its real tokens: [B, Lp] ids, mask, type ids and position ids, and map, each real
 * token's position in the caller's row (-1 for the packing pads that fill shorter rows). */
typedef struct packing {
    int Lp;
    int32_t *ids, *mask, *types, *pos, *map;
    int32_t *mem;
} packing;

/* Packs batch when that saves rows (returns 1), else 0 (nothing allocated). */
static int pack(const al_model *m, const al_batch *batch, packing *pk, al_status *st, al_error *err) {
    const int B = batch->n_seqs, L = batch->seq_len;
    memset(pk, 0, sizeof *pk);
    *st = AL_OK;
    if (!batch->attention_mask) return 0;
    int Lp = 1;
    for (int b = 0; b < B; b++) {
        int n = 0;
        for (int i = 0; i < L; i++) n += batch->attention_mask[(size_t)b * L + i] != 0;
        if (n > Lp) Lp = n;
    }
    if (Lp >= L) return 0;
    const size_t BL = (size_t)B * L, BP = (size_t)B * Lp;
    pk->mem = malloc(sizeof(int32_t) * (BL + 5 * BP));
    if (!pk->mem) {
        *st = al_err(err, AL_ERR_OOM, "forward: out of memory packing batch [%d, %d]", B, L);
        return 0;
    }
    int32_t *pos_full = pk->mem;
    pk->Lp = Lp;
    pk->ids = pos_full + BL, pk->mask = pk->ids + BP, pk->types = pk->mask + BP, pk->pos = pk->types + BP;
    pk->map = pk->pos + BP;
    *st = al_fwd_positions(&m->config, batch, pos_full, err); /* the caller's layout fixes the positions */
    if (*st) {
        free(pk->mem);
        return 0;
    }
    for (int b = 0; b < B; b++) {
        int j = 0;
        for (int i = 0; i < L; i++) {
            const size_t t = (size_t)b * L + i;
            if (!batch->attention_mask[t]) continue;
            const size_t u = (size_t)b * Lp + j++;
            pk->ids[u] = batch->input_ids[t];
            pk->mask[u] = 1;
            pk->types[u] = batch->type_ids ? batch->type_ids[t] : 0;
            pk->pos[u] = pos_full[t];
            pk->map[u] = i;
        }
        for (; j < Lp; j++) {
            const size_t u = (size_t)b * Lp + j;
            pk->ids[u] = 0, pk->mask[u] = 0, pk->types[u] = 0, pk->pos[u] = 0, pk->map[u] = -1;
        }
    }
    return 1;
}

al_status al_forward_residual(const al_model *model, const al_batch *batch, const al_forward_params *params,
                              al_forward_outputs *out, float *residual, al_error *err) {
    al_status st = validate(model, batch, params, out, err);
    if (st != AL_OK) return st;
    if (residual && !al_family_of(&model->config)->causal)
        return al_err(err, AL_ERR_INVALID, "forward: the attention blocks' residual needs a causal model; %s is an "
                      "encoder", al_arch_name(model->config.arch));
    packing pk;
    if (!params || !params->skip_pads || !pack(model, batch, &pk, &st, err))
        return st ? st : forward_rows(model, batch, params, out, residual, NULL, batch->seq_len, err);
    al_batch packed = {batch->n_seqs, pk.Lp, pk.ids, pk.mask, batch->type_ids ? pk.types : NULL, pk.pos};
    st = forward_rows(model, &packed, params, out, residual, pk.map, batch->seq_len, err);
    free(pk.mem);
    return st;
}

al_status al_forward(const al_model *model, const al_batch *batch, const al_forward_params *params,
                     al_forward_outputs *out, al_error *err) {
    return al_forward_residual(model, batch, params, out, NULL, err);
}

al_status al_forward_embeddings(const al_model *model, const al_batch *batch, float *x, al_error *err) {
    al_status st = validate(model, batch, NULL, NULL, err);
    if (st != AL_OK) return st;
    const al_config *c = &model->config;
    const size_t BL = (size_t)batch->n_seqs * batch->seq_len;
    int32_t *pos = malloc(sizeof(int32_t) * BL);
    float *wide = model->w.emb_proj_w ? malloc(sizeof(float) * BL * c->embedding_size) : NULL;
    if (!pos || (model->w.emb_proj_w && !wide)) st = al_err(err, AL_ERR_OOM, "forward: out of memory for the embeddings");
    if (!st) st = al_fwd_positions(c, batch, pos, err);
    if (!st) al_fwd_embed(model, batch, pos, 0, batch->n_seqs, wide, x);
    free(pos);
    free(wide);
    return st;
}
