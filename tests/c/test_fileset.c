/* test_fileset.c: named buffers (copied and borrowed), replacement, directories. */
#include <string.h>

#include "attnlab.h"
#include "check.h"

int main(void) {
    al_error err = {0};
    al_fileset *fs = al_fileset_new();
    CHECK(fs != NULL);
    CHECK(al_fileset_count(fs) == 0);
    size_t size = 99;
    CHECK(al_fileset_get(fs, "config.json", &size) == NULL && size == 0);

    /* A copied file survives the caller's buffer changing; a borrowed one does not copy. */
    char text[] = "{\"a\": 1}";
    CHECK(al_fileset_add(fs, "config.json", text, strlen(text), 1, &err) == AL_OK);
    text[0] = 'X';
    const uint8_t *got = al_fileset_get(fs, "config.json", &size);
    CHECK(got != NULL && size == 8 && got[0] == '{');
    static const uint8_t borrowed[4] = {1, 2, 3, 4};
    CHECK(al_fileset_add(fs, "vocab.txt", borrowed, 4, 0, &err) == AL_OK);
    CHECK(al_fileset_get(fs, "vocab.txt", &size) == borrowed && size == 4);
    CHECK(al_fileset_count(fs) == 2);
    CHECK(strcmp(al_fileset_name(fs, 0), "config.json") == 0);
    CHECK(strcmp(al_fileset_name(fs, 1), "vocab.txt") == 0);
    CHECK(al_fileset_name(fs, 2) == NULL && al_fileset_name(fs, -1) == NULL);

    /* Adding a name twice replaces the file. */
    CHECK(al_fileset_add(fs, "config.json", "{}", 2, 1, &err) == AL_OK);
    got = al_fileset_get(fs, "config.json", &size);
    CHECK(al_fileset_count(fs) == 2 && size == 2 && got && memcmp(got, "{}", 2) == 0);

    /* An empty file is present (non-NULL), with size 0. */
    CHECK(al_fileset_add(fs, "empty.txt", NULL, 0, 1, &err) == AL_OK);
    CHECK(al_fileset_get(fs, "empty.txt", &size) != NULL && size == 0);
    CHECK(al_fileset_add(fs, "", "x", 1, 1, &err) == AL_ERR_INVALID);
    CHECK(al_fileset_add(fs, "bad", NULL, 5, 1, &err) == AL_ERR_INVALID);
    al_fileset_free(fs);

    /* A directory on disk. */
    fs = al_fileset_new();
    CHECK(al_fileset_add_dir(fs, "tests/fixtures/bert_st_f32", &err) == AL_OK);
    CHECK(al_fileset_count(fs) == 2);
    got = al_fileset_get(fs, "model.safetensors", &size);
    CHECK(got != NULL && size > 1000);
    CHECK(al_fileset_get(fs, "config.json", &size) != NULL && size > 10);
    al_fileset_free(fs);

    fs = al_fileset_new();
    CHECK(al_fileset_add_dir(fs, "tests/fixtures/no_such_dir", &err) == AL_ERR_IO);
    CHECK(strstr(err.message, "no_such_dir") != NULL);
    al_fileset_free(fs);
    al_fileset_free(NULL);
    return check_summary("fileset");
}
