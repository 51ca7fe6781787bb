/* test_train_size.c: what a training context holds (src/train/train_ctx.c, shards.c).
 *
 *  - a bert-base-shaped model (12 x 768, vocab 30522) at batch [16, 128], measured only: a frozen context
 *    without MLM head buffers (weight_grads 0, mlm_head 0) holds no parameter gradients, no logits and one
 *    copy of the per-layer tensors only weight gradients read: about half of a training one; the budget check refuses naming the size and the options to lower;
 *  - on a tiny model the measured workspace is what al_train_ctx_new carves, a frozen context has no
 *    gradient buffer, a context without mlm_head refuses the MLM loss, and a shard set measures as its
 *    contexts plus the combined gradients. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "train/shards.h"
#include "train/train.h"
#include "train/train_internal.h"

static double mb(uint64_t b) { return (double)b / (1024.0 * 1024.0); }

static void bert_base(void) {
    al_config c = al_config_bert(30522, 768, 12, 12, 3072);
    al_model *m = NULL;
    al_error err;
    CHECK_MSG(al_model_new_random(&c, 1, 1, &m, &err) == AL_OK, "%s", err.message);
    if (!m) return;
    const size_t P = al_model_n_params(m);
    al_train_options train = al_train_default_options(), frozen = train;
    frozen.weight_grads = 0;
    frozen.mlm_head = 0;
    al_train_size st, sf;
    CHECK(al_train_ctx_measure(m, 16, 128, &train, &st, &err) == AL_OK);
    CHECK(al_train_ctx_measure(m, 16, 128, &frozen, &sf, &err) == AL_OK);
    printf("bert-base [16, 128]: training context %.1f MB (activations %.1f, MLM head %.1f, gradients %.1f); "
           "frozen %.1f MB (activations %.1f)\n",
           mb(st.total), mb(st.activations), mb(st.mlm_head), mb(st.grads), mb(sf.total), mb(sf.activations));
    CHECK(st.grads == 4 * (uint64_t)P && sf.grads == 0);
    CHECK(sf.mlm_head == 0 && st.mlm_head >= 4ull * 16 * 128 * 30522); /* at least the logits */
    CHECK(st.total == st.activations + st.mlm_head + st.grads + st.other);
    /* the frozen context saves the gradients, the MLM head, the embeddings' backward scratch and all but one
     * layer's ctx, h1 and ff_act (read back only for weight gradients) */
    const uint64_t BL = 16 * 128;
    CHECK(sf.activations + 4 * (BL * 768 + 11 * BL * (768 + 768 + 3072)) == st.activations);
    CHECK(sf.total + st.grads + st.mlm_head <= st.total);
    CHECK(sf.total < st.total * 11 / 20);

    /* a budget between the two: the frozen request fits, the training one is refused naming what to lower */
    const uint64_t budget = sf.total + 100u * 1024 * 1024;
    CHECK(al_train_check_budget("lambda ranking", &sf, budget, &err) == AL_OK);
    CHECK(al_train_check_budget("lambda ranking", &st, budget, &err) == AL_ERR_OOM);
    printf("refusal: %s\n", err.message);
    CHECK(strstr(err.message, "lambda ranking") && strstr(err.message, "[16, 128]"));
    CHECK(strstr(err.message, "weight_grads = 0") && strstr(err.message, "mlm_head = 0"));
    char total[32];
    snprintf(total, sizeof total, "%.1f MB", mb(st.total));
    CHECK_MSG(strstr(err.message, total) != NULL, "%s lacks %s", err.message, total);
    CHECK(al_train_check_budget("lambda ranking", &sf, sf.total - 1, &err) == AL_ERR_OOM);
    CHECK(!strstr(err.message, "weight_grads") && !strstr(err.message, "mlm_head")); /* already off */
    al_model_free(m);
}

static void tiny(void) {
    al_config c = al_config_bert(40, 16, 2, 2, 32);
    al_model *m = NULL;
    al_error err;
    CHECK(al_model_new_random(&c, 3, 1, &m, &err) == AL_OK);
    if (!m) return;
    const int modes[3][2] = {{1, 1}, {0, 1}, {0, 0}}; /* weight_grads, mlm_head */
    for (int k = 0; k < 3; k++) {
        al_train_options o = al_train_default_options();
        o.weight_grads = modes[k][0];
        o.mlm_head = modes[k][1];
        al_train_size s;
        al_train_ctx *ctx = NULL;
        CHECK(al_train_ctx_measure(m, 3, 9, &o, &s, &err) == AL_OK);
        CHECK_MSG(al_train_ctx_new(m, 3, 9, &o, &ctx, &err) == AL_OK, "%s", err.message);
        if (!ctx) continue;
        CHECK(ctx->mem_floats * sizeof(float) == s.activations + s.mlm_head);
        CHECK((al_train_grads(ctx) != NULL) == (o.weight_grads != 0));
        CHECK((s.mlm_head > 0) == (o.mlm_head != 0));
        int32_t ids[27], labels[27];
        for (int i = 0; i < 27; i++) ids[i] = 5 + i, labels[i] = i % 4 ? AL_IGNORE_INDEX : 7;
        al_batch b = {3, 9, ids, NULL, NULL, NULL};
        float loss = -1;
        CHECK(al_train_forward(ctx, &b, &err) == AL_OK);
        al_status st = al_train_mlm_loss(ctx, labels, &loss, NULL, &err);
        if (o.mlm_head) {
            CHECK(st == AL_OK && loss > 0);
        } else {
            CHECK(st == AL_ERR_INVALID);
            CHECK_MSG(strstr(err.message, "mlm_head") != NULL, "%s", err.message);
        }
        CHECK(al_train_backward(ctx, NULL, &err) == AL_OK);
        al_train_ctx_free(ctx);

        /* a set of 2 shards for batch 5: two contexts of 3 plus the combined gradients */
        al_train_size one, set;
        CHECK(al_shards_measure(m, 2, 5, 9, &o, &set, &err) == AL_OK);
        CHECK(al_train_ctx_measure(m, 3, 9, &o, &one, &err) == AL_OK);
        CHECK(set.activations == 2 * one.activations && set.mlm_head == 2 * one.mlm_head);
        CHECK(set.grads == 3 * one.grads);
    }
    al_train_options o = al_train_default_options();
    al_train_size s;
    CHECK(al_train_ctx_measure(m, 0, 9, &o, &s, &err) == AL_ERR_INVALID);
    CHECK(strstr(err.message, "max_batch") != NULL);
    CHECK(al_shards_measure(m, 4, 3, 9, &o, &s, &err) == AL_ERR_INVALID);
    CHECK(strstr(err.message, "shards") != NULL);
    al_model_free(m);
}

int main(void) {
    tiny();
    bert_base();
    return check_summary("train_size");
}
