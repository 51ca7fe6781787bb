/* test_papa_op_features.c: one configuration of a PAPA sweep reproduced outside the sweep, bit for bit, through
 * the attention op (docs/papa.md, "Input layout"): a task's examples sent as "words" (token tasks) or "texts" and
 * "text_pairs" (sequence tasks) with "layout": "papa", "pad_to": L, the configuration's heads constant with the
 * averaged matrices, give the same ids, mask and token types as the sweep's inputs and the same hidden states at
 * every position the sweep's probe reads (al_papa_features). Token tasks: the reply's first_word marks those
 * positions. Skips a task when build/data/tasks lacks it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "reply_tensor.h"
#include "methods/papa/papa_sweep.h"
#include "methods/probes/probe_data_internal.h"

#define N_EXAMPLES 6

/* The attention request for the first n training examples of task, the heads of pol that are constant pointing
 * at the session tensor "C". */
static char *build_request(const al_task *task, int n, int L, const al_head_policy *pol, int NL, int H) {
    cJSON *req = cJSON_CreateObject();
    cJSON_AddStringToObject(req, "op", "attention");
    cJSON_AddStringToObject(req, "model", "m");
    cJSON_AddStringToObject(req, "layout", "papa");
    cJSON_AddNumberToObject(req, "pad_to", L);
    cJSON *outputs = cJSON_AddArrayToObject(req, "outputs");
    cJSON_AddItemToArray(outputs, cJSON_CreateString("hidden_states"));
    if (task->kind == AL_TASK_TOKEN) {
        cJSON *words = cJSON_AddArrayToObject(req, "words");
        for (int x = 0; x < n; x++)
            cJSON_AddItemToArray(words, cJSON_CreateStringArray(task->train[x].words, task->train[x].n_words));
    } else {
        cJSON *texts = cJSON_AddArrayToObject(req, "texts"), *pairs = cJSON_AddArrayToObject(req, "text_pairs");
        for (int x = 0; x < n; x++) {
            cJSON_AddItemToArray(texts, cJSON_CreateString(task->train[x].text));
            const char *b = task->train[x].text_pair;
            cJSON_AddItemToArray(pairs, b ? cJSON_CreateString(b) : cJSON_CreateNull());
        }
    }
    cJSON *policies = cJSON_AddArrayToObject(req, "policies");
    for (int l = 0; l < NL; l++)
        for (int h = 0; h < H; h++) {
            if (pol[l * H + h].mode != AL_HEAD_CONSTANT) continue;
            cJSON *p = cJSON_CreateObject();
            cJSON_AddNumberToObject(p, "layer", l);
            cJSON_AddNumberToObject(p, "head", h);
            cJSON_AddStringToObject(p, "mode", "constant");
            cJSON_AddStringToObject(p, "constant", "C");
            cJSON_AddItemToArray(policies, p);
        }
    char *text = cJSON_PrintUnformatted(req);
    cJSON_Delete(req);
    return text;
}

static void test_task(al_session *s, const al_model *model, const char *id, int L) {
    al_task *task = NULL;
    al_error err;
    if (al_task_load_builtin("build/data/tasks", id, &task, &err) != AL_OK) {
        printf("skip %s: %s\n", id, err.message);
        return;
    }
    const al_config *cfg = al_model_config(model);
    const int NL = cfg->n_layers, H = cfg->n_heads, D = cfg->hidden_size, S = NL + 1;
    /* the sweep's steps for one configuration: inputs, averaged constants, order, policies, features */
    al_papa_inputs in;
    CHECK_MSG(al_papa_inputs_build(al_model_tokenizer(model), task, AL_TASK_TRAIN, N_EXAMPLES, AL_LAYOUT_PAPA, L,
                                   &in, &err) == AL_OK,
              "%s", err.message);
    float *C = malloc(sizeof *C * (size_t)NL * H * L * L);
    int order[256];
    al_head_policy pol[256];
    CHECK(C && NL * H <= 256);
    CHECK_MSG(al_papa_average_constants(model, in.ids, in.mask, in.type_ids, in.n, L, 4, NULL, C, &err) == AL_OK,
              "%s", err.message);
    CHECK(al_papa_head_order(AL_ORDER_RANDOM, NL, H, NULL, 7, order, &err) == AL_OK);
    const int k = NL * H / 2;
    al_papa_policies(order, k, NL, H, C, L, 0, pol);
    al_probe_data *feats = NULL;
    CHECK_MSG(al_papa_features(model, &in, pol, 0, 4, 0, NULL, &feats, &err) == AL_OK, "%s", err.message);

    /* the same configuration through the attention op */
    const int64_t shape[4] = {NL, H, L, L};
    CHECK(al_session_set_tensor(s, "C", 4, shape, C, &err) == AL_OK);
    char *req = build_request(task, in.n, L, pol, NL, H);
    al_reply reply;
    al_status st = al_session_run(s, req, NULL, &reply);
    CHECK_MSG(st == AL_OK, "%s: %s", id, reply.json);
    const al_tensor_out *ids = find_tensor(&reply, "input_ids"), *mask = find_tensor(&reply, "attention_mask");
    const al_tensor_out *types = find_tensor(&reply, "type_ids"), *hidden = find_tensor(&reply, "hidden_states");
    CHECK(ids && mask && types && hidden);
    if (st == AL_OK && ids && mask && types && hidden && feats) {
        const size_t nL = (size_t)in.n * L * sizeof(int32_t);
        CHECK_MSG(memcmp(ids->data, in.ids, nL) == 0, "%s: input ids differ from the sweep's", id);
        CHECK_MSG(memcmp(mask->data, in.mask, nL) == 0, "%s: masks differ from the sweep's", id);
        CHECK_MSG(memcmp(types->data, in.type_ids, nL) == 0, "%s: token types differ from the sweep's", id);
        CHECK(hidden->shape[0] == S && hidden->shape[1] == in.n && hidden->shape[2] == L && hidden->shape[3] == D);
        cJSON *r = cJSON_Parse(reply.json);
        const cJSON *seqs = cJSON_GetObjectItemCaseSensitive(r, "sequences");
        const float *h = hidden->data;
        int same = 1, marked = 1;
        for (int row = 0; row < feats->n_rows; row++) {
            const int e = feats->row_example[row], p = feats->row_pos[row];
            for (int st_i = 0; st_i < S; st_i++)
                same &= memcmp(feats->feats + ((size_t)row * S + st_i) * D,
                               h + (((size_t)st_i * in.n + e) * L + p) * D, sizeof(float) * D) == 0;
            if (task->kind == AL_TASK_TOKEN) {
                /* a labelled row sits where the reply says a word starts */
                const cJSON *fw = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(seqs, e), "first_word");
                marked &= cJSON_IsArray(fw) && cJSON_GetArrayItem(fw, p) && cJSON_GetArrayItem(fw, p)->valueint >= 0;
            }
        }
        CHECK_MSG(feats->n_rows > 0 && same, "%s: %d rows, hidden states differ from the sweep's features", id,
                  feats->n_rows);
        CHECK_MSG(marked, "%s: a labelled position has no first_word in the reply", id);
        printf("%s: %d examples, %d probe rows x %d states identical, %d of %d heads constant\n", id, in.n,
               feats->n_rows, S, k, NL * H);
        cJSON_Delete(r);
    }
    al_reply_free(&reply);
    free(req);
    al_probe_data_free(feats);
    free(C);
    al_papa_inputs_free(&in);
    al_session_clear_tensors(s);
    al_task_free(task);
}

int main(void) {
    al_model *m = NULL;
    al_error err;
    CHECK_MSG(al_model_load_dir("models/attnlab-mini-bert", &m, &err) == AL_OK, "%s", err.message);
    al_session *s = al_session_new();
    al_fileset *fs = al_fileset_new();
    CHECK(fs && al_fileset_add_dir(fs, "models/attnlab-mini-bert", &err) == AL_OK);
    CHECK_MSG(al_session_add_model(s, "m", fs, &err) == AL_OK, "%s", err.message);
    if (m) {
        test_task(s, m, "pos", 32);       /* token task: a label on every word's first sub-token */
        test_task(s, m, "agreement", 48); /* token task labelled at its [MASK] only */
        test_task(s, m, "definition", 64); /* sequence task, pairs: the middle [SEP] at L/2 */
    }
    al_session_free(s);
    al_model_free(m);
    return check_summary("papa_op_features");
}
