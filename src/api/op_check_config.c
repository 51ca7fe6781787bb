/* op_check_config.c: the "check_config" op: whether a config.json describes a model this core runs
 * and has the memory for, before any weights are fetched (the page asks before a download;
 * docs/memory.md). The config is read by the loader's own parser, so the refusals (an unsupported
 * family or field) are the loader's; the memory rule is the loader's too, plus the weight files,
 * which will sit in memory beside the float32 weights while they load. */
#include <string.h>

#include "../core/error.h"
#include "../core/memory.h"
#include "../model/family.h"
#include "../model/weights.h"
#include "api_internal.h"

/* Weight files hold at least 2 bytes a weight (float16 or bfloat16): a lower bound, so the op never
 * refuses a model the loader would take. */
enum { MIN_FILE_BYTES_PER_WEIGHT = 2 };

const al_req_field al_fields_check_config_own[] = {
    AL_F_STRING("config", NULL, "a config.json's text"),
    AL_F_END,
};

al_status al_op_check_config(al_op_ctx *ctx, al_error *err) {
    const char *text;
    al_status st = al_req_string(ctx->req, "config", "config", 1, &text, err);
    if (st) return st;
    al_op_warn_unknown(ctx);
    al_config config;
    char rule[160];
    /* a config that names no family (a classic BERT config.json) is sized by the first family whose fields it
     * has; the loader decides by the weights' tensor names (docs/families.md) */
    if ((st = al_config_parse_family(text, strlen(text), "config.json", AL_FAMILY_BY_CONFIG_FIELDS, NULL, &config,
                                     rule, sizeof rule, NULL, err)) != AL_OK)
        return st;
    uint64_t n_weights = 0;
    /* Without the MLM head: the files may not have one, and the loader counts it only when they do. */
    if ((st = al_weights_count(&config, 0, &n_weights, err)) != AL_OK) return st;
    const uint64_t files = n_weights * MIN_FILE_BYTES_PER_WEIGHT; /* n_weights < 2^59: sizes are below 2^24 */
    if ((st = al_weights_check_memory(&config, n_weights, files, err)) != AL_OK) return st;
    al_reply_builder *rb = ctx->rb;
    al_rb_str(rb, rb->root, "arch", al_arch_name(config.arch));
    al_rb_str(rb, rb->root, "family_rule", rule);
    al_rb_num(rb, rb->root, "weights", (double)n_weights);
    al_rb_num(rb, rb->root, "bytes_needed", (double)(n_weights * sizeof(float) + files));
    const uint64_t limit = al_memory_limit();
    if (limit) al_rb_num(rb, rb->root, "memory_limit", (double)limit);
    al_rb_num(rb, rb->root, "memory_in_use", (double)al_memory_in_use());
    return AL_OK;
}
