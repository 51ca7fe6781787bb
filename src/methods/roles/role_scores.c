/* role_scores.c: one unit's role scores and their chance levels (head_roles.h, docs/measures.md "Head roles"), in
 * double from the forward's float attentions. */
#include <math.h>
#include <stdlib.h>

#include "../../core/error.h"
#include "../../model/score_rule.h"
#include "head_roles.h"

const char *const al_role_names[AL_ROLE_N] = {"induction", "duplicate_token", "previous_token", "sink"};

/* A role's rows first .. last and the key each reads: fixed when >= 0, else i - back. */
typedef struct role_rows {
    int first, last, back, fixed;
} role_rows;

static role_rows rows_of(al_role role, int L, int offset, int n) {
    switch (role) {
    case AL_ROLE_INDUCTION: return (role_rows){n > 0 ? offset + n : 1, n > 0 ? offset + 2 * n - 1 : 0, n - 1, -1};
    case AL_ROLE_DUPLICATE: return (role_rows){n > 0 ? offset + n : 1, n > 0 ? offset + 2 * n - 1 : 0, n, -1};
    case AL_ROLE_PREVIOUS: return (role_rows){2, L - 1, 1, -1}; /* row 1's previous key is the first: sink's */
    default: return (role_rows){1, L - 1, 0, 0};
    }
}

al_status al_roles_unit(const al_config *c, const float *attn, int L, int offset, int n, double *score,
                        double *chance, al_error *err) {
    const int NL = c->n_layers, H = c->n_heads, NH = NL * H;
    int32_t *pos = malloc(sizeof(int32_t) * (size_t)(L > 0 ? L : 1)); /* al_causal_key_allowed's: a sequence alone */
    if (!pos) return al_err(err, AL_ERR_OOM, "head_roles: out of memory for %d positions", L);
    for (int i = 0; i < L; i++) pos[i] = i;
    for (int role = 0; role < AL_ROLE_N; role++) {
        const role_rows rr = rows_of((al_role)role, L, offset, n);
        for (int l = 0; l < NL; l++) {
            const al_causal_keys keys = {NULL, pos, al_score_layer_begin(c, l, NULL, NULL, NULL).window, 0, 0};
            double ch = 0.0;
            int rows = 0;
            for (int i = rr.first; i <= rr.last; i++, rows++) {
                const int target = rr.fixed >= 0 ? rr.fixed : i - rr.back;
                int k = 0;
                for (int j = 0; j <= i; j++) k += al_causal_key_allowed(&keys, i, j);
                if (al_causal_key_allowed(&keys, i, target)) ch += 1.0 / k;
            }
            for (int h = 0; h < H; h++) {
                const float *A = attn + ((size_t)l * H + h) * L * L;
                double s = 0.0;
                for (int i = rr.first; i <= rr.last; i++) s += A[(size_t)i * L + (rr.fixed >= 0 ? rr.fixed : i - rr.back)];
                score[(size_t)role * NH + l * H + h] = rows ? s / rows : NAN;
                chance[(size_t)role * NH + l * H + h] = rows ? ch / rows : NAN;
            }
        }
    }
    free(pos);
    return AL_OK;
}
