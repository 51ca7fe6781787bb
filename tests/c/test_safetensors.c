/* test_safetensors.c: the reader (dtype conversions exact, header checks) and the writer (round trip,
 * 8-byte alignment, metadata). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "attnlab.h"
#include "cJSON.h"
#include "check.h"
#include "model/tensor_list.h"

/* header JSON + data -> safetensors bytes (caller frees). */
static uint8_t *make_file(const char *header, const void *data, size_t data_size, size_t *size) {
    size_t h = strlen(header);
    *size = 8 + h + data_size;
    uint8_t *buf = malloc(*size);
    for (int i = 0; i < 8; i++) buf[i] = (uint8_t)((uint64_t)h >> (8 * i));
    memcpy(buf + 8, header, h);
    if (data_size) memcpy(buf + 8 + h, data, data_size);
    return buf;
}

static al_status read_buf(const char *header, const void *data, size_t data_size, al_tensor_list *list,
                          al_error *err) {
    size_t size;
    uint8_t *buf = make_file(header, data, data_size, &size);
    al_status st = al_safetensors_read(buf, size, "t.safetensors", list, err);
    free(buf); /* the tests below only look at entries when they do not keep data */
    return st;
}

static void expect_bad(const char *header, size_t data_size, al_status code, const char *part) {
    uint8_t data[64] = {0};
    al_tensor_list list = {0};
    al_error err = {0};
    al_status st = read_buf(header, data, data_size, &list, &err);
    CHECK_MSG(st == code, "%s: got %s (%s)", header, al_status_name(st), err.message);
    CHECK_MSG(strstr(err.message, part) && strncmp(err.message, "t.safetensors: ", 15) == 0,
              "message '%s' lacks '%s'", err.message, part);
    CHECK(list.n == 0);
    al_tensor_list_free(&list);
}

/* The value of an IEEE half by the definition, in double. */
static double f16_reference(uint16_t h) {
    int s = h >> 15, e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return s ? -v : v;
}

int main(void) {
    /* Every F16 bit pattern converts exactly (subnormals, infinities, NaN, signed zero). */
    int exact = 1;
    for (uint32_t h = 0; h < 65536; h++) {
        float f = al_f16_to_f32((uint16_t)h);
        double r = f16_reference((uint16_t)h);
        if (isnan(r) ? !isnan(f) : ((double)f != r || !signbit(f) != !signbit(r))) {
            exact = 0;
            fprintf(stderr, "f16 0x%04x -> %.9g, expected %.9g\n", h, (double)f, r);
            break;
        }
    }
    CHECK(exact);
    /* A tensor of all 65,536 patterns: al_tensor_to_f32's loop gives al_f16_to_f32's bits for each,
     * NaN payloads included. */
    {
        static uint8_t all[2 * 65536];
        static float got[65536];
        for (uint32_t h = 0; h < 65536; h++) {
            all[2 * h] = (uint8_t)(h & 0xffu);
            all[2 * h + 1] = (uint8_t)(h >> 8);
        }
        al_tensor_entry t = {.name = "all", .dtype = AL_DT_F16, .ndim = 1, .shape = {65536}, .data = all,
                             .nbytes = sizeof all, .file = "test"};
        al_error e = {0};
        CHECK(al_tensor_to_f32(&t, got, &e) == AL_OK);
        int same = 1;
        for (uint32_t h = 0; h < 65536 && same; h++) {
            const float want = al_f16_to_f32((uint16_t)h);
            if (memcmp(&want, &got[h], 4) != 0) {
                same = 0;
                fprintf(stderr, "tensor f16 0x%04x -> %a, al_f16_to_f32 gives %a\n", h, (double)got[h], (double)want);
            }
        }
        CHECK(same);
    }
    CHECK(al_f16_to_f32(0x0001) == ldexpf(1.0f, -24));
    CHECK(isinf(al_f16_to_f32(0xfc00)) && al_f16_to_f32(0xfc00) < 0);
    CHECK(al_bf16_to_f32(0x3f80) == 1.0f && al_bf16_to_f32(0xc0a0) == -5.0f);
    CHECK(isnan(al_bf16_to_f32(0x7fc0)) && isinf(al_bf16_to_f32(0x7f80)));

    /* A file with F16, BF16 and F32 tensors and an ignored I64 one. */
    uint8_t data[2 * 4 + 2 * 2 + 4 * 2 + 8];
    const uint16_t halves[4] = {0x0001, 0x7c00, 0x8000, 0x3c00};
    const uint16_t bfs[2] = {0x3f80, 0xc0a0};
    const float f32[2] = {1.5f, -2.25f};
    const int64_t i64 = 42;
    memcpy(data, halves, 8);
    memcpy(data + 8, bfs, 4);
    memcpy(data + 12, f32, 8);
    memcpy(data + 20, &i64, 8);
    size_t size;
    uint8_t *file = make_file("{\"__metadata__\":{\"format\":\"pt\"},"
                              "\"h\":{\"dtype\":\"F16\",\"shape\":[2,2],\"data_offsets\":[0,8]},"
                              "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[8,12]},"
                              "\"f\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]},"
                              "\"ids\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[20,28]},"
                              "\"empty\":{\"dtype\":\"F32\",\"shape\":[0,4],\"data_offsets\":[28,28]}}",
                              data, sizeof data, &size);
    al_tensor_list list = {0};
    al_error err = {0};
    CHECK(al_safetensors_read(file, size, "t.safetensors", &list, &err) == AL_OK);
    CHECK(list.n == 5);
    const al_tensor_entry *h = al_tensor_list_find(&list, "h"), *b = al_tensor_list_find(&list, "b");
    const al_tensor_entry *f = al_tensor_list_find(&list, "f"), *ids = al_tensor_list_find(&list, "ids");
    float out[4];
    CHECK(h && h->dtype == AL_DT_F16 && h->ndim == 2 && h->shape[1] == 2 && al_tensor_numel(h) == 4);
    if (h && al_tensor_to_f32(h, out, &err) == AL_OK)
        CHECK(out[0] == ldexpf(1.0f, -24) && isinf(out[1]) && out[2] == 0.0f && signbit(out[2]) && out[3] == 1.0f);
    if (b && al_tensor_to_f32(b, out, &err) == AL_OK) CHECK(out[0] == 1.0f && out[1] == -5.0f);
    if (f && al_tensor_to_f32(f, out, &err) == AL_OK) CHECK(out[0] == 1.5f && out[1] == -2.25f);
    CHECK(ids && ids->dtype == AL_DT_I64 && al_tensor_to_f32(ids, out, &err) == AL_ERR_UNSUPPORTED);
    CHECK(strstr(err.message, "'ids'") && strstr(err.message, "I64"));
    al_tensor_list_free(&list);
    free(file);

    /* Malformed headers, each named. */
    al_error e2 = {0};
    CHECK(al_safetensors_read((const uint8_t *)"\x10\0\0", 3, "t.safetensors", &list, &e2) == AL_ERR_FORMAT);
    CHECK(strstr(e2.message, "truncated") != NULL);
    uint8_t big[16] = {0xff, 0xff, 0, 0, 0, 0, 0, 0, '{', '}'};
    CHECK(al_safetensors_read(big, sizeof big, "t.safetensors", &list, &e2) == AL_ERR_FORMAT);
    CHECK(strstr(e2.message, "header length 65535 goes beyond") != NULL);
    expect_bad("{\"a\":{\"dtype\":\"F32\",", 0, AL_ERR_FORMAT, "malformed JSON header");
    expect_bad("[1,2]", 0, AL_ERR_FORMAT, "header is not a JSON object");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 4, AL_ERR_FORMAT,
               "tensor 'a' data_offsets [0, 8] out of range");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[8,0]}}", 16, AL_ERR_FORMAT,
               "out of range");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,8]}}", 16, AL_ERR_FORMAT,
               "tensor 'a' data_offsets span 8 bytes");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
               "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}", 16, AL_ERR_FORMAT,
               "tensors 'a' and 'b' overlap");
    expect_bad("{\"a\":{\"dtype\":\"Q4\",\"shape\":[2],\"data_offsets\":[0,8]}}", 16, AL_ERR_UNSUPPORTED,
               "unknown dtype 'Q4'");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[-2],\"data_offsets\":[0,8]}}", 16, AL_ERR_FORMAT,
               "tensor 'a' shape[0]");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2.5],\"data_offsets\":[0,8]}}", 16, AL_ERR_FORMAT,
               "shape[0]");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", 16, AL_ERR_FORMAT, "tensor 'a' has no 'data_offsets'");
    expect_bad("{\"a\":{\"shape\":[2],\"data_offsets\":[0,8]}}", 16, AL_ERR_FORMAT, "no 'dtype'");
    expect_bad("{\"a\":[1]}", 16, AL_ERR_FORMAT, "header entry 'a' is not an object");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,4294967296],\"data_offsets\":[0,8]}}",
               16, AL_ERR_FORMAT, "too large");
    expect_bad("{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
               "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}", 16, AL_ERR_FORMAT,
               "'a' appears twice");
    expect_bad("{\"__metadata__\":[1]}", 0, AL_ERR_FORMAT, "'__metadata__' is not an object");

    /* Writer: F32 and I32 with metadata, 8-byte aligned, reads back identically. */
    float w[6] = {1, -2, 3.5f, 1e-30f, -0.0f, 65504};
    int32_t ids32[3] = {101, -7, 2147483647};
    al_tensor_out t[3];
    memset(t, 0, sizeof t);
    snprintf(t[0].name, sizeof t[0].name, "hidden \"states\"");
    snprintf(t[0].dtype, sizeof t[0].dtype, "F32");
    t[0].ndim = 2; t[0].shape[0] = 2; t[0].shape[1] = 3; t[0].data = w; t[0].nbytes = sizeof w;
    snprintf(t[1].name, sizeof t[1].name, "ids");
    snprintf(t[1].dtype, sizeof t[1].dtype, "I32");
    t[1].ndim = 1; t[1].shape[0] = 3; t[1].data = ids32; t[1].nbytes = sizeof ids32;
    snprintf(t[2].name, sizeof t[2].name, "scalar_empty");
    snprintf(t[2].dtype, sizeof t[2].dtype, "F32");
    t[2].ndim = 1; t[2].shape[0] = 0;
    const char *meta[4] = {"format", "pt", "model", "bert-tiny"};
    uint8_t *bytes = NULL;
    CHECK(al_safetensors_serialize(t, 3, meta, 2, &bytes, &size, &err) == AL_OK);
    if (bytes) {
        uint64_t hl = 0;
        for (int i = 7; i >= 0; i--) hl = (hl << 8) | bytes[i];
        CHECK((8 + hl) % 8 == 0 && size == 8 + hl + sizeof w + sizeof ids32);
        cJSON *hdr = cJSON_ParseWithLength((const char *)bytes + 8, (size_t)hl);
        CHECK(hdr != NULL);
        const cJSON *m = cJSON_GetObjectItem(hdr, "__metadata__");
        CHECK(m && strcmp(cJSON_GetObjectItem(m, "model")->valuestring, "bert-tiny") == 0);
        cJSON_Delete(hdr);
        CHECK(al_safetensors_read(bytes, size, "w.safetensors", &list, &err) == AL_OK && list.n == 3);
        const al_tensor_entry *a = al_tensor_list_find(&list, "hidden \"states\"");
        const al_tensor_entry *c = al_tensor_list_find(&list, "ids");
        CHECK(a && a->dtype == AL_DT_F32 && a->shape[0] == 2 && a->shape[1] == 3 && memcmp(a->data, w, sizeof w) == 0);
        CHECK(c && c->dtype == AL_DT_I32 && memcmp(c->data, ids32, sizeof ids32) == 0);
        al_tensor_list_free(&list);
        free(bytes);
    }
    /* Without metadata, and to a file. */
    CHECK(al_safetensors_serialize(t, 2, NULL, 0, &bytes, &size, &err) == AL_OK);
    CHECK(bytes && memchr(bytes + 8, '_', 20) == NULL);
    free(bytes);
    mkdir("tests/artifacts", 0755);
    mkdir("tests/artifacts/loader", 0755);
    CHECK(al_safetensors_write("tests/artifacts/loader/test_safetensors.safetensors", t, 3, meta, 2, &err) == AL_OK);
    al_fileset *fs = al_fileset_new();
    CHECK(al_fileset_add_dir(fs, "tests/artifacts/loader", &err) == AL_OK);
    const uint8_t *disk = al_fileset_get(fs, "test_safetensors.safetensors", &size);
    CHECK(disk && al_safetensors_read(disk, size, "w.safetensors", &list, &err) == AL_OK && list.n == 3);
    al_tensor_list_free(&list);
    al_fileset_free(fs);
    CHECK(al_safetensors_write("tests/no/such/dir/x.safetensors", t, 1, NULL, 0, &err) == AL_ERR_IO);
    /* Writer errors. */
    al_tensor_out bad = t[0];
    bad.nbytes = 20;
    CHECK(al_safetensors_serialize(&bad, 1, NULL, 0, &bytes, &size, &err) == AL_ERR_INVALID);
    CHECK(strstr(err.message, "hidden") != NULL);
    bad = t[0];
    snprintf(bad.dtype, sizeof bad.dtype, "F64");
    CHECK(al_safetensors_serialize(&bad, 1, NULL, 0, &bytes, &size, &err) == AL_ERR_UNSUPPORTED);
    al_tensor_out dup[2] = {t[1], t[1]};
    CHECK(al_safetensors_serialize(dup, 2, NULL, 0, &bytes, &size, &err) == AL_ERR_INVALID);
    CHECK(strstr(err.message, "twice") != NULL);
    return check_summary("safetensors");
}
