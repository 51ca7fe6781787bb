/* test_torch_bin.c: pytorch_model.bin through the zip reader and the restricted unpickler: tensors
 * sharing one storage at offsets, hostile pickles refused by name, compressed / truncated files, a pickle
 * without torch's magic number, strided views, and hand-written pickles for the unpickler's error paths (the
 * legacy format and the views against their safetensors twin: test_torch_views.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attnlab.h"
#include "check.h"
#include "read_file.h"
#include "model/tensor_list.h"

static void put16(uint8_t *p, unsigned v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put32(uint8_t *p, uint32_t v) { put16(p, v & 0xffff); put16(p + 2, v >> 16); }

/* A STORED zip of n entries (CRCs left zero: the reader does not check them). */
static uint8_t *make_zip(int n, const char *const *names, const uint8_t *const *data, const size_t *sizes,
                         size_t *out_size) {
    size_t total = 22;
    for (int i = 0; i < n; i++) total += 30 + 46 + 2 * strlen(names[i]) + sizes[i];
    uint8_t *z = calloc(1, total), *p = z;
    uint32_t offsets[16];
    for (int i = 0; i < n; i++) {
        size_t nl = strlen(names[i]);
        offsets[i] = (uint32_t)(p - z);
        put32(p, 0x04034b50); put32(p + 18, (uint32_t)sizes[i]); put32(p + 22, (uint32_t)sizes[i]);
        put16(p + 26, (unsigned)nl);
        memcpy(p + 30, names[i], nl);
        memcpy(p + 30 + nl, data[i], sizes[i]);
        p += 30 + nl + sizes[i];
    }
    uint8_t *cd = p;
    for (int i = 0; i < n; i++) {
        size_t nl = strlen(names[i]);
        put32(p, 0x02014b50); put32(p + 20, (uint32_t)sizes[i]); put32(p + 24, (uint32_t)sizes[i]);
        put16(p + 28, (unsigned)nl); put32(p + 42, offsets[i]);
        memcpy(p + 46, names[i], nl);
        p += 46 + nl;
    }
    put32(p, 0x06054b50); put16(p + 8, (unsigned)n); put16(p + 10, (unsigned)n);
    put32(p + 12, (uint32_t)(p - cd)); put32(p + 16, (uint32_t)(cd - z));
    *out_size = (size_t)(p + 22 - z);
    return z;
}

/* One pickle (+ one storage "0" of 16 float bytes) -> al_torch_bin_read. The tensors point into the
 * zip: *keep receives it (caller frees) when not NULL, else it is freed at once. */
static al_status run_pickle_keep(const void *pkl, size_t pkl_size, al_tensor_list *list, uint8_t **keep,
                                 al_error *err) {
    static const float storage[4] = {1, 2, 3, 4};
    const char *names[2] = {"archive/data.pkl", "archive/data/0"};
    const uint8_t *data[2] = {pkl, (const uint8_t *)storage};
    size_t sizes[2] = {pkl_size, sizeof storage}, size;
    uint8_t *zip = make_zip(2, names, data, sizes, &size);
    al_status st = al_torch_bin_read(zip, size, "pytorch_model.bin", list, err);
    if (keep) *keep = zip;
    else free(zip);
    return st;
}

static al_status run_pickle(const void *pkl, size_t pkl_size, al_tensor_list *list, al_error *err) {
    return run_pickle_keep(pkl, pkl_size, list, NULL, err);
}

static void expect_pickle_error(const char *what, const char *pkl, size_t n, al_status code, const char *part) {
    al_tensor_list list = {0};
    al_error err = {0};
    al_status st = run_pickle(pkl, n, &list, &err);
    CHECK_MSG(st == code, "%s: %s (%s)", what, al_status_name(st), err.message);
    CHECK_MSG(strstr(err.message, part) && strncmp(err.message, "pytorch_model.bin: ", 19) == 0,
              "%s: message '%s' lacks '%s'", what, err.message, part);
    CHECK(list.n == 0);
    al_tensor_list_free(&list);
}

static void expect_model_error(const char *dir, al_status code, const char *message) {
    al_model *m = NULL;
    al_error err = {0};
    al_status st = al_model_load_dir(dir, &m, &err);
    CHECK_MSG(st == code && m == NULL, "%s: %s", dir, al_status_name(st));
    CHECK_MSG(strstr(err.message, message) != NULL, "%s: '%s' lacks '%s'", dir, err.message, message);
    al_model_free(m);
}

/* A valid state dict {'w': FloatStorage '0' offset 1, size (2,), stride (1,)} by hand. */
#define PK_HEAD "\x80\x02\x63\x63ollections\nOrderedDict\nq\x00)Rq\x01"
#define PK_TENSOR(off, n, stride) \
    "X\x01\x00\x00\x00wq\x02\x63torch._utils\n_rebuild_tensor_v2\nq\x03((X\x07\x00\x00\x00storageq\x04" \
    "\x63torch\nFloatStorage\nq\x05X\x01\x00\x00\x00\x30X\x03\x00\x00\x00\x63puK\x04tq\x06QK" off "K" n \
    "\x85K" stride "\x85\x89\x63\x63ollections\nOrderedDict\nq\x07)Rq\x08tq\x09Rq\x0a"

int main(void) {
    size_t size = 0;
    uint8_t *bin = read_file("tests/fixtures/bert_bin/pytorch_model.bin", &size);
    CHECK(bin != NULL);
    if (!bin) return check_summary("torch_bin");
    al_tensor_list list = {0};
    al_error err = {0};
    CHECK(al_torch_bin_read(bin, size, "pytorch_model.bin", &list, &err) == AL_OK);
    const al_tensor_entry *q = al_tensor_list_find(&list, "bert.encoder.layer.0.attention.self.query.weight");
    const al_tensor_entry *k = al_tensor_list_find(&list, "bert.encoder.layer.0.attention.self.key.weight");
    const al_tensor_entry *v = al_tensor_list_find(&list, "bert.encoder.layer.0.attention.self.value.weight");
    const al_tensor_entry *pos = al_tensor_list_find(&list, "bert.embeddings.position_ids");
    CHECK(q && k && v && q->dtype == AL_DT_F32 && q->ndim == 2 && q->shape[0] == 8 && q->nbytes == 256);
    CHECK(q && k && v && k->data == q->data + 256 && v->data == q->data + 512); /* one storage, offsets */
    CHECK(pos && pos->dtype == AL_DT_I64 && pos->shape[1] == 16);
    CHECK(list.n == 46); /* embeddings 5 + position_ids + pooler 2 + layers 2*16 + MLM head 6 */
    al_tensor_list_free(&list);

    /* Compressed entries are refused clearly: patch data.pkl's method to deflate. */
    uint8_t *patched = malloc(size);
    memcpy(patched, bin, size);
    int n_patched = 0;
    for (size_t i = 0; i + 46 < size; i++)
        if (patched[i] == 0x50 && patched[i + 1] == 0x4b && patched[i + 2] == 1 && patched[i + 3] == 2 &&
            memcmp(patched + i + 46 + patched[i + 28] - 8, "data.pkl", 8) == 0) {
            patched[i + 10] = 8;
            n_patched++;
        }
    CHECK(n_patched == 1);
    CHECK(al_torch_bin_read(patched, size, "pytorch_model.bin", &list, &err) == AL_ERR_UNSUPPORTED);
    CHECK(strstr(err.message, "pytorch_model.bin: zip entry 'archive/data.pkl' is compressed (method 8)") != NULL);
    free(patched);

    /* Every truncation fails cleanly (most lose the end of central directory). */
    int clean = 1;
    for (size_t cut = 0; cut < size; cut += 97) {
        al_status st = al_torch_bin_read(bin, cut, "pytorch_model.bin", &list, &err);
        if (st == AL_OK || strncmp(err.message, "pytorch_model.bin: ", 19) != 0) clean = 0;
        al_tensor_list_free(&list);
    }
    CHECK(clean);
    CHECK(al_torch_bin_read(bin, size - 10, "pytorch_model.bin", &list, &err) == AL_ERR_FORMAT);
    CHECK(strstr(err.message, "truncated") != NULL);
    free(bin);
    CHECK(al_torch_bin_read((const uint8_t *)"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"
                            "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00", 24, "pytorch_model.bin", &list, &err) ==
          AL_ERR_FORMAT);
    CHECK(strstr(err.message, "pytorch_model.bin: a pickle without torch's magic number") != NULL);

    /* Hostile and odd files through al_model_load, each named. */
    expect_model_error("tests/fixtures/hostile_system", AL_ERR_UNSUPPORTED,
                       "pytorch_model.bin: pickle global 'posix.system' is not allowed");
    expect_model_error("tests/fixtures/hostile_eval", AL_ERR_UNSUPPORTED,
                       "pytorch_model.bin: pickle global 'builtins.eval' is not allowed");
    expect_model_error("tests/fixtures/hostile_stack_global", AL_ERR_UNSUPPORTED,
                       "pytorch_model.bin: pickle global 'os.system' is not allowed");
    /* A transposed weight (strides (1, 16)) loads, gathered into row-major order. */
    al_model *tm = NULL;
    CHECK_MSG(al_model_load_dir("tests/fixtures/bert_bin_transposed", &tm, &err) == AL_OK, "%s", err.message);
    al_model_free(tm);

    /* Hand-written pickles. */
    static const char good[] = PK_HEAD "(" PK_TENSOR("\x01", "\x02", "\x01") "u.";
    uint8_t *zip = NULL;
    CHECK(run_pickle_keep(good, sizeof good - 1, &list, &zip, &err) == AL_OK);
    const al_tensor_entry *w = al_tensor_list_find(&list, "w");
    float vals[2] = {0};
    CHECK(w && w->ndim == 1 && w->shape[0] == 2 && al_tensor_to_f32(w, vals, &err) == AL_OK);
    CHECK(vals[0] == 2.0f && vals[1] == 3.0f); /* offset 1 into {1, 2, 3, 4} */
    al_tensor_list_free(&list);
    free(zip);
    static const char past_end[] = PK_HEAD "(" PK_TENSOR("\x03", "\x02", "\x01") "u.";
    expect_pickle_error("offset", past_end, sizeof past_end - 1, AL_ERR_FORMAT, "lies outside its storage");
    /* Strided views are gathered: stride 2 over {1, 2, 3, 4} is {1, 3}; stride 0 repeats one element. */
    static const char strided[] = PK_HEAD "(" PK_TENSOR("\x00", "\x02", "\x02") "u.";
    CHECK(run_pickle_keep(strided, sizeof strided - 1, &list, &zip, &err) == AL_OK);
    w = al_tensor_list_find(&list, "w");
    CHECK(w && w->nbytes == 8 && al_tensor_to_f32(w, vals, &err) == AL_OK && vals[0] == 1.0f && vals[1] == 3.0f);
    al_tensor_list_free(&list);
    free(zip);
    static const char repeat[] = PK_HEAD "(" PK_TENSOR("\x02", "\x02", "\x00") "u.";
    CHECK(run_pickle_keep(repeat, sizeof repeat - 1, &list, &zip, &err) == AL_OK);
    w = al_tensor_list_find(&list, "w");
    CHECK(w && al_tensor_to_f32(w, vals, &err) == AL_OK && vals[0] == 3.0f && vals[1] == 3.0f);
    al_tensor_list_free(&list);
    free(zip);
    static const char broadcast[] = PK_HEAD "(" PK_TENSOR("\x00", "\x05", "\x00") "u.";
    expect_pickle_error("broadcast", broadcast, sizeof broadcast - 1, AL_ERR_UNSUPPORTED,
                        "tensor 'w' is a broadcast view (5 elements of a storage of 4)");
    static const char stride_out[] = PK_HEAD "(" PK_TENSOR("\x01", "\x02", "\x03") "u.";
    expect_pickle_error("stride outside", stride_out, sizeof stride_out - 1, AL_ERR_FORMAT,
                        "tensor 'w' (offset 1, 2 elements) lies outside its storage of 4");
    static const char no_stop[] = PK_HEAD "(" PK_TENSOR("\x00", "\x02", "\x01") "u";
    expect_pickle_error("no stop", no_stop, sizeof no_stop - 1, AL_ERR_FORMAT, "without STOP");
    static const char inst[] = "\x80\x02(i__main__\nEvil\n.";
    expect_pickle_error("INST", inst, sizeof inst - 1, AL_ERR_UNSUPPORTED, "opcode 0x69 is not allowed");
    static const char newobj[] = "\x80\x02\x63\x63ollections\nOrderedDict\n)\x81.";
    expect_pickle_error("NEWOBJ", newobj, sizeof newobj - 1, AL_ERR_UNSUPPORTED, "opcode 0x81");
    static const char storage_call[] = "\x80\x02\x63torch\nFloatStorage\n)R.";
    expect_pickle_error("storage call", storage_call, sizeof storage_call - 1, AL_ERR_UNSUPPORTED, "REDUCE");
    static const char get[] = "\x80\x02h\x05.";
    expect_pickle_error("GET", get, sizeof get - 1, AL_ERR_FORMAT, "unknown memo");
    static const char not_dict[] = "\x80\x02K\x05.";
    expect_pickle_error("int", not_dict, sizeof not_dict - 1, AL_ERR_FORMAT, "not a state_dict");
    static const char build[] = "\x80\x02]K\x01\x62.";
    expect_pickle_error("BUILD", build, sizeof build - 1, AL_ERR_UNSUPPORTED, "BUILD");
    static const char bad_pid[] = "\x80\x02X\x03\x00\x00\x00\x61\x62\x63\x85Q.";
    expect_pickle_error("persid", bad_pid, sizeof bad_pid - 1, AL_ERR_FORMAT, "persistent id");
    static const char torch_load[] = "\x80\x02\x63torch.storage\n_load_from_bytes\n.";
    expect_pickle_error("load_from_bytes", torch_load, sizeof torch_load - 1, AL_ERR_UNSUPPORTED,
                        "pickle global 'torch.storage._load_from_bytes' is not allowed");
    static const char long_str[] = "\x80\x02X\xff\xff\xff\x7f" "abc.";
    expect_pickle_error("long string", long_str, sizeof long_str - 1, AL_ERR_FORMAT, "runs past the end");
    /* 100000 nested MARKs: no recursion, ends cleanly. */
    size_t deep_n = 100000;
    char *deep = malloc(deep_n + 3);
    memcpy(deep, "\x80\x02", 2);
    memset(deep + 2, '(', deep_n);
    deep[deep_n + 2] = '.';
    expect_pickle_error("deep", deep, deep_n + 3, AL_ERR_FORMAT, "STOP with an empty stack");
    free(deep);
    /* A storage entry missing from the zip. */
    static const char other_key[] = PK_HEAD "(X\x01\x00\x00\x00wq\x02\x63torch._utils\n_rebuild_tensor_v2\n"
        "((X\x07\x00\x00\x00storage\x63torch\nFloatStorage\nX\x01\x00\x00\x00\x39X\x03\x00\x00\x00\x63puK\x04tQ"
        "K\x00K\x02\x85K\x01\x85\x89}tRu.";
    expect_pickle_error("missing storage", other_key, sizeof other_key - 1, AL_ERR_FORMAT,
                        "storage 'archive/data/9' is missing");
    static const char too_big[] = PK_HEAD "(X\x01\x00\x00\x00wq\x02\x63torch._utils\n_rebuild_tensor_v2\n"
        "((X\x07\x00\x00\x00storage\x63torch\nFloatStorage\nX\x01\x00\x00\x00\x30X\x03\x00\x00\x00\x63puK\x09tQ"
        "K\x00K\x02\x85K\x01\x85\x89}tRu.";
    expect_pickle_error("storage size", too_big, sizeof too_big - 1, AL_ERR_FORMAT, "holds 16 bytes, not 9 elements");
    return check_summary("torch_bin");
}
