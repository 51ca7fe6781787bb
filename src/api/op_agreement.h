/* op_agreement.h: the head_agreement op's comparison, shared by its encoder path (op_agreement.c, over a task) and its
 * causal language model path (op_agreement_lm.c, over a corpus): the grids of the measures, Spearman's rho, the
 * least-important overlaps, the finding by docs/findings.md's rule and the reply's part that holds them
 * (docs/agreement.md). Not public. */
#ifndef AL_API_OP_AGREEMENT_H
#define AL_API_OP_AGREEMENT_H

#include "../methods/papa/papa_sweep.h"
#include "api_internal.h"

/* The measures, in the reply's order: an encoder's seven, and on a causal model the head roles' scores after them. */
enum {
    AL_AG_LAMBDA, AL_AG_GRADIENT, AL_AG_JS, AL_AG_CONFIDENCE, AL_AG_ENTROPY, AL_AG_SINK, AL_AG_NORM,
    AL_AG_PREVIOUS, AL_AG_INDUCTION, AL_AG_DUPLICATE,
    AL_AGREEMENT_N = AL_AG_PREVIOUS, /* an encoder's */
    AL_AGREEMENT_LM_N = AL_AG_DUPLICATE + 1 /* a causal model's */
};

typedef struct al_agreement al_agreement;

/* NL x H heads, the k least important named per measure; causal picks the decoder's measures (AL_AGREEMENT_LM_N, their
 * labels). NULL when out of memory. */
al_agreement *al_agreement_new(int NL, int H, int k, int causal);
void al_agreement_free(al_agreement *a);
/* A measure's grid [NL * H] (layer-major), for the caller to fill (NAN: no value). */
double *al_agreement_grid(al_agreement *a, int measure);
/* Ranks, correlations, least-important sets, overlaps and the finding (rank: the ranking's settings, named in the
 * finding when lambda did not learn). Non-zero when out of memory. */
int al_agreement_compare(al_agreement *a, const al_papa_rank_settings *rank);
/* "measures", "grids", "spearman", "least", "spearman_importance", "finding", "findings", "digest". */
void al_agreement_reply(al_reply_builder *rb, const al_agreement *a);
/* The seven measures both paths share, per head i < NH: lambda from theta, the normalised gradient, and from the
 * head statistics' means [NH, AL_HS_N] the input dependence, confidence, entropy and sink (stat sink: AL_HS_SINK on
 * an encoder, AL_HS_FIRST on a causal model), and the norm mass. */
void al_agreement_fill_shared(al_agreement *a, int NH, const float *theta, const double *gradient, const double *mean,
                              int sink, const double *norm_mass);
/* The reply's counts and timing after al_agreement_reply: "n_examples", "n_validation", "n_train", "reused"
 * {"constants", "ranking"}, "seconds" since t0. */
void al_agreement_reply_counts(al_reply_builder *rb, int n_examples, int n_validation, int n_train, int reused_constants,
                               int reused_ranking, double t0);

/* The head_roles op's scores at its defaults (16 repeated random sequences of 32 tokens, or the most the positions
 * hold twice, seed 0): per role (al_role) and head the mean score over the sequences, as its "repeat.<role>.score"
 * gives it, into scores [AL_ROLE_N, NL * H] (op_head_roles.c). */
al_status al_head_roles_default_scores(const al_op_ctx *ctx, const al_model *model, double *scores, al_error *err);

/* head_agreement on a causal model's corpus (op_agreement_lm.c). */
al_status al_op_head_agreement_lm(al_op_ctx *ctx, al_error *err);

#endif
