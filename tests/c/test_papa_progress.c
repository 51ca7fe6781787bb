/* test_papa_progress.c: a PAPA sweep's progress names its configuration (docs/papa-op.md, "Progress"): through
 * al_run_params.plan_progress every report carries "configuration i of n" with n the reply's configuration
 * count (this shard's with "shard"), i 0 before the first configuration and never going back, the stages of a
 * configuration under its own i, and "sweep" once per configuration with i = 1..n in turn. Without
 * plan_progress the same stages arrive through progress. Skips without build/data/tasks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"

typedef struct plan_log {
    int reports, plain_reports;
    int first_n, n_changes;  /* n_steps of the first report; reports whose n_steps differs from it */
    int last_step, backwards; /* reports whose step is below the one before */
    int sweeps, sweep_order;  /* "sweep" reports; those whose step was not the sweep's count so far */
    int early_after_start;    /* inputs, constants or ranking with step > 0 */
    int features_at_zero;     /* features or mlm with step 0 */
    int bad_fraction;
} plan_log;

static void on_plan(void *user, const char *stage, double fraction, int step, int n_steps) {
    plan_log *g = user;
    if (g->reports++ == 0) g->first_n = n_steps;
    g->n_changes += n_steps != g->first_n;
    g->backwards += step < g->last_step;
    g->last_step = step;
    if (!strcmp(stage, "sweep")) g->sweep_order += step != ++g->sweeps;
    if (!strcmp(stage, "inputs") || !strcmp(stage, "constants") || !strcmp(stage, "ranking")) g->early_after_start += step > 0;
    if (!strcmp(stage, "features") || !strcmp(stage, "mlm")) g->features_at_zero += step == 0;
    g->bad_fraction += !(fraction >= 0.0 && fraction <= 1.0);
}

static void on_plain(void *user, const char *stage, double fraction) {
    (void)stage, (void)fraction;
    ((plan_log *)user)->plain_reports++;
}

/* Runs the request with both callbacks set; returns the reply's configuration count (-1 on failure). */
static int run_with_plan(al_session *s, const char *req, plan_log *g) {
    memset(g, 0, sizeof *g);
    al_run_params params = {on_plain, g, NULL, on_plan};
    al_reply reply;
    const al_status st = al_session_run(s, req, &params, &reply);
    CHECK_MSG(st == AL_OK, "%s: %.300s", al_status_name(st), reply.json ? reply.json : "(null)");
    cJSON *r = reply.json ? cJSON_Parse(reply.json) : NULL;
    const int n = st == AL_OK ? cJSON_GetArraySize(cJSON_GetObjectItem(r, "configs")) : -1;
    cJSON_Delete(r);
    al_reply_free(&reply);
    return n;
}

int main(void) {
    FILE *f = fopen("build/data/tasks/pos.jsonl", "rb");
    if (!f) SKIP_TEST("build/data/tasks/pos.jsonl is absent");
    fclose(f);
    al_session *s = al_session_new();
    al_reply reply;
    CHECK(al_session_run(s, "{\"op\":\"load_model\",\"model\":\"m\",\"path\":\"models/attnlab-mini-bert\"}", NULL, &reply) == AL_OK);
    al_reply_free(&reply);
    /* the lambda order (a ranking before the configurations), baselines and the MLM score */
    const char *req = "{\"op\":\"papa\",\"model\":\"m\",\"task\":\"pos\",\"L\":32,\"max_train\":24,\"max_validation\":8,"
                      "\"fractions\":[1,0.5,0],\"seeds\":[1],\"probe\":{\"epochs\":1},\"ranking\":{\"epochs\":1}}";
    plan_log g;
    const int n = run_with_plan(s, req, &g);
    CHECK_MSG(n > 3 && g.first_n == n && g.n_changes == 0, "n %d of the reply's %d, %d changes", g.first_n, n, g.n_changes);
    CHECK_MSG(g.sweeps == n && g.sweep_order == 0 && g.last_step == n, "%d sweep reports (%d out of order), last %d of %d",
              g.sweeps, g.sweep_order, g.last_step, n);
    CHECK(g.reports > n && g.backwards == 0 && g.early_after_start == 0 && g.features_at_zero == 0 && g.bad_fraction == 0);
    CHECK_MSG(g.plain_reports == 0, "%d reports through progress as well", g.plain_reports);

    /* a shard: i of this shard's configurations */
    char shard[512];
    snprintf(shard, sizeof shard, "%.*s,\"shard\":\"1/2\"}", (int)strlen(req) - 1, req);
    const int n_shard = run_with_plan(s, shard, &g);
    CHECK_MSG(n_shard == n && g.first_n == n / 2 && g.sweeps == n / 2 && g.sweep_order == 0 && g.n_changes == 0,
              "shard 1/2 of %d: n %d, %d sweep reports", n, g.first_n, g.sweeps);

    /* without plan_progress the stages come through progress, as before */
    al_run_params plain = {on_plain, &g, NULL, NULL};
    memset(&g, 0, sizeof g);
    CHECK(al_session_run(s, req, &plain, &reply) == AL_OK);
    al_reply_free(&reply);
    CHECK(g.plain_reports > n && g.reports == 0);
    al_session_free(s);
    return check_summary("papa_progress");
}
