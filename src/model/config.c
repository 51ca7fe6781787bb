/* config.c: config.json -> al_config: which family it names (families.c), the fields every family shares
 * (vocab_size, max_position_embeddings, pruned_heads, tie_word_embeddings), and the family's own fields
 * through its descriptor (family_*.c), with Hugging Face's names and defaults. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "cJSON.h"
#include "family.h"

al_config al_config_bert(int vocab_size, int hidden_size, int n_layers, int n_heads,
                         int intermediate_size) {
    al_config c;
    memset(&c, 0, sizeof c);
    c.arch = AL_ARCH_BERT;
    strcpy(c.model_type, "bert");
    c.vocab_size = vocab_size;
    c.hidden_size = hidden_size;
    c.embedding_size = hidden_size;
    c.n_layers = n_layers;
    c.n_heads = n_heads;
    c.head_dim = n_heads > 0 ? hidden_size / n_heads : 0;
    c.intermediate_size = intermediate_size;
    c.max_position_embeddings = 512;
    c.type_vocab_size = 2;
    c.pad_token_id = 0;
    c.position_offset = 0;
    c.layer_norm_eps = 1e-12f;
    c.act = AL_ACT_GELU;
    c.tie_word_embeddings = 1;
    return c;
}

/* Reads an integer field; absent (or null) -> def, or an error when def_ok is 0. */
al_status al_cfg_int(const cJSON *root, const char *file, const char *field, int def_ok, int def, int min, int max,
                     int *out, al_error *err) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, field);
    if (!item || cJSON_IsNull(item)) {
        if (!def_ok) return al_err(err, AL_ERR_FORMAT, "%s: field '%s' is missing", file, field);
        *out = def;
        return AL_OK;
    }
    if (!cJSON_IsNumber(item))
        return al_err(err, AL_ERR_FORMAT, "%s: field '%s' must be an integer", file, field);
    double v = item->valuedouble;
    if (!(v == floor(v)) || v < (double)min || v > (double)max)
        return al_err(err, AL_ERR_FORMAT, "%s: field '%s' = %g must be an integer in [%d, %d]", file,
                      field, v, min, max);
    *out = (int)v;
    return AL_OK;
}

al_status al_cfg_eps(const cJSON *root, const char *file, const char *field, float def, float *out, al_error *err) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, field);
    if (!item || cJSON_IsNull(item)) {
        *out = def;
        return AL_OK;
    }
    if (!cJSON_IsNumber(item) || !(item->valuedouble > 0.0) || item->valuedouble > 1.0)
        return al_err(err, AL_ERR_FORMAT, "%s: field '%s' must be a number in (0, 1]", file, field);
    /* checked again as the float the model uses: a double such as 1e-86 is positive but rounds to 0 */
    float f = (float)item->valuedouble;
    if (!(f > 0.0f))
        return al_err(err, AL_ERR_FORMAT, "%s: field '%s' = %g is 0 as a float32; it must be at least %g", file,
                      field, item->valuedouble, 1.401298464e-45);
    *out = f;
    return AL_OK;
}

al_status al_cfg_act(const cJSON *root, const char *file, const char *field, al_act *out, al_error *err) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, field);
    if (!item || cJSON_IsNull(item)) {
        *out = AL_ACT_GELU;
        return AL_OK;
    }
    if (!cJSON_IsString(item))
        return al_err(err, AL_ERR_FORMAT, "%s: field '%s' must be a string", file, field);
    const char *s = item->valuestring;
    if (strcmp(s, "gelu") == 0) *out = AL_ACT_GELU;
    else if (strcmp(s, "gelu_new") == 0 || strcmp(s, "gelu_pytorch_tanh") == 0 ||
             strcmp(s, "gelu_fast") == 0)
        *out = AL_ACT_GELU_TANH;
    else if (strcmp(s, "relu") == 0) *out = AL_ACT_RELU;
    else if (strcmp(s, "silu") == 0) *out = AL_ACT_SILU;
    else
        return al_err(err, AL_ERR_UNSUPPORTED,
                      "%s: field '%s' = '%.64s' is not supported (gelu, gelu_new, gelu_pytorch_tanh, "
                      "gelu_fast, relu, silu)",
                      file, field, s);
    return AL_OK;
}

/* The family that config.json names: model_type first, then the first architectures[] entry that names one,
 * as Hugging Face's auto classes do. *arch stays -1 when the file names neither (the caller may then decide
 * by the weights' tensor names); a model_type or architectures naming no family is refused. */
static al_status pick_family(const cJSON *root, const char *file, int *arch, char *rule, size_t rule_size,
                             al_error *err) {
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    const cJSON *archs = cJSON_GetObjectItemCaseSensitive(root, "architectures");
    if (mt && !cJSON_IsString(mt))
        return al_err(err, AL_ERR_FORMAT, "%s: field 'model_type' must be a string", file);
    if (archs && !cJSON_IsArray(archs) && !cJSON_IsNull(archs))
        return al_err(err, AL_ERR_FORMAT, "%s: field 'architectures' must be an array", file);
    *arch = mt ? al_family_from_model_type(mt->valuestring) : -1;
    if (*arch >= 0) snprintf(rule, rule_size, "model_type \"%.64s\"", mt->valuestring);
    const cJSON *a;
    if (*arch < 0 && cJSON_IsArray(archs)) {
        cJSON_ArrayForEach(a, archs) {
            if (!cJSON_IsString(a))
                return al_err(err, AL_ERR_FORMAT, "%s: field 'architectures' must hold strings", file);
            *arch = al_family_from_class_name(a->valuestring);
            if (*arch >= 0) {
                snprintf(rule, rule_size, "architectures \"%.64s\"", a->valuestring);
                break;
            }
        }
    }
    if (*arch >= 0) return AL_OK;
    char names[128];
    al_family_names(names, sizeof names);
    if (mt)
        return al_err(err, AL_ERR_UNSUPPORTED, "%s: model_type '%.64s' is not supported (%s)", file,
                      mt->valuestring, names);
    a = cJSON_IsArray(archs) ? cJSON_GetArrayItem(archs, 0) : NULL;
    if (a && cJSON_IsString(a))
        return al_err(err, AL_ERR_UNSUPPORTED, "%s: architecture '%.64s' is not supported (%s)", file, a->valuestring,
                      names);
    return AL_OK; /* names no family */
}

static al_status parse_fields(const cJSON *root, const char *file, const al_family *fam, al_config *c,
                              al_error *err) {
    const int M = AL_CONFIG_MAX_DIM;
    al_status st;
    c->tie_word_embeddings = 1; /* the default, which a family's read_config may change (Llama: untied) */
    if ((st = al_cfg_int(root, file, "vocab_size", 0, 0, 1, M, &c->vocab_size, err)) ||
        (st = al_cfg_int(root, file, "max_position_embeddings", 1, 512, 1, M, &c->max_position_embeddings, err)) ||
        (st = fam->read_config(root, file, c, err)))
        return st;
    /* pruned heads leave layers with fewer heads than num_attention_heads: refused in every family */
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(root, "pruned_heads");
    if (item && !cJSON_IsNull(item)) {
        if (!cJSON_IsObject(item))
            return al_err(err, AL_ERR_FORMAT, "%s: field 'pruned_heads' must be an object", file);
        if (item->child)
            return al_err(err, AL_ERR_UNSUPPORTED,
                          "%s: field 'pruned_heads' is not supported (every layer must keep all its heads)", file);
    }
    /* Hugging Face ties the MLM decoder to the word embeddings unless this says false: a stored decoder
     * is then replaced by them on load (docs/checkpoints.md, "The MLM decoder"). */
    const cJSON *tie = cJSON_GetObjectItemCaseSensitive(root, "tie_word_embeddings");
    if (tie && !cJSON_IsNull(tie) && !cJSON_IsBool(tie))
        return al_err(err, AL_ERR_FORMAT, "%s: field 'tie_word_embeddings' must be true or false", file);
    if (tie && !cJSON_IsNull(tie)) c->tie_word_embeddings = cJSON_IsTrue(tie);
    if (!fam->causal) { /* a decoder's head_dim is its own (al_decoder_common) */
        if (c->hidden_size % c->n_heads != 0)
            return al_err(err, AL_ERR_FORMAT, "%s: hidden size %d is not a multiple of the %d heads", file,
                          c->hidden_size, c->n_heads);
        c->head_dim = c->hidden_size / c->n_heads;
    }
    c->position_offset = fam->positions == AL_POS_AFTER_PADDING ? c->pad_token_id + 1 : 0;
    if (c->position_offset >= c->max_position_embeddings)
        return al_err(err, AL_ERR_FORMAT,
                      "%s: field 'pad_token_id' = %d leaves no positions below "
                      "max_position_embeddings %d",
                      file, c->pad_token_id, c->max_position_embeddings);
    return AL_OK;
}

/* By config fields: the first family (registry order) whose fields the file has. */
static al_status by_config_fields(const cJSON *root, const char *file, al_config *c, char *rule, size_t rule_size,
                                  al_error *err) {
    al_status first = AL_OK;
    al_error first_err;
    for (int i = 0; i < al_family_count(); i++) {
        al_error e;
        memset(c, 0, sizeof *c);
        al_status st = parse_fields(root, file, al_family_at(i), c, &e);
        if (st == AL_OK) {
            c->arch = (al_arch)i;
            snprintf(rule, rule_size, "config fields (%s's; the weights' tensor names decide on load)",
                     al_family_at(i)->name);
            return AL_OK;
        }
        if (i == 0) {
            first = st;
            first_err = e;
        }
    }
    if (err) *err = first_err;
    return first;
}

al_status al_config_parse_family(const char *json, size_t len, const char *filename, int decided_arch,
                                 const char *decided_rule, al_config *out, char *rule, size_t rule_size,
                                 int *undecided, al_error *err) {
    const char *file = filename ? filename : "config.json";
    char rule_buf[160];
    if (!rule) {
        rule = rule_buf;
        rule_size = sizeof rule_buf;
    }
    rule[0] = 0;
    if (undecided) *undecided = 0;
    if (!json || !out) return al_err(err, AL_ERR_INVALID, "%s: no text given", file);
    memset(out, 0, sizeof *out);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (!root) {
        size_t at = end && end >= json ? (size_t)(end - json) : 0;
        return al_err(err, AL_ERR_FORMAT, "%s: malformed JSON near byte %zu", file, at);
    }
    al_status st = AL_OK;
    int arch = -1;
    if (!cJSON_IsObject(root)) st = al_err(err, AL_ERR_FORMAT, "%s: top level is not an object", file);
    else st = pick_family(root, file, &arch, rule, rule_size, err);
    if (!st && arch < 0 && decided_arch >= 0 && al_family_at(decided_arch)) {
        arch = decided_arch;
        snprintf(rule, rule_size, "%s", decided_rule ? decided_rule : "");
    }
    if (!st && arch < 0 && decided_arch == AL_FAMILY_BY_CONFIG_FIELDS) {
        st = by_config_fields(root, file, out, rule, rule_size, err);
    } else if (!st && arch < 0) {
        if (undecided) *undecided = 1;
        char names[128];
        al_family_names(names, sizeof names);
        st = al_err(err, AL_ERR_FORMAT,
                    "%s: field 'model_type' is missing, and no 'architectures' entry names a family (%s)", file,
                    names);
    } else if (!st) {
        out->arch = (al_arch)arch;
        st = parse_fields(root, file, al_family_at(arch), out, err);
    }
    if (!st) {
        /* an empty model_type (also "\u0000...": cJSON's string stops at a NUL) names the family, as for a
         * config built in code (model.c) */
        const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "model_type");
        snprintf(out->model_type, sizeof out->model_type, "%s",
                 cJSON_IsString(mt) && mt->valuestring[0] ? mt->valuestring : al_arch_name(out->arch));
    }
    cJSON_Delete(root);
    if (st != AL_OK) memset(out, 0, sizeof *out);
    return st;
}

al_status al_config_parse(const char *json, size_t len, const char *filename, al_config *out, al_error *err) {
    return al_config_parse_family(json, len, filename, -1, NULL, out, NULL, 0, NULL, err);
}
