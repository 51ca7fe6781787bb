/* score_rule.c: the family's attention-score rule and the layer state its heads share (score_rule.h). */
#include "score_rule.h"

#include "family.h"

const al_score_rule *al_score_rule_of(const al_config *c) { return al_family_of(c)->scores; }

int al_score_table_rows(const al_config *c) {
    const al_score_rule *r = al_score_rule_of(c);
    return r->table_rows ? r->table_rows(c) : 0;
}

al_score_layer al_score_layer_begin(const al_config *c, int layer, const int32_t *rel_row, const float *pos_q,
                                    const float *pos_k) {
    const al_score_rule *r = al_score_rule_of(c);
    const al_score_layer ly = {c, layer, r->window ? r->window(c, layer) : -1, 0, 0, rel_row, pos_q, pos_k};
    return ly;
}
