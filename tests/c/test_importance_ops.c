/* test_importance_ops.c: the head_importance and value_zeroing ops (src/api/op_importance.c) through the JSON
 * API on the default model: value_zeroing's tensors are al_value_zeroing's bits for the same ids; head_importance
 * gives unit-norm layers and a permutation, and its order is exactly the order a papa sweep with order
 * "gradient" removes heads in for the same request; bad fields are refused by name. Skips the task parts when
 * build/data/tasks is absent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "reply_tensor.h"
#include "session_request.h"
#include "methods/tasks/task.h"
#include "methods/measures/value_zeroing.h"

static void test_value_zeroing(al_session *s, const al_model *m) {
    static const int32_t ids[] = {2, 10, 20, 30, 40, 50, 3};
    const int L = 7, NL = al_model_config(m)->n_layers;
    al_reply reply;
    cJSON *r = run(s, "{\"op\":\"value_zeroing\",\"model\":\"m\",\"input_ids\":[[2,10,20,30,40,50,3]]}", AL_OK, &reply);
    const al_tensor_out *vz = find_tensor(&reply, "value_zeroing"), *d = find_tensor(&reply, "distances");
    CHECK(vz && d && vz->ndim == 4 && vz->shape[0] == 1 && vz->shape[1] == NL && vz->shape[2] == L && vz->shape[3] == L);
    float *dist = malloc(sizeof(float) * (size_t)NL * L * L), *norm = malloc(sizeof(float) * (size_t)NL * L * L);
    al_batch b = {1, L, ids, NULL, NULL, NULL};
    al_error err;
    CHECK(al_value_zeroing(m, &b, NULL, dist, norm, &err) == AL_OK);
    CHECK(vz && d && !memcmp(vz->data, norm, sizeof(float) * (size_t)NL * L * L) &&
          !memcmp(d->data, dist, sizeof(float) * (size_t)NL * L * L));
    free(dist), free(norm);
    cJSON_Delete(r);
    al_reply_free(&reply);
    expect_error(s, "{\"op\":\"value_zeroing\",\"model\":\"nope\",\"text\":\"a\"}", "nope");
    expect_error(s, "{\"op\":\"value_zeroing\",\"model\":\"m\"}", "text");
}

/* The reply's [[layer, head], ...] list as flat indices; returns the count. */
static int pairs(const cJSON *list, int H, int *out, int cap) {
    int n = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, list) {
        if (n < cap) out[n] = (int)cJSON_GetArrayItem(p, 0)->valuedouble * H + (int)cJSON_GetArrayItem(p, 1)->valuedouble;
        n++;
    }
    return n;
}

static void test_head_importance(al_session *s, const al_model *m) {
    al_task *probe_task = NULL;
    al_error err;
    if (al_task_load_builtin("build/data/tasks", "pos", &probe_task, &err) != AL_OK) {
        printf("skip head_importance: %s\n", err.message);
        return;
    }
    al_task_free(probe_task);
    const int NL = al_model_config(m)->n_layers, H = al_model_config(m)->n_heads, NH = NL * H;
    const char *common = "\"model\":\"m\",\"task\":\"pos\",\"L\":32,\"max_train\":40,\"probe\":{\"epochs\":1}";
    char req[512];
    snprintf(req, sizeof req, "{\"op\":\"head_importance\",%s,\"max_examples\":12}", common);
    al_reply reply;
    cJSON *r = run(s, req, AL_OK, &reply);
    const cJSON *imp = cJSON_GetObjectItem(r, "importance");
    CHECK(cJSON_GetArraySize(imp) == NL && cJSON_GetObjectItem(r, "n_examples")->valuedouble == 12);
    for (int l = 0; l < NL; l++) {
        double sq = 0.0;
        for (int h = 0; h < H; h++) {
            const double v = cJSON_GetArrayItem(cJSON_GetArrayItem(imp, l), h)->valuedouble;
            sq += v * v;
        }
        CHECK_NEAR(sq, 1.0, 1e-12);
    }
    int order[256], seen[256] = {0}, ok = pairs(cJSON_GetObjectItem(r, "order"), H, order, 256) == NH;
    for (int i = 0; ok && i < NH; i++) ok &= order[i] >= 0 && order[i] < NH && !seen[order[i]]++;
    CHECK(ok);
    /* the papa sweep with order gradient removes heads in exactly this order (papa has no field for the
     * importance examples: its default, 1000, covers all 40, so the op is asked without max_examples) */
    snprintf(req, sizeof req, "{\"op\":\"papa\",%s,\"orders\":[\"gradient\"],\"constants\":[\"zeros\"],"
             "\"fractions\":[1,0.5],\"seeds\":[1],\"baselines\":false,\"mlm\":false,\"max_validation\":8}", common);
    al_reply pr, ir;
    cJSON *p = run(s, req, AL_OK, &pr);
    snprintf(req, sizeof req, "{\"op\":\"head_importance\",%s}", common);
    cJSON *i2 = run(s, req, AL_OK, &ir);
    int sweep_order[256], op_order[256];
    const int n1 = pairs(cJSON_GetObjectItem(cJSON_GetObjectItem(p, "orders"), "gradient"), H, sweep_order, 256);
    const int n2 = pairs(cJSON_GetObjectItem(i2, "order"), H, op_order, 256);
    CHECK_MSG(n1 == NH && n2 == NH && !memcmp(sweep_order, op_order, sizeof(int) * (size_t)NH),
              "sweep order (%d heads) differs from the op's (%d)", n1, n2);
    cJSON_Delete(p), cJSON_Delete(i2), cJSON_Delete(r);
    al_reply_free(&pr), al_reply_free(&ir), al_reply_free(&reply);

    expect_error(s, "{\"op\":\"head_importance\",\"model\":\"m\",\"task\":\"pos\",\"loss\":\"l1\"}", "'loss'");
    expect_error(s, "{\"op\":\"head_importance\",\"model\":\"m\",\"task\":\"pos\",\"L\":100000}", "'L'");
    expect_error(s, "{\"op\":\"head_importance\",\"model\":\"m\"}", "'task'");
    expect_error(s, "{\"op\":\"head_importance\",\"model\":\"m\",\"task\":\"pos\",\"max_examples\":-3}", "max_examples");
}

int main(void) {
    al_session *s = al_session_new();
    al_model *m = NULL;
    al_error err;
    CHECK_MSG(al_model_load_dir("models/attnlab-mini-bert", &m, &err) == AL_OK, "%s", err.message);
    al_reply reply;
    cJSON *r = run(s, "{\"op\":\"load_model\",\"model\":\"m\",\"path\":\"models/attnlab-mini-bert\"}", AL_OK, &reply);
    cJSON_Delete(r);
    al_reply_free(&reply);
    /* both ops are in the version list, passed through by the worker */
    r = run(s, "{\"op\":\"version\"}", AL_OK, &reply);
    int listed = 0;
    const cJSON *op;
    cJSON_ArrayForEach(op, cJSON_GetObjectItem(r, "ops")) {
        const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(op, "name"));
        if (name && (!strcmp(name, "head_importance") || !strcmp(name, "value_zeroing")))
            listed += cJSON_IsTrue(cJSON_GetObjectItem(op, "worker"));
    }
    CHECK(listed == 2);
    cJSON_Delete(r);
    al_reply_free(&reply);
    if (m) {
        test_value_zeroing(s, m);
        test_head_importance(s, m);
    }
    al_model_free(m);
    al_session_free(s);
    return check_summary("importance_ops");
}
