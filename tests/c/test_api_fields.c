/* test_api_fields.c: the ops' field tables (src/api/request_fields.c): every op of the table has one, the
 * checker refuses a wrong kind, a value outside a fixed range and an unknown name with a message naming the
 * field (for several ops, before any model is looked up), it warns about fields no table names, "version"
 * publishes the tables (PAPA's order names from the C table that defines them), and the fuzz dictionary
 * (tests/fuzz/dict/json.dict) holds every field name and enum name, so it cannot drift from the tables. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_internal.h"
#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "methods/papa/papa.h"
#include "read_file.h"
#include "session_request.h"

static void test_every_op_has_a_table(void) {
    CHECK(al_api_op_count() > 20);
    for (int i = 0; i < al_api_op_count(); i++) {
        const al_api_op *op = al_api_op_at(i);
        CHECK_MSG(op->fields[0] != NULL, "op '%s' has no field table", op->name);
        int n_tables = 0;
        while (op->fields[n_tables]) n_tables++;
        CHECK_MSG(n_tables <= AL_OP_MAX_FIELD_TABLES, "op '%s': %d tables", op->name, n_tables);
        /* no field twice in one op, and every row has its help line */
        for (int t = 0; op->fields[t]; t++)
            for (const al_req_field *f = op->fields[t]; f->name; f++) {
                CHECK_MSG(f->help && f->help[0], "%s.%s has no help", op->name, f->name);
                CHECK_MSG((f->kind != AL_FIELD_ENUM && f->item != AL_FIELD_ENUM) || f->names,
                          "%s.%s: an enum without names", op->name, f->name);
                int seen = 0;
                for (int u = 0; op->fields[u]; u++)
                    for (const al_req_field *g = op->fields[u]; g->name; g++) seen += !strcmp(f->name, g->name);
                CHECK_MSG(seen == 1, "op '%s' names '%s' %d times", op->name, f->name, seen);
                const char *dot = strchr(f->name, '.');
                if (dot) { /* a nested field's parent is an object row of the same op */
                    char parent[64];
                    snprintf(parent, sizeof parent, "%.*s", (int)(dot - f->name), f->name);
                    int has_parent = 0;
                    for (int u = 0; op->fields[u]; u++)
                        for (const al_req_field *g = op->fields[u]; g->name; g++)
                            has_parent |= !strcmp(g->name, parent) && g->kind == AL_FIELD_OBJECT;
                    CHECK_MSG(has_parent, "%s.%s: no object row '%s'", op->name, f->name, parent);
                }
            }
    }
}

/* Refused before the model is looked up: no model is loaded, yet the message names the field at fault. */
static void test_checker_refuses(al_session *s) {
    /* wrong kinds */
    expect_error(s, "{\"op\":\"tokenize\",\"model\":\"m\",\"text\":\"a\",\"max_length\":\"x\"}",
                 "request: field 'max_length' must be an integer");
    expect_error(s, "{\"op\":\"papa\",\"model\":\"m\",\"task\":\"pos\",\"baselines\":1}",
                 "request: field 'baselines' must be true or false");
    expect_error(s, "{\"op\":\"papa\",\"model\":\"m\",\"task\":\"pos\",\"probe\":[1]}", "request: field 'probe' must be an object");
    expect_error(s, "{\"op\":\"head_importance\",\"model\":\"m\",\"task\":\"pos\",\"ranking\":{\"lr\":\"fast\"}}",
                 "request: field 'ranking.lr' must be a number");
    expect_error(s, "{\"op\":\"attention\",\"model\":\"m\",\"text\":\"a\",\"policies\":{}}", "request: field 'policies' must be an array");
    expect_error(s, "{\"op\":\"check_config\",\"config\":{}}", "request: field 'config' must be a string");
    /* outside a fixed range */
    expect_error(s, "{\"op\":\"papa\",\"model\":\"m\",\"task\":\"pos\",\"probe\":{\"lr\":20}}",
                 "request: field 'probe.lr' is 20, outside [1e-08, 10]");
    expect_error(s, "{\"op\":\"papa\",\"model\":\"m\",\"task\":\"pos\",\"L\":2}", "request: field 'L' is 2, outside [4, 4096]");
    expect_error(s, "{\"op\":\"head_stats\",\"model\":\"m\",\"task\":\"pos\",\"import\":{\"seed\":-1}}",
                 "request: field 'import.seed' is -1, outside [0, 2147483647]");
    expect_error(s, "{\"op\":\"papa\",\"model\":\"m\",\"task\":\"pos\",\"fractions\":[1,1.5]}",
                 "request: field 'fractions[1]' must be a number in [0, 1]");
    expect_error(s, "{\"op\":\"attention_stats\",\"model\":\"m\",\"text\":\"a\",\"batch_size\":0}",
                 "request: field 'batch_size' is 0, outside [1, 1048576]");
    /* a float field's bounds are the float reader's: 0.95 is above 0.95f, 1e-8 is not below 1e-8f */
    expect_error(s, "{\"op\":\"papa\",\"model\":\"m\",\"task\":\"pos\",\"probe\":{\"dropout\":0.95}}",
                 "request: field 'probe.dropout' is 0.95, outside [0, 0.95]");
    expect_error(s, "{\"op\":\"papa\",\"model\":\"m\",\"task\":\"pos\",\"ranking\":{\"lr\":1e-8}}", "field 'model': no model 'm'");
    /* names */
    expect_error(s, "{\"op\":\"papa\",\"model\":\"m\",\"task\":\"pos\",\"orders\":[\"lambda\",\"sideways\"]}",
                 "request: field 'orders[1]' must be one of lambda, first_to_last, last_to_first, random, reversed_lambda, gradient");
    expect_error(s, "{\"op\":\"attention_rollout\",\"model\":\"m\",\"text\":\"a\",\"source\":\"x\"}",
                 "request: field 'source' is 'x', not 'raw', 'effective' or 'norm'");
    expect_error(s, "{\"op\":\"head_agreement\",\"model\":\"m\",\"task\":\"pos\",\"preset\":\"slow\"}",
                 "request: field 'preset' is 'slow', not 'quick' or 'paper'");
    /* null counts as absent; a nested field under a non-object is the parent's error, said once */
    expect_error(s, "{\"op\":\"tokenize\",\"model\":\"m\",\"text\":\"a\",\"max_length\":null}", "field 'model': no model 'm'");
}

static const char *warning_with(const cJSON *r, const char *needle) {
    const cJSON *w;
    cJSON_ArrayForEach(w, cJSON_GetObjectItem(r, "warnings"))
        if (cJSON_IsString(w) && strstr(w->valuestring, needle)) return w->valuestring;
    return NULL;
}

static void test_unknown_fields_warn(al_session *s) {
    al_reply reply;
    cJSON *r = run(s, "{\"op\":\"models\",\"extra\":1}", AL_OK, &reply);
    CHECK(warning_with(r, "request: unknown field 'extra' ignored"));
    cJSON_Delete(r);
    al_reply_free(&reply);
    r = run(s, "{\"op\":\"load_model\",\"model\":\"g\",\"path\":\"tests/golden/bert\",\"probe\":{}}", AL_OK, &reply);
    CHECK(warning_with(r, "request: unknown field 'probe' ignored")); /* a field of other ops only */
    cJSON_Delete(r);
    al_reply_free(&reply);
    r = run(s, "{\"op\":\"info\",\"model\":\"g\",\"text\":\"a\",\"op2\":null}", AL_OK, &reply);
    CHECK(warning_with(r, "unknown field 'text' ignored") && warning_with(r, "unknown field 'op2' ignored"));
    cJSON_Delete(r);
    al_reply_free(&reply);
    /* the tables' own reading: a nested row's name is no top-level field */
    al_reply_builder rb;
    al_error err;
    CHECK(al_rb_init(&rb, "papa", &err) == AL_OK);
    cJSON *req = cJSON_Parse("{\"op\":\"papa\",\"probe\":{},\"probe.lr\":1}");
    const al_req_field *const tables[] = {al_fields_training, NULL};
    al_req_warn_fields(&rb, req, tables);
    CHECK(cJSON_GetArraySize(rb.warnings) == 1 && warning_with(rb.root, "unknown field 'probe.lr' ignored"));
    cJSON_Delete(req);
    al_rb_discard(&rb);
}

static const cJSON *find_named(const cJSON *list, const char *key, const char *name) {
    const cJSON *it;
    cJSON_ArrayForEach(it, list) {
        const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(it, key));
        if (v && !strcmp(v, name)) return it;
    }
    return NULL;
}

/* "\x22name\x22" in the dictionary (its quoting of '"') */
static int in_dict(const char *dict, const char *name) {
    char entry[160];
    snprintf(entry, sizeof entry, "\"\\x22%s\\x22\"", name);
    return strstr(dict, entry) != NULL;
}

static void test_version_publishes_and_dict_follows(al_session *s) {
    al_reply reply;
    cJSON *r = run(s, "{\"op\":\"version\"}", AL_OK, &reply);
    const cJSON *ops = cJSON_GetObjectItem(r, "ops");
    CHECK(cJSON_GetArraySize(ops) == al_api_op_count());
    const cJSON *papa = find_named(ops, "name", "papa");
    const cJSON *orders = find_named(cJSON_GetObjectItem(papa, "fields"), "name", "orders");
    CHECK(orders && !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(orders, "kind")), "array") &&
          !strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(orders, "items")), "enum"));
    const cJSON *names = cJSON_GetObjectItem(orders, "enum");
    CHECK(cJSON_GetArraySize(names) == AL_N_ORDERS);
    for (int i = 0; i < AL_N_ORDERS; i++)
        CHECK(!strcmp(cJSON_GetStringValue(cJSON_GetArrayItem(names, i)), al_papa_order_name((al_papa_order)i)));
    const cJSON *lr = find_named(cJSON_GetObjectItem(papa, "fields"), "name", "ranking.lr");
    CHECK(lr && cJSON_GetObjectItem(lr, "min") && cJSON_GetNumberValue(cJSON_GetObjectItem(lr, "max")) == 10.0);
    const cJSON *tok = find_named(ops, "name", "tokenize");
    const cJSON *add = find_named(cJSON_GetObjectItem(tok, "fields"), "name", "add_special_tokens");
    CHECK(add && cJSON_IsTrue(cJSON_GetObjectItem(add, "default")) && cJSON_GetObjectItem(add, "help"));

    size_t len = 0;
    char *dict = (char *)read_file("tests/fuzz/dict/json.dict", &len);
    CHECK(dict != NULL);
    const cJSON *op;
    cJSON_ArrayForEach(op, ops) {
        CHECK_MSG(dict && in_dict(dict, cJSON_GetStringValue(cJSON_GetObjectItem(op, "name"))),
                  "json.dict lacks the op '%s'", cJSON_GetStringValue(cJSON_GetObjectItem(op, "name")));
        const cJSON *f;
        cJSON_ArrayForEach(f, cJSON_GetObjectItem(op, "fields")) {
            const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(f, "name"));
            const char *leaf = strrchr(name, '.') ? strrchr(name, '.') + 1 : name;
            CHECK_MSG(dict && in_dict(dict, leaf), "json.dict lacks the field '%s' (op %s): node scripts/fuzz_dict_api.mjs", leaf,
                      cJSON_GetStringValue(cJSON_GetObjectItem(op, "name")));
            const cJSON *e;
            cJSON_ArrayForEach(e, cJSON_GetObjectItem(f, "enum"))
                CHECK_MSG(dict && in_dict(dict, e->valuestring), "json.dict lacks '%s' (the names of %s)", e->valuestring, name);
        }
    }
    free(dict);
    cJSON_Delete(r);
    al_reply_free(&reply);
}

int main(void) {
    test_every_op_has_a_table();
    al_session *s = al_session_new();
    CHECK(s != NULL);
    test_checker_refuses(s);
    test_unknown_fields_warn(s);
    test_version_publishes_and_dict_follows(s);
    al_session_free(s);
    return check_summary("api_fields");
}
