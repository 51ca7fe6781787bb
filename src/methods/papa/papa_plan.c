/* papa_plan.c: the runs of a PAPA sweep (see papa_plan.h and docs/papa.md#sweeps). */
#include "papa_plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../../core/error.h"

int al_papa_k_from_fractions(const double *fractions, int n, int n_layers, int n_heads, int *out) {
    int count = 0;
    for (int i = 0; i < n; i++) {
        int k = al_papa_heads_replaced(fractions[i], n_layers, n_heads);
        int j = count;
        while (j > 0 && out[j - 1] > k) j--;
        if (j > 0 && out[j - 1] == k) continue; /* already listed */
        memmove(out + j + 1, out + j, sizeof *out * (size_t)(count - j));
        out[j] = k;
        count++;
    }
    return count;
}

static al_status add(al_papa_plan *plan, al_papa_config c, al_error *err) {
    for (int i = 0; i < plan->n_configs; i++)
        if (memcmp(&plan->configs[i], &c, sizeof c) == 0) return AL_OK; /* the same model: listed once */
    if (plan->n_configs == AL_PAPA_MAX_CONFIGS)
        return al_err(err, AL_ERR_INVALID, "papa: more than %d head configurations (fewer orders, kinds or k)",
                      AL_PAPA_MAX_CONFIGS);
    plan->configs[plan->n_configs++] = c;
    return AL_OK;
}

/* Configurations equal as models get equal fields: order and constant are meaningless at k = 0, the order at
 * k = NL*H. */
static al_papa_config sweep_config(al_papa_constant_kind kind, al_papa_order order, int k, int n_total) {
    al_papa_config c;
    memset(&c, 0, sizeof c);
    c.what = AL_CFG_SWEEP;
    c.k = k;
    c.constant = k > 0 ? kind : AL_CONST_AVERAGE;
    c.order = k > 0 && k < n_total ? order : AL_ORDER_FIRST_TO_LAST;
    return c;
}

al_status al_papa_plan_build(const al_papa_plan_request *req, al_papa_plan *plan, al_error *err) {
    memset(plan, 0, sizeof *plan);
    const int n_total = req->n_layers * req->n_heads;
    if (n_total < 1) return al_err(err, AL_ERR_INVALID, "papa: the model has no heads");
    if (req->n_seeds < 1) return al_err(err, AL_ERR_INVALID, "papa: field 'seeds' needs at least one seed");
    if (req->n_constants < 1 || req->n_orders < 1 || req->n_k < 1)
        return al_err(err, AL_ERR_INVALID, "papa: a sweep needs at least one constant kind, order and k");
    for (int i = 0; i < req->n_k; i++)
        if (req->k[i] < 0 || req->k[i] > n_total)
            return al_err(err, AL_ERR_INVALID, "papa: k = %d heads is outside [0, %d]", req->k[i], n_total);
    plan->n_seeds = req->n_seeds;
    al_status st = AL_OK;
    for (int c = 0; !st && c < req->n_constants; c++)
        for (int o = 0; !st && o < req->n_orders; o++)
            for (int i = 0; !st && i < req->n_k; i++)
                st = add(plan, sweep_config(req->constants[c], req->orders[o], req->k[i], n_total), err);
    if (!st && req->baselines && req->causal) { /* a language model: every data-free kind on all heads */
        for (int kind = AL_CONST_IDENTITY; !st && kind < AL_N_CONST_KINDS; kind++)
            st = add(plan, sweep_config((al_papa_constant_kind)kind, AL_ORDER_FIRST_TO_LAST, n_total, n_total), err);
    } else if (!st && req->baselines) {
        al_papa_config c;
        memset(&c, 0, sizeof c);
        c.what = AL_CFG_RIGHT_PAD;
        st = add(plan, c, err);
        c.what = AL_CFG_EMBEDDINGS_ONLY;
        if (!st) st = add(plan, c, err);
        for (int kind = AL_CONST_IDENTITY; !st && kind <= AL_CONST_LAST_ENCODER_BASELINE; kind++)
            st = add(plan, sweep_config((al_papa_constant_kind)kind, AL_ORDER_FIRST_TO_LAST, n_total, n_total), err);
    }
    return st;
}

int al_papa_plan_in_shard(int config, int shard_index, int n_shards) {
    return n_shards <= 1 || config % n_shards == shard_index;
}

void al_papa_config_label(const al_papa_config *c, int n_heads_total, char *out, size_t cap) {
    switch (c->what) {
    case AL_CFG_RIGHT_PAD: snprintf(out, cap, "right_pad"); return;
    case AL_CFG_EMBEDDINGS_ONLY: snprintf(out, cap, "embeddings_only"); return;
    case AL_CFG_SWEEP: break;
    }
    if (c->k == 0) snprintf(out, cap, "full");
    else if (c->k == n_heads_total) snprintf(out, cap, "%s all", al_papa_constant_name(c->constant));
    else snprintf(out, cap, "%s k=%d %s", al_papa_constant_name(c->constant), c->k, al_papa_order_name(c->order));
}

int al_papa_plan_uses_average(const al_papa_plan *plan) {
    for (int c = 0; c < plan->n_configs; c++)
        if (plan->configs[c].what == AL_CFG_SWEEP && plan->configs[c].k > 0 && plan->configs[c].constant == AL_CONST_AVERAGE)
            return 1;
    return 0;
}

int al_papa_plan_uses_order(const al_papa_plan *plan, int n_total, al_papa_order order) {
    for (int c = 0; c < plan->n_configs; c++) {
        const al_papa_config *x = &plan->configs[c];
        if (x->what == AL_CFG_SWEEP && x->k > 0 && x->k < n_total && x->order == order) return 1;
    }
    return 0;
}
