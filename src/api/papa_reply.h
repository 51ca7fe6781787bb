/* papa_reply.h: the papa reply (docs/papa-op.md, "Reply") from a sweep's result, shared by the papa op and
 * papa_merge (which rebuilds a whole sweep's reply from its shards' parts). Not public. */
#ifndef AL_API_PAPA_REPLY_H
#define AL_API_PAPA_REPLY_H

#include "../methods/papa/papa_findings.h"
#include "../methods/papa/papa_sweep.h"
#include "../methods/tasks/task.h"
#include "api_internal.h"

/* The digest of every number a reader compares: scores, accuracies, lambda logits, MLM scores (the replies'
 * digest rule: reply_digest.h). */
void al_papa_reply_digest(const al_papa_sweep_result *r, int n_heads, char out[72]);
/* Rounds every score to the value the reply prints (al_json_canonical), so summaries and the digest are
 * computed from the printed values. */
void al_papa_canonical_results(al_papa_sweep_result *r);
/* "config": every option as resolved, so the reply alone reproduces the request. */
/* The config's "constants", "orders" and "fractions" lists (every sweep's reply, encoder or language model). */
void al_papa_reply_plan_lists(al_reply_builder *rb, cJSON *config, const al_papa_sweep_request *q);
void al_papa_reply_config(al_reply_builder *rb, const al_papa_sweep_request *q, const char *preset, const al_task *task);
/* "configs", "runs", "summary", "findings", "lambdas", "ranking_loss", "theta" and "orders". */
al_status al_papa_reply_results(al_reply_builder *rb, const al_papa_sweep_result *r, int NL, int H, const char *metric,
                                int n_validation, al_error *err);
/* The pieces the language model's reply shares (op_papa_lm.c): one configuration's entry of "configs" (label,
 * what, k, fraction_kept, constant, order) appended to list; a paired difference as {"n", "mean", "ci95"} (ci95
 * null with fewer than 2 pairs), or null when n < 1; "orders" [AL_N_ORDERS, NL * H] as [layer, head] pairs (an
 * order whose first entry is -1 is left out). */
cJSON *al_papa_reply_config_entry(al_reply_builder *rb, cJSON *list, const al_papa_config *x, int n_total);
void al_papa_reply_paired(al_reply_builder *rb, cJSON *parent, const char *key, const al_papa_paired *p);
/* The reply's "findings" (codes, the configurations compared, the paired differences, the verdict words, the
 * sentence); has_embeddings 0 (a language model's sweep: no embeddings-only baseline) writes that baseline null
 * and leaves out its difference. */
void al_papa_reply_findings(al_reply_builder *rb, const al_papa_findings *fd, int has_embeddings);
void al_papa_reply_orders(al_reply_builder *rb, const int *orders, int NL, int H);
/* "task", "mlm_tokens" and "seconds". */
void al_papa_reply_task(al_reply_builder *rb, const al_papa_sweep_result *r, const al_task *task);

#endif
