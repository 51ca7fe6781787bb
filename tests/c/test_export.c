/* test_export.c: float16 conversion (round to nearest even, against hand-made cases and every half value
 * round-tripped) and `al_export_weights` (src/train/export.c): the default model written as F16 shards
 * with an index loads again with weights equal to the rounded originals and nearly the same outputs; the
 * golden model of every family written as F32 loads again with the same weights and outputs bit for bit,
 * under names that Hugging Face's own file for it uses (the family's one table, docs/families.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "model/model_internal.h"
#include "model/tensor_list.h"
#include "model/weights.h"
#include "read_file.h"
#include "train/pretrain.h"

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void test_f16(void) {
    CHECK(al_f32_to_f16(1.0f) == 0x3C00 && al_f32_to_f16(-2.0f) == 0xC000 && al_f32_to_f16(-0.0f) == 0x8000);
    CHECK(al_f32_to_f16(65504.0f) == 0x7BFF && al_f32_to_f16(65519.0f) == 0x7BFF);
    CHECK(al_f32_to_f16(65520.0f) == 0x7C00 && al_f32_to_f16(1e10f) == 0x7C00 && al_f32_to_f16(INFINITY) == 0x7C00);
    CHECK(al_f32_to_f16(ldexpf(1.0f, -24)) == 0x0001);          /* the smallest subnormal */
    CHECK(al_f32_to_f16(ldexpf(1.0f, -25)) == 0x0000);          /* half of it: tie to even (zero) */
    CHECK(al_f32_to_f16(ldexpf(1.5f, -25)) == 0x0001);
    CHECK(al_f32_to_f16(ldexpf(3.0f, -25)) == 0x0002);          /* 1.5 ulp: tie to even (2) */
    CHECK(al_f32_to_f16(1.0f + ldexpf(1.0f, -11)) == 0x3C00);   /* tie between 1 and 1 + 2^-10 */
    CHECK(al_f32_to_f16(1.0f + ldexpf(3.0f, -11)) == 0x3C02);   /* tie rounds up to the even neighbour */
    CHECK(al_f32_to_f16(ldexpf(1.0f, -14) - ldexpf(1.0f, -26)) == 0x0400); /* rounds up into the normals */
    uint16_t nan = al_f32_to_f16(from_bits(0x7FC00001u));
    CHECK((nan & 0x7C00) == 0x7C00 && (nan & 0x3FF) != 0);
    int bad = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = al_f16_to_f32((uint16_t)h);
        uint16_t back = al_f32_to_f16(f);
        if (isnan(f) ? !((back & 0x7C00) == 0x7C00 && (back & 0x3FF)) : back != h) bad++;
    }
    CHECK_MSG(bad == 0, "%d half values do not round-trip", bad);
}

static void test_export(void) {
    al_model *m = NULL, *h = NULL;
    al_error err;
    CHECK_MSG(al_model_load_dir("models/attnlab-mini-bert", &m, &err) == AL_OK, "%s", err.message);
    if (!m) return;
    char dir[] = "/tmp/attnlab_export_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    CHECK_MSG(al_export_weights(dir, m, "F16", 1 << 20, &err) == AL_OK, "%s", err.message);
    char path[256];
    snprintf(path, sizeof path, "%s/model.safetensors.index.json", dir);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (f) fclose(f);
    /* the weights alone do not make a model: add the config and vocabulary as the CLI copies them */
    al_fileset *fs = al_fileset_new();
    CHECK(al_fileset_add_dir(fs, dir, &err) == AL_OK);
    CHECK(al_fileset_add_dir(fs, "models/attnlab-mini-bert", &err) == AL_OK);
    size_t n_single = 0;
    CHECK(al_fileset_get(fs, "model.safetensors", &n_single) != NULL); /* the original F32 file came along */
    al_fileset *fs2 = al_fileset_new();
    static const char *const names[] = {"config.json", "vocab.txt", "tokenizer_config.json", "model.safetensors.index.json"};
    for (size_t i = 0; i < 4; i++) {
        size_t size;
        const uint8_t *d = al_fileset_get(fs, names[i], &size);
        CHECK(d && al_fileset_add(fs2, names[i], d, size, 1, &err) == AL_OK);
    }
    for (int k = 0; k < al_fileset_count(fs); k++) {
        const char *nm = al_fileset_name(fs, k);
        size_t size;
        if (strncmp(nm, "model-0", 7) != 0) continue;
        const uint8_t *d = al_fileset_get(fs, nm, &size);
        CHECK(al_fileset_add(fs2, nm, d, size, 1, &err) == AL_OK);
    }
    CHECK_MSG(al_model_load(fs2, &h, &err) == AL_OK, "%s", err.message);
    if (h) {
        CHECK(strcmp(al_model_weights_dtype(h), "F16") == 0);
        CHECK(h->n_floats == m->n_floats);
        int bad = 0;
        for (size_t e = 0; e < m->n_floats; e++)
            if (h->storage[e] != al_f16_to_f32(al_f32_to_f16(m->storage[e]))) bad++;
        CHECK_MSG(bad == 0, "%d weights are not the rounded originals", bad);
        /* outputs stay close: float16 weights change logits by a few thousandths */
        const char *text = "the cat sat on the mat .";
        al_encoding enc;
        al_encode_options opt = al_encode_default_options();
        CHECK(al_tokenizer_encode(al_model_tokenizer(m), text, NULL, &opt, &enc, &err) == AL_OK);
        const int V = al_model_config(m)->vocab_size, L = enc.length;
        float *a = malloc(sizeof *a * (size_t)L * V), *b = malloc(sizeof *b * (size_t)L * V);
        al_batch batch = {1, L, enc.ids, enc.attention_mask, enc.type_ids, NULL};
        al_forward_outputs oa = {0}, ob = {0};
        oa.mlm_logits = a;
        ob.mlm_logits = b;
        CHECK(al_forward(m, &batch, NULL, &oa, &err) == AL_OK && al_forward(h, &batch, NULL, &ob, &err) == AL_OK);
        double diff = 0.0, scale = 0.0;
        for (size_t e = 0; e < (size_t)L * V; e++) {
            diff = fmax(diff, fabs((double)a[e] - b[e]));
            scale = fmax(scale, fabs((double)a[e]));
        }
        printf("F16 export: %zu weights, max logit difference %.3g of max |logit| %.3g\n", m->n_floats, diff, scale);
        CHECK(diff < 0.02 * scale);
        free(a);
        free(b);
        al_encoding_free(&enc);
    }
    CHECK(al_export_weights(dir, m, "BF8", 0, &err) == AL_ERR_INVALID && strstr(err.message, "BF8"));
    al_fileset_free(fs);
    al_fileset_free(fs2);
    al_model_free(h);
    al_model_free(m);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* Hidden states and MLM logits of a fixed batch with pads (RoBERTa's positions count past them). */
static void outputs(const al_model *m, float *hidden, float *logits) {
    const al_config *c = al_model_config(m);
    int32_t ids[2 * 6] = {5, 17, 9, 33, 2, 8, 7, 11, 40, 3, 0, 0};
    int32_t mask[2 * 6] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
    for (int i = 0; i < 12; i++)
        if (!mask[i]) ids[i] = c->pad_token_id;
    al_batch batch = {2, 6, ids, mask, NULL, NULL};
    al_forward_outputs out = {0};
    out.hidden_states = hidden;
    out.mlm_logits = al_model_has_mlm_head(m) ? logits : NULL;
    al_error err;
    CHECK_MSG(al_forward(m, &batch, NULL, &out, &err) == AL_OK, "%s", err.message);
}

/* The named tensors of a safetensors file, for the names the exported file must share with the original. */
static int names_in(const char *path, const char *name) {
    size_t size = 0;
    uint8_t *bytes = read_file(path, &size);
    al_tensor_list list = {0};
    al_error err;
    int found = bytes && al_safetensors_read(bytes, size, path, &list, &err) == AL_OK &&
                al_tensor_list_find(&list, name) != NULL;
    al_tensor_list_free(&list);
    free(bytes);
    return found;
}

static void test_export_families(void) {
    static const char *const families[] = {"bert", "roberta", "distilbert", "electra", "deberta_v3", "modernbert"};
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        char src[128], dir[] = "/tmp/attnlab_export_family_XXXXXX", path[256];
        snprintf(src, sizeof src, "tests/golden/%s", families[f]);
        al_model *m = NULL, *h = NULL;
        al_error err;
        CHECK_MSG(al_model_load_dir(src, &m, &err) == AL_OK, "%s: %s", src, err.message);
        if (!m) continue;
        CHECK(mkdtemp(dir) != NULL);
        CHECK_MSG(al_export_weights(dir, m, "F32", 0, &err) == AL_OK, "%s: %s", src, err.message);
        /* the config travels unchanged, as the CLI copies it */
        snprintf(path, sizeof path, "cp %s/config.json %s/", src, dir);
        CHECK(system(path) == 0);
        CHECK_MSG(al_model_load_dir(dir, &h, &err) == AL_OK, "%s exported: %s", src, err.message);
        if (h) {
            CHECK(h->config.arch == m->config.arch && h->n_floats == m->n_floats);
            CHECK_MSG(memcmp(h->storage, m->storage, m->n_floats * sizeof(float)) == 0, "%s: weights differ", src);
            CHECK(al_model_has_mlm_head(h) == al_model_has_mlm_head(m));
            const al_config *c = al_model_config(m);
            const size_t nh = (size_t)(c->n_layers + 1) * 12 * c->hidden_size, nl = (size_t)12 * c->vocab_size;
            float *ha = calloc(nh, sizeof *ha), *hb = calloc(nh, sizeof *hb);
            float *la = calloc(nl, sizeof *la), *lb = calloc(nl, sizeof *lb);
            outputs(m, ha, la);
            outputs(h, hb, lb);
            CHECK_MSG(memcmp(ha, hb, nh * sizeof *ha) == 0 && memcmp(la, lb, nl * sizeof *la) == 0,
                      "%s: outputs differ after export", src);
            free(ha), free(hb), free(la), free(lb);
            /* every written name is one Hugging Face wrote for this family */
            al_tensor_out t[64];
            const int n = al_weights_tensors(m, t, 64);
            char orig[256], out[300];
            snprintf(orig, sizeof orig, "%s/model.safetensors", src);
            snprintf(out, sizeof out, "%s/model.safetensors", dir);
            int bad = 0;
            for (int i = 0; i < n; i++) bad += !names_in(orig, t[i].name) || !names_in(out, t[i].name);
            CHECK_MSG(n > 0 && bad == 0, "%s: %d of %d written names are not Hugging Face's", src, bad, n);
            printf("export %s: %d tensors, %zu weights, same outputs\n", families[f], n, m->n_floats);
        }
        al_model_free(h);
        al_model_free(m);
        snprintf(path, sizeof path, "rm -rf %s", dir);
        CHECK(system(path) == 0);
    }
}

int main(void) {
    test_f16();
    test_export();
    test_export_families();
    return check_summary("export");
}
