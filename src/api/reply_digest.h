/* reply_digest.h: the one digest rule of the replies that carry numbers a reader compares (papa,
 * papa_merge, norm_attention, attention_rollout, head_stats; docs/papa-op.md, docs/measures.md): a SHA-256
 * over text lines, one per number ("run 1002 0.83125000000000004\n"), and over the raw little-endian bytes
 * of float32 tensors after a line naming them. The same request gives the same digest on any build and
 * thread count, so a digest is a link's check. Not public. */
#ifndef AL_API_REPLY_DIGEST_H
#define AL_API_REPLY_DIGEST_H

#include <stddef.h>

#include "../core/sha256.h"

/* The value a reader gets back from the reply: cJSON prints 15 significant digits when they read back
 * within an epsilon, so a reply's numbers are not always the computed doubles. Statistics and digests are
 * computed from these canonical values, so a merged or re-read reply gives the same bits. */
double al_json_canonical(double v);

void al_digest_begin(al_sha256 *s);
/* One line: fmt with two doubles (e.g. "run %.0f %.17g\n"); at most 95 characters. */
void al_digest_line(al_sha256 *s, const char *fmt, double a, double b);
/* "tensor NAME COUNT\n", then the float32 values' bytes. */
void al_digest_floats(al_sha256 *s, const char *name, const float *v, size_t count);
/* "sha256:" and 64 hex digits. */
void al_digest_end(al_sha256 *s, char out[72]);

#endif
