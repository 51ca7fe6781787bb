/* test_torch_views.c: the two pytorch_model.bin twins of bert_st_f32 (tests/fixtures/make_legacy_fixtures.py,
 * PyTorch 1.13): the legacy (pre-zip) stream and a zip whose tensors are views (row slices of one storage at
 * offsets, a transposed weight, a column slice of a larger storage, two tensors halving one storage). Both
 * must load to exactly the safetensors weights and give the same attention, bit for bit. Then hand-made
 * legacy files: a global outside the allow-list named, every truncation refused cleanly, a wrong storage
 * count, trailing bytes, a big-endian writer, a storage view of torch < 1.0 (docs/checkpoints.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "read_file.h"
#include "model/model_internal.h"
#include "model/tensor_list.h"

/* Loads dir and runs one forward pass: attentions [NL, 1, H, L, L] and MLM logits, caller frees. */
static al_model *load_and_run(const char *dir, float **att, float **logits, size_t *n_att, size_t *n_logits) {
    al_model *m = NULL;
    al_error err = {0};
    al_status st = al_model_load_dir(dir, &m, &err);
    CHECK_MSG(st == AL_OK, "%s: %s", dir, err.message);
    if (st != AL_OK) return NULL;
    static const int32_t ids[7] = {2, 5, 17, 31, 9, 0, 3};
    al_batch batch = {1, 7, ids, NULL, NULL, NULL};
    const al_config *c = &m->config;
    *n_att = (size_t)c->n_layers * c->n_heads * 7 * 7;
    *n_logits = (size_t)7 * c->vocab_size;
    *att = calloc(*n_att, sizeof **att);
    *logits = calloc(*n_logits, sizeof **logits);
    al_forward_outputs out = {.attentions = *att, .mlm_logits = *logits};
    al_forward_params params = al_forward_default_params();
    CHECK_MSG(al_forward(m, &batch, &params, &out, &err) == AL_OK, "%s: %s", dir, err.message);
    return m;
}

static void check_twin(const char *dir, const al_model *ref, const float *ref_att, const float *ref_logits) {
    float *att = NULL, *logits = NULL;
    size_t n_att = 0, n_logits = 0;
    al_model *m = load_and_run(dir, &att, &logits, &n_att, &n_logits);
    if (!m) return;
    CHECK_MSG(m->n_floats == ref->n_floats && memcmp(m->storage, ref->storage, m->n_floats * sizeof(float)) == 0,
              "%s: weights differ from bert_st_f32", dir);
    CHECK_MSG(memcmp(att, ref_att, n_att * sizeof *att) == 0, "%s: attention differs", dir);
    CHECK_MSG(memcmp(logits, ref_logits, n_logits * sizeof *logits) == 0, "%s: logits differ", dir);
    CHECK(strcmp(m->weights_file, "pytorch_model.bin") == 0);
    char h1[65], h2[65]; /* the content hash that names a model in results: the same model */
    al_model_content_hash(m, h1);
    al_model_content_hash(ref, h2);
    CHECK_MSG(strcmp(h1, h2) == 0, "%s: content hash differs", dir);
    free(att);
    free(logits);
    al_model_free(m);
}

/* The legacy file's tensor list: views borrow or own as they should. */
static void check_legacy_list(void) {
    size_t size = 0;
    uint8_t *bin = read_file("tests/fixtures/bert_bin_legacy/pytorch_model.bin", &size);
    CHECK(bin != NULL);
    if (!bin) return;
    al_tensor_list list = {0};
    al_error err = {0};
    CHECK_MSG(al_torch_bin_read(bin, size, "pytorch_model.bin", &list, &err) == AL_OK, "%s", err.message);
    CHECK(list.n == 46);
    const char *p = "bert.encoder.layer.1.";
    char qn[96], kn[96], vn[96], in[96], on[96];
    snprintf(qn, sizeof qn, "%sattention.self.query.weight", p);
    snprintf(kn, sizeof kn, "%sattention.self.key.weight", p);
    snprintf(vn, sizeof vn, "%sattention.self.value.weight", p);
    snprintf(in, sizeof in, "%sintermediate.dense.weight", p);
    snprintf(on, sizeof on, "%soutput.dense.weight", p);
    const al_tensor_entry *q = al_tensor_list_find(&list, qn), *k = al_tensor_list_find(&list, kn),
                          *v = al_tensor_list_find(&list, vn), *i = al_tensor_list_find(&list, in),
                          *o = al_tensor_list_find(&list, on);
    CHECK(q && k && v && k->data == q->data + 256 && v->data == q->data + 512); /* one storage, offsets */
    CHECK(i && i->ndim == 2 && i->shape[0] == 16 && i->shape[1] == 8 && i->nbytes == 512);
    CHECK(o && o->ndim == 2 && o->shape[0] == 8 && o->shape[1] == 16 && o->nbytes == 512);
    /* the strided ones are gathered copies outside the file's buffer */
    CHECK(i && o && (i->data < bin || i->data >= bin + size) && (o->data < bin || o->data >= bin + size));
    CHECK(list.n_owned == 4);
    al_tensor_list_free(&list);
    free(bin);
}

/* A legacy file by hand: magic, version, sys_info {'little_endian': le}, the object pickle, the key list
 * ['0'], then the storage '0' (count, 4 floats). */
#define MAGIC "\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19."
#define VERSION "\x80\x02M\xe9\x03."
#define SYSINFO(le) "\x80\x02}X\x0d\x00\x00\x00little_endian" le "s."
#define KEYS "\x80\x02]X\x01\x00\x00\x00\x30\x61."
#define TENSOR_W(stride)                                                                                       \
    "\x80\x02}X\x01\x00\x00\x00w\x63torch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storage\x63torch\n"  \
    "FloatStorage\nX\x01\x00\x00\x00\x30X\x03\x00\x00\x00\x63puK\x04NtQK\x00K\x02\x85K" stride "\x85\x89}tRs."
#define TAIL(count) count "\x00\x00\x00\x00\x00\x00\x00" "\x00\x00\x80\x3f" "\x00\x00\x00\x40" "\x00\x00\x40\x40" "\x00\x00\x80\x40"

static al_status read_legacy(const char *bytes, size_t n, al_tensor_list *list, al_error *err) {
    uint8_t *copy = malloc(n); /* exact size: ASan sees any read past the end */
    memcpy(copy, bytes, n);
    al_status st = al_torch_bin_read(copy, n, "pytorch_model.bin", list, err);
    if (st != AL_OK) free(copy);
    else (void)al_tensor_list_own(list, copy, err); /* the tensors borrow it */
    return st;
}

static void expect_legacy_error(const char *what, const char *bytes, size_t n, al_status code, const char *part) {
    al_tensor_list list = {0};
    al_error err = {0};
    al_status st = read_legacy(bytes, n, &list, &err);
    CHECK_MSG(st == code, "%s: %s (%s)", what, al_status_name(st), err.message);
    CHECK_MSG(strstr(err.message, part) && strncmp(err.message, "pytorch_model.bin: ", 19) == 0,
              "%s: message '%s' lacks '%s'", what, err.message, part);
    CHECK(list.n == 0);
    al_tensor_list_free(&list);
}

static void check_hand_made(void) {
    static const char good[] = MAGIC VERSION SYSINFO("\x88") TENSOR_W("\x02") KEYS TAIL("\x04");
    al_tensor_list list = {0};
    al_error err = {0};
    CHECK_MSG(read_legacy(good, sizeof good - 1, &list, &err) == AL_OK, "%s", err.message);
    const al_tensor_entry *w = al_tensor_list_find(&list, "w");
    float vals[2] = {0};
    CHECK(w && w->ndim == 1 && w->shape[0] == 2 && al_tensor_to_f32(w, vals, &err) == AL_OK);
    CHECK(vals[0] == 1.0f && vals[1] == 3.0f); /* stride 2 over {1, 2, 3, 4} */
    al_tensor_list_free(&list);
    /* every cut is refused, naming the file */
    int clean = 1;
    for (size_t cut = 0; cut + 1 < sizeof good; cut++) {
        al_error e2 = {0};
        if (read_legacy(good, cut, &list, &e2) == AL_OK || strncmp(e2.message, "pytorch_model.bin: ", 19) != 0)
            clean = 0;
        al_tensor_list_free(&list);
    }
    CHECK(clean);
    static const char count[] = MAGIC VERSION SYSINFO("\x88") TENSOR_W("\x02") KEYS TAIL("\x03");
    expect_legacy_error("count", count, sizeof count - 1, AL_ERR_FORMAT, "storage '0' holds 3 elements, its tensors say 4");
    static const char trailing[] = MAGIC VERSION SYSINFO("\x88") TENSOR_W("\x02") KEYS TAIL("\x04") "xyz";
    expect_legacy_error("trailing", trailing, sizeof trailing - 1, AL_ERR_FORMAT, "3 unexpected bytes after the last storage");
    static const char big_endian[] = MAGIC VERSION SYSINFO("\x89") TENSOR_W("\x02") KEYS TAIL("\x04");
    expect_legacy_error("big endian", big_endian, sizeof big_endian - 1, AL_ERR_UNSUPPORTED, "big-endian");
    static const char version[] = MAGIC "\x80\x02M\xea\x03." SYSINFO("\x88") TENSOR_W("\x02") KEYS TAIL("\x04");
    expect_legacy_error("version", version, sizeof version - 1, AL_ERR_UNSUPPORTED, "protocol version is not 1001");
    static const char outside[] = MAGIC VERSION SYSINFO("\x88") TENSOR_W("\x04") KEYS TAIL("\x04");
    expect_legacy_error("outside", outside, sizeof outside - 1, AL_ERR_FORMAT, "tensor 'w' (offset 0, 2 elements) lies outside");
    static const char no_key[] = MAGIC VERSION SYSINFO("\x88") TENSOR_W("\x02") "\x80\x02].";
    expect_legacy_error("unlisted", no_key, sizeof no_key - 1, AL_ERR_FORMAT, "storage '0' is not in the storage list");
    static const char hostile[] = MAGIC VERSION SYSINFO("\x88")
        "\x80\x02\x63posix\nsystem\nX\x02\x00\x00\x00id\x85R." KEYS TAIL("\x04");
    expect_legacy_error("hostile", hostile, sizeof hostile - 1, AL_ERR_UNSUPPORTED,
                        "pickle global 'posix.system' is not allowed");
    static const char hostile_sysinfo[] = MAGIC VERSION "\x80\x02\x63subprocess\nPopen\n." TENSOR_W("\x02") KEYS;
    expect_legacy_error("hostile sys_info", hostile_sysinfo, sizeof hostile_sysinfo - 1, AL_ERR_UNSUPPORTED,
                        "pickle global 'subprocess.Popen' is not allowed");
    static const char view[] = MAGIC VERSION SYSINFO("\x88")
        "\x80\x02}X\x01\x00\x00\x00w\x63torch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storage\x63torch\n"
        "FloatStorage\nX\x01\x00\x00\x00\x30X\x03\x00\x00\x00\x63puK\x04X\x01\x00\x00\x00\x31K\x00K\x02\x87tQ"
        "K\x00K\x02\x85K\x01\x85\x89}tRs." KEYS TAIL("\x04");
    expect_legacy_error("storage view", view, sizeof view - 1, AL_ERR_UNSUPPORTED, "storage view (torch < 1.0)");
}

int main(void) {
    float *att = NULL, *logits = NULL;
    size_t n_att = 0, n_logits = 0;
    al_model *ref = load_and_run("tests/fixtures/bert_st_f32", &att, &logits, &n_att, &n_logits);
    if (!ref) return check_summary("torch_views");
    check_twin("tests/fixtures/bert_bin_legacy", ref, att, logits);
    check_twin("tests/fixtures/bert_bin_views", ref, att, logits);
    free(att);
    free(logits);
    al_model_free(ref);
    check_legacy_list();
    check_hand_made();
    return check_summary("torch_views");
}
