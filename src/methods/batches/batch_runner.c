/* batch_runner.c: examples -> padded batches -> al_forward (+ a second model) -> effective attention ->
 * a callback per batch (see batch_runner.h). Every buffer is sized once for the largest batch. */
#include "batch_runner.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../model/forward_internal.h"

al_run_example al_run_example_encoding(const al_encoding *enc) {
    al_run_example ex = {enc->n_tokens, enc->ids, NULL, enc->type_ids, NULL, enc->sequence_ids};
    return ex;
}

al_batch_run_params al_batch_run_default_params(void) {
    al_batch_run_params p;
    memset(&p, 0, sizeof p);
    p.effective_mode = AL_EFFECTIVE_EXACT;
    p.who = "batch run";
    return p;
}

int al_batch_run_length(const al_run_example *examples, int n_examples, int pad_to) {
    int L = pad_to;
    for (int i = 0; i < n_examples; i++)
        if (examples[i].n > L) L = examples[i].n;
    return L;
}

/* What one model computes per batch: output pointers (the runner's or dest) and which it owns. */
typedef struct model_out {
    float *hidden, *attn, *values, *mlm, *eff, *last;
    int *ranks;
    float *own[6]; /* allocations to free */
} model_out;

typedef struct buffers {
    int32_t *ids, *mask, *types, *segments, *pos;
    uint8_t *classes;
    model_out a, b;
} buffers;

static void free_out(model_out *o) {
    for (int i = 0; i < 6; i++) free(o->own[i]);
    free(o->ranks);
}

static void free_buffers(buffers *r) {
    free(r->ids), free(r->mask), free(r->types), free(r->segments), free(r->pos), free(r->classes);
    free_out(&r->a);
    free_out(&r->b);
}

/* Uses dest when given, else allocates n floats when `needed`. Returns 0 on allocation failure. n is a
 * double: on 32-bit WASM a size_t product of the dimensions could wrap around. */
static int take(float *dest, int needed, double n, float **out, float **own) {
    *out = dest;
    if (dest || !needed) return 1;
    if (n * sizeof(float) > (double)SIZE_MAX / 2) return 0;
    *own = *out = malloc((size_t)n * sizeof(float));
    return *out != NULL;
}

/* Output buffers of one model for batches of `chunk` examples. The primary model may have dest buffers,
 * hidden states, MLM logits and ranks; model_b has none of them. */
static int alloc_out(const al_config *c, int chunk, int L, int outputs, int effective,
                     const al_forward_outputs *dest, int primary, model_out *o) {
    const double BL = (double)chunk * L, NL = c->n_layers, H = c->n_heads;
    const double na = NL * BL * H * L, nv = NL * BL * H * c->head_dim;
    const al_forward_outputs none = {0};
    if (!dest) dest = &none;
    int ok = take(dest->hidden_states, primary && (outputs & AL_RUN_HIDDEN), (NL + 1) * BL * c->hidden_size,
                  &o->hidden, &o->own[0]);
    ok = ok && take(dest->attentions, effective || (outputs & AL_RUN_ATTENTIONS), na, &o->attn, &o->own[1]);
    ok = ok && take(dest->values, effective || (outputs & AL_RUN_VALUES), nv, &o->values, &o->own[2]);
    ok = ok && take(dest->mlm_logits, primary && (outputs & AL_RUN_MLM), BL * c->vocab_size, &o->mlm, &o->own[3]);
    ok = ok && take(NULL, effective, na, &o->eff, &o->own[4]);
    ok = ok && take(dest->last_hidden_state, primary && (outputs & AL_RUN_LAST_HIDDEN), BL * c->hidden_size, &o->last,
                    &o->own[5]);
    if (ok && effective && primary) {
        o->ranks = malloc((size_t)c->n_layers * chunk * c->n_heads * sizeof(int));
        ok = o->ranks != NULL;
    }
    return ok;
}

/* Pads examples [first, first + B) into the batch arrays. */
static void fill_batch(const al_run_example *ex, int B, int L, int pad_id, const al_tokenizer *tok,
                       buffers *r) {
    for (int b = 0; b < B; b++) {
        const al_run_example *e = &ex[b];
        for (int t = 0; t < L; t++) {
            const size_t k = (size_t)b * L + t;
            const int given = t < e->n;
            const int real = given && (!e->mask || e->mask[t]);
            r->ids[k] = given ? e->ids[t] : pad_id;
            r->mask[k] = given ? (e->mask ? e->mask[t] : 1) : 0;
            r->types[k] = given && e->type_ids ? e->type_ids[t] : 0;
            r->segments[k] = !real ? -1 : e->segments ? e->segments[t] : 0;
        }
        al_key_classes(tok, r->ids + (size_t)b * L, r->mask + (size_t)b * L, L, r->classes + (size_t)b * L);
    }
}

/* Position ids when some example gives them: the family's default, then the given ones over it. */
static al_status fill_positions(const al_config *c, const al_run_example *ex, int B, int L, buffers *r,
                                al_error *err) {
    al_batch batch = {B, L, r->ids, r->mask, NULL, NULL};
    al_status st = al_fwd_positions(c, &batch, r->pos, err);
    for (int b = 0; !st && b < B; b++)
        if (ex[b].position_ids) memcpy(r->pos + (size_t)b * L, ex[b].position_ids, sizeof(int32_t) * (size_t)ex[b].n);
    return st;
}

static al_status forward_one(const al_model *model, const al_head_policy *policies, const al_batch_run_params *p,
                             int B, int L, const buffers *r, const model_out *o, al_error *err) {
    const al_config *c = al_model_config(model);
    al_batch batch = {B, L, r->ids, r->mask, c->type_vocab_size > 0 ? r->types : NULL, r->pos};
    al_forward_params fp = al_forward_default_params();
    fp.policies = policies;
    fp.progress = p->progress;
    fp.progress_user = p->progress_user;
    fp.cancel = p->cancel;
    fp.pool = p->pool;
    al_forward_outputs out = {
        .hidden_states = o->hidden,
        .attentions = o->attn,
        .values = o->values,
        .mlm_logits = o->mlm,
        .last_hidden_state = o->last,
    };
    al_status st = al_forward(model, &batch, &fp, &out, err);
    if (!st && p->effective)
        st = al_effective_attention(c, o->attn, o->values, r->mask, B, L, p->effective_mode, o->eff, o->ranks, err);
    return st;
}

static al_status check_args(const al_model *model, const al_run_example *ex, int n, const al_batch_run_params *p,
                            const char *who, al_error *err) {
    if (!model || !p || (n > 0 && !ex)) return al_err(err, AL_ERR_INVALID, "%s: NULL model, examples or params", who);
    if (n < 1) return al_err(err, AL_ERR_INVALID, "%s: no examples", who);
    for (int i = 0; i < n; i++)
        if (ex[i].n < 1 || !ex[i].ids)
            return al_err(err, AL_ERR_INVALID, "%s: example %d has no tokens", who, i);
    if ((p->outputs & AL_RUN_MLM) && !al_model_has_mlm_head(model))
        return al_err(err, AL_ERR_INVALID, "%s: MLM logits requested but the model has no MLM head", who);
    if (p->model_b) {
        const al_config *a = al_model_config(model), *b = al_model_config(p->model_b);
        if (a->n_layers != b->n_layers || a->n_heads != b->n_heads || a->head_dim != b->head_dim)
            return al_err(err, AL_ERR_INVALID, "%s: the second model has %d layers x %d heads of %d, the first "
                          "%d x %d of %d", who, b->n_layers, b->n_heads, b->head_dim, a->n_layers, a->n_heads,
                          a->head_dim);
    }
    return AL_OK;
}

al_status al_batch_run(const al_model *model, const al_run_example *examples, int n_examples,
                       const al_batch_run_params *p, al_batch_run_fn fn, void *user, al_error *err) {
    const char *who = p && p->who ? p->who : "batch run";
    al_status st = check_args(model, examples, n_examples, p, who, err);
    if (st) return st;
    const al_config *cfg = al_model_config(model);
    const al_forward_outputs *d = &p->dest;
    const int has_dest = d->hidden_states || d->attentions || d->values || d->mlm_logits || d->last_hidden_state;
    const int L = al_batch_run_length(examples, n_examples, p->pad_to);
    int chunk = p->batch_size > 0 && p->batch_size < n_examples ? p->batch_size : n_examples;
    if (has_dest) chunk = n_examples;
    int any_pos = 0;
    for (int i = 0; i < n_examples; i++) any_pos |= examples[i].position_ids != NULL;

    const size_t tok = (size_t)chunk * L;
    buffers r;
    memset(&r, 0, sizeof r);
    r.ids = malloc(tok * sizeof(int32_t));
    r.mask = malloc(tok * sizeof(int32_t));
    r.types = malloc(tok * sizeof(int32_t));
    r.segments = malloc(tok * sizeof(int32_t));
    r.classes = malloc(tok);
    if (any_pos) r.pos = malloc(tok * sizeof(int32_t));
    int ok = r.ids && r.mask && r.types && r.segments && r.classes && (!any_pos || r.pos);
    ok = ok && alloc_out(cfg, chunk, L, p->outputs, p->effective, d, 1, &r.a);
    if (ok && p->model_b)
        ok = alloc_out(cfg, chunk, L, p->outputs & (AL_RUN_ATTENTIONS | AL_RUN_VALUES), p->effective, NULL, 0, &r.b);
    if (!ok)
        st = al_err(err, AL_ERR_OOM, "%s: out of memory for a batch of %d x %d tokens (lower the batch size)", who,
                    chunk, L);

    const al_tokenizer *tok_model = al_model_tokenizer(model);
    int pad_id = cfg->pad_token_id;
    if (tok_model && al_tokenizer_special_ids(tok_model).pad >= 0) pad_id = al_tokenizer_special_ids(tok_model).pad;
    for (int first = 0; !st && first < n_examples; first += chunk) {
        const int B = n_examples - first < chunk ? n_examples - first : chunk;
        if (p->cancel && *p->cancel) {
            st = al_err(err, AL_ERR_CANCELLED, "%s: cancelled at example %d", who, first);
            break;
        }
        fill_batch(examples + first, B, L, pad_id, tok_model, &r);
        if (any_pos) st = fill_positions(cfg, examples + first, B, L, &r, err);
        if (!st) st = forward_one(model, p->policies, p, B, L, &r, &r.a, err);
        if (!st && p->model_b) st = forward_one(p->model_b, NULL, p, B, L, &r, &r.b, err);
        if (!st) {
            al_run_chunk c = {first, B, L, r.ids, r.mask, r.types, r.pos, r.segments, r.classes,
                              r.a.hidden, r.a.attn, r.a.values, r.a.mlm, r.a.eff, r.a.ranks,
                              r.b.attn, r.b.values, r.b.eff, r.a.last};
            st = fn(user, &c, err);
        }
        if (!st && p->progress) p->progress(p->progress_user, "batches", (double)(first + B) / n_examples);
    }
    free_buffers(&r);
    return st;
}
