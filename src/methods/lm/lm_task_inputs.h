/* lm_task_inputs.h: a task's examples as a causal language model reads them (lm_task_inputs.c; docs/measures.md
 * "Causal decoders", docs/importance.md "Causal language models"): each example's text through the model's own
 * tokenizer with its own special tokens (Llama's <s>, none for GPT-2), as the lm op encodes a text, truncated to L
 * and padded on the right (a decoder's pads are right pads, positions 0, 1, ...). Not public. */
#ifndef AL_METHODS_LM_TASK_INPUTS_H
#define AL_METHODS_LM_TASK_INPUTS_H

#include "../../attnlab.h"
#include "../papa/papa.h"
#include "../tasks/task.h"

/* The first max_examples (<= 0: all) examples of a task split (AL_TASK_TRAIN or AL_TASK_VALIDATION) in L
 * positions: a sequence task's text, a token task's words (through the tokenizer's word encoding). out is a
 * sequence task's inputs whatever the task (token_task 0, labels [n] the example's label or -1): the language
 * model reads the text, not the labels. A pair task is refused naming the field 'task': a decoder has no
 * separator to join two segments by. pad_id fills the pads (they are masked). */
al_status al_lm_task_inputs(const al_tokenizer *tok, const al_task *task, int split, int max_examples, int L,
                            int pad_id, al_papa_inputs *out, al_error *err);

#endif
