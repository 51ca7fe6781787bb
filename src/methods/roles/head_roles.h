/* head_roles.h: the roles of a causal language model's heads (docs/measures.md "Head roles"): induction,
 * duplicate-token, previous-token and sink heads, scored on repeated random sequences (and the last two on natural
 * text), and which heads have a role by the rule of docs/findings.md ("Head roles"). Not public. */
#ifndef AL_METHODS_HEAD_ROLES_H
#define AL_METHODS_HEAD_ROLES_H

#include <stdint.h>

#include "../../attnlab.h"

typedef enum al_role {
    AL_ROLE_INDUCTION, /* second copy: from token t's second occurrence to the position after its first */
    AL_ROLE_DUPLICATE, /* second copy: to the first occurrence itself */
    AL_ROLE_PREVIOUS,  /* rows i >= 2: to i - 1 */
    AL_ROLE_SINK,      /* rows i >= 1: to the first position */
    AL_ROLE_N
} al_role;
extern const char *const al_role_names[AL_ROLE_N]; /* "induction", "duplicate_token", "previous_token", "sink" */

/* ------------------------------------------------------------ the repeated random sequences (role_inputs.c) */

/* What a repeated sequence draws from: the ids below the model's vocabulary size (and the tokenizer's) but the
 * config's pad id that are ordinary tokens (not al_tokenizer_is_special, with a tokenizer), and the start token the
 * tokenizer puts first (Llama's <s>), kept first in every sequence; -1 when it adds none. */
typedef struct al_roles_vocab {
    int32_t *ids;
    int n;
    int start;
} al_roles_vocab;

al_status al_roles_vocab_make(const al_model *model, al_roles_vocab *out, al_error *err);
void al_roles_vocab_free(al_roles_vocab *v);

/* Positions before the first copy: 1 with a start token, else 0. A sequence holds offset + 2 n tokens. */
static inline int al_roles_offset(const al_roles_vocab *v) { return v->start >= 0 ? 1 : 0; }

/* Sequence r of n random tokens twice: [start] x_0 .. x_{n-1} x_0 .. x_{n-1} into out[offset + 2 n], x_t =
 * v->ids[al_rng_below(&g, v->n)] in order, g seeded with al_mlm_derive_seed(seed, AL_SEED_HEAD_ROLES, r). */
void al_roles_draw(const al_roles_vocab *v, uint64_t seed, int r, int n, int32_t *out);

/* ------------------------------------------------------------ one unit's scores (role_scores.c) */

/* One sequence (a unit) run alone: attn is al_forward's attentions for a batch of one [NL, H, L, L]. Per role and
 * head (l * H + h) the mean over the role's rows i of A[i, target(i)] into score[AL_ROLE_N, NL * H], and its chance
 * into chance[AL_ROLE_N, NL * H]: the mean over the same rows of 1 / k_i, k_i the keys row i reads in that layer
 * (i + 1, fewer in a windowed layer), or 0 when the target is not among them: what uniform attention scores. A
 * repeat (n > 0: the sequence of al_roles_draw with this offset) has every role; natural text (n = 0) only
 * previous_token and sink. A role without rows gets NAN. */
al_status al_roles_unit(const al_config *c, const float *attn, int L, int offset, int n, double *score,
                        double *chance, al_error *err);

/* ------------------------------------------------------------ which heads have a role (role_finding.c) */

/* The rule of docs/findings.md ("Head roles") over U units and the n_heads heads of one role: per head, the units'
 * differences d_u = score_u - chance_u (NAN units left out), a one-sided exact sign test (ties left out), Holm
 * across the heads, alpha AL_FINDING_ALPHA; a head has the role when it is significant and its mean score is at
 * least AL_ROLE_MIN_RATIO times its mean chance, and is "weak" when significant below that. */
#define AL_ROLE_MIN_RATIO 2.0
typedef struct al_role_finding {
    int n_heads, units; /* units: those with a score */
    int min_units;      /* the fewest units with which a head could reach p_holm < alpha */
    const char *verdict; /* "found", "weak_only", "none", "too_few_units" */
    double *score, *chance, *effect, *ratio, *p, *p_holm; /* [n_heads]: means over the units; effect = score - chance,
                                                           * ratio = score / chance (NAN when chance is 0) */
    int *above, *below;                                   /* [n_heads] units above / below their chance */
    int *has_role, *weak;                                 /* [n_heads] */
    int n_found, n_weak;
} al_role_finding;

/* score and chance [U, stride], head k of unit u at u * stride + k. */
al_status al_role_finding_make(const double *score, const double *chance, int U, int n_heads, size_t stride,
                               al_role_finding *out, al_error *err);
void al_role_finding_free(al_role_finding *f);

#endif
