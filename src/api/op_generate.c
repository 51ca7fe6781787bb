/* op_generate.c: the "generate" op (docs/decoders.md, "Generation"): a causal model continues a prompt through the
 * key/value cache (al_decode: the prompt at once, then one token a step, each the forward's bits), greedy or sampled
 * (src/methods/lm/sampler.c) from the request's seed. Each new token is reported through progress as it comes
 * (stage "token\t<id>\t<the continuation so far>", fraction = tokens / max_new_tokens) so a page can stream it; the
 * reply lists every step's token, its probability and the most probable alternatives, and on request each new
 * token's attention over every position ("attentions" [n_new, NL, H, T]). Cancel stops between tokens. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/det_math.h"
#include "../core/error.h"
#include "../core/rng.h"
#include "../core/seeds.h"
#include "../methods/lm/lm_score.h"
#include "../methods/lm/sampler.h"
#include "api_internal.h"

const al_req_field al_fields_generate_own[] = {
    AL_F_STRING("text", NULL, "the prompt"),
    AL_F_BOOL("add_special_tokens", "true", "add the tokenizer's own start token (Llama's <s>; GPT-2 adds none)"),
    AL_F_INT("max_new_tokens", 1, 4096, "32", "how many tokens to add at most"),
    AL_F_NUMBER("temperature", 0, 10, "0", "0: greedy (the most probable token); above 0: sampled, softer as it grows"),
    AL_F_INT("top_k", 0, 1 << 24, "0", "sample among the k most probable tokens only (0: all)"),
    AL_F_NUMBER("top_p", 0, 1, "1", "sample among the fewest most probable tokens whose probability reaches top_p"),
    AL_F_INT("seed", 0, 2147483647, "0", "the sampling's seed: the same seed gives the same text everywhere"),
    AL_F_BOOL("stop_at_eos", "true", "stop at the model's end-of-text token"),
    AL_F_INT("alternatives", 0, 20, "5", "the most probable tokens to list at each step"),
    AL_F_BOOL("attentions", "false", "return each new token's attention over every position"),
    AL_F_END,
};

/* The prompt's ids: "input_ids" (one sequence) or "text" tokenized. *ids malloc'd. */
static al_status read_prompt(const al_op_ctx *ctx, const al_model *model, int32_t **ids, int *n, al_error *err) {
    const cJSON *given = cJSON_GetObjectItemCaseSensitive(ctx->req, "input_ids");
    const char *text = NULL;
    int add_special;
    al_status st = al_req_string(ctx->req, "text", "text", 0, &text, err);
    if (!st) st = al_req_bool(ctx->req, "add_special_tokens", "add_special_tokens", 1, &add_special, err);
    if (st) return st;
    const int V = al_model_config(model)->vocab_size;
    if (given && !cJSON_IsNull(given)) {
        if (!cJSON_IsArray(given) || cJSON_GetArraySize(given) < 1)
            return al_err(err, AL_ERR_INVALID, "request: field 'input_ids' must be a non-empty list of token ids");
        *n = cJSON_GetArraySize(given);
        *ids = malloc(sizeof(int32_t) * (size_t)*n);
        if (!*ids) return al_err(err, AL_ERR_OOM, "request: out of memory for input_ids");
        for (int i = 0; i < *n; i++) {
            const cJSON *v = cJSON_GetArrayItem(given, i);
            if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < 0 || v->valuedouble >= V) {
                free(*ids);
                return al_err(err, AL_ERR_INVALID, "request: field 'input_ids[%d]' must be a token id in [0, %d)", i, V);
            }
            (*ids)[i] = (int32_t)v->valuedouble;
        }
        return AL_OK;
    }
    if (!text) return al_err(err, AL_ERR_INVALID, "request: field 'text' (the prompt) or 'input_ids' is required");
    const al_tokenizer *tok = al_model_tokenizer(model);
    if (!tok) return al_err(err, AL_ERR_INVALID, "request: field 'text': the model has no tokenizer files");
    al_encode_options opt = al_encode_default_options();
    opt.add_special_tokens = add_special;
    al_encoding enc = {0};
    if ((st = al_tokenizer_encode(tok, text, NULL, &opt, &enc, err))) return al_err_prefix(err, "request: field 'text'");
    *n = enc.n_tokens;
    *ids = malloc(sizeof(int32_t) * (size_t)(*n ? *n : 1));
    if (*ids) memcpy(*ids, enc.ids, sizeof(int32_t) * (size_t)*n);
    al_encoding_free(&enc);
    if (!*ids) return al_err(err, AL_ERR_OOM, "request: out of memory for the prompt");
    if (*n == 0) {
        free(*ids);
        return al_err(err, AL_ERR_INVALID, "request: field 'text': the prompt has no tokens (an empty text: give at "
                      "least one token)");
    }
    return AL_OK;
}

/* The model's end-of-text token: the one its tokenizer names (tokenizer_config.json's eos_token: attnlab's own
 * decoders end a line with [SEP], docs/decoder_pretraining.md), else its <|endoftext|>, </s> or <|im_end|>, else -1. */
static int eos_id(const al_model *model) {
    const al_tokenizer *tok = al_model_tokenizer(model);
    if (!tok) return -1;
    if (al_tokenizer_eos_id(tok) >= 0) return al_tokenizer_eos_id(tok);
    static const char *const names[] = {"<|endoftext|>", "</s>", "<|im_end|>", NULL};
    for (int i = 0; names[i]; i++) {
        const int id = al_tokenizer_token_to_id(tok, names[i]);
        if (id >= 0) return id;
    }
    return -1;
}

static void report_token(const al_op_ctx *ctx, const al_tokenizer *tok, const int32_t *gen, int n, int max_new) {
    if (!ctx->params->progress) return;
    char *text = NULL;
    al_error e;
    if (tok) al_tokenizer_decode(tok, gen, n, 0, &text, &e);
    const size_t len = (text ? strlen(text) : 0) + 32;
    char *stage = malloc(len);
    if (stage) {
        snprintf(stage, len, "token\t%d\t%s", (int)gen[n - 1], text ? text : "");
        ctx->params->progress(ctx->params->progress_user, stage, (double)n / max_new);
    }
    free(stage), free(text);
}

al_status al_op_generate(al_op_ctx *ctx, al_error *err) {
    const al_api_model *m;
    int max_new, top_k, seed, stop_eos, n_alt, want_attn;
    float temperature, top_p;
    al_status st = al_req_model(ctx->session, ctx->req, &m, err);
    if (!st) st = al_req_int(ctx->req, "max_new_tokens", "max_new_tokens", 0, 32, 1, 4096, &max_new, err);
    if (!st) st = al_req_float(ctx->req, "temperature", "temperature", 0, 0.0f, 0.0f, 10.0f, &temperature, err);
    if (!st) st = al_req_int(ctx->req, "top_k", "top_k", 0, 0, 0, 1 << 24, &top_k, err);
    if (!st) st = al_req_float(ctx->req, "top_p", "top_p", 0, 1.0f, 0.0f, 1.0f, &top_p, err);
    if (!st) st = al_req_int(ctx->req, "seed", "seed", 0, 0, 0, 2147483647, &seed, err);
    if (!st) st = al_req_bool(ctx->req, "stop_at_eos", "stop_at_eos", 1, &stop_eos, err);
    if (!st) st = al_req_int(ctx->req, "alternatives", "alternatives", 0, 5, 0, 20, &n_alt, err);
    if (!st) st = al_req_bool(ctx->req, "attentions", "attentions", 0, &want_attn, err);
    if (st) return st;
    const al_model *model = m->model;
    if (!al_model_is_causal(model))
        return al_err(err, AL_ERR_INVALID, "request: field 'model': '%s' is %s, not a causal language model (gpt2, "
                      "llama, qwen2, gpt_neox)", m->id, al_arch_name(al_model_config(model)->arch));
    const al_config *c = al_model_config(model);
    int32_t *prompt = NULL;
    int P = 0;
    if ((st = read_prompt(ctx, model, &prompt, &P, err))) return st;
    const int limit = c->max_position_embeddings;
    if (P >= limit) {
        free(prompt);
        return al_err(err, AL_ERR_INVALID, "request: field 'text': the prompt has %d tokens; the model reads at most %d "
                      "(max_position_embeddings), leaving no room to generate", P, limit);
    }
    if (P + max_new > limit) {
        free(prompt);
        return al_err(err, AL_ERR_INVALID, "request: field 'max_new_tokens': %d after a prompt of %d tokens passes the "
                      "model's %d positions (max_position_embeddings): at most %d", max_new, P, limit, limit - P);
    }
    al_op_warn_unknown(ctx);
    const int V = c->vocab_size, NL = c->n_layers, H = c->n_heads, T = P + max_new;
    al_kv_cache *kc = NULL;
    float *logits = malloc(sizeof(float) * (size_t)P * V);
    int32_t *seq = malloc(sizeof(int32_t) * (size_t)T), *order = malloc(sizeof(int32_t) * (size_t)V);
    double *prob = malloc(sizeof(double) * (size_t)V);
    float *p_tok = malloc(sizeof(float) * (size_t)max_new);
    float *attn_step = want_attn ? malloc(sizeof(float) * (size_t)NL * H * T) : NULL;
    float *attn_all = NULL;
    if (!logits || !seq || !order || !prob || !p_tok || (want_attn && !attn_step))
        st = al_err(err, AL_ERR_OOM, "generate: out of memory for %d positions", T);
    if (!st) st = al_kv_cache_new(model, T, &kc, err);
    if (!st && want_attn) {
        int64_t shape[4] = {max_new, NL, H, T};
        void *data;
        if ((st = al_rb_tensor(ctx->rb, "attentions", "F32", 4, shape, &data, err)) == AL_OK) attn_all = data;
    }
    al_reply_builder *rb = ctx->rb;
    cJSON *steps = al_rb_add(rb, rb->root, "steps", cJSON_CreateArray());
    const al_tokenizer *tok = al_model_tokenizer(model);
    const int eos = stop_eos ? eos_id(model) : -1;
    const al_sampling sampling = {temperature, top_k, top_p};
    al_rng rng;
    al_rng_seed(&rng, al_mlm_derive_seed((uint64_t)seed, AL_SEED_GENERATE, 0));
    if (prompt && seq) memcpy(seq, prompt, sizeof(int32_t) * (size_t)P);
    int n_new = 0;
    const char *stopped = "max_new_tokens";
    const double wall0 = al_now_seconds(), cpu0 = al_cpu_seconds();
    al_api_progress(ctx->params, "prefill", 0.0);
    /* the prompt at once: its last row predicts the first new token */
    if (!st) st = al_decode(model, kc, seq, P, ctx->session->pool, logits, NULL, err);
    const float *next_logits = logits + (size_t)(P - 1) * V;
    while (!st && n_new < max_new) {
        if (al_api_cancelled(ctx->params)) {
            st = al_err(err, AL_ERR_CANCELLED, "generate: cancelled after %d tokens", n_new);
            break;
        }
        double z = 0.0; /* the step's normaliser, the sampler's: one pass of exponentials over V a step */
        const int id = al_sample_next(next_logits, V, &sampling, &rng, order, prob, &p_tok[n_new], &z);
        if (id < 0) {
            st = al_err(err, AL_ERR_OOM, "generate: out of memory sampling");
            break;
        }
        cJSON *step = al_rb_add(rb, steps, NULL, cJSON_CreateObject());
        al_rb_num(rb, step, "id", id);
        const char *s = tok ? al_tokenizer_id_to_token(tok, id) : NULL;
        if (s) al_rb_str(rb, step, "token", s);
        al_rb_num(rb, step, "p", p_tok[n_new]);
        /* the most probable alternatives at this step (under the model, temperature 1) */
        cJSON *alts = al_rb_add(rb, step, "alternatives", cJSON_CreateArray());
        if (n_alt > 0) {
            double mx = next_logits[0];
            for (int v = 1; v < V; v++)
                if (next_logits[v] > mx) mx = next_logits[v];
            int32_t best[20]; /* the lm op's top k (ties: lower id first); p in double below */
            al_lm_top_ids(next_logits, V, n_alt, best);
            for (int j = 0; j < n_alt && best[j] >= 0; j++) {
                cJSON *a = al_rb_add(rb, alts, NULL, cJSON_CreateObject());
                al_rb_num(rb, a, "id", best[j]);
                const char *as = tok ? al_tokenizer_id_to_token(tok, best[j]) : NULL;
                if (as) al_rb_str(rb, a, "token", as);
                al_rb_num(rb, a, "p", al_det_exp((double)next_logits[best[j]] - mx) / z);
            }
        }
        seq[P + n_new++] = id;
        report_token(ctx, tok, seq + P, n_new, max_new);
        if (id == eos) {
            stopped = "eos";
            break;
        }
        if (n_new == max_new) break;
        /* the new token through the cache: its logits predict the next one */
        st = al_decode(model, kc, &seq[P + n_new - 1], 1, ctx->session->pool, logits, attn_step, err);
        if (!st && attn_all) { /* step n_new - 1's attention: [NL, H, 1, len] into [NL, H, T] */
            const int len = P + n_new;
            float *dst = attn_all + (size_t)(n_new - 1) * NL * H * T;
            for (int lh = 0; lh < NL * H; lh++) memcpy(dst + (size_t)lh * T, attn_step + (size_t)lh * len, sizeof(float) * len);
        }
        next_logits = logits;
    }
    if (!st) {
        const double wall = al_now_seconds() - wall0;
        al_rb_str(rb, rb->root, "model", m->id);
        cJSON *pr = al_rb_add(rb, rb->root, "prompt", cJSON_CreateObject());
        al_rb_int_array(rb, pr, "ids", seq, P);
        al_rb_add(rb, pr, "tokens", al_api_token_strings(tok, seq, P));
        cJSON *gen = al_rb_add(rb, rb->root, "generated", cJSON_CreateObject());
        al_rb_int_array(rb, gen, "ids", seq + P, n_new);
        al_rb_add(rb, gen, "tokens", al_api_token_strings(tok, seq + P, n_new));
        char *text = NULL;
        al_error e;
        if (tok && al_tokenizer_decode(tok, seq + P, n_new, 0, &text, &e) == AL_OK) al_rb_str(rb, gen, "text", text);
        free(text);
        al_rb_str(rb, rb->root, "stopped", stopped);
        cJSON *cfg = al_rb_add(rb, rb->root, "sampling", cJSON_CreateObject());
        al_rb_str(rb, cfg, "mode", temperature > 0 ? "sampled" : "greedy");
        al_rb_num(rb, cfg, "temperature", temperature);
        al_rb_num(rb, cfg, "top_k", top_k);
        al_rb_num(rb, cfg, "top_p", top_p);
        al_rb_num(rb, cfg, "seed", seed);
        /* timing: not part of the result (it varies from run to run) */
        cJSON *timing = al_rb_add(rb, rb->root, "timing", cJSON_CreateObject());
        al_rb_num(rb, timing, "seconds", wall);
        /* CPU time only where the system keeps it (not in WebAssembly: clock.h) */
        const double cpu = al_cpu_seconds() - cpu0;
        if (isfinite(cpu)) al_rb_num(rb, timing, "cpu_seconds", cpu);
        al_rb_num(rb, timing, "tokens_per_second", wall > 0 ? n_new / wall : 0);
    }
    al_kv_cache_free(kc);
    free(prompt), free(logits), free(seq), free(order), free(prob), free(p_tok), free(attn_step);
    return st;
}
