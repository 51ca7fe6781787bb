/* causal_steps.h: the causal rules' shared "explain one head" steps (causal_steps.c). Not public. */
#ifndef AL_MODEL_RULES_CAUSAL_STEPS_H
#define AL_MODEL_RULES_CAUSAL_STEPS_H

#include "../score_rule.h"

/* st as score_rule.h's steps; window > 0 the layer's window (else none); rot > 0 the rotary columns turned with
 * base (else no turn). */
void al_causal_steps(al_score_steps *st, int window, int rot, double base);

#endif
