/* test_model_load.c: every fixture model loads with the right config, and the loaded float32 values
 * equal the reference values of tests/fixtures/expected.json exactly (F16/BF16 converted). Also the
 * tied decoders, al_model_new_random, and the forward engineer's golden models when present. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "read_file.h"
#include "model/model_internal.h"

/* The al_weights pointer that holds a state-dict tensor (names without family prefix). */
static const float *lookup(const al_model *m, const char *name, int *ok_layer) {
    const al_weights *w = &m->w;
    int l = -1;
    *ok_layer = 1;
    if (sscanf(name, "encoder.layer.%d.", &l) == 1 || sscanf(name, "transformer.layer.%d.", &l) == 1) {
        if (l < 0 || l >= m->config.n_layers) {
            *ok_layer = 0;
            return NULL;
        }
        const al_layer_weights *L = &w->layers[l];
        const char *rest = strchr(strchr(name, '.') + 1, '.') + 1;
        rest = strchr(rest, '.') + 1;
        static const struct { const char *n; size_t off; } map[] = {
            {"output.dense.weight", offsetof(al_layer_weights, ff_out_w)},
            {"attention.self.key.bias", offsetof(al_layer_weights, k_b)},
            {"attention.self.query.weight", offsetof(al_layer_weights, q_w)},
            {"intermediate.dense.weight", offsetof(al_layer_weights, ff_in_w)},
            {"attention.output.dense.weight", offsetof(al_layer_weights, o_w)},
            {"ffn.lin2.weight", offsetof(al_layer_weights, ff_out_w)},
            {"attention.v_lin.bias", offsetof(al_layer_weights, v_b)},
        };
        for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
            if (strcmp(rest, map[i].n) == 0) return *(float *const *)((const char *)L + map[i].off);
        return NULL;
    }
    if (!strcmp(name, "embeddings.word_embeddings.weight")) return w->word_emb;
    if (!strcmp(name, "embeddings.LayerNorm.weight")) return w->emb_ln_g;
    if (!strcmp(name, "embeddings_project.weight")) return w->emb_proj_w;
    if (!strcmp(name, "cls.predictions.decoder.weight")) return w->mlm_decoder_w;
    if (!strcmp(name, "cls.predictions.bias") || !strcmp(name, "lm_head.bias") ||
        !strcmp(name, "vocab_projector.bias") || !strcmp(name, "generator_lm_head.bias"))
        return w->mlm_decoder_b;
    if (!strcmp(name, "lm_head.dense.weight") || !strcmp(name, "vocab_transform.weight") ||
        !strcmp(name, "generator_predictions.dense.weight"))
        return w->mlm_dense_w;
    return NULL;
}

static void check_model_values(const char *dir_name, const cJSON *tensors) {
    char dir[256];
    snprintf(dir, sizeof dir, "tests/fixtures/%s", dir_name);
    al_model *m = NULL;
    al_error err = {0};
    al_status st = al_model_load_dir(dir, &m, &err);
    CHECK_MSG(st == AL_OK, "%s: %s", dir, err.message);
    if (st != AL_OK) return;
    /* Every weight pointer lies inside the one storage allocation. */
    const float *lo = m->storage, *hi = m->storage + m->n_floats;
    CHECK(m->w.word_emb >= lo && m->w.word_emb < hi);
    CHECK(m->w.layers[m->config.n_layers - 1].ln_ffn_b >= lo && m->w.layers[m->config.n_layers - 1].ln_ffn_b < hi);
    const cJSON *t;
    cJSON_ArrayForEach(t, tensors) {
        int ok_layer;
        const float *p = lookup(m, t->string, &ok_layer);
        CHECK_MSG(p != NULL, "%s: no pointer for %s", dir_name, t->string);
        if (!p) continue;
        const cJSON *shape = cJSON_GetObjectItem(t, "shape"), *first = cJSON_GetObjectItem(t, "first");
        size_t n = 1;
        const cJSON *d;
        cJSON_ArrayForEach(d, shape) n *= (size_t)d->valuedouble;
        double sum = 0;
        for (size_t i = 0; i < n; i++) sum += (double)p[i];
        CHECK_MSG(sum == cJSON_GetObjectItem(t, "sum")->valuedouble, "%s %s: sum %.17g vs %.17g", dir_name,
                  t->string, sum, cJSON_GetObjectItem(t, "sum")->valuedouble);
        int i = 0;
        cJSON_ArrayForEach(d, first) {
            CHECK_MSG((double)p[i] == d->valuedouble, "%s %s[%d]: %.9g vs %.9g", dir_name, t->string, i,
                      (double)p[i], d->valuedouble);
            i++;
        }
    }
    al_model_free(m);
}

typedef struct expect_model {
    const char *dir;
    al_arch arch;
    int mlm, tied, n_params;
    const char *file, *dtype;
} expect_model;

int main(void) {
    size_t text_size = 0;
    char *text = (char *)read_file("tests/fixtures/expected.json", &text_size);
    CHECK(text != NULL);
    cJSON *expected = text ? cJSON_Parse(text) : NULL;
    CHECK(expected != NULL);
    const cJSON *model;
    int n_models = 0;
    cJSON_ArrayForEach(model, expected) {
        check_model_values(model->string, model);
        n_models++;
    }
    CHECK(n_models >= 12);
    cJSON_Delete(expected);
    free(text);

    /* Family, head, tying, source file and dtype per fixture. Parameter counts by hand:
     * BERT V32 D8 I16 P16 T2 L2: emb 256+128+16+16, layer 4*72+16+144+136+16 = 600, head 72+16+256+32. */
    static const expect_model models[] = {
        {"bert_st_f32", AL_ARCH_BERT, 1, 0, 416 + 1200 + 376, "model.safetensors", "F32"},
        {"bert_st_f16", AL_ARCH_BERT, 1, 0, 1992, "model.safetensors", "F16"},
        {"bert_st_bf16", AL_ARCH_BERT, 1, 0, 1992, "model.safetensors", "BF16"},
        {"bert_st_noprefix", AL_ARCH_BERT, 0, 0, 1616, "model.safetensors", "F32"},
        {"bert_sharded", AL_ARCH_BERT, 1, 0, 1992, "model.safetensors.index.json", "F32"},
        {"bert_bin", AL_ARCH_BERT, 1, 0, 1992, "pytorch_model.bin", "F32"},
        {"roberta_st_f32", AL_ARCH_ROBERTA, 1, 1, 1744, "model.safetensors", "F32"},
        {"roberta_bin_f16", AL_ARCH_ROBERTA, 1, 1, 1744, "pytorch_model.bin", "F16"},
        {"distilbert_st_f32", AL_ARCH_DISTILBERT, 1, 1, 1720, "model.safetensors", "F32"},
        {"distilbert_bin_noprefix", AL_ARCH_DISTILBERT, 0, 0, 1600, "pytorch_model.bin", "F32"},
        {"electra_st_f32", AL_ARCH_ELECTRA, 1, 1, 1524, "model.safetensors", "F32"},
        {"electra_disc_st_f32", AL_ARCH_ELECTRA, 0, 0, 1616, "model.safetensors", "F32"},
        {"electra_bin_bf16", AL_ARCH_ELECTRA, 0, 0, 1616, "pytorch_model.bin", "BF16"},
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        const expect_model *e = &models[i];
        char dir[256];
        snprintf(dir, sizeof dir, "tests/fixtures/%s", e->dir);
        al_model *m = NULL;
        al_error err = {0};
        CHECK_MSG(al_model_load_dir(dir, &m, &err) == AL_OK, "%s: %s", e->dir, err.message);
        if (!m) continue;
        const al_config *c = al_model_config(m);
        CHECK_MSG(c->arch == e->arch, "%s arch", e->dir);
        CHECK_MSG(al_model_has_mlm_head(m) == e->mlm, "%s mlm", e->dir);
        CHECK_MSG((int)al_model_n_params(m) == e->n_params, "%s: %zu params", e->dir, al_model_n_params(m));
        CHECK_MSG(strcmp(al_model_weights_file(m), e->file) == 0, "%s file %s", e->dir, al_model_weights_file(m));
        CHECK_MSG(strcmp(al_model_weights_dtype(m), e->dtype) == 0, "%s dtype %s", e->dir, al_model_weights_dtype(m));
        CHECK(al_model_tokenizer(m) == NULL);
        if (e->mlm) CHECK_MSG((m->w.mlm_decoder_w == m->w.word_emb) == e->tied, "%s tied", e->dir);
        if (e->arch == AL_ARCH_ELECTRA && c->embedding_size != c->hidden_size) {
            CHECK(m->w.emb_proj_w != NULL && m->w.emb_proj_b != NULL && m->w.mlm_dim == c->embedding_size);
        } else {
            CHECK(m->w.emb_proj_w == NULL);
        }
        CHECK((m->w.type_emb != NULL) == (c->type_vocab_size > 0));
        if (e->arch == AL_ARCH_ROBERTA) CHECK(c->position_offset == 2 && m->w.mlm_act == AL_ACT_GELU);
        al_model_free(m);
    }

    /* Random models: deterministic per seed, BERT's initialisation, tied decoder. */
    al_config cfg = al_config_bert(50, 16, 2, 4, 32);
    al_model *a = NULL, *b = NULL, *r = NULL;
    al_error err = {0};
    CHECK(al_model_new_random(&cfg, 7, 1, &a, &err) == AL_OK);
    CHECK(al_model_new_random(&cfg, 7, 1, &b, &err) == AL_OK);
    CHECK(al_model_new_random(&cfg, 8, 0, &r, &err) == AL_OK);
    if (a && b && r) {
        CHECK(a->n_floats == b->n_floats && memcmp(a->storage, b->storage, a->n_floats * 4) == 0);
        CHECK(memcmp(a->storage + 16, r->storage + 16, 64) != 0); /* row 0 is the zero padding row */
        CHECK(al_model_has_mlm_head(a) && !al_model_has_mlm_head(r));
        CHECK(a->w.mlm_decoder_w == a->w.word_emb);
        CHECK(a->w.layers[1].ln_attn_g[3] == 1.0f && a->w.layers[1].q_b[2] == 0.0f);
        CHECK(a->w.word_emb[0 * 16 + 5] == 0.0f);  /* padding row */
        double s2 = 0;
        size_t n = 50 * 16;
        for (size_t i = 16; i < n; i++) s2 += (double)a->w.word_emb[i] * a->w.word_emb[i];
        CHECK_NEAR(s2 / (double)(n - 16), 0.0004, 0.0001); /* variance of normal(0, 0.02) */
        /* params: emb 800+8192+32+32, layer 4*272+32+544+528+32 = 2224, head 272+32+50 */
        CHECK(al_model_n_params(a) == 800 + 8192 + 32 + 32 + 2 * 2224 + 272 + 32 + 50);
        CHECK(strcmp(al_model_weights_dtype(a), "F32") == 0);
    }
    al_model_free(a);
    al_model_free(b);
    al_model_free(r);
    al_config e_cfg = cfg;
    e_cfg.arch = AL_ARCH_ELECTRA;
    e_cfg.embedding_size = 8;
    CHECK(al_model_new_random(&e_cfg, 1, 1, &a, &err) == AL_OK);
    if (a) CHECK(a->w.emb_proj_w && a->w.mlm_dim == 8 && a->w.mlm_decoder_w == a->w.word_emb);
    al_model_free(a);
    al_config bad = cfg;
    bad.n_heads = 3;
    CHECK(al_model_new_random(&bad, 1, 0, &a, &err) == AL_ERR_INVALID && a == NULL);
    bad = cfg;
    bad.vocab_size = 1 << 24; /* 2^24 x 2^24 floats: refused, not overflowed (size_t is 32-bit in WASM) */
    bad.hidden_size = bad.embedding_size = 1 << 24;
    bad.intermediate_size = 1 << 24;
    CHECK_MSG(al_model_new_random(&bad, 1, 0, &a, &err) == AL_ERR_OOM && a == NULL, "%s", err.message);
    bad = cfg;
    bad.vocab_size = 0;
    CHECK(al_model_new_random(&bad, 1, 0, &a, &err) == AL_ERR_INVALID && strstr(err.message, "vocab_size"));

    /* A sharded pytorch_model.bin.index.json (one shard here) and tokenizer files in the set. */
    {
        al_fileset *fs = al_fileset_new();
        CHECK(al_fileset_add_dir(fs, "tests/fixtures/bert_bin", &err) == AL_OK);
        size_t size = 0;
        const uint8_t *bin = al_fileset_get(fs, "pytorch_model.bin", &size);
        CHECK(bin && al_fileset_add(fs, "pytorch_model-00001-of-00001.bin", bin, size, 1, &err) == AL_OK);
        const char *index = "{\"metadata\": {}, \"weight_map\": {\"bert.embeddings.word_embeddings.weight\": "
                            "\"pytorch_model-00001-of-00001.bin\", \"cls.predictions.bias\": "
                            "\"pytorch_model-00001-of-00001.bin\"}}";
        CHECK(al_fileset_add(fs, "pytorch_model.bin.index.json", index, strlen(index), 1, &err) == AL_OK);
        al_fileset_add(fs, "pytorch_model.bin", NULL, 0, 1, &err); /* replaced by an empty file ... */
        al_model *m = NULL;
        CHECK(al_model_load(fs, &m, &err) == AL_ERR_FORMAT); /* ... which is refused, naming it */
        CHECK(strstr(err.message, "pytorch_model.bin: ") != NULL);
        al_fileset *fs2 = al_fileset_new();
        const uint8_t *config_bytes = al_fileset_get(fs, "config.json", &size);
        al_fileset_add(fs2, "config.json", config_bytes, size, 1, &err);
        bin = al_fileset_get(fs, "pytorch_model-00001-of-00001.bin", &size);
        al_fileset_add(fs2, "pytorch_model-00001-of-00001.bin", bin, size, 1, &err);
        al_fileset_add(fs2, "pytorch_model.bin.index.json", index, strlen(index), 1, &err);
        const char *vocab = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n";
        al_fileset_add(fs2, "vocab.txt", vocab, strlen(vocab), 1, &err);
        al_fileset_free(fs);
        CHECK_MSG(al_model_load(fs2, &m, &err) == AL_OK, "%s", err.message);
        if (m) {
            CHECK(strcmp(al_model_weights_file(m), "pytorch_model.bin.index.json") == 0);
            CHECK(al_model_has_mlm_head(m) && al_model_n_params(m) == 1992);
            CHECK(al_model_tokenizer(m) != NULL);
            if (al_model_tokenizer(m)) CHECK(al_tokenizer_vocab_size(al_model_tokenizer(m)) == 6);
        }
        al_model_free(m);
        al_fileset_free(fs2);
    }

    /* tie_word_embeddings (docs/checkpoints.md, "The MLM decoder"): Hugging Face replaces a stored decoder
     * by the word embeddings unless the config says false; false with no stored decoder is refused. */
    {
        const char *cases[][2] = {
            {"bert_st_f32", "{\"model_type\": \"bert\", \"vocab_size\": 32, \"hidden_size\": 8, \"num_hidden_layers\": 2,"
                            " \"num_attention_heads\": 2, \"intermediate_size\": 16, \"max_position_embeddings\": 16}"},
            {"roberta_st_f32", "{\"model_type\": \"roberta\", \"vocab_size\": 32, \"hidden_size\": 8, \"num_hidden_layers\": 2,"
                               " \"num_attention_heads\": 2, \"intermediate_size\": 16, \"max_position_embeddings\": 18,"
                               " \"type_vocab_size\": 1, \"pad_token_id\": 1, \"layer_norm_eps\": 1e-5,"
                               " \"tie_word_embeddings\": false}"},
            {"bert_st_f32", "{\"model_type\": \"bert\", \"vocab_size\": 32, \"hidden_size\": 8, \"num_hidden_layers\": 2,"
                            " \"num_attention_heads\": 2, \"intermediate_size\": 16, \"max_position_embeddings\": 16,"
                            " \"tie_word_embeddings\": \"yes\"}"},
        };
        for (int i = 0; i < 3; i++) {
            char dir[128];
            snprintf(dir, sizeof dir, "tests/fixtures/%s", cases[i][0]);
            al_fileset *fs = al_fileset_new();
            CHECK(al_fileset_add_dir(fs, dir, &err) == AL_OK);
            CHECK(al_fileset_add(fs, "config.json", cases[i][1], strlen(cases[i][1]), 1, &err) == AL_OK);
            al_model *m = NULL;
            al_status st = al_model_load(fs, &m, &err);
            if (i == 0) {
                CHECK_MSG(st == AL_OK, "%s", err.message);
                if (m) CHECK(m->w.mlm_decoder_w == m->w.word_emb && al_model_n_params(m) == 1992 - 32 * 8);
            } else if (i == 1) {
                CHECK(st == AL_ERR_FORMAT);
                CHECK_MSG(strstr(err.message, "missing tensor 'lm_head.decoder.weight' (config.json: tie_word_embeddings is false)"),
                          "%s", err.message);
            } else {
                CHECK(st == AL_ERR_FORMAT && strstr(err.message, "field 'tie_word_embeddings' must be true or false"));
            }
            al_model_free(m);
            al_fileset_free(fs);
        }
    }

    /* The forward engineer's golden models load too (when present). */
    const char *golden[] = {"bert", "bert_gelu_new", "roberta", "distilbert", "electra"};
    for (int i = 0; i < 5; i++) {
        char dir[256];
        snprintf(dir, sizeof dir, "tests/golden/%s", golden[i]);
        FILE *f = NULL;
        char path[300];
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        if (!(f = fopen(path, "rb"))) continue;
        fclose(f);
        al_model *g = NULL;
        CHECK_MSG(al_model_load_dir(dir, &g, &err) == AL_OK, "%s: %s", dir, err.message);
        al_model_free(g);
    }
    return check_summary("model_load");
}
