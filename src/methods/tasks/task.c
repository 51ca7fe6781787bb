/* task.c: an al_task's memory (one arena for every string and array examples point to), its label
 * list, its two splits and the seeded split of one file. Contracts in task.h and task_build.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/rng.h"
#include "../../text/strmap.h"
#include "task_build.h"

enum { ARENA_BLOCK = 64 * 1024, ARENA_ALIGN = 8 }; /* pointers, ints and doubles; malloc gives >= 8 */

/* A block's bytes start after its header, rounded up to ARENA_ALIGN. */
typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
} arena_block;
#define ARENA_HEADER ((sizeof(arena_block) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1))

struct al_task_store {
    arena_block *blocks;  /* newest first */
    al_strmap label_map;  /* name -> index */
    int labels_fixed;
    int label_cap;
    int cap[2];           /* capacity of train / validation */
};

/* docs/probes.md, "Metrics", says how each is computed (metrics.h). */
const al_task_metric al_task_metrics[] = {
    {"accuracy", "fraction of examples predicted right", 0, 1},
    {"f1", "F1 of the positive class (label 1)", 0, 1},
    {"macro_f1", "unweighted mean of the per-class F1", 0, 1},
    {"mcc", "Matthews correlation", -1, 1},
    {"entity_f1", "entity-level micro F1 (seqeval)", 0, 1},
    {"token_accuracy", "fraction of labelled tokens predicted right", 0, 1},
    {NULL, NULL, 0, 0},
};

const char *al_task_kind_name(al_task_kind kind) { return kind == AL_TASK_TOKEN ? "token" : "sequence"; }

int al_task_kind_from_name(const char *name) {
    if (name && strcmp(name, "sequence") == 0) return AL_TASK_SEQUENCE;
    if (name && strcmp(name, "token") == 0) return AL_TASK_TOKEN;
    return -1;
}

int al_task_metric_valid(const char *name) {
    for (int i = 0; name && al_task_metrics[i].name; i++)
        if (strcmp(name, al_task_metrics[i].name) == 0) return 1;
    return 0;
}

const char *al_task_split_name(al_task_split split) {
    return split == AL_TASK_VALIDATION ? "validation" : "train";
}

static int id_valid(const char *id) {
    size_t n = id ? strlen(id) : 0;
    if (n == 0 || n > 63) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              c == '-' || c == '.'))
            return 0;
    }
    return 1;
}

al_status al_task_new(const char *id, al_task_kind kind, al_task **out, al_error *err) {
    *out = NULL;
    if (!id_valid(id))
        return al_err(err, AL_ERR_INVALID, "task id '%.80s': use 1 to 63 letters, digits, '_', '-' or '.'",
                      id ? id : "");
    if (kind != AL_TASK_SEQUENCE && kind != AL_TASK_TOKEN)
        return al_err(err, AL_ERR_INVALID, "task %s: unknown kind %d", id, (int)kind);
    al_task *t = calloc(1, sizeof *t);
    if (t) t->store = calloc(1, sizeof *t->store);
    if (!t || !t->store) {
        free(t);
        return al_err(err, AL_ERR_OOM, "task %s: out of memory", id);
    }
    strcpy(t->id, id);
    t->kind = kind;
    strcpy(t->metric, kind == AL_TASK_TOKEN ? "token_accuracy" : "accuracy");
    *out = t;
    return AL_OK;
}

void al_task_free(al_task *task) {
    if (!task) return;
    if (task->store) {
        for (arena_block *b = task->store->blocks, *next; b; b = next) {
            next = b->next;
            free(b);
        }
        al_strmap_free(&task->store->label_map);
        free(task->store);
    }
    free(task->label_names);
    free(task->train);
    free(task->validation);
    free(task);
}

void *al_task_alloc(al_task *task, size_t bytes) {
    struct al_task_store *s = task->store;
    size_t need = (bytes + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (need < bytes) return NULL; /* overflow */
    arena_block *b = s->blocks;
    if (!b || b->cap - b->used < need) {
        size_t cap = need > ARENA_BLOCK ? need : ARENA_BLOCK;
        if (cap > (size_t)-1 - ARENA_HEADER) return NULL;
        b = malloc(ARENA_HEADER + cap);
        if (!b) return NULL;
        b->used = 0;
        b->cap = cap;
        b->next = s->blocks;
        s->blocks = b;
    }
    void *p = (unsigned char *)b + ARENA_HEADER + b->used;
    b->used += need;
    memset(p, 0, bytes);
    return p;
}

char *al_task_copy(al_task *task, const char *s, size_t len) {
    if (len == (size_t)-1) return NULL;
    char *p = al_task_alloc(task, len + 1);
    if (!p) return NULL;
    if (len) memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

static int push_label(al_task *task, const char *name, size_t len) {
    struct al_task_store *s = task->store;
    if (task->n_labels >= AL_TASK_MAX_LABELS) return AL_LABEL_TOO_MANY;
    if (task->n_labels == s->label_cap) {
        int cap = s->label_cap ? s->label_cap * 2 : 16;
        char **names = realloc(task->label_names, (size_t)cap * sizeof *names);
        if (!names) return AL_LABEL_OOM;
        task->label_names = names;
        s->label_cap = cap;
    }
    char *copy = al_task_copy(task, name, len);
    if (!copy || al_strmap_put(&s->label_map, name, len, task->n_labels)) return AL_LABEL_OOM;
    task->label_names[task->n_labels] = copy;
    return task->n_labels++;
}

al_status al_task_fix_labels(al_task *task, const char *const *names, int n, al_error *err) {
    if (task->n_labels) return al_err(err, AL_ERR_INVALID, "task %s: labels already set", task->id);
    if (n < 1 || n > AL_TASK_MAX_LABELS)
        return al_err(err, AL_ERR_INVALID, "task %s: %d labels (1 to %d allowed)", task->id, n, AL_TASK_MAX_LABELS);
    for (int i = 0; i < n; i++) {
        size_t len = names[i] ? strlen(names[i]) : 0;
        if (!len) return al_err(err, AL_ERR_INVALID, "task %s: label %d is empty", task->id, i);
        if (al_strmap_get(&task->store->label_map, names[i], len) >= 0)
            return al_err(err, AL_ERR_INVALID, "task %s: label '%.80s' is listed twice", task->id, names[i]);
        int k = push_label(task, names[i], len);
        if (k < 0) return al_err(err, AL_ERR_OOM, "task %s: out of memory", task->id);
    }
    task->store->labels_fixed = 1;
    return AL_OK;
}

int al_task_label_index(al_task *task, const char *name, size_t len) {
    int k = al_strmap_get(&task->store->label_map, name, len);
    if (k >= 0) return k;
    if (task->store->labels_fixed) return AL_LABEL_UNKNOWN;
    return push_label(task, name, len);
}

al_status al_task_set_metric(al_task *task, const char *metric, al_error *err) {
    if (!al_task_metric_valid(metric)) {
        char names[128] = "";
        for (int i = 0; al_task_metrics[i].name; i++)
            snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", al_task_metrics[i].name);
        return al_err(err, AL_ERR_INVALID, "task %s: metric '%.40s' is not one of %s", task->id, metric ? metric : "",
                      names);
    }
    strcpy(task->metric, metric);
    return AL_OK;
}

static al_task_example **split_array(al_task *task, al_task_split split, int **n) {
    *n = split == AL_TASK_VALIDATION ? &task->n_validation : &task->n_train;
    return split == AL_TASK_VALIDATION ? &task->validation : &task->train;
}

al_status al_task_add(al_task *task, al_task_split split, const al_task_example *ex, al_error *err) {
    int *n;
    al_task_example **arr = split_array(task, split, &n);
    int *cap = &task->store->cap[split == AL_TASK_VALIDATION];
    if (*n == *cap) {
        if (*cap > (1 << 28)) return al_err(err, AL_ERR_INVALID, "task %s: too many examples", task->id);
        int c = *cap ? *cap * 2 : 256;
        al_task_example *grown = realloc(*arr, (size_t)c * sizeof *grown);
        if (!grown) return al_err(err, AL_ERR_OOM, "task %s: out of memory", task->id);
        *arr = grown;
        *cap = c;
    }
    (*arr)[(*n)++] = *ex;
    return AL_OK;
}

al_status al_task_split_off(al_task *task, double fraction, uint64_t seed, al_error *err) {
    int n = task->n_train;
    if (task->n_validation)
        return al_err(err, AL_ERR_INVALID, "task %s: already has validation examples", task->id);
    if (!(fraction > 0.0 && fraction < 1.0))
        return al_err(err, AL_ERR_INVALID, "task %s: validation_fraction %g is not in (0, 1)", task->id, fraction);
    if (n < 2)
        return al_err(err, AL_ERR_INVALID, "task %s: %d example(s) cannot be split into train and validation",
                      task->id, n);
    long k = lround(fraction * n);
    if (k < 1) k = 1;
    if (k > n - 1) k = n - 1;
    /* a partial Fisher-Yates shuffle of the indices picks k of them */
    int *idx = malloc((size_t)n * sizeof *idx);
    unsigned char *chosen = calloc((size_t)n, 1);
    al_task_example *val = malloc((size_t)k * sizeof *val);
    if (!idx || !chosen || !val) {
        free(idx);
        free(chosen);
        free(val);
        return al_err(err, AL_ERR_OOM, "task %s: out of memory", task->id);
    }
    al_rng rng;
    al_rng_seed(&rng, seed);
    for (int i = 0; i < n; i++) idx[i] = i;
    for (long i = 0; i < k; i++) {
        long j = i + (long)al_rng_below(&rng, (uint32_t)(n - i));
        int tmp = idx[i];
        idx[i] = idx[j];
        idx[j] = tmp;
        chosen[idx[i]] = 1;
    }
    int nt = 0, nv = 0;
    for (int i = 0; i < n; i++) {
        if (chosen[i]) val[nv++] = task->train[i];
        else task->train[nt++] = task->train[i];
    }
    task->n_train = nt;
    free(task->validation);
    task->validation = val;
    task->n_validation = nv;
    task->store->cap[1] = nv;
    free(idx);
    free(chosen);
    return AL_OK;
}

al_status al_task_finish(al_task *task, const char *source, al_error *err) {
    if (task->n_labels < 1) return al_err(err, AL_ERR_FORMAT, "%s: no labels", source);
    if (task->n_train < 1) return al_err(err, AL_ERR_FORMAT, "%s: no train examples", source);
    if (task->n_validation < 1) return al_err(err, AL_ERR_FORMAT, "%s: no validation examples", source);
    al_task_hash(task, task->hash);
    return AL_OK;
}
