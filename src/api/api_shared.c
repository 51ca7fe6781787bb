/* api_shared.c: what several ops share: a model's description ("info", "load_model"), token
 * strings for ids ("tokenize", "attention", the analyses) and the longest sequence a model takes. */
#include <stdio.h>

#include "../model/family.h"
#include "api_internal.h"

static const char *act_name(al_act act) {
    switch (act) {
    case AL_ACT_GELU: return "gelu";
    case AL_ACT_GELU_TANH: return "gelu_tanh";
    case AL_ACT_RELU: return "relu";
    case AL_ACT_SILU: return "silu";
    }
    return "unknown";
}

int al_api_max_tokens(const al_model *model) {
    const al_config *c = al_model_config(model);
    int n = c->max_position_embeddings - c->position_offset;
    return n > 0 ? n : 0;
}

static void add_special(al_reply_builder *rb, cJSON *obj, const char *key, int id) {
    if (id >= 0) al_rb_num(rb, obj, key, id);
    else al_rb_add(rb, obj, key, cJSON_CreateNull());
}

void al_api_describe_model(al_reply_builder *rb, cJSON *obj, const al_api_model *m) {
    const al_config *c = al_model_config(m->model);
    al_rb_str(rb, obj, "model", m->id);
    al_rb_str(rb, obj, "arch", al_arch_name(c->arch));
    al_rb_str(rb, obj, "family_rule", al_model_family_rule(m->model));
    cJSON *cfg = al_rb_add(rb, obj, "config", cJSON_CreateObject());
    al_rb_str(rb, cfg, "model_type", c->model_type);
    al_rb_num(rb, cfg, "vocab_size", c->vocab_size);
    al_rb_num(rb, cfg, "hidden_size", c->hidden_size);
    al_rb_num(rb, cfg, "embedding_size", c->embedding_size);
    al_rb_num(rb, cfg, "num_hidden_layers", c->n_layers);
    al_rb_num(rb, cfg, "num_attention_heads", c->n_heads);
    al_rb_num(rb, cfg, "head_dim", c->head_dim);
    al_rb_num(rb, cfg, "intermediate_size", c->intermediate_size);
    al_rb_num(rb, cfg, "max_position_embeddings", c->max_position_embeddings);
    al_rb_num(rb, cfg, "type_vocab_size", c->type_vocab_size);
    al_rb_num(rb, cfg, "pad_token_id", c->pad_token_id);
    al_rb_num(rb, cfg, "position_offset", c->position_offset);
    al_rb_num(rb, cfg, "layer_norm_eps", c->layer_norm_eps);
    al_rb_str(rb, cfg, "hidden_act", act_name(c->act));
    if (al_family_of(c)->config_fields) { /* the family's own fields (DeBERTa's) as config.json names them */
        cJSON *own = al_family_of(c)->config_fields(c);
        if (!own) rb->oom = 1;
        while (own && own->child) { /* the key is read before detaching: argument order is unspecified */
            const char *key = own->child->string;
            cJSON *item = cJSON_DetachItemViaPointer(own, own->child);
            al_rb_add(rb, cfg, key, item);
        }
        cJSON_Delete(own);
    }
    al_rb_num(rb, obj, "max_tokens", al_api_max_tokens(m->model));
    al_rb_num(rb, obj, "n_params", (double)al_model_n_params(m->model));
    al_rb_str(rb, obj, "weights_file", al_model_weights_file(m->model));
    al_rb_str(rb, obj, "weights_dtype", al_model_weights_dtype(m->model));
    al_rb_bool(rb, obj, "mlm_head", al_model_has_mlm_head(m->model));
    cJSON *unused = al_rb_add(rb, obj, "unused_files", cJSON_CreateArray());
    for (int i = 0; i < al_model_n_unused_files(m->model); i++) {
        const char *reason = NULL, *name = al_model_unused_file(m->model, i, &reason);
        cJSON *u = al_rb_add(rb, unused, NULL, cJSON_CreateObject());
        al_rb_str(rb, u, "file", name);
        al_rb_str(rb, u, "reason", reason);
    }
    const al_tokenizer *tok = al_model_tokenizer(m->model);
    if (!tok) {
        al_rb_add(rb, obj, "tokenizer", cJSON_CreateNull());
        return;
    }
    cJSON *t = al_rb_add(rb, obj, "tokenizer", cJSON_CreateObject());
    const al_tokenizer_kind kind = al_tokenizer_get_kind(tok);
    al_rb_str(rb, t, "kind", kind == AL_TOK_BPE ? "bpe" : kind == AL_TOK_UNIGRAM ? "unigram" : "wordpiece");
    al_rb_num(rb, t, "vocab_size", al_tokenizer_vocab_size(tok));
    al_special_ids sp = al_tokenizer_special_ids(tok);
    cJSON *ids = al_rb_add(rb, t, "special_ids", cJSON_CreateObject());
    add_special(rb, ids, "cls", sp.cls);
    add_special(rb, ids, "sep", sp.sep);
    add_special(rb, ids, "pad", sp.pad);
    add_special(rb, ids, "mask", sp.mask);
    add_special(rb, ids, "unk", sp.unk);
    cJSON *names = al_rb_add(rb, t, "special_tokens", cJSON_CreateObject());
    const int id_list[5] = {sp.cls, sp.sep, sp.pad, sp.mask, sp.unk};
    const char *keys[5] = {"cls", "sep", "pad", "mask", "unk"};
    for (int i = 0; i < 5; i++) {
        const char *name = id_list[i] >= 0 ? al_tokenizer_id_to_token(tok, id_list[i]) : NULL;
        al_rb_str(rb, names, keys[i], name);
    }
}

cJSON *al_api_token_strings(const al_tokenizer *tok, const int32_t *ids, int n) {
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < n; i++) {
        const char *s = tok ? al_tokenizer_id_to_token(tok, ids[i]) : NULL;
        char label[24];
        if (!s) {
            snprintf(label, sizeof label, "#%d", (int)ids[i]);
            s = label;
        }
        cJSON *item = cJSON_CreateString(s);
        if (!item || !cJSON_AddItemToArray(arr, item)) {
            cJSON_Delete(item);
            cJSON_Delete(arr);
            return NULL;
        }
    }
    return arr;
}
