/* families.c: the registry of model families (docs/families.md). A family's index here is its al_arch value;
 * the first family whose rule matches wins, so BERT comes first (a bare encoder's names are BERT's). */
#include <stdio.h>
#include <string.h>

#include "family.h"
#include "tensor_list.h"

extern const al_family al_family_bert, al_family_roberta, al_family_distilbert, al_family_electra,
    al_family_deberta_v2, al_family_modernbert, al_family_gpt2, al_family_llama, al_family_qwen2, al_family_gpt_neox;

static const al_family *const registry[] = {
    &al_family_bert,       /* AL_ARCH_BERT */
    &al_family_roberta,    /* AL_ARCH_ROBERTA */
    &al_family_distilbert, /* AL_ARCH_DISTILBERT */
    &al_family_electra,    /* AL_ARCH_ELECTRA */
    &al_family_deberta_v2,
    &al_family_modernbert,
    &al_family_gpt2,       /* the causal language models (docs/decoders.md) */
    &al_family_llama,
    &al_family_qwen2,
    &al_family_gpt_neox,
};
enum { N_FAMILIES = (int)(sizeof registry / sizeof registry[0]) };

int al_family_count(void) { return N_FAMILIES; }

const al_family *al_family_at(int arch) { return arch >= 0 && arch < N_FAMILIES ? registry[arch] : NULL; }

const al_family *al_family_of(const al_config *c) { return al_family_at((int)c->arch); }

const char *al_arch_name(al_arch arch) {
    const al_family *f = al_family_at((int)arch);
    return f ? f->name : "unknown";
}

int al_family_from_model_type(const char *model_type) {
    for (int i = 0; i < N_FAMILIES; i++)
        for (const char *const *t = registry[i]->model_types; *t; t++)
            if (strcmp(model_type, *t) == 0) return i;
    return -1;
}

/* The longest matching prefix wins: "DistilBertForMaskedLM" starts with "DistilBert", not "Bert". */
int al_family_from_class_name(const char *class_name) {
    int best = -1;
    size_t best_len = 0;
    for (int i = 0; i < N_FAMILIES; i++)
        for (const char *const *p = registry[i]->class_prefixes; *p; p++) {
            size_t n = strlen(*p);
            if (n > best_len && strncmp(class_name, *p, n) == 0) {
                best = i;
                best_len = n;
            }
        }
    return best;
}

void al_family_names(char *buf, size_t size) {
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0; i < N_FAMILIES && at < size; i++)
        at += (size_t)snprintf(buf + at, size - at, "%s%s", i ? ", " : "", registry[i]->name);
}

int al_family_padding_position(const al_config *c) {
    const al_family *f = al_family_of(c);
    return f && f->positions == AL_POS_AFTER_PADDING ? c->pad_token_id : -1;
}

int al_family_row_part(const al_tensor_name *r) {
    return r->slot >= AL_W_FIRST_MLM ? 2 : r->slot >= AL_W_FIRST_LAYER ? 1 : 0;
}

/* The family's first row of a part (0 embeddings, 1 layer, 2 MLM head), or NULL. */
static const al_tensor_name *first_row(const al_family *f, int part) {
    for (int k = 0; k < AL_FAMILY_MAX_PARTS && f->tensors[k]; k++)
        for (int i = 0; i < f->tensors[k]->n; i++)
            if (al_family_row_part(&f->tensors[k]->rows[i]) == part) return &f->tensors[k]->rows[i];
    return NULL;
}

int al_family_has_prefix(const al_family *f, const al_tensor_list *list) {
    const al_tensor_name *r = first_row(f, 0);
    char name[192];
    snprintf(name, sizeof name, "%s%s", f->prefix, r ? r->name : "");
    return r && al_tensor_list_find(list, name) != NULL;
}

int al_family_has_mlm_head(const al_family *f, const al_tensor_list *list) {
    const al_tensor_name *r = first_row(f, 2);
    return r && (al_tensor_list_find(list, r->name) || (r->alt && al_tensor_list_find(list, r->alt)));
}

/* As Hugging Face's names give a family away: the family's prefixed embedding name ("roberta.embeddings..."),
 * then its MLM head's first name ("lm_head.dense.weight"), then its first layer name without a prefix
 * (a bare encoder: "encoder.layer.0..." is BERT's, which comes first in the registry). */
int al_family_from_tensors(const al_tensor_list *list, char *rule, size_t rule_size) {
    char name[192];
    for (int pass = 0; pass < 3; pass++)
        for (int i = 0; i < N_FAMILIES; i++) {
            const al_family *f = registry[i];
            const al_tensor_name *r = first_row(f, pass == 0 ? 0 : pass == 1 ? 2 : 1);
            if (!r) continue;
            const char *at = strstr(r->name, "{layer}");
            if (pass == 0) snprintf(name, sizeof name, "%s%s", f->prefix, r->name);
            else if (at) snprintf(name, sizeof name, "%.*s0%s", (int)(at - r->name), r->name, at + 7);
            else snprintf(name, sizeof name, "%s", r->name);
            if (!al_tensor_list_find(list, name)) continue;
            snprintf(rule, rule_size, "tensor names (\"%.120s\")", name);
            return i;
        }
    return -1;
}
