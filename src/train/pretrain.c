/* pretrain.c: the MLM pretraining loop behind `attnlab pretrain`: config, data, AdamW with warm-up and
 * linear decay and clipping, progress lines, held-out evaluation against two baselines, a loss log,
 * checkpoints with bit-exact resume, and the final Hugging Face directory. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/clock.h"
#include "../core/error.h"
#include "../model/model_internal.h"
#include "cJSON.h"
#include "pretrain.h"
#include "train.h"

/* ---------------------------------------------------------------- config */

al_pretrain_config al_pretrain_default_config(void) {
    al_pretrain_config c;
    memset(&c, 0, sizeof c);
    snprintf(c.name, sizeof c.name, "attnlab-mini-bert");
    snprintf(c.vocab, sizeof c.vocab, "build/data/vocab.txt");
    snprintf(c.train, sizeof c.train, "build/data/train.txt");
    snprintf(c.heldout, sizeof c.heldout, "build/data/heldout.txt");
    snprintf(c.out_dir, sizeof c.out_dir, "models/attnlab-mini-bert");
    c.hidden_size = 128;
    c.num_hidden_layers = 4;
    c.num_attention_heads = 4;
    c.intermediate_size = 512;
    c.max_position_embeddings = 128;
    c.hidden_dropout_prob = 0.1f;
    c.attention_probs_dropout_prob = 0.1f;
    c.max_len = 128;
    c.steps = 10000;
    c.batch_size = 32;
    c.warmup_steps = 500;
    c.lr = 1e-3f;
    c.weight_decay = 0.01f;
    c.max_grad_norm = 1.0f;
    c.mask_prob = 0.15f;
    c.seed = 1234;
    c.eval_interval = 1000;
    c.eval_sequences = 512;
    c.eval_seed = 4321;
    c.checkpoint_interval = 1000;
    c.log_interval = 50;
    c.shards = 1;
    snprintf(c.position_init, sizeof c.position_init, "normal");
    snprintf(c.objective, sizeof c.objective, "mlm");
    return c;
}

typedef enum { K_STR, K_INT, K_FLOAT, K_U64, K_I64 } key_kind;

/* One key of the config: where it goes and which values it may take. The range is that of the field's C type
 * narrowed by its meaning (a probability lies in [0, 1), a learning rate is positive, a size is at least 1 and at
 * most the model's own limit of 2^24); open_min / open_max exclude the bound itself. Every value is checked
 * against it as it is read (the message names the file and the key) and again before a run (al_pretrain_run),
 * so a config built in code or changed by command-line flags meets the same rule (docs/fuzzing.md, F3/F4). */
typedef struct key_def {
    const char *name;
    key_kind kind;
    size_t offset, size;
    double min, max;
    int open_min, open_max;
} key_def;

#define AL_PT_MAX_DIM 16777216.0          /* 2^24: the model's limit on any size (model.c, config.c) */
#define AL_PT_INT_MAX 2147483647.0        /* INT_MAX */
#define AL_PT_EXACT_MAX 9007199254740992.0 /* 2^53: the largest integer a JSON number holds exactly */
#define AL_PT_FLT_MAX 3.4028234663852886e38 /* FLT_MAX */

#define KS(f) {#f, K_STR, offsetof(al_pretrain_config, f), sizeof(((al_pretrain_config *)0)->f), 0, 0, 0, 0}
#define KI(f, lo, hi) {#f, K_INT, offsetof(al_pretrain_config, f), 0, lo, hi, 0, 0}
#define KF(f, lo, hi, open_lo, open_hi) {#f, K_FLOAT, offsetof(al_pretrain_config, f), 0, lo, hi, open_lo, open_hi}
#define KU(f) {#f, K_U64, offsetof(al_pretrain_config, f), 0, 0, AL_PT_EXACT_MAX, 0, 0}
#define KL(f, lo, hi) {#f, K_I64, offsetof(al_pretrain_config, f), 0, lo, hi, 0, 0}
static const key_def k_keys[] = {
    KS(name), KS(vocab), KS(train), KS(heldout), KS(out_dir),
    KI(hidden_size, 1, AL_PT_MAX_DIM), KI(num_hidden_layers, 1, 1024), KI(num_attention_heads, 1, 4096),
    KI(intermediate_size, 1, AL_PT_MAX_DIM), KI(max_position_embeddings, 3, AL_PT_MAX_DIM),
    KF(hidden_dropout_prob, 0, 1, 0, 1), KF(attention_probs_dropout_prob, 0, 1, 0, 1), KI(max_len, 3, AL_PT_MAX_DIM),
    KI(steps, 1, AL_PT_INT_MAX), KI(batch_size, 1, AL_PT_INT_MAX), KI(warmup_steps, 0, AL_PT_INT_MAX),
    KF(lr, 0, AL_PT_FLT_MAX, 1, 0), KF(weight_decay, 0, AL_PT_FLT_MAX, 0, 0), KF(max_grad_norm, 0, AL_PT_FLT_MAX, 0, 0),
    KF(mask_prob, 0, 1, 1, 1), KU(seed), KI(eval_interval, 0, AL_PT_INT_MAX), KI(eval_sequences, 0, AL_PT_INT_MAX),
    KU(eval_seed), KI(checkpoint_interval, 0, AL_PT_INT_MAX), KI(log_interval, 0, AL_PT_INT_MAX),
    KL(max_train_lines, 0, AL_PT_EXACT_MAX), KI(shards, 1, AL_MAX_SHARDS), KS(position_init),
    KI(short_len, 0, AL_PT_MAX_DIM), KI(short_steps, 0, AL_PT_INT_MAX), KS(sop_docs), KF(sop_share, 0, 1, 0, 0),
    KS(objective), KF(repeat_share, 0, 1, 0, 0), KI(repeat_from, 0, AL_PT_INT_MAX),
};
#define N_KEYS ((int)(sizeof k_keys / sizeof k_keys[0]))

/* Is v inside key k's range? `where` (a file name, "command line", "train config") starts the message. */
static al_status check_range(const key_def *k, double v, const char *where, al_error *err) {
    int ok = (k->open_min ? v > k->min : v >= k->min) && (k->open_max ? v < k->max : v <= k->max);
    if (ok) return AL_OK;
    if (k->kind == K_FLOAT)
        return al_err(err, AL_ERR_INVALID, "%s: '%s' = %g must be in %c%g, %g%c", where, k->name, v,
                      k->open_min ? '(' : '[', k->min, k->max, k->open_max ? ')' : ']');
    return al_err(err, AL_ERR_INVALID, "%s: '%s' = %.17g must be an integer in [%.17g, %.17g]", where, k->name, v,
                  k->min, k->max);
}

/* A field's current value as a double (numeric kinds other than K_U64). */
static double field_value(const al_pretrain_config *cfg, const key_def *k) {
    const char *field = (const char *)cfg + k->offset;
    switch (k->kind) {
    case K_INT: return *(const int *)(const void *)field;
    case K_FLOAT: return *(const float *)(const void *)field;
    case K_I64: return (double)*(const int64_t *)(const void *)field;
    default: return 0;
    }
}

/* A 64-bit seed written as a decimal string (JSON numbers hold integers exactly only up to 2^53). */
static int parse_u64(const char *s, uint64_t *out) {
    uint64_t v = 0;
    if (!*s) return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return 0;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

/* One key/value of the JSON object into cfg. */
static al_status read_key(const cJSON *it, const char *filename, al_pretrain_config *cfg, al_error *err) {
    int k = 0;
    while (k < N_KEYS && strcmp(k_keys[k].name, it->string)) k++;
    if (k == N_KEYS) return al_err(err, AL_ERR_FORMAT, "%s: unknown key '%.80s'", filename, it->string);
    const key_def *kd = &k_keys[k];
    char *field = (char *)cfg + kd->offset;
    if (kd->kind == K_STR) {
        if (!cJSON_IsString(it) || strlen(it->valuestring) >= kd->size)
            return al_err(err, AL_ERR_FORMAT, "%s: '%s' must be a string shorter than %zu bytes", filename, kd->name,
                          kd->size);
        memset(field, 0, kd->size); /* nothing of an earlier, longer value stays behind the terminator */
        memcpy(field, it->valuestring, strlen(it->valuestring));
        return AL_OK;
    }
    if (kd->kind == K_U64 && cJSON_IsString(it)) {
        if (!parse_u64(it->valuestring, (uint64_t *)(void *)field))
            return al_err(err, AL_ERR_FORMAT, "%s: '%s' must be a decimal integer in [0, 2^64)", filename, kd->name);
        return AL_OK;
    }
    if (!cJSON_IsNumber(it)) return al_err(err, AL_ERR_FORMAT, "%s: '%s' must be a number", filename, kd->name);
    const double v = it->valuedouble;
    if (kd->kind == K_FLOAT) {
        /* the value must survive the conversion to float: no inf from above FLT_MAX, and a range check on the
         * float itself (a learning rate of 1e-50 becomes 0) */
        if (!(fabs(v) <= AL_PT_FLT_MAX))
            return al_err(err, AL_ERR_INVALID, "%s: '%s' = %g does not fit a float", filename, kd->name, v);
        const float f = (float)v;
        al_status st = check_range(kd, f, filename, err);
        if (st == AL_OK) *(float *)(void *)field = f;
        return st;
    }
    if (v != floor(v)) return al_err(err, AL_ERR_INVALID, "%s: '%s' = %g must be an integer", filename, kd->name, v);
    al_status st = check_range(kd, v, filename, err); /* every bound lies inside the field's type: the cast is exact */
    if (st) return st;
    switch (kd->kind) {
    case K_INT: *(int *)(void *)field = (int)v; break;
    case K_U64: *(uint64_t *)(void *)field = (uint64_t)v; break;
    case K_I64: *(int64_t *)(void *)field = (int64_t)v; break;
    default: break;
    }
    return AL_OK;
}

al_status al_pretrain_config_parse(const char *json, size_t len, const char *filename, al_pretrain_config *cfg,
                                   al_error *err) {
    cJSON *root = cJSON_ParseWithLength(json, len);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        return al_err(err, AL_ERR_FORMAT, "%s: not a JSON object", filename);
    }
    al_status st = AL_OK;
    for (cJSON *it = root->child; it && !st; it = it->next) st = read_key(it, filename, cfg, err);
    cJSON_Delete(root);
    return st;
}

char *al_pretrain_config_json(const al_pretrain_config *cfg) {
    cJSON *j = cJSON_CreateObject();
    if (!j) return NULL;
    for (int k = 0; k < N_KEYS; k++) {
        const char *field = (const char *)cfg + k_keys[k].offset;
        char buf[32];
        switch (k_keys[k].kind) {
        case K_STR: cJSON_AddStringToObject(j, k_keys[k].name, field); break;
        case K_INT: cJSON_AddNumberToObject(j, k_keys[k].name, *(const int *)(const void *)field); break;
        case K_FLOAT: /* the shortest decimal that reads back as the same float */
            snprintf(buf, sizeof buf, "%.9g", (double)*(const float *)(const void *)field);
            cJSON_AddItemToObject(j, k_keys[k].name, cJSON_CreateRaw(buf));
            break;
        case K_U64: { /* above 2^53 as a string: a JSON number would not read back exactly */
            const uint64_t v = *(const uint64_t *)(const void *)field;
            snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
            cJSON_AddItemToObject(j, k_keys[k].name,
                                  v <= (uint64_t)1 << 53 ? cJSON_CreateRaw(buf) : cJSON_CreateString(buf));
            break;
        }
        case K_I64:
            snprintf(buf, sizeof buf, "%lld", (long long)*(const int64_t *)(const void *)field);
            cJSON_AddItemToObject(j, k_keys[k].name, cJSON_CreateRaw(buf));
            break;
        }
    }
    char *s = cJSON_Print(j);
    cJSON_Delete(j);
    return s;
}

/* The causal language-model objective: a GPT-2 decoder (train_decoder.c, docs/decoder_pretraining.md). */
static int is_clm(const al_pretrain_config *c) { return !strcmp(c->objective, "clm"); }

static al_status check_config(const al_pretrain_config *c, al_error *err) {
    for (int k = 0; k < N_KEYS; k++) { /* each field alone, as the parser checks it */
        if (k_keys[k].kind == K_STR || k_keys[k].kind == K_U64) continue;
        al_status st = check_range(&k_keys[k], field_value(c, &k_keys[k]), "train config", err);
        if (st) return st;
    }
    /* then the fields together */
    if ((double)c->lr * (double)c->weight_decay >= 1.0)
        return al_err(err, AL_ERR_INVALID,
                      "train config: lr %g times weight_decay %g must be below 1 (AdamW scales weights by 1 - lr * "
                      "weight_decay)",
                      (double)c->lr, (double)c->weight_decay);
    if (c->hidden_size % c->num_attention_heads)
        return al_err(err, AL_ERR_INVALID, "train config: hidden_size %d must be a multiple of num_attention_heads %d",
                      c->hidden_size, c->num_attention_heads);
    if (c->max_len > c->max_position_embeddings)
        return al_err(err, AL_ERR_INVALID, "train config: max_len %d must be in [3, max_position_embeddings %d]",
                      c->max_len, c->max_position_embeddings);
    if (c->short_len && (c->short_len < 3 || c->short_len >= c->max_len || c->short_steps < 1 || c->short_steps >= c->steps))
        return al_err(err, AL_ERR_INVALID,
                      "train config: short_len %d must be in [3, max_len %d) and short_steps %d in [1, steps %d)",
                      c->short_len, c->max_len, c->short_steps, c->steps);
    if (strcmp(c->position_init, "normal") && strcmp(c->position_init, "sinusoidal"))
        return al_err(err, AL_ERR_INVALID, "train config: position_init '%s' must be \"normal\" or \"sinusoidal\"",
                      c->position_init);
    if (c->shards > c->batch_size)
        return al_err(err, AL_ERR_INVALID, "train config: shards %d must be in [1, min(batch_size %d, %d)]", c->shards,
                      c->batch_size, AL_MAX_SHARDS);
    if (!c->sop_docs[0] != !(c->sop_share > 0))
        return al_err(err, AL_ERR_INVALID,
                      "train config: sop_docs '%.80s' and sop_share %g go together: a documents file and a share in (0, 1] "
                      "turn sentence order on, \"\" and 0 leave it off",
                      c->sop_docs, (double)c->sop_share);
    if (strcmp(c->objective, "mlm") && strcmp(c->objective, "clm"))
        return al_err(err, AL_ERR_INVALID, "train config: objective '%s' must be \"mlm\" or \"clm\"", c->objective);
    if (is_clm(c) && (c->sop_docs[0] || c->short_len))
        return al_err(err, AL_ERR_INVALID, "train config: objective \"clm\" (a GPT-2 decoder) takes no %s",
                      c->sop_docs[0] ? "sentence order (sop_docs)" : "short phase (short_len)");
    if (c->repeat_share > 0 && (!is_clm(c) || c->max_len < 16))
        return al_err(err, AL_ERR_INVALID,
                      "train config: repeat_share %g needs objective \"clm\" and max_len >= 16 (a span of 8 tokens and "
                      "its repeat), not objective \"%s\" with max_len %d",
                      (double)c->repeat_share, c->objective, c->max_len);
    if (c->sop_docs[0] && c->max_len < 8)
        return al_err(err, AL_ERR_INVALID, "train config: max_len %d must be at least 8 for sentence-order pairs (sop_docs)",
                      c->max_len);
    return AL_OK;
}

/* ---------------------------------------------------------------- sentence order (docs/pretraining.md) */

/* The long phase: from step short_steps with the two-phase recipe, from step 0 otherwise. */
static int long_phase_start(const al_pretrain_config *c) { return c->short_len ? c->short_steps : 0; }

/* Pairs per long-phase batch: round(sop_share * batch_size), at least 1 (0 when off). */
static int sop_pairs(const al_pretrain_config *c) {
    if (!c->sop_docs[0]) return 0;
    int p = (int)((double)c->sop_share * c->batch_size + 0.5);
    return p < 1 ? 1 : p > c->batch_size ? c->batch_size : p;
}

/* The head as BERT initialises it, from its own seeded stream: weights N(0, 0.02), biases 0. */
static void sop_head_init(float *block, int D, uint64_t seed) {
    al_rng rng;
    al_rng_seed(&rng, al_mlm_derive_seed(seed, AL_SEED_SOP_HEAD, 0));
    al_sop_head h = al_sop_head_carve(block, D);
    memset(block, 0, sizeof(float) * al_sop_head_size(D));
    for (size_t i = 0; i < (size_t)D * D; i++) h.pool_w[i] = 0.02f * al_rng_normal(&rng);
    for (size_t i = 0; i < 2 * (size_t)D; i++) h.cls_w[i] = 0.02f * al_rng_normal(&rng);
}

/* ---------------------------------------------------------------- the resume rule (docs/pretraining.md) */

/* Which steps a field shapes: none (where results go, evaluation, logging), the long phase only (sentence
 * order), every step, or the steps from the first repeated span on (3). */
static int field_scope(const char *name) {
    static const char *const none[] = {"name", "heldout", "out_dir", "eval_interval", "eval_sequences", "eval_seed",
                                       "checkpoint_interval", "log_interval"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
        if (!strcmp(name, none[i])) return 0;
    if (!strcmp(name, "sop_docs") || !strcmp(name, "sop_share")) return 1;
    if (!strcmp(name, "repeat_share") || !strcmp(name, "repeat_from")) return 3;
    return 2;
}

static void field_text(const al_pretrain_config *c, const key_def *k, char *buf, size_t n) {
    const char *field = (const char *)c + k->offset;
    switch (k->kind) {
    case K_STR: snprintf(buf, n, "\"%.100s\"", field); break;
    case K_U64: snprintf(buf, n, "%llu", (unsigned long long)*(const uint64_t *)(const void *)field); break;
    case K_FLOAT: snprintf(buf, n, "%.9g", (double)*(const float *)(const void *)field); break;
    default: snprintf(buf, n, "%.17g", field_value(c, k)); break;
    }
}

/* The first step with repeated spans (INT_MAX: none). */
static int first_repeat(const al_pretrain_config *c) { return c->repeat_share > 0 ? c->repeat_from : INT_MAX; }

/* A run resumed at step `step` repeats the steps already done only when no field that shaped them changed
 * since the checkpoint (whose config is saved_json): the long-phase fields may change while the checkpoint is
 * not past the long phase's start (the way to switch sentence order on for the long phase of a running job),
 * and the repeated spans' fields while neither the old nor the new setting has repeated a span in the steps
 * done (the way to switch them on from the next step of a running job). */
static al_status check_resume(const al_pretrain_config *now, const char *saved_json, const char *dir, int step,
                              al_error *err) {
    al_pretrain_config saved = al_pretrain_default_config(); /* a field the writer did not know keeps its default */
    al_status st = al_pretrain_config_parse(saved_json, strlen(saved_json), "checkpoint train_config", &saved, err);
    if (st) {
        al_err_prefix(err, dir);
        return st;
    }
    for (int k = 0; k < N_KEYS; k++) {
        const key_def *kd = &k_keys[k];
        const int scope = field_scope(kd->name);
        if (scope == 0) continue;
        const char *a = (const char *)&saved + kd->offset, *b = (const char *)now + kd->offset;
        const int same = kd->kind == K_STR ? !strcmp(a, b)
                         : !memcmp(a, b, kd->kind == K_INT ? sizeof(int) : kd->kind == K_FLOAT ? sizeof(float) : 8);
        if (same) continue;
        int from = scope == 1 ? long_phase_start(&saved) : 0;
        if (scope == 3) {
            const int a0 = first_repeat(&saved), b0 = first_repeat(now);
            if (a0 == b0 && saved.repeat_share == now->repeat_share) continue; /* both off: repeat_from unused */
            from = a0 < b0 ? a0 : b0;
        }
        if (step <= from) continue; /* the field's steps have not started yet */
        char was[128], is[128];
        field_text(&saved, kd, was, sizeof was);
        field_text(now, kd, is, sizeof is);
        return al_err(err, AL_ERR_INVALID,
                      "resume: %s: field '%s' was %s when the checkpoint was written and is %s now; it shapes steps "
                      "%d..%d, already done (the checkpoint is at step %d), so the resumed run would not repeat them",
                      dir, kd->name, was, is, from + 1, step, step);
    }
    return AL_OK;
}

/* ---------------------------------------------------------------- helpers */

/* The position table as Vaswani et al.'s sinusoids, PE[p, 2i] = sin(p / 10000^(2i/E)), PE[p, 2i+1] = cos(..),
 * scaled by 0.02 * sqrt(2) so that its per-element RMS is BERT's initial 0.02. A shift by k positions is then a
 * fixed rotation of the table, which a query/key projection can learn at once: heads that look at the
 * previous or next token need no long detour through the position table. The table stays trainable. */
static void sinusoidal_positions(al_model *model) {
    const int P = model->config.max_position_embeddings, E = model->config.embedding_size;
    const double scale = 0.02 * sqrt(2.0);
    for (int p = 0; p < P; p++)
        for (int e = 0; e < E; e++) {
            double angle = p / pow(10000.0, (double)(e & ~1) / E);
            model->w.pos_emb[(size_t)p * E + e] = (float)(scale * ((e & 1) ? cos(angle) : sin(angle)));
        }
}

static void logf_(const al_pretrain_hooks *h, const char *fmt, ...) AL_PRINTF(2, 3);
#include <stdarg.h>
static void logf_(const al_pretrain_hooks *h, const char *fmt, ...) {
    if (!h || !h->log) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    h->log(h->log_user, line);
}

static al_status load_tokenizer(const char *vocab_path, al_tokenizer **tok, al_error *err) {
    char *text;
    size_t len;
    al_status st = al_read_file(vocab_path, &text, &len, err);
    if (st) return st;
    al_fileset *fs = al_fileset_new();
    static const char tok_cfg[] = "{\"do_lower_case\": true}";
    if (!fs) st = al_err(err, AL_ERR_OOM, "vocab: out of memory");
    if (!st) st = al_fileset_add(fs, "vocab.txt", text, len, 1, err);
    if (!st) st = al_fileset_add(fs, "tokenizer_config.json", tok_cfg, sizeof tok_cfg - 1, 1, err);
    if (!st) st = al_tokenizer_load(fs, tok, err);
    if (st) al_err_prefix(err, vocab_path);
    al_fileset_free(fs);
    free(text);
    return st;
}

static al_status build_corpus(const al_tokenizer *tok, const char *path, int max_len, int64_t max_lines, int clm,
                              al_mlm_corpus *c, al_error *err) {
    char *text;
    size_t len;
    al_status st = al_read_file(path, &text, &len, err);
    if (st) return st;
    st = clm ? al_clm_corpus_build(tok, text, len, max_len, max_lines, c, err)
             : al_mlm_corpus_build(tok, text, len, max_len, max_lines, c, err);
    if (st) al_err_prefix(err, path);
    free(text);
    return st;
}

/* ---------------------------------------------------------------- evaluation */

typedef struct eval_stats {
    double loss, accuracy, perplexity, baseline_accuracy, unigram_perplexity;
    int64_t positions;
    /* the known attention patterns: the best head's mean attention (over real queries) to the previous
     * token, to the next token, and to [CLS]/[SEP]; head index layer * H + head */
    double pattern[3];
    int pattern_head[3];
} eval_stats;

/* Adds one batch's attention ([NL, B, H, L, L]) to the per-head sums of the three patterns. */
static void add_patterns(const float *attn, const al_mlm_batch *b, int NL, int H, int cls, int sep, double *sum,
                         double *cnt) {
    const int B = b->B, L = b->L;
    for (int l = 0; l < NL; l++)
        for (int s = 0; s < B; s++) {
            const int32_t *ids = b->ids + (size_t)s * L, *mask = b->mask + (size_t)s * L;
            int n = 0;
            while (n < L && mask[n]) n++;
            for (int h = 0; h < H; h++) {
                const float *A = attn + ((((size_t)l * B + s) * H + h) * L) * L;
                double *sm = sum + (size_t)(l * H + h) * 3, *ct = cnt + (size_t)(l * H + h) * 3;
                for (int i = 0; i < n; i++) {
                    const float *row = A + (size_t)i * L;
                    if (i > 0) sm[0] += row[i - 1], ct[0]++;
                    if (i + 1 < n) sm[1] += row[i + 1], ct[1]++;
                    double sp = 0;
                    for (int j = 0; j < n; j++)
                        if (ids[j] == cls || ids[j] == sep) sp += row[j];
                    sm[2] += sp, ct[2]++;
                }
            }
        }
}

/* Masked-token top-1 accuracy and perplexity on the first n held-out sequences, with the masking of
 * al_rng(eval_seed) (the same positions every time), plus the two baselines on those positions. */
static al_status evaluate(const al_model *model, const al_mlm_corpus *c, int n, const al_mlm_masking *mk,
                          uint64_t eval_seed, const int64_t *unigram, int64_t unigram_total, int most_frequent,
                          const al_special_ids *sp, eval_stats *out, al_error *err) {
    const int EB = 16, V = model->config.vocab_size, NL = model->config.n_layers, H = model->config.n_heads;
    memset(out, 0, sizeof *out);
    if (n <= 0 || n > c->n_seqs) n = c->n_seqs;
    float *logits = malloc(sizeof *logits * (size_t)EB * (size_t)c->max_len * (size_t)V);
    float *attn = malloc(sizeof *attn * (size_t)NL * EB * H * (size_t)c->max_len * (size_t)c->max_len);
    double *psum = calloc((size_t)NL * H * 3, sizeof *psum), *pcnt = calloc((size_t)NL * H * 3, sizeof *pcnt);
    int *idx = malloc(sizeof *idx * (size_t)EB);
    if (!logits || !attn || !psum || !pcnt || !idx) {
        free(logits), free(attn), free(psum), free(pcnt), free(idx);
        return al_err(err, AL_ERR_OOM, "eval: out of memory");
    }
    al_rng rng;
    al_rng_seed(&rng, eval_seed);
    double nll = 0, uni_nll = 0;
    int64_t correct = 0, base_correct = 0, count = 0;
    al_status st = AL_OK;
    for (int s0 = 0; s0 < n && !st; s0 += EB) {
        int nb = n - s0 < EB ? n - s0 : EB;
        for (int b = 0; b < nb; b++) idx[b] = s0 + b;
        al_mlm_batch batch;
        st = al_mlm_make_batch(c, idx, nb, mk, &rng, &batch, err);
        if (st) break;
        al_batch in = {nb, batch.L, batch.ids, batch.mask, NULL, NULL};
        al_forward_outputs fo = {.attentions = attn, .mlm_logits = logits};
        al_forward_params fp = al_forward_default_params();
        st = al_forward(model, &in, &fp, &fo, err);
        if (!st) add_patterns(attn, &batch, NL, H, sp->cls, sp->sep, psum, pcnt);
        for (int i = 0; !st && i < nb * batch.L; i++) {
            int label = batch.labels[i];
            if (label == AL_IGNORE_INDEX) continue;
            const float *row = logits + (size_t)i * V;
            int best = 0;
            double mx = row[0];
            for (int v = 1; v < V; v++)
                if (row[v] > mx) mx = row[v], best = v;
            double sum = 0;
            for (int v = 0; v < V; v++) sum += exp((double)row[v] - mx);
            nll += -((double)row[label] - mx - log(sum));
            correct += best == label;
            base_correct += label == most_frequent;
            uni_nll += -log((double)(unigram[label] + 1) / (double)(unigram_total + V));
            count++;
        }
        al_mlm_batch_free(&batch);
    }
    for (int k = 0; k < 3; k++) out->pattern_head[k] = -1;
    for (int hd = 0; hd < NL * H; hd++)
        for (int k = 0; k < 3; k++) {
            double v = pcnt[hd * 3 + k] > 0 ? psum[hd * 3 + k] / pcnt[hd * 3 + k] : 0;
            if (out->pattern_head[k] < 0 || v > out->pattern[k]) out->pattern[k] = v, out->pattern_head[k] = hd;
        }
    free(logits), free(attn), free(psum), free(pcnt), free(idx);
    if (st) return st;
    out->positions = count;
    if (count) {
        out->loss = nll / (double)count;
        out->perplexity = exp(out->loss);
        out->accuracy = (double)correct / (double)count;
        out->baseline_accuracy = (double)base_correct / (double)count;
        out->unigram_perplexity = exp(uni_nll / (double)count);
    }
    return AL_OK;
}

/* ---------------------------------------------------------------- logs */

/* Keeps the header and the rows whose first column (the step) is <= keep_step; creates it when absent. */
static FILE *open_log(const char *path, const char *header, int keep_step) {
    char *text = NULL;
    size_t len = 0;
    al_error e;
    FILE *f;
    if (keep_step > 0 && al_read_file(path, &text, &len, &e) == AL_OK) {
        f = fopen(path, "wb");
        if (!f) {
            free(text);
            return NULL;
        }
        char *save = NULL;
        /* a log emptied by a run killed between "wb" and its first row gets its header back: a file that
         * begins with nothing or with a row (a step number, as the filter below reads rows) has none */
        if (!text[0] || (text[0] >= '0' && text[0] <= '9')) fprintf(f, "%s\n", header);
        for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            if (line[0] >= '0' && line[0] <= '9' && atoi(line) > keep_step) continue;
            fprintf(f, "%s\n", line);
        }
        free(text);
        fflush(f); /* the kept rows are on disk at once: a run killed before its next row loses none */
        return f;
    }
    f = fopen(path, "wb");
    if (f) fprintf(f, "%s\n", header);
    return f;
}

static void write_eval_row(FILE *f, int step, const eval_stats *es, int H) {
    fprintf(f, "%d,%.6f,%.6f,%.4f,%.6f,%.4f,%lld", step, es->loss, es->accuracy, es->perplexity, es->baseline_accuracy,
            es->unigram_perplexity, (long long)es->positions);
    for (int k = 0; k < 3; k++) fprintf(f, ",L%dH%d,%.4f", es->pattern_head[k] / H, es->pattern_head[k] % H, es->pattern[k]);
    fprintf(f, "\n");
}

static void log_patterns(const al_pretrain_hooks *hooks, const eval_stats *es, int H) {
    logf_(hooks, "  heads: previous token L%dH%d %.3f, next token L%dH%d %.3f, [CLS]/[SEP] L%dH%d %.3f",
          es->pattern_head[0] / H, es->pattern_head[0] % H, es->pattern[0], es->pattern_head[1] / H,
          es->pattern_head[1] % H, es->pattern[1], es->pattern_head[2] / H, es->pattern_head[2] % H, es->pattern[2]);
}

/* ---------------------------------------------------------------- the run */

/* One run's state: what the steps below build, use and free (run_free). */
typedef struct run {
    const al_pretrain_config *cfg;
    const al_pretrain_hooks *hooks;
    al_pretrain_result res;
    int n_pairs;    /* sentence-order pairs per long-phase batch (0: no sentence order) */
    int long_start; /* the long phase's first step */
    /* data (load_data) */
    al_tokenizer *tok;
    al_mlm_corpus train, train_short, held;
    al_sop_docs docs;
    int64_t *unigram; /* [V] training-token counts for the baselines (specials excluded) */
    al_clm_baselines base; /* the causal objective's unigram and bigram baselines */
    int64_t unigram_total;
    int most_frequent;
    /* model and optimisers (build_model) */
    al_config mc;
    al_model *model;
    al_shard_set *shards;
    uint8_t *decay;
    al_adamw *opt, *sop_opt;
    float *sop_head;
    int sop_slot;
    char *config_text;
    int start; /* the first step to run: 0, or a resumed checkpoint's step */
    /* logs (open_logs) */
    FILE *loss_log, *eval_log, *sop_log;
    /* batches (prepare_batches, pick_sequences, pick_runs) */
    al_mlm_masking mk;
    al_special_ids sp;
    int *order, *idx, *run_order, *run_idx;
    al_clm_copy *copies; /* [batch_size] the step's repeated spans ("clm" with repeat_share) */
    int64_t order_epoch, run_epoch;
    int order_phase;
    /* progress */
    double train_time, last_log;
    int64_t tokens_since_log;
    char path[1200];
} run;

/* What one step did. */
typedef struct step_out {
    float loss;
    int n_tokens;
    double grad_norm, lr;
    int sop_now;    /* the step had sentence-order pairs */
    al_sop_step sop; /* their figures, when it had */
} step_out;

static al_status oom(al_error *err) { return al_err(err, AL_ERR_OOM, "pretrain: out of memory"); }

/* Reads the vocabulary and tokenises the training text (at max_len, and at short_len for the short phase),
 * the sentence-order documents and the held-out text; counts the training tokens for the baselines. */
static al_status load_data(run *r, al_error *err) {
    const al_pretrain_config *cfg = r->cfg;
    al_status st = load_tokenizer(cfg->vocab, &r->tok, err);
    if (st) return st;
    const int V = al_tokenizer_vocab_size(r->tok);
    double t0 = al_now_seconds();
    if ((st = build_corpus(r->tok, cfg->train, cfg->max_len, cfg->max_train_lines, is_clm(cfg), &r->train, err))) return st;
    if (r->train.n_seqs == 0) return al_err(err, AL_ERR_INVALID, "%s: no training text", cfg->train);
    logf_(r->hooks, "data: %s: %lld lines, %lld tokens, %d sequences of <= %d (%.1f s)", cfg->train,
          (long long)r->train.n_lines, (long long)r->train.n_line_tokens, r->train.n_seqs, cfg->max_len,
          al_now_seconds() - t0);
    if (cfg->short_len) {
        if ((st = build_corpus(r->tok, cfg->train, cfg->short_len, cfg->max_train_lines, 0, &r->train_short, err)))
            return st;
        logf_(r->hooks, "data: first %d steps on %d sequences of <= %d tokens", cfg->short_steps, r->train_short.n_seqs,
              cfg->short_len);
    }
    if (r->n_pairs) {
        char *text;
        size_t len;
        if ((st = al_read_file(cfg->sop_docs, &text, &len, err))) return st;
        st = al_sop_docs_build(r->tok, text, len, cfg->max_len, &r->docs, err);
        free(text);
        if (st) {
            al_err_prefix(err, cfg->sop_docs);
            return st;
        }
        if (r->docs.n_runs == 0)
            return al_err(err, AL_ERR_INVALID, "%s: no document has two consecutive sentences that fit max_len %d",
                          cfg->sop_docs, cfg->max_len);
        logf_(r->hooks, "data: %s: %lld documents, %d sentences, %d sentence-order runs of <= %d tokens; from step %d, "
              "%d of each batch's %d sequences are pairs", cfg->sop_docs, (long long)r->docs.n_docs, r->docs.n_sents,
              r->docs.n_runs, cfg->max_len - 3, r->long_start + 1, r->n_pairs, cfg->batch_size);
    }
    if (cfg->heldout[0]) {
        if ((st = build_corpus(r->tok, cfg->heldout, cfg->max_len, 0, is_clm(cfg), &r->held, err))) return st;
        r->res.heldout_unk_rate = r->held.n_line_tokens ? (double)r->held.n_unk / (double)r->held.n_line_tokens : 0.0;
        logf_(r->hooks, "data: %s: %lld lines, %lld tokens, %d sequences, [UNK] rate %.4f%%", cfg->heldout,
              (long long)r->held.n_lines, (long long)r->held.n_line_tokens, r->held.n_seqs,
              100.0 * r->res.heldout_unk_rate);
    }
    r->res.train_sequences = r->train.n_seqs;
    r->res.train_tokens = r->train.n_ids;
    if (is_clm(cfg)) /* the next-token baselines (clm_data.c) */
        return al_clm_baselines_build(&r->train, V, &r->base, err);

    /* unigram counts of the training tokens (specials excluded) for the two baselines */
    r->unigram = calloc((size_t)V, sizeof *r->unigram);
    if (!r->unigram) return oom(err);
    for (int64_t i = 0; i < r->train.n_ids; i++)
        if (r->train.ids[i] >= 5 && r->train.ids[i] < V) r->unigram[r->train.ids[i]]++, r->unigram_total++;
    r->most_frequent = 5;
    for (int v = 5; v < V; v++)
        if (r->unigram[v] > r->unigram[r->most_frequent]) r->most_frequent = v;
    return AL_OK;
}

/* The sentence-order head and its optimizer (the encoder's settings; decay on the two weights), and its
 * gradient slot in the shards. */
static al_status build_sop_head(run *r, const al_adamw_config *ac, al_error *err) {
    const int D = r->cfg->hidden_size;
    const size_t nh = al_sop_head_size(D);
    uint8_t *hd = malloc(nh);
    r->sop_head = calloc(nh, sizeof *r->sop_head);
    if (!hd || !r->sop_head) {
        free(hd);
        return oom(err);
    }
    memset(hd, 0, nh);
    memset(hd, 1, (size_t)D * D);
    memset(hd + (size_t)D * D + D, 1, 2 * (size_t)D);
    al_status st = al_adamw_new(nh, ac, hd, &r->sop_opt, err);
    free(hd);
    if (st) return st;
    return al_shards_add_grads(r->shards, nh, &r->sop_slot, err);
}

/* The model from cfg's seed, its shards and AdamW (warm-up, linear decay, clipping), the sentence-order
 * head when the run has one, and the config's JSON for the checkpoints. */
static al_status build_model(run *r, al_error *err) {
    const al_pretrain_config *cfg = r->cfg;
    al_status st;
    if (is_clm(cfg)) { /* GPT-2, its end-of-line token the vocabulary's [SEP] (clm_data.c) */
        if ((st = al_gpt2_config(al_tokenizer_vocab_size(r->tok), cfg->hidden_size, cfg->num_hidden_layers,
                                 cfg->num_attention_heads, cfg->intermediate_size, cfg->max_position_embeddings,
                                 al_tokenizer_special_ids(r->tok).sep, &r->mc, err)))
            return st;
    } else {
        r->mc = al_config_bert(al_tokenizer_vocab_size(r->tok), cfg->hidden_size, cfg->num_hidden_layers,
                               cfg->num_attention_heads, cfg->intermediate_size);
        r->mc.max_position_embeddings = cfg->max_position_embeddings;
    }
    st = al_model_new_random(&r->mc, cfg->seed, !is_clm(cfg), &r->model, err);
    if (st) return st;
    if (!strcmp(cfg->position_init, "sinusoidal")) sinusoidal_positions(r->model);
    r->res.n_params = al_model_n_params(r->model);
    al_train_options to = al_train_default_options();
    to.training = 1;
    to.hidden_dropout = cfg->hidden_dropout_prob;
    to.attention_dropout = cfg->attention_probs_dropout_prob;
    to.seed = cfg->seed;
    if ((st = al_shards_new(r->model, cfg->shards, cfg->batch_size, cfg->max_len, &to, &r->shards, err))) return st;
    r->decay = malloc(r->res.n_params);
    if (!r->decay) return oom(err);
    al_train_decay_mask(r->model, r->decay);
    al_adamw_config ac = al_adamw_default_config();
    ac.lr = cfg->lr;
    ac.weight_decay = cfg->weight_decay;
    ac.max_grad_norm = cfg->max_grad_norm;
    ac.warmup_steps = cfg->warmup_steps;
    ac.total_steps = cfg->steps;
    ac.schedule = AL_LR_LINEAR;
    if ((st = al_adamw_new(r->res.n_params, &ac, r->decay, &r->opt, err))) return st;
    if (r->n_pairs && (st = build_sop_head(r, &ac, err))) return st;
    r->config_text = al_pretrain_config_json(cfg);
    return r->config_text ? AL_OK : oom(err);
}

/* Loads the checkpoint in resume_dir (weights, AdamW state, step, the head) and checks that it belongs to
 * this config. */
static al_status resume(run *r, const char *resume_dir, al_error *err) {
    char *saved_config = NULL;
    int has_sop = 0;
    al_status st = al_checkpoint_load(resume_dir, r->model, r->opt, &r->start, r->sop_head, r->sop_opt, &has_sop,
                                      &saved_config, err);
    const int has_config = saved_config != NULL;
    if (!st && has_config) st = check_resume(r->cfg, saved_config, resume_dir, r->start, err);
    free(saved_config);
    if (st) return st;
    if (!has_config)
        logf_(r->hooks, "resume: %s records no train config (an older attnlab wrote it): only the model's shapes were "
              "checked", resume_dir);
    if (r->n_pairs && r->start > r->long_start && !has_sop)
        return al_err(err, AL_ERR_INVALID,
                      "resume: %s: the checkpoint at step %d is past the long phase's start (step %d) but has no "
                      "sentence-order head: sop_docs and sop_share can only be added before the long phase starts",
                      resume_dir, r->start, r->long_start + 1);
    logf_(r->hooks, "resume: %s at step %d%s", resume_dir, r->start, has_sop ? " (with the sentence-order head)" : "");
    return AL_OK;
}

/* The output directory and its logs, each keeping the rows up to the first step (a resumed run rewrites
 * the rest). */
static al_status open_logs(run *r, al_error *err) {
    const al_pretrain_config *cfg = r->cfg;
    if (al_make_dirs(cfg->out_dir)) return al_err(err, AL_ERR_IO, "%s: cannot create directory", cfg->out_dir);
    snprintf(r->path, sizeof r->path, "%s/losses.csv", cfg->out_dir);
    r->loss_log = open_log(r->path, "step,loss,lr,grad_norm,tokens,seconds", r->start);
    snprintf(r->path, sizeof r->path, "%s/eval.csv", cfg->out_dir);
    r->eval_log = is_clm(cfg) ? open_log(r->path, "step,loss,accuracy,perplexity,unigram_perplexity,bigram_perplexity,"
                                                  "positions", r->start)
                              : open_log(r->path, "step,loss,accuracy,perplexity,baseline_accuracy,unigram_perplexity,"
                                                  "positions,prev_token_head,prev_token_score,next_token_head,"
                                                  "next_token_score,cls_sep_head,cls_sep_score", r->start);
    if (r->n_pairs) {
        snprintf(r->path, sizeof r->path, "%s/sop.csv", cfg->out_dir);
        r->sop_log = open_log(r->path, "step,mlm_loss,sop_loss,sop_accuracy", r->start);
    }
    if (!r->loss_log || !r->eval_log || (r->n_pairs && !r->sop_log))
        return al_err(err, AL_ERR_IO, "%s: cannot write the logs", cfg->out_dir);
    return AL_OK;
}

/* The masking and the buffers the steps pick their sequences and runs with. */
static al_status prepare_batches(run *r, al_error *err) {
    const al_pretrain_config *cfg = r->cfg;
    r->mk = al_mlm_default_masking(r->tok);
    r->sp = al_tokenizer_special_ids(r->tok);
    r->mk.mask_prob = cfg->mask_prob;
    const int n_seqs = r->train.n_seqs > r->train_short.n_seqs ? r->train.n_seqs : r->train_short.n_seqs;
    r->order = malloc(sizeof *r->order * (size_t)n_seqs);
    r->idx = malloc(sizeof *r->idx * (size_t)cfg->batch_size);
    r->copies = malloc(sizeof *r->copies * (size_t)cfg->batch_size);
    if (r->n_pairs) {
        r->run_order = malloc(sizeof *r->run_order * (size_t)r->docs.n_runs);
        r->run_idx = malloc(sizeof *r->run_idx * (size_t)r->n_pairs);
    }
    if (!r->order || !r->idx || !r->copies || (r->n_pairs && (!r->run_order || !r->run_idx))) return oom(err);
    r->run_epoch = -1;
    r->order_epoch = -1;
    r->order_phase = -1;
    return AL_OK;
}

/* The step's n_seq packed sequences into idx: the phase's corpus in its epochs' orders. */
static void pick_sequences(run *r, const al_mlm_corpus *data, int phase, int step, int n_seq) {
    const al_pretrain_config *cfg = r->cfg;
    const int64_t phase_step = phase && cfg->short_len ? step - cfg->short_steps : step;
    const uint64_t order_seed = phase ? cfg->seed : al_mlm_derive_seed(cfg->seed, AL_SEED_SHORT_ORDER, 0);
    for (int b = 0; b < n_seq; b++) {
        int64_t i = phase_step * n_seq + b;
        int64_t epoch = i / data->n_seqs;
        if (epoch != r->order_epoch) {
            al_mlm_epoch_order(data->n_seqs, order_seed, epoch, r->order);
            r->order_epoch = epoch;
        }
        r->idx[b] = r->order[i % data->n_seqs];
    }
}

/* The step's sentence-order runs into run_idx: their own epochs, their own order. */
static void pick_runs(run *r, int step) {
    for (int b = 0; b < r->n_pairs; b++) {
        int64_t i = (int64_t)(step - r->long_start) * r->n_pairs + b;
        int64_t epoch = i / r->docs.n_runs;
        if (epoch != r->run_epoch) {
            al_mlm_epoch_order(r->docs.n_runs, al_mlm_derive_seed(r->cfg->seed, AL_SEED_SOP_RUN_ORDER, 0), epoch,
                               r->run_order);
            r->run_epoch = epoch;
        }
        r->run_idx[b] = r->run_order[i % r->docs.n_runs];
    }
}

/* One optimisation step: the batch of (seed, step), forward and backward on the shards, one clipping and
 * one AdamW update (encoder, and the sentence-order head when the step has pairs). */
static al_status train_step(run *r, int step, step_out *out, al_error *err) {
    const al_pretrain_config *cfg = r->cfg;
    const int B = cfg->batch_size;
    /* phase 0: the short sequences of the two-phase recipe; phase 1: max_len (each its own epochs) */
    const int phase = step < cfg->short_steps && cfg->short_len ? 0 : 1;
    const al_mlm_corpus *data = phase ? &r->train : &r->train_short;
    if (phase != r->order_phase) {
        if (cfg->short_len)
            logf_(r->hooks, "step %d: sequences of <= %d tokens", step + 1, phase ? cfg->max_len : cfg->short_len);
        r->order_phase = phase;
        r->order_epoch = -1;
    }
    /* sentence order in the long phase: the head starts at the phase's first step */
    const int sop_now = r->n_pairs && phase == 1;
    if (sop_now && step == r->long_start) {
        sop_head_init(r->sop_head, cfg->hidden_size, cfg->seed);
        logf_(r->hooks, "step %d: sentence order on: %d pairs and %d packed sequences per batch", step + 1, r->n_pairs,
              B - r->n_pairs);
    }
    const int n_seq = sop_now ? B - r->n_pairs : B; /* packed MLM sequences of this step */
    pick_sequences(r, data, phase, step, n_seq);
    al_rng mrng;
    al_rng_seed(&mrng, al_mlm_derive_seed(cfg->seed, AL_SEED_MLM_MASKING, (uint64_t)step));
    const uint64_t dropout_seed = al_mlm_derive_seed(cfg->seed, AL_SEED_STEP_DROPOUT, (uint64_t)step);
    al_shard_step ss;
    double gnorm = 0, lr = 0;
    al_status st;
    memset(out, 0, sizeof *out);
    out->sop_now = sop_now;
    if (is_clm(cfg)) {
        const int repeat = step >= first_repeat(cfg); /* docs/decoder_pretraining.md, "Repeated spans" */
        if (repeat)
            al_clm_plan_copies(data, r->idx, B, cfg->repeat_share,
                               al_mlm_derive_seed(cfg->seed, AL_SEED_CLM_REPEAT, (uint64_t)step), r->copies);
        if ((st = al_shards_step_clm(r->shards, data, r->idx, B, r->mc.pad_token_id, repeat ? r->copies : NULL,
                                     dropout_seed, &ss, err)))
            return st;
        al_adamw_step(r->opt, r->model->storage, ss.grads, &gnorm, &lr);
    } else if (!sop_now) {
        if ((st = al_shards_step(r->shards, data, r->idx, B, &r->mk, &mrng, dropout_seed, &ss, err))) return st;
        al_adamw_step(r->opt, r->model->storage, ss.grads, &gnorm, &lr);
    } else {
        pick_runs(r, step);
        al_rng prng;
        al_rng_seed(&prng, al_mlm_derive_seed(cfg->seed, AL_SEED_SOP_PAIRS, (uint64_t)step));
        al_sop_step *sop = &out->sop;
        if ((st = al_shards_step_sop(r->shards, data, r->idx, n_seq, &r->docs, r->run_idx, r->n_pairs, &prng, &r->mk,
                                     &mrng, dropout_seed, r->sop_head, r->sop_slot, sop, err)))
            return st;
        ss = sop->mlm;
        /* one clipping over encoder and head; the head follows the encoder's schedule */
        float *groups[2] = {ss.grads, sop->head_grads};
        size_t sizes[2] = {r->res.n_params, al_sop_head_size(cfg->hidden_size)};
        gnorm = al_clip_grad_norm(groups, sizes, 2, cfg->max_grad_norm);
        lr = al_adamw_lr(r->opt);
        al_adamw_update(r->opt, r->model->storage, ss.grads, lr);
        al_adamw_update(r->sop_opt, r->sop_head, sop->head_grads, lr);
        fprintf(r->sop_log, "%d,%.9g,%.9g,%.6g\n", step + 1, (double)sop->mlm_loss, (double)sop->sop_loss,
                (double)sop->n_correct / r->n_pairs);
    }
    out->loss = ss.loss;
    out->n_tokens = ss.n_tokens;
    out->grad_norm = gnorm;
    out->lr = lr;
    return AL_OK;
}

/* The progress line every log_interval steps (and at the last), with the logs flushed. */
static void log_progress(run *r, int done_steps, const step_out *s) {
    const al_pretrain_config *cfg = r->cfg;
    double now = al_now_seconds(), tps = r->tokens_since_log / (now - r->last_log > 1e-9 ? now - r->last_log : 1e-9);
    double per_step = r->train_time / (double)(done_steps - r->start);
    double eta = per_step * (double)(cfg->steps - done_steps);
    logf_(r->hooks, "step %d/%d loss %.4f lr %.3g grad_norm %.3f tok/s %.0f eta %dm%02ds", done_steps, cfg->steps,
          (double)s->loss, s->lr, s->grad_norm, tps, (int)(eta / 60), (int)eta % 60);
    if (s->sop_now)
        logf_(r->hooks, "  mlm loss %.4f, sentence order loss %.4f, %d of %d pairs right", (double)s->sop.mlm_loss,
              (double)s->sop.sop_loss, s->sop.n_correct, r->n_pairs);
    fflush(r->loss_log);
    if (r->sop_log) fflush(r->sop_log);
    r->last_log = now;
    r->tokens_since_log = 0;
}

/* The causal objective's held-out evaluation: a row of eval.csv and a progress line; the result's figures. */
static al_status evaluate_clm(run *r, int done_steps, al_error *err) {
    al_clm_eval ce;
    al_status st = al_clm_evaluate(r->model, &r->held, r->cfg->eval_sequences, &r->base, NULL, &ce, err);
    if (st) return st;
    fprintf(r->eval_log, "%d,%.6f,%.6f,%.4f,%.4f,%.4f,%lld\n", done_steps, ce.loss, ce.accuracy, ce.perplexity,
            ce.unigram_perplexity, ce.bigram_perplexity, (long long)ce.positions);
    fflush(r->eval_log);
    logf_(r->hooks, "eval step %d: next-token perplexity %.2f (unigram %.2f, bigram %.2f), accuracy %.4f, %lld positions",
          done_steps, ce.perplexity, ce.unigram_perplexity, ce.bigram_perplexity, ce.accuracy, (long long)ce.positions);
    r->res.eval_loss = ce.loss;
    r->res.eval_accuracy = ce.accuracy;
    r->res.eval_perplexity = ce.perplexity;
    r->res.unigram_perplexity = ce.unigram_perplexity;
    r->res.bigram_perplexity = ce.bigram_perplexity;
    r->res.eval_positions = ce.positions;
    return AL_OK;
}

/* A held-out evaluation during the run: a row of eval.csv and two progress lines. */
static al_status evaluate_now(run *r, int done_steps, al_error *err) {
    if (is_clm(r->cfg)) return evaluate_clm(r, done_steps, err);
    eval_stats es;
    al_status st = evaluate(r->model, &r->held, r->cfg->eval_sequences, &r->mk, r->cfg->eval_seed, r->unigram,
                            r->unigram_total, r->most_frequent, &r->sp, &es, err);
    if (st) return st;
    write_eval_row(r->eval_log, done_steps, &es, r->mc.n_heads);
    fflush(r->eval_log);
    logf_(r->hooks, "eval step %d: masked accuracy %.4f (most-frequent %.4f), perplexity %.2f (unigram %.2f)",
          done_steps, es.accuracy, es.baseline_accuracy, es.perplexity, es.unigram_perplexity);
    log_patterns(r->hooks, &es, r->mc.n_heads);
    return AL_OK;
}

/* <out_dir>/checkpoint after done_steps, the sentence-order head with it when it exists (from the long
 * phase's first step on). */
static al_status save_checkpoint(run *r, int done_steps, int with_head, al_error *err) {
    const al_pretrain_config *cfg = r->cfg;
    char step_text[32];
    snprintf(step_text, sizeof step_text, "%d", done_steps);
    const char *meta[] = {"step", step_text, "seed_rule", "batch, masking and dropout derived from (seed, step)",
                          "train_config", r->config_text};
    snprintf(r->path, sizeof r->path, "%s/checkpoint", cfg->out_dir);
    al_status st = al_checkpoint_save(r->path, r->model, cfg->hidden_dropout_prob, cfg->attention_probs_dropout_prob,
                                      r->opt, done_steps, meta, 3, with_head ? r->sop_head : NULL,
                                      with_head ? r->sop_opt : NULL, err);
    if (st) return st;
    fflush(r->loss_log);
    if (r->sop_log) fflush(r->sop_log);
    return AL_OK;
}

/* The steps from r->start to cfg->steps, each logged, with evaluations and checkpoints at their intervals;
 * stops early (with a checkpoint) at hooks' stop_after, cancel or max_seconds. *steps_done: the steps run
 * in all; *stopped: 1 when stopped early. */
static al_status train_loop(run *r, int *steps_done, int *stopped, al_error *err) {
    const al_pretrain_config *cfg = r->cfg;
    const al_pretrain_hooks *hooks = r->hooks;
    r->last_log = al_now_seconds();
    int step = r->start;
    *stopped = 0;
    for (; step < cfg->steps; step++) {
        double ts = al_now_seconds();
        step_out s;
        al_status st = train_step(r, step, &s, err);
        if (st) return st;
        double te = al_now_seconds();
        r->train_time += te - ts;
        r->res.tokens_seen += s.n_tokens;
        r->tokens_since_log += s.n_tokens;
        if (hooks->losses) hooks->losses[step] = s.loss;
        fprintf(r->loss_log, "%d,%.9g,%.6g,%.6g,%d,%.3f\n", step + 1, (double)s.loss, s.lr, s.grad_norm, s.n_tokens,
                r->train_time);
        if (!isfinite(s.loss)) return al_err(err, AL_ERR_INVALID, "pretrain: loss is not finite at step %d", step + 1);
        int done_steps = step + 1;
        if (cfg->log_interval > 0 && (done_steps % cfg->log_interval == 0 || done_steps == cfg->steps))
            log_progress(r, done_steps, &s);
        int interrupted = (hooks->stop_after > 0 && done_steps >= hooks->stop_after) ||
                          (hooks->cancel && *hooks->cancel) || (hooks->max_seconds > 0 && r->train_time >= hooks->max_seconds);
        if (r->held.n_seqs && cfg->eval_interval > 0 && done_steps % cfg->eval_interval == 0 && done_steps < cfg->steps &&
            (st = evaluate_now(r, done_steps, err)))
            return st;
        if (((cfg->checkpoint_interval > 0 && done_steps % cfg->checkpoint_interval == 0) || interrupted) &&
            (st = save_checkpoint(r, done_steps, s.sop_now, err)))
            return st;
        if (interrupted) {
            step++;
            *stopped = 1;
            break;
        }
    }
    *steps_done = step;
    return AL_OK;
}

/* The final held-out evaluation into the result, eval.csv and the log. */
static al_status evaluate_final(run *r, int step, al_error *err) {
    if (is_clm(r->cfg)) return evaluate_clm(r, step, err);
    eval_stats es;
    al_status st = evaluate(r->model, &r->held, r->cfg->eval_sequences, &r->mk, r->cfg->eval_seed, r->unigram,
                            r->unigram_total, r->most_frequent, &r->sp, &es, err);
    if (st) return st;
    write_eval_row(r->eval_log, step, &es, r->mc.n_heads);
    al_pretrain_result *res = &r->res;
    res->eval_loss = es.loss;
    res->eval_accuracy = es.accuracy;
    res->eval_perplexity = es.perplexity;
    res->baseline_accuracy = es.baseline_accuracy;
    res->unigram_perplexity = es.unigram_perplexity;
    res->eval_positions = es.positions;
    logf_(r->hooks, "eval final (step %d): masked accuracy %.4f (most-frequent %.4f), perplexity %.2f (unigram %.2f), %lld positions",
          step, es.accuracy, es.baseline_accuracy, es.perplexity, es.unigram_perplexity, (long long)es.positions);
    log_patterns(r->hooks, &es, r->mc.n_heads);
    for (int k = 0; k < 3; k++) res->pattern[k] = es.pattern[k], res->pattern_head[k] = es.pattern_head[k];
    return AL_OK;
}

/* <out_dir>/train_config.json: the config, reading the vocabulary copied beside it, so the directory alone
 * repeats the run. */
static void write_train_config(run *r) {
    const al_pretrain_config *cfg = r->cfg;
    al_pretrain_config saved = *cfg;
    size_t dir_len = strlen(cfg->out_dir);
    if (dir_len + sizeof "/vocab.txt" <= sizeof saved.vocab) {
        memcpy(saved.vocab, cfg->out_dir, dir_len);
        memcpy(saved.vocab + dir_len, "/vocab.txt", sizeof "/vocab.txt");
    }
    char *cj = al_pretrain_config_json(&saved);
    snprintf(r->path, sizeof r->path, "%s/train_config.json", cfg->out_dir);
    FILE *f = cj ? fopen(r->path, "wb") : NULL;
    if (f) {
        fprintf(f, "%s\n", cj);
        fclose(f);
    }
    free(cj);
}

/* <out_dir>/train_results.json: the result's figures (NAN ones as 0). */
static void write_train_results(run *r) {
    const al_pretrain_result *res = &r->res;
    const int H_ = r->mc.n_heads;
    char head[3][32]; /* "L1H2", or "none" when the evaluation did not run (no held-out text, or objective clm) */
    for (int k = 0; k < 3; k++) {
        if (res->pattern_head[k] < 0) snprintf(head[k], sizeof head[k], "none");
        else snprintf(head[k], sizeof head[k], "L%dH%d", res->pattern_head[k] / H_, res->pattern_head[k] % H_);
    }
    snprintf(r->path, sizeof r->path, "%s/train_results.json", r->cfg->out_dir);
    FILE *f = fopen(r->path, "wb");
    if (!f) return;
    fprintf(f,
            "{\n  \"steps\": %d,\n  \"train_seconds\": %.1f,\n  \"tokens_per_second\": %.0f,\n  \"tokens_seen\": %lld,\n"
            "  \"parameters\": %zu,\n  \"train_sequences\": %lld,\n  \"train_tokens\": %lld,\n"
            "  \"heldout_unk_rate\": %.6f,\n  \"eval_positions\": %lld,\n  \"eval_loss\": %.6f,\n"
            "  \"eval_masked_accuracy\": %.6f,\n  \"eval_perplexity\": %.4f,\n"
            "  \"baseline_most_frequent_accuracy\": %.6f,\n  \"baseline_unigram_perplexity\": %.4f,\n"
            "  \"objective\": \"%s\",\n  \"baseline_bigram_perplexity\": %.4f,\n"
            "  \"shards\": %d,\n  \"previous_token_head\": \"%s\", \"previous_token_attention\": %.4f,\n"
            "  \"next_token_head\": \"%s\", \"next_token_attention\": %.4f,\n"
            "  \"cls_sep_head\": \"%s\", \"cls_sep_attention\": %.4f\n}\n",
            res->steps_done, res->train_seconds, res->tokens_per_second, (long long)res->tokens_seen, res->n_params,
            (long long)res->train_sequences, (long long)res->train_tokens, isnan(res->heldout_unk_rate) ? 0 : res->heldout_unk_rate,
            (long long)res->eval_positions, isnan(res->eval_loss) ? 0 : res->eval_loss,
            isnan(res->eval_accuracy) ? 0 : res->eval_accuracy, isnan(res->eval_perplexity) ? 0 : res->eval_perplexity,
            isnan(res->baseline_accuracy) ? 0 : res->baseline_accuracy,
            isnan(res->unigram_perplexity) ? 0 : res->unigram_perplexity, r->cfg->objective,
            isnan(res->bigram_perplexity) ? 0 : res->bigram_perplexity, r->cfg->shards,
            head[0], res->pattern[0], head[1], res->pattern[1], head[2], res->pattern[2]);
    fclose(f);
}

/* The end of a run that reached its last step or its time limit: the final evaluation, the Hugging Face
 * directory (with the sentence-order head once it exists), train_config.json and train_results.json. */
static al_status finish(run *r, int step, al_error *err) {
    const al_pretrain_config *cfg = r->cfg;
    al_status st;
    if (r->held.n_seqs && (st = evaluate_final(r, step, err))) return st;
    if ((st = al_save_hf_model(cfg->out_dir, r->model, cfg->vocab, cfg->hidden_dropout_prob,
                               cfg->attention_probs_dropout_prob, r->n_pairs && step > r->long_start ? r->sop_head : NULL,
                               err)))
        return st;
    write_train_config(r);
    write_train_results(r);
    logf_(r->hooks, "saved %s (%d steps, %.1f s training, %.0f tokens/s)", cfg->out_dir, r->res.steps_done,
          r->res.train_seconds, r->res.tokens_per_second);
    return AL_OK;
}

static void run_free(run *r) {
    if (r->loss_log) fclose(r->loss_log);
    if (r->eval_log) fclose(r->eval_log);
    if (r->sop_log) fclose(r->sop_log);
    free(r->run_order);
    free(r->run_idx);
    free(r->sop_head);
    free(r->config_text);
    al_adamw_free(r->sop_opt);
    al_sop_docs_free(&r->docs);
    free(r->order);
    free(r->idx);
    free(r->copies);
    free(r->unigram);
    al_clm_baselines_free(&r->base);
    free(r->decay);
    al_adamw_free(r->opt);
    al_shards_free(r->shards);
    al_model_free(r->model);
    al_mlm_corpus_free(&r->train);
    al_mlm_corpus_free(&r->train_short);
    al_mlm_corpus_free(&r->held);
    al_tokenizer_free(r->tok);
}

al_status al_pretrain_run(const al_pretrain_config *cfg, const char *resume_dir, const al_pretrain_hooks *hooks,
                          al_pretrain_result *result, al_error *err) {
    al_pretrain_hooks no_hooks;
    memset(&no_hooks, 0, sizeof no_hooks);
    run r;
    memset(&r, 0, sizeof r);
    r.cfg = cfg;
    r.hooks = hooks ? hooks : &no_hooks;
    r.res.eval_loss = r.res.eval_accuracy = r.res.eval_perplexity = NAN;
    r.res.baseline_accuracy = r.res.unigram_perplexity = r.res.heldout_unk_rate = r.res.bigram_perplexity = NAN;
    r.res.pattern_head[0] = r.res.pattern_head[1] = r.res.pattern_head[2] = -1;
    r.sop_slot = -1;
    al_status st = check_config(cfg, err);
    if (st) return st;
    r.n_pairs = sop_pairs(cfg);
    r.long_start = long_phase_start(cfg);

    if ((st = load_data(&r, err)) || (st = build_model(&r, err)) || (resume_dir && (st = resume(&r, resume_dir, err))))
        goto done;
    logf_(r.hooks, "model: %s %d layers x %d heads, hidden %d, intermediate %d, vocab %d: %zu parameters",
          is_clm(cfg) ? "GPT-2" : "BERT", r.mc.n_layers, r.mc.n_heads, r.mc.hidden_size, r.mc.intermediate_size, al_tokenizer_vocab_size(r.tok),
          r.res.n_params);
    if ((st = open_logs(&r, err)) || (st = prepare_batches(&r, err))) goto done;

    int step = 0, stopped = 0;
    if ((st = train_loop(&r, &step, &stopped, err))) goto done;
    r.res.steps_done = step;
    r.res.train_seconds = r.train_time;
    r.res.tokens_per_second = r.train_time > 0 ? (double)r.res.tokens_seen / r.train_time : 0;
    /* interrupted on purpose (a step to stop after, or a cancel such as the CLI's SIGTERM): the checkpoint
     * is written, the run resumes later; only a time limit goes on to the final files */
    if (stopped && (r.hooks->stop_after > 0 || (r.hooks->cancel && *r.hooks->cancel)) && step < cfg->steps) goto done;
    st = finish(&r, step, err);
done:
    run_free(&r);
    if (result) *result = r.res;
    return st;
}
