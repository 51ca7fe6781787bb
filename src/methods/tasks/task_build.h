/* task_build.h: building an al_task (task.c), for the task file reader and the importers. Strings and
 * arrays an example points to come from the task's own arena (al_task_copy / al_task_alloc), so a
 * task never points into a caller's buffer and al_task_free releases everything at once. */
#ifndef AL_METHODS_TASK_BUILD_H
#define AL_METHODS_TASK_BUILD_H

#include "task.h"

/* An empty task; the id must be 1..63 characters of [A-Za-z0-9_.-]. */
al_status al_task_new(const char *id, al_task_kind kind, al_task **out, al_error *err);
/* Arena memory (8-byte aligned, zeroed), NULL when out of memory. */
void *al_task_alloc(al_task *task, size_t bytes);
/* A NUL-terminated copy of s[0, len) in the arena, NULL when out of memory. */
char *al_task_copy(al_task *task, const char *s, size_t len);

/* Fixes the label list (before any label is looked up): a name outside it is then not found. The
 * names must be non-empty and distinct. */
al_status al_task_fix_labels(al_task *task, const char *const *names, int n, al_error *err);
/* The index of a label name. Unfixed lists add an unseen name at the end (first-seen order).
 * Returns >= 0, or AL_LABEL_UNKNOWN (fixed list), AL_LABEL_TOO_MANY, AL_LABEL_OOM. */
enum { AL_LABEL_UNKNOWN = -1, AL_LABEL_TOO_MANY = -2, AL_LABEL_OOM = -3 };
int al_task_label_index(al_task *task, const char *name, size_t len);

al_status al_task_set_metric(al_task *task, const char *metric, al_error *err);
/* Appends a copy of *ex (whose pointers must already be in the task's arena) to a split. */
al_status al_task_add(al_task *task, al_task_split split, const al_task_example *ex, al_error *err);
/* Moves a seeded share of the train examples to validation (both keep their file order):
 * round(fraction * n) examples, at least 1 and at most n - 1. Validation must be empty. */
al_status al_task_split_off(al_task *task, double fraction, uint64_t seed, al_error *err);
/* Checks that both splits have examples (naming `source` otherwise) and sets task->hash. */
al_status al_task_finish(al_task *task, const char *source, al_error *err);

#endif
