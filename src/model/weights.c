/* weights.c: every weight a model needs, from its family's tensor table (family.h). One "plan" lists them
 * (name in a Hugging Face state dict, shape, initialisation, where the pointer goes); loading from files,
 * random initialisation and writing (al_weights_tensors, for export and checkpoints) all walk the same plan,
 * and every weight is carved out of one allocation (model->storage). */
#include "weights.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/error.h"
#include "../core/memory.h"
#include "../core/rng.h"
#include "family.h"
#include "family_params.h"

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
    al_tensor_layout layout; /* how the file stores it (family.h); shape[] is attnlab's */
} slot;

typedef struct plan {
    slot *slots;
    int n, cap;
} plan;

/* Where each weight slot's pointer lives (in al_weights, or in al_layer_weights from AL_W_FIRST_LAYER to
 * AL_W_FIRST_MLM) and how it starts: matrices and embeddings normal(0, 0.02), biases zero, LayerNorm gains
 * one. */
static const struct {
    size_t offset;
    init_kind init;
} slot_info[AL_W_COUNT] = {
    [AL_W_WORD_EMB] = {offsetof(al_weights, word_emb), INIT_NORMAL},
    [AL_W_POS_EMB] = {offsetof(al_weights, pos_emb), INIT_NORMAL},
    [AL_W_TYPE_EMB] = {offsetof(al_weights, type_emb), INIT_NORMAL},
    [AL_W_EMB_LN_G] = {offsetof(al_weights, emb_ln_g), INIT_ONE},
    [AL_W_EMB_LN_B] = {offsetof(al_weights, emb_ln_b), INIT_ZERO},
    [AL_W_EMB_PROJ_W] = {offsetof(al_weights, emb_proj_w), INIT_NORMAL},
    [AL_W_EMB_PROJ_B] = {offsetof(al_weights, emb_proj_b), INIT_ZERO},
    [AL_W_REL_EMB] = {offsetof(al_weights, rel_emb), INIT_NORMAL},
    [AL_W_REL_LN_G] = {offsetof(al_weights, rel_ln_g), INIT_ONE},
    [AL_W_REL_LN_B] = {offsetof(al_weights, rel_ln_b), INIT_ZERO},
    [AL_W_FINAL_LN_G] = {offsetof(al_weights, final_ln_g), INIT_ONE},
    [AL_W_FINAL_LN_B] = {offsetof(al_weights, final_ln_b), INIT_ZERO},
    [AL_W_Q_W] = {offsetof(al_layer_weights, q_w), INIT_NORMAL},
    [AL_W_Q_B] = {offsetof(al_layer_weights, q_b), INIT_ZERO},
    [AL_W_K_W] = {offsetof(al_layer_weights, k_w), INIT_NORMAL},
    [AL_W_K_B] = {offsetof(al_layer_weights, k_b), INIT_ZERO},
    [AL_W_V_W] = {offsetof(al_layer_weights, v_w), INIT_NORMAL},
    [AL_W_V_B] = {offsetof(al_layer_weights, v_b), INIT_ZERO},
    [AL_W_O_W] = {offsetof(al_layer_weights, o_w), INIT_NORMAL},
    [AL_W_O_B] = {offsetof(al_layer_weights, o_b), INIT_ZERO},
    [AL_W_LN_ATTN_G] = {offsetof(al_layer_weights, ln_attn_g), INIT_ONE},
    [AL_W_LN_ATTN_B] = {offsetof(al_layer_weights, ln_attn_b), INIT_ZERO},
    [AL_W_FF_IN_W] = {offsetof(al_layer_weights, ff_in_w), INIT_NORMAL},
    [AL_W_FF_IN_B] = {offsetof(al_layer_weights, ff_in_b), INIT_ZERO},
    [AL_W_FF_OUT_W] = {offsetof(al_layer_weights, ff_out_w), INIT_NORMAL},
    [AL_W_FF_OUT_B] = {offsetof(al_layer_weights, ff_out_b), INIT_ZERO},
    [AL_W_LN_FFN_G] = {offsetof(al_layer_weights, ln_ffn_g), INIT_ONE},
    [AL_W_LN_FFN_B] = {offsetof(al_layer_weights, ln_ffn_b), INIT_ZERO},
    [AL_W_QKV_W] = {offsetof(al_layer_weights, qkv_w), INIT_NORMAL},
    [AL_W_QKV_B] = {offsetof(al_layer_weights, qkv_b), INIT_ZERO},
    [AL_W_FF_UP_W] = {offsetof(al_layer_weights, ff_up_w), INIT_NORMAL},
    [AL_W_MLM_DENSE_W] = {offsetof(al_weights, mlm_dense_w), INIT_NORMAL},
    [AL_W_MLM_DENSE_B] = {offsetof(al_weights, mlm_dense_b), INIT_ZERO},
    [AL_W_MLM_LN_G] = {offsetof(al_weights, mlm_ln_g), INIT_ONE},
    [AL_W_MLM_LN_B] = {offsetof(al_weights, mlm_ln_b), INIT_ZERO},
    [AL_W_MLM_DECODER_W] = {offsetof(al_weights, mlm_decoder_w), INIT_NORMAL},
    [AL_W_MLM_DECODER_B] = {offsetof(al_weights, mlm_decoder_b), INIT_ZERO},
    [AL_W_LM_HEAD_W] = {offsetof(al_weights, lm_head_w), INIT_NORMAL},
};

static int64_t dim_value(al_dim d, const al_config *c, const al_weights *w) {
    switch (d) {
    case AL_DIM_NONE: return 0;
    case AL_DIM_V: return c->vocab_size;
    case AL_DIM_E: return c->embedding_size;
    case AL_DIM_D: return c->hidden_size;
    case AL_DIM_I: return c->intermediate_size;
    case AL_DIM_P: return c->max_position_embeddings;
    case AL_DIM_T: return c->type_vocab_size;
    case AL_DIM_M: return w->mlm_dim;
    case AL_DIM_R: return 2 * (int64_t)al_deberta(c)->rel_span;
    case AL_DIM_2I: return 2 * (int64_t)c->intermediate_size;
    case AL_DIM_3D: return 3 * (int64_t)c->hidden_size;
    case AL_DIM_A: return (int64_t)c->n_heads * c->head_dim;
    case AL_DIM_KV: return (int64_t)al_kv_width(c);
    }
    return 0;
}

static int row_applies(const al_tensor_name *r, const al_config *c, int layer) {
    switch (r->when) {
    case AL_WHEN_ALWAYS: return 1;
    case AL_WHEN_TYPES: return c->type_vocab_size > 0;
    case AL_WHEN_PROJECTED: return c->embedding_size != c->hidden_size;
    case AL_WHEN_ABS_POSITIONS: return al_deberta(c)->position_biased_input;
    case AL_WHEN_RELATIVE: return al_deberta(c)->rel_span > 0;
    case AL_WHEN_REL_NORM: return al_deberta(c)->norm_rel_ebd;
    case AL_WHEN_NOT_FIRST_LAYER: return layer > 0;
    case AL_WHEN_UNTIED: return !c->tie_word_embeddings;
    }
    return 0;
}

/* A table name with "{layer}" replaced by the layer index, after the prefix. */
static void format_name(char *buf, size_t size, const char *prefix, const char *name, int layer) {
    const char *at = strstr(name, "{layer}");
    if (at) snprintf(buf, size, "%s%.*s%d%s", prefix, (int)(at - name), name, layer, at + 7);
    else snprintf(buf, size, "%s%s", prefix, name);
}

static void add_row(plan *p, const al_tensor_name *r, const al_config *c, al_weights *w, al_layer_weights *L,
                    const char *prefix, int layer) {
    slot *s = &p->slots[p->n++];
    memset(s, 0, sizeof *s);
    s->dst = (float **)((char *)(L ? (void *)L : (void *)w) + slot_info[r->slot].offset);
    s->init = slot_info[r->slot].init;
    s->role = r->slot == AL_W_WORD_EMB ? ROLE_WORD_EMB : r->slot == AL_W_MLM_DECODER_W ? ROLE_DECODER_W : ROLE_PLAIN;
    s->layout = r->layout;
    s->ndim = r->shape[1] == AL_DIM_NONE ? 1 : 2;
    s->shape[0] = dim_value(r->shape[0], c, w);
    s->shape[1] = dim_value(r->shape[1], c, w);
    format_name(s->name, sizeof s->name, prefix, r->name, layer);
    if (r->alt) format_name(s->alt, sizeof s->alt, prefix, r->alt, layer);
}

/* The rows of one part of the family's table (0 embeddings, 1 a layer, 2 the MLM head), in table order. */
static int add_part(plan *p, int part, const al_config *c, al_weights *w, al_layer_weights *L, const char *prefix,
                    int layer) {
    const al_family *fam = al_family_of(c);
    int n = 0;
    for (int k = 0; k < AL_FAMILY_MAX_PARTS && fam->tensors[k]; k++)
        for (int i = 0; i < fam->tensors[k]->n; i++) {
            const al_tensor_name *r = &fam->tensors[k]->rows[i];
            if (al_family_row_part(r) != part || !row_applies(r, c, layer)) continue;
            if (p) add_row(p, r, c, w, L, prefix, layer);
            n++;
        }
    return n;
}

/* Embedding rows, every layer's rows, then (when mlm) the MLM rows without prefix: the storage layout and
 * the order of the random draws follow the table. */
static void plan_rows(plan *p, const al_config *c, al_weights *w, al_layer_weights *layers, const char *prefix,
                      int mlm) {
    const al_family *fam = al_family_of(c);
    add_part(p, 0, c, w, NULL, prefix, 0);
    for (int l = 0; l < c->n_layers; l++) add_part(p, 1, c, w, &layers[l], prefix, l);
    if (fam->causal) { /* the LM head: its own rows when untied (the word embeddings otherwise, set by the caller) */
        add_part(p, 2, c, w, NULL, "", 0);
        return;
    }
    if (!mlm) return;
    /* MLM head: dense -> act -> LayerNorm -> decoder (+ bias), with the family's width and activation */
    w->mlm_dim = fam->mlm_width == AL_MLM_WIDTH_EMBEDDING ? c->embedding_size : c->hidden_size;
    w->mlm_act = fam->mlm_act == AL_MLM_ACT_GELU ? AL_ACT_GELU : c->act;
    add_part(p, 2, c, w, NULL, "", 0);
}

/* The rows of a whole plan with the MLM head. */
static int plan_capacity(const al_config *c) {
    int n = add_part(NULL, 0, c, NULL, NULL, "", 0) + add_part(NULL, 2, c, NULL, NULL, "", 0);
    for (int l = 0; l < c->n_layers; l++) n += add_part(NULL, 1, c, NULL, NULL, "", l);
    return n;
}

/* Builds the plan; layer pointers go into model->layer_storage (allocated here). */
static al_status make_plan(al_model *m, const char *prefix, int mlm, plan *p, al_error *err) {
    const al_config *c = &m->config;
    memset(&m->w, 0, sizeof m->w);
    m->layer_storage = calloc((size_t)c->n_layers, sizeof *m->layer_storage);
    p->cap = plan_capacity(c);
    p->n = 0;
    p->slots = malloc((size_t)(p->cap > 0 ? p->cap : 1) * sizeof *p->slots);
    if (!m->layer_storage || !p->slots) {
        free(p->slots);
        p->slots = NULL;
        return al_err(err, AL_ERR_OOM, "model: out of memory for %d layers", c->n_layers);
    }
    m->w.layers = m->layer_storage;
    plan_rows(p, c, &m->w, m->layer_storage, prefix, mlm);
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

/* The shape the file stores: a Conv1D weight's is the transpose. */
static void file_shape(const slot *s, int64_t shape[2]) {
    const int t = s->layout == AL_LAYOUT_CONV1D && s->ndim == 2;
    shape[0] = s->shape[t ? 1 : 0];
    shape[1] = s->shape[t ? 0 : 1];
}

static al_status check_shape(const slot *s, const al_tensor_entry *t, al_error *err) {
    int64_t want_shape[2];
    file_shape(s, want_shape);
    int same = t->ndim == s->ndim;
    for (int i = 0; same && i < s->ndim; i++) same = t->shape[i] == want_shape[i];
    if (same) return AL_OK;
    char got[96], want[64];
    format_shape(got, sizeof got, t->ndim, t->shape);
    format_shape(want, sizeof want, s->ndim, want_shape);
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

/* A tensor read in the file's layout (family.h's al_tensor_layout) put in attnlab's, in place. */
static al_status to_held_layout(const slot *s, const al_config *c, float *x, al_error *err) {
    const size_t n = (size_t)slot_numel(s);
    float *copy = malloc(sizeof(float) * (n ? n : 1));
    if (!copy) return al_err(err, AL_ERR_OOM, "model: out of memory turning '%s'", s->name);
    memcpy(copy, x, sizeof(float) * n);
    if (s->layout == AL_LAYOUT_CONV1D && s->ndim == 2) { /* file [in, out] -> [out, in] */
        const size_t rows = (size_t)s->shape[0], cols = (size_t)s->shape[1];
        for (size_t r = 0; r < rows; r++)
            for (size_t k = 0; k < cols; k++) x[r * cols + k] = copy[k * rows + r];
    } else if (s->layout == AL_LAYOUT_QKV_PER_HEAD) { /* rows [H][3][hd] -> [3][H][hd], each row `width` wide */
        const size_t H = (size_t)c->n_heads, hd = (size_t)c->head_dim, width = s->ndim == 2 ? (size_t)s->shape[1] : 1;
        for (size_t h = 0; h < H; h++)
            for (size_t part = 0; part < 3; part++)
                memcpy(x + ((part * H + h) * hd) * width, copy + ((h * 3 + part) * hd) * width, sizeof(float) * hd * width);
    }
    free(copy);
    return AL_OK;
}

al_status al_weights_load(al_model *m, const al_tensor_list *list, const char *weights_file,
                          al_error *err) {
    const al_config *c = &m->config;
    const char *prefix = al_family_of(c)->prefix;
    if (!al_family_has_prefix(al_family_of(c), list)) prefix = ""; /* saved from the bare encoder class */
    /* a causal model's third part is its LM head, planned whatever the file holds (plan_rows) */
    int mlm = !al_family_of(c)->causal && al_family_has_mlm_head(al_family_of(c), list);
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
        if (st == AL_OK && s->layout != AL_LAYOUT_AS_IS) st = to_held_layout(s, c, *s->dst, err);
        at += (size_t)slot_numel(s);
        if (s->role == ROLE_WORD_EMB)
            snprintf(m->weights_dtype, sizeof m->weights_dtype, "%s", al_dtype_name(found[i]->dtype));
    }
    const char *decoder = "";
    int alt_head = 0; /* the MLM transform under its alternative name: DeBERTa's lm_predictions.lm_head */
    for (int i = 0; i < p.n; i++) {
        if (p.slots[i].role == ROLE_DECODER_W) decoder = p.slots[i].name;
        if (found[i] && p.slots[i].dst == &m->w.mlm_dense_w && p.slots[i].alt[0] && !strcmp(found[i]->name, p.slots[i].alt))
            alt_head = 1;
    }
    if (st == AL_OK && al_family_of(c)->causal && !m->w.lm_head_w) m->w.lm_head_w = m->w.word_emb; /* tied */
    if (st == AL_OK && mlm && !m->w.mlm_decoder_w && alt_head && m->w.mlm_dim == c->embedding_size) {
        /* that head has no decoder of its own: Hugging Face's DebertaV2ForMaskedLM (legacy false) always
         * multiplies by the word embeddings, whatever tie_word_embeddings says (docs/families.md, "DeBERTa") */
        m->w.mlm_decoder_w = m->w.word_emb;
    } else if (st == AL_OK && mlm && !m->w.mlm_decoder_w) {
        if (!c->tie_word_embeddings)
            st = al_err(err, AL_ERR_FORMAT, "%s: missing tensor '%s' (config.json: tie_word_embeddings is false)",
                        weights_file, decoder);
        else if (m->w.mlm_dim != c->embedding_size)
            st = al_err(err, AL_ERR_FORMAT, "%s: missing tensor '%s' (cannot tie it)", weights_file, decoder);
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
    if (st == AL_OK && al_family_of(&m->config)->causal && !m->w.lm_head_w) m->w.lm_head_w = m->w.word_emb; /* tied */
    snprintf(m->weights_dtype, sizeof m->weights_dtype, "F32");
    free(p.slots);
    return st;
}

/* The plan of a loaded or random model, its pointers read from a copy of model->w (nothing is changed). */
static al_status model_plan(const al_model *m, plan *p, al_weights *copy, al_error *err) {
    const al_config *c = &m->config;
    *copy = m->w;
    const int mlm = m->w.mlm_dense_w != NULL;
    p->cap = plan_capacity(c);
    p->n = 0;
    p->slots = malloc((size_t)(p->cap > 0 ? p->cap : 1) * sizeof *p->slots);
    if (!p->slots) return al_err(err, AL_ERR_OOM, "model: out of memory");
    plan_rows(p, c, copy, m->w.layers, al_family_of(c)->prefix, mlm);
    return AL_OK;
}

int al_weights_n_tensors(const al_model *m) { return plan_capacity(&m->config); }

/* A held tensor x put back in the file's layout into out (to_held_layout's inverse). */
static void to_file_layout(const slot *s, const al_config *c, const float *x, float *out) {
    if (s->layout == AL_LAYOUT_CONV1D && s->ndim == 2) { /* [out, in] -> file [in, out] */
        const size_t rows = (size_t)s->shape[0], cols = (size_t)s->shape[1];
        for (size_t r = 0; r < rows; r++)
            for (size_t k = 0; k < cols; k++) out[k * rows + r] = x[r * cols + k];
    } else { /* AL_LAYOUT_QKV_PER_HEAD: [3][H][hd] -> rows [H][3][hd] */
        const size_t H = (size_t)c->n_heads, hd = (size_t)c->head_dim, width = s->ndim == 2 ? (size_t)s->shape[1] : 1;
        for (size_t h = 0; h < H; h++)
            for (size_t part = 0; part < 3; part++)
                memcpy(out + ((h * 3 + part) * hd) * width, x + ((part * H + h) * hd) * width, sizeof(float) * hd * width);
    }
}

int al_weights_file_tensors(const al_model *m, al_tensor_out *out, int max) {
    plan p;
    al_weights copy;
    if (model_plan(m, &p, &copy, NULL) != AL_OK) return -1;
    int n = 0, ok = 1;
    for (int i = 0; i < p.n && n < max && ok; i++) {
        const slot *s = &p.slots[i];
        float *data = *s->dst;
        if (!data || (s->role == ROLE_DECODER_W && data == m->w.word_emb)) continue; /* tied: not written */
        al_tensor_out *t = &out[n++];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "%s", s->name);
        snprintf(t->dtype, sizeof t->dtype, "F32");
        t->ndim = s->ndim;
        t->shape[0] = s->shape[0];
        t->shape[1] = s->ndim == 2 ? s->shape[1] : 0;
        t->nbytes = sizeof(float) * (size_t)slot_numel(s);
        t->data = data;
        if (s->layout == AL_LAYOUT_AS_IS || (s->layout == AL_LAYOUT_CONV1D && s->ndim != 2)) continue;
        float *turned = malloc(t->nbytes ? t->nbytes : 1);
        if (!turned) {
            t->data = NULL;
            ok = 0;
            break;
        }
        to_file_layout(s, &m->config, data, turned);
        t->data = turned;
        t->shape[5] = 1; /* marks the copy for al_weights_file_tensors_free */
        if (s->layout == AL_LAYOUT_CONV1D) t->shape[0] = s->shape[1], t->shape[1] = s->shape[0];
    }
    free(p.slots);
    if (!ok) {
        al_weights_file_tensors_free(out, n);
        return -1;
    }
    return n;
}

void al_weights_file_tensors_free(al_tensor_out *t, int n) {
    for (int i = 0; i < n; i++)
        if (t[i].shape[5] == 1) {
            free(t[i].data);
            t[i].data = NULL, t[i].shape[5] = 0;
        }
}

int al_weights_tensors(const al_model *m, al_tensor_out *out, int max) {
    plan p;
    al_weights copy;
    if (model_plan(m, &p, &copy, NULL) != AL_OK) return 0;
    int n = 0;
    for (int i = 0; i < p.n && n < max; i++) {
        const slot *s = &p.slots[i];
        float *data = *s->dst;
        if (!data || (s->role == ROLE_DECODER_W && data == m->w.word_emb)) continue; /* tied: not written */
        al_tensor_out *t = &out[n++];
        memset(t, 0, sizeof *t);
        snprintf(t->name, sizeof t->name, "%s", s->name);
        snprintf(t->dtype, sizeof t->dtype, "F32");
        t->ndim = s->ndim;
        t->shape[0] = s->shape[0];
        t->shape[1] = s->ndim == 2 ? s->shape[1] : 0;
        t->data = data;
        t->nbytes = sizeof(float) * (size_t)slot_numel(s);
    }
    free(p.slots);
    return n;
}
