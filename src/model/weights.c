/* weights.c: the name maps of BERT, RoBERTa, DistilBERT and ELECTRA. One "plan" lists every weight
 * a model needs (its name in a Hugging Face state dict, its shape, how to initialise it, where its
 * pointer goes); loading from files and random initialisation both walk the same plan, and every
 * weight is carved out of one allocation (model->storage). */
#include "weights.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/memory.h"
#include "../core/rng.h"

typedef enum init_kind { INIT_NORMAL, INIT_ZERO, INIT_ONE } init_kind;

typedef enum slot_role {
    ROLE_PLAIN,
    ROLE_WORD_EMB,  /* its padding row starts at zero (BERT's initialisation) */
    ROLE_DECODER_W, /* tied to the word embeddings when the file omits it */
} slot_role;

typedef struct slot {
    float **dst;
    char name[192];
    char alt[192]; /* another accepted name, "" when none */
    int ndim;
    int64_t shape[2];
    init_kind init;
    slot_role role;
} slot;

typedef struct plan {
    slot *slots;
    int n, cap;
} plan;

static slot *add_slot(plan *p, float **dst, init_kind init, int ndim, int64_t d0, int64_t d1,
                      const char *fmt_prefix, const char *name) {
    slot *s = &p->slots[p->n++];
    memset(s, 0, sizeof *s);
    s->dst = dst;
    s->init = init;
    s->ndim = ndim;
    s->shape[0] = d0;
    s->shape[1] = d1;
    snprintf(s->name, sizeof s->name, "%s%s", fmt_prefix, name);
    return s;
}

/* A Linear layer: weight [out, in] (normal) and bias [out] (zero). */
static void add_linear(plan *p, float **w, float **b, int64_t out, int64_t in, const char *prefix,
                       const char *base) {
    char name[160];
    snprintf(name, sizeof name, "%s.weight", base);
    add_slot(p, w, INIT_NORMAL, 2, out, in, prefix, name);
    snprintf(name, sizeof name, "%s.bias", base);
    add_slot(p, b, INIT_ZERO, 1, out, 0, prefix, name);
}

static void add_layernorm(plan *p, float **g, float **b, int64_t dim, const char *prefix,
                          const char *base) {
    char name[160];
    snprintf(name, sizeof name, "%s.weight", base);
    add_slot(p, g, INIT_ONE, 1, dim, 0, prefix, name);
    snprintf(name, sizeof name, "%s.bias", base);
    add_slot(p, b, INIT_ZERO, 1, dim, 0, prefix, name);
}

static const char *family_prefix(al_arch arch) {
    switch (arch) {
    case AL_ARCH_BERT: return "bert.";
    case AL_ARCH_ROBERTA: return "roberta.";
    case AL_ARCH_DISTILBERT: return "distilbert.";
    case AL_ARCH_ELECTRA: return "electra.";
    }
    return "";
}

/* The first weight of the family's MLM head; its presence says the file has the head. */
static const char *mlm_marker(al_arch arch) {
    switch (arch) {
    case AL_ARCH_BERT: return "cls.predictions.transform.dense.weight";
    case AL_ARCH_ROBERTA: return "lm_head.dense.weight";
    case AL_ARCH_DISTILBERT: return "vocab_transform.weight";
    case AL_ARCH_ELECTRA: return "generator_predictions.dense.weight";
    }
    return "";
}

static void plan_body(plan *p, const al_config *c, al_weights *w, al_layer_weights *layers,
                      const char *pre) {
    const int64_t V = c->vocab_size, E = c->embedding_size, D = c->hidden_size;
    const int64_t I = c->intermediate_size, P = c->max_position_embeddings, T = c->type_vocab_size;
    add_slot(p, &w->word_emb, INIT_NORMAL, 2, V, E, pre, "embeddings.word_embeddings.weight")->role =
        ROLE_WORD_EMB;
    add_slot(p, &w->pos_emb, INIT_NORMAL, 2, P, E, pre, "embeddings.position_embeddings.weight");
    if (T > 0)
        add_slot(p, &w->type_emb, INIT_NORMAL, 2, T, E, pre,
                 "embeddings.token_type_embeddings.weight");
    add_layernorm(p, &w->emb_ln_g, &w->emb_ln_b, E, pre, "embeddings.LayerNorm");
    if (c->arch == AL_ARCH_ELECTRA && E != D)
        add_linear(p, &w->emb_proj_w, &w->emb_proj_b, D, E, pre, "embeddings_project");
    char base[96];
    for (int l = 0; l < c->n_layers; l++) {
        al_layer_weights *L = &layers[l];
        if (c->arch == AL_ARCH_DISTILBERT) {
            static const char *const lin[4] = {"q_lin", "k_lin", "v_lin", "out_lin"};
            float **ws[4] = {&L->q_w, &L->k_w, &L->v_w, &L->o_w};
            float **bs[4] = {&L->q_b, &L->k_b, &L->v_b, &L->o_b};
            for (int i = 0; i < 4; i++) {
                snprintf(base, sizeof base, "transformer.layer.%d.attention.%s", l, lin[i]);
                add_linear(p, ws[i], bs[i], D, D, pre, base);
            }
            snprintf(base, sizeof base, "transformer.layer.%d.sa_layer_norm", l);
            add_layernorm(p, &L->ln_attn_g, &L->ln_attn_b, D, pre, base);
            snprintf(base, sizeof base, "transformer.layer.%d.ffn.lin1", l);
            add_linear(p, &L->ff_in_w, &L->ff_in_b, I, D, pre, base);
            snprintf(base, sizeof base, "transformer.layer.%d.ffn.lin2", l);
            add_linear(p, &L->ff_out_w, &L->ff_out_b, D, I, pre, base);
            snprintf(base, sizeof base, "transformer.layer.%d.output_layer_norm", l);
            add_layernorm(p, &L->ln_ffn_g, &L->ln_ffn_b, D, pre, base);
        } else {
            static const char *const lin[3] = {"query", "key", "value"};
            float **ws[3] = {&L->q_w, &L->k_w, &L->v_w};
            float **bs[3] = {&L->q_b, &L->k_b, &L->v_b};
            for (int i = 0; i < 3; i++) {
                snprintf(base, sizeof base, "encoder.layer.%d.attention.self.%s", l, lin[i]);
                add_linear(p, ws[i], bs[i], D, D, pre, base);
            }
            snprintf(base, sizeof base, "encoder.layer.%d.attention.output.dense", l);
            add_linear(p, &L->o_w, &L->o_b, D, D, pre, base);
            snprintf(base, sizeof base, "encoder.layer.%d.attention.output.LayerNorm", l);
            add_layernorm(p, &L->ln_attn_g, &L->ln_attn_b, D, pre, base);
            snprintf(base, sizeof base, "encoder.layer.%d.intermediate.dense", l);
            add_linear(p, &L->ff_in_w, &L->ff_in_b, I, D, pre, base);
            snprintf(base, sizeof base, "encoder.layer.%d.output.dense", l);
            add_linear(p, &L->ff_out_w, &L->ff_out_b, D, I, pre, base);
            snprintf(base, sizeof base, "encoder.layer.%d.output.LayerNorm", l);
            add_layernorm(p, &L->ln_ffn_g, &L->ln_ffn_b, D, pre, base);
        }
    }
}

/* MLM head: dense -> act -> LayerNorm -> decoder (+ bias). Hugging Face's RoBERTa and ELECTRA
 * heads always use exact GELU; BERT and DistilBERT use the config's activation. */
static void plan_mlm(plan *p, const al_config *c, al_weights *w) {
    const int64_t V = c->vocab_size, D = c->hidden_size;
    const char *dense = "", *ln = "", *dec = "", *bias = "", *bias_alt = "";
    w->mlm_dim = c->hidden_size;
    w->mlm_act = c->act;
    switch (c->arch) {
    case AL_ARCH_BERT:
        dense = "cls.predictions.transform.dense";
        ln = "cls.predictions.transform.LayerNorm";
        dec = "cls.predictions.decoder.weight";
        bias = "cls.predictions.bias";
        bias_alt = "cls.predictions.decoder.bias";
        break;
    case AL_ARCH_ROBERTA:
        dense = "lm_head.dense";
        ln = "lm_head.layer_norm";
        dec = "lm_head.decoder.weight";
        bias = "lm_head.bias";
        bias_alt = "lm_head.decoder.bias";
        w->mlm_act = AL_ACT_GELU;
        break;
    case AL_ARCH_DISTILBERT:
        dense = "vocab_transform";
        ln = "vocab_layer_norm";
        dec = "vocab_projector.weight";
        bias = "vocab_projector.bias";
        break;
    case AL_ARCH_ELECTRA:
        dense = "generator_predictions.dense";
        ln = "generator_predictions.LayerNorm";
        dec = "generator_lm_head.weight";
        bias = "generator_lm_head.bias";
        w->mlm_dim = c->embedding_size;
        w->mlm_act = AL_ACT_GELU;
        break;
    }
    const int64_t M = w->mlm_dim;
    add_linear(p, &w->mlm_dense_w, &w->mlm_dense_b, M, D, "", dense);
    add_layernorm(p, &w->mlm_ln_g, &w->mlm_ln_b, M, "", ln);
    add_slot(p, &w->mlm_decoder_w, INIT_NORMAL, 2, V, M, "", dec)->role = ROLE_DECODER_W;
    slot *b = add_slot(p, &w->mlm_decoder_b, INIT_ZERO, 1, V, 0, "", bias);
    snprintf(b->alt, sizeof b->alt, "%s", bias_alt);
}

/* Builds the plan; layer pointers go into model->layer_storage (allocated here). */
static al_status make_plan(al_model *m, const char *prefix, int mlm, plan *p, al_error *err) {
    const al_config *c = &m->config;
    memset(&m->w, 0, sizeof m->w);
    m->layer_storage = calloc((size_t)c->n_layers, sizeof *m->layer_storage);
    p->cap = 16 + 16 * c->n_layers + 8;
    p->n = 0;
    p->slots = malloc((size_t)p->cap * sizeof *p->slots);
    if (!m->layer_storage || !p->slots) {
        free(p->slots);
        p->slots = NULL;
        return al_err(err, AL_ERR_OOM, "model: out of memory for %d layers", c->n_layers);
    }
    m->w.layers = m->layer_storage;
    plan_body(p, c, &m->w, m->layer_storage, prefix);
    if (mlm) plan_mlm(p, c, &m->w);
    return AL_OK;
}

static int64_t slot_numel(const slot *s) { return s->ndim == 1 ? s->shape[0] : s->shape[0] * s->shape[1]; }

/* Old TensorFlow-converted checkpoints name LayerNorm parameters gamma and beta. */
static const al_tensor_entry *find_with_aliases(const al_tensor_list *list, const slot *s) {
    const al_tensor_entry *t = al_tensor_list_find(list, s->name);
    if (!t && s->alt[0]) t = al_tensor_list_find(list, s->alt);
    size_t len = strlen(s->name);
    static const struct { const char *from, *to; } ln_alias[2] = {
        {"LayerNorm.weight", "LayerNorm.gamma"}, {"LayerNorm.bias", "LayerNorm.beta"}};
    for (int i = 0; !t && i < 2; i++) {
        size_t fl = strlen(ln_alias[i].from);
        if (len < fl || strcmp(s->name + len - fl, ln_alias[i].from) != 0) continue;
        char alt[208];
        snprintf(alt, sizeof alt, "%.*s%s", (int)(len - fl), s->name, ln_alias[i].to);
        t = al_tensor_list_find(list, alt);
    }
    return t;
}

static void format_shape(char *buf, size_t size, int ndim, const int64_t *shape) {
    size_t at = (size_t)snprintf(buf, size, "[");
    for (int i = 0; i < ndim && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%lld", i ? ", " : "", (long long)shape[i]);
    if (at < size) snprintf(buf + at, size - at, "]");
}

static al_status check_shape(const slot *s, const al_tensor_entry *t, al_error *err) {
    int same = t->ndim == s->ndim;
    for (int i = 0; same && i < s->ndim; i++) same = t->shape[i] == s->shape[i];
    if (same) return AL_OK;
    char got[96], want[64];
    format_shape(got, sizeof got, t->ndim, t->shape);
    format_shape(want, sizeof want, s->ndim, s->shape);
    return al_err(err, AL_ERR_FORMAT, "%s: tensor '%s' shape %s does not match config (expected %s)",
                  t->file, t->name, got, want);
}

/* n_floats is 64-bit: on wasm32 a config's sizes could overflow size_t before the malloc. Beyond
 * 2^32 weights (16 GB of float32, far past any BERT-family encoder) a config is refused outright. */
#define MAX_WEIGHTS ((uint64_t)1 << 32)

static al_status alloc_storage(al_model *m, uint64_t n_floats, al_error *err) {
    if (n_floats > MAX_WEIGHTS || n_floats > (uint64_t)(SIZE_MAX / sizeof(float)))
        return al_err(err, AL_ERR_OOM, "model: %llu weights do not fit in memory",
                      (unsigned long long)n_floats);
    al_status st = al_memory_check(n_floats * sizeof(float), "model: its weights", err);
    if (st != AL_OK) return st;
    m->n_floats = (size_t)n_floats;
    m->storage = malloc((n_floats ? (size_t)n_floats : 1) * sizeof(float));
    if (!m->storage)
        return al_err(err, AL_ERR_OOM, "model: out of memory for %llu weights (%llu MB)",
                      (unsigned long long)n_floats, (unsigned long long)(n_floats * 4 >> 20));
    return AL_OK;
}

/* The MLM decoder is the word embeddings when the config ties them and their shapes agree (as Hugging
 * Face's tie_weights does); a stored decoder is then not used. */
static int decoder_tied(const al_model *m) {
    return m->config.tie_word_embeddings && m->w.mlm_dim == m->config.embedding_size;
}

static uint64_t plan_total(const al_model *m, const plan *p) {
    uint64_t total = 0;
    for (int i = 0; i < p->n; i++)
        if (!(p->slots[i].role == ROLE_DECODER_W && decoder_tied(m))) total += (uint64_t)slot_numel(&p->slots[i]);
    return total;
}

al_status al_weights_count(const al_config *config, int mlm_head, uint64_t *n_weights, al_error *err) {
    *n_weights = 0;
    al_model *m = calloc(1, sizeof *m);
    if (!m) return al_err(err, AL_ERR_OOM, "model: out of memory");
    m->config = *config;
    plan p;
    al_status st = make_plan(m, "", mlm_head, &p, err);
    if (st == AL_OK) *n_weights = plan_total(m, &p);
    free(p.slots);
    free(m->layer_storage);
    free(m);
    return st;
}

al_status al_weights_check_memory(const al_config *c, uint64_t n_weights, uint64_t file_bytes, al_error *err) {
    char what[224], files[32];
    int n = snprintf(what, sizeof what,
                     "config.json: %d layers of hidden size %d, intermediate %d, vocabulary %d (%llu weights)",
                     c->n_layers, c->hidden_size, c->intermediate_size, c->vocab_size, (unsigned long long)n_weights);
    if (file_bytes && n > 0 && (size_t)n < sizeof what) {
        al_memory_format(files, sizeof files, file_bytes);
        snprintf(what + n, sizeof what - (size_t)n, " with at least %s of weight files", files);
    }
    if (n_weights > MAX_WEIGHTS) /* below 2^59 (sizes are below 2^24): the bytes do not wrap */
        return al_memory_refuse(n_weights * sizeof(float) + file_bytes, what, "attnlab loads at most 2^32 weights", err);
    return al_memory_check(n_weights * sizeof(float) + file_bytes, what, err);
}

al_status al_weights_load(al_model *m, const al_tensor_list *list, const char *weights_file,
                          al_error *err) {
    const al_config *c = &m->config;
    const char *prefix = family_prefix(c->arch);
    char probe[96];
    snprintf(probe, sizeof probe, "%sembeddings.word_embeddings.weight", prefix);
    if (!al_tensor_list_find(list, probe)) prefix = ""; /* saved from the bare encoder class */
    int mlm = al_tensor_list_find(list, mlm_marker(c->arch)) != NULL;
    plan p;
    al_status st = make_plan(m, prefix, mlm, &p, err);
    if (st != AL_OK) return st;
    /* A model too large for memory is refused by its config, before any tensor is looked at (its
     * files are in memory already, so only the float32 weights are to come). */
    if ((st = al_weights_check_memory(c, plan_total(m, &p), 0, err)) != AL_OK) {
        free(p.slots);
        return st;
    }
    const al_tensor_entry **found = calloc((size_t)p.n, sizeof *found);
    if (!found) {
        free(p.slots);
        return al_err(err, AL_ERR_OOM, "model: out of memory");
    }
    uint64_t total = 0;
    for (int i = 0; i < p.n && st == AL_OK; i++) {
        const slot *s = &p.slots[i];
        if (s->role == ROLE_DECODER_W && decoder_tied(m)) continue; /* tied to word_emb below */
        const al_tensor_entry *t = find_with_aliases(list, s);
        if (!t) {
            if (s->role == ROLE_DECODER_W) continue; /* tied to word_emb below */
            st = al_err(err, AL_ERR_FORMAT, "%s: missing tensor '%s'", weights_file, s->name);
            break;
        }
        if (t->dtype != AL_DT_F32 && t->dtype != AL_DT_F16 && t->dtype != AL_DT_BF16) {
            st = al_err(err, AL_ERR_UNSUPPORTED,
                        "%s: tensor '%s' has dtype %s; weights must be F32, F16 or BF16", t->file,
                        t->name, al_dtype_name(t->dtype));
            break;
        }
        if ((st = check_shape(s, t, err)) != AL_OK) break;
        found[i] = t;
        total += (uint64_t)slot_numel(s);
    }
    if (st == AL_OK) st = alloc_storage(m, total, err);
    size_t at = 0;
    for (int i = 0; i < p.n && st == AL_OK; i++) {
        const slot *s = &p.slots[i];
        if (!found[i]) continue;
        *s->dst = m->storage + at;
        st = al_tensor_to_f32(found[i], *s->dst, err);
        at += (size_t)slot_numel(s);
        if (s->role == ROLE_WORD_EMB)
            snprintf(m->weights_dtype, sizeof m->weights_dtype, "%s", al_dtype_name(found[i]->dtype));
    }
    if (st == AL_OK && mlm && !m->w.mlm_decoder_w) {
        if (!c->tie_word_embeddings)
            st = al_err(err, AL_ERR_FORMAT, "%s: missing tensor '%s' (config.json: tie_word_embeddings is false)",
                        weights_file, p.slots[p.n - 2].name);
        else if (m->w.mlm_dim != c->embedding_size)
            st = al_err(err, AL_ERR_FORMAT, "%s: missing tensor '%s' (cannot tie it)", weights_file,
                        p.slots[p.n - 2].name);
        else m->w.mlm_decoder_w = m->w.word_emb;
    }
    free(found);
    free(p.slots);
    return st;
}

al_status al_weights_random(al_model *m, uint64_t seed, int mlm_head, al_error *err) {
    plan p;
    al_status st = make_plan(m, "", mlm_head, &p, err);
    if (st != AL_OK) return st;
    uint64_t total = 0;
    for (int i = 0; i < p.n; i++)
        if (p.slots[i].role != ROLE_DECODER_W) total += (uint64_t)slot_numel(&p.slots[i]);
    st = alloc_storage(m, total, err);
    al_rng rng;
    al_rng_seed(&rng, seed);
    size_t at = 0;
    for (int i = 0; i < p.n && st == AL_OK; i++) {
        const slot *s = &p.slots[i];
        if (s->role == ROLE_DECODER_W) {
            *s->dst = m->w.word_emb; /* tied, as Hugging Face's MLM models */
            continue;
        }
        float *x = m->storage + at;
        size_t n = (size_t)slot_numel(s);
        *s->dst = x;
        at += n;
        for (size_t j = 0; j < n; j++)
            x[j] = s->init == INIT_NORMAL ? 0.02f * al_rng_normal(&rng) : s->init == INIT_ONE ? 1.0f : 0.0f;
        if (s->role == ROLE_WORD_EMB && m->config.pad_token_id < m->config.vocab_size)
            memset(x + (size_t)m->config.pad_token_id * (size_t)s->shape[1], 0,
                   (size_t)s->shape[1] * sizeof(float));
    }
    snprintf(m->weights_dtype, sizeof m->weights_dtype, "F32");
    free(p.slots);
    return st;
}
