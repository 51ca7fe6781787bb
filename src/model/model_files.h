/* model_files.h: the weights file among a model's files, and the files the loader did not use. Not public. */
#ifndef AL_MODEL_FILES_H
#define AL_MODEL_FILES_H

#include "model_internal.h"

/* The weights: model.safetensors, model.safetensors.index.json, pytorch_model.bin or
 * pytorch_model.bin.index.json, in that order; else the only file named *.safetensors, *.bin, *.pt or *.pth.
 * Returns 1 with *name, *sharded (an index naming shards) and *torch (a torch.save file); 0 when there is
 * none; -1 when there are several under other names (listed in why). */
int al_files_pick_weights(const al_fileset *fs, const char **name, int *sharded, int *torch, char *why,
                          size_t why_size);
/* Fills m->unused with every file of fs not named in used[] and not read by the tokenizer, with a reason. */
al_status al_files_note_unused(al_model *m, const al_fileset *fs, const char *const *used, int n_used,
                               al_error *err);

#endif
