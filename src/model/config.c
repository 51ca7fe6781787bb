/* config.c: config.json -> al_config for the four families, with Hugging Face's field names and
 * defaults (DistilBERT has its own names: dim, n_layers, n_heads, hidden_dim, activation). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "cJSON.h"

#define AL_CONFIG_MAX_DIM (1 << 24) /* keeps every product of two sizes far from int overflow */

const char *al_arch_name(al_arch arch) {
    switch (arch) {
    case AL_ARCH_BERT: return "bert";
    case AL_ARCH_ROBERTA: return "roberta";
    case AL_ARCH_DISTILBERT: return "distilbert";
    case AL_ARCH_ELECTRA: return "electra";
    }
    return "unknown";
}

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

/* Family from a model_type or an architectures[] entry ("BertForMaskedLM"); -1 when unknown. */
static int arch_from_model_type(const char *t) {
    if (strcmp(t, "bert") == 0) return AL_ARCH_BERT;
    if (strcmp(t, "roberta") == 0) return AL_ARCH_ROBERTA;
    if (strcmp(t, "distilbert") == 0) return AL_ARCH_DISTILBERT;
    if (strcmp(t, "electra") == 0) return AL_ARCH_ELECTRA;
    return -1;
}

static int arch_from_class_name(const char *c) {
    static const struct { const char *prefix; al_arch arch; } map[] = {
        {"DistilBert", AL_ARCH_DISTILBERT}, {"Roberta", AL_ARCH_ROBERTA},
        {"Electra", AL_ARCH_ELECTRA},       {"Bert", AL_ARCH_BERT},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        if (strncmp(c, map[i].prefix, strlen(map[i].prefix)) == 0) return (int)map[i].arch;
    return -1;
}

/* Reads an integer field; absent (or null) -> def, or an error when def_ok is 0. */
static al_status get_int(const cJSON *root, const char *file, const char *field, int def_ok, int def,
                         int min, int max, int *out, al_error *err) {
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

static al_status get_float(const cJSON *root, const char *file, const char *field, float def,
                           float *out, al_error *err) {
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

static al_status get_act(const cJSON *root, const char *file, const char *field, al_act *out,
                         al_error *err) {
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
    else
        return al_err(err, AL_ERR_UNSUPPORTED,
                      "%s: field '%s' = '%.64s' is not supported (gelu, gelu_new, gelu_pytorch_tanh, "
                      "gelu_fast, relu)",
                      file, field, s);
    return AL_OK;
}

static al_status pick_arch(const cJSON *root, const char *file, al_config *c, al_error *err) {
    const cJSON *mt = cJSON_GetObjectItemCaseSensitive(root, "model_type");
    const cJSON *archs = cJSON_GetObjectItemCaseSensitive(root, "architectures");
    if (mt && !cJSON_IsString(mt))
        return al_err(err, AL_ERR_FORMAT, "%s: field 'model_type' must be a string", file);
    if (archs && !cJSON_IsArray(archs) && !cJSON_IsNull(archs))
        return al_err(err, AL_ERR_FORMAT, "%s: field 'architectures' must be an array", file);
    int arch = mt ? arch_from_model_type(mt->valuestring) : -1;
    const cJSON *a;
    if (arch < 0 && cJSON_IsArray(archs)) {
        cJSON_ArrayForEach(a, archs) {
            if (!cJSON_IsString(a))
                return al_err(err, AL_ERR_FORMAT, "%s: field 'architectures' must hold strings", file);
            arch = arch_from_class_name(a->valuestring);
            if (arch >= 0) break;
        }
    }
    if (arch < 0) {
        if (mt)
            return al_err(err, AL_ERR_UNSUPPORTED,
                          "%s: model_type '%.64s' is not supported (bert, roberta, distilbert, electra)",
                          file, mt->valuestring);
        a = cJSON_IsArray(archs) ? cJSON_GetArrayItem(archs, 0) : NULL;
        if (a && cJSON_IsString(a))
            return al_err(err, AL_ERR_UNSUPPORTED,
                          "%s: architecture '%.64s' is not supported (bert, roberta, distilbert, "
                          "electra)",
                          file, a->valuestring);
        return al_err(err, AL_ERR_FORMAT, "%s: field 'model_type' is missing", file);
    }
    c->arch = (al_arch)arch;
    /* an empty model_type (also "\u0000...": cJSON's string stops at a NUL) names the family, as for a config
     * built in code (model.c) */
    snprintf(c->model_type, sizeof c->model_type, "%s",
             mt && mt->valuestring[0] ? mt->valuestring : al_arch_name(c->arch));
    return AL_OK;
}

/* Fields that change what Hugging Face computes and that attnlab does not implement: refused by name, so a
 * model is never run as something it is not. Absent, null and the default value are accepted. */
static al_status refuse_unimplemented(const cJSON *root, const char *file, const al_config *c, al_error *err) {
    const cJSON *item;
    if (c->arch != AL_ARCH_DISTILBERT) { /* DistilBertConfig has none of these two */
        /* relative_key / relative_key_query add learned distance embeddings to the attention scores */
        item = cJSON_GetObjectItemCaseSensitive(root, "position_embedding_type");
        if (item && !cJSON_IsNull(item)) {
            if (!cJSON_IsString(item))
                return al_err(err, AL_ERR_FORMAT, "%s: field 'position_embedding_type' must be a string", file);
            if (strcmp(item->valuestring, "absolute") != 0)
                return al_err(err, AL_ERR_UNSUPPORTED,
                              "%s: field 'position_embedding_type' = '%.64s' is not supported (only 'absolute'; "
                              "relative position embeddings are not implemented)",
                              file, item->valuestring);
        }
        /* a decoder attends causally (each token only to earlier ones) */
        item = cJSON_GetObjectItemCaseSensitive(root, "is_decoder");
        if (item && !cJSON_IsNull(item)) {
            if (!cJSON_IsBool(item))
                return al_err(err, AL_ERR_FORMAT, "%s: field 'is_decoder' must be true or false", file);
            if (cJSON_IsTrue(item))
                return al_err(err, AL_ERR_UNSUPPORTED,
                              "%s: field 'is_decoder' = true is not supported (causal attention is not "
                              "implemented)",
                              file);
        }
    }
    /* pruned heads leave layers with fewer heads than num_attention_heads */
    item = cJSON_GetObjectItemCaseSensitive(root, "pruned_heads");
    if (item && !cJSON_IsNull(item)) {
        if (!cJSON_IsObject(item))
            return al_err(err, AL_ERR_FORMAT, "%s: field 'pruned_heads' must be an object", file);
        if (item->child)
            return al_err(err, AL_ERR_UNSUPPORTED,
                          "%s: field 'pruned_heads' is not supported (every layer must keep all its heads)", file);
    }
    return AL_OK;
}

static al_status parse_fields(const cJSON *root, const char *file, al_config *c, al_error *err) {
    const int M = AL_CONFIG_MAX_DIM;
    al_status st;
#define TRY(x)                          \
    do {                                \
        if ((st = (x)) != AL_OK) return st; \
    } while (0)
    TRY(pick_arch(root, file, c, err));
    TRY(get_int(root, file, "vocab_size", 0, 0, 1, M, &c->vocab_size, err));
    TRY(get_int(root, file, "max_position_embeddings", 1, 512, 1, M, &c->max_position_embeddings,
                err));
    if (c->arch == AL_ARCH_DISTILBERT) {
        TRY(get_int(root, file, "dim", 0, 0, 1, M, &c->hidden_size, err));
        TRY(get_int(root, file, "n_layers", 0, 0, 1, 1024, &c->n_layers, err));
        TRY(get_int(root, file, "n_heads", 0, 0, 1, 4096, &c->n_heads, err));
        TRY(get_int(root, file, "hidden_dim", 0, 0, 1, M, &c->intermediate_size, err));
        TRY(get_act(root, file, "activation", &c->act, err));
        TRY(get_int(root, file, "pad_token_id", 1, 0, 0, M, &c->pad_token_id, err));
        c->type_vocab_size = 0;
        c->layer_norm_eps = 1e-12f; /* hard-coded in Hugging Face's DistilBERT */
        c->embedding_size = c->hidden_size;
    } else {
        TRY(get_int(root, file, "hidden_size", 0, 0, 1, M, &c->hidden_size, err));
        TRY(get_int(root, file, "num_hidden_layers", 0, 0, 1, 1024, &c->n_layers, err));
        TRY(get_int(root, file, "num_attention_heads", 0, 0, 1, 4096, &c->n_heads, err));
        TRY(get_int(root, file, "intermediate_size", 0, 0, 1, M, &c->intermediate_size, err));
        TRY(get_act(root, file, "hidden_act", &c->act, err));
        TRY(get_int(root, file, "type_vocab_size", 1, 2, 0, M, &c->type_vocab_size, err));
        TRY(get_int(root, file, "pad_token_id", 1, c->arch == AL_ARCH_ROBERTA ? 1 : 0, 0, M,
                    &c->pad_token_id, err));
        TRY(get_float(root, file, "layer_norm_eps", 1e-12f, &c->layer_norm_eps, err));
        if (c->arch == AL_ARCH_ELECTRA)
            TRY(get_int(root, file, "embedding_size", 1, 128, 1, M, &c->embedding_size, err));
        else c->embedding_size = c->hidden_size;
    }
    TRY(refuse_unimplemented(root, file, c, err));
    /* Hugging Face ties the MLM decoder to the word embeddings unless this says false: a stored decoder
     * is then replaced by them on load (docs/checkpoints.md, "The MLM decoder"). */
    const cJSON *tie = cJSON_GetObjectItemCaseSensitive(root, "tie_word_embeddings");
    if (tie && !cJSON_IsNull(tie) && !cJSON_IsBool(tie))
        return al_err(err, AL_ERR_FORMAT, "%s: field 'tie_word_embeddings' must be true or false", file);
    c->tie_word_embeddings = !cJSON_IsFalse(tie);
#undef TRY
    if (c->hidden_size % c->n_heads != 0)
        return al_err(err, AL_ERR_FORMAT, "%s: hidden size %d is not a multiple of the %d heads", file,
                      c->hidden_size, c->n_heads);
    c->head_dim = c->hidden_size / c->n_heads;
    c->position_offset = c->arch == AL_ARCH_ROBERTA ? c->pad_token_id + 1 : 0;
    if (c->position_offset >= c->max_position_embeddings)
        return al_err(err, AL_ERR_FORMAT,
                      "%s: field 'pad_token_id' = %d leaves no positions below "
                      "max_position_embeddings %d",
                      file, c->pad_token_id, c->max_position_embeddings);
    return AL_OK;
}

al_status al_config_parse(const char *json, size_t len, const char *filename, al_config *out,
                          al_error *err) {
    const char *file = filename ? filename : "config.json";
    if (!json || !out) return al_err(err, AL_ERR_INVALID, "%s: no text given", file);
    memset(out, 0, sizeof *out);
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    if (!root) {
        size_t at = end && end >= json ? (size_t)(end - json) : 0;
        return al_err(err, AL_ERR_FORMAT, "%s: malformed JSON near byte %zu", file, at);
    }
    al_status st;
    if (!cJSON_IsObject(root)) st = al_err(err, AL_ERR_FORMAT, "%s: top level is not an object", file);
    else st = parse_fields(root, file, out, err);
    cJSON_Delete(root);
    if (st != AL_OK) memset(out, 0, sizeof *out);
    return st;
}
