/* test_family_formats.c: DeBERTa-v3 and ModernBERT from pytorch_model.bin. The twins in
 * tests/fixtures/deberta_v3_bin and modernbert_bin (tests/fixtures/make_family_bin_fixtures.py: torch.save of
 * the same float32 values as the goldens' model.safetensors) must give the safetensors checkpoints' hidden
 * states, attention and MLM logits bit for bit, so the golden bounds of tests/c/test_golden.c and
 * test_modernbert.c hold for both formats. */
#include <string.h>

#include "attnlab.h"
#include "check.h"

typedef struct outputs {
    float *hidden, *attn, *logits;
    size_t n_hidden, n_attn, n_logits;
} outputs;

static int run(const char *dir, const char *weights, outputs *o) {
    al_model *m = NULL;
    al_error err = {0};
    memset(o, 0, sizeof *o);
    CHECK_MSG(al_model_load_dir(dir, &m, &err) == AL_OK, "%s: %s", dir, err.message);
    if (!m) return 0;
    const char *file = al_model_weights_file(m);
    CHECK_MSG(file && strstr(file, weights), "%s: weights from %s, not %s", dir, file ? file : "?", weights);
    const al_config *c = al_model_config(m);
    enum { B = 2, L = 9 };
    int32_t ids[B * L], mask[B * L];
    for (int t = 0; t < B * L; t++) {
        mask[t] = t < L || t % L < L - 3; /* the second sequence ends in 3 pads */
        ids[t] = mask[t] ? 5 + (t * 13) % (c->vocab_size - 5) : c->pad_token_id;
    }
    o->n_hidden = (size_t)(c->n_layers + 1) * B * L * c->hidden_size;
    o->n_attn = (size_t)c->n_layers * B * c->n_heads * L * L;
    o->n_logits = al_model_has_mlm_head(m) ? (size_t)B * L * c->vocab_size : 0;
    o->hidden = calloc(o->n_hidden, sizeof(float));
    o->attn = calloc(o->n_attn, sizeof(float));
    o->logits = o->n_logits ? calloc(o->n_logits, sizeof(float)) : NULL;
    al_forward_outputs out = {0};
    out.hidden_states = o->hidden, out.attentions = o->attn, out.mlm_logits = o->logits;
    al_batch batch = {B, L, ids, mask, NULL, NULL};
    al_forward_params p = al_forward_default_params();
    const al_status st = al_forward(m, &batch, &p, &out, &err);
    CHECK_MSG(st == AL_OK, "%s: %s", dir, err.message);
    al_model_free(m);
    return st == AL_OK;
}

static void same(const char *family, const char *st_dir, const char *bin_dir) {
    outputs a = {0}, b = {0};
    if (run(st_dir, "model.safetensors", &a) && run(bin_dir, "pytorch_model.bin", &b)) {
        CHECK(a.n_hidden == b.n_hidden && a.n_attn == b.n_attn && a.n_logits == b.n_logits && a.n_logits > 0);
        CHECK_MSG(memcmp(a.hidden, b.hidden, sizeof(float) * a.n_hidden) == 0, "%s hidden states", family);
        CHECK_MSG(memcmp(a.attn, b.attn, sizeof(float) * a.n_attn) == 0, "%s attention", family);
        CHECK_MSG(a.n_logits == b.n_logits && memcmp(a.logits, b.logits, sizeof(float) * a.n_logits) == 0,
                  "%s MLM logits", family);
        printf("%s: pytorch_model.bin gives model.safetensors' outputs bit for bit (%zu hidden, %zu attention, "
               "%zu logit values)\n", family, a.n_hidden, a.n_attn, a.n_logits);
    }
    free(a.hidden), free(a.attn), free(a.logits), free(b.hidden), free(b.attn), free(b.logits);
}

int main(void) {
    same("deberta-v2", "tests/golden/deberta_v3", "tests/fixtures/deberta_v3_bin");
    same("modernbert", "tests/golden/modernbert", "tests/fixtures/modernbert_bin");
    return check_summary("family_formats");
}
