/* ops.c: the one table of the JSON API's ops: name, handler, a one-line summary, whether the
 * browser worker passes the op through, and its request fields (the tables of request_fields.c and beside
 * each handler). The dispatcher (api.c) looks ops up here, the "unknown op"
 * error lists them from here, and the "version" op returns them, which is how wasm/worker.mjs learns
 * what it may forward. */
#include <stdio.h>
#include <string.h>

#include "../core/error.h"
#include "../kernels/kernels.h"
#include "api_internal.h"
#include "op_analysis.h"
#include "lm_heads.h"
#include "op_heads.h"
#include "../methods/tasks/task.h"
#include "../model/family.h"

static al_status op_version(al_op_ctx *ctx, al_error *err);

/* worker 0: load_model reads a directory (no file system in the browser); the worker loads models,
 * lists them and reports its version through its own messages ('loadModel', 'init'); "forward" is an
 * alias of "attention". Order: the order of the "unknown op" message. */
static const al_api_op k_ops[] = {
    {"load_model", al_op_load_model, "loads a model directory under an id (native only)", 0, {al_fields_load_model}},
    {"unload_model", al_op_unload_model, "frees the model loaded under an id", 0, {al_fields_model}},
    {"models", al_op_models, "the ids of the loaded models", 0, {al_fields_none}},
    {"version", op_version, "the core's version, its kernels, this list of ops with their fields, the built-in tasks, "
                            "the metrics and the model families", 0, {al_fields_none}},
    {"info", al_op_info, "a loaded model's config, weights and tokenizer", 1, {al_fields_model}},
    {"tokenize", al_op_tokenize, "one text (or pair) to tokens, ids and offsets", 1,
     {al_fields_model, al_fields_text, al_fields_encode}},
    {"attention", al_op_attention, "attention (and hidden states, values, MLM logits) with per-head policies", 1,
     {al_fields_model, AL_FIELDS_SEQUENCES, al_fields_attention_own}},
    {"forward", al_op_attention, "alias of attention", 0, {al_fields_model, AL_FIELDS_SEQUENCES, al_fields_attention_own}},
    {"effective_attention", al_op_effective, "effective attention, its ranks and its difference from attention", 1,
     {al_fields_model, AL_FIELDS_SEQUENCES, al_fields_an_mode, al_fields_an_batch, al_fields_effective_own}},
    {"attention_diff", al_op_attention_diff, "|effective - standard| attention per entry and head", 1,
     {al_fields_model, AL_FIELDS_SEQUENCES, al_fields_an_mode, al_fields_an_batch, al_fields_effective_own}},
    {"attention_stats", al_op_attention_stats, "attention to [CLS], [SEP] and punctuation per head", 1,
     {al_fields_model, AL_FIELDS_SEQUENCES, al_fields_an_mode, al_fields_an_average, al_fields_an_batch}},
    {"attention_patterns", al_op_attention_patterns, "pattern labels (vertical, diagonal, block ...) per head", 1,
     {al_fields_model, AL_FIELDS_SEQUENCES, al_fields_an_mode, al_fields_an_average, al_fields_an_batch}},
    {"attention_by_pos", al_op_attention_by_pos, "attention from a query to keys grouped by part of speech", 1,
     {al_fields_model, al_fields_by_pos_own, al_fields_an_mode, al_fields_an_average, al_fields_pad, al_fields_encode,
      al_fields_an_batch}},
    {"attention_similarity", al_op_attention_similarity, "cosine similarity of two models' attention per head", 1,
     {al_fields_model, al_fields_similarity_own, AL_FIELDS_SEQUENCES, al_fields_an_mode, al_fields_an_average,
      al_fields_an_batch}},
    {"norm_attention", al_op_norm_attention, "norm-based attention: alpha times the norm of what a head moves, per head and with residual and LayerNorm", 1,
     {al_fields_model, AL_FIELDS_SEQUENCES, al_fields_an_batch, al_fields_norm_own}},
    {"attention_rollout", al_op_attention_rollout, "attention rollout over layers from raw, effective or norm-based attention", 1,
     {al_fields_model, AL_FIELDS_SEQUENCES, al_fields_an_batch, al_fields_rollout_own, al_fields_an_mode}},
    {"head_stats", al_op_head_stats, "per head over a task's examples: entropy, confidence, sink mass, divergence from PAPA's constant", 1,
     {al_fields_model, al_fields_task, al_fields_sweep, al_fields_sweep_data, al_fields_confidence, al_fields_corpus,
      al_fields_lm_constants}},
    {"head_steps", al_op_head_steps, "one head for one query token step by step: q, k, scores, softmax, values, context", 1,
     {al_fields_model, al_fields_text, al_fields_ids, al_fields_head_steps_own, al_fields_pad, al_fields_encode}},
    {"papa", al_op_papa, "PAPA: constant heads by fraction and order, probes per seed, baselines, MLM score", 1,
     {al_fields_model, al_fields_task, al_fields_sweep, al_fields_sweep_data, al_fields_papa_own, al_fields_training}},
    {"papa_merge", al_op_papa_merge, "the replies of a sharded papa sweep merged into the unsharded one", 1,
     {al_fields_papa_merge_own}},
    {"head_importance", al_op_head_importance, "gradient head importance (Michel et al.): |dL/dxi| per head, probe, MLM or (a causal model) language-model loss", 1,
     {al_fields_model, al_fields_task, al_fields_importance_own, al_fields_sweep, al_fields_training}},
    {"head_agreement", al_op_head_agreement, "whether PAPA's lambda, gradient importance, head statistics and norm mass agree on which heads matter: Spearman matrix and least-important overlaps", 1,
     {al_fields_model, al_fields_task, al_fields_sweep, al_fields_sweep_data, al_fields_training, al_fields_agreement_own, al_fields_confidence,
      al_fields_corpus, al_fields_lm_constants}},
    {"value_zeroing", al_op_value_zeroing, "value zeroing (Mohebbi et al.): per layer, each token's values zeroed, cosine distances", 1,
     {al_fields_model, AL_FIELDS_SEQUENCES}},
    {"lm", al_op_lm, "a causal model's next-token predictions: surprisal, entropy and top-k per position; perplexity with "
                     "a 95% interval over documents", 1,
     {al_fields_model, AL_FIELDS_SEQUENCES, al_fields_lm_own, al_fields_corpus}},
    {"generate", al_op_generate, "a causal model continues a prompt, greedy or sampled (temperature, top-k, top-p, seed), "
                                 "with a key/value cache; tokens stream through progress", 1,
     {al_fields_model, al_fields_ids, al_fields_generate_own}},
    {"head_roles", al_op_head_roles, "a causal model's induction, duplicate-token, previous-token and sink heads: scores "
                                     "on repeated random sequences (and texts) against chance, which heads have the role, "
                                     "and the loss drop on the repeat", 1,
     {al_fields_model, al_fields_texts, al_fields_ids, al_fields_encode, al_fields_corpus, al_fields_head_roles_own}},
    {"layers", al_op_layers, "a causal model's attention blocks dropped (He et al. 2024): each block's input-output "
                             "similarity over a corpus, perplexity with 0 .. NL blocks dropped most similar first, each "
                             "dropped alone and each layer made constant", 1,
     {al_fields_model, al_fields_corpus, al_fields_layers_own}},
    {"streaming", al_op_streaming, "StreamingLLM's test on a causal model: loss by position over a corpus with full "
                                   "attention, a window of recent keys, and the window with the first tokens as sinks", 1,
     {al_fields_model, al_fields_corpus, al_fields_streaming_own}},
    {"check_config", al_op_check_config, "whether a config.json is a model this core runs and has the memory for", 1,
     {al_fields_check_config_own}},
};
#define N_OPS ((int)(sizeof k_ops / sizeof k_ops[0]))

int al_api_op_count(void) { return N_OPS; }
const al_api_op *al_api_op_at(int i) { return i >= 0 && i < N_OPS ? &k_ops[i] : NULL; }

const al_api_op *al_api_find_op(const char *name) {
    for (int i = 0; name && i < N_OPS; i++)
        if (strcmp(k_ops[i].name, name) == 0) return &k_ops[i];
    return NULL;
}

al_status al_api_unknown_op(const char *name, al_error *err) {
    char list[512] = "";
    for (int i = 0; i < N_OPS; i++) al_names_append(list, sizeof list, k_ops[i].name);
    return al_err(err, AL_ERR_INVALID, "request: field 'op': unknown op '%.100s' (ops: %s)", name, list);
}

static al_status op_version(al_op_ctx *ctx, al_error *err) {
    al_reply_builder *rb = ctx->rb;
    al_op_warn_unknown(ctx);
    al_rb_str(rb, rb->root, "version", AL_VERSION);
    al_rb_str(rb, rb->root, "kernels", al_kernels_path());
    al_rb_num(rb, rb->root, "threads", al_session_threads(ctx->session)); /* the session's pool */
    cJSON *ops = al_rb_add(rb, rb->root, "ops", cJSON_CreateArray());
    for (int i = 0; ops && i < N_OPS; i++) {
        cJSON *op = al_rb_add(rb, ops, NULL, cJSON_CreateObject());
        al_rb_str(rb, op, "name", k_ops[i].name);
        al_rb_str(rb, op, "summary", k_ops[i].summary);
        al_rb_bool(rb, op, "worker", k_ops[i].worker);
        al_fields_json(rb, op, "fields", k_ops[i].fields); /* the CLI's options and the page's lists come from here */
    }
    /* The built-in tasks and the metrics: the page and the scripts read them here, not from lists of their own. */
    cJSON *tasks = al_rb_add(rb, rb->root, "tasks", cJSON_CreateArray());
    for (int i = 0; tasks && al_task_builtins[i].id; i++) {
        cJSON *t = al_rb_add(rb, tasks, NULL, cJSON_CreateObject());
        al_rb_str(rb, t, "id", al_task_builtins[i].id);
        al_rb_str(rb, t, "label", al_task_builtins[i].label);
    }
    cJSON *metrics = al_rb_add(rb, rb->root, "metrics", cJSON_CreateArray());
    for (int i = 0; metrics && al_task_metrics[i].name; i++) {
        cJSON *m = al_rb_add(rb, metrics, NULL, cJSON_CreateObject());
        al_rb_str(rb, m, "name", al_task_metrics[i].name);
        al_rb_str(rb, m, "summary", al_task_metrics[i].summary);
        al_rb_num(rb, m, "min", al_task_metrics[i].min);
        al_rb_num(rb, m, "max", al_task_metrics[i].max);
    }
    /* The model families (the registry, src/model/families.c) and the config.json names that pick each: the page
     * checks a config before downloading its weights against this list, not a list of its own. */
    cJSON *families = al_rb_add(rb, rb->root, "families", cJSON_CreateArray());
    for (int i = 0; families && i < al_family_count(); i++) {
        const al_family *f = al_family_at(i);
        cJSON *fo = al_rb_add(rb, families, NULL, cJSON_CreateObject());
        al_rb_str(rb, fo, "name", f->name);
        cJSON *types = al_rb_add(rb, fo, "model_types", cJSON_CreateArray());
        for (const char *const *t = f->model_types; types && *t; t++)
            al_rb_add(rb, types, NULL, cJSON_CreateString(*t));
        cJSON *classes = al_rb_add(rb, fo, "class_prefixes", cJSON_CreateArray());
        for (const char *const *p = f->class_prefixes; classes && *p; p++)
            al_rb_add(rb, classes, NULL, cJSON_CreateString(*p));
    }
    (void)err;
    return AL_OK;
}
