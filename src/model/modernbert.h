/* modernbert.h: ModernBERT's attention windows (rules/rule_rotary_window.c; docs/families.md). Not public. */
#ifndef AL_MODEL_MODERNBERT_H
#define AL_MODEL_MODERNBERT_H

#include "forward_internal.h"

/* The window of layer: -1 for a global layer, else how far a key's position may be from the query's. */
int al_modernbert_window(const al_config *c, int layer);

#endif
