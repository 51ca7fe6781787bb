/* test_decoder_train.c: the decoders' training forward and backward (src/train/train_decoder.c, train_lm.c;
 * docs/decoder_pretraining.md):
 *   - against PyTorch's float64 autograd (tests/golden/make_decoder_train_goldens.py) on the random checkpoints
 *     gpt2, llama_gqa, llama_untied, qwen2, qwen2_window, pythia and pythia_sequential of tests/golden/decoders and their golden
 *     right-padded batch: the next-token loss within 1e-5 relative, every weight's gradient, by its Hugging Face
 *     name in the file's layout, within 1e-4 of its largest value, and the hidden states without dropout with
 *     al_forward's bits;
 * and on a random 2-layer GPT-2 with a right-padded batch:
 *   - without dropout every hidden state has al_forward's bits, and the next-token loss equals the cross-entropy
 *     of al_forward's lm_logits (1e-6 relative);
 *   - the gradients of a sample of weights from every tensor against central finite differences of the loss (in
 *     float64 over the float32 forward: steps 1e-2, tolerance 5e-4 + 1% relative), dropout on (the masks redrawn
 *     from the same seed for each evaluation);
 *   - the loss and every gradient the same bits on every kernel path (the 4-lane path and AVX2's 8 lanes);
 *   - a frozen model (weight_grads 0) with real rows: the real tokens' hidden states have the padded pass's bits;
 *   - the same on small random Llama (grouped keys and values, a head width other than D), Qwen2 (also with its
 *     sliding window) and GPT-NeoX (parallel and sequential) models;
 *   - on each checkpoint, one step in 3 shards gives the same bits on 1 and 3 threads, and their digest is pinned (the
 *     same bits in WebAssembly);
 *   - the HF directory written (GPT-2's Conv1D weights [in, out]) loads back as family gpt2 with the same bits, and
 *     so do export's float32 shards. */
#include <math.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "fnv_digest.h"
#include "golden_file.h"
#include "kernels/kernels.h"
#include "model/model_internal.h"
#include "model/weights.h"
#include "train/pretrain.h"
#include "train/shards.h"
#include "train/train.h"

#define V 40
#define B 2
#define L 9

static al_model *tiny(uint64_t seed) {
    al_config c;
    al_error err;
    al_model *m = NULL;
    if (al_gpt2_config(V, 16, 2, 2, 24, 16, 3, &c, &err) != AL_OK ||
        al_model_new_random(&c, seed, 0, &m, &err) != AL_OK) {
        fprintf(stderr, "tiny: %s\n", err.message);
        return NULL;
    }
    /* nonzero biases and gains, so their gradients and the layout of every tensor are exercised */
    for (size_t i = 0; i < m->n_floats; i++) m->storage[i] += 0.01f * (float)((i * 7919) % 13) - 0.06f;
    return m;
}

static const int32_t ids[B * L] = {5, 9, 12, 7, 30, 31, 2, 8, 11, 14, 6, 39, 21, 4, 17, 0, 0, 0};
static const int32_t mask[B * L] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0};

static double loss_of(al_train_ctx *ctx, const int32_t *labels, uint64_t seed) {
    al_error err;
    const al_batch batch = {B, L, ids, mask, NULL, NULL};
    float loss = 0.0f;
    al_train_seed(ctx, seed);
    if (al_train_forward(ctx, &batch, &err) != AL_OK || al_train_lm_loss(ctx, labels, &loss, NULL, &err) != AL_OK)
        fprintf(stderr, "loss_of: %s\n", err.message);
    return loss;
}

static void forward_matches(al_model *m, const int32_t *labels) {
    al_error err;
    const al_config *c = al_model_config(m);
    const size_t D = c->hidden_size, NL = c->n_layers;
    al_train_options o = al_train_default_options();
    o.hidden_dropout = o.attention_dropout = 0.0f;
    al_train_ctx *ctx = NULL;
    CHECK(al_train_ctx_new(m, B, L, &o, &ctx, &err) == AL_OK);
    if (!ctx) return;
    const double loss = loss_of(ctx, labels, 1);
    float *hidden = calloc((NL + 1) * B * L * D, sizeof(float)), *logits = calloc((size_t)B * L * V, sizeof(float));
    al_forward_outputs out = {0};
    out.hidden_states = hidden, out.lm_logits = logits;
    const al_batch batch = {B, L, ids, mask, NULL, NULL};
    CHECK(al_forward(m, &batch, NULL, &out, &err) == AL_OK);
    int same = 1;
    for (size_t l = 0; l <= NL; l++)
        for (size_t t = 0; t < (size_t)B * L; t++)
            if (mask[t] && memcmp(al_train_hidden(ctx, (int)l) + t * D, hidden + (l * B * L + t) * D,
                                  sizeof(float) * D))
                same = 0;
    CHECK_MSG(same, "the training forward's hidden states differ from al_forward's");
    double sum = 0.0;
    int n = 0;
    for (int t = 0; t < B * L; t++) {
        if (labels[t] == AL_IGNORE_INDEX) continue;
        const float *z = logits + (size_t)t * V;
        double top = z[0], s = 0.0;
        for (int v = 1; v < V; v++) top = z[v] > top ? z[v] : top;
        for (int v = 0; v < V; v++) s += exp((double)z[v] - top);
        sum += top + log(s) - z[labels[t]];
        n++;
    }
    CHECK(n == 8 + 5);
    CHECK_MSG(fabs(loss - sum / n) <= 1e-6 * fabs(sum / n), "loss %.9g, al_forward's cross-entropy %.9g", loss, sum / n);
    free(hidden), free(logits);
    al_train_ctx_free(ctx);
}

static void gradients_match(al_model *m, const int32_t *labels) {
    al_error err;
    al_train_options o = al_train_default_options(); /* dropout 0.1 on both */
    al_train_ctx *ctx = NULL;
    CHECK(al_train_ctx_new(m, B, L, &o, &ctx, &err) == AL_OK);
    if (!ctx) return;
    al_train_zero_grads(ctx);
    loss_of(ctx, labels, 7);
    CHECK(al_train_backward(ctx, NULL, &err) == AL_OK);
    const float *g = al_train_grads(ctx);
    float *analytic = malloc(sizeof(float) * m->n_floats);
    memcpy(analytic, g, sizeof(float) * m->n_floats);
    int bad = 0, tried = 0;
    for (size_t i = 0; i < m->n_floats; i += 37) {
        const float keep = m->storage[i];
        const float h = 1e-2f;
        m->storage[i] = keep + h;
        const double up = loss_of(ctx, labels, 7);
        m->storage[i] = keep - h;
        const double down = loss_of(ctx, labels, 7);
        m->storage[i] = keep;
        const double fd = (up - down) / (2.0 * h);
        tried++;
        if (fabs(fd - analytic[i]) > 5e-4 + 0.01 * fabs(fd)) {
            if (bad++ < 5) fprintf(stderr, "weight %zu: finite difference %.6g, backward %.6g\n", i, fd, analytic[i]);
        }
    }
    CHECK_MSG(bad == 0, "%d of %d weights' gradients differ from finite differences", bad, tried);
    free(analytic);
    al_train_ctx_free(ctx);
}

/* The loss and gradients of one step (dropout on) as a digest. */
static uint64_t step_digest(al_model *m, const int32_t *labels) {
    al_error err;
    al_train_options o = al_train_default_options();
    al_train_ctx *ctx = NULL;
    if (al_train_ctx_new(m, B, L, &o, &ctx, &err) != AL_OK) return 0;
    al_train_zero_grads(ctx);
    float loss = (float)loss_of(ctx, labels, 5);
    al_train_backward(ctx, NULL, &err);
    uint64_t d = fnv_digest(FNV_DIGEST_START, &loss, 1);
    d = fnv_digest(d, al_train_grads(ctx), m->n_floats);
    al_train_ctx_free(ctx);
    return d;
}

static void same_bits_on_every_path(al_model *m, const int32_t *labels) {
    const uint64_t want = step_digest(m, labels);
    const char *paths[8];
    const int n_paths = al_kernels_paths(paths, 8);
    const char *was = al_kernels_path();
    for (int i = 0; i < n_paths; i++) {
        CHECK(al_kernels_set_path(paths[i]) == 0);
        CHECK_MSG(step_digest(m, labels) == want, "kernel path %s", paths[i]);
    }
    al_kernels_set_path(was);
}

static void real_rows_frozen(al_model *m) {
    al_error err;
    const al_config *c = al_model_config(m);
    const size_t D = c->hidden_size;
    const al_batch batch = {B, L, ids, mask, NULL, NULL};
    al_train_options o = al_train_default_options();
    o.hidden_dropout = o.attention_dropout = 0.0f;
    o.weight_grads = 0;
    o.mlm_head = 0;
    al_train_ctx *full = NULL, *packed = NULL;
    CHECK(al_train_ctx_new(m, B, L, &o, &full, &err) == AL_OK);
    o.real_rows = 1;
    CHECK(al_train_ctx_new(m, B, L, &o, &packed, &err) == AL_OK);
    if (full && packed) {
        CHECK(al_train_forward(full, &batch, &err) == AL_OK);
        CHECK(al_train_forward(packed, &batch, &err) == AL_OK);
        int differ = 0;
        for (int l = 0; l <= c->n_layers; l++)
            for (size_t t = 0; t < (size_t)B * L; t++)
                if (mask[t])
                    differ += memcmp(al_train_hidden(full, l) + t * D, al_train_hidden(packed, l) + t * D,
                                     sizeof(float) * D) != 0;
        CHECK_MSG(differ == 0, "%d rows differ with real rows", differ);
    }
    al_train_ctx_free(full);
    al_train_ctx_free(packed);
}

/* A random model of a config.json's text, perturbed as tiny()'s. */
static al_model *tiny_of(const char *cfg, uint64_t seed) {
    al_config c;
    al_error err;
    al_model *m = NULL;
    if (al_config_parse(cfg, strlen(cfg), "config.json", &c, &err) != AL_OK ||
        al_model_new_random(&c, seed, 0, &m, &err) != AL_OK) {
        fprintf(stderr, "tiny_of: %s\n", err.message);
        return NULL;
    }
    for (size_t i = 0; i < m->n_floats; i++) m->storage[i] += 0.01f * (float)((i * 7919) % 13) - 0.06f;
    return m;
}

/* The rotary decoders, small: Llama with grouped keys and values (4 query heads on 2) and a head width of 4 * 6 = 24
 * other than hidden_size 16, untied; Qwen2 with its q/k/v biases, one key/value head, tied, and with its sliding
 * window of 4 in layer 1; GPT-NeoX with the parallel residual and half of each head turning, and its sequential
 * variant. */
static const char *const tiny_configs[] = {
    "{\"model_type\": \"llama\", \"vocab_size\": 40, \"hidden_size\": 16, \"num_hidden_layers\": 2, "
    "\"num_attention_heads\": 4, \"num_key_value_heads\": 2, \"head_dim\": 6, \"intermediate_size\": 24, "
    "\"max_position_embeddings\": 16, \"tie_word_embeddings\": false}",
    "{\"model_type\": \"qwen2\", \"vocab_size\": 40, \"hidden_size\": 16, \"num_hidden_layers\": 2, "
    "\"num_attention_heads\": 2, \"num_key_value_heads\": 1, \"intermediate_size\": 24, "
    "\"max_position_embeddings\": 16, \"tie_word_embeddings\": true}",
    "{\"model_type\": \"qwen2\", \"vocab_size\": 40, \"hidden_size\": 16, \"num_hidden_layers\": 2, "
    "\"num_attention_heads\": 2, \"num_key_value_heads\": 1, \"intermediate_size\": 24, "
    "\"max_position_embeddings\": 16, \"use_sliding_window\": true, \"sliding_window\": 4, "
    "\"max_window_layers\": 1}",
    "{\"model_type\": \"gpt_neox\", \"vocab_size\": 40, \"hidden_size\": 16, \"num_hidden_layers\": 2, "
    "\"num_attention_heads\": 2, \"intermediate_size\": 24, \"max_position_embeddings\": 16, "
    "\"rotary_pct\": 0.5, \"use_parallel_residual\": true}",
    "{\"model_type\": \"gpt_neox\", \"vocab_size\": 40, \"hidden_size\": 16, \"num_hidden_layers\": 2, "
    "\"num_attention_heads\": 2, \"intermediate_size\": 24, \"max_position_embeddings\": 16, "
    "\"rotary_pct\": 0.5, \"use_parallel_residual\": false}",
};

/* A vocab.txt of V tokens: BERT's five bracketed tokens first, then words and continuations. */
static const char *write_vocab(void) {
    static const char *path = "build/test_decoder_train_vocab.txt";
    FILE *f = fopen(path, "wb");
    if (!f) return NULL;
    fputs("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nthe\ncat\n##s\nsat\n.\n", f);
    for (int i = 10; i < V; i++) fprintf(f, "w%d\n", i);
    fclose(f);
    return path;
}

static void round_trip(al_model *m) {
    al_error err;
    const char *dir = "build/test_decoder_train_hf";
    CHECK(al_save_hf_model(dir, m, write_vocab(), 0.1f, 0.0f, NULL, &err) == AL_OK);
    /* the tokenizer is tokenizer.json without a post-processor: a text gets no [CLS] or [SEP] around it */
    FILE *vocab_txt = fopen("build/test_decoder_train_hf/vocab.txt", "rb");
    CHECK(vocab_txt == NULL);
    if (vocab_txt) fclose(vocab_txt);
    al_model *back = NULL;
    CHECK_MSG(al_model_load_dir(dir, &back, &err) == AL_OK, "%s", err.message);
    if (!back) return;
    CHECK(al_model_is_causal(back));
    const al_tokenizer *tok = al_model_tokenizer(back);
    al_encoding enc = {0};
    al_encode_options opt = al_encode_default_options();
    CHECK(tok && al_tokenizer_encode(tok, "The cats sat.", NULL, &opt, &enc, &err) == AL_OK);
    const int32_t want[] = {5, 6, 7, 8, 9};
    CHECK(enc.n_tokens == 5 && memcmp(enc.ids, want, sizeof want) == 0);
    al_encoding_free(&enc);
    /* its end of text is [SEP], the end of a line in training: generation stops there */
    CHECK_MSG(tok && al_tokenizer_eos_id(tok) == al_tokenizer_special_ids(tok).sep && al_tokenizer_eos_id(tok) >= 0,
              "eos %d, [SEP] %d", al_tokenizer_eos_id(tok), al_tokenizer_special_ids(tok).sep);
    CHECK(back->n_floats == m->n_floats);
    CHECK(back->n_floats == m->n_floats && memcmp(back->storage, m->storage, sizeof(float) * m->n_floats) == 0);
    al_model_free(back);
    back = NULL;
    /* `attnlab export`'s writer, in float32 shards of at most 8 KB with an index, beside the config */
    const char *shards = "build/test_decoder_train_export";
    CHECK(al_export_weights(shards, m, "F32", 8192, &err) == AL_OK);
    char *cfg = al_gpt2_config_json(al_model_config(m), 0.1f, 0.0f);
    FILE *f = fopen("build/test_decoder_train_export/config.json", "wb");
    if (f && cfg) fputs(cfg, f);
    if (f) fclose(f);
    free(cfg);
    CHECK_MSG(al_model_load_dir(shards, &back, &err) == AL_OK, "%s", err.message);
    if (!back) return;
    CHECK(back->n_floats == m->n_floats && memcmp(back->storage, m->storage, sizeof(float) * m->n_floats) == 0);
    al_model_free(back);
}

/* One shard's next-token step (shards.h): forward, loss, backward over its examples. */
typedef struct lm_batch {
    const int32_t *ids, *mask, *labels;
    int len;
} lm_batch;

static al_status lm_shard(void *user, const al_shard_job *job, float *loss, double *weight, al_error *err) {
    const lm_batch *d = user;
    const size_t at = (size_t)job->b0 * d->len;
    const al_batch batch = {job->b1 - job->b0, d->len, d->ids + at, d->mask + at, NULL, NULL};
    int n = 0;
    al_status st = al_train_forward(job->ctx, &batch, err);
    if (!st) st = al_train_lm_loss(job->ctx, d->labels + at, loss, &n, err);
    if (!st) st = al_train_backward(job->ctx, NULL, err);
    *weight = n;
    return st;
}

/* The loss and gradients of one step of the batch in 3 shards (dropout on), run on n_threads threads, as a
 * digest: the same bits for any thread count (shards.h). */
static uint64_t sharded_digest(al_model *m, const lm_batch *d, int B_, int n_threads) {
    al_error err;
    al_threadpool *pool = NULL;
    if (n_threads > 1 && al_threadpool_new(n_threads, &pool, &err) != AL_OK) return 0;
    al_train_options o = al_train_default_options();
    o.pool = pool;
    al_shard_set *set = NULL;
    al_shards_result res;
    uint64_t digest = 0;
    if (al_shards_new(m, 3, B_, d->len, &o, &set, &err) == AL_OK &&
        al_shards_run(set, B_, 9, lm_shard, (void *)d, &res, &err) == AL_OK && res.grads) {
        digest = fnv_digest(FNV_DIGEST_START, &res.loss, 1);
        digest = fnv_digest(digest, res.grads, m->n_floats);
    } else {
        fprintf(stderr, "sharded_digest: %s\n", err.message);
    }
    al_shards_free(set);
    al_threadpool_free(pool);
    return digest;
}

/* The sharded steps' digests of the checkpoints, pinned: the same bits natively and in WebAssembly. */
static uint64_t g_shard_digest = FNV_DIGEST_START;
#define PINNED_SHARD_DIGEST 0x7f1ab00b6a9a04bdull

/* The checkpoint tests/golden/decoders/<name> (its weights n_tensors tensors) against
 * tests/golden/decoder_train/<name>_grads.safetensors; without dropout its training hidden states have al_forward's
 * bits at the real tokens. */
static void pytorch_gradients(const char *ckpt, int n_tensors) {
    char dir[256], path[320];
    snprintf(dir, sizeof dir, "tests/golden/decoders/%s", ckpt);
    al_error err;
    al_model *m = NULL, *g = NULL;
    golden_file in, want;
    snprintf(path, sizeof path, "%s/golden.safetensors", dir);
    if (!golden_open(&in, path)) {
        CHECK(0);
        return;
    }
    snprintf(path, sizeof path, "tests/golden/decoder_train/%s_grads.safetensors", ckpt);
    if (!golden_open(&want, path)) {
        CHECK(0);
        golden_close(&in);
        return;
    }
    CHECK_MSG(al_model_load_dir(dir, &m, &err) == AL_OK, "%s", err.message);
    CHECK_MSG(al_model_load_dir(dir, &g, &err) == AL_OK, "%s", err.message); /* holds the gradients */
    int64_t shape[6] = {0};
    size_t n_ids = 0;
    float *ids_f = golden_f32(&in, "input_ids", &n_ids, shape);
    free(ids_f);
    int32_t *ids_g = golden_i32(&in, "input_ids"), *mask_g = golden_i32(&in, "attention_mask");
    float *loss_want = golden_f32(&want, "loss", NULL, NULL);
    const int Bg = (int)shape[0], Lg = (int)shape[1];
    al_train_options o = al_train_default_options();
    o.hidden_dropout = o.attention_dropout = 0.0f;
    al_train_ctx *ctx = NULL;
    if (m && g && ids_g && mask_g && loss_want && al_train_ctx_new(m, Bg, Lg, &o, &ctx, &err) == AL_OK) {
        int32_t *labels = malloc(sizeof(int32_t) * (size_t)Bg * Lg);
        al_clm_labels(ids_g, mask_g, Bg, Lg, labels);
        const al_batch batch = {Bg, Lg, ids_g, mask_g, NULL, NULL};
        float loss = 0.0f;
        int n = 0;
        al_train_zero_grads(ctx);
        CHECK(al_train_forward(ctx, &batch, &err) == AL_OK);
        CHECK(al_train_lm_loss(ctx, labels, &loss, &n, &err) == AL_OK);
        CHECK(al_train_backward(ctx, NULL, &err) == AL_OK);
        CHECK(n == 23);
        CHECK_MSG(fabs(loss - loss_want[0]) <= 1e-5 * fabs(loss_want[0]), "%s: loss %.9g, PyTorch %.9g", ckpt, loss,
                  loss_want[0]);
        const size_t D = (size_t)m->config.hidden_size, NL = (size_t)m->config.n_layers, BLg = (size_t)Bg * Lg;
        float *hidden = calloc((NL + 1) * BLg * D, sizeof(float));
        al_forward_outputs out = {0};
        out.hidden_states = hidden;
        CHECK(hidden && al_forward(m, &batch, NULL, &out, &err) == AL_OK);
        int differ = 0;
        for (size_t l = 0; hidden && l <= NL; l++)
            for (size_t t = 0; t < BLg; t++)
                if (mask_g[t])
                    differ += memcmp(al_train_hidden(ctx, (int)l) + t * D, hidden + (l * BLg + t) * D,
                                     sizeof(float) * D) != 0;
        CHECK_MSG(differ == 0, "%s: %d hidden-state rows differ from al_forward's", ckpt, differ);
        free(hidden);
        memcpy(g->storage, al_train_grads(ctx), sizeof(float) * g->n_floats);
        al_tensor_out t[64];
        const int nt = al_weights_file_tensors(g, t, 64);
        CHECK_MSG(nt == n_tensors, "%s: %d tensors", ckpt, nt);
        for (int i = 0; i < nt; i++) {
            size_t numel = 0;
            /* written with GPT2LMHeadModel's "transformer." prefix; the checkpoint has none */
            const char *wname = strncmp(t[i].name, "transformer.", 12) == 0 ? t[i].name + 12 : t[i].name;
            float *ref = golden_f32(&want, wname, &numel, NULL);
            CHECK_MSG(ref && numel * sizeof(float) == t[i].nbytes, "%s: %s: no gradient of that size in the golden",
                      ckpt, t[i].name);
            if (!ref || numel * sizeof(float) != t[i].nbytes) {
                free(ref);
                continue;
            }
            double top = 0.0;
            for (size_t e = 0; e < numel; e++) top = fabs(ref[e]) > top ? fabs(ref[e]) : top;
            const double diff = max_abs_diff(t[i].data, ref, numel);
            CHECK_MSG(diff <= 1e-4 * (top > 0 ? top : 1.0), "%s: %s: gradient differs by %.3g (largest %.3g)", ckpt,
                      t[i].name, diff, top);
            free(ref);
        }
        al_weights_file_tensors_free(t, nt > 0 ? nt : 0);
        const lm_batch d = {ids_g, mask_g, labels, Lg};
        const uint64_t one = sharded_digest(m, &d, Bg, 1), three = sharded_digest(m, &d, Bg, 3);
        CHECK_MSG(one != 0 && one == three, "%s: 3 shards on 1 and 3 threads give other bits", ckpt);
        g_shard_digest = fnv_digest(g_shard_digest, (const float *)&one, 2);
        free(labels);
    } else {
        CHECK(0);
    }
    al_train_ctx_free(ctx);
    free(ids_g), free(mask_g), free(loss_want);
    al_model_free(m), al_model_free(g);
    golden_close(&in), golden_close(&want);
}

int main(void) {
    static const struct {
        const char *name;
        int n_tensors;
    } checkpoints[] = {{"gpt2", 28},         {"llama_gqa", 20}, {"llama_untied", 21},     {"qwen2", 26},
                       {"qwen2_window", 26}, {"pythia", 28},    {"pythia_sequential", 28}};
    for (size_t i = 0; i < sizeof checkpoints / sizeof checkpoints[0]; i++)
        pytorch_gradients(checkpoints[i].name, checkpoints[i].n_tensors);
    al_model *m = tiny(11);
    CHECK(m != NULL);
    if (!m) return check_summary("decoder_train");
    int32_t labels[B * L];
    al_clm_labels(ids, mask, B, L, labels);
    CHECK(labels[0] == 9 && labels[L - 1] == AL_IGNORE_INDEX && labels[L + 5] == AL_IGNORE_INDEX);
    forward_matches(m, labels);
    gradients_match(m, labels);
    same_bits_on_every_path(m, labels);
    real_rows_frozen(m);
    for (size_t i = 0; i < sizeof tiny_configs / sizeof tiny_configs[0]; i++) {
        al_model *r = tiny_of(tiny_configs[i], 20 + i);
        CHECK(r != NULL);
        if (!r) continue;
        forward_matches(r, labels);
        gradients_match(r, labels);
        same_bits_on_every_path(r, labels);
        real_rows_frozen(r);
        al_model_free(r);
    }
    printf("sharded steps' digest %016llx\n", (unsigned long long)g_shard_digest);
    CHECK_MSG(g_shard_digest == PINNED_SHARD_DIGEST, "sharded steps' digest %016llx, pinned %016llx",
              (unsigned long long)g_shard_digest, (unsigned long long)PINNED_SHARD_DIGEST);
    round_trip(m);
    al_model_free(m);
    return check_summary("decoder_train");
}
