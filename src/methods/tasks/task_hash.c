/* task_hash.c: a task's content hash, SHA-256 of a canonical serialisation of its kind, labels and
 * examples (docs/tasks.md, "Content hash"; scripts/build_tasks.py computes the same bytes):
 *
 *   "attnlab-task/1\n"  "kind <sequence|token>\n"  "labels <n>\n"  S(name) for each label
 *   for train, then validation:  "split <name> <n>\n"  and for each example
 *     sequence: S(text)  (S(text_pair) or "-\n")  "label <index>\n"  "group <g>\n"
 *     token:    "words <n>\n"  (S(word) "label <index>\n") for each word  "group <g>\n"
 *   where S(s) = "<byte length>:" s "\n".
 *
 * The id and the metric are names, not content: the same examples give the same hash under any id. */
#include <stdio.h>
#include <string.h>

#include "../../core/sha256.h"
#include "task.h"

static void put(al_sha256 *h, const char *s) { al_sha256_update(h, s, strlen(s)); }

static void put_str(al_sha256 *h, const char *s) {
    char len[32];
    size_t n = strlen(s);
    snprintf(len, sizeof len, "%zu:", n);
    put(h, len);
    al_sha256_update(h, s, n);
    put(h, "\n");
}

static void put_num(al_sha256 *h, const char *key, long long v) {
    char line[64];
    snprintf(line, sizeof line, "%s %lld\n", key, v);
    put(h, line);
}

void al_task_hash(const al_task *task, char hex[65]) {
    al_sha256 h;
    al_sha256_init(&h);
    put(&h, "attnlab-task/1\n");
    put(&h, task->kind == AL_TASK_TOKEN ? "kind token\n" : "kind sequence\n");
    put_num(&h, "labels", task->n_labels);
    for (int i = 0; i < task->n_labels; i++) put_str(&h, task->label_names[i]);
    for (int sp = 0; sp < 2; sp++) {
        const al_task_example *ex = sp ? task->validation : task->train;
        int n = sp ? task->n_validation : task->n_train;
        put(&h, sp ? "split validation " : "split train ");
        char count[32];
        snprintf(count, sizeof count, "%d\n", n);
        put(&h, count);
        for (int i = 0; i < n; i++) {
            const al_task_example *e = &ex[i];
            if (task->kind == AL_TASK_SEQUENCE) {
                put_str(&h, e->text);
                if (e->text_pair) put_str(&h, e->text_pair);
                else put(&h, "-\n");
                put_num(&h, "label", e->label);
            } else {
                put_num(&h, "words", e->n_words);
                for (int w = 0; w < e->n_words; w++) {
                    put_str(&h, e->words[w]);
                    put_num(&h, "label", e->word_labels[w]);
                }
            }
            put_num(&h, "group", e->group);
        }
    }
    uint8_t digest[32];
    al_sha256_final(&h, digest);
    al_sha256_hex(digest, hex);
}
