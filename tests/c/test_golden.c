/* test_golden.c: the forward pass of every family against PyTorch goldens (tests/golden/make_goldens.py:
 * an independent float64 implementation with nn.MultiheadAttention). Bounds (max abs error): hidden states
 * 1e-4, attention probabilities 1e-5, values 1e-4, MLM logits 1e-4. Prints the measured errors. */
#include "check.h"
#include "golden_file.h"

#define TOL_HIDDEN 1e-4
#define TOL_ATTN 1e-5
#define TOL_VALUES 1e-4
#define TOL_LOGITS 1e-4

typedef struct family_case {
    const char *dir;
    al_arch arch;
    int has_mlm;
} family_case;

static void run_family(const family_case *fc) {
    char path[256];
    snprintf(path, sizeof path, "tests/golden/%s", fc->dir);
    al_model *model = NULL;
    al_error err = {0};
    al_status st = al_model_load_dir(path, &model, &err);
    CHECK_MSG(st == AL_OK, "%s: %s", path, err.message);
    if (st != AL_OK) return;
    const al_config *c = al_model_config(model);
    CHECK(c->arch == fc->arch);
    CHECK(al_model_has_mlm_head(model) == fc->has_mlm);

    snprintf(path, sizeof path, "tests/golden/%s/golden.safetensors", fc->dir);
    golden_file g;
    int opened = golden_open(&g, path);
    CHECK_MSG(opened, "%s", path);
    if (!opened) {
        al_model_free(model);
        return;
    }
    int64_t shape[8] = {0};
    size_t n_ids = 0;
    float *ids_f = golden_f32(&g, "input_ids", &n_ids, shape);
    CHECK(ids_f != NULL);
    free(ids_f);
    const int B = (int)shape[0], L = (int)shape[1];
    int32_t *ids = golden_i32(&g, "input_ids");
    int32_t *mask = golden_i32(&g, "attention_mask");
    int32_t *types = golden_i32(&g, "token_type_ids"); /* NULL for families without token types */
    size_t n_hidden = 0, n_attn = 0, n_values = 0, n_logits = 0;
    float *want_hidden = golden_f32(&g, "hidden_states", &n_hidden, NULL);
    float *want_attn = golden_f32(&g, "attentions", &n_attn, NULL);
    float *want_values = golden_f32(&g, "values", &n_values, NULL);
    float *want_logits = golden_f32(&g, "mlm_logits", &n_logits, NULL);
    CHECK(ids && mask && want_hidden && want_attn && want_values);
    CHECK((want_logits != NULL) == fc->has_mlm);
    const size_t NL = (size_t)c->n_layers, H = (size_t)c->n_heads, D = (size_t)c->hidden_size;
    CHECK(n_hidden == (NL + 1) * B * L * D);
    CHECK(n_attn == NL * B * H * L * L);
    CHECK(n_values == NL * B * H * L * c->head_dim);
    CHECK(!want_logits || n_logits == (size_t)B * L * c->vocab_size);

    al_forward_outputs out = {0};
    out.hidden_states = calloc((NL + 1) * B * L * D, sizeof(float));
    out.attentions = calloc(NL * B * H * L * L, sizeof(float));
    out.values = calloc(NL * B * H * L * c->head_dim, sizeof(float));
    if (want_logits) out.mlm_logits = calloc((size_t)B * L * c->vocab_size, sizeof(float));
    al_batch batch = {B, L, ids, mask, types, NULL};
    al_forward_params params = al_forward_default_params();
    st = al_forward(model, &batch, &params, &out, &err);
    CHECK_MSG(st == AL_OK, "%s: %s", fc->dir, err.message);
    if (st == AL_OK && want_hidden && want_attn && want_values) {
        double e_hidden = max_abs_diff(out.hidden_states, want_hidden, n_hidden);
        double e_attn = max_abs_diff(out.attentions, want_attn, n_attn);
        double e_values = max_abs_diff(out.values, want_values, n_values);
        double e_logits = want_logits ? max_abs_diff(out.mlm_logits, want_logits, n_logits) : 0.0;
        printf("%-14s %-10s max abs error: hidden %.2e  attentions %.2e  values %.2e  mlm_logits %s%.2e\n",
               fc->dir, al_model_weights_dtype(model), e_hidden, e_attn, e_values, want_logits ? "" : "(none) ",
               e_logits);
        CHECK_MSG(e_hidden <= TOL_HIDDEN, "%s hidden %.3g", fc->dir, e_hidden);
        CHECK_MSG(e_attn <= TOL_ATTN, "%s attentions %.3g", fc->dir, e_attn);
        CHECK_MSG(e_values <= TOL_VALUES, "%s values %.3g", fc->dir, e_values);
        CHECK_MSG(e_logits <= TOL_LOGITS, "%s mlm_logits %.3g", fc->dir, e_logits);
    }
    free(out.hidden_states);
    free(out.attentions);
    free(out.values);
    free(out.mlm_logits);
    free(ids);
    free(mask);
    free(types);
    free(want_hidden);
    free(want_attn);
    free(want_values);
    free(want_logits);
    golden_close(&g);
    al_model_free(model);
}

int main(void) {
    static const family_case cases[] = {
        {"bert", AL_ARCH_BERT, 1},
        {"bert_gelu_new", AL_ARCH_BERT, 0},
        {"roberta", AL_ARCH_ROBERTA, 1},
        {"distilbert", AL_ARCH_DISTILBERT, 1},
        {"electra", AL_ARCH_ELECTRA, 1},
        {"deberta_v3", (al_arch)4, 1}, /* deberta-v2's registry index (src/model/families.c) */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) run_family(&cases[i]);
    return check_summary("golden");
}
