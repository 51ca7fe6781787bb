/* layer_rule.c: the family's layer rule (layer_rule.h). */
#include "layer_rule.h"

#include "family.h"

const al_layer_rule *al_layer_rule_of(const al_config *c) {
    const al_family *f = al_family_of(c);
    return f->layers_of ? f->layers_of(c) : f->layers;
}
