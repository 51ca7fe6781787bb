/* op_agreement.h: the head_agreement op's comparison, shared by its encoder path (op_agreement.c, over a task) and its
 * causal language model path (op_agreement_lm.c, over a corpus): the grids of the measures, Spearman's rho, the
 * least-important overlaps, the finding by docs/findings.md's rule and the reply's part that holds them
 * (docs/agreement.md). Not public. */
#ifndef AL_API_OP_AGREEMENT_H
#define AL_API_OP_AGREEMENT_H

#include "../methods/papa/papa_sweep.h"
#include "api_internal.h"

/* The measures, in the reply's order. */
enum { AL_AG_LAMBDA, AL_AG_GRADIENT, AL_AG_JS, AL_AG_CONFIDENCE, AL_AG_ENTROPY, AL_AG_SINK, AL_AG_NORM, AL_AGREEMENT_N };

typedef struct al_agreement al_agreement;

/* NL x H heads, the k least important named per measure; causal picks the measures' decoder labels. NULL when out
 * of memory. */
al_agreement *al_agreement_new(int NL, int H, int k, int causal);
void al_agreement_free(al_agreement *a);
/* A measure's grid [NL * H] (layer-major), for the caller to fill (NAN: no value). */
double *al_agreement_grid(al_agreement *a, int measure);
/* Ranks, correlations, least-important sets, overlaps and the finding (rank: the ranking's settings, named in the
 * finding when lambda did not learn). Non-zero when out of memory. */
int al_agreement_compare(al_agreement *a, const al_papa_rank_settings *rank);
/* "measures", "grids", "spearman", "least", "spearman_importance", "finding", "findings", "digest". */
void al_agreement_reply(al_reply_builder *rb, const al_agreement *a);

/* head_agreement on a causal model's corpus (op_agreement_lm.c). */
al_status al_op_head_agreement_lm(al_op_ctx *ctx, al_error *err);

#endif
