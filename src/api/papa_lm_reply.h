/* papa_lm_reply.h: the reply of a language model's papa sweep (docs/papa-op.md, "A causal language model") from its
 * result, shared by the papa op (op_papa_lm.c) and papa_merge (which rebuilds a whole sweep from its shards), so a
 * merged sweep's summaries, findings and digest are the unsharded op's. Not public. */
#ifndef AL_API_PAPA_LM_REPLY_H
#define AL_API_PAPA_LM_REPLY_H

#include "../methods/papa/papa_lm.h"
#include "api_internal.h"

/* "score": the name, direction and interval of every mean below (bits per token, lower is better). */
void al_papa_lm_reply_score(al_reply_builder *rb);
/* "configs", "runs", "summary", "findings", the lambda order's "lambdas", "ranking_loss", "theta" and "ranking",
 * "orders", "importance", "digest", "corpus" and "constants": every number a reader compares. */
al_status al_papa_lm_reply_results(al_reply_builder *rb, const al_papa_lm_result *r, int NL, int H, al_error *err);
/* The span of lambda = sigmoid(theta) over the heads (NAN without theta): below AL_FINDING_LAMBDA_FLOOR lambda did not
 * learn a ranking (docs/findings.md). */
double al_papa_lm_lambda_range(const al_papa_lm_result *r, int n_heads);
/* "lm_shard": what a shard's reply carries beyond the reply's rounded numbers so papa_merge can rebuild the whole
 * sweep exactly: each configuration it ran with its summary in nats (nats, lo, hi, documents, tokens), each
 * document's bits and the bits by position, the documents' predicted tokens, and the ranking's losses; each double as
 * a string of 17 significant digits, which any JSON printer carries unchanged. */
al_status al_papa_lm_reply_shard(al_reply_builder *rb, const al_papa_lm_result *r, al_error *err);
/* papa_merge's side: part `index`'s configurations from its "lm_shard" into r (allocated for the sweep's plan,
 * documents and window), and with first set, the parts' shared numbers (documents' tokens, tokens by position,
 * windows, constants, orders, importance, lambdas and the ranking's losses). A configuration already filled is
 * refused, naming it. Errors name the part's field. */
al_status al_papa_lm_read_shard(const cJSON *part, int index, int first, int NL, int H, al_papa_lm_result *r,
                                al_error *err);

#endif
