/* test_embedded_models.c: each embedded model (models/attnlab-mini-bert, models/attnlab-small-bert) in
 * the core agrees with the PyTorch reference (tests/golden/make_model_golden.py, one golden per model):
 * the same token ids for the test sentences, the same MLM logits at every [MASK] (1e-4) and so the same
 * top-5 predictions; and the directory is complete (config, weights with the MLM head, vocabulary,
 * tokenizer config, model card); and its heads show the known patterns (previous token, next token,
 * [CLS]/[SEP]). MODEL_DIR and GOLDEN may be set at compile time to check one checkpoint during training. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "golden_file.h"

/* The embedded models and their goldens (tests/golden/<model>_mlm.safetensors). */
#ifdef MODEL_DIR
static const char *const k_models[][2] = {{MODEL_DIR, GOLDEN}};
#else
static const char *const k_models[][2] = {
    {"models/attnlab-mini-bert", "tests/golden/attnlab-mini-bert_mlm.safetensors"},
    {"models/attnlab-small-bert", "tests/golden/attnlab-small-bert_mlm.safetensors"},
};
#endif
/* The known attention patterns: the best head of each kind must put at least this much of its attention
 * on the previous token, the next token, and [CLS]/[SEP] (a uniform head over these ~14-token sentences
 * would put about 0.07 on one neighbour and 0.14 on the two specials). The shipped model's figures are
 * in its model card; the bounds keep a margin so that retraining noise does not trip them. */
#define AL_PREV_NEXT_MIN 0.5
#define AL_CLS_SEP_MIN 0.45

/* The golden's sentences with [MASK] in place of one word (same order as the script). */
static const char *const k_masked[] = {
    "the [MASK] sat on the mat .",
    "she opened the door and walked [MASK] the room .",
    "a dictionary gives the meaning [MASK] a word .",
    "the president of the united [MASK] spoke to the people .",
    "he was born [MASK] a small town in the north .",
    "water is a clear [MASK] that has no colour .",
};

/* Unmasked sentences for the attention patterns. */
static const char *const k_plain[] = {
    "the cat sat on the mat because it was tired .",
    "she opened the door and walked into the room .",
    "a dictionary gives the meaning of a word in other words .",
    "the president of the united states spoke to the people on monday .",
    "he was born in a small town in the north of the country .",
    "water is a clear liquid that has no colour and no taste .",
    "they wanted to know why the train was late again .",
    "the old man told his son a long story about the war .",
};

/* Per head, the mean attention over real queries to: the previous token, the next token, and
 * [CLS] + [SEP] together. Returns the best head's score for each. */
static void attention_patterns(al_model *model, double best[3], int best_head[3]) {
    const al_config *cfg = al_model_config(model);
    int NL = cfg->n_layers, H = cfg->n_heads, B = (int)(sizeof k_plain / sizeof k_plain[0]), L = 24;
    al_encode_options opt = al_encode_default_options();
    opt.pad_to = L;
    int32_t *ids = calloc((size_t)B * L, sizeof *ids), *mask = calloc((size_t)B * L, sizeof *mask);
    int *len = calloc((size_t)B, sizeof *len);
    al_error err = {0};
    for (int b = 0; b < B; b++) {
        al_encoding enc;
        CHECK_MSG(al_tokenizer_encode(al_model_tokenizer(model), k_plain[b], NULL, &opt, &enc, &err) == AL_OK,
                  "%s", err.message);
        memcpy(ids + (size_t)b * L, enc.ids, sizeof(int32_t) * (size_t)L);
        memcpy(mask + (size_t)b * L, enc.attention_mask, sizeof(int32_t) * (size_t)L);
        len[b] = enc.n_tokens;
        al_encoding_free(&enc);
    }
    float *attn = malloc(sizeof(float) * (size_t)NL * B * H * L * L);
    al_batch batch = {.n_seqs = B, .seq_len = L, .input_ids = ids, .attention_mask = mask};
    al_forward_params params = al_forward_default_params();
    al_forward_outputs out = {.attentions = attn};
    CHECK_MSG(al_forward(model, &batch, &params, &out, &err) == AL_OK, "%s", err.message);
    printf("head   prev   next   [CLS]+[SEP]\n");
    for (int k = 0; k < 3; k++) best[k] = 0, best_head[k] = -1;
    for (int l = 0; l < NL; l++)
        for (int h = 0; h < H; h++) {
            double sum[3] = {0}, cnt[3] = {0};
            for (int b = 0; b < B; b++) {
                const float *A = attn + ((((size_t)l * B + b) * H + h) * L) * L;
                int n = len[b];
                for (int i = 0; i < n; i++) {
                    const float *row = A + (size_t)i * L;
                    if (i > 0) sum[0] += row[i - 1], cnt[0]++;
                    if (i + 1 < n) sum[1] += row[i + 1], cnt[1]++;
                    sum[2] += row[0] + row[n - 1], cnt[2]++;
                }
            }
            double v[3];
            for (int k = 0; k < 3; k++) {
                v[k] = sum[k] / cnt[k];
                if (v[k] > best[k]) best[k] = v[k], best_head[k] = l * H + h;
            }
            printf("L%dH%d   %.3f  %.3f  %.3f\n", l, h, v[0], v[1], v[2]);
        }
    free(ids), free(mask), free(len), free(attn);
}

static int file_exists(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

static void check_model(const char *dir, const char *golden) {
    static const char *const files[] = {"config.json", "vocab.txt", "tokenizer_config.json",
                                        "train_config.json", "README.md"};
    char path[256];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        CHECK_MSG(file_exists(path), "%s is missing", path);
    }
    /* weights: one file, or float16 shards listed by an index */
    char index[256];
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    snprintf(index, sizeof index, "%s/model.safetensors.index.json", dir);
    CHECK_MSG(file_exists(path) || file_exists(index), "%s has neither model.safetensors nor its index", dir);

    printf("== %s\n", dir);
    al_model *model = NULL;
    al_error err = {0};
    CHECK_MSG(al_model_load_dir(dir, &model, &err) == AL_OK, "%s", err.message);
    golden_file g;
    int have_golden = golden_open(&g, golden);
    CHECK_MSG(have_golden, "%s is missing", golden);
    if (!model || !have_golden) {
        al_model_free(model);
        return;
    }

    const al_config *cfg = al_model_config(model);
    CHECK(al_model_has_mlm_head(model));
    CHECK(al_model_tokenizer(model) != NULL);
    CHECK(cfg->n_layers * cfg->n_heads >= 16); /* at least 16 heads for the head sweeps (models/README.md) */

    int64_t ids_shape[2], pos_shape[2];
    size_t n_ids = 0, n_pos = 0, n_logits = 0;
    float *ids_f = golden_f32(&g, "input_ids", &n_ids, ids_shape);
    float *mask_f = golden_f32(&g, "attention_mask", NULL, NULL);
    float *pos_f = golden_f32(&g, "mask_positions", &n_pos, pos_shape);
    float *top5_f = golden_f32(&g, "top5", NULL, NULL);
    float *logits_ref = golden_f32(&g, "logits", &n_logits, NULL);
    CHECK(ids_f && mask_f && pos_f && top5_f && logits_ref);
    int B = (int)ids_shape[0], L = (int)ids_shape[1], M = (int)pos_shape[0], V = cfg->vocab_size;
    CHECK(B == (int)(sizeof k_masked / sizeof k_masked[0]) && n_logits == (size_t)M * V);

    int32_t *ids = calloc((size_t)B * L, sizeof *ids), *mask = calloc((size_t)B * L, sizeof *mask);
    for (int i = 0; i < B * L; i++) ids[i] = (int32_t)ids_f[i], mask[i] = (int32_t)mask_f[i];

    /* attnlab's tokenizer gives the reference's ids. */
    al_encode_options opt = al_encode_default_options();
    opt.pad_to = L;
    for (int b = 0; b < B; b++) {
        al_encoding enc;
        CHECK_MSG(al_tokenizer_encode(al_model_tokenizer(model), k_masked[b], NULL, &opt, &enc, &err) == AL_OK,
                  "%s", err.message);
        CHECK_MSG(memcmp(enc.ids, ids + (size_t)b * L, sizeof(int32_t) * (size_t)L) == 0,
                  "sentence %d: token ids differ from the reference's", b);
        al_encoding_free(&enc);
    }

    float *logits = malloc(sizeof(float) * (size_t)B * L * V);
    al_batch batch = {.n_seqs = B, .seq_len = L, .input_ids = ids, .attention_mask = mask};
    al_forward_params params = al_forward_default_params();
    al_forward_outputs out = {.mlm_logits = logits};
    CHECK_MSG(al_forward(model, &batch, &params, &out, &err) == AL_OK, "%s", err.message);

    double max_err = 0;
    int top1_same = 0, top5_same = 0;
    for (int m = 0; m < M; m++) {
        int b = (int)pos_f[m * 2], t = (int)pos_f[m * 2 + 1];
        const float *row = logits + ((size_t)b * L + t) * V, *ref = logits_ref + (size_t)m * V;
        for (int v = 0; v < V; v++) {
            double d = fabs((double)row[v] - ref[v]);
            if (d > max_err) max_err = d;
        }
        /* top-5 of ours, in order */
        int top[5];
        for (int k = 0; k < 5; k++) {
            int best = -1;
            for (int v = 0; v < V; v++) {
                int taken = 0;
                for (int j = 0; j < k; j++) taken |= top[j] == v;
                if (!taken && (best < 0 || row[v] > row[best])) best = v;
            }
            top[k] = best;
        }
        top1_same += top[0] == (int)top5_f[m * 5];
        int same = 1;
        for (int k = 0; k < 5; k++) same &= top[k] == (int)top5_f[m * 5 + k];
        top5_same += same;
    }
    printf("%s vs PyTorch: max |logit diff| %.3g at %d masks; top-1 equal %d/%d, top-5 equal %d/%d\n",
           dir, max_err, M, top1_same, M, top5_same, M);
    CHECK(max_err <= 1e-4);
    CHECK(top1_same == M);
    CHECK(top5_same == M);

    /* The known patterns of pretrained BERTs: some head mostly looks at the previous token, some at
     * the next one, some at [CLS]/[SEP] (the mean attention of the best head, over real queries). */
    double best[3];
    int best_head[3];
    attention_patterns(model, best, best_head);
    printf("best heads: previous token L%dH%d %.3f, next token L%dH%d %.3f, [CLS]/[SEP] L%dH%d %.3f\n",
           best_head[0] / cfg->n_heads, best_head[0] % cfg->n_heads, best[0], best_head[1] / cfg->n_heads,
           best_head[1] % cfg->n_heads, best[1], best_head[2] / cfg->n_heads, best_head[2] % cfg->n_heads, best[2]);
    CHECK_MSG(best[0] >= AL_PREV_NEXT_MIN, "no head attends mostly to the previous token (best %.3f)", best[0]);
    CHECK_MSG(best[1] >= AL_PREV_NEXT_MIN, "no head attends mostly to the next token (best %.3f)", best[1]);
    CHECK_MSG(best[2] >= AL_CLS_SEP_MIN, "no head attends mostly to [CLS]/[SEP] (best %.3f)", best[2]);

    free(ids), free(mask), free(logits);
    free(ids_f), free(mask_f), free(pos_f), free(top5_f), free(logits_ref);
    golden_close(&g);
    al_model_free(model);
}

int main(void) {
    for (size_t i = 0; i < sizeof k_models / sizeof k_models[0]; i++) check_model(k_models[i][0], k_models[i][1]);
    return check_summary("embedded_models");
}
