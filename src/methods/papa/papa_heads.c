/* papa_heads.c: which heads become constant, in which order (docs/papa.md#ranking-heads-by-a-learned-weight-lambda).
 * Replacing k heads always takes the first k of one order, so the sets are nested as k grows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../../core/error.h"
#include "../../core/rng.h"
#include "papa.h"

/* the one list of the names (the JSON API's field tables publish it: src/api/request_fields.c) */
const char *const al_papa_order_names[AL_N_ORDERS + 1] = {"lambda", "first_to_last", "last_to_first", "random",
                                                          "reversed_lambda", "gradient", NULL};

const char *al_papa_order_name(al_papa_order order) {
    return (unsigned)order < AL_N_ORDERS ? al_papa_order_names[order] : "?";
}

int al_papa_order_from_name(const char *name) {
    for (int k = 0; name && k < AL_N_ORDERS; k++)
        if (strcmp(name, al_papa_order_names[k]) == 0) return k;
    return -1;
}

/* Insertion sort by theta, ascending (or descending), equal thetas in index order: a stable order that
 * does not depend on the C library's qsort. NL * H is at most a few hundred. */
static void sort_by_theta(const float *theta, int n, int descending, int *out) {
    for (int i = 0; i < n; i++) out[i] = i;
    for (int i = 1; i < n; i++) {
        int v = out[i], j = i - 1;
        while (j >= 0 && (descending ? theta[out[j]] < theta[v] : theta[out[j]] > theta[v])) {
            out[j + 1] = out[j];
            j--;
        }
        out[j + 1] = v;
    }
}

al_status al_papa_head_order(al_papa_order order, int n_layers, int n_heads, const float *theta, uint64_t seed,
                             int *out, al_error *err) {
    const int n = n_layers * n_heads;
    if (n_layers < 1 || n_heads < 1) return al_err(err, AL_ERR_INVALID, "head order: no heads");
    switch (order) {
    case AL_ORDER_LAMBDA:
    case AL_ORDER_REVERSED_LAMBDA:
    case AL_ORDER_GRADIENT: {
        const char *what = order == AL_ORDER_GRADIENT ? "importance" : "lambda logit";
        if (!theta)
            return al_err(err, AL_ERR_INVALID, "head order '%s' needs %s", al_papa_order_name(order),
                          order == AL_ORDER_GRADIENT ? "the head importance scores" : "the learned lambdas (run the ranking)");
        for (int i = 0; i < n; i++)
            if (!isfinite(theta[i])) return al_err(err, AL_ERR_INVALID, "head order: %s of head %d is %g", what, i,
                                                   (double)theta[i]);
        sort_by_theta(theta, n, order == AL_ORDER_REVERSED_LAMBDA, out);
        return AL_OK;
    }
    case AL_ORDER_FIRST_TO_LAST:
        for (int i = 0; i < n; i++) out[i] = i;
        return AL_OK;
    case AL_ORDER_LAST_TO_FIRST:
        for (int l = 0; l < n_layers; l++)
            for (int h = 0; h < n_heads; h++) out[l * n_heads + h] = (n_layers - 1 - l) * n_heads + h;
        return AL_OK;
    case AL_ORDER_RANDOM: {
        al_rng r;
        al_rng_seed(&r, seed);
        for (int i = 0; i < n; i++) out[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = (int)al_rng_below(&r, (uint32_t)(i + 1));
            int t = out[i];
            out[i] = out[j];
            out[j] = t;
        }
        return AL_OK;
    }
    }
    return al_err(err, AL_ERR_INVALID, "head order %d is not one of lambda, first_to_last, last_to_first, random, "
                  "reversed_lambda, gradient", (int)order);
}

int al_papa_heads_replaced(double fraction_kept, int n_layers, int n_heads) {
    const int n = n_layers * n_heads;
    int kept = (int)floor(fraction_kept * n + 0.5);
    if (kept < 0) kept = 0;
    if (kept > n) kept = n;
    return n - kept;
}

void al_papa_policies(const int *order, int k, int n_layers, int n_heads, const float *C, int L, int zero_heads,
                      al_head_policy *out) {
    const int n = n_layers * n_heads;
    for (int i = 0; i < n; i++) {
        out[i].mode = AL_HEAD_STANDARD;
        out[i].lambda = 1.0f;
        out[i].constant = NULL;
    }
    for (int i = 0; i < k && i < n; i++) {
        const int lh = order[i];
        out[lh].mode = zero_heads ? AL_HEAD_ZERO : AL_HEAD_CONSTANT;
        out[lh].constant = zero_heads ? NULL : C + (size_t)lh * L * L;
    }
}

al_status al_papa_all_orders(int n_layers, int n_heads, const float *theta, const float *scores, uint64_t seed,
                             int *orders, al_error *err) {
    const int n = n_layers * n_heads;
    al_status st = AL_OK;
    for (int o = 0; o < AL_N_ORDERS && !st; o++) {
        const int lambda = o == AL_ORDER_LAMBDA || o == AL_ORDER_REVERSED_LAMBDA;
        if ((lambda && !theta) || (o == AL_ORDER_GRADIENT && !scores)) {
            for (int i = 0; i < n; i++) orders[(size_t)o * n + i] = -1;
            continue;
        }
        st = al_papa_head_order((al_papa_order)o, n_layers, n_heads, o == AL_ORDER_GRADIENT ? scores : theta, seed,
                                orders + (size_t)o * n, err);
    }
    return st;
}
